//! A target that another process started and shares (`cargo xtask run WORKLOAD --shards N`):
//! the one `wrangler dev` (with its one local D1) or the one SQLite file that a coordinator
//! started, seeds and checks, reached by each of N shard processes through the same client a
//! target of its own would give it. The [`Join`] file says where it is and where the processes
//! meet ([`rendezvous`]); a session joined to it runs workloads only, and closing it leaves the
//! target to the coordinator, which stops it.

pub mod rendezvous;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use d1bench_core::ladder::{FinishResult, PrepareResult, RungRequest, RungResult};
use d1bench_core::{ProbeRequest, ProbeResult, SetupResult, VerifyResult};
use serde::{Deserialize, Serialize};

use super::http::WorkerClient;
use super::sqlite::workload::SqliteWorkload;
use super::workload::WorkloadClient;
use super::{Described, Probes, Rungs, Target, TargetError, Timed, Workloads, remote};
use crate::base::TargetKind;
use rendezvous::{Party, Rendezvous};

/// The environment variable a shard process reads the shared Worker's bearer token from (kept
/// out of the join file and every command line).
pub const TOKEN_VAR: &str = "D1BENCH_SHARED_TOKEN";

/// Where the shared target is, written by the coordinator as `join.toml` beside the shard runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Join {
    pub target: TargetKind,
    /// N: the shard processes that share it.
    pub of: u32,
    /// The directory the processes meet in.
    pub rendezvous: PathBuf,
    /// The SQLite file (the `sqlite` target).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sqlite: Option<PathBuf>,
    /// The Worker's address (the `local` target); its token is in [`TOKEN_VAR`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The coordinator's process: a shard stops waiting when it is gone.
    pub coordinator_pid: u32,
    /// Longest any one wait at the rendezvous may last.
    pub wait_limit_s: u64,
    /// What the run's Workers KV keys start with, the same in every process.
    pub generation: u64,
}

impl Join {
    pub fn read(path: &Path) -> Result<Join> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the join file {}", path.display()))?;
        // toml's message says the line and column.
        toml::from_str(&text).with_context(|| format!("{}: not a join file", path.display()))
    }

    pub fn write(&self, path: &Path) -> Result<()> {
        std::fs::write(path, toml::to_string(self)?)
            .with_context(|| format!("cannot write {}", path.display()))
    }

    /// The longest wait, as a duration.
    pub fn wait_limit(&self) -> Duration {
        Duration::from_secs(self.wait_limit_s)
    }

    /// A client of the shared target.
    pub fn client(&self) -> Result<Arc<dyn WorkloadClient>> {
        match self.target {
            TargetKind::Sqlite => {
                let path = self
                    .sqlite
                    .as_deref()
                    .context("the join file names no SQLite file (`sqlite`)")?;
                // The coordinator may be writing (seeding): a connection that finds the file
                // locked is refused at once (SQLite's own single writer), so try for a while.
                let deadline = std::time::Instant::now() + Duration::from_secs(30);
                loop {
                    match SqliteWorkload::open_file(path) {
                        Ok(workload) => return Ok(Arc::new(workload)),
                        Err(e) if std::time::Instant::now() >= deadline => {
                            return Err(e.context(format!(
                                "cannot open the shared SQLite file {}",
                                path.display()
                            )));
                        }
                        Err(_) => std::thread::sleep(Duration::from_millis(20)),
                    }
                }
            }
            TargetKind::Local => {
                let url = self
                    .url
                    .as_deref()
                    .context("the join file names no Worker (`url`)")?;
                let token = std::env::var(TOKEN_VAR).with_context(|| {
                    format!("{TOKEN_VAR} is not set: a shard reaches the shared Worker with it")
                })?;
                let client = WorkerClient::new(url, &token);
                client
                    .health()
                    .with_context(|| format!("the shared Worker at {url} does not answer"))?;
                Ok(Arc::new(client))
            }
            other => {
                bail!("--shards shares a target on this machine: sqlite or local, not {other}")
            }
        }
    }
}

