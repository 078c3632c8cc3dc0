//! The README's findings, written from a committed run's own files (`docs/example-run/`), so
//! every figure the README quotes is one that run measured; a test fails when the README says
//! anything else. States a difference between strategies only where its interval excludes 1,
//! and says what the intervals are taken over: between sessions for a run of several, within
//! one session otherwise (see `sweep::report::intervals`).

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context, Result};
use d1bench_core::Strategy;

use crate::base::TargetKind;
use crate::base::numbers::num;
use crate::base::numbers::thousands;
use crate::records::{RunDir, RunRecord, csv};
use crate::studies::sweep::report::intervals::Basis;
use crate::studies::sweep::report::points::{SummaryRow, summary_rows};
use crate::studies::sweep::row::ProbeRow;

/// One summary row's estimate with its interval and coverage: `0.35 (0.26–0.51, 93.75%
/// coverage)` within one session, `0.35 (0.30–0.41, 95% over 5 sessions)` between sessions.
fn with_interval(row: &SummaryRow) -> String {
    let median = row.median.map_or("-".to_owned(), num);
    match (row.ci_low, row.ci_high, row.ci_coverage) {
        (Some(low), Some(high), Some(coverage)) if row.sessions >= 2 => format!(
            "{median} ({}–{}, {:.0}% over {} sessions)",
            num(low),
            num(high),
            coverage * 100.0,
            row.sessions
        ),
        (Some(low), Some(high), Some(coverage)) => format!(
            "{median} ({}–{}, {:.2}% coverage)",
            num(low),
            num(high),
            coverage * 100.0
        ),
        _ => median,
    }
}

/// Which side of 1 an interval of literal ÷ bound lies wholly on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    /// Wholly below 1: literal is faster.
    Below,
    /// Wholly above 1: bound is faster.
    Above,
}

impl Side {
    fn of(row: &SummaryRow) -> Option<Side> {
        if row.ci_high.is_some_and(|h| h < 1.0) {
            Some(Side::Below)
        } else if row.ci_low.is_some_and(|l| l > 1.0) {
            Some(Side::Above)
        } else {
            None
        }
    }
}

/// The sweep run in `dir` read back: its record, its rows and its summary rows.
pub(super) fn sweep_run(dir: &Path) -> Result<(RunRecord, Vec<ProbeRow>, Vec<SummaryRow>)> {
    let run_dir = RunDir::new(dir.to_owned());
    let record = RunRecord::read(&run_dir.run_toml())?;
    let rows: Vec<ProbeRow> = csv::read(&run_dir.results_csv())?;
    let axis = record
        .run
        .x_axis
        .with_context(|| format!("{} is not a sweep", run_dir.run_toml().display()))?;
    let summary = summary_rows(&rows, axis, record.run.precision);
    Ok((record, rows, summary))
}

/// literal ÷ bound on `target` at each point of the sweep run in `dir`, from its own files.
fn literal_to_bound(dir: &Path, target: TargetKind) -> Result<Vec<SummaryRow>> {
    let (_, _, summary) = sweep_run(dir)?;
    Ok(summary
        .into_iter()
        .filter(|r| {
            r.strategy == Strategy::Literal
                && r.target == target
                && r.measure == "ratio_to_bound"
                && r.label.is_empty()
        })
        .collect())
}

