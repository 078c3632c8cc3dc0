//! `histograms.csv`: per target, point and arm, the successful requests' latency histogram in
//! HdrHistogram's own V2 serialization (base64 in its cell, lossless), beside the counts,
//! refusals, retries, offered and achieved rates, the generator's lag and the point's load. A
//! shard's are computed from its records ([`of_stats`]); a merged run's are the shards' rows
//! and, per arm, their histograms added exactly and their counts summed ([`merged`]).

use std::collections::BTreeMap;

use anyhow::{Context, Result, anyhow};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use d1bench_core::workload::{IndexKind, Operation, Preparation, SessionMode};
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer as _, V2Serializer};
use serde::{Deserialize, Serialize};

use crate::base::TargetKind;
use crate::stats::CONFIDENCE;
use crate::stats::latencies::Latencies;
use crate::studies::workload::RetryKind;
use crate::studies::workload::report::load_stats::OpStats;

/// What `shard` says of a row that adds every shard's.
pub const MERGED: &str = "merged";

/// One arm at one point, as one shard (or the merge) saw it: a row of `histograms.csv`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HistogramRow {
    /// `K/N` for a shard's own requests, `merged` for every shard's together.
    pub shard: String,
    pub target: TargetKind,
    pub point: usize,
    pub table_rows: u64,
    pub index: IndexKind,
    pub preparation: Preparation,
    pub session: SessionMode,
    pub op: Operation,
    pub retry: RetryKind,
    pub ttl_s: Option<f64>,
    /// Requests per second the requests were scheduled at (a shard's share; every shard's,
    /// summed, for the merge).
    pub rate: f64,
    /// Requests measured; of them successful, refused (and by class, `class=count;…`), in
    /// error, and unanswered.
    pub n: usize,
    pub ok: usize,
    pub refused: usize,
    pub refused_by_class: String,
    pub errors: usize,
    pub target_failed: usize,
    /// Attempts beyond the first, over every request.
    pub retries: u64,
    /// Requests per second offered (scheduled) and answered successfully.
    pub offered_per_s: f64,
    pub achieved_per_s: f64,
    /// The generator's lag (due → sent), p99 and max, ms; for the merge, the largest shard's.
    pub lag_p99_ms: f64,
    pub lag_max_ms: f64,
    /// Its own lateness (due → handed to a thread), p99, ms, and whether it fell behind its
    /// timetable (any shard, for the merge).
    pub late_p99_ms: Option<f64>,
    pub behind: bool,
    /// How the point ran as this row's requests show it: `below saturation`, or saturated and
    /// why (empty for the merge: the merged run's own summary judges the whole).
    pub load: String,
    /// When the shard's clock started (UTC ms since 1970); empty for the merge.
    pub clock_zero_unix_ms: Option<f64>,
    /// Percentiles read from this row's histogram, ms (nearest rank).
    pub p50_ms: Option<f64>,
    pub p95_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    /// The successful requests' latencies from when each was due, in µs, 1 µs to one hour at 3
    /// significant digits: HdrHistogram's V2 serialization, base64.
    pub histogram_v2: String,
}

impl HistogramRow {
    /// What identifies the arm at its point, whatever the shard.
    #[allow(clippy::type_complexity)]
    pub fn arm(
        &self,
    ) -> (
        TargetKind,
        usize,
        IndexKind,
        Preparation,
        SessionMode,
        Operation,
        RetryKind,
        u64,
    ) {
        (
            self.target,
            self.point,
            self.index,
            self.preparation,
            self.session,
            self.op,
            self.retry,
            self.ttl_s.map_or(0, f64::to_bits),
        )
    }

    /// The latencies its cell holds.
    pub fn latencies(&self) -> Result<Latencies> {
        decode(&self.histogram_v2).with_context(|| {
            format!(
                "the histogram of {} point {} {} ({})",
                self.target, self.point, self.op, self.shard
            )
        })
    }
}

/// `histogram`'s V2 serialization, base64.
pub fn encode(latencies: &Latencies) -> Result<String> {
    let mut bytes = Vec::new();
    V2Serializer::new()
        .serialize(latencies.histogram(), &mut bytes)
        .map_err(|e| anyhow!("cannot serialize a histogram: {e:?}"))?;
    Ok(STANDARD.encode(bytes))
}

/// The latencies a base64 V2 serialization holds.
pub fn decode(text: &str) -> Result<Latencies> {
    let bytes = STANDARD
        .decode(text.trim())
        .map_err(|e| anyhow!("not base64: {e}"))?;
    let histogram: Histogram<u64> = Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .map_err(|e| anyhow!("not an HdrHistogram V2 serialization: {e:?}"))?;
    Ok(Latencies::from_histogram(histogram))
}

/// The nearest-rank percentiles of `latencies` at p50, p95 and p99, ms.
fn percentiles(latencies: &Latencies) -> [Option<f64>; 3] {
    [0.5, 0.95, 0.99].map(|q| latencies.percentile(q, CONFIDENCE).map(|p| p.ms))
}

