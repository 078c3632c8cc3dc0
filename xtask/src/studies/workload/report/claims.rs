//! The write-up's read-path claims against a workload run: covering ÷ key index (claimed −40%,
//! a ratio of 0.60) on the aggregate, the one read the index serves, and reused ÷ per-call
//! prepared statements (claimed −15%, 0.85) on every read; each the ratio of two percentiles on
//! two clocks, and a [`Verdict`] from where its interval lies. Covering ÷ key on the reads by
//! primary key, which neither index serves, is the control: expected 1.
//!
//! Arms that shared a point (interleaved at random) are compared over the point's time blocks
//! ([`batch_means`]: the block is the unit of the interval, which then allows for queueing and
//! drift), and whether a ratio differs from 1 at all is held to a false discovery rate of 5%
//! over every such comparison of the run (Benjamini–Hochberg); a comparison at a saturated
//! point gets no verdict on latency. Runs from before arms shared points (each arm its own point,
//! minutes apart) keep the ratio of two independent order-statistic intervals
//! ([`percentile_ratio`]) and their verdicts as they were.

use std::fmt::Write as _;

use d1bench_core::workload::{IndexKind, Operation, Preparation};

use super::load_stats::{Block, Key, OpStats};
use crate::stats::latencies::percentile_ratio;
use crate::stats::power::Equivalence;
use crate::stats::sessions::{FALSE_DISCOVERY_RATE, benjamini_hochberg};
use crate::stats::{CONFIDENCE, Interval, batch_means, nearest_rank};

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

/// Whether the two arms compared shared their points.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Design {
    /// In one point, each request's arm drawn at random: compared over time blocks.
    Interleaved,
    /// Each arm its own point (runs before arms shared points): compared as independent.
    Apart,
}

/// What a comparison says of its claim (or, for the control, of drift).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    TooFew,
    /// The point saturated the target: latency there measures a queue, not the reads.
    Saturated,
    ControlHolds,
    ControlFaster,
    ControlSlower,
    HoldsLarger,
    Holds,
    CannotTell,
    Smaller,
    NoSaving,
    Slower,
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Verdict::TooFew => "too few requests for an interval",
            Verdict::Saturated => {
                "no verdict: the point saturated the target (its capacity is in the summary)"
            }
            Verdict::ControlHolds => "as expected: no difference (neither index serves this read)",
            Verdict::ControlFaster => {
                "differs: faster with the covering index, which this read does not use \
                 (drift between the two settings' runs)"
            }
            Verdict::ControlSlower => {
                "differs: slower with the covering index, which this read does not use \
                 (drift between the two settings' runs)"
            }
            Verdict::HoldsLarger => "holds, and the saving is larger than claimed",
            Verdict::Holds => "holds (the interval covers the claimed ratio, and not 1)",
            Verdict::CannotTell => "cannot tell (the interval covers both the claim and no change)",
            Verdict::Smaller => "does not hold: a smaller saving than claimed",
            Verdict::NoSaving => "does not hold: no saving detectable",
            Verdict::Slower => "does not hold: slower",
        })
    }
}

/// What of each arm's requests a comparison divides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Statistic {
    /// The percentile `q` (of the point, or of each time block).
    Percentile,
    /// The mean of each time block: the inside clock reads whole milliseconds, so a block's
    /// median can only move in whole steps (7 ÷ 6 = 1.17 for a difference of a fraction of a
    /// millisecond), while the mean of readings taken at every phase of the clock's tick
    /// resolves fractions of it.
    Mean,
}

/// One comparison of the read path against a claim of the write-up, or the control.
pub struct Answer {
    pub key: Key,
    pub what: Comparison,
    pub clock: Clock,
    /// The percentile compared (0.5 also for a comparison of means: the centre).
    pub q: f64,
    pub statistic: Statistic,
    pub ratio: f64,
    pub ci: Option<Interval>,
    pub design: Design,
    /// Two-sided p-value of "no difference" (interleaved arms only).
    pub p_value: Option<f64>,
    /// Whether the ratio differs from 1 after the run's multiplicity correction (interleaved
    /// arms; for arms apart, whether the interval excludes 1).
    pub differs: bool,
    /// Whether the point saturated the target (interleaved arms on the latency clock).
    pub saturated: bool,
    /// What two one-sided tests show of the ratio's equivalence to 1 (interleaved arms: the 90%
    /// interval over blocks against ±5% and ±10%).
    pub equivalence: Option<Equivalence>,
}

