//! A sweep's session: every probe of it, in the session's shuffled rounds, set up, written
//! (timed), verified and reconciled in invocations of their own, and appended to `results.csv`
//! as it lands with when it started and what its setup and verification cost the host (warm-ups
//! too, marked as such).

use crate::base::clock::ms_since;
use std::collections::{HashMap, HashSet};
use std::time::Instant;

use anyhow::{Result, bail};
use d1bench_core::ProbeResult;

use super::report::points::Measure;
use crate::base::orm::Sent;
use crate::procs;
use crate::records::RunDir;
use crate::records::csv::Appender;
use crate::records::expected::Expectations;
use crate::records::reconcile::{self, ContentCheck, Totals};
use crate::stats::Summary;
use crate::studies::progress::Progress;
use crate::studies::sweep::PlannedProbe;
use crate::studies::sweep::row::ProbeRow;
use crate::studies::sweep::schedule::{Method, SweepPlan};
use crate::targets::{Probes, TargetError};

/// Sends every probe of session `session` of `plan` in its order, round by round, each row
/// recording the session; with a precision, a point takes
/// rounds until its times are precise enough ([`Times::settled`]). A target that stops
/// answering ends the probe as a target failure, and the run carries on once it answers again
/// or stops with why it does not. The probes of `skip` (recorded by an earlier attempt of a
/// resumed run) are not sent; the others keep their ids. `clock` started with the attempt: each
/// row records when its probe started on it.
pub fn measure(
    session: &mut dyn Probes,
    experiment: &str,
    plan: &SweepPlan,
    session_index: usize,
    skip: &HashSet<u64>,
    run_dir: &RunDir,
    clock: Instant,
) -> Result<Totals> {
    let probes = plan.session_probes(session_index);
    let most = probes
        .iter()
        .filter(|p| !skip.contains(&p.request.probe_id))
        .count();
    let (total, of) = match plan.until {
        None => (Some(most), format!("{most}")),
        Some(_) => (None, format!("at most {most}")),
    };
    let mut writer = Appender::<ProbeRow>::open(&run_dir.results_csv())?;
    let what = if plan.sessions > 1 {
        format!(
            "probes on {}, session {} of {}",
            session.target(),
            session_index + 1,
            plan.sessions
        )
    } else {
        format!("probes on {}", session.target())
    };
    let mut progress = Progress::new(total, &what);
    let mut totals = Totals::default();
    let mut times = Times::default();
    let mut schedule = plan.schedule(session_index);
    let mut expectations = Expectations::planned_by(session.target().planner());
    let mut done = 0;
    while let Some(round) = schedule.next_round(|point| times.settled(plan, point)) {
        for planned in &round {
            if skip.contains(&planned.request.probe_id) {
                // Recorded by an earlier attempt of this run (`--resume`).
                continue;
            }
            if procs::interrupted() {
                progress.finish();
                bail!("interrupted after {done} of {of} probes");
            }
            done += 1;
            if let Some(worker) = planned.worker
                && let Err(why) = session.use_worker(worker)
            {
                progress.finish();
                bail!("probe {}: {why}", planned.request.probe_id);
            }
            let started_ms = clock.elapsed().as_secs_f64() * 1000.0;
            let mut row = measure_one(session, experiment, planned, &mut expectations);
            row.started_ms = Some(started_ms);
            row.session = planned.session;
            if procs::interrupted() {
                // The target was stopped under this probe: its failure is the interrupt's.
                continue;
            }
            row.warmup = planned.warmup;
            writer.append(&row)?;
            row.tally(&mut totals);
            if !planned.warmup {
                times.add(planned, &row);
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
                        "the target stopped answering at probe {done} of {of} ({why}); \
                         everything measured before it is kept in {}",
                        run_dir.results_csv().display()
                    );
                }
            }
        }
    }
    progress.finish();
    Ok(totals)
}

/// The times measured so far at each point, by strategy or library: what decides whether a
/// point needs another round to reach the profile's precision.
#[derive(Debug, Default)]
struct Times(HashMap<(usize, Method), Vec<f64>>);

impl Times {
    /// A measured row's time per 1,000 rows (outside clock), when it has one.
    fn add(&mut self, planned: &PlannedProbe, row: &ProbeRow) {
        if let Some(ms) = Measure::MsPer1000Rows.value(row) {
            let key = (planned.point, planned.method());
            self.0.entry(key).or_default().push(ms);
        }
    }

    /// Whether `point` needs no more rounds: each of its strategies and libraries has the
    /// median of its time per 1,000 rows within the plan's precision, or no time at all
    /// (refused or failed every time so far: more repeats would not make it precise).
    fn settled(&self, plan: &SweepPlan, point: usize) -> bool {
        let Some(until) = plan.until else {
            return true;
        };
        plan.points[point].methods().iter().all(|method| {
            self.0
                .get(&(point, *method))
                .is_none_or(|ms| Summary::of(ms).is_some_and(|s| s.within(until.precision)))
        })
    }
}

