//! The errors only a ladder meets on Postgres, sorted into the core's refusal kinds before
//! `d1bench_core_pg::refusal`'s rules (which every probe's error goes through) see them: the
//! probes never send past 65,535 parameters or 100 function arguments, the ladders do.

use d1bench_core::{Outcome, RefusalKind};

/// Each rule: a fragment (matched case-insensitively) and the kind it means; the first match
/// wins, and a text none matches goes on to the probes' rules.
const RULES: &[(&str, RefusalKind)] = &[
    // What the server does past 65,535 parameters: it parses the statement and answers its
    // Parse with a ParameterDescription whose 16-bit count has wrapped, and tokio-postgres finds
    // the message longer than the count says (measured on PostgreSQL 15, 2026-12-07). The
    // probes' rules would call that `invalid message length` a statement too long.
    (
        "invalid message length: parameters is not drained",
        RefusalKind::TooManyVariables,
    ),
    // 54023 too_many_arguments: "cannot pass more than 100 arguments to a function"
    // (`FUNC_MAX_ARGS`).
    ("(sqlstate 54023)", RefusalKind::TooManyFunctionArgs),
];

/// The refusal kind a ladder's own rules give `text`, if any.
fn ladder_kind(text: &str) -> Option<RefusalKind> {
    let lower = text.to_ascii_lowercase();
    RULES
        .iter()
        .find(|(fragment, _)| lower.contains(fragment))
        .map(|&(_, kind)| kind)
}

/// The refusal kind of a rung's error text.
pub fn classify_text(text: &str) -> RefusalKind {
    ladder_kind(text).unwrap_or_else(|| d1bench_core_pg::refusal::classify_text(text))
}

/// The outcome of a rung's error text (or of none): a ladder's own refusal, else what the
/// probes' classifier says of it.
pub fn classify(error: Option<&str>) -> (Outcome, Option<RefusalKind>) {
    match error.and_then(ladder_kind) {
        Some(kind) => (Outcome::Refused, Some(kind)),
        None => d1bench_core_pg::refusal::classify(error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use d1bench_core_pg::refusal::with_sqlstate;

    #[test]
    fn a_ladders_own_errors_come_first_and_the_rest_go_to_the_probes_rules() {
        assert_eq!(
            classify_text(
                "error parsing response from server: invalid message length: parameters is \
                 not drained"
            ),
            RefusalKind::TooManyVariables
        );
        assert_eq!(
            classify_text("invalid message length"),
            RefusalKind::StatementTooLong
        );
        assert_eq!(
            classify_text(&with_sqlstate(
                "cannot pass more than 100 arguments to a function",
                "54023"
            )),
            RefusalKind::TooManyFunctionArgs
        );
        assert_eq!(
            classify_text(&with_sqlstate(
                "tables can have at most 1600 columns",
                "54011"
            )),
            RefusalKind::TooManyColumns
        );
        assert_eq!(
            classify(Some(&with_sqlstate(
                "relation \"t_1\" does not exist",
                "42P01"
            ))),
            (Outcome::Error, Some(RefusalKind::Other))
        );
        assert_eq!(classify(None), (Outcome::Ok, None));
    }
}
