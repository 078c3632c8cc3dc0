//! Ladders: the rung a ladder sends to a target, the SQL every rung runs, and what it answers.
//!
//! A ladder climbs one parameter (queries per invocation, statements per batch, statement
//! bytes, ...) one rung at a time until D1 refuses. Each rung runs in three steps, each its own
//! Worker invocation so that only the measured calls count against the invocation's budget:
//! [`Step::Prepare`] creates the rung's table, [`Step::Climb`] sends the measured calls,
//! [`Step::Finish`] counts the rows present and drops the table. The SQL of all three is planned
//! in [`rung_sql`] ([`plan`] is one `match` over the kinds), so the Worker and the in-process
//! SQLite target run exactly the same statements; the kinds are in [`kind`]. This file holds a
//! rung's request and its validation, and what each step answers.

mod kind;
mod rung_sql;

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::limits;
use crate::probe::Outcome;
use crate::refusal::RefusalKind;

pub use kind::{Documented, LadderKind};
pub use rung_sql::{
    Call, Dispatch, JSON_PAYLOAD_ROW_BYTES, MIN_JSON_PAYLOAD_BYTES, RESULT_COLUMN,
    RESULT_ROW_BYTES, Read, RungPlan, json_payload, json_payload_rows, padding, plan,
};

/// How batch-accounting sends its statements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CallMode {
    /// Each statement its own D1 call.
    OneAtATime,
    /// All statements in one `db.batch()`.
    OneBatch,
    /// The statements split evenly over `batches` `db.batch()` calls.
    Batches,
}

impl CallMode {
    pub fn name(self) -> &'static str {
        match self {
            CallMode::OneAtATime => "one-at-a-time",
            CallMode::OneBatch => "one-batch",
            CallMode::Batches => "batches",
        }
    }
}

/// What the padding text of statement-length and like-pattern is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TextKind {
    /// One byte per character.
    Ascii,
    /// Three bytes per character (`日`), so bytes and characters part ways.
    Multibyte,
}

impl TextKind {
    pub fn name(self) -> &'static str {
        match self {
            TextKind::Ascii => "ascii",
            TextKind::Multibyte => "multibyte",
        }
    }
}

/// What a ladder holds fixed while its value climbs; which fields a ladder needs is checked by
/// [`RungRequest::validate`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Held {
    /// Columns of the table (param-ceiling).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub columns: Option<usize>,
    /// How the statements are sent (batch-accounting).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<CallMode>,
    /// Number of `db.batch()` calls (batch-accounting with mode `batches`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batches: Option<usize>,
    /// What padding text is made of (statement-length, like-pattern; default ASCII).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<TextKind>,
    /// Recursive-CTE steps per millisecond, measured by a calibration rung (query-duration).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps_per_ms: Option<u64>,
}

impl Held {
    /// `columns=8, mode=one-batch`: how the CSV and the summary name a climb.
    pub fn label(&self) -> String {
        let mut parts = Vec::new();
        if let Some(c) = self.columns {
            parts.push(format!("columns={c}"));
        }
        if let Some(m) = self.mode {
            parts.push(format!("mode={}", m.name()));
        }
        if let Some(b) = self.batches {
            parts.push(format!("batches={b}"));
        }
        if let Some(t) = self.text {
            parts.push(format!("text={}", t.name()));
        }
        if let Some(s) = self.steps_per_ms {
            parts.push(format!("steps-per-ms={s}"));
        }
        parts.join(", ")
    }
}

/// Largest number of recursive-CTE steps per millisecond a calibration may report.
pub const MAX_STEPS_PER_MS: u64 = 1_000_000;

/// One rung: the ladder, the value it tries, and what is held fixed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RungRequest {
    /// Names the rung's table (`r_<rung_id>`); unique within a run.
    pub rung_id: u64,
    pub ladder: LadderKind,
    /// The climbed parameter, in [`LadderKind::unit`].
    pub value: usize,
    #[serde(default)]
    pub held: Held,
}

