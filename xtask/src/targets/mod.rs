//! Where probes and rungs run: one [`Session`] per target and run, started by [`open`] (build,
//! deploy, create the database, wait until it answers) and ended by [`Session::close`] or by
//! being dropped, on every way out (success, error, panic, Ctrl-C). The pipeline drives every
//! session the same way; a new target is one module that implements [`Target`] and a trait per
//! kind of call ([`Probes`], [`Rungs`], [`Workloads`]); the pipeline's code for each kind of
//! study asks only for the calls it makes.
//!
//! - [`local`]: the Worker in workerd through `wrangler dev`, with a real local D1, or writing
//!   through a SQLite-backed Durable Object instead (the `do` target: the Worker's `/do/` routes);
//! - [`remote`]: the Worker deployed to Cloudflare with a D1 database of its own, or writing
//!   through its Durable Object instead (the `remote-do` target);
//! - [`paired`]: two local Workers (Rust and JavaScript) in one session, each probe sent to the
//!   one it names (`--paired-workers`);
//! - [`worker`]: what those two share: the Worker reached over HTTP ([`http`]);
//! - [`hyperdrive`]: the Postgres Worker in workerd through `wrangler dev`, writing through its
//!   Hyperdrive binding to a private PostgreSQL cluster the session starts and stops;
//! - [`joined`]: a `wrangler dev` or SQLite file another process started and shares with several
//!   shard processes (`--shards N`), and where they meet;
//! - [`sqlite`]: real SQLite in-process with D1's documented limits (the baseline);
//! - [`workload`]: what workload experiments ask of a target, shared by the load generator.

pub mod error;
pub mod http;
pub mod hyperdrive;
pub mod joined;
pub mod local;
#[cfg(test)]
pub mod loopback;
pub mod paired;
pub mod remote;
pub mod sqlite;
pub mod worker;
pub mod workload;

use std::time::Duration;

use anyhow::{Context, Result};
use d1bench_core::ladder::{FinishResult, PrepareResult, RungRequest, RungResult};
use d1bench_core::{ProbeRequest, ProbeResult, SetupResult, VerifyResult};

pub use error::TargetError;
pub use http::{OrmAnswer, Timed};

use crate::base::{OrmWrite, PgWorker, TargetKind, WorkerKind};
use crate::paths::Paths;
use crate::toolchain::Toolchain;

/// Longest the measured request may take: a probe's writes, a rung's climb (query-duration's
/// longest rungs run for tens of seconds, and a query past D1's 30 s limit must still come back).
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(300);

/// Longest a request around the measurement may take: a probe's setup and verification, a
/// rung's prepare and finish (a CREATE, a count, a checksum, a DROP: milliseconds to a second or
/// two, each query bounded by D1's own 30 s). Shorter than [`REQUEST_TIMEOUT`] so a target that
/// accepts requests and never answers (wrangler's proxy after its runtime was restarted under
/// it) costs a minute, not five.
pub const STEP_TIMEOUT: Duration = Duration::from_secs(60);

/// Longest one `/health` request may take: it does nothing, so a target that does not answer it
/// within this is not answering, and the caller asks again.
pub const HEALTH_TIMEOUT: Duration = Duration::from_secs(10);

/// A target, started and answering, for the length of one run: what every target does, whatever
/// it runs. Every [`TargetError`] and every `Timed` without a result, in this trait and the
/// three below, is the target failing to answer (it died, stopped answering, or said something
/// that is not an answer); D1's and SQLite's errors are data inside the `Ok` answers.
pub trait Target {
    fn target(&self) -> TargetKind;
    /// Whether answers carry D1's own clock (`meta.duration`).
    fn has_d1_clock(&self) -> bool;
    /// Which Worker measures, on a target that runs one.
    fn worker(&self) -> Option<WorkerKind> {
        None
    }
    /// Sends the next calls to `worker`, on a session that runs two ([`paired`]); any other
    /// session runs only its own and refuses another.
    fn use_worker(&mut self, worker: WorkerKind) -> Result<(), TargetError> {
        match self.worker() {
            Some(mine) if mine == worker => Ok(()),
            mine => Err(TargetError::InProcess(format!(
                "this session runs {}, not the {worker} Worker",
                mine.map_or(self.target().to_string(), |w| format!("the {w} Worker"))
            ))),
        }
    }
    /// Milliseconds spent inside this session's calls so far, for a session that times its
    /// calls (the pipeline's clocked session); `None` for the others.
    fn calls_ms(&self) -> Option<f64> {
        None
    }
    /// The largest the Worker's isolate got (bytes: V8's heap in use and its ArrayBuffers)
    /// during the last measured request, a probe's writes or a rung's climb, for a target that
    /// samples it (local); `None` for the others, or when sampling failed.
    fn isolate_heap_peak_bytes(&self) -> Option<u64> {
        None
    }

