//! The README's sections as a committed replicate set states them, each in place of the
//! section one run gives: the findings over the column sweep's set, D1 ÷ the Durable Object
//! over its set, Rust ÷ JavaScript over the two Workers' set. Each says how many runs it rests
//! on, gives its estimates with their interval over runs, in how many runs each held and the
//! share of the variance between runs; `None` where the set holds fewer than two runs.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context, Result};
use d1bench_core::Strategy;

use super::beside_chart;
use super::{
    DOCUMENT, EQUIVALENCE_LEVEL, columns, corrected, equivalence_counts, held_everywhere,
    interval_text, percent, shares, side, source, stated,
};
use crate::base::numbers::num;
use crate::readme::replicates::{self, PointOverRuns, SetSpec};
use crate::records::csv;
use crate::records::replicates::ReplicateSet;
use crate::stats::{CONFIDENCE, median};
use crate::studies::sweep::report::instrument;
use crate::studies::sweep::report::points::summary_rows;
use crate::studies::sweep::row::ProbeRow;

/// "commit `abc1234`", or every commit the runs were made at.
fn commits(set: &ReplicateSet) -> String {
    let mut all: Vec<String> = set
        .runs
        .iter()
        .map(|r| format!("`{}`", r.record.git.commit.short(7)))
        .collect();
    all.dedup();
    if all.len() == 1 {
        format!("commit {}", all[0])
    } else {
        format!("commits {}", all.join(", "))
    }
}

/// "seeds 1, 2, 3" as the runs' records give them.
fn seeds(set: &ReplicateSet) -> String {
    let all: Vec<String> = set
        .runs
        .iter()
        .map(|r| {
            r.record
                .overrides
                .seed
                .map_or("?".to_owned(), |s| s.to_string())
        })
        .collect();
    format!("seeds {}", all.join(", "))
}

/// Each strategy's centre over runs, median over the points and range: "bound 6.87
/// (3.50–11.5)".
fn by_strategy(points: &[PointOverRuns]) -> String {
    let mut parts = Vec::new();
    for strategy in Strategy::ALL {
        let mut centers: Vec<f64> = points
            .iter()
            .filter(|p| p.at.strategy == strategy)
            .map(|p| p.over.center)
            .collect();
        centers.sort_by(f64::total_cmp);
        if let (Some(m), Some(lo), Some(hi)) = (median(&centers), centers.first(), centers.last()) {
            parts.push(format!("{strategy} {} ({}–{})", num(m), num(*lo), num(*hi)));
        }
    }
    parts.join(", ")
}

/// The newest run's rows.
fn newest_rows(set: &ReplicateSet) -> Result<Vec<ProbeRow>> {
    let newest = set.runs.last().expect("a set holds a run");
    csv::read(&newest.dir.results_csv())
        .with_context(|| format!("{} cannot be read", newest.dir.results_csv().display()))
}

