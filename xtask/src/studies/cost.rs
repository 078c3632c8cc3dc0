//! What a study costs on a Cloudflare account, computed from its plan: Worker requests, D1 rows
//! written and read, the most D1 queries one invocation makes, against the plan's quotas
//! (Cloudflare's published ones). `cargo xtask matrix` prices jobs with it, and a remote run
//! warns with it before it spends anything.

use d1bench_core::limits::{QUERIES_PER_INVOCATION_FREE, QUERIES_PER_INVOCATION_PAID};
use serde::Serialize;

use crate::base::numbers::thousands;
use crate::base::{AccountPlan, TargetKind};

/// D1 queries one Worker invocation may make on `plan`.
pub fn queries_per_invocation(plan: AccountPlan) -> usize {
    match plan {
        AccountPlan::Free => QUERIES_PER_INVOCATION_FREE,
        AccountPlan::Paid => QUERIES_PER_INVOCATION_PAID,
    }
}

/// Calls one invocation may make to Cloudflare's services by the Workers changelog of
/// 2026-02-11 (Paid: 10,000 subrequests by default, up to 10,000,000 with `limits.subrequests`;
/// Free: 1,000), where D1's limits page says [`queries_per_invocation`]; the query-budget ladders
/// climb past both to see which D1 follows.
pub fn subrequests_per_invocation(plan: AccountPlan) -> usize {
    match plan {
        AccountPlan::Free => 1_000,
        AccountPlan::Paid => 10_000,
    }
}

/// Workers Free: requests a day (Workers pricing).
pub const FREE_REQUESTS_PER_DAY: usize = 100_000;
/// D1 on Workers Free: rows read a day (D1 pricing).
pub const FREE_ROWS_READ_PER_DAY: usize = 5_000_000;
/// D1 on Workers Free: rows written a day (D1 pricing).
pub const FREE_ROWS_WRITTEN_PER_DAY: usize = 100_000;
/// Workers Paid: requests included a month, then $0.30 per million.
pub const PAID_REQUESTS_PER_MONTH: usize = 10_000_000;
/// D1 on Workers Paid: rows read included a month, then $0.001 per million.
pub const PAID_ROWS_READ_PER_MONTH: usize = 25_000_000_000;
/// D1 on Workers Paid: rows written included a month, then $1.00 per million.
pub const PAID_ROWS_WRITTEN_PER_MONTH: usize = 50_000_000;

/// Workers KV on Workers Free: reads a day (KV limits).
pub const FREE_KV_READS_PER_DAY: usize = 100_000;
/// Workers KV on Workers Free: writes a day (KV limits).
pub const FREE_KV_WRITES_PER_DAY: usize = 1_000;
/// Workers KV on Workers Paid: reads included a month, then $0.50 per million.
pub const PAID_KV_READS_PER_MONTH: usize = 10_000_000;
/// Workers KV on Workers Paid: writes included a month, then $5.00 per million.
pub const PAID_KV_WRITES_PER_MONTH: usize = 1_000_000;

/// What running a study costs on Cloudflare, at most.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Cost {
    /// Probes (sweeps) or rungs (ladders: at most, as a climb may stop early).
    pub probes: usize,
    /// HTTP requests to the Worker: three per probe or rung (each step is an invocation of its
    /// own) and one health check.
    pub worker_requests: usize,
    /// Rows D1 bills as written when every probe succeeds: each row INSERTed, once more for
    /// every secondary index on its table (D1 counts an index entry as a row written); DDL adds
    /// a few per probe.
    pub rows_written: usize,
    /// Rows read checking each probe: its `COUNT(*)` scans the rows it wrote, and (sweeps) its
    /// content checksum reads each of them several times ([`d1bench_core::checksum::rows_read`]).
    pub rows_read: usize,
    /// Most D1 queries one measured invocation makes.
    pub max_queries_per_invocation: usize,
    /// Probes or rungs making more queries in one invocation than the Free plan allows (50).
    pub probes_over_free_budget: usize,
    /// Probes or rungs making more queries in one invocation than the Paid plan allows (1,000).
    pub probes_over_paid_budget: usize,
    /// Workers KV reads (the cache workload's: one per cached read).
    pub kv_reads: usize,
    /// Workers KV writes, at most (the cache workload's: one per cached read that misses,
    /// priced as if every one did).
    pub kv_writes: usize,
}

