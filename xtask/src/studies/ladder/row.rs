//! One rung of a ladder as measured (a row of a ladder run's `results.csv`) and what one climb
//! found (a row of `findings.csv`).

use d1bench_core::ladder::{LadderKind, Step};
use d1bench_core::{Outcome, RefusalKind};
use serde::{Deserialize, Serialize};

use crate::base::TargetKind;
use crate::base::text::serde_as_text;
use crate::studies::ladder::Role;

/// One rung as measured: a row of `results.csv`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RungRow {
    pub ladder: LadderKind,
    pub target: TargetKind,
    /// Index of the climb within the run, from 0.
    pub climb: usize,
    /// What the climb held fixed (`columns=8`, `mode=one-batch`, ...).
    pub held: String,
    pub rung_id: u64,
    pub role: Role,
    /// The climbed value, in `unit`.
    pub value: usize,
    pub unit: String,
    pub outcome: Outcome,
    /// The limit that refused, `other`, or empty.
    pub refusal: Option<RefusalKind>,
    /// The target's error text, verbatim; empty when none.
    pub error: String,
    /// The step that failed; empty when none did.
    pub failed_step: Option<Step>,
    pub calls_planned: usize,
    /// D1 calls that succeeded before the first failure.
    pub calls_completed: usize,
    pub statements_planned: usize,
    /// Statements in the calls that succeeded: how much work completed before a refusal.
    pub statements_completed: usize,
    /// Rows of the calls that succeeded.
    pub rows_acknowledged: usize,
    /// Rows counted in the table afterwards, in a separate invocation.
    pub rows_present: usize,
    pub table_exists: bool,
    /// UTF-8 bytes of the longest statement.
    pub max_statement_bytes: usize,
    /// Characters of the longest statement.
    pub max_statement_chars: usize,
    /// Milliseconds on the xtask's clock around the measured step.
    pub outside_ms: f64,
    /// Milliseconds on the target's clock around the measured calls.
    pub inside_ms: f64,
    /// Milliseconds D1 reported (`meta.duration`), summed; 0 where the target has no such clock.
    pub d1_ms: f64,
    pub reconciled: bool,
    /// Why the rung did not reconcile; empty when it did.
    pub reconcile_note: String,
    /// The target gave no usable answer to a step: no verdict on the limit can rest on it.
    #[serde(default)]
    pub target_failed: bool,
    /// The largest the Worker's isolate got while the measured request ran, in bytes: V8's heap
    /// in use plus its ArrayBuffers (the wasm memory), sampled through the inspector
    /// (`targets/local/heap.rs`); empty where it is not measured (sqlite, remote, a results.csv
    /// written before it was).
    #[serde(default)]
    pub isolate_heap_peak_bytes: Option<u64>,
    /// UTF-8 bytes of text the rung's reads returned, counted where the rows arrived
    /// (result-size); empty for a rung that reads nothing.
    #[serde(default)]
    pub result_bytes: Option<usize>,
}

impl RungRow {
    pub fn failed(&self) -> bool {
        self.outcome != Outcome::Ok
    }
}

impl crate::records::Record for RungRow {
    fn outcome(&self) -> Outcome {
        self.outcome
    }
    fn target_failed(&self) -> bool {
        self.target_failed
    }
    fn reconciled(&self) -> bool {
        self.reconciled
    }
    fn reconcile_note(&self) -> &str {
        &self.reconcile_note
    }
    fn rows(&self) -> (usize, usize) {
        (self.rows_acknowledged, self.rows_present)
    }
    fn checksum_equal(&self) -> Option<bool> {
        None
    }
    fn describe(&self) -> String {
        format!(
            "{} {} {} {} {} {}: {}{}",
            self.target,
            self.ladder,
            self.held,
            self.role.name(),
            self.value,
            self.unit,
            self.outcome,
            self.refusal.map_or(String::new(), |r| format!(" ({r})")),
        )
    }
}

/// What one climb found: a row of `findings.csv`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClimbFinding {
    pub ladder: LadderKind,
    pub target: TargetKind,
    pub climb: usize,
    pub held: String,
    /// The held column count (param-ceiling), for the chart.
    pub columns: Option<usize>,
    pub unit: String,
    /// The largest value that succeeded below the first failure.
    pub last_ok: Option<usize>,
    /// The smallest value that failed.
    pub first_failed: Option<usize>,
    /// The largest value tried.
    pub max_tried: Option<usize>,
    /// How the first failure ended; empty without one.
    pub outcome: Option<Outcome>,
    pub refusal: Option<RefusalKind>,
    /// The first failure's error text, verbatim.
    pub error: String,
    /// Work completed before the first failure: statements in the calls that succeeded.
    pub statements_completed: Option<usize>,
    /// Whether every confirmation rung failed too; empty when none ran.
    pub confirmed: Option<bool>,
    /// Why the climb ended.
    pub stopped: Stop,
    /// The clocks of the largest success (ms).
    pub ok_outside_ms: Option<f64>,
    pub ok_inside_ms: Option<f64>,
    pub ok_d1_ms: Option<f64>,
    pub rungs: usize,
    /// Whether every rung of the climb reconciled.
    pub reconciled: bool,
}

