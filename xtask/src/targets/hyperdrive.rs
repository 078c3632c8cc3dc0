//! The hyperdrive target: the Postgres Worker (`worker-pg/`) in workerd through `wrangler dev`,
//! writing through its Hyperdrive binding `PG` to a private PostgreSQL cluster this session
//! starts ([`cluster`]) and stops. Locally, wrangler connects the binding straight to the
//! server (no pooling, no query cache): what is measured is the Worker's socket to Postgres,
//! not Cloudflare's Hyperdrive service.
//!
//! Setup, probe, verification and ladder rungs are the Rust Worker's protocol ([`WorkerClient`]);
//! the session asks the Worker's `/ping` once before anything is measured, so a server the
//! binding cannot reach is said at the start, naming where it points. Sweeps and ladders (those
//! Postgres has: `d1bench_core_pg_ladder`); workloads are refused before anything starts.
//!
//! With `D1BENCH_HYPERDRIVE_URL` set, the binding points at that server instead (a database of
//! the user's: the probes' tables `t_<id>` are created and dropped in it) and no cluster is
//! started; a malformed string stops the run before anything starts ([`connection`]).
//!
//! `remote-hyperdrive` is the same session with the Worker deployed to Cloudflare
//! ([`remote::RemotePgHost`]): Hyperdrive itself, pooling included, between the Worker and the
//! server in `D1BENCH_HYPERDRIVE_URL`, which must be reachable from Cloudflare.

pub mod cluster;
pub mod connection;

use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use d1bench_core::ladder::{FinishResult, PrepareResult, RungRequest, RungResult, Step};
use d1bench_core::{ProbeRequest, ProbeResult, SetupResult, VerifyResult};

use super::http::{Health, Timed, WorkerClient};
use super::local::{DevWorker, LocalWorker};
use super::{Described, Probes, Rungs, Target, TargetError, Workloads, remote};
use crate::base::{PgWorker, TargetKind, WorkerKind};
use crate::paths::Paths;
use crate::toolchain::Toolchain;
use cluster::Cluster;
use connection::{ConnectionString, SERVER_VAR, given_server};

/// The variable wrangler reads the binding `PG`'s local connection string from.
const CONNECTION_VAR: &str = "CLOUDFLARE_HYPERDRIVE_LOCAL_CONNECTION_STRING_PG";

/// How long a target that failed to answer may take to answer `/health` again.
const RECOVERY_TIMEOUT: Duration = Duration::from_secs(60);

/// What runs the Postgres Worker, and stops it when closed or dropped.
enum PgHost {
    Local {
        // Dropped in this order: wrangler first, then the server its connections went to.
        worker: LocalWorker,
        /// The private cluster, unless the user gave a server.
        cluster: Option<Cluster>,
    },
    Remote(remote::RemotePgHost),
}

pub struct HyperdriveSession {
    host: PgHost,
    client: WorkerClient,
    health: Health,
    /// What the server answered `SHOW server_version` with, through the binding.
    server_version: String,
}

impl HyperdriveSession {
    /// Starts the cluster, then wrangler dev with the Postgres Worker bound to it, and checks
    /// that the Worker reaches the server through its binding.
    pub fn open(paths: &Paths, tools: &Toolchain, which: PgWorker) -> Result<Self> {
        let (cluster, server) = match given_server()? {
            Some(server) => {
                eprintln!("writing to {server} ({SERVER_VAR}): no cluster started");
                (None, server)
            }
            None => {
                let started = Instant::now();
                let cluster = Cluster::start(paths)?;
                eprintln!(
                    "started PostgreSQL ({}) on 127.0.0.1:{} in {:.1} s (initdb {:.1} s)",
                    cluster.version,
                    cluster.port(),
                    started.elapsed().as_secs_f64(),
                    cluster.initdb_ms / 1000.0
                );
                let server = ConnectionString::parse(&cluster.connection_string())
                    .map_err(|why| anyhow::anyhow!("the cluster's connection string: {why}"))?;
                (Some(cluster), server)
            }
        };
        let dev = DevWorker {
            kind: WorkerKind::Rust,
            dir: paths.worker_pg_of(which),
            config: paths.worker_pg_of(which).join("wrangler.toml"),
            env: vec![(CONNECTION_VAR.to_owned(), server.full())],
        };
        let (worker, client, health) =
            LocalWorker::start_dev(paths, tools, &dev).with_context(|| {
                format!(
                    "cannot start the Postgres Worker ({}/) under wrangler dev",
                    which.dir_name()
                )
            })?;
        let server_version = ping(&client, &server)?;
        Ok(HyperdriveSession {
            host: PgHost::Local { worker, cluster },
            client,
            health,
            server_version,
        })
    }

    /// Creates the Hyperdrive configuration of the run's server on Cloudflare, deploys the
    /// Postgres Worker bound to it, and checks that the Worker reaches the server through it.
    pub fn remote(
        paths: &Paths,
        tools: &Toolchain,
        options: &remote::Options,
        warnings: &[String],
        which: PgWorker,
    ) -> Result<Self> {
        let server = options
            .postgres
            .clone()
            .context("a remote-hyperdrive run's server is read before it starts")?;
        let (host, client, health) =
            remote::RemotePgHost::start(paths, tools, options, &server, warnings, which)?;
        // On failure the host is dropped here, which deletes the Worker and the configuration.
        let server_version = ping(&client, &server)?;
        Ok(HyperdriveSession {
            host: PgHost::Remote(host),
            client,
            health,
            server_version,
        })
    }
}

