//! The findings stated over replicate runs: the README's sections as a committed set gives them
//! ([`sections`]: literal ÷ bound and local ÷ bare SQLite from the column sweep's set, D1 ÷
//! Durable Object from its own, Rust ÷ JavaScript from the two Workers') and, point by point,
//! `docs/findings-over-runs.md` ([`document`]), with what both share. Each estimate is the two-level one of [`super::replicates`]:
//! its interval over runs, in how many runs it held on its own, and the share of the variance
//! between runs. Nothing is said over a set of fewer than two runs; a set of two is stated,
//! saying that three are asked.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Result;

pub mod beside_chart;
pub mod copy;
pub mod sections;

use super::replicates::{self, PointOverRuns, SetSpec};
use crate::base::numbers::num;
use crate::records::replicates::{RUNS_WANTED, ReplicateSet};
use crate::stats::power::Equivalence;
use crate::stats::sessions::{FALSE_DISCOVERY_RATE, benjamini_hochberg};
use crate::stats::{CONFIDENCE, Interval, median};

/// The document the per-point tables live in, relative to the project's root.
pub const DOCUMENT: &str = "docs/findings-over-runs.md";

/// The level of the two one-sided tests' interval (each side at 5%).
const EQUIVALENCE_LEVEL: f64 = 1.0 - 2.0 * FALSE_DISCOVERY_RATE;

/// The set of `spec` under `root` when it has two runs or more.
fn stated(spec: SetSpec, root: &Path) -> Result<Option<ReplicateSet>> {
    Ok(spec.read(root)?.filter(|set| set.runs.len() >= 2))
}

/// "[`docs/runs/replicates/x/`](docs/runs/replicates/x/): 3 runs made 2026-12-03 to 2026-12-06"
/// ([`ReplicateSet::made`]),
/// saying when the set has fewer runs than asked; linked from the README, or from under `docs/`
/// when `in_docs`.
fn source(spec: SetSpec, set: &ReplicateSet, in_docs: bool) -> String {
    let n = set.runs.len();
    let dir = spec.dir();
    let fewer = if n < RUNS_WANTED {
        format!("; {RUNS_WANTED} are asked for, and with {n} the intervals over runs are wide")
    } else {
        String::new()
    };
    let link = if in_docs {
        dir.trim_start_matches("docs/")
    } else {
        dir.as_str()
    };
    format!("[`{dir}/`]({link}/): {}{fewer}", set.made())
}

fn interval_text(ci: Option<Interval>) -> String {
    ci.map_or_else(String::new, |ci| {
        format!(" ({}–{})", num(ci.low), num(ci.high))
    })
}

fn percent(share: f64) -> String {
    format!("{:.0}%", share * 100.0)
}

/// "40% (10–80%)": the median and range of the points' between-run shares.
fn shares(points: &[&PointOverRuns]) -> String {
    let mut all: Vec<f64> = points.iter().map(|p| p.over.between_share()).collect();
    all.sort_by(f64::total_cmp);
    match (median(&all), all.first(), all.last()) {
        (Some(m), Some(lo), Some(hi)) => {
            format!("{} ({}–{})", percent(m), percent(*lo), percent(*hi))
        }
        _ => "-".to_owned(),
    }
}

/// Which side of 1 the interval over runs lies wholly on: below, above, neither.
/// How many of `points` Benjamini–Hochberg at 5% calls above 1 and below 1, over the
/// points' p-values of "the ratio is 1" over runs: the count that holds when many are judged
/// at once.
fn corrected(points: &[&PointOverRuns]) -> (usize, usize) {
    let p: Vec<Option<f64>> = points.iter().map(|p| p.over.p_value_of_one()).collect();
    let called = crate::stats::sessions::benjamini_hochberg(
        &p,
        crate::stats::sessions::FALSE_DISCOVERY_RATE,
    );
    let count = |above: bool| {
        points
            .iter()
            .zip(&called)
            .filter(|(p, c)| **c && (p.over.center > 1.0) == above)
            .count()
    };
    (count(true), count(false))
}

fn side(p: &PointOverRuns) -> Option<bool> {
    let ci = p.over.interval?;
    if ci.high < 1.0 {
        Some(false)
    } else if ci.low > 1.0 {
        Some(true)
    } else {
        None
    }
}

