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
    ("exceeded its cpu time limit", RefusalKind::TimeLimit),
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

    /// Texts seen verbatim from the local runtime (wrangler 4.164 / workerd 2026-11-17), copied
    /// from `cargo xtask run limits` runs' results.csv.
    const LOCAL: &[(&str, RefusalKind)] = &[
        (
            "D1_ERROR: too many SQL variables at offset 430: SQLITE_ERROR",
            TooManyVariables,
        ),
        (
            "D1_ERROR: statement too long: SQLITE_TOOBIG",
            StatementTooLong,
        ),
        (
            "D1_ERROR: too many columns on r_8: SQLITE_ERROR",
            TooManyColumns,
        ),
        (
            "D1_ERROR: too many arguments on function max at offset 30: SQLITE_ERROR",
            TooManyFunctionArgs,
        ),
        (
            "D1_ERROR: LIKE or GLOB pattern too complex: SQLITE_ERROR",
            LikePatternTooComplex,
        ),
        (
            "D1_ERROR: string or blob too big: SQLITE_TOOBIG",
            StringOrBlobTooBig,
        ),
        ("D1_ERROR: no such table: t_9: SQLITE_ERROR", Other),
    ];

    /// Texts in-process SQLite (the sqlite target, D1's limits applied) answers, verbatim.
    const SQLITE: &[(&str, RefusalKind)] = &[
        ("too many SQL variables", TooManyVariables),
        ("statement too long", StatementTooLong),
        ("too many columns on r_3", TooManyColumns),
        ("string or blob too big", StringOrBlobTooBig),
        ("too many arguments on function max", TooManyFunctionArgs),
        ("LIKE or GLOB pattern too complex", LikePatternTooComplex),
    ];

    /// Production texts. The `D1_ERROR` list is Cloudflare's "Debug D1" page
    /// (developers.cloudflare.com/d1/observability/debug-d1/, "List of D1_ERRORs"); D1's team
    /// says a storage operation over 30 s resets the database's Durable Object with the
    /// "exceeded timeout" text, so that text is the 30 s query limit. The query-budget text is
    /// the Workers runtime's, as Workers report it in the wild, in both capitalisations and
    /// with the runtime's pointer to its limits configuration.
    const PRODUCTION: &[(&str, RefusalKind)] = &[
        (
            "Too many API requests by single Worker invocation.",
            QueryBudget,
        ),
        (
            "Error: Too many API requests by single worker invocation.",
            QueryBudget,
        ),
        (
            "Too many API requests by single Worker invocation. To configure this limit, refer to https://developers.cloudflare.com/workers/wrangler/configuration/#limits",
            QueryBudget,
        ),
        (
            "D1_ERROR: D1 DB storage operation exceeded timeout which caused object to be reset.",
            TimeLimit,
        ),
        (
            "D1_ERROR: D1 DB exceeded its CPU time limit and was reset.",
            TimeLimit,
        ),
        // Not limits a ladder climbs: transient or capacity errors stay `other`, text kept.
        ("D1_ERROR: D1 DB reset because its code was updated.", Other),
        (
            "D1_ERROR: Internal error while starting up D1 DB storage caused object to be reset.",
            Other,
        ),
        ("D1_ERROR: Network connection lost.", Other),
        (
            "D1_ERROR: Internal error in D1 DB storage caused object to be reset.",
            Other,
        ),
        (
            "D1_ERROR: Cannot resolve D1 DB due to transient issue on remote node.",
            Other,
        ),
        (
            "D1_ERROR: Can't read from request stream because client disconnected.",
            Other,
        ),
        (
            "D1_ERROR: D1 DB is overloaded. Requests queued for too long.",
            Other,
        ),
        (
            "D1_ERROR: D1 DB is overloaded. Too many requests queued.",
            Other,
        ),
        (
            "D1_ERROR: D1 DB's isolate exceeded its memory limit and was reset.",
            Other,
        ),
        (
            "D1_EXEC_ERROR: Error in line 1: INSERTZ INTO my_table (name, employees) VALUES (): sql error: near \"INSERTZ\": syntax error in INSERTZ INTO my_table (name, employees) VALUES () at offset 0",
            Other,
        ),
    ];

    fn known() -> impl Iterator<Item = &'static (&'static str, RefusalKind)> {
        LOCAL.iter().chain(SQLITE).chain(PRODUCTION)
    }

    #[test]
    fn every_known_text_gets_its_kind() {
        for &(text, kind) in known() {
            assert_eq!(RefusalKind::classify(text), kind, "{text}");
        }
    }

    #[test]
    fn every_kind_has_a_known_text() {
        for kind in [
            TooManyVariables,
            StatementTooLong,
            TooManyColumns,
            StringOrBlobTooBig,
            QueryBudget,
            TooManyFunctionArgs,
            LikePatternTooComplex,
            TimeLimit,
            Other,
        ] {
            assert!(known().any(|&(_, k)| k == kind), "no known text for {kind}");
        }
    }

    #[test]
    fn kind_names_are_kebab_case_like_serde() {
        for &(_, kind) in known() {
            let json = serde_json::to_string(&kind).unwrap();
            assert_eq!(json, format!("\"{}\"", kind.name()));
        }
    }
}
