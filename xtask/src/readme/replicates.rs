//! The replicate sets the README's findings are stated over, and their estimates: which sets
//! there are (`docs/runs/replicates/<name>/`, [`SETS`]), the command each repeats, every run
//! they hold for the quoted-runs checks ([`quoted_runs`]), and per finding each point's two-level
//! estimate over the set's runs ([`stats::runs`]), each run's session values taken from the code
//! that gives that run its own figure ([`session_values`]).

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result};

use crate::base::TargetKind;
use crate::records::replicates::{REPLICATES_DIR, ReplicateSet};
use crate::records::{RunRecord, csv};
use crate::reports::host_speed::HostSpeed;
use crate::stats::runs::{OverRuns, Schedules, over_runs_of_change, over_runs_scheduled};
use crate::studies::sweep::Axis;
use crate::studies::sweep::report::instrument::WorkerSessions;
use crate::studies::sweep::report::session_values::{self, RatioPoint, SessionValues};
use crate::studies::sweep::row::ProbeRow;

/// A replicate set the README knows: its folder's name under [`REPLICATES_DIR`] and the
/// committed run whose recorded command it repeats (the command its runs were made with, until
/// the set exists and its own first run says it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SetSpec {
    pub name: &'static str,
    /// A run directory relative to the project's root.
    pub source: &'static str,
    /// The baseline the set's runs take where `source`'s command has another (the Durable
    /// Object's map repeats the decision map's command with `--baseline do`); `None`: source's.
    pub baseline: Option<TargetKind>,
    /// For a set of `source`'s command with both Workers in every session instead
    /// (`--paired-workers`, no baseline): how many sessions each run has.
    pub paired_sessions: Option<usize>,
    /// For a set of another study alone on one target (no baseline), `source` giving the rest
    /// of the command: the study and the target.
    pub alone_on: Option<(&'static str, TargetKind)>,
}

impl SetSpec {
    /// The set's folder, relative to the project's root.
    pub fn dir(self) -> String {
        format!("{REPLICATES_DIR}/{}", self.name)
    }

    /// The set under `root`, if it is committed.
    pub fn read(self, root: &Path) -> Result<Option<ReplicateSet>> {
        ReplicateSet::find(root, self.name)
    }
}

/// The column sweep, full profile, 8 sessions, bare SQLite beside: literal ÷ bound and local ÷
/// bare SQLite.
pub const COLUMN_SWEEP: SetSpec = SetSpec {
    name: "column-sweep",
    source: super::EXAMPLE_RUN,
    baseline: None,
    paired_sessions: None,
    alone_on: None,
};
/// The local D1 beside the Durable Object (`--baseline do`): D1 ÷ DO.
pub const D1_BESIDE_DO: SetSpec = SetSpec {
    name: "d1-beside-do",
    source: super::durable::D1_BESIDE_DO,
    baseline: None,
    paired_sessions: None,
    alone_on: None,
};
/// The local D1 beside Postgres through Hyperdrive (the same command with `--baseline
/// hyperdrive`): D1 ÷ Postgres.
pub const D1_BESIDE_POSTGRES: SetSpec = SetSpec {
    name: "d1-beside-postgres",
    source: super::durable::D1_BESIDE_DO,
    baseline: Some(TargetKind::Hyperdrive),
    paired_sessions: None,
    alone_on: None,
};
/// The two Workers alternating (`--alternate-workers --sessions 12`): Rust ÷ JavaScript.
pub const TWO_WORKERS: SetSpec = SetSpec {
    name: "two-workers",
    source: super::instrument::TWO_WORKERS,
    baseline: None,
    paired_sessions: None,
    alone_on: None,
};
/// The two Workers side by side in every session (`--paired-workers --sessions 8`, no
/// baseline): Rust ÷ JavaScript within sessions, which their drift cannot move.
pub const TWO_WORKERS_PAIRED: SetSpec = SetSpec {
    name: "two-workers-paired",
    source: super::instrument::TWO_WORKERS,
    baseline: None,
    paired_sessions: Some(8),
    alone_on: None,
};
/// The decision map (columns × row size).
pub const DECISION_MAP: SetSpec = SetSpec {
    name: "decision-map",
    source: "docs/runs/decision-map",
    baseline: None,
    paired_sessions: None,
    alone_on: None,
};

/// The decision map with the Durable Object beside the local D1 (`--baseline do`): the
/// object's map, and a second local map from the same runs.
pub const DECISION_MAP_DO: SetSpec = SetSpec {
    name: "decision-map-do",
    source: "docs/runs/decision-map",
    baseline: Some(TargetKind::Do),
    paired_sessions: None,
    alone_on: None,
};

