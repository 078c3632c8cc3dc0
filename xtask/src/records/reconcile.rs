//! Reconciliation: every record checked against the host's own plan of the same probe or rung,
//! the rows present against the rows the target acknowledged, and for probes their content (the
//! checksum the target computed in SQL) against the checksum the host computes from the
//! generator; and the [`Totals`] of a run over records of every kind. A time for writes that
//! never happened, or wrote something else, is worthless, so a record that fails any check makes
//! its run invalid. A record the target gave no answer for is counted apart: it says nothing
//! about the data.

use d1bench_core::ladder::{RungPlan, RungResult};
use d1bench_core::{CallShape, Checksum, Outcome, Plan, ProbeRequest, ProbeResult, VerifyResult};
use serde::{Deserialize, Serialize};

use super::Record;
use crate::targets::TargetError;

pub mod orm;

/// The rows (the first ones of the generator, in order) that must be in the table after
/// `result`: all of them after success, none after a failed batch (D1 rolls it back whole) or
/// COPY (Postgres applies its stream whole), and for per-row the ones before the statement that
/// failed.
pub fn rows_that_must_remain(probe: &ProbeRequest, result: &ProbeResult) -> usize {
    match (result.outcome, probe.strategy.calls()) {
        (Outcome::Ok, _) => probe.rows,
        (_, CallShape::OneBatch | CallShape::OneExec | CallShape::OneCopy) => 0,
        (_, CallShape::OneCallPerStatement) => result.statements_sent.saturating_sub(1),
    }
}

/// The content of a probe's table compared with what the host expects.
#[derive(Debug, Clone, PartialEq)]
pub struct ContentCheck {
    /// The host's checksum of the rows that must remain.
    pub expected: Checksum,
    /// The target's checksum, or why there is none.
    pub present: Result<Checksum, String>,
}

impl ContentCheck {
    /// Compares the target's verification of `probe` with the host's expectation of `rows`
    /// (computed here; a run takes it from its [`super::expected::Expectations`]).
    #[cfg(test)]
    pub fn of(
        probe: &ProbeRequest,
        rows: usize,
        verified: &Result<VerifyResult, TargetError>,
    ) -> ContentCheck {
        let generator =
            d1bench_core::RowGenerator::new(probe.columns, probe.row_bytes, probe.seed, probe.text);
        ContentCheck::against(Checksum::expected(&generator, rows), probe, verified)
    }

    /// Compares the target's verification of `probe` with `expected`, the host's checksum of
    /// the rows that must remain.
    pub fn against(
        expected: Checksum,
        probe: &ProbeRequest,
        verified: &Result<VerifyResult, TargetError>,
    ) -> ContentCheck {
        let present = match verified {
            Err(e) => Err(e.to_string()),
            Ok(v) if v.probe_id != probe.probe_id => Err(format!(
                "the verification answered for probe {}, not {}",
                v.probe_id, probe.probe_id
            )),
            Ok(v) => match v.checksum {
                Some(checksum) => Ok(checksum),
                // No table: nothing is present, which is right only when nothing must be.
                None => Ok(Checksum::of_rows(Vec::new())),
            },
        };
        ContentCheck { expected, present }
    }

    pub fn equal(&self) -> bool {
        self.present.as_ref() == Ok(&self.expected)
    }

    /// Why the content does not reconcile, or `None` when it does.
    pub fn problem(&self) -> Option<String> {
        match &self.present {
            Ok(present) if *present == self.expected => None,
            Ok(present) => Some(format!(
                "content checksum: expected {}, the target computed {present}",
                self.expected
            )),
            Err(e) => Some(format!("content checksum not computed: {e}")),
        }
    }
}

/// What reconciliation reads of the host's plan of a probe: its statements, the most rows in one
/// and the longest one's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlanShape {
    pub statements: usize,
    pub rows_per_statement: usize,
    pub max_statement_bytes: usize,
}

impl PlanShape {
    pub fn of(plan: &Plan) -> Self {
        PlanShape {
            statements: plan.inserts.len(),
            rows_per_statement: plan.rows_per_statement(),
            max_statement_bytes: plan.max_statement_bytes(),
        }
    }
}

/// What a target reported that differs from what was expected, listed as it is found: the one
/// form every check of an answer (a probe's, a library's, a rung's) writes its findings in.
#[derive(Debug, Default)]
pub(crate) struct Mismatches(Vec<String>);

impl Mismatches {
    /// Notes `what` when the target reported `got` where `wanted` was expected.
    pub(crate) fn expect(&mut self, what: &str, wanted: usize, got: usize) {
        if wanted != got {
            self.0.push(format!(
                "{what}: expected {wanted}, the target reported {got}"
            ));
        }
    }

    pub(crate) fn push(&mut self, problem: String) {
        self.0.push(problem);
    }

    /// `Err` listing every mismatch, `Ok` when there is none.
    pub(crate) fn into_result(self) -> Result<(), String> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(self.0.join("; "))
        }
    }
}