/// The findings section over the column sweep's set.
pub fn findings(root: &Path) -> Result<Option<String>> {
    let spec = replicates::COLUMN_SWEEP;
    let Some(set) = stated(spec, root)? else {
        return Ok(None);
    };
    let n = set.runs.len();
    let record = &set.runs.last().expect("two runs or more").record;
    let target = record.run.target;
    let mut out = format!(
        "From {} (`{}` on `{target}`, profile `{}`, {}, {} sessions each, {}): each run's figure \
         the geometric mean of its sessions', here their geometric mean over the runs with a 95% \
         interval (Student's t over the runs, with their shared order's term); \"held in\": the runs whose own interval lies \
         wholly on that side of 1; between-run share: the part of a session's variance between \
         runs ([per point]({DOCUMENT}#{}), [Intervals](docs/run-outputs.md#intervals)):\n\n",
        source(spec, &set, false),
        record.run.experiment,
        record.run.profile,
        commits(&set),
        record
            .run
            .sessions
            .map_or("?".to_owned(), |s| s.to_string()),
        seeds(&set),
        spec.name,
    );
    let axis = record.run.x_axis.context("the column sweep is a sweep")?;
    let newest = summary_rows(&newest_rows(&set)?, axis, record.run.precision);
    if let Some(line) = super::super::findings::rows_per_statement(&newest, target) {
        writeln!(out, "{line}").unwrap();
    }
    let ratios = replicates::literal_to_bound(&set, CONFIDENCE)?;
    let all: Vec<&PointOverRuns> = ratios.iter().collect();
    writeln!(
        out,
        "- **literal ÷ bound** (each session's median of its paired repeats' ratios of ms per \
         1,000 rows): literal is faster, the interval over runs wholly below 1, at {}; bound is \
         faster, wholly above 1, at {}; the interval includes 1 at {}; Benjamini–Hochberg at 5% \
         over the {} column counts calls literal faster at {} and bound at {}. Held in each of the \
         {n} runs at {} of {} column counts; between-run share {} (median, range).",
        columns(&all, Some(false)),
        columns(&all, Some(true)),
        columns(&all, None),
        all.len(),
        corrected(&all).1,
        corrected(&all).0,
        held_everywhere(&all),
        all.len(),
        shares(&all),
    )
    .unwrap();
    if let Some(widest) = all.last() {
        writeln!(
            out,
            "- **At {} columns**: literal ÷ bound = {}{}, held in {} of {n} runs, between-run \
             share {}.",
            widest.at.x,
            num(widest.over.center),
            interval_text(widest.over.interval),
            widest.over.held_in(),
            percent(widest.over.between_share()),
        )
        .unwrap();
    }
    if let Some((base, against)) = replicates::to_baseline(&set, CONFIDENCE)? {
        let points: Vec<&PointOverRuns> = against.iter().collect();
        writeln!(
            out,
            "- **{target} ÷ {}** (each session's ratio of the median inside clocks to its \
             baseline session's beside it, the writes alone on both sides), median over the \
             column counts (range): {}; above 1 over runs at {} of {} points ({} after \
             Benjamini–Hochberg at 5%), held in each of \
             the {n} runs at {}; between-run share {}.",
            base.prose(),
            by_strategy(&against),
            points.iter().filter(|p| side(p) == Some(true)).count(),
            points.len(),
            corrected(&points).0,
            held_everywhere(&points),
            shares(&points),
        )
        .unwrap();
    }
    writeln!(
        out,
        "\nThese are local figures: compare the shape, not the milliseconds, with production. \
         Reproduce: `cargo xtask reproduce --replicates {n} --only {}` ({:.0} min here, the runs' \
         own durations).",
        spec.name,
        set.minutes(),
    )
    .unwrap();
    Ok(Some(out))
}

/// What a section of the local D1 beside another engine says of that engine: the question it
/// answers, what the other side is, its short name in the ratio, and how its limits differ.
struct Beside {
    spec: SetSpec,
    question: &'static str,
    other: &'static str,
    short: &'static str,
    limits: fn(&Path) -> Result<String>,
    /// Whether the section shows the set's figure ([`beside_chart`]) under its text.
    figure: bool,
}

/// D1 beside the Durable Object: its limits as its ladders found them.
const BESIDE_DO: Beside = Beside {
    spec: replicates::D1_BESIDE_DO,
    question: "D1 or a Durable Object?",
    other: "the Worker writing through a SQLite-backed Durable Object",
    short: "DO",
    limits: super::super::durable::limits_line,
    figure: false,
};

/// D1 beside Postgres through Hyperdrive: its limits as the planner takes them from core-pg.
const BESIDE_POSTGRES: Beside = Beside {
    spec: replicates::D1_BESIDE_POSTGRES,
    question: "D1 or Postgres through Hyperdrive?",
    other: "a Worker writing through a Hyperdrive binding to PostgreSQL on this machine ([no \
            pooling, no network](docs/targets.md#postgres-through-hyperdrive))",
    short: "Postgres",
    limits: postgres_limits_line,
    figure: true,
};

