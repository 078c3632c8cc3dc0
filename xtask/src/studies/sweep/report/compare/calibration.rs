//! `calibration.csv`, the file `calibrate` writes into a run directory (each point's noise floor
//! and how often an A/A split of the run called it changed), and how compare finds the newest
//! calibration of an experiment, profile and target to take its default threshold from.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use d1bench_core::Strategy;
use serde::{Deserialize, Serialize};

use super::key::PointKey;
use crate::base::TargetKind;
use crate::records::{RunDir, RunRecord, csv};

/// The file's name in a run directory: a calibration within one run (`calibrate`).
pub const FILE: &str = "calibration.csv";

/// The file's name in run b's directory: a calibration between two runs (`calibrate
/// --between`).
pub const BETWEEN_RUNS_FILE: &str = "calibration-between-runs.csv";

/// What a calibration compared, and so what variance its noise floors hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CalibrationKind {
    /// Two complete runs of one design compared A/A: the floors hold the variance between runs.
    BetweenRuns,
    /// Halves of one run's sessions: the floors see none of the variance between runs.
    WithinRun,
}

impl CalibrationKind {
    /// The kind of the calibration file `file`, by its name.
    pub fn of(file: &Path) -> CalibrationKind {
        match file.file_name().and_then(|n| n.to_str()) {
            Some(BETWEEN_RUNS_FILE) => CalibrationKind::BetweenRuns,
            _ => CalibrationKind::WithinRun,
        }
    }
}

/// One point of `calibration.csv`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalibrationRow {
    pub target: TargetKind,
    /// The series' label; empty when it has none.
    pub label: String,
    pub strategy: Strategy,
    pub columns: usize,
    pub row_bytes: usize,
    pub rows: usize,
    pub escape_share: f64,
    pub non_ascii_share: f64,
    pub indexes: usize,
    pub nul_share: f64,
    /// The point on the run's x axis.
    pub x: f64,
    /// Sessions on each side of every split (between runs: in each run).
    pub sessions_per_half: usize,
    /// A/A splits in which the point was judged over sessions.
    pub splits_judged: usize,
    /// Of those, splits in which compare called it `slower` or `faster`: false alarms.
    pub false_alarms: usize,
    /// The smallest change the point can tell from none between two halves (1.10 = 10%): the
    /// median over the splits of the half-width of its 95% interval, as a factor. Empty when no
    /// split judged it.
    pub noise_floor: Option<f64>,
    /// Between runs: b ÷ a observed at the point, with nothing changed; empty within one run.
    #[serde(default)]
    pub observed_ratio: Option<f64>,
    /// Between runs: σ between runs of the point's target on the log scale (its
    /// `Component::log_sd`), which a comparison of two runs adds to what the sessions explain;
    /// empty within one run, and in calibrations written before 2026-12-04.
    #[serde(default)]
    pub between_runs_log_sd: Option<f64>,
}

impl CalibrationRow {
    pub fn key(&self) -> PointKey {
        PointKey {
            target: self.target,
            label: self.label.clone(),
            strategy: self.strategy,
            columns: self.columns,
            row_bytes: self.row_bytes,
            rows: self.rows,
            escape_share: self.escape_share,
            non_ascii_share: self.non_ascii_share,
            indexes: self.indexes,
            nul_share: self.nul_share,
        }
    }

    /// The row of `key` at `x`, its statistics to be filled in.
    pub fn new(key: &PointKey, x: f64, sessions_per_half: usize) -> Self {
        CalibrationRow {
            target: key.target,
            label: key.label.clone(),
            strategy: key.strategy,
            columns: key.columns,
            row_bytes: key.row_bytes,
            rows: key.rows,
            escape_share: key.escape_share,
            non_ascii_share: key.non_ascii_share,
            indexes: key.indexes,
            nul_share: key.nul_share,
            x,
            sessions_per_half,
            splits_judged: 0,
            false_alarms: 0,
            noise_floor: None,
            observed_ratio: None,
            between_runs_log_sd: None,
        }
    }
}

/// A calibration read back for compare's thresholds.
#[derive(Debug, Clone, PartialEq)]
pub struct Calibration {
    /// The calibration.csv it came from.
    pub file: PathBuf,
    pub kind: CalibrationKind,
    pub rows: Vec<CalibrationRow>,
}

