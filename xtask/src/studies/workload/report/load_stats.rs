//! A workload run's requests summarized, pure and from its records alone: per target, table
//! size, index, preparation, D1 session, operation and rate, the successful requests' latencies in an HDR
//! histogram ([`Latencies`]), the refusals by class, throughput offered and achieved, the
//! medians of the inside and D1 clocks, the rows D1 bills, and the load generator's lag. The
//! summary ([`super::summary`]) and the chart ([`super::chart`]) both read these.

use d1bench_core::workload::{IndexKind, Operation, Preparation, SessionMode};
use d1bench_core::{Outcome, RefusalKind};
use std::collections::BTreeMap;

use super::saturation::{self, PointLoad};
use crate::base::TargetKind;
use crate::stats::{Latencies, batch_means, median, nearest_rank};
use crate::studies::workload::RetryKind;
use crate::studies::workload::row::{OpRow, Phase};

/// The generator lagged when the 99th percentile of its lag is above this many ms, or above a
/// tenth of the time between two requests, whichever is larger.
pub const LAG_TOLERANCE_MS: f64 = 1.0;

/// What identifies one operation's latencies: where and under which load they were measured.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub struct Key {
    pub target: TargetKind,
    pub table_rows: u64,
    pub index: IndexKind,
    pub preparation: Preparation,
    /// How the Worker opened D1 for the reads (the plain binding or a session per request).
    pub session: SessionMode,
    pub op: Operation,
    pub rate: f64,
    pub retry: RetryKind,
    /// The cache's TTL, seconds (cache workloads).
    pub ttl_s: Option<f64>,
}

impl Key {
    fn of(row: &OpRow) -> Key {
        Key {
            target: row.target,
            table_rows: row.table_rows,
            index: row.index,
            preparation: row.preparation,
            session: row.session,
            op: row.op,
            rate: row.rate,
            retry: row.retry,
            ttl_s: row.ttl_s,
        }
    }
    #[allow(clippy::type_complexity)]
    fn sort_key(
        &self,
    ) -> (
        TargetKind,
        u64,
        IndexKind,
        Preparation,
        SessionMode,
        Operation,
        RetryKind,
        u64,
        u64,
    ) {
        (
            self.target,
            self.table_rows,
            self.index,
            self.preparation,
            self.session,
            self.op,
            self.retry,
            self.ttl_s.map_or(0, f64::to_bits),
            self.rate.to_bits(),
        )
    }
}

/// One operation at one point, summarized.
pub struct OpStats {
    pub key: Key,
    /// The point it was measured at (arms of one point share it).
    pub point: usize,
    /// Requests measured.
    pub n: usize,
    pub ok: usize,
    /// Refused requests by class, in the order first seen.
    pub refused: Vec<(RefusalKind, usize)>,
    pub errors: usize,
    /// Requests the target gave no answer to.
    pub target_failed: usize,
    /// Latencies of the successful requests, from when each was due.
    pub latencies: Latencies,
    /// The successful requests' inside clocks: the operation alone, without the queue in front
    /// of it or the request around it (whole ms on the Worker's clock).
    pub inside: Latencies,
    /// Requests per second of this operation: scheduled, and answered successfully.
    pub offered_per_s: f64,
    pub achieved_per_s: f64,
    pub inside_ms_p50: Option<f64>,
    pub d1_ms_p50: Option<f64>,
    /// D1's `rows_read` per request (mean) and `rows_written` over all of them.
    pub rows_read_mean: Option<f64>,
    pub rows_written: Option<u64>,
    /// The point's generator lag: its 99th percentile and max, ms.
    pub lag_p99_ms: f64,
    pub lag_max_ms: f64,
    /// Whether the generator itself fell behind its timetable at this point (its own
    /// lateness; in runs before that was recorded, its lag).
    pub behind: bool,
    /// How the point ran: below saturation, or saturated and why.
    pub load: PointLoad,
    /// The successful requests' latencies and inside times per time block of the point
    /// ([`batch_means::BLOCKS`]), for intervals that allow for correlation in time.
    pub blocks: Vec<Block>,
    /// Rows each request touches (a batched write's N; 1 otherwise).
    pub op_rows: usize,
    /// What the first attempts met: refusals by class, and no answer at all (what a client
    /// without retries saw).
    pub first_refused: Vec<(RefusalKind, usize)>,
    pub first_failed: usize,
    /// Attempts per request: mean and most.
    pub attempts_mean: f64,
    pub attempts_max: u32,
    /// Rows per second scheduled, and written (or read) by successful requests: goodput.
    pub offered_rows_per_s: f64,
    pub goodput_rows_per_s: f64,
}

/// One time block of one arm at one point: its successful requests' latencies and inside
/// times, ms, and how many of its requests there were, were refused at their first attempt, and
/// were not acknowledged in the end.
#[derive(Debug, Clone, Default)]
pub struct Block {
    pub latency: Vec<f64>,
    pub inside: Vec<f64>,
    pub requests: usize,
    pub first_refused: usize,
    pub unacknowledged: usize,
}

impl Block {
    /// The share of the block's requests not acknowledged in the end; `None` when it had none.
    pub fn unacknowledged_share(&self) -> Option<f64> {
        (self.requests > 0).then(|| self.unacknowledged as f64 / self.requests as f64)
    }
}

/// Every operation at every point of `rows` (measured requests only), in report order.
pub fn stats(rows: &[OpRow]) -> Vec<OpStats> {
    stats_capped(rows, None)
}

