//! `run.toml`: what a run ran, where, when and with what, and how it ended. One record for every
//! kind of study, written only through [`RunRecord::write`].

use std::path::Path;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use xshell::{Shell, cmd};

use crate::base::clock::utc_now;
use crate::base::text::serde_as_text;
use crate::base::{DebugCorruption, TargetKind, WorkerKind};
use crate::records::reconcile::Totals;
use crate::records::run_history::{Planned, Resumption, SessionTime};
use crate::studies::overrides::Overrides;
use crate::studies::sweep::Axis;
use crate::targets::remote::RemoteRecord;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunRecord {
    pub run: RunInfo,
    /// Every experiment or ladder file the run read.
    pub studies: Vec<StudyFile>,
    pub git: GitInfo,
    pub versions: ToolVersions,
    pub machine: Machine,
    /// Absent until the run has measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reconciliation: Option<Totals>,
    /// Where on Cloudflare a remote run ran; absent for other targets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote: Option<RemoteRecord>,
    /// Where on Cloudflare a remote baseline ran (`--baseline remote-do` beside `--target
    /// remote`): its own Worker and teardown, as `remote` has the target's; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_remote: Option<RemoteRecord>,
    /// The profile's settings the command line replaced, and its `--only` filter.
    #[serde(default, skip_serializing_if = "Overrides::is_empty")]
    pub overrides: Overrides,
    /// What the run planned to send; absent in records written before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planned: Option<Planned>,
    /// Each session on a target, in order, with its times.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sessions: Vec<SessionTime>,
    /// Each time the run was resumed (`cargo xtask run --resume`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resumed: Vec<Resumption>,
    /// A run made by `cargo xtask merge` from shard runs: which, and which were missing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged: Option<crate::records::shard::Merged>,
}

/// What kind of study a run ran: it decides how its records are read and reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StudyKind {
    /// Probes over a swept axis, timed and compared (`experiments/<name>.toml` with `x-axis`).
    #[default]
    Sweep,
    /// Ladders climbed to their first refusal (one ladder, or every one for `limits`).
    Ladder,
    /// A seeded table under open-loop load at declared rates (`experiments/<name>.toml` with a
    /// `[table]`).
    Workload,
}

/// How a run ended, or that it has not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunStatus {
    /// Measuring (or the process died: see [`RunStatus::Abandoned`]).
    Running,
    /// Everything ran and reconciled.
    Complete,
    /// Everything ran, and some record did not reconcile: its data is not to be trusted.
    Invalid,
    /// The run stopped on an error; what it measured is kept.
    Failed,
    /// Ctrl-C or a termination signal stopped it; what it measured is kept.
    Interrupted,
    /// Its process died without a word (`kill -9`, a lost machine); the next run found it and
    /// stopped what it had started.
    Abandoned,
}

impl RunStatus {
    pub fn name(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Complete => "complete",
            RunStatus::Invalid => "invalid",
            RunStatus::Failed => "failed",
            RunStatus::Interrupted => "interrupted",
            RunStatus::Abandoned => "abandoned",
        }
    }
}

