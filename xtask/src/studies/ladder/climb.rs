//! Ladders on a session: each climb sends rungs (three invocations each: prepare, the measured
//! calls, count and drop) until the climber is done, reconciles every rung, and appends rows to
//! `results.csv` and each climb's finding to `findings.csv` as they land.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use d1bench_core::Outcome;
use d1bench_core::ladder::{MAX_STEPS_PER_MS, RungRequest, Step};

use crate::procs;
use crate::records::RunDir;
use crate::records::csv::Appender;
use crate::records::reconcile::{self, Totals};
use crate::studies::ladder::dialect::Dialect;
use crate::studies::ladder::row::{ClimbFinding, RungRow, Stop};
use crate::studies::ladder::{Climb, Climber, Role};
use crate::studies::progress::Progress;
use crate::targets::Rungs;

/// The climbs an earlier attempt of the run finished (their findings are in findings.csv), and
/// the first rung id none of its rungs took.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClimbsDone {
    /// Indexes of the finished climbs in the run's list of climbs.
    pub climbs: BTreeSet<usize>,
    pub next_rung_id: u64,
}

impl Default for ClimbsDone {
    fn default() -> Self {
        ClimbsDone {
            climbs: BTreeSet::new(),
            next_rung_id: 1,
        }
    }
}

/// Climbs every climb of every ladder in order, but those `done` says are finished; rows and
/// findings are on disk as they land.
pub fn climb_all(
    session: &mut dyn Rungs,
    climbs: &[Climb],
    done: &ClimbsDone,
    run_dir: &RunDir,
) -> Result<Totals> {
    let mut results = Appender::<RungRow>::open(&run_dir.results_csv())?;
    let mut findings = Appender::<ClimbFinding>::open(&run_dir.findings_csv())?;
    let mut progress = Progress::new(None, "rungs");
    let mut totals = Totals::default();
    let mut next_id = done.next_rung_id;
    for (index, climb) in climbs.iter().enumerate() {
        if done.climbs.contains(&index) {
            continue;
        }
        let finding = climb_one(session, climb, index, &mut next_id, &mut |row| {
            totals.add(row);
            progress.record(row, false);
            results.append(row)
        })?;
        findings.append(&finding)?;
    }
    progress.finish();
    Ok(totals)
}

/// One climb: calibration (query-duration), then rungs until the climber is done, the time
/// budget is spent, or the target stops answering.
fn climb_one(
    session: &mut dyn Rungs,
    climb: &Climb,
    index: usize,
    next_id: &mut u64,
    emit: &mut dyn FnMut(&RungRow) -> Result<()>,
) -> Result<ClimbFinding> {
    let mut climb = climb.clone();
    let mut rows: Vec<RungRow> = Vec::new();
    let mut stopped = None;
    let mut take =
        |climb: &Climb, value: usize, role: Role, session: &mut dyn Rungs| -> Result<RungRow> {
            if procs::interrupted() {
                bail!("interrupted");
            }
            let rung = climb.rung(*next_id, value);
            *next_id += 1;
            let row = run_rung(session, &rung, role, index);
            emit(&row)?;
            Ok(row)
        };
    if let Some(steps) = climb.calibrate_steps {
        let mut calibration = climb.clone();
        calibration.held.steps_per_ms = Some(steps);
        let row = take(&calibration, 1, Role::Calibrate, session)?;
        let ms = if row.d1_ms > 0.0 {
            row.d1_ms
        } else {
            row.inside_ms
        };
        if row.failed() || ms <= 0.0 {
            stopped = Some(Stop::CalibrationFailed(row.error.clone()));
        } else {
            let rate = (steps as f64 / ms)
                .round()
                .clamp(1.0, MAX_STEPS_PER_MS as f64) as u64;
            climb.held.steps_per_ms = Some(rate);
        }
        rows.push(row);
    }
    let mut climber = Climber::new(&climb.rungs, climb.confirm);
    let started = Instant::now();
    while stopped.is_none() {
        let Some((value, role)) = climber.next() else {
            break;
        };
        if let Some(budget) = climb.max_seconds
            && started.elapsed() > Duration::from_secs(budget)
        {
            stopped = Some(Stop::TimeBudget(budget));
            break;
        }
        let row = take(&climb, value, role, session)?;
        climber.record(value, row.failed());
        // A query's cost per step drifts with its length: each success re-sizes the next.
        if let Some(rate) = climb.held.steps_per_ms
            && !row.failed()
        {
            let ms = if row.d1_ms > 0.0 {
                row.d1_ms
            } else {
                row.inside_ms
            };
            if ms >= 100.0 {
                let steps = value as f64 * rate as f64;
                climb.held.steps_per_ms =
                    Some((steps / ms).round().clamp(1.0, MAX_STEPS_PER_MS as f64) as u64);
            }
        }
        if row.target_failed {
            stopped = Some(Stop::NoAnswer(row.error.clone()));
            if let Err(why) = session.recover() {
                bail!(
                    "the target stopped answering during the climb ({why}); every rung measured before is kept"
                );
            }
        }
        rows.push(row);
    }
    let verdict = climber.verdict();
    let climbed: Vec<&RungRow> = rows.iter().filter(|r| r.role != Role::Calibrate).collect();
    let at = |v: Option<usize>| v.and_then(|v| climbed.iter().find(|r| r.value == v).copied());
    let ok = at(verdict.last_ok);
    let failed = at(verdict.first_failed);
    let stopped = stopped.unwrap_or_else(|| match (failed, verdict.max_tried) {
        (Some(_), _) => Stop::Refused,
        (None, Some(max)) if max >= climb.rungs.max() => Stop::NoRefusalUpToCap(max),
        (None, _) => Stop::NoRefusal,
    });
    Ok(ClimbFinding {
        ladder: climb.ladder,
        target: session.target(),
        climb: index,
        held: climb.held.label(),
        columns: climb.held.columns,
        unit: climb.ladder.unit().to_owned(),
        last_ok: verdict.last_ok,
        first_failed: verdict.first_failed,
        max_tried: verdict.max_tried,
        outcome: failed.map(|r| r.outcome),
        refusal: failed.and_then(|r| r.refusal),
        error: failed.map(|r| r.error.clone()).unwrap_or_default(),
        statements_completed: failed.map(|r| r.statements_completed),
        confirmed: verdict.confirmed,
        stopped,
        ok_outside_ms: ok.map(|r| r.outside_ms),
        ok_inside_ms: ok.map(|r| r.inside_ms),
        ok_d1_ms: ok.map(|r| r.d1_ms),
        rungs: rows.len(),
        reconciled: rows.iter().all(|r| r.reconciled),
    })
}

