//! Workload files (`experiments/<name>.toml` with a `[table]` and `[[operation]]`s): their
//! schema, their validation with `file:line:column` errors, and the plan a run follows: the
//! table's sizes (seeded once each, growing), then at each size every index, preparation and
//! D1 session, operation (when they run apart) and rate, each a [`LoadPoint`] under open-loop
//! load.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow};
use d1bench_core::limits::MAX_DATABASE_BYTES;
use d1bench_core::workload::{
    FIRST_WRITE_ID, IndexKind, MAX_OPERATION_ROWS, Operation, Preparation, SessionMode, TableSpec,
};
use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::files::{NonEmpty, Profiles, located};

mod cache;
pub mod kind;
pub mod measure;
pub mod path;
mod plan;
pub mod report;
pub mod retry;
pub mod row;
mod session;
pub mod shard;
pub use path::{PathChoice, WritePath};
pub use plan::{Arm, CALIBRATION_PER_ARM, LoadPoint, PlannedOp, WorkloadPlan};
use retry::RetryDecl;
pub use retry::{RetryKind, RetryPolicy};

/// Most requests per second one process is asked to offer: the scheduler sleeps to each
/// request's start (Linux wakes it within about 0.1 ms) and hands it to one of at most
/// [`MAX_IN_FLIGHT`] threads, so beyond this the generator's own lag would be what is measured.
/// A plan asking more runs in shards (`--shard K/N`), each offering its share.
pub const MAX_RATE: f64 = 2_000.0;

/// Most requests per second a profile may ask for: [`MAX_RATE`] in each of the most shards.
pub const MAX_PLANNED_RATE: f64 = MAX_RATE * crate::records::shard::MAX_SHARDS as f64;

/// Most requests in flight at once (threads of the load generator).
pub const MAX_IN_FLIGHT: usize = 256;

/// Most requests one point may send (rate × (duration + warm-up)).
pub const MAX_REQUESTS_PER_POINT: f64 = 1_000_000.0;

/// Bytes a row takes in D1 beyond its payload, for the size check: the row header, `id` and
/// `k`, and each secondary index's entry (an upper bound, so the check refuses early).
const ROW_OVERHEAD_BYTES: usize = 64;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct WorkloadFile {
    /// One line saying what the workload measures (shown by `cargo xtask list`).
    pub description: String,
    pub table: Spanned<TableDecl>,
    /// `weighted`: the operations interleave by weight; `each-alone`: each runs on its own;
    /// `interleaved`: all in every point, with equal shares of the rate.
    #[serde(default)]
    pub mix: Mix,
    pub operation: NonEmpty<Spanned<OperationDecl>>,
    /// Retry policies: every point runs under each in turn (default: none, one attempt).
    #[serde(default)]
    pub retry: Vec<Spanned<RetryDecl>>,
    #[serde(default)]
    pub default_profile: Option<Spanned<String>>,
    pub profile: BTreeMap<String, WorkloadProfile>,
}

/// How the operations share the load.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mix {
    /// One load per point, each request's operation drawn by weight (weights sum to 100).
    #[default]
    Weighted,
    /// Each operation its own points, alone at every rate (no weights).
    EachAlone,
    /// Every operation in every point, each request's drawn at random, the rate split equally
    /// between them (in rows, with `rate-unit = "rows"`): what compares single writes with
    /// batches under the same load and the same drift.
    Interleaved,
}