/// How many points held in every run on their own.
fn held_everywhere(points: &[&PointOverRuns]) -> usize {
    points
        .iter()
        .filter(|p| p.over.held_in() == p.over.runs())
        .count()
}

fn columns(points: &[&PointOverRuns], want: Option<bool>) -> String {
    let xs: Vec<String> = points
        .iter()
        .filter(|p| side(p) == want)
        .map(|p| format!("{}", p.at.x))
        .collect();
    if xs.is_empty() {
        "no column count".to_owned()
    } else {
        format!("{} columns", xs.join(", "))
    }
}

/// How many points two one-sided tests over runs show equivalent to 1: by the 90% interval
/// alone (±5%, ±10% not ±5%, neither) and held to Benjamini–Hochberg over the points at each
/// margin (±5%, ±10% including ±5%).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EquivalenceCounts {
    pub points: usize,
    pub five: usize,
    pub ten: usize,
    pub neither: usize,
    pub five_corrected: usize,
    pub ten_corrected: usize,
}

/// The counts of `points` (estimated at the 90% level).
pub fn equivalence_counts(points: &[PointOverRuns]) -> EquivalenceCounts {
    let judged: Vec<Equivalence> = points
        .iter()
        .filter_map(|p| p.over.interval.map(Equivalence::of_interval))
        .collect();
    let count = |e| judged.iter().filter(|j| **j == e).count();
    let corrected = |margin: f64| {
        let p_values: Vec<Option<f64>> = points
            .iter()
            .map(|p| p.over.equivalence_p_value(margin))
            .collect();
        benjamini_hochberg(&p_values, FALSE_DISCOVERY_RATE)
            .into_iter()
            .filter(|c| *c)
            .count()
    };
    EquivalenceCounts {
        points: judged.len(),
        five: count(Equivalence::WithinFive),
        ten: count(Equivalence::WithinTen),
        neither: count(Equivalence::NotShown),
        five_corrected: corrected(Equivalence::MARGINS[0]),
        ten_corrected: corrected(Equivalence::MARGINS[1]),
    }
}

/// One table row per point: where, the estimate with its 95% interval over runs, each run's
/// value, in how many runs it held, the between-run share, and how far a session's place in an
/// order the runs shared moved it (σ; 0% when each run had its own order or the places moved
/// nothing).
fn table(out: &mut String, first: &str, points: &[PointOverRuns], extra: Option<&[PointOverRuns]>) {
    write!(
        out,
        "| {first} | columns | over runs (95%) | each run | held in | between runs | place in the \
         order |"
    )
    .unwrap();
    if extra.is_some() {
        out.push_str(" TOST (90%) |");
    }
    out.push_str("\n| --- | --- | --- | --- | --- | --- | --- |");
    if extra.is_some() {
        out.push_str(" --- |");
    }
    out.push('\n');
    for p in points {
        let each: Vec<String> = p.over.per_run.iter().map(|v| num(*v)).collect();
        write!(
            out,
            "| {} | {} | {}{} | {} | {} of {} | {} | {} |",
            p.at.strategy,
            p.at.x,
            num(p.over.center),
            interval_text(p.over.interval),
            each.join(", "),
            p.over.held_in(),
            p.over.runs(),
            percent(p.over.between_share()),
            percent(p.over.schedule_sd),
        )
        .unwrap();
        if let Some(extra) = extra {
            let judged = extra
                .iter()
                .find(|e| e.at == p.at)
                .and_then(|e| e.over.interval)
                .map_or("-", |ci| Equivalence::of_interval(ci).text());
            write!(out, " {judged} |").unwrap();
        }
        out.push('\n');
    }
}

