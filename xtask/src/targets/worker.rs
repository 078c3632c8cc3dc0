//! The Worker as a session, wherever it runs: `wrangler dev` on this machine ([`super::local`])
//! or deployed to Cloudflare ([`super::remote`]); either way every probe and rung goes over HTTP
//! ([`super::http`]) to its own invocation. Where D1 says it served the verifications and the
//! workload operations goes into the run record.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Result;
use d1bench_core::ladder::{FinishResult, PrepareResult, RungRequest, RungResult, Step};
use d1bench_core::workload::{
    CheckRequest, CheckResult, IndexKind, OpRequest, OpResult, SeedRequest, SeedResult,
};
use d1bench_core::{ProbeRequest, ProbeResult, SetupResult, VerifyResult};

use super::http::{Health, OrmAnswer, Timed, WorkerClient};
use super::local::LocalWorker;
use super::remote::{self, RemoteHost};
use super::workload::WorkloadClient;
use super::{Described, Probes, Rungs, Target, TargetError, Workloads};
use crate::base::{HeapSampling, TargetKind, WorkerKind};
use crate::paths::Paths;
use crate::toolchain::Toolchain;

/// How long a target that failed to answer may take to answer `/health` again.
const RECOVERY_TIMEOUT: Duration = Duration::from_secs(60);

/// What keeps the Worker running, and stops it when closed or dropped.
enum Host {
    Local(LocalWorker),
    // Boxed: a deployment's record is several times the size of a local worker's handle.
    Remote(Box<RemoteHost>),
}

pub struct WorkerSession {
    host: Host,
    client: WorkerClient,
    health: Health,
    /// Shared with the workload client, whose operations report where D1 served them too.
    served: Arc<Mutex<ServedSeen>>,
    /// The isolate's peak heap during the last measured request (local only).
    heap_peak_bytes: Option<u64>,
    /// Whether a failure to sample the heap was said already (once per run is enough).
    heap_warned: bool,
    /// Which measured requests the heap is sampled during (`--isolate-heap`; local only).
    sample_heap: Option<HeapSampling>,
    /// Which Worker answers.
    worker: WorkerKind,
}

/// Every `served_by_region` and `served_by_colo` D1 reported so far.
#[derive(Debug, Default)]
struct ServedSeen {
    regions: BTreeSet<String>,
    colos: BTreeSet<String>,
}

impl ServedSeen {
    fn note(&mut self, served: Option<&d1bench_core::ServedBy>) {
        if let Some(served) = served {
            self.regions.extend(served.region.clone());
            self.colos.extend(served.colo.clone());
        }
    }
}

/// The Worker's workload calls, noting where D1 served each operation for the run record.
struct NotingClient {
    client: WorkerClient,
    served: Arc<Mutex<ServedSeen>>,
}

impl WorkloadClient for NotingClient {
    fn seed(&self, seed: &SeedRequest) -> Result<SeedResult, TargetError> {
        self.client.seed(seed)
    }
    fn index(&self, indexes: &[IndexKind]) -> Result<(), TargetError> {
        self.client.index(indexes)
    }
    fn op(&self, op: &OpRequest) -> Timed<OpResult> {
        let answer = self.client.op(op);
        if let Ok(result) = &answer.result
            && let Ok(mut served) = self.served.lock()
        {
            served.note(result.served_by.as_ref());
        }
        answer
    }
    fn check(&self, check: &CheckRequest) -> Result<CheckResult, TargetError> {
        self.client.check(check)
    }
}

impl WorkerSession {
    /// The client of the Worker this session started.
    pub fn client(&self) -> &WorkerClient {
        &self.client
    }

    pub fn local(
        paths: &Paths,
        tools: &Toolchain,
        sample_heap: Option<HeapSampling>,
        worker: WorkerKind,
        target: TargetKind,
    ) -> Result<Self> {
        let (local, client, health) = LocalWorker::start(paths, tools, worker)?;
        let client = match target {
            TargetKind::Do => client.through_durable_object(),
            _ => client,
        };
        let mut session = WorkerSession::new(Host::Local(local), client, health);
        session.sample_heap = sample_heap;
        session.worker = worker;
        Ok(session)
    }

