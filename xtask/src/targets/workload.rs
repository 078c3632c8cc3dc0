//! What a workload needs of a target: a [`WorkloadClient`] that the load generator's threads
//! share, to seed, index, load and check the workload's table; here for the Worker (local and
//! remote, over HTTP), in [`super::sqlite::workload`] for in-process SQLite. A session hands one
//! out ([`super::Session::workload`]).

use d1bench_core::Outcome;
use d1bench_core::workload::{
    CheckRequest, CheckResult, IndexKind, IndexRequest, OpRequest, OpResult, SeedRequest,
    SeedResult,
};

use super::TargetError;
use super::http::{Timed, WorkerClient};

/// A target's workload calls, shared by the load generator's threads. Every [`TargetError`] and
/// every `Timed` without a result is the target failing to answer; D1's and SQLite's errors
/// are data inside the answers.
pub trait WorkloadClient: Send + Sync {
    /// Creates the table (when asked) and writes one batch of its rows.
    fn seed(&self, seed: &SeedRequest) -> Result<SeedResult, TargetError>;
    /// Leaves exactly these secondary indexes on the table.
    fn index(&self, indexes: &[IndexKind]) -> Result<(), TargetError>;
    /// One operation, timed from the outside around the whole exchange.
    fn op(&self, op: &OpRequest) -> Timed<OpResult>;
    /// Counts, sums and checksums the table (and drops it, when asked).
    fn check(&self, check: &CheckRequest) -> Result<CheckResult, TargetError>;
}

impl WorkloadClient for WorkerClient {
    fn seed(&self, seed: &SeedRequest) -> Result<SeedResult, TargetError> {
        self.workload("/workload/seed", seed).result
    }
    fn index(&self, indexes: &[IndexKind]) -> Result<(), TargetError> {
        let request = IndexRequest {
            indexes: indexes.to_vec(),
        };
        self.workload::<serde_json::Value>("/workload/index", &request)
            .result
            .map(drop)
    }
    fn op(&self, op: &OpRequest) -> Timed<OpResult> {
        self.workload("/workload/op", op)
    }
    fn check(&self, check: &CheckRequest) -> Result<CheckResult, TargetError> {
        self.workload_check(check).result
    }
}

/// An [`OpResult`] saying the operation never reached the target (a failure of the target).
pub fn no_answer(error: String) -> OpResult {
    OpResult {
        outcome: Outcome::Error,
        refusal: None,
        error: Some(error),
        rows_returned: 0,
        changes: 0,
        inside_ms: 0.0,
        d1_ms: None,
        rows_read: None,
        rows_written: None,
        d1_attempts: None,
        sql_duration_ms: None,
        served_by: None,
        cache: None,
        version: None,
        worker_colo: None,
        session_bookmark: None,
    }
}
