//! The tests of `parity`.

use super::*;
use crate::paths::project_root;

fn source() -> Source {
    Source {
        run: "20261130T000000Z-local".into(),
        commit: Some(Revision {
            commit: crate::records::run_record::Commit::Known("0123456789abcdef".into()),
            dirty: false,
        }),
        versions: "d1bench 0.1.0".into(),
    }
}

#[test]
fn every_enforced_reads_back_as_written() {
    let texts = [
        (Enforced::Yes, "yes"),
        (Enforced::At(8_388_637), "yes, at 8,388,637"),
        (
            Enforced::AtFirstRung(10),
            "yes, already at the first rung (10)",
        ),
        (Enforced::No, "no"),
        (
            Enforced::StoppedBy(None),
            "stopped by an error, not by this limit",
        ),
        (
            Enforced::StoppedBy(Some(RefusalKind::QueryTimeout)),
            "stopped by query-timeout, not by this limit",
        ),
    ];
    for (enforced, text) in texts {
        assert_eq!(enforced.to_string(), text);
        assert_eq!(text.parse::<Enforced>(), Ok(enforced));
    }
    let err = "maybe".parse::<Enforced>().unwrap_err();
    assert!(
        err.starts_with("`maybe` is not whether a limit was enforced"),
        "{err}"
    );
}

fn finding(
    kind: LadderKind,
    last_ok: Option<usize>,
    first_failed: Option<usize>,
    refusal: &str,
) -> ClimbFinding {
    ClimbFinding {
        ladder: kind,
        target: crate::base::TargetKind::Local,
        climb: 0,
        held: String::new(),
        columns: None,
        unit: kind.unit().into(),
        last_ok,
        first_failed,
        max_tried: first_failed.or(last_ok),
        outcome: first_failed.map(|_| Outcome::Refused),
        refusal: (!refusal.is_empty()).then(|| refusal.parse().unwrap()),
        error: if refusal.is_empty() {
            String::new()
        } else {
            format!("D1_ERROR: {refusal}")
        },
        statements_completed: first_failed.map(|_| 0),
        confirmed: None,
        stopped: match first_failed {
            Some(_) => Stop::Refused,
            None => Stop::NoRefusal,
        },
        ok_outside_ms: Some(1.0),
        ok_inside_ms: Some(1.0),
        ok_d1_ms: Some(0.5),
        rungs: 3,
        reconciled: true,
    }
}

#[test]
fn enforced_at_the_documented_value_elsewhere_or_not_at_all() {
    let at = rows(
        &[finding(
            LadderKind::StatementLength,
            Some(100_000),
            Some(100_001),
            "statement-too-long",
        )],
        &source(),
    );
    assert_eq!(at[0].found, "100,000 bytes ok, 100,001 refused");
    assert_eq!(at[0].enforced, Enforced::Yes);
    let off = rows(
        &[finding(
            LadderKind::FunctionArgs,
            Some(127),
            Some(128),
            "too-many-function-args",
        )],
        &source(),
    );
    assert_eq!(off[0].enforced, Enforced::At(127));
    let none = rows(
        &[finding(LadderKind::QueryBudget, Some(2000), None, "")],
        &source(),
    );
    assert_eq!(none[0].found, "no refusal up to 2,000 queries");
    assert_eq!(none[0].enforced, Enforced::No);
    let wrong = rows(
        &[finding(LadderKind::RowSize, Some(100), Some(200), "other")],
        &source(),
    );
    assert_eq!(wrong[0].enforced, Enforced::StoppedBy(None));
    assert_eq!(Source::of_rows(&wrong), Some(source()));
}

#[test]
fn a_table_names_its_source_only_when_every_row_names_the_same_one() {
    let row = |run: &str| ParityRow {
        run: run.into(),
        ..rows(
            &[finding(LadderKind::QueryBudget, Some(2000), None, "")],
            &source(),
        )[0]
        .clone()
    };
    let one = row("20261130T000000Z-local");
    assert_eq!(Source::of_rows(&[one.clone(), one.clone()]), Some(source()));
    assert_eq!(Source::of_rows(&[one.clone(), row("another")]), None);
    assert_eq!(Source::of_rows(&[row("")]), None);
    let section = readme_section(&[one], &[], Beside::default());
    assert!(
        section.contains("Measured by local: run `20261130T000000Z-local` at commit `0123456`"),
        "{section}"
    );
}

#[test]
fn param_ceiling_is_checked_against_floor_100_over_c() {
    let mut fs = Vec::new();
    for c in [1, 3, 51] {
        let mut f = finding(
            LadderKind::ParamCeiling,
            Some(100 / c),
            Some(100 / c + 1),
            "too-many-variables",
        );
        f.columns = Some(c);
        fs.push(f);
    }
    let r = rows(&fs, &source());
    assert_eq!(r[0].enforced, Enforced::Yes);
    assert!(
        r[0].found
            .starts_with("100 parameters: the ceiling was floor(100/C)"),
        "{}",
        r[0].found
    );
    fs[1].last_ok = Some(34);
    let r = rows(&fs, &source());
    assert_eq!(r[0].enforced, Enforced::At(34));
    assert!(r[0].found.contains("C=3: 34 rows"), "{}", r[0].found);
}