/// Checks `result` against `plan` (the shape of the host's plan of `probe`) and the rows the verification
/// counted; `Err` lists what disagrees.
pub fn check(
    probe: &ProbeRequest,
    plan: &PlanShape,
    result: &ProbeResult,
    rows_present: usize,
) -> Result<(), String> {
    let mut m = Mismatches::default();
    m.expect(
        "probe_id",
        probe.probe_id as usize,
        result.probe_id as usize,
    );
    m.expect("columns", probe.columns, result.columns);
    m.expect(
        "statements planned",
        plan.statements,
        result.statements_planned,
    );
    m.expect(
        "rows per statement",
        plan.rows_per_statement,
        result.rows_per_statement,
    );
    m.expect(
        "longest statement (bytes)",
        plan.max_statement_bytes,
        result.max_statement_bytes,
    );
    // The rows acknowledged are what D1 (or SQLite) said its statements changed; the plan says
    // what they should have changed.
    match (probe.strategy.calls(), result.outcome) {
        (_, Outcome::Ok) => {
            m.expect("statements sent", plan.statements, result.statements_sent);
            m.expect("rows acknowledged", probe.rows, result.rows_expected);
        }
        (CallShape::OneBatch | CallShape::OneExec | CallShape::OneCopy, _) => m.expect(
            "rows acknowledged after a failed batch, exec or COPY",
            0,
            result.rows_expected,
        ),
        (CallShape::OneCallPerStatement, _) => m.expect(
            "rows acknowledged before the failure",
            result.statements_sent.saturating_sub(1),
            result.rows_expected,
        ),
    }
    let calls = match probe.strategy.calls() {
        // A COPY is a call of its own: one a probe, unless a fixed size splits the rows.
        CallShape::OneCallPerStatement | CallShape::OneCopy => result.statements_sent,
        CallShape::OneBatch | CallShape::OneExec => 1,
    };
    m.expect("D1 calls", calls, result.d1_calls);
    m.expect("rows present", result.rows_expected, rows_present);
    if result.strategy != probe.strategy {
        m.push(format!(
            "strategy: expected {}, the target reported {}",
            probe.strategy, result.strategy
        ));
    }
    m.into_result()
}

/// A rung's answer checked against the host's plan of the same rung.
pub fn check_rung(plan: &RungPlan, result: &RungResult) -> Result<(), String> {
    let mut m = Mismatches::default();
    m.expect("calls planned", plan.calls.len(), result.calls_planned);
    m.expect(
        "statements planned",
        plan.statements(),
        result.statements_planned,
    );
    m.expect(
        "longest statement (bytes)",
        plan.max_statement_bytes(),
        result.max_statement_bytes,
    );
    let completed = result.calls_completed.min(plan.calls.len());
    if result.outcome == Outcome::Ok {
        m.expect("calls completed", plan.calls.len(), result.calls_completed);
    }
    // A failed call acknowledges nothing: a refused batch is rolled back whole.
    let (statements, rows) = plan.completed(completed);
    m.expect(
        "statements completed",
        statements,
        result.statements_completed,
    );
    m.expect("rows acknowledged", rows, result.rows_acknowledged);
    // What the reads of the completed calls returned, as the target counted it.
    match (plan.reads(), result.result_bytes) {
        (true, Some(bytes)) => {
            m.expect("result bytes returned", plan.result_bytes(completed), bytes)
        }
        (true, None) => m.push("the rung reads, yet no result bytes were counted".into()),
        (false, Some(_)) => m.push("result bytes counted for a rung that reads nothing".into()),
        (false, None) => {}
    }
    if result.calls_completed > plan.calls.len() {
        m.push(format!(
            "calls completed: {} of only {} planned",
            result.calls_completed,
            plan.calls.len()
        ));
    }
    if result.outcome != Outcome::Ok && completed == plan.calls.len() {
        m.push(format!(
            "every call completed yet the outcome is {}",
            result.outcome.name()
        ));
    }
    m.into_result()
}

/// Totals over a run's records, of every kind of study.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Totals {
    /// Probes or rungs recorded (warm-ups are not).
    #[serde(alias = "probes")]
    pub records: usize,
    /// Of them, the ones that reconciled.
    pub reconciled: usize,
    /// Rows that had to be present, over the records the target answered.
    #[serde(default)]
    pub rows_expected: usize,
    #[serde(default)]
    pub rows_present: usize,
    /// Records that carry a content checksum, and of them the ones whose checksums were equal.
    #[serde(default)]
    pub checksums_compared: Option<usize>,
    #[serde(default)]
    pub checksums_equal: usize,
    pub refused: usize,
    pub errors: usize,
    /// Records the target gave no answer for: failures of the target, not of the data.
    #[serde(default)]
    pub target_failures: usize,
    #[serde(default)]
    pub warmups: usize,
    /// Warm-ups that reconciled, counting those the target gave no answer for.
    #[serde(default)]
    pub warmups_reconciled: usize,
    /// Warm-ups the target gave no answer for (not recorded in results.csv, so counted here).
    #[serde(default)]
    pub warmups_target_failed: usize,
    /// Records measured before their session settled, by the warm-up rule: in results.csv
    /// (marked `warmup_discarded`) and among `records`, left out of every report.
    #[serde(default)]
    pub warmup_discarded: usize,
}

