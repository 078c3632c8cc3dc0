//! The ladders d1bench knows ([`LadderKind`]): each one's name, unit, the documented limit it
//! climbs towards and where its rungs start and stop, and the refusal that ends it.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::limits;
use crate::refusal::RefusalKind;

use super::MIN_JSON_PAYLOAD_BYTES;

/// The ladders d1bench knows: each climbs one parameter towards one documented limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LadderKind {
    /// K one-row INSERTs, each its own D1 call, in one invocation.
    QueryBudget,
    /// N one-row INSERTs sent one at a time, in one `db.batch()`, or in several batches.
    BatchAccounting,
    /// N one-row INSERTs in one `db.batch()`.
    BatchCeiling,
    /// One bound INSERT of R rows × C columns (C held fixed).
    ParamCeiling,
    /// One INSERT whose SQL text is exactly N UTF-8 bytes.
    StatementLength,
    /// CREATE TABLE with N columns, then one row into it.
    Columns,
    /// One INSERT of one bound text value of N bytes.
    RowSize,
    /// One `INSERT ... SELECT ... FROM json_each(?)` whose one bound JSON array is N bytes.
    JsonPayload,
    /// One INSERT of `max(1, 2, ..., N)`.
    FunctionArgs,
    /// One INSERT of `subject LIKE pattern` with a pattern of N bytes.
    LikePattern,
    /// One INSERT of a recursive CTE's count, sized to run about N milliseconds.
    QueryDuration,
    /// One SELECT whose rows hold N bytes of text, every row read back and its bytes counted.
    ResultSize,
    /// N one-row INSERTs, each its own D1 call, all started before any is awaited.
    ConcurrentCalls,
}

impl LadderKind {
    pub const ALL: [LadderKind; 13] = [
        LadderKind::QueryBudget,
        LadderKind::BatchAccounting,
        LadderKind::BatchCeiling,
        LadderKind::ParamCeiling,
        LadderKind::StatementLength,
        LadderKind::Columns,
        LadderKind::RowSize,
        LadderKind::JsonPayload,
        LadderKind::FunctionArgs,
        LadderKind::LikePattern,
        LadderKind::QueryDuration,
        LadderKind::ResultSize,
        LadderKind::ConcurrentCalls,
    ];

