//! A workload run's records: one [`OpRow`] per request sent (`results.csv`, warm-ups included
//! and marked, so every write that reached the table is on disk), and one [`CheckRow`] per check
//! of the table (`checks.csv`: after each seeding and at the end), each deciding whether it
//! reconciles.

use d1bench_core::workload::cache::CacheLookup;
use d1bench_core::workload::{IndexKind, Operation, Preparation, SessionMode};
use d1bench_core::{Outcome, RefusalKind};
use serde::{Deserialize, Serialize};

use crate::base::TargetKind;
use crate::records::Record;
use crate::studies::workload::{RetryKind, WritePath};

/// Whether a request was measured or warmed the target up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    /// Before the warm-up, one request at a time per arm: the service time the point's rate
    /// is set from (recorded, never in the statistics).
    Calibrate,
    Warmup,
    Measure,
}

/// One request of a workload as sent and answered: a row of `results.csv`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpRow {
    pub experiment: String,
    pub target: TargetKind,
    /// The load point (from 1, in run order).
    pub point: usize,
    pub phase: Phase,
    /// Rows the table was seeded with (writes add to them).
    pub table_rows: u64,
    pub index: IndexKind,
    pub preparation: Preparation,
    /// Requests per second the point was scheduled at.
    pub rate: f64,
    pub op: Operation,
    /// Rows a range scan reads or a batched write writes; 1 otherwise.
    pub op_rows: usize,
    /// Request number within its point and phase, from 0.
    pub seq: u64,
    /// The id read from, the group aggregated, or the first id written.
    pub key: u64,
    /// When the request was due, in ms since its phase started (seq ÷ rate).
    pub scheduled_ms: f64,
    /// The load generator's lag: ms from when the request was due to when it was sent.
    pub lag_ms: f64,
    /// Ms from when the request was due to its whole answer: the latency a client on this
    /// schedule saw, queueing behind earlier requests included (no coordinated omission).
    pub latency_ms: f64,
    /// Ms from sending the request to its whole answer (the outside clock).
    pub service_ms: f64,
    /// Ms inside the invocation, from handing the statement to the binding to reading its
    /// answer; empty when the target gave no answer.
    pub inside_ms: Option<f64>,
    /// D1's `meta.duration`, summed; empty on sqlite or without an answer.
    pub d1_ms: Option<f64>,
    /// D1's `meta.rows_read` and `meta.rows_written`, summed: what the user is billed.
    pub rows_read: Option<u64>,
    pub rows_written: Option<u64>,
    /// Rows the read answered.
    pub rows_returned: usize,
    /// Rows the write changed (`meta.changes`).
    pub changes: usize,
    pub outcome: Outcome,
    pub refusal: Option<RefusalKind>,
    /// The target gave no answer (transport error, time-out, not an answer).
    pub target_failed: bool,
    /// The error text, verbatim, on one line; empty when none.
    pub error: String,
    /// When the point's phase started, in ms since the run started.
    pub started_ms: f64,
    /// The point's retry policy (its parameters are in the plan); `none` in runs before retries.
    #[serde(default)]
    pub retry: RetryKind,
    /// Attempts sent, the first included; the timings and answer above are the last attempt's,
    /// the latency from when the first was due.
    #[serde(default = "one")]
    pub attempts: u32,
    /// What refused the first attempt, if anything did: what a client without retries saw.
    #[serde(default)]
    pub first_refusal: Option<RefusalKind>,
    /// The first attempt got no answer.
    #[serde(default)]
    pub first_failed: bool,
    /// Ms waited between attempts.
    #[serde(default)]
    pub retry_wait_ms: f64,
    /// The cache's TTL in seconds at this point (cache workloads); empty otherwise.
    #[serde(default)]
    pub ttl_s: Option<f64>,
    /// What a cached read found in KV: `hit`, `miss` or `expired` (older than the TTL).
    #[serde(default)]
    pub cache: Option<CacheLookup>,
    /// The row version a cached read returned, or an update wrote.
    #[serde(default)]
    pub version: Option<u64>,
    /// When the request was sent and when its whole answer was in, ms since the run started
    /// (empty in runs before the cache workload): what orders reads after writes.
    #[serde(default)]
    pub sent_ms: Option<f64>,
    #[serde(default)]
    pub answered_ms: Option<f64>,
    /// Where D1 says it ran the statement (`meta.served_by_region` / `served_by_colo`), empty
    /// where it does not say (locally, and operations whose answer does not carry it).
    #[serde(default)]
    pub served_by_region: String,
    #[serde(default)]
    pub served_by_colo: String,
    /// The Cloudflare data centre the Worker ran in (`request.cf.colo`); empty off Cloudflare.
    #[serde(default)]
    pub worker_colo: String,
    /// How the Worker opened D1 for the read: `none` (the plain binding; every run before the
    /// Sessions API series), `first-unconstrained` or `first-primary` (a session per request).
    #[serde(default)]
    pub session: SessionMode,
    /// Whether the read's session had a bookmark after it (its value is not kept); empty
    /// without a session or without an answer.
    #[serde(default)]
    pub session_bookmark: Option<bool>,
    /// Whether D1's primary answered (`meta.served_by_primary`): `false` when a read replica
    /// did. Empty where D1 does not say, and in runs before this column.
    #[serde(default)]
    pub served_by_primary: Option<bool>,
    /// D1's own attempts at the last attempt's call (`meta.total_attempts`: D1 retries read-only
    /// queries up to twice), beside the client's `attempts`; empty where D1 does not say, and in
    /// runs before this column.
    #[serde(default)]
    pub d1_attempts: Option<u32>,
    /// D1's `meta.timings.sql_duration_ms`, summed over the call's statements: SQLite's own
    /// time; empty where D1 does not say, and in runs before this column.
    #[serde(default)]
    pub sql_duration_ms: Option<f64>,
    /// Of `lag_ms`, the dispatcher's own lateness: ms from due to handed to a thread. The rest
    /// of the lag is the wait for a free thread (every one of `max-in-flight` busy with the
    /// target). Empty in runs before this column.
    #[serde(default)]
    pub late_ms: Option<f64>,
    /// Which way the request went: the Worker's D1 binding, or D1's REST API from the load
    /// generator (a write of a series whose `path` is `rest` or `both`); `binding` in runs
    /// before this column and on targets without the API.
    #[serde(default)]
    pub path: WritePath,
}

