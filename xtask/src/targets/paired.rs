//! Two Workers in one session (`--paired-workers`): the Rust Worker and a JavaScript one, each
//! its own `wrangler dev` with its own local D1, started together and stopped together. Every
//! call goes to the Worker the last [`Target::use_worker`] named, so a sweep sends each point's
//! probe to both back to back and Rust ÷ JavaScript is a ratio within one session, which the
//! drift between sessions (a fresh workerd, the machine's speed that hour) cannot move.

use anyhow::Result;
use d1bench_core::ladder::{FinishResult, PrepareResult, RungRequest, RungResult};
use d1bench_core::{ProbeRequest, ProbeResult, SetupResult, VerifyResult};

use super::{
    Described, OrmAnswer, Probes, Rungs, Session, Target, TargetError, Timed, Workloads, remote,
    workload,
};
use crate::base::{OrmWrite, TargetKind, WorkerKind};

/// The two sessions, and which one the calls go to.
pub struct PairedWorkers {
    sessions: Vec<(WorkerKind, Box<dyn Session>)>,
    current: usize,
}

impl PairedWorkers {
    /// Starts a session of each of `workers` with `open`, in order; one that fails to start
    /// stops those started before it (their drop) and is the error.
    pub fn open(
        workers: [WorkerKind; 2],
        mut open: impl FnMut(WorkerKind) -> Result<Box<dyn Session>>,
    ) -> Result<PairedWorkers> {
        let mut sessions = Vec::new();
        for worker in workers {
            sessions.push((worker, open(worker)?));
        }
        Ok(PairedWorkers {
            sessions,
            current: 0,
        })
    }

    fn now(&self) -> &dyn Session {
        self.sessions[self.current].1.as_ref()
    }

    fn now_mut(&mut self) -> &mut dyn Session {
        self.sessions[self.current].1.as_mut()
    }
}

impl Target for PairedWorkers {
    fn target(&self) -> TargetKind {
        self.now().target()
    }

    fn has_d1_clock(&self) -> bool {
        self.now().has_d1_clock()
    }

    fn worker(&self) -> Option<WorkerKind> {
        Some(self.sessions[self.current].0)
    }

    fn use_worker(&mut self, worker: WorkerKind) -> Result<(), TargetError> {
        match self.sessions.iter().position(|(w, _)| *w == worker) {
            Some(at) => {
                self.current = at;
                Ok(())
            }
            None => Err(TargetError::InProcess(format!(
                "this session pairs the {} and the {} Worker, not the {worker} Worker",
                self.sessions[0].0, self.sessions[1].0
            ))),
        }
    }

    fn isolate_heap_peak_bytes(&self) -> Option<u64> {
        self.now().isolate_heap_peak_bytes()
    }

    /// Waits until both Workers answer: the one that failed may have taken the machine with it.
    fn recover(&mut self) -> Result<(), TargetError> {
        for (_, session) in &mut self.sessions {
            session.recover()?;
        }
        Ok(())
    }

    /// Each Worker's description, joined: `rust: …; js: …`.
    fn describe(&self) -> Described {
        let worker = self
            .sessions
            .iter()
            .map(|(w, s)| format!("{w}: {}", s.describe().worker))
            .collect::<Vec<_>>()
            .join("; ");
        Described {
            worker,
            remote: None,
        }
    }

    /// Stops both, the second even when the first failed to stop; the first failure is the
    /// error, with the second's beside it.
    fn close(self: Box<Self>) -> (Described, Result<()>) {
        let described = self.describe();
        let mut failed: Vec<String> = Vec::new();
        for (worker, session) in self.sessions {
            if let (_, Err(e)) = session.close() {
                failed.push(format!("the {worker} Worker's: {e:#}"));
            }
        }
        let result = match failed.is_empty() {
            true => Ok(()),
            false => Err(anyhow::anyhow!(
                "stopping the paired Workers failed: {}",
                failed.join("; ")
            )),
        };
        (described, result)
    }
}

impl Probes for PairedWorkers {
    fn setup(&mut self, probe: &ProbeRequest) -> Result<SetupResult, TargetError> {
        self.now_mut().setup(probe)
    }

    fn probe(&mut self, probe: &ProbeRequest) -> Timed<ProbeResult> {
        self.now_mut().probe(probe)
    }

    fn verify(&mut self, probe: &ProbeRequest) -> Result<VerifyResult, TargetError> {
        self.now_mut().verify(probe)
    }

    fn orm_probe(&mut self, probe: &ProbeRequest, orm: OrmWrite) -> Timed<OrmAnswer> {
        self.now_mut().orm_probe(probe, orm)
    }
}

impl Rungs for PairedWorkers {
    fn rung_prepare(&mut self, rung: &RungRequest) -> Result<PrepareResult, TargetError> {
        self.now_mut().rung_prepare(rung)
    }

    fn rung_climb(&mut self, rung: &RungRequest) -> Timed<RungResult> {
        self.now_mut().rung_climb(rung)
    }

    fn rung_finish(&mut self, rung: &RungRequest) -> Result<FinishResult, TargetError> {
        self.now_mut().rung_finish(rung)
    }
}

impl Workloads for PairedWorkers {
    fn workload(&mut self) -> Result<std::sync::Arc<dyn workload::WorkloadClient>, TargetError> {
        self.now_mut().workload()
    }

    fn process_group(&self) -> Option<i32> {
        self.now().process_group()
    }

    fn rest_writes(&mut self) -> Option<std::sync::Arc<remote::rest::RestClient>> {
        self.now_mut().rest_writes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::targets::sqlite::SqliteSession;

    /// Two in-process sessions stand in for the Workers: what is tested is the routing.
    fn pair() -> PairedWorkers {
        PairedWorkers::open([WorkerKind::Rust, WorkerKind::Js], |_| {
            Ok(Box::new(SqliteSession::open()?) as Box<dyn Session>)
        })
        .unwrap()
    }

    #[test]
    fn calls_go_to_the_worker_named_last_and_another_is_refused() {
        let mut paired = pair();
        assert_eq!(paired.worker(), Some(WorkerKind::Rust));
        paired.use_worker(WorkerKind::Js).unwrap();
        assert_eq!(paired.worker(), Some(WorkerKind::Js));
        let err = paired.use_worker(WorkerKind::JsMinimal).unwrap_err();
        assert!(
            err.to_string().contains("pairs the rust and the js Worker"),
            "{err}"
        );
        // A refusal leaves the calls where they were.
        assert_eq!(paired.worker(), Some(WorkerKind::Js));
        let (described, closed) = Box::new(paired).close();
        closed.unwrap();
        assert!(
            described.worker.starts_with("rust: "),
            "{}",
            described.worker
        );
        assert!(described.worker.contains("; js: "), "{}", described.worker);
    }

    #[test]
    fn a_worker_that_fails_to_start_is_the_error() {
        let mut started = 0;
        let err = PairedWorkers::open([WorkerKind::Rust, WorkerKind::Js], |w| {
            started += 1;
            match w {
                WorkerKind::Js => anyhow::bail!("no node"),
                _ => Ok(Box::new(SqliteSession::open()?) as Box<dyn Session>),
            }
        })
        .err()
        .unwrap();
        assert_eq!(started, 2);
        assert_eq!(err.to_string(), "no node");
    }

    #[test]
    fn a_session_of_one_runs_only_its_own_worker() {
        let mut sqlite = SqliteSession::open().unwrap();
        let err = sqlite.use_worker(WorkerKind::Rust).unwrap_err();
        assert!(err.to_string().contains("runs sqlite"), "{err}");
    }
}
