//! A workload's plan, what a run follows: the table's sizes, each load point (size, the indexes
//! the table carries, rate) with the arms that share it (index, preparation, D1 session,
//! operation, retry policy, each a share of the requests) in run order, and what it all costs on
//! Cloudflare.

use d1bench_core::checksum;
use d1bench_core::workload::{IndexKind, Operation, Preparation, SessionMode, TableSpec};
use serde::{Deserialize, Serialize};

use super::shard::ceiling::Ceiling;
use super::{Mix, PathChoice, RetryKind, RetryPolicy, Workload, WorkloadProfile, path, session};
use crate::records::shard::Shard;
use crate::studies::cost::Cost;

/// Requests of each arm sent one at a time before a point: what its service time is the mean
/// of.
pub const CALIBRATION_PER_ARM: usize = 8;

/// One operation of the mix, as planned.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PlannedOp {
    pub op: Operation,
    /// Percent of the requests (100 when it runs alone).
    pub weight: u32,
    /// Rows a range scan reads or a batched write writes; 1 otherwise.
    pub rows: usize,
}

/// One arm of a load point: what a request assigned to it runs. The arms of a point share its
/// timetable, each request assigned to one of them at random (from the profile's order seed),
/// so drift in the target hits every arm alike.
#[derive(Debug, Clone, PartialEq)]
pub struct Arm {
    /// The index the arm's aggregate goes through (the table carries every arm's).
    pub index: IndexKind,
    pub preparation: Preparation,
    /// How the Worker opens D1 for the reads: the plain binding, or a session per request.
    pub session: SessionMode,
    pub op: PlannedOp,
    /// What the load generator does when a request of this arm is refused.
    pub retry: RetryPolicy,
    /// Share of the point's requests assigned to this arm (the arms' shares sum to 1).
    pub share: f64,
}

impl Arm {
    /// The arm as the reports name it: its index, preparation, session and retry policy.
    pub fn series(&self) -> String {
        let mut series = format!("index={} preparation={}", self.index, self.preparation);
        if !self.session.is_none() {
            series.push_str(&format!(" session={}", self.session));
        }
        match self.retry.kind {
            RetryKind::None => series,
            _ => format!("{series} retry={}", self.retry.label()),
        }
    }
}

/// One load: a table size, the secondary indexes it carries, a rate, and the arms that share
/// it.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadPoint {
    /// From 1, in run order.
    pub id: usize,
    pub table_rows: u64,
    /// The secondary indexes the table carries while the point runs.
    pub indexes: Vec<IndexKind>,
    /// Requests per second, every arm together.
    pub rate: f64,
    /// What the requests run, each drawn by its share.
    pub arms: Vec<Arm>,
    /// The cache's TTL in seconds, for a load with cached reads.
    pub ttl_s: Option<f64>,
    /// Which way every arm's writes go: the binding, D1's REST API, or both per request (the
    /// profile's `path`, a setting of the whole series).
    pub path: PathChoice,
}

impl LoadPoint {
    /// The point as the progress lines name it: its operations and how many arms share it.
    pub fn series(&self) -> String {
        let mut ops: Vec<String> = Vec::new();
        for arm in &self.arms {
            let op = arm.op.op.to_string();
            if !ops.contains(&op) {
                ops.push(op);
            }
        }
        let mut out = format!("{}, {} arms", ops.join("+"), self.arms.len());
        if let Some(ttl) = self.ttl_s {
            out.push_str(&format!(", ttl={ttl}s"));
        }
        if self.path != PathChoice::Binding {
            out.push_str(&format!(", path={}", self.path));
        }
        out
    }

    /// The point without its session arms (in-process SQLite has no Sessions API), each other
    /// arm keeping its own request rate.
    pub fn without_sessions(&self) -> Self {
        let arms: Vec<Arm> = self
            .arms
            .iter()
            .filter(|a| a.session.is_none())
            .cloned()
            .collect();
        let kept: f64 = arms.iter().map(|a| a.share).sum();
        LoadPoint {
            rate: self.rate * kept,
            arms: arms
                .into_iter()
                .map(|a| Arm {
                    share: a.share / kept,
                    ..a
                })
                .collect(),
            ..self.clone()
        }
    }
}