/// Postgres's own decision map (`decision-map-postgres --target hyperdrive --no-baseline`): the
/// decision map's grid on Postgres alone, COPY FROM STDIN among the strategies, each planned
/// against Postgres's limits.
pub const DECISION_MAP_POSTGRES: SetSpec = SetSpec {
    name: "decision-map-postgres",
    source: "docs/runs/decision-map",
    baseline: None,
    paired_sessions: None,
    alone_on: Some(("decision-map-postgres", TargetKind::Hyperdrive)),
};

/// Every set the README knows, in the order `reproduce` makes them.
pub const SETS: [SetSpec; 8] = [
    COLUMN_SWEEP,
    D1_BESIDE_DO,
    D1_BESIDE_POSTGRES,
    TWO_WORKERS,
    TWO_WORKERS_PAIRED,
    DECISION_MAP,
    DECISION_MAP_DO,
    DECISION_MAP_POSTGRES,
];

/// Every run the README quotes, relative to the project's root: [`super::QUOTED_RUNS`] and every
/// run of every committed set.
pub fn quoted_runs(root: &Path) -> Result<Vec<String>> {
    let mut runs: Vec<String> = super::QUOTED_RUNS.iter().map(|d| d.to_string()).collect();
    for spec in SETS {
        if let Some(set) = spec.read(root)? {
            for dir in set.dirs() {
                let relative = dir.strip_prefix(root).unwrap_or(dir);
                runs.push(relative.display().to_string());
            }
        }
    }
    Ok(runs)
}

/// Each run's host speed, so a reader sees whether the runs were made on one machine at one
/// speed: "host speed per run (...): 31.0, 30.8 and 65.8 ms; the slowest ×2.12 the fastest",
/// in the set's order, "not recorded" for a run made before the readings were.
pub fn host_speeds(set: &ReplicateSet) -> String {
    let speeds: Vec<Option<f64>> = set
        .runs
        .iter()
        .map(|r| HostSpeed::of(&r.record).map(|s| s.center_ms))
        .collect();
    let texts: Vec<String> = speeds
        .iter()
        .map(|s| s.map_or_else(|| "not recorded".to_owned(), |ms| format!("{ms:.1}")))
        .collect();
    let known: Vec<f64> = speeds.iter().flatten().copied().collect();
    if known.is_empty() {
        return "no run records the host's speed (they were made before the readings were)"
            .to_owned();
    }
    let spread = match (
        known.iter().copied().reduce(f64::min),
        known.iter().copied().reduce(f64::max),
    ) {
        (Some(fast), Some(slow)) if known.len() > 1 => {
            format!("; the slowest ×{:.2} the fastest", slow / fast)
        }
        _ => String::new(),
    };
    let list = match texts.split_last() {
        Some((last, init)) if !init.is_empty() => format!("{} and {last}", init.join(", ")),
        _ => texts.join(""),
    };
    format!(
        "host speed per run (the fixed reference workload's time, geometric mean over the run's \
         readings; lower is faster): {list} ms{spread}"
    )
}

/// One point's estimate over a set's runs.
#[derive(Debug, Clone, PartialEq)]
pub struct PointOverRuns {
    pub at: RatioPoint,
    pub over: OverRuns,
}

/// Each run's rows and axis, in the set's order.
fn read_runs(set: &ReplicateSet) -> Result<Vec<(Vec<ProbeRow>, Axis)>> {
    set.runs
        .iter()
        .map(|r| {
            let rows: Vec<ProbeRow> = csv::read(&r.dir.results_csv())
                .with_context(|| format!("{} cannot be read", r.dir.results_csv().display()))?;
            let axis = sweep_axis(&r.record, &r.dir.path)?;
            Ok((rows, axis))
        })
        .collect()
}

fn sweep_axis(record: &RunRecord, dir: &Path) -> Result<Axis> {
    record
        .run
        .x_axis
        .with_context(|| format!("{} is not a sweep", dir.display()))
}

/// The points of the first run, each with every run's values there (a run without the point
/// gives none, and [`over_runs`] leaves it out).
fn by_point<T: Clone>(per_run: Vec<Vec<(RatioPoint, T)>>, none: T) -> Vec<(RatioPoint, Vec<T>)> {
    let Some(first) = per_run.first() else {
        return Vec::new();
    };
    first
        .iter()
        .map(|(at, _)| {
            let values = per_run
                .iter()
                .map(|run| {
                    run.iter()
                        .find(|(other, _)| other == at)
                        .map_or_else(|| none.clone(), |(_, v)| v.clone())
                })
                .collect();
            (at.clone(), values)
        })
        .collect()
}

/// Each point over the runs, whose sessions pair by index where runs replayed one schedule.
fn estimate(per_run: Vec<SessionValues>, schedules: &Schedules, level: f64) -> Vec<PointOverRuns> {
    by_point(per_run, BTreeMap::new())
        .into_iter()
        .filter_map(|(at, runs)| {
            Some(PointOverRuns {
                over: over_runs_scheduled(&runs, schedules, level)?,
                at,
            })
        })
        .collect()
}