/// The bullet on rows per statement at the widest point, where the planner's caps show, from a
/// run's summary rows on `target`.
pub(super) fn rows_per_statement(summary: &[SummaryRow], target: TargetKind) -> Option<String> {
    let of = |strategy: Strategy, measure: &str| -> Vec<&SummaryRow> {
        summary
            .iter()
            .filter(|r| {
                r.strategy == strategy
                    && r.target == target
                    && r.measure == measure
                    && r.label.is_empty()
            })
            .collect()
    };
    let rps = |strategy: Strategy, columns: usize| {
        of(strategy, "ms_per_1000_rows")
            .iter()
            .find(|r| r.columns == columns)
            .map(|r| r.rows_per_statement)
    };
    let widest = of(Strategy::Literal, "ratio_to_bound").last()?.columns;
    let first_single = of(Strategy::Bound, "ms_per_1000_rows")
        .iter()
        .find(|r| r.rows_per_statement == 1)
        .map(|r| r.columns);
    Some(format!(
        "- **Rows per statement.** Bound parameters carry floor(100 / C) rows{}; literal SQL still \
         carries {} rows per statement at {widest} columns (bound: {}).",
        first_single.map_or(String::new(), |c| format!(
            ", one row per statement from {c} columns"
        )),
        rps(Strategy::Literal, widest).map_or("-".into(), |n| n.to_string()),
        rps(Strategy::Bound, widest).map_or("-".into(), |n| n.to_string()),
    ))
}

