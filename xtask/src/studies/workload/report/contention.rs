//! The write-contention section of a workload's summary, from its records' statistics alone:
//! per target, write operation, retry policy and row rate, the share of first attempts refused
//! by class, the share that finally succeeded, goodput in rows per second, attempts per write,
//! and latency including the retries (from when the first attempt was due); and which of these
//! numbers can show refusals on the target they were measured on.

use std::fmt::Write as _;

use super::load_stats::{Key, OpStats};
use crate::base::TargetKind;
use crate::stats::batch_means::{SignTest, fewest_untied_for, sign_test};
use crate::stats::sessions::{FALSE_DISCOVERY_RATE, benjamini_hochberg};
use crate::stats::{CONFIDENCE, Share};
use crate::studies::workload::RetryKind;

/// A retry policy against none, block by block: over the time blocks of every point where the
/// arm without retries had a write refused, in how many blocks it left the larger share of
/// writes unacknowledged, in how many the smaller, and whether that differs at the run's false
/// discovery rate.
#[derive(Debug, Clone, PartialEq)]
pub struct PolicyTest {
    pub target: TargetKind,
    pub op: d1bench_core::workload::Operation,
    pub retry: RetryKind,
    pub test: SignTest,
    pub differs: bool,
}

/// What a policy's sign test says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PolicyVerdict {
    /// Kept by Benjamini–Hochberg.
    Differs,
    /// Not kept, though its untied blocks could have given p < 5%.
    NoDifferenceShown,
    /// Too few untied blocks for p < 5% to be possible: silence says nothing.
    CannotTell,
}

impl PolicyTest {
    pub fn verdict(&self) -> PolicyVerdict {
        match () {
            _ if self.differs => PolicyVerdict::Differs,
            _ if self.test.could_reject(FALSE_DISCOVERY_RATE) => PolicyVerdict::NoDifferenceShown,
            _ => PolicyVerdict::CannotTell,
        }
    }
}

impl PolicyVerdict {
    pub fn text(self) -> &'static str {
        match self {
            PolicyVerdict::Differs => "yes",
            PolicyVerdict::NoDifferenceShown => "no",
            PolicyVerdict::CannotTell => "cannot tell",
        }
    }
}

/// Every retry policy against none, for each target and write operation whose writes were
/// refused: a sign test over time blocks (refusals come in bursts, while a lock is held, so a
/// block is one piece of evidence), the verdicts held to a false discovery rate together
/// (Benjamini–Hochberg).
pub fn policy_tests(stats: &[OpStats]) -> Vec<PolicyTest> {
    let mut tests = Vec::new();
    for none in stats
        .iter()
        .filter(|s| s.key.op.writes() && s.key.retry == RetryKind::None)
    {
        let refused = none.blocks.iter().any(|b| b.first_refused > 0);
        for other in stats.iter().filter(|s| {
            refused
                && s.key.retry != RetryKind::None
                && s.key
                    == Key {
                        retry: s.key.retry,
                        ..none.key
                    }
        }) {
            let pairs: Vec<(f64, f64)> = none
                .blocks
                .iter()
                .zip(&other.blocks)
                .filter_map(|(a, b)| a.unacknowledged_share().zip(b.unacknowledged_share()))
                .collect();
            match tests.iter_mut().find(
                |(t, o, r, _): &&mut (TargetKind, _, RetryKind, Vec<(f64, f64)>)| {
                    *t == none.key.target && *o == none.key.op && *r == other.key.retry
                },
            ) {
                Some((_, _, _, all)) => all.extend(pairs),
                None => tests.push((none.key.target, none.key.op, other.key.retry, pairs)),
            }
        }
    }
    let tested: Vec<(
        TargetKind,
        d1bench_core::workload::Operation,
        RetryKind,
        SignTest,
    )> = tests
        .into_iter()
        .map(|(t, o, r, pairs)| (t, o, r, sign_test(&pairs)))
        .collect();
    let p_values: Vec<Option<f64>> = tested.iter().map(|x| Some(x.3.p_value)).collect();
    tested
        .into_iter()
        .zip(benjamini_hochberg(&p_values, FALSE_DISCOVERY_RATE))
        .map(|((target, op, retry, test), differs)| PolicyTest {
            target,
            op,
            retry,
            test,
            differs,
        })
        .collect()
}

