//! The time a run spends inside its target's calls: a [`Session`] that passes every call on and
//! times it from the outside, so that a run's wall time splits into the target's share and the
//! harness's own (reconciling each probe against its plan and expected checksum, CSV, progress).

use std::time::{Duration, Instant};

use d1bench_core::ladder::{FinishResult, PrepareResult, RungRequest, RungResult};
use d1bench_core::{ProbeRequest, ProbeResult, SetupResult, VerifyResult};

use crate::base::TargetKind;
use crate::targets::{Described, Probes, Rungs, Session, Target, TargetError, Timed, Workloads};

/// A session whose setup, probe, verify and rung calls are each timed around the call.
/// Waiting for a target to answer again ([`Session::recover`]) is not a call: it is left out.
pub struct Clocked {
    inner: Box<dyn Session>,
    calls: usize,
    inside: Duration,
}

impl Clocked {
    pub fn new(inner: Box<dyn Session>) -> Self {
        Clocked {
            inner,
            calls: 0,
            inside: Duration::ZERO,
        }
    }

    /// Calls made so far.
    pub fn calls(&self) -> usize {
        self.calls
    }

    /// Milliseconds spent inside those calls.
    pub fn inside_ms(&self) -> f64 {
        self.inside.as_secs_f64() * 1000.0
    }

    /// The session, to close it.
    pub fn into_inner(self) -> Box<dyn Session> {
        self.inner
    }

    fn time<T>(&mut self, call: impl FnOnce(&mut dyn Session) -> T) -> T {
        let started = Instant::now();
        let answer = call(self.inner.as_mut());
        self.inside += started.elapsed();
        self.calls += 1;
        answer
    }
}

impl Target for Clocked {
    fn target(&self) -> TargetKind {
        self.inner.target()
    }

    fn has_d1_clock(&self) -> bool {
        self.inner.has_d1_clock()
    }

    fn calls_ms(&self) -> Option<f64> {
        Some(self.inside_ms())
    }

    fn worker(&self) -> Option<crate::base::WorkerKind> {
        self.inner.worker()
    }

    fn use_worker(&mut self, worker: crate::base::WorkerKind) -> Result<(), TargetError> {
        self.inner.use_worker(worker)
    }

    fn isolate_heap_peak_bytes(&self) -> Option<u64> {
        self.inner.isolate_heap_peak_bytes()
    }

    fn recover(&mut self) -> Result<(), TargetError> {
        self.inner.recover()
    }

    fn describe(&self) -> Described {
        self.inner.describe()
    }

    fn close(self: Box<Self>) -> (Described, anyhow::Result<()>) {
        self.inner.close()
    }
}

impl Probes for Clocked {
    fn setup(&mut self, probe: &ProbeRequest) -> Result<SetupResult, TargetError> {
        self.time(|s| s.setup(probe))
    }

    fn probe(&mut self, probe: &ProbeRequest) -> Timed<ProbeResult> {
        self.time(|s| s.probe(probe))
    }

    fn verify(&mut self, probe: &ProbeRequest) -> Result<VerifyResult, TargetError> {
        self.time(|s| s.verify(probe))
    }

    fn orm_probe(
        &mut self,
        probe: &ProbeRequest,
        orm: crate::base::OrmWrite,
    ) -> crate::targets::Timed<crate::targets::OrmAnswer> {
        self.time(|s| s.orm_probe(probe, orm))
    }
}

impl Rungs for Clocked {
    fn rung_prepare(&mut self, rung: &RungRequest) -> Result<PrepareResult, TargetError> {
        self.time(|s| s.rung_prepare(rung))
    }

    fn rung_climb(&mut self, rung: &RungRequest) -> Timed<RungResult> {
        self.time(|s| s.rung_climb(rung))
    }

    fn rung_finish(&mut self, rung: &RungRequest) -> Result<FinishResult, TargetError> {
        self.time(|s| s.rung_finish(rung))
    }
}

impl Workloads for Clocked {
    fn workload(
        &mut self,
    ) -> Result<std::sync::Arc<dyn crate::targets::workload::WorkloadClient>, TargetError> {
        self.inner.workload()
    }

    fn rest_writes(&mut self) -> Option<std::sync::Arc<crate::targets::remote::rest::RestClient>> {
        self.inner.rest_writes()
    }