impl Answer {
    /// The verdict, and where it says "no difference", what two one-sided tests show of it:
    /// not differing from 1 is no evidence of being 1 unless the interval is narrow enough.
    pub fn finding(&self) -> String {
        let verdict = self.verdict();
        match (verdict, self.equivalence) {
            (Verdict::NoSaving | Verdict::ControlHolds, Some(Equivalence::NotShown)) => {
                format!("{verdict}; not shown equivalent to 1 within ±10% (two one-sided tests)")
            }
            (Verdict::NoSaving | Verdict::ControlHolds, Some(e)) => {
                format!(
                    "{verdict}; equivalent to 1 {} (two one-sided tests)",
                    e.text()
                )
            }
            _ => verdict.to_string(),
        }
    }

    /// Whether the claim holds here (for the control: whether it found no difference), from
    /// where the interval lies and whether the ratio differs from 1 at all.
    pub fn verdict(&self) -> Verdict {
        if self.saturated {
            return Verdict::Saturated;
        }
        let Some(ci) = self.ci else {
            return Verdict::TooFew;
        };
        if self.what == Comparison::IndexControl {
            return if !self.differs {
                Verdict::ControlHolds
            } else if self.ratio < 1.0 {
                Verdict::ControlFaster
            } else {
                Verdict::ControlSlower
            };
        }
        let c = self.what.expected();
        if !self.differs {
            return if ci.low <= c {
                Verdict::CannotTell
            } else {
                Verdict::NoSaving
            };
        }
        if ci.high < c {
            Verdict::HoldsLarger
        } else if ci.low <= c && ci.high < 1.0 {
            Verdict::Holds
        } else if ci.low <= c {
            Verdict::CannotTell
        } else if ci.high < 1.0 {
            Verdict::Smaller
        } else if ci.low <= 1.0 {
            Verdict::NoSaving
        } else {
            Verdict::Slower
        }
    }
}

/// The nearest-rank `q` percentile (or the mean) of each block's values of `of`, for two arms
/// block by block.
fn block_pairs(
    mine: &[Block],
    theirs: &[Block],
    of: fn(&Block) -> &Vec<f64>,
    q: f64,
    statistic: Statistic,
) -> Vec<Option<(f64, f64)>> {
    // Enough requests in a block that its percentile is one of them, not the extreme.
    let least = (2.0 / (1.0 - q)).ceil() as usize;
    let at = |values: &Vec<f64>| -> Option<f64> {
        (values.len() >= least.max(5)).then(|| match statistic {
            Statistic::Mean => values.iter().sum::<f64>() / values.len() as f64,
            Statistic::Percentile => {
                let mut v = values.clone();
                v.sort_by(f64::total_cmp);
                v[nearest_rank(v.len(), q) - 1]
            }
        })
    };
    mine.iter()
        .zip(theirs)
        .map(|(a, b)| at(of(a)).zip(at(of(b))))
        .collect()
}

/// Covering ÷ key index (claimed 0.60, for the aggregate, the one read the index serves; the
/// control on the other reads) and reuse ÷ per-call (claimed 0.85, for every read) at p50 and
/// p95, at every point measured both ways; the interleaved ones' differences from 1 held to the
/// run's false discovery rate together.
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
            let latency: fn(&Block) -> &Vec<f64> = |b| &b.latency;
            let inside: fn(&Block) -> &Vec<f64> = |b| &b.inside;
            for (clock, mine, theirs, of, q, statistic) in [
                (
                    Clock::Latency,
                    &s.latencies,
                    &base.latencies,
                    latency,
                    0.5,
                    Statistic::Percentile,
                ),
                (
                    Clock::Latency,
                    &s.latencies,
                    &base.latencies,
                    latency,
                    0.95,
                    Statistic::Percentile,
                ),
                (
                    Clock::Inside,
                    &s.inside,
                    &base.inside,
                    inside,
                    0.5,
                    Statistic::Mean,
                ),
            ] {
                let Some((whole, apart_ci)) = percentile_ratio(mine, theirs, q) else {
                    continue;
                };
                let answer = if s.point == base.point {
                    let pairs = block_pairs(&s.blocks, &base.blocks, of, q, statistic);
                    let blocks = batch_means::ratio_over_blocks(&pairs, CONFIDENCE);
                    // Two one-sided tests at 5% each: the 90% interval over the same blocks.
                    let equivalence =
                        batch_means::ratio_over_blocks(&pairs, 1.0 - 2.0 * FALSE_DISCOVERY_RATE)
                            .map(|b| Equivalence::of_interval(b.interval));
                    Answer {
                        key: s.key,
                        what,
                        clock,
                        q,
                        // A ratio of means needs its blocks: without them, the percentiles'.
                        statistic: if blocks.is_some() {
                            statistic
                        } else {
                            Statistic::Percentile
                        },
                        ratio: blocks.map_or(whole, |b| b.ratio),
                        ci: blocks.map(|b| b.interval),
                        design: Design::Interleaved,
                        p_value: blocks.map(|b| b.p_value),
                        differs: false,
                        saturated: clock == Clock::Latency && s.load.is_saturated(),
                        equivalence,
                    }
                } else {
                    Answer {
                        key: s.key,
                        what,
                        clock,
                        q,
                        statistic: Statistic::Percentile,
                        ratio: whole,
                        ci: apart_ci,
                        design: Design::Apart,
                        p_value: None,
                        differs: apart_ci.is_some_and(|ci| !(ci.low <= 1.0 && 1.0 <= ci.high)),
                        saturated: false,
                        equivalence: None,
                    }
                };
                out.push(answer);
            }
        }
    }
    // Benjamini–Hochberg over the run's interleaved comparisons that get a verdict.
    let p_values: Vec<Option<f64>> = out
        .iter()
        .map(|a| a.p_value.filter(|_| !a.saturated))
        .collect();
    for (a, called) in out
        .iter_mut()
        .zip(benjamini_hochberg(&p_values, FALSE_DISCOVERY_RATE))
    {
        if a.design == Design::Interleaved {
            a.differs = called;
        }
    }
    out
}