impl Totals {
    pub fn add(&mut self, record: &dyn Record) {
        self.records += 1;
        if record.target_failed() {
            self.target_failures += 1;
            return;
        }
        self.reconciled += usize::from(record.reconciled());
        let (expected, present) = record.rows();
        self.rows_expected += expected;
        self.rows_present += present;
        if let Some(equal) = record.checksum_equal() {
            *self.checksums_compared.get_or_insert(0) += 1;
            self.checksums_equal += usize::from(equal);
        }
        self.refused += usize::from(record.outcome() == Outcome::Refused);
        self.errors += usize::from(record.outcome() == Outcome::Error);
    }

    pub fn add_warmup(&mut self, record: &dyn Record) {
        self.warmups += 1;
        self.warmups_reconciled += usize::from(record.reconciled() || record.target_failed());
        self.warmups_target_failed += usize::from(record.target_failed());
    }

    pub fn merged(&self, other: &Totals) -> Totals {
        let compared = match (self.checksums_compared, other.checksums_compared) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
        };
        Totals {
            records: self.records + other.records,
            reconciled: self.reconciled + other.reconciled,
            rows_expected: self.rows_expected + other.rows_expected,
            rows_present: self.rows_present + other.rows_present,
            checksums_compared: compared,
            checksums_equal: self.checksums_equal + other.checksums_equal,
            refused: self.refused + other.refused,
            errors: self.errors + other.errors,
            target_failures: self.target_failures + other.target_failures,
            warmups: self.warmups + other.warmups,
            warmups_reconciled: self.warmups_reconciled + other.warmups_reconciled,
            warmups_target_failed: self.warmups_target_failed + other.warmups_target_failed,
            warmup_discarded: self.warmup_discarded + other.warmup_discarded,
        }
    }

    /// Records whose data was checked (the target answered).
    fn answered(&self) -> usize {
        self.records - self.target_failures
    }

    /// Whether every record the target answered reconciled, warm-ups included. Records the
    /// target gave no answer for do not count against it: they are reported apart.
    pub fn all_reconciled(&self) -> bool {
        self.reconciled == self.answered()
            && self.rows_expected == self.rows_present
            && self
                .checksums_compared
                .is_none_or(|compared| self.checksums_equal == compared)
            && self.warmups_reconciled == self.warmups
    }

    /// The reconciliation line of a run, e.g. `22 probes (0 refused, 0 errors; 22 warm-ups not
    /// recorded); 10040 rows expected, 10040 present, checksums equal; every probe reconciled`.
    pub fn line(&self, unit: &str) -> String {
        let checksums = match self.checksums_compared {
            None => String::new(),
            Some(compared) if compared == self.checksums_equal => ", checksums equal".to_owned(),
            Some(compared) => format!(
                ", checksums DIFFER for {} of {compared} {unit}",
                compared - self.checksums_equal,
            ),
        };
        let answered = self.answered();
        let mut verdict = if self.reconciled == answered {
            format!("every {} reconciled", unit.trim_end_matches('s'))
        } else {
            format!(
                "{} of {answered} {unit} did NOT reconcile",
                answered - self.reconciled,
            )
        };
        if self.warmups_reconciled < self.warmups {
            verdict.push_str(&format!(
                ", {} of {} warm-ups did NOT reconcile",
                self.warmups - self.warmups_reconciled,
                self.warmups
            ));
        }
        if !self.all_reconciled() {
            verdict.push_str(": the run is INVALID");
        }
        let warmups = match (self.warmups, self.warmups_target_failed) {
            (0, _) => String::new(),
            (warmups, 0) => format!("; {warmups} warm-ups, not in the figures"),
            (warmups, lost) => {
                format!(
                    "; {warmups} warm-ups, not in the figures, {lost} of them lost to target failures"
                )
            }
        };
        let warmups = match self.warmup_discarded {
            0 => warmups,
            n => format!(
                "{warmups}; {n} measured before their session settled, discarded as warm-up"
            ),
        };
        let failures = if self.target_failures > 0 {
            format!(
                ", {} lost to target failures (not data: no answer to reconcile)",
                self.target_failures
            )
        } else {
            String::new()
        };
        format!(
            "{} {unit} ({} refused, {} errors{failures}{warmups}); {} rows expected, {} present{checksums}; {verdict}",
            self.records, self.refused, self.errors, self.rows_expected, self.rows_present
        )
    }
}

#[cfg(test)]
mod tests;