/// Prepare, climb and finish one rung (three invocations on the Worker), then reconcile it.
fn run_rung(session: &mut dyn Rungs, rung: &RungRequest, role: Role, climb: usize) -> RungRow {
    // The target's dialect plans what the host reconciles against and classifies its errors.
    let dialect = Dialect::of(session.target());
    let plan = dialect.plan(rung);
    let mut row = RungRow {
        ladder: rung.ladder,
        target: session.target(),
        climb,
        held: rung.held.label(),
        rung_id: rung.rung_id,
        role,
        value: rung.value,
        unit: rung.ladder.unit().to_owned(),
        outcome: Outcome::Ok,
        refusal: None,
        error: String::new(),
        failed_step: None,
        calls_planned: plan.calls.len(),
        calls_completed: 0,
        statements_planned: plan.statements(),
        statements_completed: 0,
        rows_acknowledged: 0,
        rows_present: 0,
        table_exists: false,
        max_statement_bytes: plan.max_statement_bytes(),
        max_statement_chars: plan.max_statement_chars(),
        outside_ms: 0.0,
        inside_ms: 0.0,
        d1_ms: 0.0,
        reconciled: false,
        reconcile_note: String::new(),
        target_failed: false,
        isolate_heap_peak_bytes: None,
        result_bytes: None,
    };
    // The target's answer, classified: a refusal or an error of D1's is data.
    let fail = |row: &mut RungRow, step: Step, text: &str| {
        let (outcome, refusal) = dialect.classify(Some(text));
        row.outcome = outcome;
        row.refusal = refusal;
        row.error = crate::records::error_text::recorded(text);
        row.failed_step = Some(step);
    };
    // No answer at all: a failure of the target, which says nothing about the limit.
    let lost = |row: &mut RungRow, step: Step, text: &str| {
        row.outcome = Outcome::Error;
        row.refusal = None;
        row.error = crate::records::error_text::recorded(text);
        row.failed_step = Some(step);
        row.target_failed = true;
        row.reconcile_note = format!(
            "the {} request got no answer: nothing to reconcile",
            step_name(step)
        );
    };
    match session.rung_prepare(rung) {
        Err(e) => {
            lost(&mut row, Step::Prepare, &e.to_string());
            let _ = session.rung_finish(rung);
            return row;
        }
        Ok(p) => {
            if let Some(error) = &p.error {
                fail(&mut row, Step::Prepare, error);
            } else {
                let timed = session.rung_climb(rung);
                row.outside_ms = timed.outside_ms;
                row.isolate_heap_peak_bytes = session.isolate_heap_peak_bytes();
                match timed.result {
                    Err(e) => {
                        lost(&mut row, Step::Climb, &e.to_string());
                        let _ = session.rung_finish(rung);
                        return row;
                    }
                    Ok(result) => {
                        row.calls_completed = result.calls_completed;
                        row.statements_completed = result.statements_completed;
                        row.rows_acknowledged = result.rows_acknowledged;
                        row.inside_ms = result.inside_ms;
                        row.d1_ms = result.d1_ms;
                        row.result_bytes = result.result_bytes;
                        if let Some(text) = &result.error {
                            fail(&mut row, Step::Climb, text);
                        }
                        if let Err(note) = reconcile::check_rung(&plan, &result) {
                            row.reconcile_note = note;
                        }
                    }
                }
            }
        }
    }
    match session.rung_finish(rung) {
        Err(e) => {
            lost(&mut row, Step::Finish, &e.to_string());
        }
        Ok(finish) => {
            row.table_exists = finish.table_exists;
            row.rows_present = finish.rows_present;
            let mut problems = Vec::new();
            if let Some(e) = finish.error {
                problems.push(format!("counting the rows failed: {e}"));
            }
            if finish.rows_present != row.rows_acknowledged {
                problems.push(format!(
                    "rows present: expected the {} acknowledged, found {}",
                    row.rows_acknowledged, finish.rows_present
                ));
            }
            let note = join_notes(&row.reconcile_note, &problems.join("; "));
            row.reconciled = note.is_empty();
            row.reconcile_note = note;
        }
    }
    row
}