    fn process_group(&self) -> Option<i32> {
        self.inner.process_group()
    }

    fn rendezvous(&self) -> Option<std::sync::Arc<crate::targets::joined::rendezvous::Rendezvous>> {
        self.inner.rendezvous()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::targets::sqlite::SqliteSession;
    use d1bench_core::{Strategy, TextMix};

    #[test]
    fn every_call_is_counted_and_its_time_is_inside_the_wall_time() {
        let probe = ProbeRequest {
            probe_id: 1,
            strategy: Strategy::Bound,
            columns: 4,
            rows: 2_000,
            row_bytes: 200,
            seed: 1,
            rows_per_statement: None,
            json_payload_bytes: None,
            text: TextMix::default(),
            indexes: 0,
            debug_corrupt: None,
            debug_slow_percent: None,
        };
        let mut clocked = Clocked::new(Box::new(SqliteSession::open().unwrap()));
        let wall = Instant::now();
        clocked.setup(&probe).unwrap();
        let written = clocked.probe(&probe);
        let verified = clocked.verify(&probe).unwrap();
        let wall_ms = wall.elapsed().as_secs_f64() * 1000.0;
        assert_eq!(verified.rows_present, 2_000);
        assert_eq!(clocked.calls(), 3);
        // The writes alone are inside the calls, and the calls inside the wall time.
        let inside = clocked.inside_ms();
        assert_eq!(clocked.calls_ms(), Some(inside));
        assert!(
            inside >= written.outside_ms,
            "{inside} < {}",
            written.outside_ms
        );
        assert!(inside <= wall_ms, "{inside} > {wall_ms}");
        clocked.recover().unwrap();
        assert_eq!(clocked.calls(), 3, "waiting for the target is not a call");
        let (_, closed) = clocked.into_inner().close();
        closed.unwrap();
    }

    #[test]
    fn each_probe_of_a_sweep_records_the_time_inside_its_own_calls() {
        let experiment = crate::studies::sweep::SweepStudy::parse(
            "t",
            std::path::Path::new("t.toml"),
            "description = \"d\"\nx-axis = \"columns\"\n[profile.full]\nrepeats = 2\n\
             [[profile.full.series]]\nstrategies = [\"bound\", \"per-row\"]\ncolumns = [4]\n\
             row-bytes = [100]\nrows = 50\n"
                .into(),
        )
        .unwrap();
        let (_, profile) = experiment.profile(None).unwrap();
        let plan = experiment.plan(profile);
        let none = std::collections::HashSet::new();
        let clock = std::time::Instant::now();
        let dir = tempfile::tempdir().unwrap();
        let run_dir = crate::records::RunDir::new(dir.path().to_owned());
        let mut clocked = Clocked::new(Box::new(SqliteSession::open().unwrap()));
        crate::studies::sweep::measure::measure(
            &mut clocked,
            "t",
            &plan,
            0,
            &none,
            &run_dir,
            clock,
        )
        .unwrap();
        let rows: Vec<crate::studies::sweep::row::ProbeRow> =
            crate::records::csv::read(&run_dir.results_csv()).unwrap();
        assert_eq!(rows.len(), 4);
        let mut sum = 0.0;
        for row in &rows {
            let calls_ms = row.calls_ms.unwrap();
            assert!(calls_ms >= row.outside_ms, "{row:?}");
            sum += calls_ms;
        }
        assert!(
            (sum - clocked.inside_ms()).abs() < 1e-6,
            "{sum} ≠ {}",
            clocked.inside_ms()
        );
        assert_eq!(clocked.calls(), 12, "setup, probe and verify of each probe");
        // A session that does not time its calls leaves the column empty.
        let mut bare = SqliteSession::open().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let run_dir = crate::records::RunDir::new(dir.path().to_owned());
        // The first probe only: the others skipped.
        let rest = plan.probes()[1..]
            .iter()
            .map(|p| p.request.probe_id)
            .collect();
        crate::studies::sweep::measure::measure(&mut bare, "t", &plan, 0, &rest, &run_dir, clock)
            .unwrap();
        let rows: Vec<crate::studies::sweep::row::ProbeRow> =
            crate::records::csv::read(&run_dir.results_csv()).unwrap();
        assert_eq!(rows[0].calls_ms, None);
    }
}