/// One probe: its table set up, its rows written and timed, then verified and reconciled
/// against the host's plan and checksum.
fn measure_one(
    session: &mut dyn Probes,
    experiment: &str,
    planned: &PlannedProbe,
    expectations: &mut Expectations,
) -> ProbeRow {
    let before = session.calls_ms();
    let mut row = attempt(session, experiment, planned, expectations);
    row.label = planned.label.clone();
    row.worker = session.worker();
    row.calls_ms = session
        .calls_ms()
        .zip(before)
        .map(|(after, before)| after - before);
    row
}

fn attempt(
    session: &mut dyn Probes,
    experiment: &str,
    planned: &PlannedProbe,
    expectations: &mut Expectations,
) -> ProbeRow {
    let probe = &planned.request;
    let target = session.target();
    let (series, repeat) = (planned.series, planned.repeat);
    let failure = |outside_ms: f64, e: &str| {
        ProbeRow::target_failure(experiment, target, series, repeat, probe, outside_ms, e)
    };
    let setup_started = Instant::now();
    let setup = match session.setup(probe) {
        Ok(setup) => setup,
        Err(e) => return failure(0.0, &e.to_string()),
    };
    let setup_ms = ms_since(setup_started);
    // A refused setup is data: nothing was written, and nothing may be there.
    let (mut row, result) = match setup.error {
        Some(error) => (
            ProbeRow::refused_at_setup(experiment, target, series, repeat, probe, &error),
            None,
        ),
        None => {
            let (outside_ms, answer) = write(session, planned);
            let heap = session.isolate_heap_peak_bytes();
            match answer {
                Err(e) => return failure(outside_ms, &e.to_string()),
                Ok((result, sent)) => {
                    let row = ProbeRow {
                        isolate_heap_peak_bytes: heap,
                        ..ProbeRow::measured(
                            experiment, target, series, repeat, probe, &result, outside_ms,
                        )
                    };
                    let row = match (planned.orm, &sent) {
                        (Some(orm), Some(sent)) => row.sent_by(orm, sent),
                        _ => row,
                    };
                    (row, Some((result, sent)))
                }
            }
        }
    };
    if !session.has_d1_clock() {
        row.d1_ms = None;
    }
    row.setup_ms = Some(setup_ms);
    let verify_started = Instant::now();
    let verified = match session.verify(probe) {
        Ok(verified) => {
            row.verify_ms = Some(ms_since(verify_started));
            Ok(verified)
        }
        // Without the verification nothing of the probe can be trusted, whatever the writes
        // answered: a target failure like any other (outcome `error`), the writes' answer kept
        // in the error text.
        Err(e) => {
            return failure(
                row.outside_ms,
                &format!(
                    "the verification failed: {e} (the writes had answered {}{})",
                    row.outcome,
                    row.refusal.map_or(String::new(), |r| format!(", {r}"))
                ),
            );
        }
    };
    row.rows_present = verified.as_ref().map_or(0, |v| v.rows_present);
    let must_remain = result.as_ref().map_or(0, |(r, sent)| match sent {
        Some(_) => reconcile::orm::rows_that_must_remain(probe, r),
        None => reconcile::rows_that_must_remain(probe, r),
    });
    let content =
        ContentCheck::against(expectations.checksum(probe, must_remain), probe, &verified);
    row.checksum_expected = content.expected.to_string();
    row.checksum_present = content
        .present
        .as_ref()
        .map(ToString::to_string)
        .unwrap_or_default();
    row.checksum_equal = content.equal();
    let plan_check = match &result {
        Some((result, Some(sent))) => {
            reconcile::orm::check(probe, result, sent, row.rows_present).err()
        }
        Some((result, None)) => {
            reconcile::check(probe, &expectations.shape(probe), result, row.rows_present).err()
        }
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

/// The probe's writes: its strategy's (`/probe`), or its library's (the ORM Worker's
/// `/orm/probe`) with what the library sent; timed from the outside.
#[allow(clippy::type_complexity)]
fn write(
    session: &mut dyn Probes,
    planned: &PlannedProbe,
) -> (f64, Result<(ProbeResult, Option<Sent>), TargetError>) {
    match planned.orm {
        None => {
            let timed = session.probe(&planned.request);
            (timed.outside_ms, timed.result.map(|r| (r, None)))
        }
        Some(orm) => {
            let timed = session.orm_probe(&planned.request, orm);
            let answer = timed.result.map(|a| (a.result, Some(a.sent)));
            (timed.outside_ms, answer)
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use d1bench_core::Strategy;

    use super::*;
    use crate::records::csv;
    use crate::studies::sweep::SweepStudy;
    use crate::targets::sqlite::SqliteSession;

    fn plan_of(source: &str) -> SweepPlan {
        let experiment = SweepStudy::parse("t", Path::new("t.toml"), source.into()).unwrap();
        let (_, profile) = experiment.profile(None).unwrap();
        experiment.plan(profile)
    }

    /// A small sweep on in-process SQLite, measured for real into a temporary run directory.
    fn measured(source: &str) -> (SweepPlan, Vec<ProbeRow>) {
        let plan = plan_of(source);
        let dir = tempfile::tempdir().unwrap();
        let run_dir = RunDir::new(dir.path().to_owned());
        let mut session = SqliteSession::open().unwrap();
        let totals = measure(
            &mut session,
            "t",
            &plan,
            0,
            &HashSet::new(),
            &run_dir,
            Instant::now(),
        )
        .unwrap();
        assert!(totals.all_reconciled());
        (plan, csv::read(&run_dir.results_csv()).unwrap())
    }

    #[test]
    fn probes_run_in_the_plans_order_and_record_when_they_started() {
        let (plan, rows) = measured(
            r#"
description = "d"
x-axis = "columns"
[profile.full]
repeats = 2
warmup-probes = 3
warmup = 1
order-seed = 3
[[profile.full.series]]
strategies = ["bound", "literal"]
columns = [1, 2, 4]
row-bytes = [100]
rows = 20
"#,
        );
        let planned: Vec<(u64, bool, usize, usize)> = plan
            .probes()
            .iter()
            .map(|p| (p.request.probe_id, p.warmup, p.request.columns, p.repeat))
            .collect();
        let recorded: Vec<(u64, bool, usize, usize)> = rows
            .iter()
            .map(|r| (r.probe_id, r.warmup, r.columns, r.repeat))
            .collect();
        assert_eq!(recorded, planned, "the plan's order, warm-ups recorded too");
        // 3 warm-up probes, then a warm-up round of 6, then 2 measured rounds.
        let warmups: Vec<bool> = rows.iter().map(|r| r.warmup).collect();
        assert_eq!(warmups, [vec![true; 9], vec![false; 12]].concat());
        assert!(
            rows.iter()
                .all(|r| r.setup_ms.is_some() && r.verify_ms.is_some()),
            "every probe records what its setup and verification cost"
        );
        let started: Vec<f64> = rows.iter().map(|r| r.started_ms.unwrap()).collect();
        assert!(
            started.windows(2).all(|w| w[0] < w[1]),
            "each probe starts after the one before: {started:?}"
        );
    }

    #[test]
    fn a_precision_out_of_reach_takes_every_point_to_its_most_repeats() {
        let (plan, rows) = measured(
            r#"
description = "d"
x-axis = "columns"
[profile.full]
repeats = 2
precision = 0.000000001
max-repeats = 7
[[profile.full.series]]
strategies = ["bound", "literal"]
columns = [1, 4]
row-bytes = [100]
rows = 20
"#,
        );
        assert_eq!(plan.until.map(|u| u.max_repeats), Some(7));
        assert_eq!(rows.len(), 2 * 2 * 7, "{rows:?}");
        for repeat in 0..7 {
            assert_eq!(rows.iter().filter(|r| r.repeat == repeat).count(), 4);
        }
    }

    #[test]
    fn a_point_is_settled_when_every_strategy_is_precise_or_has_no_time() {
        let plan = plan_of(
            r#"
description = "d"
x-axis = "columns"
[profile.full]
repeats = 1
precision = 0.05
max-repeats = 30
[[profile.full.series]]
strategies = ["bound", "literal"]
columns = [1]
row-bytes = [100]
rows = 20
"#,
        );
        let probe = |strategy| PlannedProbe {
            session: 0,
            point: 0,
            series: 0,
            label: String::new(),
            warmup: false,
            repeat: 0,
            orm: None,
            worker: None,
            request: plan.points[0].probe(strategy, 1),
        };
        let row = |ms: f64| ProbeRow {
            outside_ms: ms,
            rows: 1000,
            ..crate::studies::sweep::row::tests_support::row()
        };
        let mut times = Times::default();
        assert!(
            times.settled(&plan, 0),
            "nothing succeeded: nothing to make precise"
        );
        for ms in [100.0, 101.0, 99.0, 100.5, 99.5] {
            times.add(&probe(Strategy::Bound), &row(ms));
        }
        assert!(!times.settled(&plan, 0), "5 repeats cover 93.75% at best");
        times.add(&probe(Strategy::Bound), &row(100.0));
        assert!(times.settled(&plan, 0), "6 repeats within ±1%");
        for ms in [100.0, 100.0, 100.0, 100.0, 100.0, 200.0] {
            times.add(&probe(Strategy::Literal), &row(ms));
        }
        assert!(!times.settled(&plan, 0), "literal's interval reaches 200");
        let mut refused = row(1.0);
        refused.outcome = d1bench_core::Outcome::Refused;
        let mut only_bound = Times::default();
        for ms in [100.0; 6] {
            only_bound.add(&probe(Strategy::Bound), &row(ms));
        }
        only_bound.add(&probe(Strategy::Literal), &refused);
        assert!(
            only_bound.settled(&plan, 0),
            "a refused strategy holds nothing open"
        );
    }
}