/// literal ÷ bound on the runs' own target at each point, over the set's runs.
pub fn literal_to_bound(set: &ReplicateSet, level: f64) -> Result<Vec<PointOverRuns>> {
    let target = set.runs[0].record.run.target;
    let per_run = read_runs(set)?
        .iter()
        .map(|(rows, axis)| {
            session_values::literal_to_bound(rows, *axis)
                .into_iter()
                .filter(|(at, _)| at.target == target && at.label.is_empty())
                .collect()
        })
        .collect();
    Ok(estimate(per_run, &set.schedules(), level))
}

/// The runs' target ÷ their baseline at each point, over the set's runs; `None` without a
/// baseline.
pub fn to_baseline(
    set: &ReplicateSet,
    level: f64,
) -> Result<Option<(TargetKind, Vec<PointOverRuns>)>> {
    let target = set.runs[0].record.run.target;
    let mut base = None;
    let mut per_run = Vec::new();
    for (rows, axis) in read_runs(set)? {
        let (b, values) = session_values::to_baseline(&rows, axis);
        base = base.or(b);
        per_run.push(
            values
                .into_iter()
                .filter(|(at, _)| at.target == target && at.label.is_empty())
                .collect(),
        );
    }
    Ok(base.map(|b| (b, estimate(per_run, &set.schedules(), level))))
}

/// One run's sessions of the two sides of a ratio: JavaScript's, then Rust's.
type TwoSides = (Vec<f64>, Vec<f64>);

/// Rust ÷ JavaScript at each point, over the set's runs: over each run's paired ratios when
/// its Workers shared sessions ([`over_runs`], as a ratio to a baseline is), else over the two
/// Workers' sessions of each run ([`over_runs_of_change`]).
pub fn rust_to_javascript(set: &ReplicateSet, level: f64) -> Result<Vec<PointOverRuns>> {
    let per_run: Vec<Vec<(RatioPoint, WorkerSessions)>> = read_runs(set)?
        .iter()
        .map(|(rows, axis)| {
            session_values::rust_to_javascript(rows, *axis)
                .into_iter()
                .filter(|(at, _)| at.label.is_empty())
                .collect()
        })
        .collect();
    let paired = per_run.iter().flatten().any(|(_, w)| !w.paired.is_empty());
    if paired {
        let ratios: Vec<SessionValues> = per_run
            .into_iter()
            .map(|run| run.into_iter().map(|(at, w)| (at, w.paired)).collect())
            .collect();
        return Ok(estimate(ratios, &set.schedules(), level));
    }
    let sides: Vec<Vec<(RatioPoint, TwoSides)>> = per_run
        .into_iter()
        .map(|run| {
            run.into_iter()
                .map(|(at, w)| (at, (w.js, w.rust)))
                .collect()
        })
        .collect();
    Ok(by_point(sides, (Vec::new(), Vec::new()))
        .into_iter()
        .filter_map(|(at, runs)| {
            Some(PointOverRuns {
                over: over_runs_of_change(&runs, level)?,
                at,
            })
        })
        .collect())
}

/// A set assembled for the tests from committed runs, in a temporary project root:
/// `docs/runs/replicates/<name>/<run-id>/` holding each run's run.toml and results.csv.
#[cfg(test)]
pub(crate) fn fixture(name: &str, runs: &[&str]) -> tempfile::TempDir {
    let root = crate::paths::project_root();
    let scratch = tempfile::tempdir().unwrap();
    for run in runs {
        let record = RunRecord::read(&root.join(run).join("run.toml")).unwrap();
        let to = scratch
            .path()
            .join(REPLICATES_DIR)
            .join(name)
            .join(&record.run.id);
        std::fs::create_dir_all(&to).unwrap();
        for file in ["run.toml", "results.csv"] {
            std::fs::copy(root.join(run).join(file), to.join(file)).unwrap();
        }
    }
    scratch
}

/// The example run of 2026-12-03 (seed 1), kept in the column-sweep set: with
/// `docs/runs/column-sweep-replicate` (seed 2) the tests' fixed pair of runs.
#[cfg(test)]
pub(crate) const OLD_EXAMPLE_RUN: &str = "docs/runs/replicates/column-sweep/20261203T183950Z-local";