/// [`stats`], with the run's cap on requests in flight when points.csv records it.
pub fn stats_capped(rows: &[OpRow], cap: Option<usize>) -> Vec<OpStats> {
    let loads = saturation::points(rows, cap);
    let measured: Vec<&OpRow> = rows.iter().filter(|r| r.phase == Phase::Measure).collect();
    // Per target and point: the requests, the wall time to the last answer, the lags.
    let mut points: BTreeMap<(TargetKind, usize), (usize, f64, Vec<f64>)> = BTreeMap::new();
    for r in &measured {
        let p = points.entry((r.target, r.point)).or_default();
        p.0 += 1;
        p.1 = p.1.max(r.scheduled_ms + r.latency_ms);
        p.2.push(r.lag_ms);
    }
    let mut groups: Vec<(Key, Vec<&OpRow>)> = Vec::new();
    for r in &measured {
        let key = Key::of(r);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, g)) => g.push(r),
            None => groups.push((key, vec![r])),
        }
    }
    groups.sort_by_key(|(k, _)| k.sort_key());
    groups
        .into_iter()
        .map(|(key, group)| {
            let (point_n, wall_ms, lags) = &points[&(key.target, group[0].point)];
            let mut lags = lags.clone();
            lags.sort_by(f64::total_cmp);
            let lag_p99_ms = lags[nearest_rank(lags.len(), 0.99) - 1];
            let lag_max_ms = *lags.last().unwrap_or(&0.0);
            let interval_ms = 1000.0 / key.rate;
            let load = loads[&(key.target, group[0].point)].clone();
            let span_ms = *point_n as f64 / key.rate * 1000.0;
            let mut blocks = vec![Block::default(); batch_means::BLOCKS];
            for r in &group {
                let block = &mut blocks[batch_means::block_of(r.scheduled_ms, span_ms)];
                block.requests += 1;
                block.first_refused += usize::from(r.first_failed || r.first_refusal.is_some());
                if r.target_failed || r.outcome != Outcome::Ok {
                    block.unacknowledged += 1;
                    continue;
                }
                block.latency.push(r.latency_ms);
                block.inside.extend(r.inside_ms);
            }
            let mut latencies = Latencies::new();
            let mut inside = Latencies::new();
            let mut refused: Vec<(RefusalKind, usize)> = Vec::new();
            let mut first_refused: Vec<(RefusalKind, usize)> = Vec::new();
            let (mut ok, mut errors, mut target_failed) = (0, 0, 0);
            let mut first_failed = 0;
            for r in &group {
                if r.first_failed {
                    first_failed += 1;
                } else if let Some(kind) = r.first_refusal {
                    match first_refused.iter_mut().find(|(k, _)| *k == kind) {
                        Some((_, n)) => *n += 1,
                        None => first_refused.push((kind, 1)),
                    }
                }
                if r.target_failed {
                    target_failed += 1;
                    continue;
                }
                match r.outcome {
                    Outcome::Ok => {
                        ok += 1;
                        latencies.record_ms(r.latency_ms);
                        if let Some(ms) = r.inside_ms {
                            inside.record_ms(ms);
                        }
                    }
                    Outcome::Refused => {
                        let kind = r.refusal.unwrap_or(RefusalKind::Other);
                        match refused.iter_mut().find(|(k, _)| *k == kind) {
                            Some((_, n)) => *n += 1,
                            None => refused.push((kind, 1)),
                        }
                    }
                    Outcome::Error => errors += 1,
                }
            }
            let scheduled_s = *point_n as f64 / key.rate;
            let achieved_per_s = ok as f64 / (wall_ms / 1000.0).max(scheduled_s);
            let op_rows = group[0].op_rows;
            let attempts: Vec<u32> = group.iter().map(|r| r.attempts).collect();
            let answered: Vec<&&OpRow> = group.iter().filter(|r| !r.target_failed).collect();
            let of = |f: fn(&OpRow) -> Option<f64>| -> Vec<f64> {
                answered.iter().filter_map(|r| f(r)).collect()
            };
            let rows_read = of(|r| r.rows_read.map(|v| v as f64));
            let rows_written: Vec<u64> = answered.iter().filter_map(|r| r.rows_written).collect();
            OpStats {
                key,
                point: group[0].point,
                n: group.len(),
                ok,
                refused,
                errors,
                target_failed,
                latencies,
                inside,
                offered_per_s: group.len() as f64 / scheduled_s,
                achieved_per_s,
                inside_ms_p50: median(&of(|r| r.inside_ms)),
                d1_ms_p50: median(&of(|r| r.d1_ms)),
                rows_read_mean: (!rows_read.is_empty())
                    .then(|| rows_read.iter().sum::<f64>() / rows_read.len() as f64),
                rows_written: (!rows_written.is_empty()).then(|| rows_written.iter().sum()),
                lag_p99_ms,
                lag_max_ms,
                behind: match load.late_p99_ms {
                    Some(_) => load.generator_behind,
                    None => lag_p99_ms > LAG_TOLERANCE_MS.max(interval_ms / 10.0),
                },
                load,
                blocks,
                op_rows,
                first_refused,
                first_failed,
                attempts_mean: attempts.iter().map(|&a| f64::from(a)).sum::<f64>()
                    / attempts.len() as f64,
                attempts_max: attempts.iter().copied().max().unwrap_or(1),
                offered_rows_per_s: group.len() as f64 * op_rows as f64 / scheduled_s,
                goodput_rows_per_s: achieved_per_s * op_rows as f64,
            }
        })
        .collect()
}