/// What a profile's rates count.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RateUnit {
    #[default]
    Requests,
    /// Rows touched per second: an operation of N rows runs at rate ÷ N requests per second.
    Rows,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct TableDecl {
    /// Generator columns besides `id` and `k` (text, text, integer, repeating); at least 3.
    pub columns: usize,
    /// Payload bytes of those columns in every row.
    pub row_bytes: usize,
    /// Groups of `k` (row `id` is in group `id % groups`): what the aggregate filters on.
    #[serde(default = "default_groups")]
    pub groups: u64,
    /// The row generator's seed.
    #[serde(default = "default_seed")]
    pub seed: u64,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct OperationDecl {
    pub kind: Operation,
    /// Percent of the requests (weighted mix only); the weights sum to 100.
    #[serde(default)]
    pub weight: Option<Spanned<u32>>,
    /// Rows a range scan reads or a batched write writes.
    #[serde(default)]
    pub rows: Option<Spanned<usize>>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct WorkloadProfile {
    /// Table sizes in rows, ascending: the table is seeded to each in turn and every point runs
    /// at each.
    pub rows: NonEmpty<Spanned<u64>>,
    /// The secondary index of each series (default `["key"]`).
    #[serde(default)]
    pub indexes: Option<NonEmpty<Spanned<IndexKind>>>,
    /// Prepared statements reused across calls, prepared per call, or both (default `["reuse"]`).
    #[serde(default)]
    pub preparation: Option<NonEmpty<Spanned<Preparation>>>,
    /// How the Worker opens D1 for the reads: the plain binding (`none`, the default) or a
    /// session of the Sessions API (`first-unconstrained`, `first-primary`), each a series. A
    /// session is opened per request, so its series runs with statements prepared `per-call`.
    #[serde(default)]
    pub sessions: Option<NonEmpty<Spanned<SessionMode>>>,
    /// Requests per second (or rows per second, with `rate-unit = "rows"`), each a point of
    /// its own.
    pub rates: NonEmpty<Spanned<f64>>,
    /// What `rates` count: requests (default) or rows, so single and batched writes run at the
    /// same row rate (each-alone mix only).
    #[serde(default)]
    pub rate_unit: Option<Spanned<RateUnit>>,
    /// Seconds each point is measured.
    pub duration_s: Spanned<f64>,
    /// Seconds each point runs before, unmeasured (its requests are recorded as warm-ups).
    #[serde(default)]
    pub warmup_s: Option<Spanned<f64>>,
    /// Seed of the operations drawn and the keys they read.
    #[serde(default = "default_seed")]
    pub order_seed: u64,
    /// Most requests in flight at once; a request that finds none free waits, and that wait
    /// counts in its latency and in the generator's lag.
    #[serde(default = "default_in_flight")]
    pub max_in_flight: Spanned<usize>,
    /// The most utilisation a point may run at (above 0, at most 1): before each point the
    /// arms' service time is measured, one request at a time, and a point whose rate would
    /// keep a single server busier than this runs at the rate that keeps it this busy
    /// (recorded in points.csv). For latency comparisons, below saturation.
    #[serde(default)]
    pub max_utilisation: Option<Spanned<f64>>,
    /// The cache's TTLs in seconds, each a series of its own (workloads with `cached-read`).
    #[serde(default)]
    pub ttls_s: Option<NonEmpty<Spanned<f64>>>,
    /// The rows cached reads and updates pick from, `1..=cache-keys` (default: the table).
    #[serde(default)]
    pub cache_keys: Option<Spanned<u64>>,
    /// Which way the writes go: `binding` (default), `rest` (D1's REST API, remote only) or
    /// `both`, interleaved per request ([`path`]).
    #[serde(default)]
    pub path: Option<Spanned<PathChoice>>,
}

fn default_seed() -> u64 {
    1
}
fn default_groups() -> u64 {
    1_000
}
fn default_in_flight() -> Spanned<usize> {
    Spanned::new(0..0, 64)
}

/// A workload file, loaded and validated.
#[derive(Debug)]
pub struct Workload {
    pub name: String,
    pub path: PathBuf,
    pub source: String,
    pub file: WorkloadFile,
}

/// Whether `path` is a workload file (it declares a `[table]`).
pub fn is_workload_file(path: &Path) -> bool {
    super::files::declares(path, "table")
}

impl Workload {
    pub fn load(dir: &Path, name: &str) -> Result<Self> {
        let (path, source) = super::files::read_study(dir, name)?;
        Self::parse(name, &path, source)
    }

    pub fn parse(name: &str, path: &Path, source: String) -> Result<Self> {
        let file: WorkloadFile = super::files::parse_toml(path, &source)?;
        let workload = Workload {
            name: name.to_owned(),
            path: path.to_owned(),
            source,
            file,
        };
        workload.profiles().check_default()?;
        workload.check()?;
        Ok(workload)
    }

    pub fn profiles(&self) -> Profiles<'_, WorkloadProfile> {
        Profiles {
            path: &self.path,
            source: &self.source,
            profiles: &self.file.profile,
            default: self.file.default_profile.as_ref(),
        }
    }

    /// The profile named (or the default) and its name.
    pub fn profile(&self, name: Option<&str>) -> Result<(&str, &WorkloadProfile)> {
        self.profiles().select(name)
    }

    fn error_at(&self, span: Range<usize>, message: &str) -> anyhow::Error {
        anyhow!(located(&self.path, &self.source, Some(span), message))
    }

    pub fn spec(&self) -> TableSpec {
        let t = self.file.table.get_ref();
        TableSpec {
            columns: t.columns,
            row_bytes: t.row_bytes,
            seed: t.seed,
            groups: t.groups,
        }
    }

    /// Every refusal of the file's content, at the value it is about.
    fn check(&self) -> Result<()> {
        let table = &self.file.table;
        let spec = self.spec();
        spec.check()
            .map_err(|e| self.error_at(table.span(), &format!("this table cannot be used: {e}")))?;
        self.check_operations()?;
        self.retries()?;
        for profile in self.file.profile.values() {
            self.check_profile(profile, &spec)?;
        }
        Ok(())
    }

    fn check_operations(&self) -> Result<()> {
        let ops = &self.file.operation.0;
        let mut seen = BTreeMap::new();
        for op in ops {
            let decl = op.get_ref();
            if seen.insert(decl.kind, op.span()).is_some() {
                return Err(self.error_at(
                    op.span(),
                    &format!(
                        "`{}` is declared twice: declare each operation once",
                        decl.kind
                    ),
                ));
            }
            match (self.file.mix, &decl.weight) {
                (Mix::Weighted, None) => {
                    return Err(self.error_at(
                        op.span(),
                        "a weighted mix needs a `weight` (percent of the requests) on every operation",
                    ));
                }
                (Mix::EachAlone, Some(w)) => {
                    return Err(self.error_at(
                        w.span(),
                        "with `mix = \"each-alone\"` every operation runs alone: remove its weight",
                    ));
                }
                (Mix::Interleaved, Some(w)) => {
                    return Err(self.error_at(
                        w.span(),
                        "with `mix = \"interleaved\"` the operations share the rate equally: \
                         remove its weight",
                    ));
                }
                (Mix::Weighted, Some(w)) if *w.get_ref() == 0 || *w.get_ref() > 100 => {
                    return Err(self.error_at(w.span(), "a weight is a percent from 1 to 100"));
                }
                _ => {}
            }
            let takes_rows = matches!(decl.kind, Operation::RangeScan | Operation::BatchWrite);
            match (&decl.rows, takes_rows) {
                (None, true) => {
                    return Err(self.error_at(
                        op.span(),
                        &format!("`{}` needs `rows`: how many rows it touches", decl.kind),
                    ));
                }
                (Some(r), false) => {
                    return Err(self.error_at(
                        r.span(),
                        &format!("`{}` touches one row: remove `rows`", decl.kind),
                    ));
                }
                (Some(r), true) => {
                    let min = if decl.kind == Operation::BatchWrite {
                        2
                    } else {
                        1
                    };
                    if !(min..=MAX_OPERATION_ROWS).contains(r.get_ref()) {
                        return Err(self.error_at(
                            r.span(),
                            &format!("`{}` touches {min} to {MAX_OPERATION_ROWS} rows", decl.kind),
                        ));
                    }
                }
                (None, false) => {}
            }
        }
        if self.file.mix == Mix::Weighted {
            let sum: u32 = ops
                .iter()
                .filter_map(|o| o.get_ref().weight.as_ref().map(|w| *w.get_ref()))
                .sum();
            if sum != 100 {
                return Err(self.error_at(
                    ops[0].span(),
                    &format!("the operations' weights sum to {sum}, not 100"),
                ));
            }
        }
        Ok(())
    }

    /// The file's retry policies, validated (default: none), each kind at most once.
    pub fn retries(&self) -> Result<Vec<RetryPolicy>> {
        let mut policies: Vec<RetryPolicy> = Vec::new();
        for decl in &self.file.retry {
            let policy = decl
                .get_ref()
                .policy(decl.span())
                .map_err(|(span, message)| self.error_at(span, &message))?;
            if policies.iter().any(|p| p.kind == policy.kind) {
                return Err(self.error_at(
                    decl.span(),
                    &format!("a `{}` retry policy is declared twice", policy.kind),
                ));
            }
            policies.push(policy);
        }
        if policies.is_empty() {
            policies.push(RetryPolicy::NONE);
        }
        Ok(policies)
    }

    /// Requests per second of `op` at `rate` as the profile counts it.
    fn request_rate(profile: &WorkloadProfile, rate: f64, rows: usize) -> f64 {
        match profile.rate_unit.as_ref().map(|u| *u.get_ref()) {
            Some(RateUnit::Rows) => rate / rows as f64,
            _ => rate,
        }
    }

    fn check_profile(&self, profile: &WorkloadProfile, spec: &TableSpec) -> Result<()> {
        if let Some(unit) = &profile.rate_unit
            && *unit.get_ref() == RateUnit::Rows
            && self.file.mix == Mix::Weighted
        {
            return Err(self.error_at(
                unit.span(),
                "rates in rows per second need `mix = \"each-alone\"` or `\"interleaved\"`: in a \
                 weighted mix the operations touch different numbers of rows",
            ));
        }
        let fewest_rows_per_request = match profile.rate_unit.as_ref().map(|u| *u.get_ref()) {
            Some(RateUnit::Rows) => self
                .file
                .operation
                .0
                .iter()
                .map(|o| o.get_ref().rows.as_ref().map_or(1, |r| *r.get_ref()))
                .max()
                .unwrap_or(1),
            _ => 1,
        };
        let mut previous = 0;
        for size in &profile.rows.0 {
            let n = *size.get_ref();
            if n == 0 || n <= previous {
                return Err(self.error_at(
                    size.span(),
                    "table sizes are at least 1 row and ascending: the table grows from one to the next",
                ));
            }
            previous = n;
            let bytes = n as u128 * (spec.row_bytes + ROW_OVERHEAD_BYTES) as u128;
            if bytes > MAX_DATABASE_BYTES as u128 || n >= FIRST_WRITE_ID {
                return Err(self.error_at(
                    size.span(),
                    &format!(
                        "{n} rows of {} bytes (about {} GB with `id`, `k` and the row overhead) \
                         are more than a D1 database holds ({} GB)",
                        spec.row_bytes,
                        bytes / 1_000_000_000,
                        MAX_DATABASE_BYTES / 1_000_000_000
                    ),
                ));
            }
        }
        let smallest = *profile.rows.0[0].get_ref();
        for op in &self.file.operation.0 {
            let decl = op.get_ref();
            if decl.kind == Operation::RangeScan
                && let Some(r) = &decl.rows
                && *r.get_ref() as u64 > smallest
            {
                return Err(self.error_at(
                    r.span(),
                    &format!(
                        "a range scan of {} rows cannot be served by the smallest table size, \
                         {smallest} rows",
                        r.get_ref()
                    ),
                ));
            }
        }
        if decl_aggregates(&self.file) && spec.groups > smallest {
            return Err(self.error_at(
                self.file.table.span(),
                &format!(
                    "{} groups leave some empty at the smallest table size ({smallest} rows): \
                     an aggregate of an empty group measures nothing",
                    spec.groups
                ),
            ));
        }
        self.check_cache(profile)?;
        self.check_path(profile)?;
        let in_flight = *profile.max_in_flight.get_ref();
        if !(1..=MAX_IN_FLIGHT).contains(&in_flight) {
            return Err(self.error_at(
                profile.max_in_flight.span(),
                &format!("max-in-flight is 1 to {MAX_IN_FLIGHT}"),
            ));
        }
        let duration = *profile.duration_s.get_ref();
        if !(duration.is_finite() && duration > 0.0 && duration <= 3_600.0) {
            return Err(self.error_at(
                profile.duration_s.span(),
                "duration-s is more than 0 and at most 3,600 seconds",
            ));
        }
        let warmup = profile.warmup_s.as_ref().map_or(0.0, |w| *w.get_ref());
        if let Some(w) = &profile.warmup_s
            && !(warmup.is_finite() && (0.0..=600.0).contains(&warmup))
        {
            return Err(self.error_at(w.span(), "warmup-s is 0 to 600 seconds"));
        }
        if let Some(u) = &profile.max_utilisation
            && !(*u.get_ref() > 0.0 && *u.get_ref() <= 1.0)
        {
            return Err(self.error_at(
                u.span(),
                "max-utilisation is a share of a server's time: above 0 and at most 1",
            ));
        }
        let mut rates: Vec<f64> = Vec::new();
        for rate in &profile.rates.0 {
            let r = *rate.get_ref();
            if !(r.is_finite() && r > 0.0) {
                return Err(self.error_at(
                    rate.span(),
                    "a rate is a number of requests per second above 0",
                ));
            }
            if r > MAX_PLANNED_RATE {
                return Err(self.error_at(
                    rate.span(),
                    &format!(
                        "{r} requests per second is beyond what the load generator can schedule \
                         on time ({MAX_RATE} at most per process, in at most {} shards: \
                         {MAX_PLANNED_RATE})",
                        crate::records::shard::MAX_SHARDS
                    ),
                ));
            }
            if r * (duration + warmup) > MAX_REQUESTS_PER_POINT {
                return Err(self.error_at(
                    rate.span(),
                    &format!(
                        "{r} requests per second for {} s is more than {MAX_REQUESTS_PER_POINT} \
                         requests at one point",
                        duration + warmup
                    ),
                ));
            }
            if r / fewest_rows_per_request as f64 * duration < 1.0 {
                return Err(self.error_at(
                    rate.span(),
                    &format!(
                        "{r} {} per second for {duration} s sends no request",
                        if fewest_rows_per_request > 1 {
                            "rows"
                        } else {
                            "requests"
                        }
                    ),
                ));
            }
            if rates.contains(&r) {
                return Err(self.error_at(rate.span(), "this rate is listed twice"));
            }
            rates.push(r);
        }
        for (name, repeated) in [
            ("indexes", first_repeat(profile.indexes.as_ref())),
            ("preparation", first_repeat(profile.preparation.as_ref())),
            ("sessions", first_repeat(profile.sessions.as_ref())),
        ] {
            if let Some(span) = repeated {
                return Err(self.error_at(span, &format!("{name} lists this value twice")));
            }
        }
        self.check_sessions(profile)
    }
}

fn decl_aggregates(file: &WorkloadFile) -> bool {
    file.operation
        .0
        .iter()
        .any(|o| o.get_ref().kind == Operation::Aggregate)
}

/// The span of the first value a list repeats.
fn first_repeat<T: PartialEq>(list: Option<&NonEmpty<Spanned<T>>>) -> Option<Range<usize>> {
    let list = &list?.0;
    list.iter()
        .enumerate()
        .find(|(i, v)| list[..*i].iter().any(|e| e.get_ref() == v.get_ref()))
        .map(|(_, v)| v.span())
}

#[cfg(test)]
mod tests;
