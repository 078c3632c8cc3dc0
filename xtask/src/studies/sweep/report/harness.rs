//! What a sweep's probes cost the harness around their timed request, part by part, as the
//! records show it: the setup's invocation, the timed request, the verification's invocation,
//! and the rest of each probe's turn (the host's own bookkeeping: reconciling, writing the row,
//! the progress line). The instrument's own cost, shown in every summary, so a run's wall time
//! can be read back to where it went.

use std::fmt::Write as _;

use crate::base::TargetKind;
use crate::stats::median;
use crate::studies::sweep::row::ProbeRow;

/// One target's probes, part by part: milliseconds summed over its probes.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Parts {
    pub probes: usize,
    pub setup_ms: f64,
    pub request_ms: f64,
    pub verify_ms: f64,
    /// From one probe's start to the next one's in its session, less the three parts above.
    pub rest_ms: f64,
    /// The median per probe of setup plus verification, ms.
    pub median_around_ms: f64,
}

impl Parts {
    fn total(&self) -> f64 {
        self.setup_ms + self.request_ms + self.verify_ms + self.rest_ms
    }
}

/// The parts of `target`'s probes in `rows` (warm-ups included: they took the time too), from
/// the probes that recorded them; `None` when none did (a results.csv written before
/// 2026-12-03). A session's last probe has no next start, so its rest counts as nothing.
pub fn parts(rows: &[ProbeRow], target: TargetKind) -> Option<Parts> {
    let mut ours: Vec<&ProbeRow> = rows
        .iter()
        .filter(|r| r.target == target && r.setup_ms.is_some() && r.started_ms.is_some())
        .collect();
    if ours.is_empty() {
        return None;
    }
    ours.sort_by(|a, b| {
        (a.session, a.started_ms)
            .partial_cmp(&(b.session, b.started_ms))
            .expect("start times are finite")
    });
    let mut parts = Parts::default();
    let mut around = Vec::new();
    for (i, row) in ours.iter().enumerate() {
        let setup = row.setup_ms.unwrap_or_default();
        let verify = row.verify_ms.unwrap_or_default();
        parts.probes += 1;
        parts.setup_ms += setup;
        parts.request_ms += row.outside_ms;
        parts.verify_ms += verify;
        around.push(setup + verify);
        if let Some(next) = ours.get(i + 1).filter(|n| n.session == row.session) {
            let turn = next.started_ms.unwrap_or_default() - row.started_ms.unwrap_or_default();
            parts.rest_ms += (turn - setup - row.outside_ms - verify).max(0.0);
        }
    }
    parts.median_around_ms = median(&around).unwrap_or_default();
    Some(parts)
}

/// summary.md's paragraph on the harness's own cost, target by target; empty when no probe
/// recorded its parts.
pub fn paragraph(rows: &[ProbeRow]) -> String {
    let mut targets: Vec<TargetKind> = rows.iter().map(|r| r.target).collect();
    targets.sort();
    targets.dedup();
    let lines: Vec<String> = targets
        .into_iter()
        .filter_map(|target| {
            let p = parts(rows, target)?;
            let share = |ms: f64| 100.0 * ms / p.total();
            Some(format!(
                "- `{target}`: {} probes in {:.0} s: the timed request {:.0}%, setup {:.0}%, \
                 verification (count, checksum, drop) {:.0}%, the host's own work between probes \
                 {:.0}%; setup and verification took {:.0} ms a probe (median)",
                p.probes,
                p.total() / 1000.0,
                share(p.request_ms),
                share(p.setup_ms),
                share(p.verify_ms),
                share(p.rest_ms),
                p.median_around_ms
            ))
        })
        .collect();
    if lines.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "The harness's own cost: where the probes' time went, from each probe's start to the \
         next one's (the timed request on the outside clock; setup and verification are \
         invocations of their own, timed by the host, outside both clocks):\n\n",
    );
    for line in lines {
        writeln!(out, "{line}").unwrap();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::studies::sweep::row::tests_support::row;

    fn probe(session: usize, started_ms: f64, request: f64) -> ProbeRow {
        ProbeRow {
            target: TargetKind::Local,
            session,
            started_ms: Some(started_ms),
            outside_ms: request,
            setup_ms: Some(2.0),
            verify_ms: Some(30.0),
            ..row()
        }
    }

    #[test]
    fn the_parts_add_up_to_each_turn_and_a_sessions_last_probe_has_no_rest() {
        // Session 0: turns of 100 and 150 ms; session 1 starts anew.
        let rows = vec![
            probe(0, 0.0, 50.0),
            probe(0, 100.0, 60.0),
            probe(0, 250.0, 40.0),
            probe(1, 10_000.0, 50.0),
        ];
        let p = parts(&rows, TargetKind::Local).unwrap();
        assert_eq!(p.probes, 4);
        assert_eq!(p.setup_ms, 8.0);
        assert_eq!(p.verify_ms, 120.0);
        assert_eq!(p.request_ms, 200.0);
        // (100 - 82) + (150 - 92), and nothing after each session's last probe.
        assert_eq!(p.rest_ms, 18.0 + 58.0);
        assert_eq!(p.median_around_ms, 32.0);
        assert!(paragraph(&rows).contains("- `local`: 4 probes"));
    }

    #[test]
    fn a_results_file_without_the_parts_says_nothing() {
        let old = ProbeRow {
            setup_ms: None,
            ..probe(0, 0.0, 1.0)
        };
        assert_eq!(parts(std::slice::from_ref(&old), TargetKind::Local), None);
        assert_eq!(paragraph(&[old]), "");
    }
}