/// The control's ratios (p50 latency, below saturation): how many, their range, how many of
/// their intervals cover 1, and the standard deviation of their logs against the one their
/// intervals imply (a spread far above it says the intervals are too narrow).
pub fn control_spread(answers: &[Answer]) -> Option<String> {
    let control: Vec<&Answer> = answers
        .iter()
        .filter(|a| a.what == Comparison::IndexControl && a.clock == Clock::Latency && a.q == 0.5)
        .filter(|a| !a.saturated)
        .collect();
    if control.is_empty() {
        return None;
    }
    let logs: Vec<f64> = control.iter().map(|a| a.ratio.ln()).collect();
    let n = logs.len() as f64;
    let mean = logs.iter().sum::<f64>() / n;
    let sd = if logs.len() > 1 {
        (logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
    } else {
        0.0
    };
    let with_ci: Vec<Interval> = control.iter().filter_map(|a| a.ci).collect();
    let covering = with_ci
        .iter()
        .filter(|ci| ci.low <= 1.0 && 1.0 <= ci.high)
        .count();
    // A 95% interval spans about ±1.96 standard errors of the log ratio.
    let implied = with_ci
        .iter()
        .map(|ci| (ci.high.ln() - ci.low.ln()) / (2.0 * 1.96))
        .sum::<f64>()
        / with_ci.len().max(1) as f64;
    let lowest = control
        .iter()
        .map(|a| a.ratio)
        .fold(f64::INFINITY, f64::min);
    let highest = control.iter().map(|a| a.ratio).fold(0.0, f64::max);
    Some(format!(
        "The control (covering ÷ key on reads neither index serves, p50 latency, below \
         saturation): {} ratios from {lowest:.3} to {highest:.3}; {covering} of {} intervals \
         cover 1; the standard deviation of their logs is {sd:.3} against {implied:.3} implied \
         by the intervals.",
        control.len(),
        with_ci.len()
    ))
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
        "| target | rows | compared | other setting | operation | rate/s | clock | statistic | ratio (interval, coverage ≥) | claimed (or expected) | verdict |\n\
         | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n",
    );
    let interleaved = answers.iter().any(|a| a.design == Design::Interleaved);
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
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            a.key.target,
            a.key.table_rows,
            a.what.label(),
            other,
            a.key.op,
            a.key.rate,
            a.clock,
            match a.statistic {
                Statistic::Mean => "mean".to_owned(),
                Statistic::Percentile => format!("p{}", (a.q * 100.0).round()),
            },
            ratio,
            match a.what {
                Comparison::IndexControl => "1 (control)".to_owned(),
                claim => format!("{:.2}", claim.expected()),
            },
            a.finding()
        )
        .unwrap();
    }
    if interleaved {
        let tested = answers
            .iter()
            .filter(|a| a.p_value.is_some() && !a.saturated)
            .count();
        writeln!(
            out,
            "\nArms that shared a point: each ratio is the geometric mean of the point's {} time \
             blocks' ratios, its interval Student's t over their logs (batch means: the block is \
             the unit, so queueing and drift widen it; on the inside clock, which reads whole \
             milliseconds, each block's mean, which resolves fractions of a tick where a median \
             cannot); a ratio counts as differing from 1 only \
             if Benjamini–Hochberg keeps it at a false discovery rate of {:.0}% over the run's {} \
             such comparisons. Where a verdict says no difference, two one-sided tests (the 90% \
             interval over the same blocks) say whether the ratio is shown equivalent to 1 within \
             ±5% or ±10%.",
            batch_means::BLOCKS,
            FALSE_DISCOVERY_RATE * 100.0,
            tested
        )
        .unwrap();
    }
    out
}