    pub fn remote(
        paths: &Paths,
        tools: &Toolchain,
        options: &remote::Options,
        warnings: &[String],
        target: TargetKind,
    ) -> Result<Self> {
        let (host, client, health) = RemoteHost::start(paths, tools, options, warnings)?;
        let client = match target {
            TargetKind::RemoteDo => client.through_durable_object(),
            _ => client,
        };
        Ok(WorkerSession::new(
            Host::Remote(Box::new(host)),
            client,
            health,
        ))
    }

    fn new(host: Host, client: WorkerClient, health: Health) -> Self {
        WorkerSession {
            host,
            client,
            health,
            served: Arc::default(),
            heap_peak_bytes: None,
            heap_warned: false,
            sample_heap: None,
            worker: WorkerKind::Rust,
        }
    }

    /// Runs the measured request of probe or rung `id`; locally, with the isolate's heap sampled
    /// while it runs when the run samples that id.
    fn measured<T>(&mut self, id: u64, request: impl FnOnce(&WorkerClient) -> T) -> T {
        self.heap_peak_bytes = None;
        let Host::Local(worker) = &mut self.host else {
            return request(&self.client);
        };
        if !self.sample_heap.is_some_and(|s| s.samples(id)) {
            return request(&self.client);
        }
        let client = &self.client;
        let (answer, peak) = worker.sampled(|| request(client));
        match peak {
            Ok(peak) if peak.samples > 0 => self.heap_peak_bytes = Some(peak.isolate_bytes),
            Ok(_) => {}
            Err(e) if !self.heap_warned => {
                self.heap_warned = true;
                eprintln!(
                    "warning: the isolate's heap was not sampled ({e:#}); its column stays empty \
                     where this happens"
                );
            }
            Err(_) => {}
        }
        answer
    }

    fn remote_record(&self) -> Option<remote::RemoteRecord> {
        match &self.host {
            Host::Local(_) => None,
            Host::Remote(host) => {
                let mut record = host.record.clone();
                let served = self.served.lock().unwrap_or_else(|e| e.into_inner());
                record.served_by_region = served.regions.iter().cloned().collect();
                record.served_by_colo = served.colos.iter().cloned().collect();
                Some(record)
            }
        }
    }
}

impl Target for WorkerSession {
    fn target(&self) -> TargetKind {
        match self.host {
            Host::Local(_) if self.client.through_do() => TargetKind::Do,
            Host::Local(_) => TargetKind::Local,
            Host::Remote(_) if self.client.through_do() => TargetKind::RemoteDo,
            Host::Remote(_) => TargetKind::Remote,
        }
    }

    /// The Durable Object has no clock of its own that the Worker reports.
    fn has_d1_clock(&self) -> bool {
        !self.client.through_do()
    }

    fn worker(&self) -> Option<WorkerKind> {
        Some(self.worker)
    }

    fn isolate_heap_peak_bytes(&self) -> Option<u64> {
        self.heap_peak_bytes
    }

    fn recover(&mut self) -> Result<(), TargetError> {
        let started = Instant::now();
        loop {
            if crate::procs::interrupted() {
                return Err(TargetError::Interrupted);
            }
            if let Host::Local(worker) = &mut self.host {
                worker
                    .check_alive()
                    .map_err(|e| TargetError::Died(format!("{e:#}")))?;
            }
            match self.client.health() {
                Ok(_) => return Ok(()),
                Err(e) if started.elapsed() > RECOVERY_TIMEOUT => {
                    let mut why = format!("{e:#}");
                    if let Host::Local(worker) = &self.host {
                        why.push_str(&format!("; {}", worker.wedged()));
                    }
                    return Err(TargetError::StoppedAnswering {
                        waited: started.elapsed(),
                        why,
                    });
                }
                Err(_) => std::thread::sleep(Duration::from_millis(250)),
            }
        }
    }

