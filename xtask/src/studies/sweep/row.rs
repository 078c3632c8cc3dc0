//! One probe of a sweep as measured: a row of a sweep run's `results.csv`.

use d1bench_core::{Outcome, ProbeRequest, ProbeResult, RefusalKind, Strategy};
use serde::{Deserialize, Serialize};

use crate::base::orm::Sent;
use crate::base::{Idiom, Orm, OrmWrite, TargetKind, WorkerKind};
use crate::records::Totals;
use crate::studies::sweep::Axis;

/// One probe as measured: a row of `results.csv`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeRow {
    /// Experiment name (the TOML file's stem).
    pub experiment: String,
    /// Where the probe ran.
    pub target: TargetKind,
    pub strategy: Strategy,
    /// Columns of the probe's table.
    pub columns: usize,
    /// Payload bytes of each row.
    pub row_bytes: usize,
    /// Rows the probe asked to write.
    pub rows: usize,
    /// Rows in the largest INSERT statement.
    pub rows_per_statement: usize,
    /// INSERT statements the plan holds.
    pub statements: usize,
    /// D1 API calls made for the INSERTs (a batch is one).
    pub d1_calls: usize,
    /// Repetition of this point, from 0.
    pub repeat: usize,
    pub outcome: Outcome,
    /// The limit that refused, `other` for an error text no rule knows; empty when none.
    pub refusal: Option<RefusalKind>,
    /// Rows D1 acknowledged: what must be present afterwards.
    pub rows_expected: usize,
    /// Rows counted in the table afterwards, in an invocation of their own.
    pub rows_present: usize,
    /// Milliseconds on the Worker's clock around the INSERTs: binding their values, then the
    /// D1 calls (see `ProbeResult::inside_ms`).
    pub inside_ms: f64,
    /// Milliseconds on the xtask's clock around the whole HTTP request of the writes, the
    /// Worker's `prepare_ms` included.
    pub outside_ms: f64,
    /// Milliseconds D1 reported (`meta.duration`), summed over the INSERTs; empty for the sqlite
    /// target, which has no D1.
    pub d1_ms: Option<f64>,
    /// D1's error text or the target's, verbatim, on one line; empty when none.
    pub error: String,
    /// Probe number within the run; names the probe's table.
    pub probe_id: u64,
    /// Index of the experiment series the probe belongs to.
    pub series: usize,
    /// Seed of the row generator.
    pub seed: u64,
    /// INSERT statements handed to D1.
    pub statements_sent: usize,
    /// UTF-8 bytes of the longest INSERT's SQL text.
    pub max_statement_bytes: usize,
    /// Whether every check of [`crate::records::reconcile`] passed for this probe.
    pub reconciled: bool,
    /// Why the probe did not reconcile; empty when it did.
    pub reconcile_note: String,
    // The columns below came with the sweeps; a results.csv written before them reads back with
    // their defaults.
    /// The experiment series' label (empty when it has none): tells apart lines of one strategy.
    #[serde(default)]
    pub label: String,
    /// Share (0 to 1) of text values generated with characters that need escaping (in runs
    /// before `nul_share` existed, NUL among them).
    #[serde(default)]
    pub escape_share: f64,
    /// Share (0 to 1) of text values generated with multi-byte characters.
    #[serde(default)]
    pub non_ascii_share: f64,
    /// Secondary indexes on the probe's table.
    #[serde(default)]
    pub indexes: usize,
    /// `outside_ms − inside_ms − prepare_ms`: what the outside clock sees beyond the writes and
    /// the Worker's preparation (HTTP, JSON, freeing what the probe built); empty when the request
    /// failed. In runs without `prepare_ms` it is `outside_ms − inside_ms`.
    #[serde(default)]
    pub overhead_ms: Option<f64>,
    /// The content checksum the host computed from the generator for the rows that must be
    /// present (see `d1bench_core::checksum`).
    #[serde(default)]
    pub checksum_expected: String,
    /// The content checksum the target computed in SQL; empty when it could not.
    #[serde(default)]
    pub checksum_present: String,
    /// Whether the two checksums are equal.
    #[serde(default)]
    pub checksum_equal: bool,
    /// The target gave no usable answer (it died, stopped answering, or answered garbage): a
    /// failure of the target, which says nothing about the data. Such a row is not counted as
    /// unreconciled; the totals count it apart.
    #[serde(default)]
    pub target_failed: bool,
    /// When the probe started, in ms since the run started, on a monotonic clock: where it sits
    /// in the run's time, to see drift. Empty in a results.csv written before it was recorded.
    #[serde(default)]
    pub started_ms: Option<f64>,
    /// Milliseconds inside the target's calls for this probe (setup, probe and verify, each
    /// timed around the call): what the probe cost the run, less the harness's own work; empty
    /// in a results.csv written before it was recorded.
    #[serde(default)]
    pub calls_ms: Option<f64>,
    /// Milliseconds the target spent generating the rows and building the statements, before
    /// its inside clock started (see `ProbeResult::prepare_ms`); empty when it did not say.
    #[serde(default)]
    pub prepare_ms: Option<f64>,
    /// Milliseconds, within `inside_ms`, handing the statements and their values to the D1
    /// binding; empty for a target without one (sqlite binds inside each statement's run).
    #[serde(default)]
    pub bind_ms: Option<f64>,
    /// Share (0 to 1) of text values generated starting with a NUL.
    #[serde(default)]
    pub nul_share: f64,
    /// The largest the Worker's isolate got while the measured request ran, in bytes: V8's heap
    /// in use plus its ArrayBuffers (the wasm memory), sampled through the inspector
    /// (`targets/local/heap.rs`); empty where it is not measured (sqlite, remote, a results.csv
    /// written before it was).
    #[serde(default)]
    pub isolate_heap_peak_bytes: Option<u64>,
    /// The session the probe ran in, from 0: each session is a fresh target (a new `wrangler
    /// dev` and database locally, a new database remotely or in-process) with rounds of its own,
    /// and the unit the intervals over sessions count (`stats::sessions`). 0 in a results.csv
    /// written before runs had sessions.
    #[serde(default)]
    pub session: usize,
    /// Measured while its session had not yet settled, by the warm-up rule (MSER-5 over the
    /// session's probes, `stats::settling`): kept here and counted in run.toml, left out of
    /// every report. False in a results.csv written before the rule existed.
    #[serde(default)]
    pub warmup_discarded: bool,
    /// Before the window: milliseconds making the values JavaScript values (see
    /// `ProbeResult::handover_ms`; inside the window's start in results.csv files written before
    /// 2026-12-02); empty for a target without a Worker or a results.csv written before the
    /// window had parts.
    #[serde(default)]
    pub handover_ms: Option<f64>,
    /// The window's second part: milliseconds from the first D1 call until its last answer
    /// arrived (after `bind_ms`); empty as `handover_ms`.
    #[serde(default)]
    pub call_ms: Option<f64>,
    /// The window's last part: milliseconds reading D1's answers; empty as `handover_ms`.
    #[serde(default)]
    pub read_ms: Option<f64>,
    /// Which Worker measured the probe (`rust` or `js`); empty on a target without one (the
    /// sqlite baseline), and in a results.csv written before it was recorded (when the Rust
    /// Worker was the only one).
    #[serde(default)]
    pub worker: Option<WorkerKind>,
    /// A warm-up probe of its session (the profile's `warmup-probes`, or a probe of its `warmup`
    /// rounds): sent, reconciled and recorded like any other, left out of every report, so that
    /// whether a warm-up was needed can be read off the run itself (`stats` of the summary's
    /// warm-up section). False in a results.csv written before warm-ups were recorded (they were
    /// sent, and only counted in run.toml).
    #[serde(default)]
    pub warmup: bool,
    /// The harness's own cost, outside both clocks: milliseconds the host waited for the probe's
    /// setup (its table and indexes created, an invocation of its own). Empty in a results.csv
    /// written before 2026-12-03, and after a setup that failed.
    #[serde(default)]
    pub setup_ms: Option<f64>,
    /// The harness's own cost, outside both clocks: milliseconds the host waited for the probe's
    /// verification (count, content checksum, drop: an invocation of its own). Empty as
    /// `setup_ms`, and after a verification that failed.
    #[serde(default)]
    pub verify_ms: Option<f64>,
    /// The library that wrote the rows (`drizzle`, `prisma`, `kysely`: an experiment's `orms`,
    /// in the ORM Worker); empty for a strategy's probe, and in a results.csv written before
    /// libraries were measured. A library's row names the strategy `batched-rows`, how its rows
    /// reached the Worker (one array of values per row); its `statements`, `statements_sent`,
    /// `rows_per_statement` and `d1_calls` are what the library sent D1, counted in the Worker.
    #[serde(default)]
    pub orm: Option<Orm>,
    /// A library's probe: the most values one of its INSERTs bound; empty for a strategy's.
    #[serde(default)]
    pub bound_per_statement: Option<usize>,
    /// A library's probe: its D1 calls by the binding's method (`batch 1`, `all 42`); empty for
    /// a strategy's.
    #[serde(default)]
    pub d1_call_kinds: String,
    /// A library's probe: how what it sent differs from what `base::orm::emits` models for it;
    /// empty when it sent as modelled, or for a strategy's probe.
    #[serde(default)]
    pub unlike_model: String,
    /// A library's probe: how the library was asked to write (`documented`, `json-each`);
    /// empty for a strategy's.
    #[serde(default)]
    pub idiom: Option<Idiom>,
}

