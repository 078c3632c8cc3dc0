//! The binding-vs-REST section of a workload's summary, from its records alone: per target,
//! write operation and retry policy, the measured writes of each path (the Worker's D1 binding,
//! D1's REST API) with their first-attempt refusals by class and the share acknowledged in the
//! end, each with its Wilson interval, and the REST path's median latency against the binding's
//! as a ratio and a difference in ms (the write-up's "5–8 ms more per write"), with intervals
//! corrected for the number of comparisons in the table (Bonferroni).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use d1bench_core::RefusalKind;

use crate::base::TargetKind;
use crate::stats::CONFIDENCE;
use crate::stats::ratio::{difference_of_medians_at, ratio_of_medians_at};
use crate::stats::share::Share;
use crate::studies::workload::row::{OpRow, Phase};
use crate::studies::workload::{RetryKind, WritePath};
use d1bench_core::workload::Operation;

/// One path's measured writes of a group.
#[derive(Default)]
struct Arm {
    latencies: Vec<f64>,
    /// By class, in the order first seen.
    first_refused: Vec<(RefusalKind, usize)>,
    first_failed: usize,
    acknowledged: usize,
}

impl Arm {
    fn n(&self) -> usize {
        self.latencies.len()
    }
}

type Key = (TargetKind, Operation, RetryKind);

/// `42.0% [38.1, 46.0]`.
fn share(k: usize, n: usize) -> String {
    Share::of(k, n).map_or("-".into(), |s| {
        format!(
            "{:.1}% [{:.1}, {:.1}]",
            100.0 * s.ratio(),
            100.0 * s.low,
            100.0 * s.high
        )
    })
}

fn refusals(arm: &Arm) -> String {
    let n = arm.n();
    let mut parts: Vec<String> = arm
        .first_refused
        .iter()
        .map(|(kind, k)| format!("{kind} {}", share(*k, n)))
        .collect();
    if arm.first_failed > 0 {
        parts.push(format!("no answer {}", share(arm.first_failed, n)));
    }
    if parts.is_empty() {
        format!("none {}", share(0, n))
    } else {
        parts.join(", ")
    }
}

/// The section, or nothing when no write went through the REST API.
pub fn section(rows: &[OpRow]) -> String {
    if !rows.iter().any(|r| r.path == WritePath::Rest) {
        return String::new();
    }
    let mut groups: BTreeMap<Key, BTreeMap<WritePath, Arm>> = BTreeMap::new();
    for r in rows {
        if r.phase != Phase::Measure || !r.op.writes() {
            continue;
        }
        let arm = groups
            .entry((r.target, r.op, r.retry))
            .or_default()
            .entry(r.path)
            .or_default();
        arm.latencies.push(r.latency_ms);
        if let Some(kind) = r.first_refusal {
            match arm.first_refused.iter_mut().find(|(k, _)| *k == kind) {
                Some((_, count)) => *count += 1,
                None => arm.first_refused.push((kind, 1)),
            }
        }
        arm.first_failed += usize::from(r.first_failed);
        arm.acknowledged += usize::from(r.acknowledged());
    }
    let compared = groups.values().filter(|arms| arms.len() == 2).count();
    // Each comparison's two medians at √(1 − 5%/m): all m ratios (or differences) hold together
    // with at least 95%.
    let level = (1.0 - (1.0 - CONFIDENCE) / compared.max(1) as f64).sqrt();
    let mut out = format!(
        "\n## Binding vs REST API\n\nThe writes of each series whose `path` sends them through \
         D1's REST API (`/query`, from the load generator with the run's token), beside those \
         through the Worker's D1 binding; with `path = \"both\"` the two ways alternate in \
         randomised pairs within every point, so drift hits both alike. Measured writes only. \
         `refused at first attempt`: what a client without retries saw, by class, with 95% \
         Wilson intervals (`rate-limited` is the API's HTTP 429). `acknowledged`: the share \
         whose last attempt succeeded. Latency runs from when the write was due, retries and \
         their waits (at least what a 429's Retry-After asked) included. The ratio and the \
         difference compare the REST path's median with the binding's; their intervals hold \
         all {compared} comparisons together with at least 95% (Bonferroni: each median's \
         interval at {:.2}%).\n\n\
         | target | operation | retry | path | n | refused at first attempt | acknowledged | p50 ms | REST ÷ binding p50 | REST − binding p50 ms |\n\
         | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n",
        100.0 * level
    );
    for ((target, op, retry), arms) in &groups {
        let binding = arms.get(&WritePath::Binding);
        for (path, arm) in arms {
            let (ratio, difference) = match (path, binding) {
                (WritePath::Rest, Some(b)) => (
                    ratio_of_medians_at(&arm.latencies, &b.latencies, level).map_or(
                        "-".into(),
                        |r| match r.ci {
                            Some(ci) => format!("{:.2} [{:.2}, {:.2}]", r.value, ci.low, ci.high),
                            None => format!("{:.2}", r.value),
                        },
                    ),
                    difference_of_medians_at(&arm.latencies, &b.latencies, level).map_or(
                        "-".into(),
                        |d| match d.ci {
                            Some((low, high)) => format!("{:+.1} [{low:+.1}, {high:+.1}]", d.value),
                            None => format!("{:+.1}", d.value),
                        },
                    ),
                ),
                _ => (String::new(), String::new()),
            };
            writeln!(
                out,
                "| {target} | {op} | {retry} | {path} | {} | {} | {} | {} | {ratio} | {difference} |",
                arm.n(),
                refusals(arm),
                share(arm.acknowledged, arm.n()),
                crate::stats::median(&arm.latencies).map_or("-".into(), |m| format!("{m:.1}")),
            )
            .unwrap();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use d1bench_core::Outcome;

    fn row(path: WritePath, latency_ms: f64, refused: Option<RefusalKind>) -> OpRow {
        OpRow {
            target: TargetKind::Remote,
            op: Operation::Write,
            phase: Phase::Measure,
            latency_ms,
            path,
            first_refusal: refused,
            outcome: if refused.is_some() {
                Outcome::Refused
            } else {
                Outcome::Ok
            },
            refusal: refused,
            ..crate::studies::workload::row::tests_support::row()
        }
    }

    #[test]
    fn the_rest_path_is_compared_with_the_binding_per_policy_with_corrected_intervals() {
        let mut rows = Vec::new();
        for i in 0..200 {
            let jitter = (i % 10) as f64 / 10.0;
            rows.push(row(WritePath::Binding, 10.0 + jitter, None));
            let refused = (i % 20 == 0).then_some(RefusalKind::RateLimited);
            rows.push(row(WritePath::Rest, 16.0 + jitter, refused));
        }
        let text = section(&rows);
        assert!(text.contains("## Binding vs REST API"), "{text}");
        assert!(text.contains("all 1 comparisons"), "{text}");
        let rest = text
            .lines()
            .find(|l| l.starts_with("| remote | write | none | rest |"))
            .unwrap();
        assert!(rest.contains("| 200 | rate-limited 5.0% ["), "{rest}");
        assert!(rest.contains("| 95.0% ["), "{rest}");
        assert!(rest.contains("| 1.57 ["), "{rest}");
        assert!(rest.contains("| +6.0 ["), "{rest}");
        let binding = text
            .lines()
            .find(|l| l.starts_with("| remote | write | none | binding |"))
            .unwrap();
        assert!(binding.contains("| none 0.0% [0.0, "), "{binding}");
        // Without a REST write there is no section.
        rows.retain(|r| r.path == WritePath::Binding);
        assert_eq!(section(&rows), "");
    }
}