/// What a workload run does, planned before anything starts.
#[derive(Debug, Clone)]
pub struct WorkloadPlan {
    pub spec: TableSpec,
    pub mix: Mix,
    /// The secondary indexes the table carries at every point (every arm's).
    pub indexes: Vec<IndexKind>,
    /// The most utilisation (rate × measured service time) a point may run at: a point planned
    /// above it runs at the rate that reaches it. None: the rates as planned.
    pub max_utilisation: Option<f64>,
    /// Table sizes, ascending.
    pub sizes: Vec<u64>,
    pub points: Vec<LoadPoint>,
    pub duration_s: f64,
    pub warmup_s: f64,
    pub order_seed: u64,
    pub max_in_flight: usize,
    /// The rows cached reads and updates pick from (`1..=cache_keys`); the whole table
    /// when the profile does not narrow them.
    pub cache_keys: Option<u64>,
    /// The share of every point's timetable this process offers (`--shard K/N`; the whole
    /// load, 1/1, without it).
    pub shard: Shard,
    /// The load generator's ceiling measured on this machine, when it was
    /// (`reports/generator-ceiling.toml`): what the dry run counts the shards needed by.
    pub ceiling: Option<Ceiling>,
}

impl WorkloadPlan {
    /// Requests every point sends, warm-ups included.
    pub fn requests(&self) -> usize {
        self.points
            .iter()
            .map(|p| (p.rate * (self.duration_s + self.warmup_s)).round() as usize)
            .sum()
    }

    /// Seed requests: the batches that grow the table to each size.
    pub fn seed_batches(&self) -> usize {
        let per = self.spec.seed_batch_rows() as u64;
        self.sizes.last().map_or(0, |&n| n.div_ceil(per) as usize)
    }

    /// Rows the table is seeded with, at most.
    pub fn seeded_rows(&self) -> u64 {
        self.sizes.last().copied().unwrap_or(0)
    }

    /// What the run costs on Cloudflare, estimated: every request and seed batch an invocation
    /// (with one index call per point and one check per size and at the end); rows written by
    /// the seeding (twice where an index is built over them) and the writes; rows read by the
    /// reads (a point read 1, a range scan its rows, an aggregate its group through the index)
    /// and by the checks' checksums.
    pub fn cost(&self) -> Cost {
        let requests = self.requests();
        let checks = self.sizes.len() + 1;
        let generator = self.spec.generator();
        let longest = checksum::longest_code(&generator);
        let mut rows_written = self.seeded_rows() as usize * 2;
        let mut kv_ops = 0;
        let mut rows_read: usize = self
            .sizes
            .iter()
            .map(|&n| checksum::rows_read(n as usize, longest))
            .sum();
        for point in &self.points {
            let n = point.rate * (self.duration_s + self.warmup_s);
            for arm in &point.arms {
                let op = &arm.op;
                let share = n * arm.share;
                let group = point.table_rows.div_ceil(self.spec.groups) as f64;
                let (read, written) = match op.op {
                    Operation::PointRead => (1.0, 0.0),
                    Operation::RangeScan => (op.rows as f64, 0.0),
                    Operation::Aggregate => (group, 0.0),
                    Operation::Write | Operation::BatchWrite => (0.0, 2.0 * op.rows as f64),
                    // A hit reads nothing from D1; counted as a miss, the upper bound.
                    Operation::CachedRead => (2.0, 0.0),
                    Operation::Update => (1.0, 2.0),
                };
                rows_read += (share * read).ceil() as usize;
                rows_written += (share * written).ceil() as usize;
                if op.op == Operation::CachedRead {
                    kv_ops += share.ceil() as usize;
                }
            }
        }
        Cost {
            probes: requests,
            worker_requests: requests + self.seed_batches() + self.points.len() + checks + 1,
            rows_written,
            rows_read,
            max_queries_per_invocation: 1,
            probes_over_free_budget: 0,
            probes_over_paid_budget: 0,
            // Each cached read gets from KV; a miss also puts, priced as if every one missed.
            kv_reads: kv_ops,
            kv_writes: kv_ops,
        }
    }
}