fn step_name(step: Step) -> &'static str {
    match step {
        Step::Prepare => "prepare",
        Step::Climb => "climb",
        Step::Finish => "finish",
    }
}

fn join_notes(a: &str, b: &str) -> String {
    match (a.is_empty(), b.is_empty()) {
        (true, _) => b.to_owned(),
        (_, true) => a.to_owned(),
        _ => format!("{a}; {b}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::studies::ladder::Rungs;
    use d1bench_core::ladder::{self, LadderKind};
    use d1bench_core::ladder::{CallMode, Held};

    fn climb(kind: LadderKind, rungs: Rungs, held: Held) -> Climb {
        Climb {
            ladder: kind,
            rungs,
            confirm: 1,
            held,
            max_seconds: None,
            calibrate_steps: None,
        }
    }

    fn run(c: &Climb) -> (Vec<RungRow>, ClimbFinding) {
        let mut target = crate::targets::sqlite::SqliteSession::open().unwrap();
        let mut rows = Vec::new();
        let mut id = 1;
        let finding = climb_one(&mut target, c, 0, &mut id, &mut |r| {
            rows.push(r.clone());
            Ok(())
        })
        .unwrap();
        (rows, finding)
    }

    #[test]
    fn param_ceiling_on_sqlite_finds_floor_100_over_c_and_reconciles() {
        for columns in [1, 3, 7, 51, 100] {
            let c = climb(
                LadderKind::ParamCeiling,
                Rungs::Grow {
                    start: 1,
                    factor: 2.0,
                    max: 256,
                    resolution: 1,
                },
                Held {
                    columns: Some(columns),
                    ..Held::default()
                },
            );
            let (rows, finding) = run(&c);
            assert_eq!(finding.last_ok, Some(100 / columns), "C={columns}");
            assert_eq!(finding.first_failed, Some(100 / columns + 1));
            assert_eq!(
                finding.refusal,
                Some(d1bench_core::RefusalKind::TooManyVariables)
            );
            assert_eq!(finding.confirmed, Some(true));
            assert!(
                finding.error.contains("too many SQL variables"),
                "{}",
                finding.error
            );
            assert!(rows.iter().all(|r| r.reconciled), "{rows:?}");
        }
    }

    #[test]
    fn a_refusal_at_the_create_table_is_data_and_leaves_no_table() {
        let c = climb(
            LadderKind::Columns,
            Rungs::List(vec![100, 101, 200]),
            Held::default(),
        );
        let (rows, finding) = run(&c);
        assert_eq!(rows.len(), 3);
        assert_eq!(
            (finding.last_ok, finding.first_failed),
            (Some(100), Some(101))
        );
        assert_eq!(finding.statements_completed, Some(0));
        assert!(!rows[1].table_exists);
        assert!(rows.iter().all(|r| r.reconciled));
    }

    #[test]
    fn a_climb_without_a_limit_says_how_far_it_went() {
        let c = climb(
            LadderKind::BatchAccounting,
            Rungs::List(vec![10, 20]),
            Held {
                mode: Some(CallMode::OneAtATime),
                ..Held::default()
            },
        );
        let (rows, finding) = run(&c);
        assert_eq!(
            rows.iter().map(|r| r.rows_present).collect::<Vec<_>>(),
            [10, 20]
        );
        assert_eq!(finding.first_failed, None);
        assert_eq!(finding.stopped, Stop::NoRefusalUpToCap(20));
    }

    #[test]
    fn a_dishonest_answer_does_not_reconcile() {
        let rung = RungRequest {
            rung_id: 1,
            ladder: LadderKind::BatchAccounting,
            value: 10,
            held: Held {
                mode: Some(CallMode::Batches),
                batches: Some(2),
                ..Held::default()
            },
        };
        let plan = ladder::plan(&rung);
        let mut tally = ladder::Tally::default();
        tally.succeeded(0.0);
        tally.failed("D1_ERROR: Too many API requests by single Worker invocation.".into());
        let mut result = tally.into_result(1, &plan, 1.0);
        assert_eq!(reconcile::check_rung(&plan, &result), Ok(()));
        // A refused second batch that claims its rows: the atomicity check catches it.
        result.rows_acknowledged = 10;
        let err = reconcile::check_rung(&plan, &result).unwrap_err();
        assert!(err.contains("rows acknowledged: expected 5"), "{err}");
        result.rows_acknowledged = 5;
        result.statements_planned = 9;
        assert!(
            reconcile::check_rung(&plan, &result)
                .unwrap_err()
                .contains("statements planned")
        );
    }
}