/// The findings section for the run in `dir`, whose files are linked relative to the README
/// as `link` (e.g. `docs/example-run`); with `replicate` (a second run's directory and link), a
/// difference between strategies is stated only where both runs' intervals show it.
pub fn section(dir: &Path, link: &str, replicate: Option<(&Path, &str)>) -> Result<String> {
    let (record, rows, summary) = sweep_run(dir)?;
    let target = record.run.target;
    let of = |strategy: Strategy, on: TargetKind, measure: &str| -> Vec<&SummaryRow> {
        summary
            .iter()
            .filter(|r| {
                r.strategy == strategy
                    && r.target == on
                    && r.measure == measure
                    && r.label.is_empty()
            })
            .collect()
    };
    let totals = record.reconciliation.clone().unwrap_or_default();
    let repeats = of(Strategy::Bound, target, "ms_per_1000_rows")
        .iter()
        .map(|r| r.ok + r.refused + r.errors)
        .max()
        .unwrap_or(0);
    let basis = Basis::of(&rows, target);
    let measured = match basis {
        Basis::WithinOneSession => format!(
            "{repeats} measured repeats per point in one session, medians on the outside clock \
             less the target's preparation with their order-statistic intervals within that \
             session, which say nothing of the drift between sessions: another run may land \
             outside them"
        ),
        Basis::BetweenSessions(sessions) => format!(
            "{repeats} measured repeats per point over {sessions} sessions (each a fresh target, \
             the baseline's alternating with it), on the outside clock less the target's \
             preparation: each figure the geometric mean of the sessions' medians with its 95% \
             interval between sessions"
        ),
    };
    let mut out = String::new();
    writeln!(
        out,
        "From [`{link}/`]({link}/) (run `{}` of `{}` on `{target}`, profile `{}`, commit `{}`, \
         {} cores; {} probes, {} rows expected and {} present, status {}); {measured} (see \
         [Intervals](docs/run-outputs.md#intervals)):\n",
        record.run.id,
        record.run.experiment,
        record.run.profile,
        record.git.commit.short(7),
        record.machine.cpus,
        thousands(totals.records),
        thousands(totals.rows_expected),
        thousands(totals.rows_present),
        record.run.status,
    )
    .unwrap();

    if let Some(line) = rows_per_statement(&summary, target) {
        writeln!(out, "{line}").unwrap();
    }

    // literal ÷ bound: where the interval excludes 1 (in every run, when a replicate is given),
    // and the value at the widest point.
    let ratios = of(Strategy::Literal, target, "ratio_to_bound");
    let replicated = match replicate {
        Some((dir, _)) => Some(literal_to_bound(dir, target)?),
        None => None,
    };
    // What the two runs share, from their records: the same Worker build, or not.
    let alike = match replicate {
        Some((dir, _)) => {
            let other = RunRecord::read(&dir.join("run.toml"))?;
            let same_build = other.versions.worker_identity().is_some()
                && other.versions.worker_identity() == record.versions.worker_identity();
            let at = if other.git.commit == record.git.commit {
                "at the same commit".to_owned()
            } else {
                format!("at commit `{}`", other.git.commit.short(7))
            };
            if same_build {
                format!("{at}, with the same Worker build")
            } else {
                format!("{at}, with another Worker build")
            }
        }
        None => String::new(),
    };
    // Which side each column count's interval puts literal ÷ bound on, in this run and, with a
    // replicate, in both: a side only where the two runs agree.
    let side_at = |r: &SummaryRow| -> Option<Side> {
        let here = Side::of(r);
        match &replicated {
            None => here,
            Some(other) => other
                .iter()
                .find(|o| o.columns == r.columns)
                .and_then(Side::of)
                .filter(|there| here == Some(*there)),
        }
    };
    let list = |want: Option<Side>| -> Vec<String> {
        ratios
            .iter()
            .filter(|r| side_at(r) == want)
            .map(|r| r.columns.to_string())
            .collect()
    };
    let literal_faster = list(Some(Side::Below));
    let bound_faster = list(Some(Side::Above));
    let undecided = list(None);
    let columns = |v: &[String]| {
        if v.is_empty() {
            "no column count".to_owned()
        } else {
            format!("{} columns", v.join(", "))
        }
    };
    let (what, who) = match basis {
        Basis::WithinOneSession => (
            "the median of the paired repeats' ratios of ms per 1,000 rows",
            "these repeats",
        ),
        Basis::BetweenSessions(_) => (
            "each session's median of its paired repeats' ratios of ms per 1,000 rows, their \
             geometric mean",
            "these sessions",
        ),
    };
    match (replicate, &replicated) {
        (Some((_, link_b)), Some(other)) => {
            let overlap = ratios
                .iter()
                .filter(|r| {
                    other.iter().any(|o| {
                        o.columns == r.columns
                            && matches!(
                                (r.ci_low, r.ci_high, o.ci_low, o.ci_high),
                                (Some(l1), Some(h1), Some(l2), Some(h2)) if l1 <= h2 && l2 <= h1
                            )
                    })
                })
                .count();
            writeln!(
                out,
                "- **literal ÷ bound** ({what}), stated only where this run and a second, \
                 independent one {alike} ([`{link_b}/`]({link_b}/)) agree: literal is \
                 faster, its interval wholly below 1 in both, at {}; bound is faster, wholly \
                 above 1 in both, at {}; at {} an interval includes 1 in one run or both, and \
                 the runs cannot tell them apart. The two runs' intervals overlap at {overlap} \
                 of {} column counts.",
                columns(&literal_faster),
                columns(&bound_faster),
                columns(&undecided),
                ratios.len(),
            )
            .unwrap();
        }
        _ => writeln!(
            out,
            "- **literal ÷ bound** ({what}): literal is faster, its interval wholly below 1, at \
             {}; bound is faster, wholly above 1, at {}; the interval includes 1 at {}, where \
             {who} cannot tell them apart.",
            columns(&literal_faster),
            columns(&bound_faster),
            columns(&undecided),
        )
        .unwrap(),
    }
    if let Some(widest) = ratios.last() {
        let time = |strategy| {
            of(strategy, target, "ms_per_1000_rows")
                .into_iter()
                .find(|r| r.columns == widest.columns)
                .map_or("-".to_owned(), with_interval)
        };
        writeln!(
            out,
            "- **At {} columns**: literal {} ms per 1,000 rows, bound {}; literal ÷ bound = {}.",
            widest.columns,
            time(Strategy::Literal),
            time(Strategy::Bound),
            with_interval(widest),
        )
        .unwrap();
    }

    // The target against bare SQLite, per strategy.
    let mut against = Vec::new();
    for strategy in Strategy::ALL {
        let medians: Vec<f64> = of(strategy, target, "ratio_to_sqlite")
            .iter()
            .filter_map(|r| r.median)
            .collect();
        let (Some(low), Some(high)) = (
            medians.iter().copied().reduce(f64::min),
            medians.iter().copied().reduce(f64::max),
        ) else {
            continue;
        };
        against.push(format!("{strategy} {}× to {}×", num(low), num(high)));
    }
    if !against.is_empty() {
        let ratio = match basis {
            Basis::WithinOneSession => "the ratio of the median inside clocks",
            Basis::BetweenSessions(_) => {
                "each session's ratio of the median inside clocks to its baseline session's \
                 beside it, their geometric mean"
            }
        };
        writeln!(
            out,
            "- **{target} ÷ bare SQLite** (the same statements in-process, no Worker or D1 around \
             them; {ratio}, the writes alone on both sides, over the points): {}.",
            against.join(", ")
        )
        .unwrap();
    }
    // A run from before the targets reported their preparation: say what its times hold.
    if rows
        .iter()
        .filter(|r| r.target == target)
        .all(|r| r.prepare_ms.is_none())
    {
        writeln!(
            out,
            "\nThis run was made before the Worker reported `prepare_ms`: its outside clock still \
             holds generating the rows, building the statements and binding the values one at a \
             time, so its times per 1,000 rows include them, and its inside clock the binding, \
             so its {target} ÷ bare SQLite does too."
        )
        .unwrap();
    }
    if let Some((other, other_link)) = replicate {
        // One more item of the same list.
        writeln!(out, "{}", replicate_changes(dir, link, other, other_link)?).unwrap();
    }
    let mut names = vec![basename(link)];
    let mut minutes = crate::readme::run_minutes(&record).unwrap_or(f64::NAN);
    if let Some((dir, link)) = replicate {
        names.push(basename(link));
        minutes += RunRecord::read(&dir.join("run.toml"))
            .ok()
            .and_then(|r| crate::readme::run_minutes(&r))
            .unwrap_or(f64::NAN);
    }
    writeln!(
        out,
        "\nThese are local figures: compare the shape, not the milliseconds, with production. \
         Reproduce: `cargo xtask reproduce --only {}` ({minutes:.0} min here, the runs' own \
         durations).",
        names.join(" ")
    )
    .unwrap();
    Ok(out)
}