impl Workload {
    /// The arms of one point at `rate` (the whole point's, in the profile's unit), each with
    /// its request rate: every index × (preparation, session) × retry policy × operation of
    /// `group`, the rate split equally between them (an operation of a weighted mix by its
    /// weight; with `rate-unit = "rows"`, equal rows per second, so a batch of N is sent N
    /// times less often).
    fn arms(
        &self,
        profile: &WorkloadProfile,
        rate: f64,
        group: &[PlannedOp],
        indexes: &[IndexKind],
        series: &[(Preparation, d1bench_core::workload::SessionMode)],
    ) -> Vec<(Arm, f64)> {
        let retries = self.retries().expect("checked when the file was loaded");
        let others = (indexes.len() * series.len() * retries.len()) as f64;
        let mut arms = Vec::new();
        for &index in indexes {
            for &(preparation, session) in series {
                for &retry in &retries {
                    for op in group {
                        let op_share = match self.file.mix {
                            Mix::Weighted => f64::from(op.weight) / 100.0,
                            Mix::Interleaved | Mix::EachAlone => 1.0 / group.len() as f64,
                        };
                        let requests =
                            Self::request_rate(profile, rate * op_share / others, op.rows);
                        let arm = Arm {
                            index,
                            preparation,
                            session,
                            op: *op,
                            retry,
                            share: 0.0,
                        };
                        arms.push((arm, requests));
                    }
                }
            }
        }
        arms
    }

    /// The plan of `profile`.
    pub fn plan(&self, profile: &WorkloadProfile) -> WorkloadPlan {
        let spec = self.spec();
        let sizes: Vec<u64> = profile.rows.0.iter().map(|r| *r.get_ref()).collect();
        let indexes: Vec<IndexKind> = profile.indexes.as_ref().map_or(vec![IndexKind::Key], |l| {
            l.0.iter().map(|i| *i.get_ref()).collect()
        });
        let preparations: Vec<Preparation> = profile
            .preparation
            .as_ref()
            .map_or(vec![Preparation::Reuse], |l| {
                l.0.iter().map(|p| *p.get_ref()).collect()
            });
        let ops: Vec<PlannedOp> = self
            .file
            .operation
            .0
            .iter()
            .map(|o| {
                let d = o.get_ref();
                PlannedOp {
                    op: d.kind,
                    weight: d.weight.as_ref().map_or(100, |w| *w.get_ref()),
                    rows: d.rows.as_ref().map_or(1, |r| *r.get_ref()),
                }
            })
            .collect();
        // Each point's operations: all of them together (weighted, interleaved), or one alone.
        let groups: Vec<Vec<PlannedOp>> = match self.file.mix {
            Mix::Weighted | Mix::Interleaved => vec![ops],
            Mix::EachAlone => ops.into_iter().map(|o| vec![o]).collect(),
        };
        let ttls: Vec<Option<f64>> = profile.ttls_s.as_ref().map_or(vec![None], |l| {
            l.0.iter().map(|t| Some(*t.get_ref())).collect()
        });
        let sessions = session::modes(profile);
        let series = session::series(&preparations, &sessions);
        let mut points = Vec::new();
        for &table_rows in &sizes {
            for group in &groups {
                for &ttl_s in &ttls {
                    for rate in &profile.rates.0 {
                        let arms = self.arms(profile, *rate.get_ref(), group, &indexes, &series);
                        points.push(arms_point(
                            points.len() + 1,
                            table_rows,
                            &indexes,
                            arms,
                            ttl_s,
                            path::choice(profile),
                        ));
                    }
                }
            }
        }
        WorkloadPlan {
            spec,
            mix: self.file.mix,
            indexes,
            max_utilisation: profile.max_utilisation.as_ref().map(|u| *u.get_ref()),
            sizes,
            points,
            duration_s: *profile.duration_s.get_ref(),
            warmup_s: profile.warmup_s.as_ref().map_or(0.0, |w| *w.get_ref()),
            order_seed: profile.order_seed,
            max_in_flight: *profile.max_in_flight.get_ref(),
            cache_keys: profile.cache_keys.as_ref().map(|k| *k.get_ref()),
            shard: Shard::WHOLE,
            ceiling: None,
        }
    }
}

/// A point of `arms` (each with its request rate): the rate their sum, each arm's share its
/// part of it.
fn arms_point(
    id: usize,
    table_rows: u64,
    indexes: &[IndexKind],
    arms: Vec<(Arm, f64)>,
    ttl_s: Option<f64>,
    path: PathChoice,
) -> LoadPoint {
    let rate: f64 = arms.iter().map(|(_, r)| r).sum();
    LoadPoint {
        id,
        table_rows,
        indexes: indexes.to_vec(),
        rate,
        arms: arms
            .into_iter()
            .map(|(arm, r)| Arm {
                share: r / rate,
                ..arm
            })
            .collect(),
        ttl_s,
        path,
    }
}