fn one() -> u32 {
    1
}

impl OpRow {
    /// Whether a write was acknowledged whole: its ids must be in the table.
    pub fn acknowledged(&self) -> bool {
        self.op.writes() && self.outcome == Outcome::Ok && !self.target_failed
    }
}

impl Record for OpRow {
    fn outcome(&self) -> Outcome {
        self.outcome
    }
    fn target_failed(&self) -> bool {
        self.target_failed
    }
    /// A read reconciles when it answered; a write when what it changed is what it was asked
    /// (everything when acknowledged, nothing when refused).
    fn reconciled(&self) -> bool {
        if !self.op.writes() {
            return true;
        }
        match self.outcome {
            // A write sent again may find its rows already there from an attempt whose answer
            // was lost: the idempotent INSERT then changes fewer (the table check counts them).
            Outcome::Ok if self.attempts > 1 => self.changes <= self.op_rows,
            Outcome::Ok => self.changes == self.op_rows,
            Outcome::Refused | Outcome::Error => self.changes == 0,
        }
    }
    fn reconcile_note(&self) -> &str {
        if self.reconciled() {
            ""
        } else {
            "the write changed another number of rows than it was asked to write"
        }
    }
    fn rows(&self) -> (usize, usize) {
        (0, 0)
    }
    fn checksum_equal(&self) -> Option<bool> {
        None
    }
    fn describe(&self) -> String {
        format!(
            "point {} {} at {}/s: {} in {:.1} ms",
            self.point, self.op, self.rate, self.outcome, self.latency_ms
        )
    }
}

