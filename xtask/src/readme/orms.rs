//! The README's paragraph on the ORMs, generated from the committed run of `orm-sweep`
//! ([`ORM_SWEEP`]): per library, its documented bulk insert ÷ the fastest strategy at each
//! column count with its interval over sessions, what it sent (rows a statement, D1 calls) and
//! the limit that refuses it; its json-each idiom ÷ the fastest; the A/A test of that ratio; and
//! the run's figure of it. Judged by the run's own report ([`orms::library_points`],
//! [`orms::a_a`]), so the README and summary.md cannot disagree; a test fails when they do.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context, Result};

use crate::base::numbers::num;
use crate::base::orm::{Idiom, Orm, OrmLimit};
use crate::studies::sweep::Axis;
use crate::studies::sweep::report::orms::{self, LibraryPoint};
use crate::studies::sweep::report::orms_chart;

/// The committed run of the libraries beside the strategies, relative to the project's root.
pub const ORM_SWEEP: &str = "docs/runs/orm-sweep";

/// The command that makes [`ORM_SWEEP`].
pub const COMMAND: &str = "cargo xtask run orm-sweep --worker js-orm --no-baseline --profile paper";

/// A limit in the paragraph's few words.
fn limit_words(limit: OrmLimit) -> &'static str {
    match limit {
        OrmLimit::D1BoundParameters => "D1's 100 bound parameters",
        OrmLimit::PrismaMaxBindValues => "Prisma's own 98 bound values",
    }
}

/// `0.96 (0.05–20.5)`, or the limit that refused the point, or `–`.
fn ratio_words(point: &LibraryPoint, interval: bool) -> String {
    match (point.ratio, point.refused_by) {
        (Some(r), _) => match r.ci.filter(|_| interval) {
            Some(ci) => format!("{} ({}–{})", num(r.median), num(ci.low), num(ci.high)),
            None => num(r.median),
        },
        (None, Some(limit)) => format!("refused ({})", limit_words(limit)),
        (None, None) => "–".to_owned(),
    }
}