/// How Postgres's limits change the plan: bound's rows per statement on each engine.
fn postgres_limits_line(_: &Path) -> Result<String> {
    let d1 = d1bench_core::limits::MAX_BOUND_PARAMETERS;
    let pg = d1bench_core_pg::limits::MAX_BOUND_PARAMETERS;
    Ok(format!(
        "On Postgres's limits bound carries floor({} / C) rows a statement, on D1's floor({d1} / \
         C).",
        crate::base::numbers::thousands(pg),
    ))
}

/// Draws the figure of each set of D1 beside another engine whose section shows one, into the
/// set's folder (nothing for a set of fewer than two runs).
pub fn write_figures(root: &Path) -> Result<()> {
    for about in [BESIDE_DO, BESIDE_POSTGRES] {
        if about.figure {
            beside_chart::render(root, about.spec, about.short)?;
        }
    }
    Ok(())
}

/// The section on D1 beside a Durable Object over its set.
pub fn durable(root: &Path) -> Result<Option<String>> {
    beside(root, &BESIDE_DO)
}

/// The section on D1 beside Postgres through Hyperdrive over its set, and what COPY came to on
/// Postgres's own map ([`super::copy`]).
pub fn postgres(root: &Path) -> Result<Option<String>> {
    let Some(mut text) = beside(root, &BESIDE_POSTGRES)? else {
        return Ok(None);
    };
    if let Some(copy) = super::copy::sentence(root)? {
        text.push_str(&format!("\n{copy}\n"));
    }
    Ok(Some(text))
}

/// The local D1 ÷ the other engine on the inside clock over the set's runs, per strategy and
/// point by point, corrected over the points, with the limits that differ.
fn beside(root: &Path, about: &Beside) -> Result<Option<String>> {
    let spec = about.spec;
    let Some(set) = stated(spec, root)? else {
        return Ok(None);
    };
    let Some((_, against)) = replicates::to_baseline(&set, CONFIDENCE)? else {
        return Ok(None);
    };
    let n = set.runs.len();
    let record = &set.runs.last().expect("two runs or more").record;
    let points: Vec<&PointOverRuns> = against.iter().collect();
    let count = |want| points.iter().filter(|p| side(p) == want).count();
    let short = about.short;
    let figure = if about.figure {
        format!(
            "\n![D1 ÷ {short} per strategy against columns, over {n} runs]({}/{}.png)\n",
            spec.dir(),
            beside_chart::name(short)
        )
    } else {
        String::new()
    };
    Ok(Some(format!(
        "**{}** The local D1 alternating with {}, over {} ({}, {} sessions each; [per \
         point]({DOCUMENT}#{})): D1 ÷ {short} on the inside clock, median over column counts \
         (range): {}. Over runs (95%, t over the runs) D1 is slower at {} of {} points, faster \
         at {}, neither shown at {} (Benjamini–Hochberg at 5%: slower at {}, faster at {}); held \
         in every run at {}; between-run share {}. {} Reproduce: `cargo xtask reproduce --replicates {n} --only \
         {}` ({:.0} min here).\n{figure}",
        about.question,
        about.other,
        source(spec, &set, false),
        commits(&set),
        record
            .run
            .sessions
            .map_or("?".to_owned(), |s| s.to_string()),
        spec.name,
        by_strategy(&against),
        count(Some(true)),
        points.len(),
        count(Some(false)),
        count(None),
        corrected(&points).0,
        corrected(&points).1,
        held_everywhere(&points),
        shares(&points),
        (about.limits)(root)?,
        spec.name,
        set.minutes(),
    )))
}