/// The rows of shard `shard` (`K/N`) from its run's statistics.
pub fn of_stats(
    stats: &[OpStats],
    shard: &str,
    clock_zero: Option<f64>,
) -> Result<Vec<HistogramRow>> {
    stats
        .iter()
        .map(|s| {
            let [p50_ms, p95_ms, p99_ms] = percentiles(&s.latencies);
            Ok(HistogramRow {
                shard: shard.to_owned(),
                target: s.key.target,
                point: s.point,
                table_rows: s.key.table_rows,
                index: s.key.index,
                preparation: s.key.preparation,
                session: s.key.session,
                op: s.key.op,
                retry: s.key.retry,
                ttl_s: s.key.ttl_s,
                rate: s.key.rate,
                n: s.n,
                ok: s.ok,
                refused: s.refused.iter().map(|(_, n)| n).sum(),
                refused_by_class: by_class(
                    &s.refused
                        .iter()
                        .map(|(k, n)| (k.to_string(), *n))
                        .collect::<Vec<_>>(),
                ),
                errors: s.errors,
                target_failed: s.target_failed,
                retries: (s.attempts_mean * s.n as f64 - s.n as f64).round().max(0.0) as u64,
                offered_per_s: s.offered_per_s,
                achieved_per_s: s.achieved_per_s,
                lag_p99_ms: s.lag_p99_ms,
                lag_max_ms: s.lag_max_ms,
                late_p99_ms: s.load.late_p99_ms,
                behind: s.behind,
                load: s.load.describe(),
                clock_zero_unix_ms: clock_zero,
                p50_ms,
                p95_ms,
                p99_ms,
                histogram_v2: encode(&s.latencies)?,
            })
        })
        .collect()
}

/// `class=count;…` in the order given.
fn by_class(counts: &[(String, usize)]) -> String {
    counts
        .iter()
        .map(|(k, n)| format!("{k}={n}"))
        .collect::<Vec<_>>()
        .join(";")
}

/// One arm's shards so far: the first shard's row with the counts summed into it, the
/// histograms added, the refusals by class summed.
struct ArmSum {
    row: HistogramRow,
    latencies: Latencies,
    refused: Vec<(String, usize)>,
}

/// Each arm's rows of every shard added into one `merged` row: histograms added exactly,
/// counts, refusals, retries and rates summed, the lag the largest shard's, behind when any
/// shard was. In the order the arms first appear.
pub fn merged(shards: &[HistogramRow]) -> Result<Vec<HistogramRow>> {
    let mut order = Vec::new();
    let mut arms: BTreeMap<_, ArmSum> = BTreeMap::new();
    for row in shards.iter().filter(|r| r.shard != MERGED) {
        let latencies = row.latencies()?;
        let classes: Vec<(String, usize)> = row
            .refused_by_class
            .split(';')
            .filter(|c| !c.is_empty())
            .map(|c| {
                let (k, n) = c.split_once('=').unwrap_or((c, "0"));
                (k.to_owned(), n.parse().unwrap_or(0))
            })
            .collect();
        match arms.get_mut(&row.arm()) {
            None => {
                order.push(row.arm());
                let sum = ArmSum {
                    row: row.clone(),
                    latencies,
                    refused: classes,
                };
                arms.insert(row.arm(), sum);
            }
            Some(ArmSum {
                row: sum,
                latencies: all,
                refused,
            }) => {
                all.add(&latencies).map_err(|e| {
                    anyhow!(
                        "the histograms of {} point {} {} cannot be added ({} and {}): {e:?}",
                        row.target,
                        row.point,
                        row.op,
                        sum.shard,
                        row.shard
                    )
                })?;
                for (k, n) in classes {
                    match refused.iter_mut().find(|(c, _)| *c == k) {
                        Some((_, m)) => *m += n,
                        None => refused.push((k, n)),
                    }
                }
                sum.rate += row.rate;
                sum.n += row.n;
                sum.ok += row.ok;
                sum.refused += row.refused;
                sum.errors += row.errors;
                sum.target_failed += row.target_failed;
                sum.retries += row.retries;
                sum.offered_per_s += row.offered_per_s;
                sum.achieved_per_s += row.achieved_per_s;
                sum.lag_p99_ms = sum.lag_p99_ms.max(row.lag_p99_ms);
                sum.lag_max_ms = sum.lag_max_ms.max(row.lag_max_ms);
                sum.late_p99_ms = match (sum.late_p99_ms, row.late_p99_ms) {
                    (Some(a), Some(b)) => Some(a.max(b)),
                    (a, b) => a.or(b),
                };
                sum.behind |= row.behind;
            }
        }
    }
    order
        .into_iter()
        .map(|arm| {
            let ArmSum {
                row: sum,
                latencies,
                refused,
            } = arms.remove(&arm).expect("every arm was kept");
            let [p50_ms, p95_ms, p99_ms] = percentiles(&latencies);
            Ok(HistogramRow {
                shard: MERGED.to_owned(),
                refused_by_class: by_class(&refused),
                load: String::new(),
                clock_zero_unix_ms: None,
                p50_ms,
                p95_ms,
                p99_ms,
                histogram_v2: encode(&latencies)?,
                ..sum
            })
        })
        .collect()
}