/// The text of [`DOCUMENT`]'s generated section, from the sets under `root`.
pub fn document(root: &Path) -> Result<String> {
    let mut out = String::new();
    let sets = [
        (
            replicates::COLUMN_SWEEP,
            "literal ÷ bound and local ÷ bare SQLite",
        ),
        (replicates::D1_BESIDE_DO, "D1 ÷ the Durable Object"),
        (
            replicates::D1_BESIDE_POSTGRES,
            "D1 ÷ Postgres through Hyperdrive",
        ),
        (
            replicates::TWO_WORKERS,
            "Rust ÷ JavaScript, sessions alternating",
        ),
        (
            replicates::TWO_WORKERS_PAIRED,
            "Rust ÷ JavaScript, both Workers in every session",
        ),
    ];
    for (spec, what) in sets {
        writeln!(out, "\n## {}\n", spec.name).unwrap();
        let Some(set) = stated(spec, root)? else {
            writeln!(
                out,
                "{what}: no set of two runs or more is committed under `{}/` yet; `cargo xtask \
                 reproduce --replicates {RUNS_WANTED} --only {}` makes one.",
                spec.dir(),
                spec.name
            )
            .unwrap();
            continue;
        };
        let ids: Vec<String> = set
            .runs
            .iter()
            .map(|r| format!("`{}`", r.record.run.id))
            .collect();
        writeln!(
            out,
            "{what}, from {} ({}); {}.\n",
            source(spec, &set, true),
            ids.join(", "),
            replicates::host_speeds(&set)
        )
        .unwrap();
        if spec == replicates::TWO_WORKERS || spec == replicates::TWO_WORKERS_PAIRED {
            let at_90 = replicates::rust_to_javascript(&set, EQUIVALENCE_LEVEL)?;
            table(
                &mut out,
                "Rust ÷ JS",
                &replicates::rust_to_javascript(&set, CONFIDENCE)?,
                Some(&at_90),
            );
            continue;
        }
        if spec == replicates::COLUMN_SWEEP {
            table(
                &mut out,
                "literal ÷ bound",
                &replicates::literal_to_bound(&set, CONFIDENCE)?,
                None,
            );
            out.push('\n');
        }
        if let Some((base, against)) = replicates::to_baseline(&set, CONFIDENCE)? {
            let first = format!("{} ÷ {base}", set.runs[0].record.run.target);
            table(&mut out, &first, &against, None);
        }
    }
    out.push_str(&super::map_over_runs::section(root)?);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::readme::replicates::{OLD_EXAMPLE_RUN, fixture};

    #[test]
    fn without_a_set_the_document_says_how_to_make_one_and_with_one_it_has_a_table_per_finding() {
        let empty = tempfile::tempdir().unwrap();
        let doc = document(empty.path()).unwrap();
        assert!(
            doc.contains("`cargo xtask reproduce --replicates 3 --only column-sweep` makes one"),
            "{doc}"
        );
        let root = fixture(
            "column-sweep",
            &[OLD_EXAMPLE_RUN, "docs/runs/column-sweep-replicate"],
        );
        let doc = document(root.path()).unwrap();
        assert!(
            doc.contains("| literal ÷ bound | columns | over runs (95%) |"),
            "{doc}"
        );
        assert!(doc.contains("| local ÷ sqlite | columns |"), "{doc}");
        assert!(doc.contains("(runs/replicates/column-sweep/)"), "{doc}");
        assert!(doc.contains("3 are asked for"), "{doc}");
        let root = fixture(
            "two-workers",
            &["docs/runs/two-workers", "docs/runs/two-workers-8x8"],
        );
        let doc = document(root.path()).unwrap();
        assert!(doc.contains("| Rust ÷ JS | columns |"), "{doc}");
        assert!(doc.contains(" TOST (90%) |"), "{doc}");
    }

    #[test]
    fn equivalence_counts_follow_the_intervals_and_the_correction() {
        let point = |center: f64, runs: &[Vec<f64>]| PointOverRuns {
            at: crate::studies::sweep::report::session_values::RatioPoint {
                target: crate::base::TargetKind::Local,
                label: String::new(),
                strategy: d1bench_core::Strategy::Bound,
                x: center,
            },
            over: crate::stats::runs::over_runs(runs, EQUIVALENCE_LEVEL).unwrap(),
        };
        let tight = point(1.0, &[vec![1.0, 1.01], vec![1.01, 1.0], vec![1.0, 1.005]]);
        let loose = point(2.0, &[vec![0.8, 0.85], vec![1.2, 1.25], vec![1.0, 1.05]]);
        let c = equivalence_counts(&[tight, loose]);
        assert_eq!((c.points, c.five, c.neither), (2, 1, 1));
        assert_eq!((c.five_corrected, c.ten_corrected), (1, 1));
    }
}