impl ProbeRow {
    /// Whether the row counts in reports: a measured probe, neither a warm-up of the profile
    /// nor one the warm-up rule discarded (`warmup_discarded`).
    pub fn counts(&self) -> bool {
        !self.warmup && !self.warmup_discarded
    }

    /// What the row shares with every repeat of its point and strategy in its session (its
    /// series, label, strategy or library and parameters): the key of a point's median within
    /// a session.
    pub fn point_key(&self) -> String {
        format!(
            "{}|{}|{}|{}|{}|{}|{}|{}|{}|{}",
            self.series,
            self.label,
            self.method_name(),
            self.columns,
            self.row_bytes,
            self.rows,
            self.escape_share,
            self.nul_share,
            self.non_ascii_share,
            self.indexes
        )
    }

    /// Adds the row to `totals`: a warm-up as a warm-up, any other as a record (counting it
    /// discarded when the warm-up rule discarded it).
    pub fn tally(&self, totals: &mut Totals) {
        if self.warmup {
            totals.add_warmup(self);
        } else {
            totals.add(self);
            totals.warmup_discarded += usize::from(self.warmup_discarded);
        }
    }

    /// A row from what the target answered for `probe`; reconciliation fills in the rest.
    pub fn measured(
        experiment: &str,
        target: TargetKind,
        series: usize,
        repeat: usize,
        probe: &ProbeRequest,
        result: &ProbeResult,
        outside_ms: f64,
    ) -> Self {
        ProbeRow {
            rows_per_statement: result.rows_per_statement,
            statements: result.statements_planned,
            d1_calls: result.d1_calls,
            outcome: result.outcome,
            refusal: result.refusal,
            rows_expected: result.rows_expected,
            inside_ms: result.inside_ms,
            d1_ms: result.d1_ms,
            error: crate::records::error_text::recorded(
                result.error.as_deref().unwrap_or_default(),
            ),
            statements_sent: result.statements_sent,
            max_statement_bytes: result.max_statement_bytes,
            // Summed first, so a target whose outside clock is exactly its preparation and
            // writes (sqlite) has no overhead at all.
            overhead_ms: Some(
                outside_ms - (result.prepare_ms.unwrap_or_default() + result.inside_ms),
            ),
            prepare_ms: result.prepare_ms,
            bind_ms: result.bind_ms,
            handover_ms: result.handover_ms,
            call_ms: result.call_ms,
            read_ms: result.read_ms,
            reconcile_note: String::new(),
            target_failed: false,
            ..ProbeRow::unanswered(experiment, target, series, repeat, probe, outside_ms)
        }
    }

