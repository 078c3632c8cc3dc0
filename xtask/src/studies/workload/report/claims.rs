//! The write-up's read-path claims against a workload run: covering ÷ key index (claimed −40%,
//! a ratio of 0.60) on the aggregate, the one read the index serves, and reused ÷ per-call
//! prepared statements (claimed −15%, 0.85) on every read; each the ratio of two percentiles
//! with its interval ([`percentile_ratio`]) on two clocks, and a verdict from where the
//! interval lies. Covering ÷ key on the reads by primary key, which neither index serves, is
//! the control: expected 1, so a ratio away from it measures drift between the settings' runs.

use std::fmt::Write as _;

use d1bench_core::workload::{IndexKind, Operation, Preparation};

use super::load_stats::{Key, OpStats};
use crate::stats::Interval;
use crate::stats::latencies::percentile_ratio;

/// What a comparison sets against what.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Comparison {
    /// Covering ÷ key index on the aggregate, the read the index serves: claimed 0.60.
    CoveringIndex,
    /// Covering ÷ key index on a read by primary key, which neither index serves: expected 1.
    IndexControl,
    /// Reused ÷ per-call prepared statement, on every read: claimed 0.85.
    ReusedStatement,
}

impl Comparison {
    pub fn label(self) -> &'static str {
        match self {
            Comparison::CoveringIndex => "covering ÷ key index",
            Comparison::IndexControl => "covering ÷ key index (control)",
            Comparison::ReusedStatement => "reused ÷ per-call statement",
        }
    }

    /// The ratio the write-up claims (0.60 for −40%, 0.85 for −15%), or 1 for the control.
    pub fn expected(self) -> f64 {
        match self {
            Comparison::CoveringIndex => 0.60,
            Comparison::IndexControl => 1.0,
            Comparison::ReusedStatement => 0.85,
        }
    }
}

/// Which clock a comparison reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Clock {
    /// From the due time: what a client on the timetable saw, queue included.
    Latency,
    /// The operation alone, inside its invocation.
    Inside,
}

impl std::fmt::Display for Clock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Clock::Latency => "latency",
            Clock::Inside => "inside",
        })
    }
}

/// One comparison of the read path against a claim of the write-up, or the control.
pub struct Answer {
    pub key: Key,
    pub what: Comparison,
    pub clock: Clock,
    pub q: f64,
    pub ratio: f64,
    pub ci: Option<Interval>,
}

impl Answer {
    /// Whether the claim holds here (for the control: whether it found no difference), from
    /// where the interval lies.
    pub fn verdict(&self) -> &'static str {
        let Some(ci) = self.ci else {
            return "too few requests for an interval";
        };
        if self.what == Comparison::IndexControl {
            return if ci.low <= 1.0 && 1.0 <= ci.high {
                "as expected: no difference (neither index serves this read)"
            } else if ci.high < 1.0 {
                "differs: faster with the covering index, which this read does not use \
                 (drift between the two settings' runs)"
            } else {
                "differs: slower with the covering index, which this read does not use \
                 (drift between the two settings' runs)"
            };
        }
        let c = self.what.expected();
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

/// Covering ÷ key index (claimed 0.60, for the aggregate, the one read the index serves; the
/// control on the other reads) and reuse ÷ per-call (claimed 0.85, for every read) at p50 and
/// p95, at every point measured both ways.
pub fn answers(stats: &[OpStats]) -> Vec<Answer> {
    let mut out = Vec::new();
    let find = |k: Key| stats.iter().find(|s| s.key == k);
    for s in stats {
        if s.key.op.writes() {
            continue;
        }
        let pairs = [
            // The secondary index only serves the aggregate: reads by primary key never use it,
            // so on them the same ratio is the control.
            (
                s.key.index == IndexKind::Covering,
                Key {
                    index: IndexKind::Key,
                    ..s.key
                },
                if s.key.op == Operation::Aggregate {
                    Comparison::CoveringIndex
                } else {
                    Comparison::IndexControl
                },
            ),
            (
                s.key.preparation == Preparation::Reuse,
                Key {
                    preparation: Preparation::PerCall,
                    ..s.key
                },
                Comparison::ReusedStatement,
            ),
        ];
        for (applies, other, what) in pairs {
            let Some(base) = applies.then(|| find(other)).flatten() else {
                continue;
            };
            for (clock, mine, theirs, q) in [
                (Clock::Latency, &s.latencies, &base.latencies, 0.5),
                (Clock::Latency, &s.latencies, &base.latencies, 0.95),
                (Clock::Inside, &s.inside, &base.inside, 0.5),
            ] {
                if let Some((ratio, ci)) = percentile_ratio(mine, theirs, q) {
                    out.push(Answer {
                        key: s.key,
                        what,
                        clock,
                        q,
                        ratio,
                        ci,
                    });
                }
            }
        }
    }
    out
}

/// `0.61 (0.55–0.68, 95.0%)`: a ratio with its interval and the interval's coverage.
pub fn ratio_text(ratio: f64, ci: Option<Interval>) -> String {
    match ci {
        Some(ci) => format!(
            "{ratio:.2} ({:.2}–{:.2}, {:.1}%)",
            ci.low,
            ci.high,
            ci.coverage * 100.0
        ),
        None => format!("{ratio:.2} (no interval)"),
    }
}

pub fn answers_table(answers: &[Answer]) -> String {
    let mut out = String::from(
        "| target | rows | compared | other setting | operation | rate/s | clock | percentile | ratio (interval, coverage ≥) | claimed (or expected) | verdict |\n\
         | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n",
    );
    for a in answers {
        let mut other = match a.what {
            Comparison::CoveringIndex | Comparison::IndexControl => {
                format!("statements {}", a.key.preparation)
            }
            Comparison::ReusedStatement => format!("index {}", a.key.index),
        };
        if !a.key.session.is_none() {
            other.push_str(&format!(", session {}", a.key.session));
        }
        let ratio = ratio_text(a.ratio, a.ci);
        writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | p{} | {} | {} | {} |",
            a.key.target,
            a.key.table_rows,
            a.what.label(),
            other,
            a.key.op,
            a.key.rate,
            a.clock,
            (a.q * 100.0).round(),
            ratio,
            match a.what {
                Comparison::IndexControl => "1 (control)".to_owned(),
                claim => format!("{:.2}", claim.expected()),
            },
            a.verdict()
        )
        .unwrap();
    }
    out
}