/// One load point as run: a row of `points.csv`, written when the point ends: its service time
/// measured before it (one request at a time per arm), the rate it ran at and the utilisation
/// that makes, and the CPU time each process took while it was measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointRow {
    pub experiment: String,
    pub target: TargetKind,
    pub point: usize,
    pub table_rows: u64,
    /// Arms sharing the point.
    pub arms: usize,
    /// Requests per second the plan asked for, and what the point ran at (lower when the
    /// profile's `max-utilisation` capped it).
    pub rate_planned: f64,
    pub rate: f64,
    /// Mean ms per request of the point's mix, one at a time: inside the invocation, and on
    /// D1's own clock (empty where there is none).
    pub service_inside_ms: f64,
    pub service_d1_ms: Option<f64>,
    /// `rate × service_inside_ms`: the share of time a single server would be busy.
    pub utilisation: f64,
    /// The profile's cap on it, when it has one.
    pub max_utilisation: Option<f64>,
    pub max_in_flight: usize,
    /// Seconds the measured phase took, to its last answer.
    pub measured_s: f64,
    /// CPU seconds while it was measured: this process (the load generator, and in-process
    /// SQLite when that is the target), workerd, and wrangler (its `node`); 0 where none runs.
    pub cpu_generator_s: f64,
    pub cpu_workerd_s: f64,
    pub cpu_wrangler_s: f64,
    /// Of `cpu_generator_s`, the threads that sent the requests and waited for their answers
    /// (the HTTP client; with in-process SQLite, SQLite's work too), from each thread's own
    /// times as it ended; empty in points.csv files written before it was recorded.
    #[serde(default)]
    pub cpu_senders_s: Option<f64>,
}

/// One check of the workload table: a row of `checks.csv`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckRow {
    pub experiment: String,
    pub target: TargetKind,
    /// `seeded` (after growing the table to `table_rows`) or `final` (after every point).
    pub when: String,
    pub table_rows: u64,
    /// Seed requests sent to grow the table to this size, and the ms they took together.
    pub seed_batches: usize,
    pub seed_ms: f64,
    /// Rows that must be present: every seeded id and every acknowledged write.
    pub rows_expected: u64,
    pub rows_present: u64,
    /// `sum(id)` modulo a prime below 2^53, expected and present.
    pub id_sum_expected: u64,
    pub id_sum_present: u64,
    /// Rows whose `k` is not their group.
    pub misplaced: u64,
    pub checksum_expected: String,
    pub checksum_present: String,
    /// Whether rows, ids, groups and content all agree.
    pub reconciled: bool,
    /// What differs, or what could not be checked; empty when it reconciled.
    pub note: String,
    /// The writes' exactly-once reconciliation: acknowledged (each must be present once), sent
    /// without acknowledgement yet present (allowed once), acknowledged and missing, and ids
    /// present more than once.
    #[serde(default)]
    pub writes_acknowledged: usize,
    #[serde(default)]
    pub writes_unacknowledged_present: usize,
    #[serde(default)]
    pub writes_missing: usize,
    #[serde(default)]
    pub writes_duplicated: usize,
}

impl Record for CheckRow {
    fn outcome(&self) -> Outcome {
        Outcome::Ok
    }
    fn target_failed(&self) -> bool {
        false
    }
    fn reconciled(&self) -> bool {
        self.reconciled
    }
    fn reconcile_note(&self) -> &str {
        &self.note
    }
    fn rows(&self) -> (usize, usize) {
        (self.rows_expected as usize, self.rows_present as usize)
    }
    fn checksum_equal(&self) -> Option<bool> {
        Some(self.checksum_expected == self.checksum_present)
    }
    fn describe(&self) -> String {
        format!(
            "{} check at {} rows: {} of {} present{}",
            self.when,
            self.table_rows,
            self.rows_present,
            self.rows_expected,
            if self.reconciled {
                ""
            } else {
                ", NOT reconciled"
            }
        )
    }
}

/// A measured, successful request for other modules' tests to adjust: a point read of key 1 at
/// 100/s on a 1,000-row table on the local target, answered in 1 ms.
#[cfg(test)]
pub mod tests_support {
    use super::*;