/// What `compare` says of the two runs, point by point: how many points it calls changed (on the
/// time or an own ratio) and which, grouped by strategy and target.
fn replicate_changes(dir: &Path, link: &str, other: &Path, other_link: &str) -> Result<String> {
    use std::collections::BTreeMap;

    use crate::studies::sweep::report::compare::{CalibrationSource, Verdict, compare};
    let c = compare(dir, other, None, &CalibrationSource::Off)?;
    let seeds = [dir, other].map(|d| {
        RunRecord::read(&d.join("run.toml"))
            .ok()
            .and_then(|r| r.overrides.seed)
            .map_or("?".to_owned(), |s| s.to_string())
    });
    // (what changed, direction) → the x values and the range of b ÷ a.
    let mut groups: BTreeMap<(String, &str), (Vec<String>, f64, f64)> = BTreeMap::new();
    let mut changed = 0;
    for p in &c.points {
        let ratios = [
            ("÷ bound", p.relative.vs_bound),
            ("÷ bare SQLite", p.relative.vs_baseline),
        ];
        let mut found: Vec<(String, &str, f64)> = Vec::new();
        if p.verdict.is_change() {
            let what = format!("{} on {}", p.key.strategy, p.key.target);
            found.push((what, p.verdict_word(), p.ratio.unwrap_or(f64::NAN)));
        }
        for (name, r) in ratios {
            if let Some(r) = r.filter(|r| r.verdict.is_change()) {
                let what = format!("{} on {} {name}", p.key.strategy, p.key.target);
                let word = if r.verdict == Verdict::Slower {
                    "up"
                } else {
                    "down"
                };
                found.push((what, word, r.change));
            }
        }
        changed += usize::from(!found.is_empty());
        for (what, word, ratio) in found {
            let entry = groups
                .entry((what, word))
                .or_insert((Vec::new(), f64::INFINITY, 0.0));
            entry.0.push(c.x_axis.format(p.x));
            entry.1 = entry.1.min(ratio);
            entry.2 = entry.2.max(ratio);
        }
    }
    let mut text = format!(
        "- **The two runs compared** (`cargo xtask compare {link} {other_link}`; their rows' \
         seeds {} and {}, run one after the other): {changed} of {} points changed on the time \
         or an own ratio (Benjamini–Hochberg at 5%)",
        seeds[0],
        seeds[1],
        c.points.len()
    );
    let listed: Vec<String> = groups
        .into_iter()
        .map(|((what, word), (xs, low, high))| {
            format!(
                "{what} {word} at {} {} ({}–{}×)",
                xs.join(", "),
                c.x_axis.name(),
                num(low),
                num(high)
            )
        })
        .collect();
    if listed.is_empty() {
        text.push('.');
    } else {
        write!(text, ": {}.", listed.join("; ")).unwrap();
    }
    Ok(text)
}