/// Which step of a rung a request asks for; each is its own invocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Step {
    /// Create the rung's table (nothing for the columns ladder, whose CREATE is measured).
    Prepare,
    /// Send the measured calls.
    Climb,
    /// Count the rows present and drop the table.
    Finish,
}

/// The body of `POST /rung`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RungCall {
    pub step: Step,
    pub rung: RungRequest,
}

/// A rung that cannot be planned, naming the offending field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RungError {
    pub field: &'static str,
    pub message: String,
}

impl fmt::Display for RungError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}`: {}", self.field, self.message)
    }
}

impl std::error::Error for RungError {}

impl RungRequest {
    pub fn table(&self) -> String {
        format!("r_{}", self.rung_id)
    }

    /// Checks the value and that exactly the held fields this ladder uses are set.
    pub fn validate(&self) -> Result<(), RungError> {
        let fail = |field, message: String| Err(RungError { field, message });
        let (lo, hi) = (self.ladder.min_value(), self.ladder.max_value());
        if !(lo..=hi).contains(&self.value) {
            return fail(
                "value",
                format!(
                    "{} takes {lo} to {hi} {}, got {}",
                    self.ladder,
                    self.ladder.unit(),
                    self.value
                ),
            );
        }
        let held = &self.held;
        let uses = |field: &str| -> bool {
            matches!(
                (self.ladder, field, held.mode),
                (LadderKind::ParamCeiling, "columns", _)
                    | (LadderKind::BatchAccounting, "mode", _)
                    | (
                        LadderKind::BatchAccounting,
                        "batches",
                        Some(CallMode::Batches)
                    )
                    | (LadderKind::StatementLength, "text", _)
                    | (LadderKind::LikePattern, "text", _)
                    | (LadderKind::QueryDuration, "steps-per-ms", _)
            )
        };
        let set = [
            ("columns", held.columns.is_some()),
            ("mode", held.mode.is_some()),
            ("batches", held.batches.is_some()),
            ("text", held.text.is_some()),
            ("steps-per-ms", held.steps_per_ms.is_some()),
        ];
        for (field, is_set) in set {
            let optional = field == "text";
            if is_set && !uses(field) {
                return fail(
                    held_field(field),
                    format!(
                        "{} does not hold `{field}` fixed; leave it unset",
                        self.ladder
                    ),
                );
            }
            if !is_set && uses(field) && !optional {
                return fail(
                    held_field(field),
                    format!("{} needs `{field}`", self.ladder),
                );
            }
        }
        if let Some(c) = held.columns
            && !(1..=limits::MAX_COLUMNS).contains(&c)
        {
            return fail(
                "held.columns",
                format!("must be 1 to {}, got {c}", limits::MAX_COLUMNS),
            );
        }
        if let Some(b) = held.batches
            && !(1..=self.value).contains(&b)
        {
            return fail(
                "held.batches",
                format!("must be 1 to the {} statements, got {b}", self.value),
            );
        }
        if let Some(s) = held.steps_per_ms
            && !(1..=MAX_STEPS_PER_MS).contains(&s)
        {
            return fail(
                "held.steps-per-ms",
                format!("must be 1 to {MAX_STEPS_PER_MS}, got {s}"),
            );
        }
        if self.ladder == LadderKind::ParamCeiling {
            let params = self.value.saturating_mul(held.columns.unwrap_or(1));
            if params > MAX_RUNG_PARAMETERS {
                return fail(
                    "value",
                    format!(
                        "{} rows × {} columns = {params} parameters; a rung binds at most {MAX_RUNG_PARAMETERS}",
                        self.value,
                        held.columns.unwrap_or(1)
                    ),
                );
            }
        }
        Ok(())
    }
}

fn held_field(field: &str) -> &'static str {
    match field {
        "columns" => "held.columns",
        "mode" => "held.mode",
        "batches" => "held.batches",
        "text" => "held.text",
        _ => "held.steps-per-ms",
    }
}

/// Most values one param-ceiling rung binds (SQLite's own compile-time ceiling is 32,766).
pub const MAX_RUNG_PARAMETERS: usize = 32_766;

/// What step [`Step::Prepare`] answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrepareResult {
    pub rung_id: u64,
    /// The target's error text when the table could not be created.
    pub error: Option<String>,
}

/// What step [`Step::Climb`] measured, inside one invocation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RungResult {
    pub rung_id: u64,
    /// D1 calls the plan holds.
    pub calls_planned: usize,
    /// Statements the plan holds.
    pub statements_planned: usize,
    /// UTF-8 bytes of the longest statement as the target planned it.
    pub max_statement_bytes: usize,
    /// D1 calls that succeeded before the first failure (all of them when none failed).
    pub calls_completed: usize,
    /// Statements in the calls that succeeded.
    pub statements_completed: usize,
    /// Rows of the calls that succeeded: what must be present afterwards.
    pub rows_acknowledged: usize,
    /// Milliseconds on the target's clock around the measured calls.
    pub inside_ms: f64,
    /// Milliseconds D1 reported in `meta.duration`, summed over the succeeded statements
    /// (0 where the target has no such clock).
    pub d1_ms: f64,
    pub outcome: Outcome,
    /// The limit that refused, or `other` for an error text no rule knows.
    pub refusal: Option<RefusalKind>,
    /// The target's error text, verbatim.
    pub error: Option<String>,
    /// UTF-8 bytes of text the reads of the completed calls returned, counted row by row where
    /// the rows arrived (result-size); `None` for a rung that reads nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_bytes: Option<usize>,
}

/// What step [`Step::Finish`] found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FinishResult {
    pub rung_id: u64,
    /// Whether the rung's table existed (false after a refused CREATE TABLE).
    pub table_exists: bool,
    /// Rows counted in the table (0 when it did not exist).
    pub rows_present: usize,
    /// The target's error text when counting or dropping failed.
    pub error: Option<String>,
}

/// Tallies the calls of a climb as they complete; one definition for every target.
#[derive(Debug, Clone, Default)]
pub struct Tally {
    calls_completed: usize,
    d1_ms: f64,
    result_bytes: usize,
    error: Option<String>,
}

impl Tally {
    /// A call succeeded; `d1_ms` is D1's duration summed over its statements.
    pub fn succeeded(&mut self, d1_ms: f64) {
        self.calls_completed += 1;
        self.d1_ms += d1_ms;
    }

    /// A read succeeded and its rows held `bytes` bytes of text, as counted where they arrived;
    /// call [`Tally::succeeded`] for it too.
    pub fn returned(&mut self, bytes: usize) {
        self.result_bytes += bytes;
    }

    /// A call failed with `text`. In order ([`Dispatch::InOrder`]) the climb stops here; all at
    /// once ([`Dispatch::AllAtOnce`]) the others still count, and the first failure's text, in
    /// the plan's order, is the one kept.
    pub fn failed(&mut self, text: String) {
        self.error.get_or_insert(text);
    }

    pub fn into_result(self, rung_id: u64, plan: &RungPlan, inside_ms: f64) -> RungResult {
        let (statements_completed, rows_acknowledged) = plan.completed(self.calls_completed);
        let (outcome, refusal) = classify(self.error.as_deref());
        RungResult {
            rung_id,
            calls_planned: plan.calls.len(),
            statements_planned: plan.statements(),
            max_statement_bytes: plan.max_statement_bytes(),
            calls_completed: self.calls_completed,
            statements_completed,
            rows_acknowledged,
            inside_ms,
            d1_ms: self.d1_ms,
            outcome,
            refusal,
            error: self.error,
            result_bytes: plan.reads().then_some(self.result_bytes),
        }
    }
}

/// The outcome of an error text (or of none): a text [`RefusalKind::classify`] knows is a
/// refusal (a limit, or a transient refusal such as D1's overload), anything else an error.
pub fn classify(error: Option<&str>) -> (Outcome, Option<RefusalKind>) {
    match error {
        None => (Outcome::Ok, None),
        Some(text) => match RefusalKind::classify(text) {
            RefusalKind::Other => (Outcome::Error, Some(RefusalKind::Other)),
            kind => (Outcome::Refused, Some(kind)),
        },
    }
}

#[cfg(test)]
mod tests;
