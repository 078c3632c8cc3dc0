//! The cache workload's figures, per target and TTL, computed once from the records: the hit
//! ratio of the measured cached reads (with its Wilson interval), the latency of hits and of
//! misses (percentiles with order-statistic intervals, from HDR histograms), and the share of
//! stale reads and their staleness ([`super::staleness`]), for the summary and the charts.

use std::fmt::Write as _;

use d1bench_core::Outcome;
use d1bench_core::workload::Operation;
use d1bench_core::workload::cache::CacheLookup;

use super::staleness::{AckedUpdate, CachedRead, Freshness, Timeline};
use crate::base::TargetKind;
use crate::base::numbers::num as ms;
use crate::reports::numbers::share_text;
use crate::stats::{CONFIDENCE, Latencies, Share};
use crate::studies::workload::row::{OpRow, Phase};

/// One TTL's figures on one target.
pub struct TtlStats {
    pub target: TargetKind,
    pub ttl_s: f64,
    pub rate: f64,
    /// Measured cached reads that answered.
    pub reads: usize,
    /// Cached reads that did not answer (refused, failed or unanswered).
    pub failed: usize,
    pub hits: usize,
    /// Misses because the entry was older than the TTL (KV still held it).
    pub expired: usize,
    pub hit_latency: Latencies,
    pub miss_latency: Latencies,
    pub stale: usize,
    /// Staleness of the stale reads, ms.
    pub staleness: Latencies,
    /// Updates acknowledged while this TTL's load ran, warm-up included.
    pub updates: usize,
}

impl TtlStats {
    pub fn hit_ratio(&self) -> Option<Share> {
        Share::of(self.hits, self.reads)
    }
    pub fn stale_share(&self) -> Option<Share> {
        Share::of(self.stale, self.reads)
    }
}

/// The figures of every TTL of every target in `rows`, in order of target and TTL. Staleness
/// is judged against every update acknowledged in the run (versions grow across its points).
pub fn stats(rows: &[OpRow]) -> Vec<TtlStats> {
    let mut out: Vec<TtlStats> = Vec::new();
    let mut targets: Vec<TargetKind> = rows.iter().map(|r| r.target).collect();
    targets.sort();
    targets.dedup();
    for target in targets {
        let mine: Vec<&OpRow> = rows.iter().filter(|r| r.target == target).collect();
        let timeline = Timeline::new(mine.iter().filter_map(|r| {
            (r.op == Operation::Update && r.acknowledged()).then_some(AckedUpdate {
                key: r.key,
                version: r.version?,
                acked_ms: r.answered_ms?,
            })
        }));
        let mut ttls: Vec<f64> = mine.iter().filter_map(|r| r.ttl_s).collect();
        ttls.sort_by(f64::total_cmp);
        ttls.dedup();
        for ttl_s in ttls {
            let at: Vec<&&OpRow> = mine.iter().filter(|r| r.ttl_s == Some(ttl_s)).collect();
            let mut s = TtlStats {
                target,
                ttl_s,
                rate: at.first().map_or(0.0, |r| r.rate),
                reads: 0,
                failed: 0,
                hits: 0,
                expired: 0,
                hit_latency: Latencies::new(),
                miss_latency: Latencies::new(),
                stale: 0,
                staleness: Latencies::new(),
                updates: at
                    .iter()
                    .filter(|r| r.op == Operation::Update && r.acknowledged())
                    .count(),
            };
            for r in at
                .iter()
                .filter(|r| r.op == Operation::CachedRead && r.phase == Phase::Measure)
            {
                let (Some(lookup), Some(version), Some(sent_ms), Outcome::Ok, false) =
                    (r.cache, r.version, r.sent_ms, r.outcome, r.target_failed)
                else {
                    s.failed += 1;
                    continue;
                };
                s.reads += 1;
                match lookup {
                    CacheLookup::Hit => {
                        s.hits += 1;
                        s.hit_latency.record_ms(r.latency_ms);
                    }
                    CacheLookup::Miss | CacheLookup::Expired => {
                        s.expired += usize::from(lookup == CacheLookup::Expired);
                        s.miss_latency.record_ms(r.latency_ms);
                    }
                }
                let read = CachedRead {
                    key: r.key,
                    sent_ms,
                    version,
                };
                if let Freshness::Stale { by_ms } = timeline.judge(&read) {
                    s.stale += 1;
                    s.staleness.record_ms(by_ms);
                }
            }
            out.push(s);
        }
    }
    out
}

/// `p50 1.2 (1.1–1.3) · p95 … · p99 …` of `latencies`, in ms.
pub fn percentiles(latencies: &Latencies) -> String {
    if latencies.is_empty() {
        return "none".to_owned();
    }
    [0.5, 0.95, 0.99]
        .iter()
        .filter_map(|&q| latencies.percentile(q, CONFIDENCE))
        .map(|p| {
            let ci = match p.ci {
                Some(c) => format!(" ({}–{})", ms(c.low), ms(c.high)),
                None => " (n too small)".to_owned(),
            };
            format!("p{} {}{ci}", (p.q * 100.0).round(), ms(p.ms))
        })
        .collect::<Vec<_>>()
        .join(" · ")
}

/// The summary's cache section; empty when the run had no cached reads.
pub fn section(stats: &[TtlStats]) -> String {
    if stats.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "\n## The cache: hit ratio, latency and staleness per TTL\n\n\
         Cached reads go to Workers KV first; an entry younger than the TTL answers (a hit), \
         otherwise D1 answers and the row is put into KV (a miss; `expired` counts the misses \
         that found an entry older than the TTL: KV keeps entries at least 60 s, its smallest \
         `expirationTtl`, so the entry carries when it was cached and the TTL is kept by the \
         read). Updates bump a row's version in D1 and leave KV alone. A read is **stale** when \
         it was sent after an update to its row had been acknowledged and returned an older \
         version; its staleness runs from that acknowledgement (the first one newer than what \
         it returned) to when the read was sent. Shares with their 95% Wilson intervals; \
         latencies from when each request was due (ms), percentiles with their order-statistic \
         intervals. Each TTL's load starts with a cold cache of its own.\n\n\
         | target | TTL (s) | rate (/s) | cached reads | hit ratio | misses: expired | hit latency | miss latency | stale share | staleness (ms) | updates acknowledged |\n\
         | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n",
    );
    for s in stats {
        let failed = if s.failed > 0 {
            format!(" ({} failed)", s.failed)
        } else {
            String::new()
        };
        writeln!(
            out,
            "| {} | {} | {} | {}{failed} | {} | {} | {} | {} | {} | {} | {} |",
            s.target,
            s.ttl_s,
            s.rate,
            s.reads,
            s.hit_ratio().map_or("-".to_owned(), |h| share_text(&h)),
            s.expired,
            percentiles(&s.hit_latency),
            percentiles(&s.miss_latency),
            s.stale_share().map_or("-".to_owned(), |h| share_text(&h)),
            if s.stale == 0 {
                "none stale".to_owned()
            } else {
                format!(
                    "{} · max {}",
                    percentiles(&s.staleness),
                    ms(s.staleness.max_ms())
                )
            },
            s.updates
        )
        .unwrap();
    }
    out
}