/// One measured invocation: its D1 queries, the rows D1 bills as written for it (each row
/// inserted, once more for each secondary index), and the rows read checking them afterwards.
pub struct Invocation {
    pub queries: usize,
    pub rows_written: usize,
    pub reads: usize,
}

impl Cost {
    /// The cost of these invocations (each kind of study lists its own).
    pub fn of_invocations(invocations: Vec<Invocation>) -> Cost {
        let over = |budget: usize| invocations.iter().filter(|i| i.queries > budget).count();
        Cost {
            probes: invocations.len(),
            worker_requests: 3 * invocations.len() + 1,
            rows_written: invocations.iter().map(|i| i.rows_written).sum(),
            rows_read: invocations.iter().map(|i| i.reads).sum(),
            max_queries_per_invocation: invocations.iter().map(|i| i.queries).max().unwrap_or(0),
            probes_over_free_budget: over(queries_per_invocation(AccountPlan::Free)),
            probes_over_paid_budget: over(queries_per_invocation(AccountPlan::Paid)),
            kv_reads: 0,
            kv_writes: 0,
        }
    }

    /// What a run of this plan on `target` with `baseline` bills on Cloudflare, split by what
    /// bills it: D1's part (the Worker requests of every session deployed there, D1's rows and
    /// query budget) and, for a run through a Durable Object, the object's rows (its own SQLite
    /// storage, not D1's quota, and no query budget). A `remote-do` baseline deploys as many
    /// sessions again as the target, so its Worker requests count twice.
    pub fn billed_on(
        self,
        target: TargetKind,
        baseline: Option<TargetKind>,
    ) -> (Cost, Option<Cost>) {
        let requests_only = Cost {
            probes: self.probes,
            worker_requests: self.worker_requests,
            ..Cost::default()
        };
        match (target, baseline) {
            (TargetKind::RemoteDo, _) => (requests_only, Some(self)),
            (_, Some(TargetKind::RemoteDo)) => (
                Cost {
                    worker_requests: 2 * self.worker_requests,
                    ..self
                },
                Some(self),
            ),
            _ => (self, None),
        }
    }

    /// What a person should know before running this on an account with `plan`.
    pub fn warnings(&self, plan: AccountPlan) -> Vec<String> {
        let mut warnings = Vec::new();
        let over = match plan {
            AccountPlan::Free => self.probes_over_free_budget,
            AccountPlan::Paid => self.probes_over_paid_budget,
        };
        if over > 0 {
            warnings.push(format!(
                "{over} probe(s) make more than the {} plan's {} D1 queries per invocation: \
                 production refuses them (that refusal is what they measure)",
                plan.name(),
                queries_per_invocation(plan)
            ));
        }
        if plan == AccountPlan::Free {
            for (what, used, quota) in [
                ("rows written", self.rows_written, FREE_ROWS_WRITTEN_PER_DAY),
                ("rows read", self.rows_read, FREE_ROWS_READ_PER_DAY),
                (
                    "Worker requests",
                    self.worker_requests,
                    FREE_REQUESTS_PER_DAY,
                ),
                ("Workers KV reads", self.kv_reads, FREE_KV_READS_PER_DAY),
                ("Workers KV writes", self.kv_writes, FREE_KV_WRITES_PER_DAY),
            ] {
                if used > quota {
                    warnings.push(format!(
                        "up to {} {what}: more than the Free plan's {} a day, so D1, KV or \
                         Workers start refusing part-way (try --profile smoke, or --plan paid on \
                         a Paid account)",
                        thousands(used),
                        thousands(quota)
                    ));
                }
            }
        }
        warnings
    }
}