    /// After the target failed to answer: waits (bounded) until it answers again, or says why
    /// it will not.
    fn recover(&mut self) -> Result<(), TargetError>;

    /// What the run record says of the session so far: the Worker's version, where on
    /// Cloudflare it runs.
    fn describe(&self) -> Described;

    /// Stops the target and removes what it created: what the run record should say after,
    /// and whether the teardown succeeded.
    fn close(self: Box<Self>) -> (Described, Result<()>);
}

/// A target that runs a sweep's probes.
pub trait Probes: Target {
    /// Creates a probe's table and indexes (an invocation of its own on the Worker).
    fn setup(&mut self, probe: &ProbeRequest) -> Result<SetupResult, TargetError>;
    /// Writes a probe's rows, timed from the outside (an invocation of its own).
    fn probe(&mut self, probe: &ProbeRequest) -> Timed<ProbeResult>;
    /// Counts and checksums a probe's table, then drops it (an invocation of its own).
    fn verify(&mut self, probe: &ProbeRequest) -> Result<VerifyResult, TargetError>;
    /// Writes a probe's rows with `orm`'s bulk insert, timed from the outside (an invocation of
    /// its own); only the ORM Worker runs libraries, every other target answers that it does not.
    fn orm_probe(&mut self, _probe: &ProbeRequest, orm: OrmWrite) -> Timed<OrmAnswer> {
        Timed {
            outside_ms: 0.0,
            result: Err(TargetError::InProcess(format!(
                "{} runs no ORM: {orm}'s probes need the ORM Worker (`--worker js-orm`)",
                self.worker()
                    .map_or(self.target().to_string(), |w| format!("the {w} Worker"))
            ))),
        }
    }
}

/// A target that climbs a ladder's rungs.
pub trait Rungs: Target {
    /// The three steps of a ladder rung, each an invocation of its own on the Worker.
    fn rung_prepare(&mut self, rung: &RungRequest) -> Result<PrepareResult, TargetError>;
    fn rung_climb(&mut self, rung: &RungRequest) -> Timed<RungResult>;
    fn rung_finish(&mut self, rung: &RungRequest) -> Result<FinishResult, TargetError>;
}

/// A target that runs workloads.
pub trait Workloads: Target {
    /// A client for workload experiments that the load generator's threads share.
    fn workload(&mut self) -> Result<std::sync::Arc<dyn workload::WorkloadClient>, TargetError>;
    /// The process group of what runs the target on this machine (wrangler and workerd), whose
    /// CPU time a workload point records; none when nothing runs apart from this process. No
    /// default: a wrapper must pass it on.
    fn process_group(&self) -> Option<i32>;
    /// D1's REST API for the target's database, for writes a series sends that way; `None` on
    /// a target without it (every target but remote). No default: a wrapper must pass it on.
    fn rest_writes(&mut self) -> Option<std::sync::Arc<remote::rest::RestClient>>;
    /// Where the processes sharing this target meet, on a target another process started and
    /// shares ([`joined`]); `None` on a target of the session's own. A wrapper must pass it on.
    fn rendezvous(&self) -> Option<std::sync::Arc<joined::rendezvous::Rendezvous>> {
        None
    }
}

/// A target that runs every kind of study, as [`open`] starts it: any type that implements the
/// three kinds of call is one.
pub trait Session: Probes + Rungs + Workloads {}

impl<T: Probes + Rungs + Workloads + ?Sized> Session for T {}

