//! A sweep on a session: every probe set up, written (timed), verified and reconciled in
//! invocations of their own, and appended to `results.csv` as it lands (warm-ups are reconciled,
//! not recorded).

use anyhow::{Result, bail};
use d1bench_core::sql;

use super::progress::Progress;
use crate::procs;
use crate::records::csv::Appender;
use crate::records::reconcile::{self, ContentCheck, Totals};
use crate::records::{ResultRow, RunDir};
use crate::studies::sweep::PlannedProbe;
use crate::targets::Session;

/// Sends every probe in order; a target that stops answering ends the probe as a target
/// failure, and the run carries on once it answers again or stops with why it does not.
pub fn measure(
    session: &mut dyn Session,
    experiment: &str,
    probes: &[PlannedProbe],
    run_dir: &RunDir,
) -> Result<Totals> {
    let mut writer = Appender::<ResultRow>::open(&run_dir.results_csv())?;
    let mut progress = Progress::new(
        Some(probes.len()),
        &format!("probes on {}", session.target()),
    );
    let mut totals = Totals::default();
    for (done, planned) in probes.iter().enumerate() {
        if procs::interrupted() {
            progress.finish();
            bail!("interrupted after {done} of {} probes", probes.len());
        }
        let row = measure_one(session, experiment, planned);
        if procs::interrupted() {
            // The target was stopped under this probe: its failure is the interrupt's.
            continue;
        }
        if planned.warmup {
            totals.add_warmup(&row);
        } else {
            writer.append(&row)?;
            totals.add(&row);
        }
        progress.record(&row, planned.warmup);
        if row.target_failed {
            progress.warn(&format!(
                "the target gave no answer for probe {}: {}; waiting for it to answer again",
                row.probe_id, row.error
            ));
            if let Err(why) = session.recover() {
                progress.finish();
                bail!(
                    "the target stopped answering at probe {} of {} ({why}); everything measured \
                     before it is kept in {}",
                    done + 1,
                    probes.len(),
                    run_dir.results_csv().display()
                );
            }
        }
    }
    progress.finish();
    Ok(totals)
}

/// One probe: its table set up, its rows written and timed, then verified and reconciled
/// against the host's plan and checksum.
fn measure_one(session: &mut dyn Session, experiment: &str, planned: &PlannedProbe) -> ResultRow {
    let before = session.calls_ms();
    let mut row = attempt(session, experiment, planned);
    row.label = planned.label.clone();
    row.calls_ms = session
        .calls_ms()
        .zip(before)
        .map(|(after, before)| after - before);
    row
}

fn attempt(session: &mut dyn Session, experiment: &str, planned: &PlannedProbe) -> ResultRow {
    let probe = &planned.request;
    let target = session.target();
    let (series, repeat) = (planned.series, planned.repeat);
    let failure = |outside_ms: f64, e: &str| {
        ResultRow::target_failure(experiment, target, series, repeat, probe, outside_ms, e)
    };
    let setup = match session.setup(probe) {
        Ok(setup) => setup,
        Err(e) => return failure(0.0, &e),
    };
    // A refused setup is data: nothing was written, and nothing may be there.
    let (mut row, result) = match setup.error {
        Some(error) => (
            ResultRow::refused_at_setup(experiment, target, series, repeat, probe, &error),
            None,
        ),
        None => {
            let timed = session.probe(probe);
            match timed.result {
                Err(e) => return failure(timed.outside_ms, &e),
                Ok(result) => (
                    ResultRow::measured(
                        experiment,
                        target,
                        series,
                        repeat,
                        probe,
                        &result,
                        timed.outside_ms,
                    ),
                    Some(result),
                ),
            }
        }
    };
    if !session.has_d1_clock() {
        row.d1_ms = None;
    }
    let verified = match session.verify(probe) {
        Ok(verified) => Ok(verified),
        Err(e) => {
            let mut lost = failure(row.outside_ms, &format!("the verification failed: {e}"));
            lost.outcome = row.outcome;
            lost.refusal = row.refusal;
            return lost;
        }
    };
    row.rows_present = verified.as_ref().map_or(0, |v| v.rows_present);
    let must_remain = result
        .as_ref()
        .map_or(0, |r| reconcile::rows_that_must_remain(probe, r));
    let content = ContentCheck::of(probe, must_remain, &verified);
    row.checksum_expected = content.expected.to_string();
    row.checksum_present = content
        .present
        .as_ref()
        .map(ToString::to_string)
        .unwrap_or_default();
    row.checksum_equal = content.equal();
    let plan_check = match &result {
        Some(result) => reconcile::check(probe, &sql::plan(probe), result, row.rows_present).err(),
        None => (row.rows_present != 0).then(|| {
            format!(
                "rows present: expected 0 after a refused setup, found {}",
                row.rows_present
            )
        }),
    };
    let problems: Vec<String> = plan_check.into_iter().chain(content.problem()).collect();
    row.reconciled = problems.is_empty();
    row.reconcile_note = problems.join("; ");
    row
}