    pub fn name(self) -> &'static str {
        match self {
            LadderKind::QueryBudget => "query-budget",
            LadderKind::BatchAccounting => "batch-accounting",
            LadderKind::BatchCeiling => "batch-ceiling",
            LadderKind::ParamCeiling => "param-ceiling",
            LadderKind::StatementLength => "statement-length",
            LadderKind::Columns => "columns",
            LadderKind::RowSize => "row-size",
            LadderKind::JsonPayload => "json-payload",
            LadderKind::FunctionArgs => "function-args",
            LadderKind::LikePattern => "like-pattern",
            LadderKind::QueryDuration => "query-duration",
            LadderKind::ResultSize => "result-size",
            LadderKind::ConcurrentCalls => "concurrent-calls",
        }
    }

    /// What the rung's value counts, with its unit.
    pub fn unit(self) -> &'static str {
        match self {
            LadderKind::QueryBudget => "queries",
            LadderKind::BatchAccounting | LadderKind::BatchCeiling => "statements",
            LadderKind::ParamCeiling => "rows per statement",
            LadderKind::StatementLength => "statement bytes",
            LadderKind::Columns => "columns",
            LadderKind::RowSize => "value bytes",
            LadderKind::JsonPayload => "payload bytes",
            LadderKind::FunctionArgs => "arguments",
            LadderKind::LikePattern => "pattern bytes",
            LadderKind::QueryDuration => "ms",
            LadderKind::ResultSize => "result bytes",
            LadderKind::ConcurrentCalls => "simultaneous calls",
        }
    }

    /// The documented limit this ladder looks for, as the parity table names it.
    pub fn limit(self) -> &'static str {
        match self {
            LadderKind::QueryBudget => "queries per Worker invocation",
            LadderKind::BatchAccounting => "what a `db.batch()` costs of the query budget",
            LadderKind::BatchCeiling => "statements per `db.batch()`",
            LadderKind::ParamCeiling => "bound parameters per statement",
            LadderKind::StatementLength => "SQL statement length",
            LadderKind::Columns => "columns per table",
            LadderKind::RowSize => "string, BLOB or row size",
            LadderKind::JsonPayload => "one bound JSON payload (`json_each(?)`), a string",
            LadderKind::FunctionArgs => "arguments per SQL function",
            LadderKind::LikePattern => "LIKE/GLOB pattern length",
            LadderKind::QueryDuration => "query duration",
            LadderKind::ResultSize => "result size of one query",
            LadderKind::ConcurrentCalls => "simultaneous open connections per Worker invocation",
        }
    }

    /// The documented value, in this ladder's unit when it has one.
    pub fn documented(self) -> Documented {
        let exact = |value: usize, text: &'static str| Documented {
            value: Some(value),
            text,
        };
        match self {
            // Two documents disagree: D1's limits page, and the Workers changelog of 2026-02-11
            // (subrequests, which D1 calls may or may not count as). The value compared with is
            // D1's own page's.
            LadderKind::QueryBudget => exact(
                limits::QUERIES_PER_INVOCATION_PAID,
                "1,000 (Paid) / 50 (Free) by D1's limits page; 10,000 (Paid, up to 10,000,000 \
                 with `limits.subrequests`) / 1,000 (Free) by the Workers changelog of 2026-02-11",
            ),
            LadderKind::BatchAccounting => Documented {
                value: None,
                text: "not stated",
            },
            LadderKind::BatchCeiling => Documented {
                value: None,
                text: "no count; the batch must finish in time",
            },
            LadderKind::ParamCeiling => exact(limits::MAX_BOUND_PARAMETERS, "100"),
            LadderKind::StatementLength => exact(limits::MAX_STATEMENT_BYTES, "100,000 bytes"),
            LadderKind::Columns => exact(limits::MAX_COLUMNS, "100"),
            LadderKind::RowSize => exact(limits::MAX_ROW_BYTES, "2,000,000 bytes"),
            LadderKind::JsonPayload => exact(limits::MAX_STRING_BYTES, "2,000,000 bytes"),
            LadderKind::FunctionArgs => exact(limits::MAX_FUNCTION_ARGS, "32"),
            LadderKind::LikePattern => exact(limits::MAX_LIKE_PATTERN_BYTES, "50 bytes"),
            LadderKind::QueryDuration => exact(limits::MAX_QUERY_DURATION_MS, "30 s"),
            LadderKind::ResultSize => exact(limits::MAX_RESULT_BYTES, "50 MB"),
            // A count of connections that makes calls past it wait, not fail: no value a
            // refusal could be compared with.
            LadderKind::ConcurrentCalls => Documented {
                value: None,
                text: "6, counting only connections still waiting for response headers (since \
                       2026-04-09); calls past them wait",
            },
        }
    }

    /// The refusal a climb past the documented limit should meet. A batch and a long query meet
    /// D1's clock, not the Worker's: a climb stopped by the Worker's CPU time or by D1's queue
    /// was stopped by something else. `None` where no refusal's text is known: D1 documents the
    /// 50 MB result size without the text a larger result answers (any classified refusal is
    /// then taken as the limit's), and calls past six simultaneous connections wait, they are
    /// not refused (any refusal is then what the climb found).
    pub fn expected_refusal(self) -> Option<RefusalKind> {
        Some(match self {
            LadderKind::QueryBudget | LadderKind::BatchAccounting => RefusalKind::QueryBudget,
            LadderKind::BatchCeiling | LadderKind::QueryDuration => RefusalKind::QueryTimeout,
            LadderKind::ParamCeiling => RefusalKind::TooManyVariables,
            LadderKind::StatementLength => RefusalKind::StatementTooLong,
            LadderKind::Columns => RefusalKind::TooManyColumns,
            LadderKind::RowSize | LadderKind::JsonPayload => RefusalKind::StringOrBlobTooBig,
            LadderKind::FunctionArgs => RefusalKind::TooManyFunctionArgs,
            LadderKind::LikePattern => RefusalKind::LikePatternTooComplex,
            LadderKind::ResultSize | LadderKind::ConcurrentCalls => return None,
        })
    }

    /// Whether the in-process SQLite target can climb it: the limits of SQLite itself, and the
    /// result size, which SQLite does not limit (its climb there is the baseline's time to hand
    /// the same bytes back). The query budget, the batch limits and the simultaneous calls
    /// belong to the Workers runtime and D1's service: one SQLite connection has no concurrency.
    pub fn runs_on_sqlite(self) -> bool {
        !matches!(
            self,
            LadderKind::QueryBudget
                | LadderKind::BatchAccounting
                | LadderKind::BatchCeiling
                | LadderKind::QueryDuration
                | LadderKind::ConcurrentCalls
        )
    }

    /// Largest value a rung may ask for: keeps one invocation inside a Worker's memory and time.
    pub fn max_value(self) -> usize {
        match self {
            LadderKind::QueryBudget => 100_000,
            LadderKind::BatchAccounting => 100_000,
            LadderKind::BatchCeiling => 1_000_000,
            LadderKind::ParamCeiling => 100_000,
            LadderKind::StatementLength => 16 * 1024 * 1024,
            LadderKind::Columns => 32_767,
            LadderKind::RowSize | LadderKind::JsonPayload => 64 * 1024 * 1024,
            LadderKind::FunctionArgs => 10_000,
            LadderKind::LikePattern => 1_000_000,
            LadderKind::QueryDuration => 600_000,
            // Twice 64 MiB: past the documented 50 MB with room, inside a Worker's memory
            // only just (what comes back is held as JavaScript strings).
            LadderKind::ResultSize => 128 * 1024 * 1024,
            // Past the Paid plan's query budget a rung would meet the budget, not concurrency.
            LadderKind::ConcurrentCalls => limits::QUERIES_PER_INVOCATION_PAID,
        }
    }

    /// Smallest value a rung may ask for.
    pub fn min_value(self) -> usize {
        match self {
            // `max()` with one argument is the aggregate, not the scalar function.
            LadderKind::FunctionArgs => 2,
            LadderKind::QueryDuration => 0,
            // Above the statement's own head and tail at any rung id.
            LadderKind::StatementLength => 64,
            LadderKind::JsonPayload => MIN_JSON_PAYLOAD_BYTES,
            _ => 1,
        }
    }
}

impl fmt::Display for LadderKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for LadderKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        LadderKind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| {
                let names: Vec<_> = LadderKind::ALL.iter().map(|k| k.name()).collect();
                format!(
                    "unknown ladder `{s}`; expected one of: {}",
                    names.join(", ")
                )
            })
    }
}

/// A documented limit: its value in the ladder's unit (when it is one number) and as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Documented {
    pub value: Option<usize>,
    pub text: &'static str,
}