impl std::fmt::Display for RunStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunInfo {
    pub id: String,
    /// The name given to `cargo xtask run`: an experiment, a ladder, or `limits`.
    pub experiment: String,
    #[serde(default)]
    pub kind: StudyKind,
    pub profile: String,
    pub target: TargetKind,
    /// The swept axis of a sweep: the x axis of its charts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub x_axis: Option<Axis>,
    /// A grid's second axis (the decision map's rows); absent for other runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub y_axis: Option<Axis>,
    /// The target the same probes also ran on as the reference line (`sqlite`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<TargetKind>,
    /// Set when the run corrupted every probe's table on purpose (`--debug-corrupt`): its
    /// results are a test of the harness, not measurements.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub debug_corrupt: Option<DebugCorruption>,
    /// Set when the local Worker isolate's heap was sampled during each measured request
    /// (`--isolate-heap`): that sampling's work is inside those requests' timings.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub isolate_heap: bool,
    /// Which Worker measured (`--worker`), on a target that runs one; absent for a run on
    /// sqlite, and in records written before there was a choice (the Rust Worker's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker: Option<WorkerKind>,
    /// Set when the sweep's sessions alternated between the two Workers
    /// (`--alternate-workers`; results.csv's `worker` says which measured each probe).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub alternate_workers: bool,
    /// Set when every session ran both Workers, each probe sent to both back to back
    /// (`--paired-workers`; results.csv's `worker` says which measured each probe).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub paired_workers: bool,
    /// Set when the heap was sampled during about half of the measured requests, interleaved
    /// (`--isolate-heap=alternate`), to measure what sampling costs the timings.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub isolate_heap_alternate: bool,
    /// Seed of the shuffled order a sweep's probes ran in (its profile's `order-seed`); absent
    /// for ladders, and in records written before the order was shuffled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order_seed: Option<u64>,
    /// The precision a sweep's profile asked for (each point repeated until its median's 95%
    /// interval lies within ± this fraction of it), and the most repeats it allowed; absent for
    /// a fixed number of repeats.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_repeats: Option<usize>,
    /// Sessions of a sweep on each target: each a fresh target with its own warm-ups and
    /// rounds, the baseline's alternating with the target's (see `[[sessions]]`); absent for
    /// other kinds, and in records written before runs had sessions (one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sessions: Option<usize>,
    /// Set when every probe's timed window was stretched by this percentage in the target
    /// (`--debug-slow`): its results are a test of the harness, not measurements.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub debug_slow_percent: Option<u32>,
    pub status: RunStatus,
    /// UTC, RFC 3339.
    pub started: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended: Option<String>,
    /// Why the run failed, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The xtask process measuring, while it runs: a later run that finds this process gone
    /// and the status still `running` marks the run abandoned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// A workload run that offered one share of each timetable (`--shard K/N`): `K/N`; absent
    /// for a whole run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<crate::records::shard::Shard>,
    /// When the clock every record's `started_ms`, `sent_ms` and `answered_ms` count from
    /// started, in UTC ms since the Unix epoch: what lines shards' records up when they are
    /// merged. Recorded by shards.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_zero_unix_ms: Option<f64>,
}

impl RunInfo {
    /// Records how the run ended: `complete` or `invalid` by its reconciliation when it
    /// measured (`Ok(all_reconciled)`), else `interrupted` or `failed` with the error.
    pub fn end(&mut self, outcome: Result<bool, &anyhow::Error>) {
        self.ended = Some(utc_now().0);
        self.pid = None;
        self.status = match outcome {
            Ok(true) => RunStatus::Complete,
            Ok(false) => RunStatus::Invalid,
            Err(e) => {
                self.error = Some(format!("{e:#}"));
                if crate::procs::interrupted() {
                    RunStatus::Interrupted
                } else {
                    RunStatus::Failed
                }
            }
        };
    }
}

/// One experiment or ladder file as the run read it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StudyFile {
    pub name: String,
    /// The file, relative to the project root.
    pub file: String,
    /// SHA-256 of the file's bytes as run.
    pub sha256: String,
    pub description: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GitInfo {
    /// The commit checked out (`unknown` outside a git checkout).
    pub commit: Commit,
    /// Whether tracked files differed from that commit.
    pub dirty: bool,
}

impl GitInfo {
    /// The commit with whether the tree differed from it, as one value.
    pub fn revision(&self) -> Revision {
        Revision {
            commit: self.commit.clone(),
            dirty: self.dirty,
        }
    }
}

/// The commit git had checked out, written as its hash or `unknown`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Commit {
    /// The commit's full hash.
    Known(String),
    /// Not in a git checkout, or git could not say.
    Unknown,
}

impl Commit {
    const UNKNOWN: &str = "unknown";

    /// The first `n` characters of its name, as a reader is shown it.
    pub fn short(&self, n: usize) -> &str {
        match self {
            Commit::Known(hash) => hash.get(..n).unwrap_or(hash),
            Commit::Unknown => Commit::UNKNOWN,
        }
    }
}

impl std::fmt::Display for Commit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Commit::Known(hash) => f.write_str(hash),
            Commit::Unknown => f.write_str(Commit::UNKNOWN),
        }
    }
}

impl std::str::FromStr for Commit {
    type Err = String;
    /// A hash, or `unknown`.
    fn from_str(s: &str) -> Result<Commit, String> {
        match s {
            "" => Err("an empty commit: expected a hash or `unknown`".to_owned()),
            Commit::UNKNOWN => Ok(Commit::Unknown),
            hash => Ok(Commit::Known(hash.to_owned())),
        }
    }
}