/// The section, from the committed run under `root`; a sentence saying how to make it when it
/// is not committed.
pub fn section(root: &Path) -> Result<String> {
    if !root.join(ORM_SWEEP).join("run.toml").is_file() {
        return Ok(format!(
            "**ORMs:** the run of Drizzle, Prisma and Kysely beside the strategies is not \
             committed yet: `{COMMAND}`.\n"
        ));
    }
    let (record, rows, _) = super::findings::sweep_run(&root.join(ORM_SWEEP))
        .with_context(|| format!("{ORM_SWEEP} is not a sweep run d1bench can read"))?;
    let axis = record.run.x_axis.unwrap_or(Axis::Columns);
    let points: Vec<LibraryPoint> = (orms::library_points(&rows, axis).into_iter())
        .filter(|p| p.label.is_empty())
        .collect();
    let of = |orm: Orm, idiom: Idiom| -> Vec<&LibraryPoint> {
        (points.iter())
            .filter(|p| p.write.orm == orm && p.write.idiom == idiom)
            .collect()
    };
    let mut xs: Vec<f64> = points.iter().map(|p| p.x).collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    let xs: Vec<String> = xs.iter().map(|x| axis.format(*x)).collect();
    let slashed = |values: Vec<String>| values.join("/");
    // Rows a statement: once when every library sent the same where it wrote, else each's.
    let rows_of = |own: &[&LibraryPoint]| -> Vec<Option<String>> {
        own.iter().map(|p| p.rows_per_statement.clone()).collect()
    };
    let written: Vec<Vec<Option<String>>> = (Orm::ALL.into_iter())
        .map(|orm| rows_of(&of(orm, Idiom::Documented)))
        .filter(|r| !r.is_empty())
        .collect();
    let common: Option<Vec<String>> = (0..xs.len())
        .map(|k| {
            let mut at = written.iter().filter_map(|r| r.get(k).cloned().flatten());
            let first = at.next()?;
            at.all(|r| r == first).then_some(first)
        })
        .collect();
    let dashed = |values: Vec<Option<String>>| {
        slashed(
            values
                .into_iter()
                .map(|v| v.unwrap_or("–".into()))
                .collect(),
        )
    };
    let mut documented = Vec::new();
    let mut json_each = Vec::new();
    for orm in Orm::ALL {
        let own = of(orm, Idiom::Documented);
        if !own.is_empty() {
            let ratios: Vec<String> = own.iter().map(|p| ratio_words(p, true)).collect();
            let calls = dashed(own.iter().map(|p| p.d1_calls.clone()).collect());
            // "D1 calls" once, then "calls".
            let calls = match documented.is_empty() {
                true => format!("{calls} D1"),
                false => calls,
            };
            documented.push(match common {
                Some(_) => format!("{orm} {} in {calls} calls", ratios.join(", ")),
                None => format!(
                    "{orm} {}, {} rows a statement in {calls} calls",
                    ratios.join(", "),
                    dashed(rows_of(&own)),
                ),
            });
        }
        let json = of(orm, Idiom::JsonEach);
        if !json.is_empty() {
            json_each.push(format!(
                "{orm} {}",
                slashed(json.iter().map(|p| ratio_words(p, false)).collect())
            ));
        }
    }
    let a_a = orms::a_a(&rows, axis);
    let sessions = record.run.sessions.unwrap_or(1);
    let each = common.map_or(String::new(), |rows| {
        format!(", each sending {} rows a statement", slashed(rows))
    });
    let mut out = format!(
        "**ORMs** ([run]({ORM_SWEEP}/summary.md), 95% CI over {sessions} sessions): documented \
         insert ÷ fastest strategy at {} {}{each}: {}. json-each ÷ fastest: {}. ",
        slashed(xs),
        axis.name(),
        documented.join("; "),
        json_each.join(", "),
    );
    if a_a.judged == 0 {
        out.push_str("A/A: no point has sessions to halve.");
    } else {
        write!(
            out,
            "A/A: {} of {} called (BH), {} alone at 5% (~{} by chance).",
            a_a.called,
            a_a.judged,
            a_a.alone,
            a_a.alone_by_chance()
        )
        .unwrap();
    }
    writeln!(
        out,
        "\n\n![ORMs ÷ fastest]({ORM_SWEEP}/{}.png)",
        orms_chart::name(axis)
    )
    .unwrap();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The committed ORM run was made by the ORM Worker as it is (its sources and pins), and by
    /// today's JavaScript Worker, whose code runs its six strategies.
    #[test]
    fn the_committed_orm_run_ran_todays_orm_worker() {
        let root = crate::paths::project_root();
        let toml = root.join(ORM_SWEEP).join("run.toml");
        if !toml.is_file() {
            return;
        }
        let record = crate::records::RunRecord::read(&toml).unwrap();
        assert_eq!(
            record.versions.worker_orm_build,
            crate::worker_build::orm_sources_hash(&root).ok(),
            "{ORM_SWEEP} ran another ORM Worker than worker-orm/ is now: make the run again \
             (`{COMMAND}`)"
        );
        assert_eq!(
            record.versions.worker_js_build,
            crate::worker_build::js_sources_hash(&root).ok(),
            "{ORM_SWEEP} ran another JavaScript Worker than worker-js/ is now"
        );
        assert!(
            !record.git.dirty,
            "{ORM_SWEEP} ran on a tree with uncommitted changes"
        );
    }

    /// The smoke run the section was written against, copied to where the section reads it.
    fn fixture() -> tempfile::TempDir {
        let root = tempfile::tempdir().unwrap();
        let run = root.path().join(ORM_SWEEP);
        std::fs::create_dir_all(&run).unwrap();
        let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/orm-sweep-smoke");
        for name in ["run.toml", "results.csv"] {
            std::fs::copy(from.join(name), run.join(name)).unwrap();
        }
        root
    }

    #[test]
    fn the_section_states_each_library_from_the_run() {
        let root = fixture();
        let text = section(root.path()).unwrap();
        assert_golden(&text);
        assert!(
            text.contains("refused (Prisma's own 98 bound values)"),
            "{text}"
        );
        assert!(text.contains("orm-vs-best-vs-columns.png"), "{text}");
    }

    /// `text` is the golden section of the smoke run; `UPDATE_GOLDEN=1` writes it.
    fn assert_golden(text: &str) {
        let golden = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/golden/orm-sweep-smoke/readme-section.md");
        if std::env::var_os("UPDATE_GOLDEN").is_some() {
            std::fs::write(&golden, text).unwrap();
        }
        assert_eq!(
            text,
            std::fs::read_to_string(&golden).unwrap(),
            "UPDATE_GOLDEN=1 writes it"
        );
    }

    #[test]
    fn the_section_states_the_a_a_test_when_sessions_can_be_halved() {
        let root = fixture();
        let rows = crate::studies::sweep::report::orms::tests::four_sessions();
        crate::records::csv::write(&root.path().join(ORM_SWEEP).join("results.csv"), &rows)
            .unwrap();
        let text = section(root.path()).unwrap();
        assert!(
            text.contains("A/A: 0 of 17 called (BH), 0 alone at 5% (~1 by chance)."),
            "{text}"
        );
    }

    #[test]
    fn without_the_run_the_section_says_how_to_make_it() {
        let root = tempfile::tempdir().unwrap();
        let text = section(root.path()).unwrap();
        assert!(text.contains(COMMAND), "{text}");
        assert_eq!(text.lines().count(), 1);
    }
}