    pub fn row() -> OpRow {
        OpRow {
            experiment: "w".into(),
            target: TargetKind::Local,
            point: 1,
            phase: Phase::Measure,
            table_rows: 1000,
            index: IndexKind::Key,
            preparation: Preparation::Reuse,
            rate: 100.0,
            op: Operation::PointRead,
            op_rows: 1,
            seq: 0,
            key: 1,
            scheduled_ms: 0.0,
            lag_ms: 0.1,
            latency_ms: 1.0,
            service_ms: 1.0,
            inside_ms: Some(1.0),
            d1_ms: None,
            rows_read: None,
            rows_written: None,
            rows_returned: 1,
            changes: 0,
            outcome: Outcome::Ok,
            refusal: None,
            target_failed: false,
            error: String::new(),
            started_ms: 0.0,
            retry: RetryKind::None,
            attempts: 1,
            first_refusal: None,
            first_failed: false,
            retry_wait_ms: 0.0,
            ttl_s: None,
            cache: None,
            version: None,
            sent_ms: None,
            answered_ms: None,
            served_by_region: String::new(),
            served_by_colo: String::new(),
            worker_colo: String::new(),
            session: SessionMode::None,
            session_bookmark: None,
            served_by_primary: None,
            d1_attempts: None,
            sql_duration_ms: None,
            late_ms: Some(0.0),
            path: WritePath::Binding,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `results.csv` written before the cache workload (no TTL, cache, version, times,
    /// served-by or colo columns) still reads, each new column empty.
    #[test]
    fn results_before_the_cache_columns_still_read() {
        let path = crate::paths::project_root()
            .join("xtask/tests/golden/workload-results-before-cache.csv");
        let rows: Vec<OpRow> = crate::records::csv::read(&path).unwrap();
        assert_eq!(rows.len(), 1);
        let row = &rows[0];
        assert_eq!((row.op, row.outcome), (Operation::Write, Outcome::Ok));
        assert!(row.acknowledged());
        assert_eq!(
            (
                row.ttl_s,
                row.cache,
                row.version,
                row.sent_ms,
                row.answered_ms
            ),
            (None, None, None, None, None)
        );
        assert!(
            row.served_by_region.is_empty()
                && row.served_by_colo.is_empty()
                && row.worker_colo.is_empty()
        );
    }

    /// A `results.csv` written before the Sessions API series (no session columns, the
    /// served-by and colo columns there) still reads: the plain binding, no bookmark.
    #[test]
    fn results_before_the_session_columns_still_read() {
        let path = crate::paths::project_root()
            .join("xtask/tests/golden/workload-results-before-sessions.csv");
        let rows: Vec<OpRow> = crate::records::csv::read(&path).unwrap();
        assert_eq!(rows.len(), 1);
        let row = &rows[0];
        assert_eq!((row.op, row.outcome), (Operation::PointRead, Outcome::Ok));
        assert_eq!(row.served_by_region, "WNAM");
        assert_eq!(
            (row.session, row.session_bookmark, row.served_by_primary),
            (SessionMode::None, None, None)
        );
        assert_eq!((row.d1_attempts, row.sql_duration_ms), (None, None));
        assert_eq!(row.path, WritePath::Binding);
    }

    /// D1's own attempts and SQL time read back beside the client's attempts.
    #[test]
    fn d1s_attempts_and_sql_time_round_trip() {
        let path = crate::paths::project_root()
            .join("xtask/tests/golden/workload-results-before-sessions.csv");
        let mut row: OpRow = crate::records::csv::read(&path).unwrap().remove(0);
        row.attempts = 2;
        row.d1_attempts = Some(3);
        row.sql_duration_ms = Some(0.25);
        row.path = WritePath::Rest;
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("results.csv");
        let mut appender = crate::records::csv::Appender::<OpRow>::open(&out).unwrap();
        appender.append(&row).unwrap();
        drop(appender);
        let text = std::fs::read_to_string(&out).unwrap();
        assert!(
            text.lines().nth(1).unwrap().ends_with(",3,0.25,,rest"),
            "{text}"
        );
        let back: Vec<OpRow> = crate::records::csv::read(&out).unwrap();
        assert_eq!(back, vec![row]);
    }

    /// A row with a session reads back as written, its bookmark's presence included.
    #[test]
    fn session_columns_round_trip() {
        let path = crate::paths::project_root()
            .join("xtask/tests/golden/workload-results-before-sessions.csv");
        let mut row: OpRow = crate::records::csv::read(&path).unwrap().remove(0);
        row.session = SessionMode::FirstPrimary;
        row.session_bookmark = Some(true);
        row.served_by_primary = Some(false);
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("results.csv");
        let mut appender = crate::records::csv::Appender::<OpRow>::open(&out).unwrap();
        appender.append(&row).unwrap();
        drop(appender);
        let text = std::fs::read_to_string(&out).unwrap();
        assert!(text.lines().next().unwrap().ends_with(
            ",session,session_bookmark,served_by_primary,d1_attempts,sql_duration_ms,late_ms,path"
        ));
        assert!(text.contains(",first-primary,true,false"), "{text}");
        let back: Vec<OpRow> = crate::records::csv::read(&out).unwrap();
        assert_eq!(back, vec![row]);
    }
}