    /// A row for a probe that ended before its writes: the table could not be created (a
    /// refusal of the setup is data, with its class), or nothing was sent.
    pub fn refused_at_setup(
        experiment: &str,
        target: TargetKind,
        series: usize,
        repeat: usize,
        probe: &ProbeRequest,
        error: &str,
    ) -> Self {
        let (outcome, refusal) = d1bench_core::ladder::classify(Some(error));
        ProbeRow {
            outcome,
            refusal,
            error: crate::records::error_text::recorded(error),
            target_failed: false,
            reconcile_note: String::new(),
            d1_ms: None,
            ..ProbeRow::unanswered(experiment, target, series, repeat, probe, 0.0)
        }
    }

    /// A row for a probe the target gave no usable answer for (HTTP error, a dead runtime, a
    /// time-out): nothing was measured, so nothing reconciles, and the data is not to blame.
    pub fn target_failure(
        experiment: &str,
        target: TargetKind,
        series: usize,
        repeat: usize,
        probe: &ProbeRequest,
        outside_ms: f64,
        error: &str,
    ) -> Self {
        ProbeRow {
            error: crate::records::error_text::recorded(error),
            ..ProbeRow::unanswered(experiment, target, series, repeat, probe, outside_ms)
        }
    }

    fn unanswered(
        experiment: &str,
        target: TargetKind,
        series: usize,
        repeat: usize,
        probe: &ProbeRequest,
        outside_ms: f64,
    ) -> Self {
        ProbeRow {
            experiment: experiment.to_owned(),
            target,
            strategy: probe.strategy,
            columns: probe.columns,
            row_bytes: probe.row_bytes,
            rows: probe.rows,
            rows_per_statement: 0,
            statements: 0,
            d1_calls: 0,
            repeat,
            outcome: Outcome::Error,
            refusal: None,
            rows_expected: 0,
            rows_present: 0,
            inside_ms: 0.0,
            outside_ms,
            d1_ms: None,
            error: String::new(),
            probe_id: probe.probe_id,
            series,
            seed: probe.seed,
            statements_sent: 0,
            max_statement_bytes: 0,
            reconciled: false,
            reconcile_note: "the target gave no answer: nothing to reconcile".to_owned(),
            label: String::new(),
            escape_share: probe.text.escape_share,
            non_ascii_share: probe.text.non_ascii_share,
            indexes: probe.indexes,
            overhead_ms: None,
            checksum_expected: String::new(),
            checksum_present: String::new(),
            checksum_equal: false,
            target_failed: true,
            started_ms: None,
            calls_ms: None,
            prepare_ms: None,
            bind_ms: None,
            nul_share: probe.text.nul_share,
            isolate_heap_peak_bytes: None,
            session: 0,
            warmup_discarded: false,
            handover_ms: None,
            call_ms: None,
            read_ms: None,
            worker: None,
            warmup: false,
            setup_ms: None,
            verify_ms: None,
            orm: None,
            bound_per_statement: None,
            d1_call_kinds: String::new(),
            unlike_model: String::new(),
            idiom: None,
        }
    }