/// Why a climb ended, as findings.csv and the reports say it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    /// A rung failed (refused or not): the climb found its first failure.
    Refused,
    /// Every rung succeeded up to the ladder's cap, the largest value given.
    NoRefusalUpToCap(usize),
    /// Every rung tried succeeded, the cap not reached.
    NoRefusal,
    /// The climb's time budget, in seconds, was spent.
    TimeBudget(u64),
    /// The calibration rung failed, with this error text.
    CalibrationFailed(String),
    /// The target gave no answer, with this error text.
    NoAnswer(String),
}

impl Stop {
    const CAP: (&str, &str) = ("no refusal up to the cap (", ")");
    const BUDGET: (&str, &str) = ("time budget of ", " s spent");
    const CALIBRATION: &str = "the calibration rung failed: ";
    const NO_ANSWER: &str = "the target gave no answer: ";
}

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Stop::Refused => f.write_str("refused"),
            Stop::NoRefusalUpToCap(max) => write!(f, "{}{max}{}", Stop::CAP.0, Stop::CAP.1),
            Stop::NoRefusal => f.write_str("no refusal"),
            Stop::TimeBudget(s) => write!(f, "{}{s}{}", Stop::BUDGET.0, Stop::BUDGET.1),
            Stop::CalibrationFailed(e) => write!(f, "{}{e}", Stop::CALIBRATION),
            Stop::NoAnswer(e) => write!(f, "{}{e}", Stop::NO_ANSWER),
        }
    }
}

impl std::str::FromStr for Stop {
    type Err = String;
    /// The text [`Stop`]'s `Display` writes.
    fn from_str(s: &str) -> Result<Stop, String> {
        let between = |(before, after): (&str, &str)| s.strip_prefix(before)?.strip_suffix(after);
        if s == "refused" {
            Ok(Stop::Refused)
        } else if s == "no refusal" {
            Ok(Stop::NoRefusal)
        } else if let Some(max) = between(Stop::CAP).and_then(|n| n.parse().ok()) {
            Ok(Stop::NoRefusalUpToCap(max))
        } else if let Some(secs) = between(Stop::BUDGET).and_then(|n| n.parse().ok()) {
            Ok(Stop::TimeBudget(secs))
        } else if let Some(e) = s.strip_prefix(Stop::CALIBRATION) {
            Ok(Stop::CalibrationFailed(e.to_owned()))
        } else if let Some(e) = s.strip_prefix(Stop::NO_ANSWER) {
            Ok(Stop::NoAnswer(e.to_owned()))
        } else {
            Err(format!(
                "`{s}` is not why a climb stopped: expected `refused`, `no refusal`, \
                 `{}N{}`, `{}N{}`, `{}...` or `{}...`",
                Stop::CAP.0,
                Stop::CAP.1,
                Stop::BUDGET.0,
                Stop::BUDGET.1,
                Stop::CALIBRATION,
                Stop::NO_ANSWER
            ))
        }
    }
}

serde_as_text!(Stop);

impl ClimbFinding {
    /// The measured duration of the largest success: D1's clock when it has one.
    pub fn ok_ms(&self) -> Option<f64> {
        match (self.ok_d1_ms, self.ok_inside_ms) {
            (Some(d1), _) if d1 > 0.0 => Some(d1),
            (_, inside) => inside,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_stop_reads_back_as_written() {
        for stop in [
            Stop::Refused,
            Stop::NoRefusalUpToCap(2_000),
            Stop::NoRefusal,
            Stop::TimeBudget(600),
            Stop::CalibrationFailed("D1_ERROR: timeout".into()),
            Stop::NoAnswer("connection refused".into()),
        ] {
            assert_eq!(stop.to_string().parse::<Stop>(), Ok(stop.clone()), "{stop}");
        }
        assert_eq!(
            Stop::NoRefusalUpToCap(20).to_string(),
            "no refusal up to the cap (20)"
        );
        assert_eq!(
            Stop::TimeBudget(60).to_string(),
            "time budget of 60 s spent"
        );
        let err = "stopped".parse::<Stop>().unwrap_err();
        assert!(
            err.starts_with("`stopped` is not why a climb stopped"),
            "{err}"
        );
    }
}
