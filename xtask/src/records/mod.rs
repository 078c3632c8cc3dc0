//! What a run leaves on disk, and the only code that reads and writes it: the run directory's
//! paths ([`RunDir`]), what every kind's rows of `results.csv` answer ([`Record`]; the rows
//! themselves are each kind's, in `studies/<kind>/row.rs`), one CSV appender and reader
//! ([`csv`]), the host's speed readings ([`host_speed`]), what of an error text a record keeps ([`error_text`]), `run.toml`
//! ([`run_record`], with what it says of the run's plan, sessions and resumptions in
//! [`run_history`]), and the checks that decide whether a record reconciles, with their totals
//! ([`reconcile`]) and what a sweep's probes are expected to hold, computed once per distinct
//! probe ([`expected`]); a replicate set, runs of one design made at separate times
//! ([`replicates`]); a workload's shards and the run merged from them ([`shard`]).

pub mod cpu_limit;
pub mod csv;
pub mod error_text;
pub mod expected;
pub mod host_speed;
pub mod reconcile;
pub mod replicates;
pub mod run_history;
pub mod run_record;
pub mod shard;

use std::path::PathBuf;

pub use reconcile::Totals;
pub use run_record::{RunRecord, RunStatus, StudyKind};

/// `<out>/<UTC time>-<name>` created (and `out` with it), `-2`, `-3`, … appended when another
/// run made that one in the same second.
pub fn create_unique_dir(out: &std::path::Path, name: &str) -> anyhow::Result<PathBuf> {
    use anyhow::Context;
    let (_, compact) = crate::base::clock::utc_now();
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    for attempt in 1.. {
        let path = match attempt {
            1 => out.join(format!("{compact}-{name}")),
            n => out.join(format!("{compact}-{name}-{n}")),
        };
        match std::fs::create_dir(&path) {
            Ok(()) => return Ok(path),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e).with_context(|| format!("cannot create {}", path.display())),
        }
    }
    unreachable!("some attempt number is free")
}

/// The files of one run, all under `reports/<experiment>/<run-id>/`.
#[derive(Debug, Clone)]
pub struct RunDir {
    pub path: PathBuf,
}

impl RunDir {
    pub fn new(path: PathBuf) -> Self {
        RunDir { path }
    }
    /// One row per probe or rung, appended and flushed as each completes.
    pub fn results_csv(&self) -> PathBuf {
        self.path.join("results.csv")
    }
    /// One row per check of a workload's table, appended as each ends (workload runs only).
    pub fn checks_csv(&self) -> PathBuf {
        self.path.join("checks.csv")
    }
    /// One row per workload load point, appended as each ends (workload runs only).
    pub fn points_csv(&self) -> PathBuf {
        self.path.join("points.csv")
    }
    /// Per point and arm, a workload shard's latency histogram (HdrHistogram V2) with its
    /// counts (shard and merged runs only).
    pub fn histograms_csv(&self) -> PathBuf {
        self.path.join("histograms.csv")
    }
    /// One row per ladder climb, appended as each ends (ladder runs only).
    pub fn findings_csv(&self) -> PathBuf {
        self.path.join("findings.csv")
    }
    pub fn run_toml(&self) -> PathBuf {
        self.path.join("run.toml")
    }
    pub fn summary_csv(&self) -> PathBuf {
        self.path.join("summary.csv")
    }
    pub fn summary_md(&self) -> PathBuf {
        self.path.join("summary.md")
    }
    pub fn parity_csv(&self) -> PathBuf {
        self.path.join("parity.csv")
    }
    /// A chart file: `<name>.<extension>` in the run directory.
    pub fn chart(&self, name: &str, extension: &str) -> PathBuf {
        self.path.join(format!("{name}.{extension}"))
    }
    /// The directory's name: the run's id.
    pub fn id(&self) -> String {
        self.path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }
}

/// Whether a record holds a time measured on the target, an answer that is data (a refusal),
/// or nothing the target said (it failed or stopped answering). One view over the records of
/// every kind of study, for the totals and the progress lines.
pub trait Record {
    fn outcome(&self) -> d1bench_core::Outcome;
    /// The target gave no usable answer: a failure of the target, not of the data.
    fn target_failed(&self) -> bool;
    fn reconciled(&self) -> bool;
    /// Why it did not reconcile; empty when it did.
    fn reconcile_note(&self) -> &str;
    /// Rows that had to be present afterwards, and the rows that were.
    fn rows(&self) -> (usize, usize);
    /// Whether the content checksums were equal, when the record has them.
    fn checksum_equal(&self) -> Option<bool>;
    /// One line for people: what ran and how it ended.
    fn describe(&self) -> String;
}