/// The last component of a path as the README writes it.
fn basename(link: &str) -> &str {
    link.trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or(link)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paths::project_root;

    /// Whether the README quotes this text is checked in [`crate::readme`].
    #[test]
    fn the_example_runs_findings_compare_strategies() {
        let root = project_root();
        let expected = section(&root.join("docs/example-run"), "docs/example-run", None).unwrap();
        assert!(expected.contains("literal ÷ bound"), "{expected}");
    }

    /// The findings state what compare says of the two runs: a run against itself changes
    /// nothing; against a copy with literal twice as slow, literal's points are listed.
    #[test]
    fn the_replicates_comparison_lists_what_changed() {
        let root = project_root();
        let example = root.join(crate::readme::EXAMPLE_RUN);
        let itself = replicate_changes(&example, "a", &example, "b").unwrap();
        assert!(itself.contains(": 0 of 130 points changed"), "{itself}");
        let scratch = tempfile::tempdir().unwrap();
        std::fs::copy(example.join("run.toml"), scratch.path().join("run.toml")).unwrap();
        let mut rows: Vec<ProbeRow> = csv::read(&example.join("results.csv")).unwrap();
        for r in rows.iter_mut().filter(|r| r.strategy == Strategy::Literal) {
            r.outside_ms *= 2.0;
        }
        csv::write(&scratch.path().join("results.csv"), &rows).unwrap();
        let slower = replicate_changes(&example, "a", scratch.path(), "b").unwrap();
        assert!(
            slower.contains(
                "literal on local slower at 1, 2, 4, 8, 16, 25, 32, 50, 51, 64, 80, 100 columns"
            ),
            "{slower}"
        );
        assert!(
            slower.contains("literal on local ÷ bound up at"),
            "{slower}"
        );
    }

    #[test]
    fn with_a_replicate_only_what_both_runs_show_is_stated() {
        let root = project_root();
        let example = root.join("docs/example-run");
        let alone = section(&example, "docs/example-run", None).unwrap();
        // The example run against itself states what it states alone...
        let itself = section(&example, "l", Some((&example, "docs/example-run"))).unwrap();
        let listed = |text: &str, what: &str| {
            let start = text.find(what).unwrap() + what.len();
            text[start..].split(';').next().unwrap().to_owned()
        };
        assert_eq!(
            listed(&alone, "wholly below 1, at "),
            listed(&itself, "wholly below 1 in both, at "),
        );
        assert!(
            itself.contains("overlap at 12 of 12 column counts"),
            "{itself}"
        );
        // ...and against the replicate, no more than either run states alone.
        let replicate = root.join("docs/runs/column-sweep-replicate");
        let other = section(&replicate, "r", None).unwrap();
        let both = section(&example, "l", Some((&replicate, "r"))).unwrap();
        let counts = |list: String| -> Vec<String> {
            list.trim_end_matches(" columns")
                .split(", ")
                .map(str::to_owned)
                .collect()
        };
        for column in counts(listed(&both, "wholly below 1 in both, at ")) {
            assert!(counts(listed(&alone, "wholly below 1, at ")).contains(&column));
            assert!(counts(listed(&other, "wholly below 1, at ")).contains(&column));
        }
    }
}