/// The instrument's section over the two Workers' set.
pub fn instrument(root: &Path) -> Result<Option<String>> {
    // The paired set when it is committed (its ratios are taken within sessions), the
    // alternating one before it.
    let alternating = stated(replicates::TWO_WORKERS, root)?;
    let (spec, set, before) = match stated(replicates::TWO_WORKERS_PAIRED, root)? {
        Some(paired) => (replicates::TWO_WORKERS_PAIRED, paired, alternating),
        None => match alternating {
            Some(set) => (replicates::TWO_WORKERS, set, None),
            None => return Ok(None),
        },
    };
    let paired = set.runs[0].record.run.paired_workers;
    let n = set.runs.len();
    let record = &set.runs.last().expect("two runs or more").record;
    let axis = record
        .run
        .x_axis
        .context("the two Workers' run is a sweep")?;
    let newest = instrument::points(&newest_rows(&set)?, axis);
    let at_95 = replicates::rust_to_javascript(&set, CONFIDENCE)?;
    let at_90 = replicates::rust_to_javascript(&set, EQUIVALENCE_LEVEL)?;
    let mut centers: Vec<f64> = at_95.iter().map(|p| p.over.center).collect();
    centers.sort_by(f64::total_cmp);
    let all: Vec<&PointOverRuns> = at_95.iter().collect();
    let c = equivalence_counts(&at_90);
    // Each run's sessions of each Worker: every session when paired; alternating, half each.
    let per_run: Vec<usize> = set
        .runs
        .iter()
        .map(|r| r.record.run.sessions.unwrap_or(0) / if paired { 1 } else { 2 })
        .collect();
    let each = match per_run.windows(2).all(|w| w[0] == w[1]) {
        true => format!("{} a run", per_run.first().copied().unwrap_or(0)),
        false => per_run
            .iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(" + "),
    };
    let total: usize = per_run.iter().sum();
    let mut out = format!(
        "These figures come from the Rust Worker (`worker/`). Against a plain JavaScript Worker \
         (`worker-js/`, the same statements and window) over {} ({}, {each} of each Worker, \
         {total} and {total} in all, {}, the column sweep's full profile; [per \
         point]({DOCUMENT}#{})): Rust ÷ JavaScript on the inside clock, per point over runs (95%, \
         t over the runs): {} to {}, median {}; by two one-sided tests on the 90% interval over \
         runs, equivalent to 1 within ±5% at {}, within ±10% (not ±5%) at {}, and at neither at \
         {} of {} points (Benjamini–Hochberg at 5% over the points: ±5% at {}, ±10% at {}); \
         between-run share {}.{}\n\n",
        source(spec, &set, false),
        match paired {
            true => "both Workers in every session, each probe sent to both (`--paired-workers`)",
            false => "sessions alternating",
        },
        commits(&set),
        spec.name,
        centers.first().map_or("-".into(), |v| num(*v)),
        centers.last().map_or("-".into(), |v| num(*v)),
        median(&centers).map_or("-".into(), num),
        c.five,
        c.ten,
        c.neither,
        c.points,
        c.five_corrected,
        c.ten_corrected,
        shares(&all),
        before_text(before.as_ref())?,
    );
    let cell = |strategy: Strategy, columns: f64| {
        at_95
            .iter()
            .find(|p| p.at.strategy == strategy && p.at.x == columns)
            .map_or_else(
                || "-".to_owned(),
                |p| {
                    format!(
                        "{}{}; {} of {n}",
                        num(p.over.center),
                        interval_text(p.over.interval),
                        p.over.held_in()
                    )
                },
            )
    };
    // One column count in prose; every point is in the per-point document.
    writeln!(
        out,
        "At 100 columns, Rust ÷ JS: bound {}, literal {} (held in: runs whose own interval \
         excludes 1).",
        cell(Strategy::Bound, 100.0),
        cell(Strategy::Literal, 100.0)
    )
    .unwrap();
    writeln!(
        out,
        "{} (Newest run.) Reproduce: `cargo xtask reproduce --replicates {n} --only {}` \
         ({:.0} min here).",
        super::super::instrument::handover(&newest),
        spec.name,
        set.minutes(),
    )
    .unwrap();
    Ok(Some(out))
}