    /// What wrote the rows: the library and its idiom, for a library's probe.
    pub fn orm_write(&self) -> Option<OrmWrite> {
        let idiom = self.idiom.unwrap_or(Idiom::Documented);
        self.orm.map(|orm| OrmWrite { orm, idiom })
    }

    /// What wrote the rows: the library (with its idiom when not the documented one) for a
    /// library's probe, else the strategy.
    pub fn method_name(&self) -> String {
        self.orm_write()
            .map_or(self.strategy.name().to_owned(), |w| w.to_string())
    }

    /// A library's row: what the library sent, from the ORM Worker's count; and how it differs
    /// from what [`crate::base::orm::emits`] models for it, when it wrote every row.
    pub fn sent_by(mut self, orm: OrmWrite, sent: &Sent) -> Self {
        self.orm = Some(orm.orm);
        self.idiom = Some(orm.idiom);
        self.bound_per_statement = Some(sent.bound_per_statement);
        self.d1_call_kinds = sent.call_kinds();
        if self.outcome == Outcome::Ok {
            self.unlike_model = sent
                .unlike(orm, self.columns, self.rows)
                .unwrap_or_default();
        }
        self
    }

    /// This row's value on a sweep's x axis.
    pub fn at(&self, axis: Axis) -> f64 {
        match axis {
            Axis::Columns => self.columns as f64,
            Axis::RowBytes => self.row_bytes as f64,
            Axis::EscapeShare => self.escape_share,
            Axis::NulShare => self.nul_share,
            Axis::NonAsciiShare => self.non_ascii_share,
            Axis::Indexes => self.indexes as f64,
        }
    }
}

