//! The Worker as a session, wherever it runs: `wrangler dev` on this machine ([`super::local`])
//! or deployed to Cloudflare ([`super::remote`]); either way every probe and rung goes over HTTP
//! ([`super::http`]) to its own invocation.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use anyhow::Result;
use d1bench_core::ladder::{FinishResult, PrepareResult, RungRequest, RungResult, Step};
use d1bench_core::{ProbeRequest, ProbeResult, SetupResult, VerifyResult};

use super::http::{Health, Timed, WorkerClient};
use super::local::LocalWorker;
use super::remote::{self, RemoteHost};
use super::{Described, Session};
use crate::flags::TargetKind;
use crate::paths::Paths;
use crate::toolchain::Toolchain;

/// How long a target that failed to answer may take to answer `/health` again.
const RECOVERY_TIMEOUT: Duration = Duration::from_secs(60);

/// What keeps the Worker running, and stops it when closed or dropped.
enum Host {
    Local(LocalWorker),
    Remote(RemoteHost),
}

pub struct WorkerSession {
    host: Host,
    client: WorkerClient,
    health: Health,
    served: ServedSeen,
}

/// Every `served_by_region` and `served_by_colo` D1 reported so far.
#[derive(Debug, Default)]
struct ServedSeen {
    regions: BTreeSet<String>,
    colos: BTreeSet<String>,
}

impl ServedSeen {
    fn note(&mut self, verified: &VerifyResult) {
        if let Some(served) = &verified.served_by {
            self.regions.extend(served.region.clone());
            self.colos.extend(served.colo.clone());
        }
    }
}

impl WorkerSession {
    pub fn local(paths: &Paths, tools: &Toolchain) -> Result<Self> {
        let (worker, client, health) = LocalWorker::start(paths, tools)?;
        Ok(WorkerSession::new(Host::Local(worker), client, health))
    }

    pub fn remote(
        paths: &Paths,
        tools: &Toolchain,
        options: &remote::Options,
        warnings: &[String],
    ) -> Result<Self> {
        let (host, client, health) = RemoteHost::start(paths, tools, options, warnings)?;
        Ok(WorkerSession::new(Host::Remote(host), client, health))
    }

    fn new(host: Host, client: WorkerClient, health: Health) -> Self {
        WorkerSession {
            host,
            client,
            health,
            served: ServedSeen::default(),
        }
    }

    fn remote_record(&self) -> Option<remote::RemoteRecord> {
        match &self.host {
            Host::Local(_) => None,
            Host::Remote(host) => {
                let mut record = host.record.clone();
                record.served_by_region = self.served.regions.iter().cloned().collect();
                record.served_by_colo = self.served.colos.iter().cloned().collect();
                Some(record)
            }
        }
    }
}

impl Session for WorkerSession {
    fn target(&self) -> TargetKind {
        match self.host {
            Host::Local(_) => TargetKind::Local,
            Host::Remote(_) => TargetKind::Remote,
        }
    }

    fn has_d1_clock(&self) -> bool {
        true
    }

    fn setup(&mut self, probe: &ProbeRequest) -> Result<SetupResult, String> {
        self.client.setup(probe)
    }

    fn probe(&mut self, probe: &ProbeRequest) -> Timed<ProbeResult> {
        self.client.probe(probe)
    }

    fn verify(&mut self, probe: &ProbeRequest) -> Result<VerifyResult, String> {
        let verified = self.client.verify(probe);
        if let Ok(verified) = &verified {
            self.served.note(verified);
        }
        verified
    }

    fn rung_prepare(&mut self, rung: &RungRequest) -> Result<PrepareResult, String> {
        self.client.rung(Step::Prepare, rung).result
    }

    fn rung_climb(&mut self, rung: &RungRequest) -> Timed<RungResult> {
        self.client.rung(Step::Climb, rung)
    }

    fn rung_finish(&mut self, rung: &RungRequest) -> Result<FinishResult, String> {
        self.client.rung(Step::Finish, rung).result
    }

    fn workload(&mut self) -> Result<std::sync::Arc<dyn super::workload::WorkloadClient>, String> {
        Ok(std::sync::Arc::new(self.client.clone()))
    }

    fn recover(&mut self) -> Result<(), String> {
        let started = Instant::now();
        loop {
            if crate::procs::interrupted() {
                return Err("interrupted".into());
            }
            if let Host::Local(worker) = &mut self.host {
                worker.check_alive().map_err(|e| format!("{e:#}"))?;
            }
            match self.client.health() {
                Ok(_) => return Ok(()),
                Err(e) if started.elapsed() > RECOVERY_TIMEOUT => {
                    let mut why = format!(
                        "the target did not answer again within {:.0?}: {e:#}",
                        started.elapsed()
                    );
                    if let Host::Local(worker) = &self.host {
                        why.push_str(&format!("; {}", worker.wedged()));
                    }
                    return Err(why);
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
        seen.note(&verified);
        for (region, colo) in [("WEUR", "AMS"), ("WEUR", "FRA")] {
            verified.served_by = Some(d1bench_core::ServedBy {
                region: Some(region.into()),
                colo: Some(colo.into()),
            });
            seen.note(&verified);
        }
        assert_eq!(seen.regions.into_iter().collect::<Vec<_>>(), ["WEUR"]);
        assert_eq!(seen.colos.into_iter().collect::<Vec<_>>(), ["AMS", "FRA"]);
    }
}
