//! A sweep resumed: the probes results.csv holds (by target and probe id, warm-ups too), each
//! checked against the plan made again, are skipped with the warm-ups of the points whose probes
//! are all recorded; a profile that repeats until a precision cannot be resumed. Every probe is
//! recorded once: a session resumed after its warm-ups were recorded goes on without them, and
//! its summary's check of the first measured probes shows whether that mattered.

use std::collections::{BTreeSet, HashMap};

use anyhow::{Result, bail};

use super::PlannedProbe;
use super::schedule::SweepPlan;
use crate::base::TargetKind;
use crate::records::csv;
use crate::records::{RunDir, Totals};
use crate::studies::sweep::row::ProbeRow;

/// The probes the run in `run_dir` recorded on `targets`, each checked against `plan` (the
/// probe of its id, with the same parameters).
pub fn recorded(
    plan: &SweepPlan,
    run_dir: &RunDir,
    profile: &str,
    targets: &[TargetKind],
) -> Result<BTreeSet<(TargetKind, u64)>> {
    let mut recorded = BTreeSet::new();
    let results = run_dir.results_csv();
    if let Some(until) = plan.until {
        bail!(
            "{}: the run's profile `{}` repeats its points until a precision ({} of the \
             median, at most {} repeats): which probes it sends, and so their ids, depend \
             on the times measured, so the probes recorded cannot be matched to a plan \
             made again; start a new run",
            run_dir.run_toml().display(),
            profile,
            until.precision,
            until.max_repeats
        );
    }
    if !results.exists() {
        return Ok(recorded);
    }
    let probes = plan.probes();
    let planned: HashMap<u64, &PlannedProbe> =
        probes.iter().map(|p| (p.request.probe_id, p)).collect();
    for (i, row) in csv::read::<ProbeRow>(&results)?.iter().enumerate() {
        let at = format!("{}:{}", results.display(), i + 2);
        if !targets.contains(&row.target) {
            bail!(
                "{at}: a probe on {}, which this run does not measure",
                row.target
            );
        }
        let Some(probe) = planned.get(&row.probe_id) else {
            bail!(
                "{at}: probe {} is not a measured probe of the run's plan made again: \
                 results.csv is not this plan's",
                row.probe_id
            );
        };
        let (theirs, ours) = (recorded_point(row), planned_point(probe));
        if theirs != ours {
            bail!(
                "{at}: probe {} is {theirs} in results.csv, but {ours} in the run's plan \
                 made again: results.csv is not this plan's",
                row.probe_id
            );
        }
        recorded.insert((row.target, row.probe_id));
    }
    Ok(recorded)
}

/// The totals of every probe in results.csv.
pub fn recorded_totals(run_dir: &RunDir) -> Result<Totals> {
    let mut totals = Totals::default();
    for row in csv::read::<ProbeRow>(&run_dir.results_csv())? {
        row.tally(&mut totals);
    }
    Ok(totals)
}

/// A recorded probe's place in the plan: series, repeat and parameters.
fn recorded_point(row: &ProbeRow) -> String {
    format!(
        "{}session {} series {} repeat {} {} columns {} row-bytes {} rows {} escape-share {} \
         non-ascii-share {} indexes {} seed {}",
        if row.warmup { "warm-up " } else { "" },
        row.session,
        row.series + 1,
        row.repeat,
        row.strategy,
        row.columns,
        row.row_bytes,
        row.rows,
        row.escape_share,
        row.non_ascii_share,
        row.indexes,
        row.seed
    )
}

fn planned_point(probe: &PlannedProbe) -> String {
    let p = &probe.request;
    format!(
        "{}session {} series {} repeat {} {} columns {} row-bytes {} rows {} escape-share {} \
         non-ascii-share {} indexes {} seed {}",
        if probe.warmup { "warm-up " } else { "" },
        probe.session,
        probe.series + 1,
        probe.repeat,
        p.strategy,
        p.columns,
        p.row_bytes,
        p.rows,
        p.text.escape_share,
        p.text.non_ascii_share,
        p.indexes,
        p.seed
    )
}