impl crate::records::Record for ProbeRow {
    fn outcome(&self) -> Outcome {
        self.outcome
    }
    fn target_failed(&self) -> bool {
        self.target_failed
    }
    fn reconciled(&self) -> bool {
        self.reconciled
    }
    fn reconcile_note(&self) -> &str {
        &self.reconcile_note
    }
    fn rows(&self) -> (usize, usize) {
        (self.rows_expected, self.rows_present)
    }
    fn checksum_equal(&self) -> Option<bool> {
        (!self.target_failed).then_some(self.checksum_equal)
    }
    fn describe(&self) -> String {
        format!(
            "{} {}{} C={} bytes={} esc={}{} idx={} rep {}: {}{} {:.1} ms",
            self.target,
            self.method_name(),
            if self.label.is_empty() {
                String::new()
            } else {
                format!(" ({})", self.label)
            },
            self.columns,
            self.row_bytes,
            self.escape_share,
            if self.nul_share > 0.0 {
                format!(" nul={}", self.nul_share)
            } else {
                String::new()
            },
            self.indexes,
            self.repeat,
            self.outcome,
            self.refusal.map_or(String::new(), |r| format!(" ({r})")),
            self.outside_ms,
        )
    }
}

#[cfg(test)]
mod tests;

/// A plausible result row for other modules' tests to adjust.
#[cfg(test)]
pub mod tests_support {
    use super::*;

    pub fn row() -> ProbeRow {
        ProbeRow {
            experiment: "column-sweep".into(),
            target: TargetKind::Local,
            strategy: Strategy::Bound,
            columns: 8,
            row_bytes: 1000,
            rows: 100,
            rows_per_statement: 12,
            statements: 9,
            d1_calls: 1,
            repeat: 0,
            outcome: Outcome::Ok,
            refusal: None,
            rows_expected: 100,
            rows_present: 100,
            inside_ms: 5.0,
            outside_ms: 9.0,
            d1_ms: Some(2.0),
            error: String::new(),
            probe_id: 1,
            series: 0,
            seed: 1,
            statements_sent: 9,
            max_statement_bytes: 200,
            reconciled: true,
            reconcile_note: String::new(),
            label: String::new(),
            escape_share: 0.0,
            non_ascii_share: 0.0,
            indexes: 0,
            overhead_ms: Some(4.0),
            checksum_expected: "100:1:2:3:4:5:6:0".into(),
            checksum_present: "100:1:2:3:4:5:6:0".into(),
            checksum_equal: true,
            target_failed: false,
            started_ms: Some(12.5),
            calls_ms: Some(8.5),
            prepare_ms: None,
            bind_ms: None,
            nul_share: 0.0,
            isolate_heap_peak_bytes: None,
            session: 0,
            warmup_discarded: false,
            handover_ms: None,
            call_ms: None,
            read_ms: None,
            worker: None,
            warmup: false,
            setup_ms: None,
            verify_ms: None,
            orm: None,
            bound_per_statement: None,
            d1_call_kinds: String::new(),
            unlike_model: String::new(),
            idiom: None,
        }
    }
}