/// The server's version through the Worker's binding, or an error naming where it points.
fn ping(client: &WorkerClient, server: &ConnectionString) -> Result<String> {
    client.ping().with_context(|| {
        format!(
            "the Postgres Worker cannot reach the server its Hyperdrive binding PG points at \
             ({server})"
        )
    })
}

/// What a workload call answers here: this target runs sweeps and ladders only (the plan
/// refuses workloads before anything starts).
fn no_workloads<T>() -> Result<T, TargetError> {
    Err(TargetError::InProcess(
        "the hyperdrive target runs sweeps and ladders, not workloads".to_owned(),
    ))
}

impl Target for HyperdriveSession {
    fn target(&self) -> TargetKind {
        match self.host {
            PgHost::Local { .. } => TargetKind::Hyperdrive,
            PgHost::Remote(_) => TargetKind::RemoteHyperdrive,
        }
    }

    /// Postgres reports no time of its own per statement.
    fn has_d1_clock(&self) -> bool {
        false
    }

    fn recover(&mut self) -> Result<(), TargetError> {
        let started = Instant::now();
        loop {
            if crate::procs::interrupted() {
                return Err(TargetError::Interrupted);
            }
            if let PgHost::Local { worker, cluster } = &mut self.host {
                worker
                    .check_alive()
                    .and_then(|()| cluster.as_mut().map_or(Ok(()), Cluster::check_alive))
                    .map_err(|e| TargetError::Died(format!("{e:#}")))?;
            }
            match self.client.health() {
                Ok(_) => return Ok(()),
                Err(e) if started.elapsed() > RECOVERY_TIMEOUT => {
                    let wedged = match &self.host {
                        PgHost::Local { worker, .. } => format!("; {}", worker.wedged()),
                        PgHost::Remote(_) => String::new(),
                    };
                    return Err(TargetError::StoppedAnswering {
                        waited: started.elapsed(),
                        why: format!("{e:#}{wedged}"),
                    });
                }
                Err(_) => std::thread::sleep(Duration::from_millis(250)),
            }
        }
    }

    fn describe(&self) -> Described {
        Described {
            worker: format!(
                "{} {}, PostgreSQL {}",
                self.health.name, self.health.version, self.server_version
            ),
            remote: match &self.host {
                PgHost::Local { .. } => None,
                PgHost::Remote(host) => Some(host.record.clone()),
            },
        }
    }

    fn close(self: Box<Self>) -> (Described, Result<()>) {
        let mut described = self.describe();
        let (worker, cluster) = match self.host {
            PgHost::Local { worker, cluster } => (worker, cluster),
            PgHost::Remote(host) => {
                let (teardown, result) = host.teardown();
                if let Some(record) = described.remote.as_mut() {
                    record.teardown = teardown;
                }
                return (described, result);
            }
        };
        worker.stop();
        let Some(mut cluster) = cluster else {
            return (described, Ok(()));
        };
        let stopped = cluster.stop().map(|took| {
            eprintln!(
                "stopped PostgreSQL on 127.0.0.1:{} in {:.1} s",
                cluster.port(),
                took.as_secs_f64()
            );
        });
        (described, stopped)
    }
}

impl Probes for HyperdriveSession {
    fn setup(&mut self, probe: &ProbeRequest) -> Result<SetupResult, TargetError> {
        self.client.setup(probe)
    }

    fn probe(&mut self, probe: &ProbeRequest) -> Timed<ProbeResult> {
        self.client.probe(probe)
    }

    fn verify(&mut self, probe: &ProbeRequest) -> Result<VerifyResult, TargetError> {
        self.client.verify(probe)
    }
}

/// The Worker's `POST /rung`, with the rung SQL of `d1bench_core_pg_ladder`.
impl Rungs for HyperdriveSession {
    fn rung_prepare(&mut self, rung: &RungRequest) -> Result<PrepareResult, TargetError> {
        self.client.rung(Step::Prepare, rung).result
    }

    fn rung_climb(&mut self, rung: &RungRequest) -> Timed<RungResult> {
        self.client.rung(Step::Climb, rung)
    }

    fn rung_finish(&mut self, rung: &RungRequest) -> Result<FinishResult, TargetError> {
        self.client.rung(Step::Finish, rung).result
    }
}

impl Workloads for HyperdriveSession {
    fn workload(
        &mut self,
    ) -> Result<std::sync::Arc<dyn super::workload::WorkloadClient>, TargetError> {
        no_workloads()
    }

    fn process_group(&self) -> Option<i32> {
        match &self.host {
            PgHost::Local { worker, .. } => Some(worker.pgid()),
            PgHost::Remote(_) => None,
        }
    }

    fn rest_writes(&mut self) -> Option<std::sync::Arc<remote::rest::RestClient>> {
        None
    }
}
