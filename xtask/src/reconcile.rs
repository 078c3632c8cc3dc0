//! Reconciliation: every probe's result checked against the host's own plan of the same probe,
//! the rows present checked against the rows D1 acknowledged, and their content (the checksum
//! the target computed in SQL) against the checksum the host computes from the generator. A time
//! for writes that never happened, or wrote something else, is worthless, so a probe that fails
//! any check makes its run invalid.

use d1bench_core::{
    Checksum, Outcome, Plan, ProbeRequest, ProbeResult, RowGenerator, Strategy, VerifyResult,
};
use serde::{Deserialize, Serialize};

/// The rows (the first ones of the generator, in order) that must be in the table after
/// `result`: all of them after success, none after a failed batch (D1 rolls it back whole), and
/// for per-row the ones before the statement that failed.
pub fn rows_that_must_remain(probe: &ProbeRequest, result: &ProbeResult) -> usize {
    match (result.outcome, probe.strategy) {
        (Outcome::Ok, _) => probe.rows,
        (_, Strategy::Bound | Strategy::Literal) => 0,
        (_, Strategy::PerRow) => result.statements_sent.saturating_sub(1),
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
    /// Compares the target's verification of `probe` with the host's expectation after `result`.
    pub fn of(
        probe: &ProbeRequest,
        result: &ProbeResult,
        verified: Result<VerifyResult, String>,
    ) -> ContentCheck {
        let generator = RowGenerator::new(probe.columns, probe.row_bytes, probe.seed, probe.text);
        let expected = Checksum::expected(&generator, rows_that_must_remain(probe, result));
        let present = verified.and_then(|v| {
            if v.probe_id == probe.probe_id {
                Ok(v.checksum)
            } else {
                Err(format!(
                    "the verification answered for probe {}, not {}",
                    v.probe_id, probe.probe_id
                ))
            }
        });
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

/// Checks `result` against `plan` (the host's plan of `probe`); `Err` lists what disagrees.
pub fn check(probe: &ProbeRequest, plan: &Plan, result: &ProbeResult) -> Result<(), String> {
    let mut problems = Vec::new();
    let mut expect = |what: &str, wanted: usize, got: usize| {
        if wanted != got {
            problems.push(format!("{what}: expected {wanted}, Worker reported {got}"));
        }
    };
    expect(
        "probe_id",
        probe.probe_id as usize,
        result.probe_id as usize,
    );
    expect("columns", probe.columns, result.columns);
    expect(
        "statements planned",
        plan.inserts.len(),
        result.statements_planned,
    );
    expect(
        "rows per statement",
        plan.rows_per_statement(),
        result.rows_per_statement,
    );
    expect(
        "longest statement (bytes)",
        plan.max_statement_bytes(),
        result.max_statement_bytes,
    );
    match (probe.strategy, result.outcome) {
        (_, Outcome::Ok) => {
            expect(
                "statements sent",
                plan.inserts.len(),
                result.statements_sent,
            );
            expect("rows acknowledged", probe.rows, result.rows_expected);
        }
        // A refused batch is rolled back whole.
        (Strategy::Bound | Strategy::Literal, _) => expect(
            "rows acknowledged after a failed batch",
            0,
            result.rows_expected,
        ),
        // Per-row stops at the first failure: every statement before it wrote its one row.
        (Strategy::PerRow, _) => expect(
            "rows acknowledged before the failure",
            result.statements_sent.saturating_sub(1),
            result.rows_expected,
        ),
    }
    let calls = match probe.strategy {
        Strategy::PerRow => result.statements_sent,
        Strategy::Bound | Strategy::Literal => 1,
    };
    expect("D1 calls", calls, result.d1_calls);
    expect("rows present", result.rows_expected, result.rows_present);
    if result.strategy != probe.strategy {
        problems.push(format!(
            "strategy: expected {}, Worker reported {}",
            probe.strategy, result.strategy
        ));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("; "))
    }
}

/// Totals over a run, as run.toml and the summary state them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Totals {
    /// Probes measured (recorded in results.csv).
    pub probes: usize,
    /// Probes whose every check passed.
    pub reconciled: usize,
    /// Rows D1 acknowledged, summed.
    pub rows_expected: usize,
    /// Rows counted in the tables, summed.
    pub rows_present: usize,
    /// Probes whose content checksum equals the host's.
    #[serde(default)]
    pub checksums_equal: usize,
    /// Probes D1 refused on a known limit.
    pub refused: usize,
    /// Probes that ended in an error (D1's or the harness's).
    pub errors: usize,
    /// Warm-up probes sent (reconciled like the others, not recorded as results).
    #[serde(default)]
    pub warmups: usize,
    /// Warm-up probes whose every check passed.
    #[serde(default)]
    pub warmups_reconciled: usize,
}

impl Totals {
    pub fn add(&mut self, row: &crate::report::ResultRow) {
        self.probes += 1;
        self.reconciled += usize::from(row.reconciled);
        self.rows_expected += row.rows_expected;
        self.rows_present += row.rows_present;
        self.checksums_equal += usize::from(row.checksum_equal);
        self.refused += usize::from(row.outcome == "refused");
        self.errors += usize::from(row.outcome == "error");
    }

    pub fn add_warmup(&mut self, reconciled: bool) {
        self.warmups += 1;
        self.warmups_reconciled += usize::from(reconciled);
    }

    /// The totals of a run's two parts (a target and its baseline) together.
    pub fn merged(&self, other: &Totals) -> Totals {
        Totals {
            probes: self.probes + other.probes,
            reconciled: self.reconciled + other.reconciled,
            rows_expected: self.rows_expected + other.rows_expected,
            rows_present: self.rows_present + other.rows_present,
            checksums_equal: self.checksums_equal + other.checksums_equal,
            refused: self.refused + other.refused,
            errors: self.errors + other.errors,
            warmups: self.warmups + other.warmups,
            warmups_reconciled: self.warmups_reconciled + other.warmups_reconciled,
        }
    }

    pub fn all_reconciled(&self) -> bool {
        self.reconciled == self.probes
            && self.rows_expected == self.rows_present
            && self.checksums_equal == self.probes
            && self.warmups_reconciled == self.warmups
    }

    /// One line: "N probes, N rows expected, N present, checksums equal, all reconciled".
    pub fn line(&self) -> String {
        let checksums = if self.checksums_equal == self.probes {
            "checksums equal".to_owned()
        } else {
            format!(
                "checksums DIFFER for {} of {} probes",
                self.probes - self.checksums_equal,
                self.probes
            )
        };
        let mut verdict = if self.reconciled == self.probes {
            "every probe reconciled".to_owned()
        } else {
            format!(
                "{} of {} probes did NOT reconcile",
                self.probes - self.reconciled,
                self.probes
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
        let warmups = if self.warmups > 0 {
            format!("; {} warm-ups not recorded", self.warmups)
        } else {
            String::new()
        };
        format!(
            "{} probes ({} refused, {} errors{warmups}); {} rows expected, {} present, {checksums}; {verdict}",
            self.probes, self.refused, self.errors, self.rows_expected, self.rows_present
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use d1bench_core::sql::plan;
    use d1bench_core::{RefusalKind, TextMix};

    fn probe(strategy: Strategy) -> ProbeRequest {
        ProbeRequest {
            probe_id: 4,
            strategy,
            columns: 10,
            rows: 95,
            row_bytes: 100,
            seed: 1,
            rows_per_statement: None,
            text: TextMix::default(),
            indexes: 0,
            debug_corrupt: None,
        }
    }

    /// What an honest Worker answers for a probe that succeeded.
    fn honest(probe: &ProbeRequest, plan: &Plan) -> ProbeResult {
        ProbeResult {
            probe_id: probe.probe_id,
            strategy: probe.strategy,
            columns: probe.columns,
            row_bytes: probe.row_bytes,
            rows_expected: probe.rows,
            rows_present: probe.rows,
            statements_planned: plan.inserts.len(),
            statements_sent: plan.inserts.len(),
            d1_calls: if probe.strategy == Strategy::PerRow {
                plan.inserts.len()
            } else {
                1
            },
            rows_per_statement: plan.rows_per_statement(),
            max_statement_bytes: plan.max_statement_bytes(),
            inside_ms: 1.0,
            d1_ms: 1.0,
            outcome: Outcome::Ok,
            refusal: None,
            error: None,
            served_by: None,
        }
    }

    #[test]
    fn an_honest_result_reconciles_for_every_strategy() {
        for strategy in Strategy::ALL {
            let p = probe(strategy);
            let plan = plan(&p);
            assert_eq!(check(&p, &plan, &honest(&p, &plan)), Ok(()));
        }
    }

    #[test]
    fn a_missing_row_is_caught() {
        let p = probe(Strategy::Bound);
        let plan = plan(&p);
        let mut result = honest(&p, &plan);
        result.rows_present -= 1;
        let err = check(&p, &plan, &result).unwrap_err();
        assert!(
            err.contains("rows present: expected 95, Worker reported 94"),
            "{err}"
        );
    }

    #[test]
    fn a_plan_that_differs_from_the_hosts_is_caught() {
        let p = probe(Strategy::Bound);
        let plan = plan(&p);
        let mut result = honest(&p, &plan);
        result.rows_per_statement = 11;
        assert!(
            check(&p, &plan, &result)
                .unwrap_err()
                .contains("rows per statement: expected 10")
        );
    }

    #[test]
    fn a_refused_batch_must_leave_nothing() {
        let p = probe(Strategy::Literal);
        let plan = plan(&p);
        let mut result = honest(&p, &plan);
        result.outcome = Outcome::Refused;
        result.refusal = Some(RefusalKind::StatementTooLong);
        result.rows_expected = 0;
        result.rows_present = 0;
        assert_eq!(check(&p, &plan, &result), Ok(()));
        result.rows_present = 3;
        assert!(
            check(&p, &plan, &result)
                .unwrap_err()
                .contains("rows present: expected 0")
        );
        result.rows_expected = 3;
        assert!(
            check(&p, &plan, &result)
                .unwrap_err()
                .contains("after a failed batch")
        );
    }

    /// What an honest target's verification answers: the checksum of the rows it holds.
    fn verified(probe: &ProbeRequest, rows: usize) -> Result<VerifyResult, String> {
        let generator = RowGenerator::new(probe.columns, probe.row_bytes, probe.seed, probe.text);
        Ok(VerifyResult {
            probe_id: probe.probe_id,
            checksum: Checksum::expected(&generator, rows),
        })
    }

    #[test]
    fn content_reconciles_when_the_checksums_agree_and_names_the_difference_otherwise() {
        let p = probe(Strategy::Literal);
        let plan = plan(&p);
        let result = honest(&p, &plan);
        let check = ContentCheck::of(&p, &result, verified(&p, 95));
        assert!(check.equal(), "{:?}", check.problem());
        assert_eq!(check.expected.rows, 95);

        // One row short, or one value changed: both show in the checksum.
        let short = ContentCheck::of(&p, &result, verified(&p, 94));
        assert!(!short.equal());
        let mut changed = verified(&p, 95).unwrap();
        changed.checksum.text_digest += 1;
        let changed = ContentCheck::of(&p, &result, Ok(changed));
        let problem = changed.problem().unwrap();
        assert!(
            problem.starts_with("content checksum: expected 95:"),
            "{problem}"
        );

        let failed = ContentCheck::of(&p, &result, Err("HTTP 500".into()));
        assert_eq!(
            failed.problem().unwrap(),
            "content checksum not computed: HTTP 500"
        );
        let mut other = verified(&p, 95).unwrap();
        other.probe_id = 99;
        assert!(!ContentCheck::of(&p, &result, Ok(other)).equal());
    }

    #[test]
    fn a_refused_batch_must_leave_an_empty_table() {
        let p = probe(Strategy::Bound);
        let plan = plan(&p);
        let mut result = honest(&p, &plan);
        result.outcome = Outcome::Refused;
        assert_eq!(rows_that_must_remain(&p, &result), 0);
        assert!(ContentCheck::of(&p, &result, verified(&p, 0)).equal());
        // A batch that left a single row behind was not atomic.
        assert!(!ContentCheck::of(&p, &result, verified(&p, 1)).equal());
    }

    #[test]
    fn per_row_stopped_early_keeps_the_rows_before_the_failure() {
        let p = probe(Strategy::PerRow);
        let plan = plan(&p);
        let mut result = honest(&p, &plan);
        result.outcome = Outcome::Error;
        result.statements_sent = 41;
        result.d1_calls = 41;
        result.rows_expected = 40;
        result.rows_present = 40;
        assert_eq!(check(&p, &plan, &result), Ok(()));
        assert_eq!(rows_that_must_remain(&p, &result), 40);
        assert!(ContentCheck::of(&p, &result, verified(&p, 40)).equal());
        result.rows_expected = 41;
        result.rows_present = 41;
        assert!(check(&p, &plan, &result).is_err());
    }

    #[test]
    fn totals_state_rows_and_checksums_and_any_mismatch_makes_the_run_invalid() {
        let mut totals = Totals::default();
        let row = crate::report::tests_support::row();
        totals.add(&row);
        totals.add_warmup(true);
        assert!(totals.all_reconciled());
        assert_eq!(
            totals.line(),
            "1 probes (0 refused, 0 errors; 1 warm-ups not recorded); 100 rows expected, 100 present, \
             checksums equal; every probe reconciled"
        );
        let mut corrupted = row.clone();
        corrupted.checksum_equal = false;
        corrupted.reconciled = false;
        totals.add(&corrupted);
        assert!(!totals.all_reconciled());
        assert!(
            totals.line().ends_with(
                "checksums DIFFER for 1 of 2 probes; 1 of 2 probes did NOT reconcile: the run is INVALID"
            ),
            "{}",
            totals.line()
        );
        let mut warm = Totals::default();
        warm.add_warmup(false);
        assert!(!warm.all_reconciled());
        assert!(warm.line().contains("1 of 1 warm-ups did NOT reconcile"));
        assert_eq!(totals.merged(&warm).warmups, 2);
    }
}
