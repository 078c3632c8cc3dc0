//! Reconciliation: every probe's result checked against the host's own plan of the same probe,
//! and the rows present checked against the rows D1 acknowledged. A time for writes that never
//! happened is worthless, so a probe that fails any check makes its run invalid.

use d1bench_core::{Outcome, Plan, ProbeRequest, ProbeResult, Strategy};
use serde::{Deserialize, Serialize};

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
    /// Probes measured.
    pub probes: usize,
    /// Probes whose every check passed.
    pub reconciled: usize,
    /// Rows D1 acknowledged, summed.
    pub rows_expected: usize,
    /// Rows counted in the tables, summed.
    pub rows_present: usize,
    /// Probes D1 refused on a known limit.
    pub refused: usize,
    /// Probes that ended in an error (D1's or the harness's).
    pub errors: usize,
}

impl Totals {
    pub fn add(&mut self, row: &crate::report::ResultRow) {
        self.probes += 1;
        self.reconciled += usize::from(row.reconciled);
        self.rows_expected += row.rows_expected;
        self.rows_present += row.rows_present;
        self.refused += usize::from(row.outcome == "refused");
        self.errors += usize::from(row.outcome == "error");
    }

    pub fn all_reconciled(&self) -> bool {
        self.reconciled == self.probes && self.rows_expected == self.rows_present
    }

    /// One line: "N probes, N rows expected, N present, all reconciled".
    pub fn line(&self) -> String {
        let verdict = if self.all_reconciled() {
            "every probe reconciled".to_owned()
        } else {
            format!(
                "{} of {} probes did NOT reconcile: the run is invalid",
                self.probes - self.reconciled,
                self.probes
            )
        };
        format!(
            "{} probes ({} refused, {} errors); {} rows expected, {} present; {verdict}",
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
        result.rows_expected = 41;
        result.rows_present = 41;
        assert!(check(&p, &plan, &result).is_err());
    }
}