    fn describe(&self) -> Described {
        Described {
            worker: format!("{} {}", self.health.name, self.health.version),
            remote: self.remote_record(),
        }
    }

    fn close(self: Box<Self>) -> (Described, Result<()>) {
        let mut described = self.describe();
        let result = match self.host {
            Host::Local(worker) => {
                worker.stop();
                Ok(())
            }
            Host::Remote(host) => {
                let (teardown, result) = host.teardown();
                if let Some(remote) = &mut described.remote {
                    remote.teardown = teardown;
                }
                result
            }
        };
        (described, result)
    }
}

impl Probes for WorkerSession {
    fn setup(&mut self, probe: &ProbeRequest) -> Result<SetupResult, TargetError> {
        self.client.setup(probe)
    }

    fn probe(&mut self, probe: &ProbeRequest) -> Timed<ProbeResult> {
        self.measured(probe.probe_id, |client| client.probe(probe))
    }

    fn orm_probe(&mut self, probe: &ProbeRequest, orm: crate::base::OrmWrite) -> Timed<OrmAnswer> {
        if self.worker().is_none_or(|w| !w.runs_orms()) {
            return Timed {
                outside_ms: 0.0,
                result: Err(TargetError::InProcess(format!(
                    "the {} Worker runs no ORM: {orm}'s probes need `--worker js-orm`",
                    self.worker().map_or("Rust".into(), |w| w.to_string())
                ))),
            };
        }
        self.measured(probe.probe_id, |client| client.orm_probe(probe, orm))
    }

    fn verify(&mut self, probe: &ProbeRequest) -> Result<VerifyResult, TargetError> {
        let verified = self.client.verify(probe);
        if let Ok(verified) = &verified {
            self.served
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .note(verified.served_by.as_ref());
        }
        verified
    }
}

impl Rungs for WorkerSession {
    fn rung_prepare(&mut self, rung: &RungRequest) -> Result<PrepareResult, TargetError> {
        self.client.rung(Step::Prepare, rung).result
    }

    fn rung_climb(&mut self, rung: &RungRequest) -> Timed<RungResult> {
        self.measured(rung.rung_id, |client| client.rung(Step::Climb, rung))
    }

    fn rung_finish(&mut self, rung: &RungRequest) -> Result<FinishResult, TargetError> {
        self.client.rung(Step::Finish, rung).result
    }
}

impl Workloads for WorkerSession {
    fn workload(
        &mut self,
    ) -> Result<std::sync::Arc<dyn super::workload::WorkloadClient>, TargetError> {
        Ok(Arc::new(NotingClient {
            client: self.client.clone(),
            served: Arc::clone(&self.served),
        }))
    }
    fn process_group(&self) -> Option<i32> {
        match &self.host {
            Host::Local(local) => Some(local.pgid()),
            Host::Remote(_) => None,
        }
    }

    fn rest_writes(&mut self) -> Option<Arc<remote::rest::RestClient>> {
        match &self.host {
            Host::Remote(host) => Some(Arc::clone(&host.rest)),
            Host::Local(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn served_by_is_collected_over_the_verifications() {
        let mut seen = ServedSeen::default();
        let mut verified: VerifyResult = serde_json::from_str(
            r#"{"probe_id":1,"table_exists":true,"rows_present":1,"checksum":null}"#,
        )
        .unwrap();
        seen.note(verified.served_by.as_ref());
        for (region, colo) in [("WEUR", "AMS"), ("WEUR", "FRA")] {
            verified.served_by =
                d1bench_core::ServedBy::reported(Some(region.into()), Some(colo.into()), None);
            seen.note(verified.served_by.as_ref());
        }
        assert_eq!(seen.regions.into_iter().collect::<Vec<_>>(), ["WEUR"]);
        assert_eq!(seen.colos.into_iter().collect::<Vec<_>>(), ["AMS", "FRA"]);
    }
}
