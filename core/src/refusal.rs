//! One classifier that maps D1's error texts to the limit that refused.
//!
//! The rules match fragments of the texts the local runtime (workerd's D1, i.e. SQLite) and
//! production D1 are known to answer with. A text no rule knows is [`RefusalKind::Other`] and the
//! caller keeps the text: nothing is lost, and the outcome is an error rather than a refusal.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The limit a D1 refusal names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RefusalKind {
    /// More bound parameters than the statement may carry (documented: 100).
    TooManyVariables,
    /// SQL text longer than the statement limit (documented: 100,000 bytes).
    StatementTooLong,
    /// More columns than a table may have (documented: 100).
    TooManyColumns,
    /// A string, BLOB or row over the size limit (documented: 2,000,000 bytes).
    StringOrBlobTooBig,
    /// More D1 calls than one Worker invocation may make (documented: 1,000 Paid, 50 Free).
    QueryBudget,
    /// More arguments than an SQL function may take (documented: 32).
    TooManyFunctionArgs,
    /// A LIKE or GLOB pattern over the size limit (documented: 50 bytes).
    LikePatternTooComplex,
    /// A query or call that ran out of time (documented: 30 s per query).
    TimeLimit,
    /// A text no rule knows.
    Other,
}

/// Each rule: a fragment (matched case-insensitively) and the kind it means. Order matters:
/// "statement too long" carries SQLITE_TOOBIG too, so it is tried before the generic size rule.
const RULES: &[(&str, RefusalKind)] = &[
    ("too many sql variables", RefusalKind::TooManyVariables),
    ("statement too long", RefusalKind::StatementTooLong),
    ("too many columns", RefusalKind::TooManyColumns),
    ("string or blob too big", RefusalKind::StringOrBlobTooBig),
    (
        "too many api requests by single worker invocation",
        RefusalKind::QueryBudget,
    ),
    (
        "too many arguments on function",
        RefusalKind::TooManyFunctionArgs,
    ),
    (
        "like or glob pattern too complex",
        RefusalKind::LikePatternTooComplex,
    ),
    ("exceeded maximum duration", RefusalKind::TimeLimit),
    ("exceeded timeout", RefusalKind::TimeLimit),
    ("query timed out", RefusalKind::TimeLimit),
    ("sqlite_toobig", RefusalKind::StringOrBlobTooBig),
];

impl RefusalKind {
    /// Classifies an error text; [`RefusalKind::Other`] when no rule matches.
    pub fn classify(text: &str) -> RefusalKind {
        let lower = text.to_lowercase();
        RULES
            .iter()
            .find(|(fragment, _)| lower.contains(fragment))
            .map_or(RefusalKind::Other, |&(_, kind)| kind)
    }

    pub fn name(self) -> &'static str {
        match self {
            RefusalKind::TooManyVariables => "too-many-variables",
            RefusalKind::StatementTooLong => "statement-too-long",
            RefusalKind::TooManyColumns => "too-many-columns",
            RefusalKind::StringOrBlobTooBig => "string-or-blob-too-big",
            RefusalKind::QueryBudget => "query-budget",
            RefusalKind::TooManyFunctionArgs => "too-many-function-args",
            RefusalKind::LikePatternTooComplex => "like-pattern-too-complex",
            RefusalKind::TimeLimit => "time-limit",
            RefusalKind::Other => "other",
        }
    }
}

impl fmt::Display for RefusalKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::RefusalKind::{self, *};

    /// Texts seen verbatim from the local runtime (wrangler 4.164 / workerd 2026-11-17) and the
    /// production texts known from Cloudflare's documentation.
    const KNOWN: &[(&str, RefusalKind)] = &[
        (
            "D1_ERROR: too many SQL variables at offset 412: SQLITE_ERROR",
            TooManyVariables,
        ),
        (
            "D1_ERROR: statement too long: SQLITE_TOOBIG",
            StatementTooLong,
        ),
        (
            "D1_ERROR: too many columns on t_1: SQLITE_ERROR",
            TooManyColumns,
        ),
        (
            "D1_ERROR: string or blob too big: SQLITE_TOOBIG",
            StringOrBlobTooBig,
        ),
        (
            "D1_ERROR: LIKE or GLOB pattern too complex: SQLITE_ERROR",
            LikePatternTooComplex,
        ),
        (
            "D1_ERROR: too many arguments on function max: SQLITE_ERROR",
            TooManyFunctionArgs,
        ),
        (
            "Too many API requests by single Worker invocation.",
            QueryBudget,
        ),
        ("D1_ERROR: no such table: t_9: SQLITE_ERROR", Other),
        ("Network connection lost.", Other),
    ];

    #[test]
    fn every_known_text_gets_its_kind() {
        for &(text, kind) in KNOWN {
            assert_eq!(RefusalKind::classify(text), kind, "{text}");
        }
    }

    #[test]
    fn kind_names_are_kebab_case_like_serde() {
        for &(_, kind) in KNOWN {
            let json = serde_json::to_string(&kind).unwrap();
            assert_eq!(json, format!("\"{}\"", kind.name()));
        }
    }
}
