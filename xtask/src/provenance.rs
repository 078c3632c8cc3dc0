//! `run.toml`: where, when and with what a run was measured, and how it ended.

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use xshell::{Shell, cmd};

use crate::reconcile::Totals;
use crate::report::Axis;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunRecord {
    pub run: RunInfo,
    pub experiment: ExperimentInfo,
    pub git: GitInfo,
    pub versions: Versions,
    pub machine: Machine,
    /// Absent until the run has measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reconciliation: Option<Totals>,
    /// Where on Cloudflare a remote run ran; absent for other targets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote: Option<crate::remote::RemoteRecord>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunInfo {
    pub id: String,
    pub experiment: String,
    pub profile: String,
    pub target: String,
    /// The target the same probes also ran on as the reference line (`sqlite`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<String>,
    /// Set when the run corrupted every probe's table on purpose (`--debug-corrupt`): its
    /// results are a test of the harness, not measurements.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub debug_corrupt: Option<String>,
    /// `running`, `complete`, `invalid` (a probe did not reconcile), `failed` or `interrupted`.
    pub status: String,
    /// UTC, RFC 3339.
    pub started: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended: Option<String>,
    /// Why the run failed, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl RunInfo {
    /// Records how the run ended: `complete` or `invalid` by its reconciliation when it
    /// measured (`Ok(all_reconciled)`), else `interrupted` or `failed` with the error.
    pub fn end(&mut self, outcome: Result<bool, &anyhow::Error>) {
        self.ended = Some(utc_now().0);
        self.status = match outcome {
            Ok(true) => "complete",
            Ok(false) => "invalid",
            Err(e) => {
                self.error = Some(format!("{e:#}"));
                if crate::procs::interrupted() {
                    "interrupted"
                } else {
                    "failed"
                }
            }
        }
        .into();
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ExperimentInfo {
    /// The experiment file, relative to the project root.
    pub file: String,
    /// SHA-256 of the file's bytes as run.
    pub sha256: String,
    pub description: String,
    pub x_axis: Axis,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GitInfo {
    /// The commit checked out, or `unknown` outside a git checkout.
    pub commit: String,
    /// Whether tracked files differed from that commit.
    pub dirty: bool,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Versions {
    pub d1bench: String,
    /// What the Worker's `/health` reported.
    pub worker: String,
    pub worker_crate: String,
    pub wrangler: String,
    pub workerd: String,
    /// The SQLite bundled into the xtask: the sqlite target's and the baseline's.
    #[serde(default)]
    pub sqlite: String,
    pub rustc: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Machine {
    pub os: String,
    pub arch: String,
    pub cpu: String,
    pub cpus: usize,
    pub memory_gib: f64,
}

impl RunRecord {
    pub fn write(&self, path: &Path) -> Result<()> {
        let text = toml::to_string_pretty(self).context("cannot serialize run.toml")?;
        std::fs::write(
            path,
            format!(
                "# d1bench run record: what was run, where, with what, and how it ended.\n{text}"
            ),
        )
        .with_context(|| format!("cannot write {}", path.display()))
    }

    pub fn read(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        toml::from_str(&text)
            .with_context(|| format!("{} is not a d1bench run record", path.display()))
    }
}

pub fn git(sh: &Shell) -> GitInfo {
    let commit = cmd!(sh, "git rev-parse HEAD")
        .quiet()
        .ignore_stderr()
        .read()
        .unwrap_or_else(|_| "unknown".into());
    let dirty = cmd!(sh, "git status --porcelain --untracked-files=no")
        .quiet()
        .ignore_stderr()
        .read()
        .map(|s| !s.trim().is_empty())
        .unwrap_or(false);
    GitInfo { commit, dirty }
}

/// The `version` field of a package.json.
pub fn npm_package_version(path: &Path) -> String {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .and_then(|json| json["version"].as_str().map(str::to_owned))
        .unwrap_or_else(|| "unknown".into())
}

pub fn machine() -> Machine {
    let os = std::fs::read_to_string("/etc/os-release")
        .ok()
        .and_then(|t| {
            t.lines().find_map(|l| {
                l.strip_prefix("PRETTY_NAME=")
                    .map(|v| v.trim_matches('"').to_owned())
            })
        })
        .unwrap_or_else(|| std::env::consts::OS.to_owned());
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines().find_map(|l| {
                l.strip_prefix("model name")
                    .map(|v| v.trim_start_matches([' ', '\t', ':']).to_owned())
            })
        })
        .unwrap_or_else(|| "unknown".into());
    let memory_kib: f64 = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| {
            t.lines().find_map(|l| {
                l.strip_prefix("MemTotal:")?
                    .split_whitespace()
                    .next()?
                    .parse()
                    .ok()
            })
        })
        .unwrap_or(0.0);
    Machine {
        os,
        arch: std::env::consts::ARCH.to_owned(),
        cpu,
        cpus: std::thread::available_parallelism().map_or(0, |n| n.get()),
        memory_gib: (memory_kib / 1024.0 / 1024.0 * 10.0).round() / 10.0,
    }
}

/// `(2026-11-29T23:15:02Z, 20261129T231502Z)`: RFC 3339 and a compact form for directory names.
pub fn utc_now() -> (String, String) {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    utc(secs)
}

fn utc(unix_secs: u64) -> (String, String) {
    let days = (unix_secs / 86_400) as i64;
    let secs_of_day = unix_secs % 86_400;
    let (year, month, day) = civil_from_days(days);
    let (h, m, s) = (secs_of_day / 3600, secs_of_day / 60 % 60, secs_of_day % 60);
    (
        format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}Z"),
        format!("{year:04}{month:02}{day:02}T{h:02}{m:02}{s:02}Z"),
    )
}

/// Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_formats_known_instants() {
        assert_eq!(utc(0).0, "1970-01-01T00:00:00Z");
        assert_eq!(utc(951_782_400).0, "2000-02-29T00:00:00Z");
        assert_eq!(
            utc(1_795_996_502),
            ("2026-11-29T23:55:02Z".into(), "20261129T235502Z".into())
        );
    }

    #[test]
    fn a_record_round_trips_through_toml() {
        let record = RunRecord {
            run: RunInfo {
                id: "x".into(),
                experiment: "column-sweep".into(),
                profile: "smoke".into(),
                target: "local".into(),
                baseline: Some("sqlite".into()),
                debug_corrupt: None,
                status: "complete".into(),
                started: "2026-11-29T23:55:02Z".into(),
                ended: None,
                error: None,
            },
            experiment: ExperimentInfo {
                file: "experiments/column-sweep.toml".into(),
                sha256: "ab".into(),
                description: "d".into(),
                x_axis: Axis::Columns,
            },
            git: GitInfo {
                commit: "c".into(),
                dirty: true,
            },
            versions: Versions::default(),
            machine: machine(),
            reconciliation: Some(Totals::default()),
            remote: None,
        };
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.toml");
        record.write(&path).unwrap();
        let back = RunRecord::read(&path).unwrap();
        assert_eq!(back.run.status, "complete");
        assert_eq!(back.experiment.x_axis, Axis::Columns);
        assert_eq!(back.reconciliation, Some(Totals::default()));
    }
}