/// A session on a shared target, for the coordinator or one shard.
pub struct JoinedSession {
    target: TargetKind,
    client: Arc<dyn WorkloadClient>,
    rendezvous: Arc<Rendezvous>,
}

impl JoinedSession {
    /// Shard `index`'s session on the target `join` names; its waits end when the coordinator
    /// is gone.
    pub fn join(join: &Join, index: u32) -> Result<Self> {
        let coordinator = join.coordinator_pid;
        let rendezvous = Rendezvous::new(
            &join.rendezvous,
            (join.of, Party::Shard(index)),
            (join.wait_limit(), join.generation),
            Box::new(move || match crate::procs::process_alive(coordinator) {
                true => Ok(()),
                false => bail!("the coordinator (pid {coordinator}) is gone"),
            }),
        )?;
        Ok(JoinedSession {
            target: join.target,
            client: join.client()?,
            rendezvous: Arc::new(rendezvous),
        })
    }

    /// The coordinator's session: `client` of the target it started, `rendezvous` its end.
    pub fn coordinator(
        target: TargetKind,
        client: Arc<dyn WorkloadClient>,
        rendezvous: Rendezvous,
    ) -> Self {
        JoinedSession {
            target,
            client,
            rendezvous: Arc::new(rendezvous),
        }
    }
}

fn workloads_only<T>() -> Result<T, TargetError> {
    Err(TargetError::InProcess(
        "a shared target runs workloads only (--shards)".into(),
    ))
}

impl Target for JoinedSession {
    fn target(&self) -> TargetKind {
        self.target
    }
    fn has_d1_clock(&self) -> bool {
        self.target.runs_the_worker()
    }
    fn recover(&mut self) -> Result<(), TargetError> {
        Err(TargetError::InProcess(
            "the shared target is the coordinator's to recover, not a shard's".into(),
        ))
    }
    fn describe(&self) -> Described {
        Described {
            worker: format!(
                "{} shared by {} shard processes (started by the coordinator)",
                self.target,
                self.rendezvous.of()
            ),
            remote: None,
        }
    }
    /// The coordinator stops the target; a shard only lets go of it.
    fn close(self: Box<Self>) -> (Described, Result<()>) {
        (self.describe(), Ok(()))
    }
}

impl Probes for JoinedSession {
    fn setup(&mut self, _: &ProbeRequest) -> Result<SetupResult, TargetError> {
        workloads_only()
    }
    fn probe(&mut self, _: &ProbeRequest) -> Timed<ProbeResult> {
        Timed {
            outside_ms: 0.0,
            result: workloads_only(),
        }
    }
    fn verify(&mut self, _: &ProbeRequest) -> Result<VerifyResult, TargetError> {
        workloads_only()
    }
}

impl Rungs for JoinedSession {
    fn rung_prepare(&mut self, _: &RungRequest) -> Result<PrepareResult, TargetError> {
        workloads_only()
    }
    fn rung_climb(&mut self, _: &RungRequest) -> Timed<RungResult> {
        Timed {
            outside_ms: 0.0,
            result: workloads_only(),
        }
    }
    fn rung_finish(&mut self, _: &RungRequest) -> Result<FinishResult, TargetError> {
        workloads_only()
    }
}

impl Workloads for JoinedSession {
    fn workload(&mut self) -> Result<Arc<dyn WorkloadClient>, TargetError> {
        Ok(Arc::clone(&self.client))
    }
    /// The target's processes are the coordinator's: their CPU is not a shard's to count.
    fn process_group(&self) -> Option<i32> {
        None
    }
    fn rest_writes(&mut self) -> Option<Arc<remote::rest::RestClient>> {
        None
    }
    fn rendezvous(&self) -> Option<Arc<Rendezvous>> {
        Some(Arc::clone(&self.rendezvous))
    }
}
