//! `cargo xtask export <run-dir> --format bmf`: a sweep run's measures as Bencher Metric Format
//! JSON, for continuous benchmarking. One benchmark per point (`<experiment>/<target>/
//! <strategy>[/<series>]/<axis>=<x>`), one measure per timed value (`ms-per-1000-rows`,
//! `outside-ms`, ...): `value` is the geometric mean of the sessions' medians and
//! `lower_value`/`upper_value` its 95% interval over sessions (t on the logs); a run with one
//! session gives the median of its repeats and no bounds, as it has no interval between runs.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result};
use serde::Serialize;

use super::compare::key::{keyed, measured, session_values_of};
use super::compare::load;
use super::points::{Measure, Point};
use crate::reports::host_speed::HostSpeed;
use crate::stats::sessions::over_sessions;
use crate::stats::{CONFIDENCE, median};
use crate::studies::sweep::Axis;
use crate::studies::sweep::row::ProbeRow;

/// One measure of one benchmark, as Bencher reads it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Metric {
    pub value: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lower_value: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upper_value: Option<f64>,
}

/// Benchmark name → measure slug → metric, in a stable order.
pub type Bmf = BTreeMap<String, BTreeMap<String, Metric>>;

/// The measure's slug: its results.csv name in kebab case.
fn slug(measure: Measure) -> String {
    measure.name().replace('_', "-")
}

/// The benchmark's name: what tells the point apart within the run.
fn benchmark(experiment: &str, axis: Axis, point: &Point) -> String {
    let line = &point.line;
    let series = if line.label.is_empty() {
        String::new()
    } else {
        format!("/{}", line.label)
    };
    format!(
        "{experiment}/{}/{}{series}/{}={}",
        line.target,
        line.strategy,
        axis.name(),
        axis.format(point.x)
    )
}

/// The metric of `measure` at `point`; `None` when no repeat gave a value.
fn metric(point: &Point, measure: Measure) -> Option<Metric> {
    let sessions: Vec<f64> = session_values_of(point, measure).into_values().collect();
    match over_sessions(&sessions, CONFIDENCE) {
        Some(over) if over.sessions >= 2 => Some(Metric {
            value: over.center,
            lower_value: over.interval.map(|i| i.low),
            upper_value: over.interval.map(|i| i.high),
        }),
        _ => median(&point.values(measure)).map(|value| Metric {
            value,
            lower_value: None,
            upper_value: None,
        }),
    }
}

/// The BMF of a sweep run's rows (warm-ups the run discarded left out).
pub fn bmf(experiment: &str, axis: Axis, rows: &[ProbeRow]) -> Bmf {
    let rows = measured(rows);
    keyed(&rows, axis)
        .into_iter()
        .map(|(_, point)| {
            let measures = Measure::SUMMARIZED
                .into_iter()
                .filter_map(|m| Some((slug(m), metric(&point, m)?)))
                .collect();
            (benchmark(experiment, axis, &point), measures)
        })
        .filter(|(_, measures): &(String, BTreeMap<String, Metric>)| !measures.is_empty())
        .collect()
}

/// The host's speed as a benchmark of its own, `<experiment>/host/reference`: the reference
/// workload's time (`reference-ms`, lower is faster) with its interval over the readings, so a
/// dashboard shows the machine's speed beside the figures it moves.
fn host(experiment: &str, speed: &HostSpeed) -> (String, BTreeMap<String, Metric>) {
    let metric = Metric {
        value: speed.center_ms,
        lower_value: speed.interval.map(|i| i.low),
        upper_value: speed.interval.map(|i| i.high),
    };
    (
        format!("{experiment}/host/reference"),
        BTreeMap::from([("reference-ms".to_owned(), metric)]),
    )
}

/// The BMF JSON of the sweep run in `run_dir`, pretty-printed.
pub fn bmf_json(run_dir: &Path) -> Result<String> {
    let run = load(run_dir, "export")?;
    let mut bmf = bmf(&run.record.run.experiment, run.axis, &run.rows);
    if let Some(speed) = HostSpeed::of(&run.record) {
        bmf.extend([host(&run.record.run.experiment, &speed)]);
    }
    serde_json::to_string_pretty(&bmf).context("cannot serialize the run as BMF")
}

#[cfg(test)]
mod tests {
    use d1bench_core::{Outcome, Strategy};

    use super::*;
    use crate::base::TargetKind;
    use crate::paths::project_root;
    use crate::records::StudyKind;
    use crate::studies::sweep::report::compare::synthetic::{self, record, write_run};
    use crate::studies::sweep::row::tests_support;