impl Calibration {
    /// Reads `file`, naming it on failure.
    pub fn read(file: &Path) -> Result<Calibration> {
        let rows = csv::read(file)
            .with_context(|| format!("cannot read the calibration {}", file.display()))?;
        Ok(Calibration {
            file: file.to_owned(),
            kind: CalibrationKind::of(file),
            rows,
        })
    }

    /// The noise floor calibrated at `key`, if it was judged.
    pub fn noise_floor(&self, key: &PointKey) -> Option<f64> {
        self.rows
            .iter()
            .find(|r| r.key() == *key)
            .and_then(|r| r.noise_floor)
    }

    /// σ between runs on the log scale at `key`, from a calibration between runs that states it.
    pub fn between_runs_log_sd(&self, key: &PointKey) -> Option<f64> {
        if self.kind != CalibrationKind::BetweenRuns {
            return None;
        }
        self.rows
            .iter()
            .find(|r| r.key() == *key)
            .and_then(|r| r.between_runs_log_sd)
    }

    /// Between runs: each target's σ between runs (log scale), as its rows state it.
    pub fn between_runs_sd(&self) -> Vec<(TargetKind, f64)> {
        if self.kind != CalibrationKind::BetweenRuns {
            return Vec::new();
        }
        let mut out: Vec<(TargetKind, f64)> = Vec::new();
        for r in &self.rows {
            if let Some(sd) = r.between_runs_log_sd
                && !out.iter().any(|(t, _)| *t == r.target)
            {
                out.push((r.target, sd));
            }
        }
        out
    }

    /// The sessions on each side of its splits (the most any row has), if any row says.
    pub fn sessions_per_half(&self) -> Option<usize> {
        self.rows.iter().map(|r| r.sessions_per_half).max()
    }

    /// Between runs: the largest move of b ÷ a over the points with nothing changed (1.08 = 8%,
    /// either way), and the one 95% of the points stay within; `None` within one run.
    pub fn moves(&self) -> Option<(f64, f64)> {
        let mut moves: Vec<f64> = self
            .rows
            .iter()
            .filter_map(|r| r.observed_ratio)
            .filter(|r| r.is_finite() && *r > 0.0)
            .map(|r| r.ln().abs().exp())
            .collect();
        moves.sort_by(f64::total_cmp);
        let largest = *moves.last()?;
        let at = ((moves.len() as f64 * 0.95).ceil() as usize).clamp(1, moves.len()) - 1;
        Some((largest, moves[at]))
    }

    /// The calibration compare takes for runs of `experiment` with `profile` on `target` of
    /// `sessions` sessions each: among the run directories in `reports/<experiment>/` and in
    /// `beside` (the compared runs' own directories and their siblings), the newest between-runs
    /// calibration whose runs held `sessions` sessions, else the newest within-run one whose
    /// halves did (a floor between halves of 2 sessions is about twice one between halves of
    /// 8), by the start of the run holding it; `None` when there is none. A run directory whose
    /// run.toml cannot be read is passed over.
    pub fn newest(
        reports: &Path,
        beside: &[PathBuf],
        experiment: &str,
        profile: &str,
        target: TargetKind,
        sessions: usize,
    ) -> Result<Option<Calibration>> {
        let mut dirs: Vec<PathBuf> = Vec::new();
        let parents = std::iter::once(reports.join(experiment))
            .chain(beside.iter().filter_map(|d| d.parent().map(Path::to_owned)));
        for parent in parents {
            if let Ok(entries) = std::fs::read_dir(&parent) {
                dirs.extend(entries.flatten().map(|e| e.path()));
            }
        }
        dirs.extend(beside.iter().cloned());
        dirs.sort();
        dirs.dedup();
        let mut found: Vec<(bool, String, PathBuf)> = Vec::new();
        for path in dirs {
            let run = RunDir::new(path);
            let Ok(record) = RunRecord::read(&run.run_toml()) else {
                continue;
            };
            let r = &record.run;
            if !(r.experiment == experiment && r.profile == profile && r.target == target) {
                continue;
            }
            for name in [BETWEEN_RUNS_FILE, FILE] {
                let file = run.path.join(name);
                if file.is_file() {
                    let between = CalibrationKind::of(&file) == CalibrationKind::BetweenRuns;
                    found.push((between, r.started.clone(), file));
                }
            }
        }
        found.sort();
        while let Some((_, _, file)) = found.pop() {
            let calibration = Self::read(&file)?;
            if calibration.sessions_per_half() == Some(sessions) {
                return Ok(Some(calibration));
            }
        }
        Ok(None)
    }
}