/// On Postgres the ceiling is floor(65,535 / C), and the docs' table gives Postgres a column:
/// what its run found with the error text it saw, `n/a` for a limit Postgres does not have.
#[test]
fn postgres_is_checked_against_its_own_ceiling_and_has_a_column() {
    let mut fs = Vec::new();
    for c in [1, 3, 100] {
        let mut f = finding(
            LadderKind::ParamCeiling,
            Some(65_535 / c),
            Some(65_535 / c + 1),
            "too-many-variables",
        );
        f.columns = Some(c);
        f.target = crate::base::TargetKind::Hyperdrive;
        f.error = "error parsing response from server: invalid message length: parameters is \
                   not drained"
            .into();
        fs.push(f);
    }
    let postgres = rows(&fs, &source());
    // Refused just past the target's own ceiling at every column count.
    assert_eq!(postgres[0].enforced, Enforced::Yes);
    assert_eq!(
        postgres[0].found,
        "65,535 parameters: the ceiling was floor(65,535/C) rows at each of the 3 column counts tried"
    );
    let local = rows(
        &[
            finding(LadderKind::QueryBudget, Some(2000), None, ""),
            finding(
                LadderKind::ParamCeiling,
                Some(100),
                Some(101),
                "too-many-variables",
            ),
            finding(
                LadderKind::LikePattern,
                Some(50),
                Some(51),
                "like-pattern-too-complex",
            ),
        ],
        &source(),
    );
    let section = readme_section(
        &local,
        &[],
        Beside {
            postgres: Some(&postgres),
            ..Beside::default()
        },
    );
    assert!(
        section.contains("| Postgres through Hyperdrive (wrangler dev) |"),
        "{section}"
    );
    let line = |ladder: LadderKind| {
        section
            .lines()
            .find(|l| l.starts_with(&format!("| {} |", ladder.limit())))
            .unwrap()
            .to_owned()
    };
    assert!(
        line(LadderKind::QueryBudget).contains("| n/a (no such limit on Postgres) |"),
        "{section}"
    );
    assert!(
        line(LadderKind::ParamCeiling).contains(
            "floor(65,535/C) rows at each of the 3 column counts tried (`error parsing response \
             from server: invalid message length: parameters is not drained`)"
        ),
        "{section}"
    );
    assert!(
        line(LadderKind::LikePattern).contains("| not measured in that run |"),
        "{section}"
    );
    assert!(
        section.contains("; Postgres: run `20261130T000000Z-local`"),
        "{section}"
    );
}

/// Every error text a real run recorded classifies as the refusal it was recorded with, and
/// every limit is in the local table.
#[test]
fn the_committed_tables_agree_with_the_classifier() {
    let paths = Paths::new(project_root());
    for target in ["local", "sqlite", "postgres"] {
        let path = committed(&paths, target);
        if target == "postgres" && !path.exists() {
            continue;
        }
        let rows: Vec<ParityRow> = read_csv(&path).unwrap();
        let source = Source::of_rows(&rows);
        assert!(
            source
                .as_ref()
                .is_some_and(|s| s.commit.as_ref().is_some_and(|c| !c.dirty)),
            "reports/parity-{target}.csv must name one run, its clean commit and its versions in every row: {source:?}"
        );
        for r in &rows {
            if !r.error.is_empty() {
                let classified = if target == "postgres" {
                    d1bench_core_pg_ladder::refusal::classify_text(&r.error)
                } else {
                    RefusalKind::classify(&r.error)
                };
                assert_eq!(Some(classified), r.refusal, "{}", r.error);
            }
        }
        if target == "local" {
            let ladders: Vec<LadderKind> = rows.iter().map(|r| r.ladder).collect();
            // result-size and concurrent-calls (2026's limits) came after the committed
            // table's run: the next full `limits` run and `parity-readme` add them.
            let newer = [LadderKind::ResultSize, LadderKind::ConcurrentCalls];
            let expected: Vec<LadderKind> = LadderKind::ALL
                .into_iter()
                .filter(|k| ladders.contains(k) || !newer.contains(k))
                .collect();
            assert_eq!(ladders, expected, "the local table misses a limit");
        } else if target == "postgres" {
            assert!(
                rows.iter()
                    .all(|r| d1bench_core_pg_ladder::runs_on_postgres(r.ladder))
            );
        } else {
            assert!(rows.iter().all(|r| r.ladder.runs_on_sqlite()));
        }
    }
}