    /// Two strategies at 8 columns on local and on its baseline, three sessions of two repeats,
    /// fixed times; a refused point, and a discarded warm-up that must not count.
    fn rows() -> Vec<ProbeRow> {
        let mut rows = Vec::new();
        for (target, strategy, base) in [
            (TargetKind::Local, Strategy::Bound, 20.0),
            (TargetKind::Local, Strategy::Literal, 10.0),
            (TargetKind::Sqlite, Strategy::Bound, 4.0),
        ] {
            for session in 0..3 {
                for repeat in 0..2 {
                    let ms = base * (1.0 + 0.1 * session as f64 + 0.01 * repeat as f64);
                    let mut row = synthetic::row(target, strategy, session, repeat, ms);
                    row.inside_ms = row.outside_ms / 2.0;
                    rows.push(row);
                }
            }
        }
        let mut warmup = rows[0].clone();
        warmup.outside_ms = 1000.0;
        warmup.warmup_discarded = true;
        let mut refused = tests_support::row();
        (refused.columns, refused.strategy) = (100, Strategy::Literal);
        refused.outcome = Outcome::Refused;
        rows.extend([warmup, refused]);
        rows
    }

    #[test]
    fn the_bmf_of_a_run_matches_its_golden_file() {
        let root = tempfile::tempdir().unwrap();
        let dir = write_run(
            &root.path().join("run"),
            &record("column-sweep", StudyKind::Sweep),
            Some(&rows()),
        );
        let json = bmf_json(&dir).unwrap() + "\n";
        let golden = project_root().join("xtask/tests/golden/export-bmf.json");
        if std::env::var_os("UPDATE_GOLDEN").is_some() {
            std::fs::write(&golden, &json).unwrap();
        }
        assert_eq!(json, std::fs::read_to_string(&golden).unwrap());
        // Three benchmarks (the refused point has no time), each with its interval over sessions.
        let bmf = bmf("column-sweep", Axis::Columns, &rows());
        assert_eq!(
            bmf.keys().collect::<Vec<_>>(),
            [
                "column-sweep/local/bound/columns=8",
                "column-sweep/local/literal/columns=8",
                "column-sweep/sqlite/bound/columns=8",
            ]
        );
        let m = bmf["column-sweep/local/literal/columns=8"]["outside-ms"];
        let sessions = [10.05, 11.05, 12.05];
        let geo = (sessions.iter().map(|v: &f64| v.ln()).sum::<f64>() / 3.0).exp();
        assert!((m.value - geo).abs() < 1e-9, "{m:?}");
        assert!(m.lower_value.unwrap() < geo && geo < m.upper_value.unwrap());
    }

    #[test]
    fn the_hosts_speed_is_a_benchmark_of_its_own_when_the_run_read_it() {
        let mut r = record("column-sweep", StudyKind::Sweep);
        r.machine.speed = crate::records::host_speed::readings(&[30.0, 31.0, 29.5]);
        let root = tempfile::tempdir().unwrap();
        let dir = write_run(&root.path().join("run"), &r, Some(&rows()));
        let json: serde_json::Value = serde_json::from_str(&bmf_json(&dir).unwrap()).unwrap();
        let m = &json["column-sweep/host/reference"]["reference-ms"];
        let geo = ((30.0f64.ln() + 31.0f64.ln() + 29.5f64.ln()) / 3.0).exp();
        assert!((m["value"].as_f64().unwrap() - geo).abs() < 1e-9, "{m}");
        assert!(m["lower_value"].as_f64().unwrap() < geo);
    }

    #[test]
    fn one_session_gives_the_median_without_bounds_and_not_a_sweep_is_refused() {
        let one: Vec<ProbeRow> = rows().into_iter().filter(|r| r.session == 0).collect();
        let bmf = bmf("column-sweep", Axis::Columns, &one);
        let m = bmf["column-sweep/local/bound/columns=8"]["ms-per-1000-rows"];
        // 20.0 and 20.2 ms for 100 rows: 201 ms per 1,000 rows, the warm-up left out.
        assert_eq!((m.lower_value, m.upper_value), (None, None));
        assert!((m.value - 201.0).abs() < 1e-9, "{m:?}");
        let root = tempfile::tempdir().unwrap();
        let ladder = write_run(
            &root.path().join("ladder"),
            &record("columns", StudyKind::Ladder),
            None,
        );
        let err = format!("{:#}", bmf_json(&ladder).unwrap_err());
        assert!(
            err.starts_with("export: ") && err.contains("is a ladder run"),
            "{err}"
        );
    }
}
