//! Synthetic sweep runs with sessions, for the tests of compare and calibrate: every point's
//! rows drawn around a true time, with a drift shared by a whole session (the machine's state),
//! a drift of each point in each session, and noise between repeats, all log-normal; and run
//! directories written through the records API.

use std::path::{Path, PathBuf};

use d1bench_core::Strategy;

use crate::base::TargetKind;
use crate::records::run_record::RunInfo;
use crate::records::{RunRecord, StudyKind, csv};
use crate::studies::sweep::Axis;
use crate::studies::sweep::row::{ProbeRow, tests_support};

/// A normal deviate from two uniforms (Box–Muller), seeded.
pub fn normal(rng: &mut fastrand::Rng) -> f64 {
    let (u, v) = (rng.f64().max(f64::MIN_POSITIVE), rng.f64());
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

/// A row of `strategy` on `target` (8 columns, 100 rows) timed at `outside_ms`.
pub fn row(
    target: TargetKind,
    strategy: Strategy,
    session: usize,
    repeat: usize,
    outside_ms: f64,
) -> ProbeRow {
    let mut row = tests_support::row();
    (row.target, row.strategy) = (target, strategy);
    (row.session, row.repeat) = (session, repeat);
    row.outside_ms = outside_ms;
    row
}

/// The shape of a synthetic run and the sizes of its noises (standard deviations of logs).
#[derive(Debug, Clone)]
pub struct Shape {
    pub targets: Vec<TargetKind>,
    pub strategies: Vec<Strategy>,
    pub columns: Vec<usize>,
    pub sessions: usize,
    pub repeats: usize,
    /// Drift of a whole session, shared by its points (0.05 ≈ 5%).
    pub session_drift: f64,
    /// Drift of each point in each session.
    pub point_drift: f64,
    /// Noise between repeats.
    pub repeat_noise: f64,
}

impl Shape {
    /// Five strategies at five column counts on bare SQLite: 25 points, as the column sweep's
    /// smoke profile nearly has.
    pub fn sqlite(sessions: usize) -> Shape {
        Shape {
            targets: vec![TargetKind::Sqlite],
            strategies: vec![
                Strategy::Bound,
                Strategy::Literal,
                Strategy::Json,
                Strategy::BatchedRows,
                Strategy::Exec,
            ],
            columns: vec![1, 8, 32, 64, 100],
            sessions,
            repeats: 3,
            session_drift: 0.05,
            point_drift: 0.05,
            repeat_noise: 0.02,
        }
    }

    /// [`Shape::sqlite`] at the noise the committed runs show (the audit of issue 28): a
    /// session's value at a point spreads about 12%, half of its variance shared by the
    /// session's other points.
    pub fn committed_noise(sessions: usize) -> Shape {
        let half = 0.12 * 0.5f64.sqrt();
        Shape {
            session_drift: half,
            point_drift: half,
            repeat_noise: 0.0,
            ..Shape::sqlite(sessions)
        }
    }

    /// The rows of one run; `factor` stretches a row's time (1.0 for none).
    pub fn run(&self, rng: &mut fastrand::Rng, factor: impl Fn(&ProbeRow) -> f64) -> Vec<ProbeRow> {
        let mut rows = Vec::new();
        for session in 0..self.sessions {
            // Each target's sessions have their own state, as a fresh target does.
            for &target in &self.targets {
                let shared = self.session_drift * normal(rng);
                for (s, &strategy) in self.strategies.iter().enumerate() {
                    for &columns in &self.columns {
                        let drift = shared + self.point_drift * normal(rng);
                        let true_ms = 5.0 + columns as f64 * (s + 1) as f64 * 0.1;
                        for repeat in 0..self.repeats {
                            let noise = drift + self.repeat_noise * normal(rng);
                            let mut row =
                                row(target, strategy, session, repeat, true_ms * noise.exp());
                            row.columns = columns;
                            row.outside_ms *= factor(&row);
                            rows.push(row);
                        }
                    }
                }
            }
        }
        rows
    }
}

/// A run record of `experiment`, a sweep along columns unless `kind` says otherwise.
pub fn record(experiment: &str, kind: StudyKind) -> RunRecord {
    let base = crate::records::run_record::tests_support::record();
    RunRecord {
        run: RunInfo {
            experiment: experiment.into(),
            kind,
            x_axis: (kind == StudyKind::Sweep).then_some(Axis::Columns),
            ..base.run
        },
        studies: vec![crate::records::run_record::tests_support::study(experiment)],
        // A quiet, unlimited machine, whatever this one's load and cgroup are now.
        machine: crate::records::run_record::Machine {
            load_at_start: Some(0.5),
            load_at_end: Some(0.5),
            cpu_limit: None,
            ..crate::records::run_record::machine()
        },
        ..base
    }
}

/// A run directory written through the records API.
pub fn write_run(dir: &Path, record: &RunRecord, rows: Option<&[ProbeRow]>) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    record.write(&dir.join("run.toml")).unwrap();
    if let Some(rows) = rows {
        csv::write(&dir.join("results.csv"), rows).unwrap();
    }
    dir.to_owned()
}
