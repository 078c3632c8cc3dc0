//! A workload's plan, what a run follows: the table's sizes, each load point (size, index,
//! preparation, D1 session, operations, rate) in run order, and what it all costs on Cloudflare.

use d1bench_core::checksum;
use d1bench_core::workload::{IndexKind, Operation, Preparation, SessionMode, TableSpec};
use serde::{Deserialize, Serialize};

use super::{Mix, PathChoice, RetryKind, RetryPolicy};
use crate::studies::cost::Cost;

/// One operation of the mix, as planned.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PlannedOp {
    pub op: Operation,
    /// Percent of the requests (100 when it runs alone).
    pub weight: u32,
    /// Rows a range scan reads or a batched write writes; 1 otherwise.
    pub rows: usize,
}

/// One load: a table size, its index, how statements are prepared, the operations and a rate.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadPoint {
    /// From 1, in run order.
    pub id: usize,
    pub table_rows: u64,
    pub index: IndexKind,
    pub preparation: Preparation,
    /// How the Worker opens D1 for the reads: the plain binding, or a session per request.
    pub session: SessionMode,
    /// Requests per second.
    pub rate: f64,
    /// The operations of this load (one, when they run apart).
    pub ops: Vec<PlannedOp>,
    /// What the load generator does when a request is refused.
    pub retry: RetryPolicy,
    /// The cache's TTL in seconds, for a load with cached reads.
    pub ttl_s: Option<f64>,
    /// Which way its writes go: the binding, D1's REST API, or both per request.
    pub path: PathChoice,
}

impl LoadPoint {
    /// The series this point belongs to, as the reports name it.
    pub fn series(&self) -> String {
        let series = self.series_without_ttl();
        match self.ttl_s {
            Some(ttl) => format!("{series} ttl={ttl}s"),
            None => series,
        }
    }

    fn series_without_ttl(&self) -> String {
        let mut series = format!("index={} preparation={}", self.index, self.preparation);
        // The plain binding's series keep the names they had before sessions were a series.
        if !self.session.is_none() {
            series.push_str(&format!(" session={}", self.session));
        }
        if self.path != PathChoice::Binding {
            series.push_str(&format!(" path={}", self.path));
        }
        match self.retry.kind {
            RetryKind::None => series,
            _ => format!("{series} retry={}", self.retry.label()),
        }
    }
}

/// What a workload run does, planned before anything starts.
#[derive(Debug, Clone)]
pub struct WorkloadPlan {
    pub spec: TableSpec,
    pub mix: Mix,
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
            for op in &point.ops {
                let share = n * f64::from(op.weight) / 100.0;
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