/// What a session tells the run record.
#[derive(Debug, Clone, Default)]
pub struct Described {
    /// What the Worker's `/health` reported, or what runs the probes.
    pub worker: String,
    /// The remote run's resources and where D1 served it.
    pub remote: Option<remote::RemoteRecord>,
}

/// What starting a target may need.
pub struct Start<'a> {
    pub paths: &'a Paths,
    /// The Worker's toolchain, installed and the Worker built (local and remote).
    pub tools: Option<&'a Toolchain>,
    /// The remote run's options, checked before anything was installed.
    pub remote: Option<&'a remote::Options>,
    /// Warnings to say before a remote run spends quota.
    pub warnings: &'a [String],
    /// Which Worker runs on the local target (`--worker`).
    pub worker: WorkerKind,
    /// Whether a local Worker's isolate heap is sampled during each measured request
    /// (`--isolate-heap`).
    pub sample_heap: Option<crate::base::HeapSampling>,
    /// `--paired-workers`: the JavaScript Worker that runs beside the Rust Worker in every
    /// session of the local target.
    pub pair_with: Option<WorkerKind>,
    /// A shard of `--shards`: the shared target it joins, and its K.
    pub join: Option<(&'a joined::Join, u32)>,
    /// Which Postgres Worker the hyperdrive targets start: the ladders' for a ladder.
    pub pg_worker: PgWorker,
}

/// Starts `kind` and waits until it answers.
pub fn open(kind: TargetKind, start: &Start) -> Result<Box<dyn Session>> {
    if let Some((join, k)) = start.join {
        eprintln!(
            "joining the shared {kind} target as shard {k}/{} (its coordinator started it)",
            join.of
        );
        return Ok(Box::new(joined::JoinedSession::join(join, k)?));
    }
    Ok(match kind {
        TargetKind::Sqlite => Box::new(sqlite::SqliteSession::open()?),
        TargetKind::Local if start.pair_with.is_some() => {
            let tools = start
                .tools
                .context("the local target needs the Worker's toolchain")?;
            let js = start.pair_with.expect("matched");
            eprintln!(
                "starting wrangler dev twice (the Rust and the {js} Worker, each a local D1)"
            );
            Box::new(paired::PairedWorkers::open(
                [WorkerKind::Rust, js],
                |worker| {
                    Ok(Box::new(worker::WorkerSession::local(
                        start.paths,
                        tools,
                        start.sample_heap,
                        worker,
                        kind,
                    )?) as Box<dyn Session>)
                },
            )?)
        }
        TargetKind::Local | TargetKind::Do => {
            let tools = start
                .tools
                .with_context(|| format!("the {kind} target needs the Worker's toolchain"))?;
            eprintln!(
                "starting wrangler dev (workerd with {})",
                match kind {
                    TargetKind::Do => "a SQLite-backed Durable Object",
                    _ => "a local D1",
                }
            );
            Box::new(worker::WorkerSession::local(
                start.paths,
                tools,
                start.sample_heap,
                start.worker,
                kind,
            )?)
        }
        TargetKind::Hyperdrive => {
            let tools = start
                .tools
                .context("the hyperdrive target needs the Worker's toolchain")?;
            eprintln!("starting PostgreSQL, then wrangler dev (workerd with a Hyperdrive binding)");
            Box::new(hyperdrive::HyperdriveSession::open(
                start.paths,
                tools,
                start.pg_worker,
            )?)
        }
        TargetKind::RemoteHyperdrive => {
            let tools = start
                .tools
                .context("the remote-hyperdrive target needs the Worker's toolchain")?;
            let options = start
                .remote
                .context("a remote run's options are read before it starts")?;
            Box::new(hyperdrive::HyperdriveSession::remote(
                start.paths,
                tools,
                options,
                start.warnings,
                start.pg_worker,
            )?)
        }
        TargetKind::Remote | TargetKind::RemoteDo => {
            let tools = start
                .tools
                .with_context(|| format!("the {kind} target needs the Worker's toolchain"))?;
            let options = start
                .remote
                .context("a remote run's options are read before it starts")?;
            Box::new(worker::WorkerSession::remote(
                start.paths,
                tools,
                options,
                start.warnings,
                kind,
            )?)
        }
    })
}