/// `busy 3.2% (2.6–3.9%), overloaded 0.4% (0.2–0.8%)`, or `none`: each share with its Wilson
/// interval at 95% (which counts the writes as independent).
fn shares(classes: &[(impl std::fmt::Display, usize)], failed: usize, n: usize) -> String {
    let pct = |k: usize| match Share::of(k, n) {
        Some(share) => format!(
            "{:.1}% ({:.1}–{:.1}%)",
            100.0 * share.ratio(),
            100.0 * share.low,
            100.0 * share.high
        ),
        None => "-".into(),
    };
    let mut parts: Vec<String> = classes
        .iter()
        .map(|(k, c)| format!("{k} {}", pct(*c)))
        .collect();
    if failed > 0 {
        parts.push(format!("no answer {}", pct(failed)));
    }
    if parts.is_empty() {
        "none".into()
    } else {
        parts.join(", ")
    }
}

fn ms(s: &OpStats, q: f64) -> String {
    s.latencies
        .percentile(q, CONFIDENCE)
        .map_or("-".into(), |p| format!("{:.1}", p.ms))
}

/// What a target's refusals can say: local D1 queues concurrent writes behind one writer
/// instead of refusing them; in-process SQLite refuses them as SQLite's single writer does.
fn what_it_shows(target: TargetKind) -> &'static str {
    match target {
        TargetKind::Remote => {
            "Cloudflare's D1: its refusals (busy/locked, `D1 DB is overloaded`, time-outs) are the \
             production answer, and these are the shares to compare with the write-up's 3.2%."
        }
        TargetKind::Local => {
            "workerd's local D1: one SQLite database that queues concurrent writes instead of \
             refusing them, so no refusal here is evidence about Cloudflare; what grows with the \
             rate is latency and the gap between rows offered and rows written. Refusal shares \
             come from runs with `--target remote` only."
        }
        TargetKind::Do | TargetKind::RemoteDo => {
            "a Durable Object's SQLite storage, which runs one request at a time: workloads are \
             not measured there (the `do` and `remote-do` targets run sweeps and ladders)."
        }
        TargetKind::Hyperdrive | TargetKind::RemoteHyperdrive => {
            "PostgreSQL through a Hyperdrive binding: workloads are not measured there (the \
             `hyperdrive` and `remote-hyperdrive` targets run sweeps)."
        }
        TargetKind::Sqlite => {
            "in-process SQLite with its own single writer: one WAL file, a connection per \
             request in flight, none waiting for a lock, so a write that finds the lock held is \
             refused with SQLITE_BUSY (`database is locked`), as in the write-up; what the retry \
             policies do with such refusals is measured here (not Cloudflare's own refusals)."
        }
    }
}

