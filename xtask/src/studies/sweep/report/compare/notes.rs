//! The notes `compare` puts above its table: what about the two runs, other than their
//! times, a reader must weigh (status, target, profile, machine and its load, experiment file).

use std::path::Path;

use super::{Calibration, CalibrationKind, CalibrationSource};
use crate::records::{RunRecord, RunStatus};

/// What a reader must know of the calibration the thresholds came from: a within-run one found
/// where no between-runs one matched sees none of the variance between runs; a between-runs one
/// made from these very runs judges them by their own difference.
pub(super) fn calibration(
    c: Option<&Calibration>,
    source: &CalibrationSource,
    runs: [&Path; 2],
) -> Vec<String> {
    let Some(c) = c else {
        return Vec::new();
    };
    let mut notes = Vec::new();
    match c.kind {
        CalibrationKind::WithinRun if matches!(source, CalibrationSource::Newest(_)) => notes.push(
            "no between-runs calibration of this experiment, profile, target and sessions \
                 was found (`cargo xtask calibrate --between <run-a> <run-b>` makes one), so \
                 the within-run one is used: its halves share one run's sessions and see none \
                 of the variance between runs, so its floors are too narrow for two runs"
                .to_owned(),
        ),
        CalibrationKind::BetweenRuns if c.file.parent().is_some_and(|d| runs.contains(&d)) => notes
            .push(format!(
                "the between-runs calibration `{}` sits in a run compared here: if it was made \
                 from these two runs, its floors come from this very difference, and judge it \
                 leniently; calibrate from another pair to judge this one",
                c.file.display()
            )),
        _ => {}
    }
    notes
}

/// What differs between the runs, or is wrong with one, that a reader must know.
pub(super) fn notes(a: &RunRecord, b: &RunRecord) -> Vec<String> {
    let mut notes = Vec::new();
    for (which, record) in [("a", a), ("b", b)] {
        if record.run.status != RunStatus::Complete {
            notes.push(format!(
                "run {which} is `{}`, not complete: see its run.toml before trusting its times",
                record.run.status
            ));
        }
        if record.run.debug_corrupt.is_some() {
            notes.push(format!(
                "run {which} corrupted its tables on purpose (--debug-corrupt): a test of the \
                 harness, not a measurement"
            ));
        }
    }
    if a.run.target != b.run.target {
        notes.push(format!(
            "a ran on {} and b on {}: only points of the same target are compared",
            a.run.target, b.run.target
        ));
    }
    if a.run.profile != b.run.profile {
        notes.push(format!(
            "a ran profile `{}` and b `{}`: only points with the same parameters are compared",
            a.run.profile, b.run.profile
        ));
    }
    for (which, record) in [("a", a), ("b", b)] {
        let m = &record.machine;
        if !m.loads_above_cpus().is_empty() {
            let fmt = |load: Option<f64>| load.map_or("–".to_owned(), |l| format!("{l:.2}"));
            notes.push(format!(
                "run {which} shared its machine with other work (1-minute load average {} at \
                 the start, {} at the end, on {} CPUs): its times carry that interference, so a \
                 difference from the other run may be load rather than code",
                fmt(m.load_at_start),
                fmt(m.load_at_end),
                m.cpus
            ));
        }
    }
    let (ma, mb) = (&a.machine, &b.machine);
    if (&ma.cpu, ma.cpus, &ma.os, &ma.arch) != (&mb.cpu, mb.cpus, &mb.os, &mb.arch) {
        notes.push(format!(
            "a ran on {} × {} ({} {}) and b on {} × {} ({} {}): a change of machine is \
             measured along with any change of code",
            ma.cpus, ma.cpu, ma.os, ma.arch, mb.cpus, mb.cpu, mb.os, mb.arch
        ));
    }
    let hashes = |r: &RunRecord| {
        r.studies
            .iter()
            .map(|s| s.sha256.clone())
            .collect::<Vec<_>>()
    };
    if hashes(a) != hashes(b) {
        notes.push("the experiment file differs between the runs (its SHA-256 in run.toml)".into());
    }
    notes
}