/// Where the tests' sets live: a fixture root's set folder.
#[cfg(test)]
pub(crate) fn fixture_set(root: &Path, name: &str) -> std::path::PathBuf {
    root.join(REPLICATES_DIR).join(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paths::project_root;
    use crate::stats::CONFIDENCE;
    use crate::stats::sessions::over_sessions;

    #[test]
    fn the_set_of_the_example_run_and_its_replicate_gives_each_runs_own_figure_per_run() {
        let root = fixture(
            "column-sweep",
            &[OLD_EXAMPLE_RUN, "docs/runs/column-sweep-replicate"],
        );
        let set = COLUMN_SWEEP.read(root.path()).unwrap().unwrap();
        assert_eq!(set.runs.len(), 2);
        let ratios = literal_to_bound(&set, CONFIDENCE).unwrap();
        assert_eq!(ratios.len(), 12, "one per column count");
        // Each run's value is that run's own literal ÷ bound, as its summary states it.
        for (i, run) in set.runs.iter().enumerate() {
            let rows: Vec<ProbeRow> = csv::read(&run.dir.results_csv()).unwrap();
            let own = session_values::literal_to_bound(&rows, Axis::Columns);
            for p in &ratios {
                let (_, values) = own.iter().find(|(at, _)| *at == p.at).unwrap();
                let values: Vec<f64> = values.values().copied().collect();
                let center = over_sessions(&values, CONFIDENCE).unwrap().center;
                assert!((p.over.per_run[i] - center).abs() < 1e-12);
            }
        }
        assert!(ratios.iter().all(|p| p.over.interval.is_some()));
        let (base, against) = to_baseline(&set, CONFIDENCE).unwrap().unwrap();
        assert_eq!(base, TargetKind::Sqlite);
        // Every point where the first run has local ÷ bare SQLite over sessions.
        let rows: Vec<ProbeRow> = csv::read(&set.runs[0].dir.results_csv()).unwrap();
        let own = crate::studies::sweep::report::points::summary_rows(&rows, Axis::Columns, None)
            .into_iter()
            .filter(|r| r.measure == "ratio_to_sqlite" && r.median.is_some())
            .count();
        assert_eq!(against.len(), own);
        assert!(rust_to_javascript(&set, CONFIDENCE).unwrap().is_empty());
    }

    #[test]
    fn the_set_of_the_two_worker_runs_gives_rust_over_javascript_per_point() {
        let root = fixture(
            "two-workers",
            &["docs/runs/two-workers", "docs/runs/two-workers-8x8"],
        );
        let set = TWO_WORKERS.read(root.path()).unwrap().unwrap();
        let points = rust_to_javascript(&set, 0.90).unwrap();
        assert!(points.len() >= 60, "{}", points.len());
        assert!(points.iter().all(|p| p.over.runs() == 2));
    }

    /// Runs made before the readings say so; runs with readings give their speed and the
    /// slowest over the fastest, each from its own run.toml.
    #[test]
    fn a_sets_host_speeds_are_listed_per_run_with_the_slowest_over_the_fastest() {
        // The column sweep's two runs of 2026-12-06, the first made beside three builds.
        let slow = "docs/runs/replicates/column-sweep/20261206T031304Z-local";
        let quiet = "docs/runs/replicates/column-sweep/20261206T042452Z-local";
        let root = fixture("column-sweep", &[slow, quiet]);
        let set = COLUMN_SWEEP.read(root.path()).unwrap().unwrap();
        let speed = |run: &str| {
            let record = RunRecord::read(&crate::paths::project_root().join(run).join("run.toml"));
            HostSpeed::of(&record.unwrap()).unwrap().center_ms
        };
        let (a, b) = (speed(quiet), speed(slow));
        assert!(b > 1.2 * a, "the slow-host run reads {b} ms against {a}");
        let text = host_speeds(&set);
        assert!(
            text.ends_with(&format!(
                "{b:.1} and {a:.1} ms; the slowest ×{:.2} the fastest",
                b / a
            )),
            "{text}"
        );
        let root = fixture(
            "two-workers",
            &["docs/runs/two-workers", "docs/runs/two-workers-8x8"],
        );
        let set = TWO_WORKERS.read(root.path()).unwrap().unwrap();
        assert!(
            host_speeds(&set).starts_with("no run records the host's speed"),
            "{}",
            host_speeds(&set)
        );
    }

    #[test]
    fn the_quoted_runs_are_the_listed_ones_and_every_run_of_every_set() {
        let root = project_root();
        let committed = quoted_runs(&root).unwrap();
        assert!(committed.len() >= super::super::QUOTED_RUNS.len());
        let scratch = fixture("column-sweep", &["docs/example-run"]);
        let with_set = quoted_runs(scratch.path()).unwrap();
        assert_eq!(with_set.len(), super::super::QUOTED_RUNS.len() + 1);
        assert!(
            with_set
                .last()
                .unwrap()
                .starts_with("docs/runs/replicates/column-sweep/"),
            "{with_set:?}"
        );
        assert_eq!(
            fixture_set(scratch.path(), "column-sweep"),
            scratch.path().join(COLUMN_SWEEP.dir())
        );
    }
}
