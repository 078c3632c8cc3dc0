//! The write-up's read-path claims against a workload run: covering ÷ key index (claimed −40%,
//! a ratio of 0.60) on the aggregate, the one read the index serves, and reused ÷ per-call
//! prepared statements (claimed −15%, 0.85) on every read; each the ratio of two percentiles
//! with its interval ([`quantiles::ratio`]) on two clocks, and a verdict from where the
//! interval lies.

use std::fmt::Write as _;

use d1bench_core::workload::{IndexKind, Operation, Preparation};

use super::load_stats::{Key, OpStats};
use super::quantiles;
use super::stats::Interval;

/// One comparison of the read path against a claim of the write-up.
pub struct Answer {
    pub key: Key,
    /// What is compared, `covering ÷ key` or `reuse ÷ per-call`.
    pub what: &'static str,
    /// Which clock: `latency` (from the due time: what a client on the timetable saw, queue
    /// included) or `inside` (the operation alone, inside its invocation).
    pub clock: &'static str,
    pub q: f64,
    pub ratio: f64,
    pub ci: Option<Interval>,
    /// The ratio the write-up claims (0.60 for −40%, 0.85 for −15%).
    pub claimed: f64,
}

impl Answer {
    /// Whether the claim holds here, from where the interval lies.
    pub fn verdict(&self) -> &'static str {
        let Some(ci) = self.ci else {
            return "too few requests for an interval";
        };
        let c = self.claimed;
        if ci.high < c {
            "holds, and the saving is larger than claimed"
        } else if ci.low <= c && ci.high < 1.0 {
            "holds (the interval covers the claimed ratio, and not 1)"
        } else if ci.low <= c {
            "cannot tell (the interval covers both the claim and no change)"
        } else if ci.high < 1.0 {
            "does not hold: a smaller saving than claimed"
        } else if ci.low <= 1.0 {
            "does not hold: no saving detectable"
        } else {
            "does not hold: slower"
        }
    }
}

/// Covering ÷ key index (claimed 0.60, for the aggregate, the one read the index serves) and
/// reuse ÷ per-call (claimed 0.85, for every read) at p50 and p95, at every point measured both
/// ways.
pub fn answers(stats: &[OpStats]) -> Vec<Answer> {
    let mut out = Vec::new();
    let find = |k: Key| stats.iter().find(|s| s.key == k);
    for s in stats {
        if s.key.op.writes() {
            continue;
        }
        let pairs = [
            // The secondary index only serves the aggregate: reads by primary key never use it.
            (
                s.key.index == IndexKind::Covering && s.key.op == Operation::Aggregate,
                Key {
                    index: IndexKind::Key,
                    ..s.key
                },
                "covering ÷ key index",
                0.60,
            ),
            (
                s.key.preparation == Preparation::Reuse,
                Key {
                    preparation: Preparation::PerCall,
                    ..s.key
                },
                "reused ÷ per-call statement",
                0.85,
            ),
        ];
        for (applies, other, what, claimed) in pairs {
            let Some(base) = applies.then(|| find(other)).flatten() else {
                continue;
            };
            for (clock, mine, theirs, q) in [
                ("latency", &s.latencies, &base.latencies, 0.5),
                ("latency", &s.latencies, &base.latencies, 0.95),
                ("inside", &s.inside, &base.inside, 0.5),
            ] {
                if let Some((ratio, ci)) = quantiles::ratio(mine, theirs, q) {
                    out.push(Answer {
                        key: s.key,
                        what,
                        clock,
                        q,
                        ratio,
                        ci,
                        claimed,
                    });
                }
            }
        }
    }
    out
}

pub fn answers_table(answers: &[Answer]) -> String {
    let mut out = String::from(
        "| target | rows | compared | other setting | operation | rate/s | clock | percentile | ratio (interval, coverage ≥) | claimed | verdict |\n\
         | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n",
    );
    for a in answers {
        let mut other = if a.what.starts_with("covering") {
            format!("statements {}", a.key.preparation)
        } else {
            format!("index {}", a.key.index)
        };
        if !a.key.session.is_none() {
            other.push_str(&format!(", session {}", a.key.session));
        }
        let ratio = match a.ci {
            Some(ci) => format!(
                "{:.2} ({:.2}–{:.2}, {:.1}%)",
                a.ratio,
                ci.low,
                ci.high,
                ci.coverage * 100.0
            ),
            None => format!("{:.2} (no interval)", a.ratio),
        };
        writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | p{} | {} | {:.2} | {} |",
            a.key.target,
            a.key.table_rows,
            a.what,
            other,
            a.key.op,
            a.key.rate,
            a.clock,
            (a.q * 100.0).round(),
            ratio,
            a.claimed,
            a.verdict()
        )
        .unwrap();
    }
    out
}