/// The section, or nothing when the run wrote nothing.
pub fn section(stats: &[OpStats]) -> String {
    let writes: Vec<&OpStats> = stats.iter().filter(|s| s.key.op.writes()).collect();
    if writes.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "\n## Write contention and retries\n\nEach write was due on the timetable at the rate \
         shown; a refused attempt of a class its policy retries (what D1 says to retry, no \
         answer, and the classes the policy opts in to with `also-retry`, in run.toml; a \
         policy recorded before `also-retry` existed retried busy, overloaded and a D1 \
         time-out) was sent again by the load generator as a new request, after the policy's \
         wait. `refused at first attempt`: what a client without retries saw, by class. \
         `succeeded`: the share whose last attempt was acknowledged. `goodput`: rows written \
         by acknowledged writes per second. Latency runs from when the first attempt was due to \
         the last answer, the waits and retries included (no coordinated omission).\n\n",
    );
    let mut targets: Vec<TargetKind> = writes.iter().map(|s| s.key.target).collect();
    targets.dedup();
    for t in &targets {
        writeln!(out, "- On `{t}`, {}", what_it_shows(*t)).unwrap();
    }
    let exercised = |t: TargetKind| {
        writes
            .iter()
            .filter(|s| s.key.target == t)
            .any(|s| !s.first_refused.is_empty() || s.first_failed > 0)
    };
    let policies = |t: TargetKind| {
        let mut seen = Vec::new();
        for s in writes.iter().filter(|s| s.key.target == t) {
            if !seen.contains(&s.key.retry) {
                seen.push(s.key.retry);
            }
        }
        seen.len()
    };
    for t in &targets {
        if policies(*t) > 1 && !exercised(*t) {
            writeln!(
                out,
                "\n**The retry policies were not exercised on `{t}`**: no attempt of any write \
                 was refused or went unanswered there, so every policy sent each write once and \
                 their columns would repeat one workload, and are left out (its writes' latency \
                 and capacity are in the tables above)."
            )
            .unwrap();
        }
    }
    let shown: Vec<&&OpStats> = writes
        .iter()
        .filter(|s| exercised(s.key.target) || policies(s.key.target) < 2)
        .collect();
    if !shown.is_empty() {
        out.push_str(
            "\n| target | operation | rows/request | retry | rows/s offered | n | refused at first attempt (95% interval) | succeeded | refused at last | goodput rows/s | attempts/write mean (max) | p50 ms | p99 ms |\n\
             | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n",
        );
    }
    for s in shown {
        writeln!(
            out,
            "| {} | {} | {} | {} | {:.0} | {} | {} | {:.1}% | {} | {:.1} | {:.2} ({}) | {} | {} |",
            s.key.target,
            s.key.op,
            s.op_rows,
            s.key.retry,
            s.offered_rows_per_s,
            s.n,
            shares(&s.first_refused, s.first_failed, s.n),
            100.0 * s.ok as f64 / s.n.max(1) as f64,
            shares(&s.refused, s.target_failed, s.n),
            s.goodput_rows_per_s,
            s.attempts_mean,
            s.attempts_max,
            ms(s, 0.5),
            ms(s, 0.99),
        )
        .unwrap();
    }
    let tests = policy_tests(stats);
    if !tests.is_empty() {
        writeln!(
            out,
            "\nEach retry policy against none, time block by time block (each point's measured \
             span cut in {} blocks; the points where a write without retry was refused): blocks \
             where no retry left the larger share of writes unacknowledged, the smaller, and a \
             sign test. Refusals come in bursts while the lock is held, so the Wilson intervals \
             above, which count every write as independent, are too narrow; a block counts once \
             whatever happened in it. `differs`: kept by Benjamini–Hochberg at a {:.0}% false \
             discovery rate over these {} tests. Tied blocks (most, where no lock was held) do \
             not count, and the test is weak: p < {:.0}% is possible only with {} untied blocks \
             or more (all on one side), so a test with fewer says `cannot tell`, not `no`, and \
             over {} blocks with bursts in a few of them that many are rare (the power check \
             in stats/batch_means.rs: 3.6% of A/A tests reach 6, a doubling was caught 0.7% \
             of the time); a `no` is no evidence that the policies are alike.\n\n\
             | target | operation | policy | blocks: no retry left more unacknowledged | fewer | untied (p < {:.0}% needs {}) | sign test p | differs |\n\
             | --- | --- | --- | --- | --- | --- | --- | --- |",
            crate::stats::batch_means::BLOCKS,
            FALSE_DISCOVERY_RATE * 100.0,
            tests.len(),
            FALSE_DISCOVERY_RATE * 100.0,
            fewest_untied_for(FALSE_DISCOVERY_RATE),
            crate::stats::batch_means::BLOCKS,
            FALSE_DISCOVERY_RATE * 100.0,
            fewest_untied_for(FALSE_DISCOVERY_RATE),
        )
        .unwrap();
        for t in &tests {
            writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {:.2e} | {} |",
                t.target,
                t.op,
                t.retry,
                t.test.larger,
                t.test.smaller,
                t.test.untied(),
                t.test.p_value,
                t.verdict().text()
            )
            .unwrap();
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn test(larger: usize, smaller: usize, differs: bool) -> PolicyTest {
        let mut pairs = vec![(2.0, 1.0); larger];
        pairs.extend(vec![(1.0, 2.0); smaller]);
        pairs.extend(vec![(0.0, 0.0); 10 - larger - smaller]);
        PolicyTest {
            target: TargetKind::Sqlite,
            op: d1bench_core::workload::Operation::Write,
            retry: RetryKind::Exponential,
            test: sign_test(&pairs),
            differs,
        }
    }

    #[test]
    fn a_sign_test_that_could_not_have_rejected_cannot_tell() {
        // 5 untied blocks all one way: p = 0.0625, never below 5%.
        assert_eq!(test(5, 0, false).verdict(), PolicyVerdict::CannotTell);
        assert_eq!(
            test(4, 3, false).verdict(),
            PolicyVerdict::NoDifferenceShown
        );
        assert_eq!(test(6, 0, true).verdict(), PolicyVerdict::Differs);
    }
}