/// What the alternating design showed, beside the paired set that replaced it: " With sessions
/// alternating instead ([4 runs](…)): ±5% at 1, ±10% at 9, neither at 55 of 65."
fn before_text(before: Option<&ReplicateSet>) -> Result<String> {
    let Some(set) = before else {
        return Ok(String::new());
    };
    let c = equivalence_counts(&replicates::rust_to_javascript(set, EQUIVALENCE_LEVEL)?);
    Ok(format!(
        " With sessions alternating instead ([{} runs]({}/)): ±5% at {}, ±10% at {}, neither at \
         {} of {}.",
        set.runs.len(),
        replicates::TWO_WORKERS.dir(),
        c.five,
        c.ten,
        c.neither,
        c.points
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::readme::replicates::{OLD_EXAMPLE_RUN, fixture};

    #[test]
    fn without_a_set_of_two_runs_no_section_is_stated_over_runs() {
        let empty = tempfile::tempdir().unwrap();
        assert!(findings(empty.path()).unwrap().is_none());
        assert!(durable(empty.path()).unwrap().is_none());
        assert!(instrument(empty.path()).unwrap().is_none());
        let one = fixture("column-sweep", &["docs/example-run"]);
        assert!(findings(one.path()).unwrap().is_none());
    }

    #[test]
    fn a_set_of_two_column_sweeps_is_stated_saying_three_are_asked() {
        let root = fixture(
            "column-sweep",
            &[OLD_EXAMPLE_RUN, "docs/runs/column-sweep-replicate"],
        );
        let text = findings(root.path()).unwrap().unwrap();
        assert!(
            text.contains("; 3 are asked for") && text.contains(": 2 runs made "),
            "{text}"
        );
        assert!(text.contains("seeds 1, 2"), "{text}");
        assert!(text.contains("- **Rows per statement.**"), "{text}");
        assert!(text.contains(" of 12 column counts"), "{text}");
        assert!(
            text.contains("- **At 100 columns**: literal ÷ bound = "),
            "{text}"
        );
        assert!(text.contains("- **local ÷ bare SQLite**"), "{text}");
        assert!(
            text.contains("`cargo xtask reproduce --replicates 2 --only column-sweep`"),
            "{text}"
        );
        // Not longer than the section one run gives: the README keeps its size.
        let paths = crate::paths::Paths::new(crate::paths::project_root());
        let alone = crate::readme::Section::Findings.expected(&paths).unwrap();
        assert!(
            text.len() <= alone.len() + 200,
            "{} > {}",
            text.len(),
            alone.len()
        );
    }

    #[test]
    fn a_set_of_two_worker_runs_states_the_equivalence_counts_and_100_columns() {
        let root = fixture(
            "two-workers",
            &["docs/runs/two-workers", "docs/runs/two-workers-8x8"],
        );
        let text = instrument(root.path()).unwrap().unwrap();
        let set = replicates::TWO_WORKERS.read(root.path()).unwrap().unwrap();
        let c =
            equivalence_counts(&replicates::rust_to_javascript(&set, EQUIVALENCE_LEVEL).unwrap());
        assert_eq!(c.five + c.ten + c.neither, c.points);
        assert!(c.five_corrected <= c.five);
        assert!(
            text.contains(&format!(
                "equivalent to 1 within ±5% at {}, within ±10% (not ±5%) at {}, and at neither at \
                 {} of {} points",
                c.five, c.ten, c.neither, c.points
            )),
            "{text}"
        );
        assert!(text.contains("At 100 columns, Rust ÷ JS: bound "), "{text}");
        assert!(text.contains(" of 2 (held in: "), "{text}");
        assert!(text.contains("commits `269492b`, `cf1637f`"), "{text}");
        let paths = crate::paths::Paths::new(crate::paths::project_root());
        let alone = crate::readme::Section::Instrument.expected(&paths).unwrap();
        assert!(
            text.len() <= alone.len() + 200,
            "{} > {}",
            text.len(),
            alone.len()
        );
    }

    /// A set of D1 beside the object, from the one committed run twice (nothing varies between
    /// them), with the parity tables its section quotes.
    fn d1_fixture() -> tempfile::TempDir {
        let root = fixture("d1-beside-do", &["docs/runs/d1-beside-do"]);
        let set = root.path().join(replicates::D1_BESIDE_DO.dir());
        let first = std::fs::read_dir(&set)
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        let second = set.join("second");
        std::fs::create_dir_all(&second).unwrap();
        for file in ["run.toml", "results.csv"] {
            std::fs::copy(first.join(file), second.join(file)).unwrap();
        }
        // The parity tables the section quotes.
        let reports = root.path().join("reports");
        std::fs::create_dir_all(&reports).unwrap();
        for target in ["local", "do"] {
            let name = format!("parity-{target}.csv");
            std::fs::copy(
                crate::paths::project_root().join("reports").join(&name),
                reports.join(&name),
            )
            .unwrap();
        }
        root
    }

    #[test]
    fn a_set_of_d1_beside_the_object_is_stated_over_its_runs() {
        let root = d1_fixture();
        let text = durable(root.path()).unwrap().unwrap();
        assert!(text.starts_with("**D1 or a Durable Object?**"), "{text}");
        assert!(text.contains(": 2 runs made "), "{text}");
        assert!(text.contains("between-run share 0% (0%–0%)"), "{text}");
        assert!(
            text.contains("--replicates 2 --only d1-beside-do"),
            "{text}"
        );
    }

    /// A set of D1 beside Postgres: the committed set's first two runs.
    fn postgres_fixture() -> tempfile::TempDir {
        let root = crate::paths::project_root();
        let set = root.join(replicates::D1_BESIDE_POSTGRES.dir());
        let mut runs: Vec<String> = std::fs::read_dir(&set)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.join("run.toml").is_file())
            .map(|p| p.strip_prefix(&root).unwrap().display().to_string())
            .collect();
        runs.sort();
        runs.truncate(2);
        let runs: Vec<&str> = runs.iter().map(String::as_str).collect();
        fixture("d1-beside-postgres", &runs)
    }

    #[test]
    fn a_set_of_d1_beside_postgres_is_stated_over_its_runs_with_postgres_limits() {
        let empty = tempfile::tempdir().unwrap();
        assert!(postgres(empty.path()).unwrap().is_none());
        let root = postgres_fixture();
        let text = postgres(root.path()).unwrap().unwrap();
        assert!(
            text.starts_with("**D1 or Postgres through Hyperdrive?**"),
            "{text}"
        );
        assert!(text.contains("D1 ÷ Postgres on the inside clock"), "{text}");
        assert!(text.contains(": 2 runs made "), "{text}");
        assert!(
            text.contains(
                "bound carries floor(65,535 / C) rows a statement, on D1's floor(100 / C)"
            ),
            "{text}"
        );
        assert!(
            text.contains("--replicates 2 --only d1-beside-postgres"),
            "{text}"
        );
    }

    /// With every set stated (of two runs here, whose sections are the longer by saying three
    /// are asked), README.md stays within its size.
    #[test]
    fn the_readme_with_every_set_stated_stays_within_its_size() {
        use crate::readme::{README_MAX_BYTES, Section};
        let readme =
            std::fs::read_to_string(crate::paths::project_root().join("README.md")).unwrap();
        let column = fixture(
            "column-sweep",
            &[OLD_EXAMPLE_RUN, "docs/runs/column-sweep-replicate"],
        );
        let two = fixture(
            "two-workers",
            &["docs/runs/two-workers", "docs/runs/two-workers-8x8"],
        );
        let d1 = d1_fixture();
        let mut with_sets = readme.clone();
        for (section, text) in [
            (Section::Findings, findings(column.path()).unwrap().unwrap()),
            (
                Section::Instrument,
                instrument(two.path()).unwrap().unwrap(),
            ),
            (Section::Durable, durable(d1.path()).unwrap().unwrap()),
            (
                Section::Postgres,
                postgres(postgres_fixture().path()).unwrap().unwrap(),
            ),
        ] {
            with_sets = section.replace(&with_sets, &text).unwrap();
        }
        assert!(
            with_sets.len() <= README_MAX_BYTES,
            "README.md with every set stated is {} bytes, more than {README_MAX_BYTES} (today {})",
            with_sets.len(),
            readme.len()
        );
    }
}