serde_as_text!(Commit);

/// A commit and whether the tree differed from it, written `<commit>` or `<commit>-dirty` (the
/// code a parity table's rows were measured with).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Revision {
    pub commit: Commit,
    pub dirty: bool,
}

impl Revision {
    const DIRTY: &str = "-dirty";
}

impl std::fmt::Display for Revision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let dirty = if self.dirty { Revision::DIRTY } else { "" };
        write!(f, "{}{dirty}", self.commit)
    }
}

impl std::str::FromStr for Revision {
    type Err = String;
    fn from_str(s: &str) -> Result<Revision, String> {
        let (commit, dirty) = match s.strip_suffix(Revision::DIRTY) {
            Some(commit) => (commit, true),
            None => (s, false),
        };
        Ok(Revision {
            commit: commit.parse()?,
            dirty,
        })
    }
}

serde_as_text!(Revision);

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ToolVersions {
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
    /// The committed Worker build the run's Worker came from: the `sources` hash of
    /// worker/build-manifest.toml (the same hash, the same build). Absent on the sqlite target
    /// and in records written before 2026-12-03 (their commit's manifest says it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_build: Option<String>,
    /// The SHA-256 of the committed `index_bg.wasm` the run's Worker ran (the manifest's): the
    /// same sources have once built to other bytes (2026-12-03, see `worker_build::rebuild`),
    /// so the bytes are recorded too. Absent where `worker_build` is, and before 2026-12-03.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_wasm: Option<String>,
    /// The JavaScript Workers' sources the run used (`worker_build::js_sources_hash` of
    /// `worker-js/`), for a run with `--worker js`, `js-minimal` or `--alternate-workers`;
    /// absent otherwise, and before 2026-12-06.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_js_build: Option<String>,
    /// The ORM Worker's sources and pinned libraries the run used
    /// (`worker_build::orm_sources_hash` of `worker-orm/`), for a run with `--worker js-orm`;
    /// absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_orm_build: Option<String>,
    /// The Postgres Worker's sources the run used (`worker_build::pg_sources_hash` of
    /// `worker-pg/` and `core-pg/`, with the core it builds on), for a run on the hyperdrive
    /// target or with it as the baseline; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_pg_build: Option<String>,
}

