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

/// The file's name in a run directory.
pub const FILE: &str = "calibration.csv";

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
    /// Sessions on each side of every split.
    pub sessions_per_half: usize,
    /// A/A splits in which the point was judged over sessions.
    pub splits_judged: usize,
    /// Of those, splits in which compare called it `slower` or `faster`: false alarms.
    pub false_alarms: usize,
    /// The smallest change the point can tell from none between two halves (1.10 = 10%): the
    /// median over the splits of the half-width of its 95% interval, as a factor. Empty when no
    /// split judged it.
    pub noise_floor: Option<f64>,
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
        }
    }
}

/// A calibration read back for compare's thresholds.
#[derive(Debug, Clone, PartialEq)]
pub struct Calibration {
    /// The calibration.csv it came from.
    pub file: PathBuf,
    pub rows: Vec<CalibrationRow>,
}

impl Calibration {
    /// Reads `file`, naming it on failure.
    pub fn read(file: &Path) -> Result<Calibration> {
        let rows = csv::read(file)
            .with_context(|| format!("cannot read the calibration {}", file.display()))?;
        Ok(Calibration {
            file: file.to_owned(),
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

    /// The sessions on each side of its splits (the most any row has), if any row says.
    pub fn sessions_per_half(&self) -> Option<usize> {
        self.rows.iter().map(|r| r.sessions_per_half).max()
    }

    /// The newest calibration under `reports` (in `reports/<experiment>/<run>/`) of a run of
    /// `experiment` with `profile` on `target` whose halves hold `sessions` sessions (the runs
    /// compared: a floor between halves of 2 sessions is about twice one between halves of 8), by
    /// the calibrated run's start; `None` when there is none. A run directory whose run.toml
    /// cannot be read is passed over.
    pub fn newest(
        reports: &Path,
        experiment: &str,
        profile: &str,
        target: TargetKind,
        sessions: usize,
    ) -> Result<Option<Calibration>> {
        let dir = reports.join(experiment);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return Ok(None);
        };
        let mut found: Vec<(String, PathBuf)> = Vec::new();
        for entry in entries.flatten() {
            let run = RunDir::new(entry.path());
            let file = run.path.join(FILE);
            if !file.is_file() {
                continue;
            }
            let Ok(record) = RunRecord::read(&run.run_toml()) else {
                continue;
            };
            let r = &record.run;
            if r.experiment == experiment && r.profile == profile && r.target == target {
                found.push((r.started.clone(), file));
            }
        }
        found.sort();
        while let Some((_, file)) = found.pop() {
            let calibration = Self::read(&file)?;
            if calibration.sessions_per_half() == Some(sessions) {
                return Ok(Some(calibration));
            }
        }
        Ok(None)
    }
}