impl ToolVersions {
    /// What says which D1 Worker measured: its bytes (`wasm <hash>`), or where the run recorded
    /// none its sources (`sources <hash>`); `None` for a run without the Worker. Two runs with
    /// the same identity ran the same Worker, whatever sources hash each recorded (sources can
    /// change without changing the bytes: `build-worker --carry`).
    pub fn worker_identity(&self) -> Option<String> {
        match (&self.worker_wasm, &self.worker_build) {
            (Some(wasm), _) => Some(format!("wasm {wasm}")),
            (None, Some(sources)) => Some(format!("sources {sources}")),
            (None, None) => None,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Machine {
    pub os: String,
    pub arch: String,
    pub cpu: String,
    pub cpus: usize,
    pub memory_gib: f64,
    /// The kernel's 1-minute load average when the run started and when it ended: above `cpus`,
    /// other work shared the machine with the run (absent in older records, and off Linux).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_at_start: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_at_end: Option<f64>,
    /// The host's speed: each reading of the fixed reference workload, before the first
    /// session, between sessions and after the last (absent before 2026-12-06).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub speed: Vec<crate::records::host_speed::HostReading>,
    /// Set when `cargo xtask reproduce --force` made this run on a host slower than the
    /// committed run's beyond the reference's noise: what it measured before it started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forced: Option<String>,
    /// A CPU limit set on the runner's process (a cgroup quota, the idle scheduling class), when
    /// one was: the run then measured the limit as much as the machine (absent when none was,
    /// and in records before 2026-12-07, whose `cpus` below the machine's cores tells the same).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_limit: Option<crate::records::cpu_limit::CpuLimit>,
}

impl Machine {
    /// The load averages recorded above the CPU count, if any: other work shared the machine
    /// during the run. Empty when none was, or none was recorded.
    pub fn loads_above_cpus(&self) -> Vec<f64> {
        [self.load_at_start, self.load_at_end]
            .into_iter()
            .flatten()
            .filter(|&load| load > self.cpus as f64)
            .collect()
    }
}

/// The 1-minute load average from `/proc/loadavg`, when there is one.
pub fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

impl RunRecord {
    pub fn write(&self, path: &Path) -> Result<()> {
        let text = toml::to_string_pretty(self).context("cannot serialize run.toml")?;
        let tmp = path.with_extension("toml.tmp");
        std::fs::write(
            &tmp,
            format!(
                "# d1bench run record: what was run, where, with what, and how it ended.\n{text}"
            ),
        )
        .with_context(|| format!("cannot write {}", tmp.display()))?;
        // A rename, so that a run killed mid-write never leaves half a record.
        std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))
    }

    pub fn read(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let mut table: toml::Table = text
            .parse()
            .with_context(|| format!("{} is not TOML", path.display()))?;
        upgrade(&mut table);
        RunRecord::deserialize(table)
            .with_context(|| format!("{} is not a d1bench run record", path.display()))
    }
}

/// Reads the records of earlier versions: a sweep's `[experiment]` table (file, sha256,
/// description, x_axis) and a ladder run's `ladders` list and `totals`, `sqlite` at the top.
fn upgrade(table: &mut toml::Table) {
    use toml::Value;
    if table.contains_key("studies") {
        return;
    }
    let mut studies = Vec::new();
    if let Some(Value::Table(mut experiment)) = table.remove("experiment") {
        let name = table
            .get("run")
            .and_then(|r| r.get("experiment"))
            .cloned()
            .unwrap_or(Value::String(String::new()));
        if let (Some(axis), Some(Value::Table(run))) =
            (experiment.remove("x_axis"), table.get_mut("run"))
        {
            run.insert("x_axis".into(), axis);
        }
        experiment.insert("name".into(), name);
        studies.push(Value::Table(experiment));
    }
    if let Some(Value::Array(ladders)) = table.remove("ladders") {
        if let Some(Value::Table(run)) = table.get_mut("run") {
            run.insert("kind".into(), Value::String("ladder".into()));
        }
        studies.extend(ladders);
    }
    if let Some(Value::Table(mut totals)) = table.remove("totals") {
        if let Some(rungs) = totals.remove("rungs") {
            totals.insert("records".into(), rungs);
        }
        table.insert("reconciliation".into(), Value::Table(totals));
    }
    if let Some(sqlite) = table.remove("sqlite")
        && let Some(Value::Table(versions)) = table.get_mut("versions")
    {
        versions.entry("sqlite").or_insert(sqlite);
    }
    table.insert("studies".into(), Value::Array(studies));
}

/// Marks the run.toml at `path` `abandoned` if it still says `running` for process `pid`: its
/// process died without recording how the run ended. Edits the TOML in place, so a record of
/// any version keeps everything else it says. Whether it marked it.
pub fn mark_abandoned(path: &Path, pid: u32) -> bool {
    let Some(mut table) = std::fs::read_to_string(path)
        .ok()
        .and_then(|t| t.parse::<toml::Table>().ok())
    else {
        return false;
    };
    let Some(toml::Value::Table(run)) = table.get_mut("run") else {
        return false;
    };
    let running = run.get("status").and_then(|s| s.as_str()) == Some(RunStatus::Running.name());
    let same = run
        .get("pid")
        .and_then(|p| p.as_integer())
        .is_none_or(|p| p == i64::from(pid));
    if !running || !same {
        return false;
    }
    run.insert("status".into(), RunStatus::Abandoned.name().into());
    run.insert("ended".into(), utc_now().0.into());
    run.insert(
        "error".into(),
        format!(
            "process {pid} died without recording how the run ended; a later run found it and \
             stopped what it had left running. Everything it measured before is in results.csv"
        )
        .into(),
    );
    run.remove("pid");
    toml::to_string_pretty(&table)
        .ok()
        .and_then(|text| std::fs::write(path, text).ok())
        .is_some()
}

pub fn git(sh: &Shell) -> GitInfo {
    let commit = cmd!(sh, "git rev-parse HEAD")
        .quiet()
        .ignore_stderr()
        .read()
        .map_or(Commit::Unknown, Commit::Known);
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
        load_at_start: load_average(),
        load_at_end: None,
        speed: Vec::new(),
        forced: None,
        cpu_limit: crate::records::cpu_limit::of_this_process(),
    }
}

#[cfg(test)]
pub mod tests_support;

#[cfg(test)]
mod tests;
