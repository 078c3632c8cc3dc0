//! What a run leaves on disk: `results.csv` (one row per probe, flushed as it completes),
//! `run.toml` (provenance and the reconciliation totals), `summary.csv`, `summary.md` and the
//! charts. Paths are computed in [`RunDir`].

use std::fs::File;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use d1bench_core::{ProbeRequest, ProbeResult, Strategy};
use serde::{Deserialize, Serialize};

/// The files of one run, all under `reports/<experiment>/<run-id>/`.
#[derive(Debug, Clone)]
pub struct RunDir {
    pub path: PathBuf,
}

impl RunDir {
    pub fn new(path: PathBuf) -> Self {
        RunDir { path }
    }
    pub fn results_csv(&self) -> PathBuf {
        self.path.join("results.csv")
    }
    pub fn run_toml(&self) -> PathBuf {
        self.path.join("run.toml")
    }
    pub fn summary_csv(&self) -> PathBuf {
        self.path.join("summary.csv")
    }
    pub fn summary_md(&self) -> PathBuf {
        self.path.join("summary.md")
    }
    /// A chart file: `<name>.<extension>` in the run directory.
    pub fn chart(&self, name: &str, extension: &str) -> PathBuf {
        self.path.join(format!("{name}.{extension}"))
    }
}

/// The swept parameter of an experiment: the x axis of its charts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Axis {
    Columns,
    RowBytes,
    EscapeShare,
    NonAsciiShare,
    Indexes,
}

impl Axis {
    /// The name used in TOML files and chart file names.
    pub fn name(self) -> &'static str {
        match self {
            Axis::Columns => "columns",
            Axis::RowBytes => "row-bytes",
            Axis::EscapeShare => "escape-share",
            Axis::NonAsciiShare => "non-ascii-share",
            Axis::Indexes => "indexes",
        }
    }

    /// The axis label of a chart, with its unit.
    pub fn label(self) -> &'static str {
        match self {
            Axis::Columns => "columns per row",
            Axis::RowBytes => "row size (bytes)",
            Axis::EscapeShare => "share of text values needing escapes (0-1)",
            Axis::NonAsciiShare => "share of non-ASCII text values (0-1)",
            Axis::Indexes => "secondary indexes on the table",
        }
    }

    /// This axis's value in a result row.
    pub fn value(self, row: &ResultRow) -> f64 {
        match self {
            Axis::Columns => row.columns as f64,
            Axis::RowBytes => row.row_bytes as f64,
            Axis::EscapeShare => row.escape_share,
            Axis::NonAsciiShare => row.non_ascii_share,
            Axis::Indexes => row.indexes as f64,
        }
    }

    /// This axis's value in a probe.
    pub fn of_probe(self, probe: &ProbeRequest) -> f64 {
        match self {
            Axis::Columns => probe.columns as f64,
            Axis::RowBytes => probe.row_bytes as f64,
            Axis::EscapeShare => probe.text.escape_share,
            Axis::NonAsciiShare => probe.text.non_ascii_share,
            Axis::Indexes => probe.indexes as f64,
        }
    }

    /// This axis's value as a table shows it.
    pub fn format(self, value: f64) -> String {
        match self {
            Axis::EscapeShare | Axis::NonAsciiShare => format!("{value}"),
            _ => format!("{}", value as u64),
        }
    }
}

/// One probe as measured: a row of `results.csv`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultRow {
    /// Experiment name (the TOML file's stem).
    pub experiment: String,
    /// Where the Worker ran: `local` or `remote`.
    pub target: String,
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
    /// `ok`, `refused` or `error`.
    pub outcome: String,
    /// The limit that refused (`too-many-variables`, ...), `other`, or empty.
    pub refusal: String,
    /// Rows D1 acknowledged: what must be present afterwards.
    pub rows_expected: usize,
    /// Rows counted in the table afterwards.
    pub rows_present: usize,
    /// Milliseconds on the Worker's clock around the INSERTs.
    pub inside_ms: f64,
    /// Milliseconds on the xtask's clock around the whole HTTP request (authoritative).
    pub outside_ms: f64,
    /// Milliseconds D1 reported (`meta.duration`), summed over the INSERTs; empty for the sqlite
    /// target, which has no D1.
    pub d1_ms: Option<f64>,
    /// D1's error text or the harness's, verbatim; empty when none.
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
    /// Whether every check of [`crate::reconcile`] passed for this probe.
    pub reconciled: bool,
    /// Why the probe did not reconcile; empty when it did.
    pub reconcile_note: String,
    // The columns below came with the sweeps; a results.csv written before them reads back with
    // their defaults.
    /// The experiment series' label (empty when it has none): tells apart lines of one strategy.
    #[serde(default)]
    pub label: String,
    /// Share (0 to 1) of text values generated with characters that need escaping.
    #[serde(default)]
    pub escape_share: f64,
    /// Share (0 to 1) of text values generated with multi-byte characters.
    #[serde(default)]
    pub non_ascii_share: f64,
    /// Secondary indexes on the probe's table.
    #[serde(default)]
    pub indexes: usize,
    /// `outside_ms − inside_ms`: what the outside clock sees beyond the writes (HTTP, JSON,
    /// planning and building the statements, creating the table, counting); empty when the
    /// request failed.
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
}

impl ResultRow {
    /// A row from what the Worker answered for `probe`.
    pub fn measured(
        experiment: &str,
        target: &str,
        series: usize,
        repeat: usize,
        probe: &ProbeRequest,
        result: &ProbeResult,
        outside_ms: f64,
    ) -> Self {
        ResultRow {
            experiment: experiment.to_owned(),
            target: target.to_owned(),
            strategy: probe.strategy,
            columns: probe.columns,
            row_bytes: result.row_bytes,
            rows: probe.rows,
            rows_per_statement: result.rows_per_statement,
            statements: result.statements_planned,
            d1_calls: result.d1_calls,
            repeat,
            outcome: result.outcome.name().to_owned(),
            refusal: result
                .refusal
                .map(|r| r.name().to_owned())
                .unwrap_or_default(),
            rows_expected: result.rows_expected,
            rows_present: result.rows_present,
            inside_ms: result.inside_ms,
            outside_ms,
            d1_ms: Some(result.d1_ms),
            error: result.error.clone().unwrap_or_default(),
            probe_id: probe.probe_id,
            series,
            seed: probe.seed,
            statements_sent: result.statements_sent,
            max_statement_bytes: result.max_statement_bytes,
            reconciled: false,
            reconcile_note: String::new(),
            label: String::new(),
            escape_share: probe.text.escape_share,
            non_ascii_share: probe.text.non_ascii_share,
            indexes: probe.indexes,
            overhead_ms: Some(outside_ms - result.inside_ms),
            checksum_expected: String::new(),
            checksum_present: String::new(),
            checksum_equal: false,
        }
    }

    /// A row for a probe whose request itself failed (HTTP error, Worker crash): nothing was
    /// measured by the Worker, so nothing reconciles.
    pub fn harness_failure(
        experiment: &str,
        target: &str,
        series: usize,
        repeat: usize,
        probe: &ProbeRequest,
        outside_ms: f64,
        error: String,
    ) -> Self {
        ResultRow {
            experiment: experiment.to_owned(),
            target: target.to_owned(),
            strategy: probe.strategy,
            columns: probe.columns,
            row_bytes: probe.row_bytes,
            rows: probe.rows,
            rows_per_statement: 0,
            statements: 0,
            d1_calls: 0,
            repeat,
            outcome: "error".to_owned(),
            refusal: String::new(),
            rows_expected: 0,
            rows_present: 0,
            inside_ms: 0.0,
            outside_ms,
            d1_ms: None,
            error,
            probe_id: probe.probe_id,
            series,
            seed: probe.seed,
            statements_sent: 0,
            max_statement_bytes: 0,
            reconciled: false,
            reconcile_note: "the request failed: no result to reconcile".to_owned(),
            label: String::new(),
            escape_share: probe.text.escape_share,
            non_ascii_share: probe.text.non_ascii_share,
            indexes: probe.indexes,
            overhead_ms: None,
            checksum_expected: String::new(),
            checksum_present: String::new(),
            checksum_equal: false,
        }
    }
}

/// Writes rows to `results.csv`, flushing after each so a crash loses nothing measured.
pub struct ResultsWriter {
    writer: csv::Writer<File>,
    path: PathBuf,
}

impl ResultsWriter {
    /// Opens `results.csv` to append rows, creating it if missing: a run's baseline adds its
    /// rows after the target's. The header is written only into an empty file.
    pub fn open(path: &Path) -> Result<Self> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .with_context(|| format!("cannot open {} to append", path.display()))?;
        let empty = file
            .metadata()
            .with_context(|| format!("cannot read the size of {}", path.display()))?
            .len()
            == 0;
        Ok(ResultsWriter {
            writer: csv::WriterBuilder::new()
                .has_headers(empty)
                .from_writer(file),
            path: path.to_owned(),
        })
    }

    pub fn append(&mut self, row: &ResultRow) -> Result<()> {
        self.writer
            .serialize(row)
            .with_context(|| format!("cannot write to {}", self.path.display()))?;
        self.writer
            .flush()
            .with_context(|| format!("cannot flush {}", self.path.display()))
    }
}

/// Reads a run's `results.csv` back (for `cargo xtask plot`).
pub fn read_results(path: &Path) -> Result<Vec<ResultRow>> {
    let mut reader =
        csv::Reader::from_path(path).with_context(|| format!("cannot open {}", path.display()))?;
    reader
        .deserialize()
        .enumerate()
        .map(|(i, row)| {
            row.with_context(|| {
                format!("{}: row {} is not a d1bench result", path.display(), i + 2)
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use d1bench_core::{Outcome, RefusalKind, TextMix};

    fn probe() -> ProbeRequest {
        ProbeRequest {
            probe_id: 3,
            strategy: Strategy::Literal,
            columns: 4,
            rows: 10,
            row_bytes: 50,
            seed: 1,
            rows_per_statement: None,
            text: TextMix::default(),
            indexes: 0,
            debug_corrupt: None,
        }
    }

    fn result() -> ProbeResult {
        ProbeResult {
            probe_id: 3,
            strategy: Strategy::Literal,
            columns: 4,
            row_bytes: 50,
            rows_expected: 0,
            rows_present: 0,
            statements_planned: 1,
            statements_sent: 1,
            d1_calls: 1,
            rows_per_statement: 10,
            max_statement_bytes: 700,
            inside_ms: 2.0,
            d1_ms: 0.5,
            outcome: Outcome::Refused,
            refusal: Some(RefusalKind::StatementTooLong),
            error: Some(
                "D1_ERROR: statement too long: SQLITE_TOOBIG, \"quoted\"\nsecond line".into(),
            ),
            served_by: None,
        }
    }

    #[test]
    fn rows_are_on_disk_after_each_append_and_read_back_equal() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.csv");
        let mut writer = ResultsWriter::open(&path).unwrap();
        let first = ResultRow::measured("column-sweep", "local", 0, 0, &probe(), &result(), 7.5);
        writer.append(&first).unwrap();
        // Flushed: readable while the writer is still open.
        assert_eq!(read_results(&path).unwrap(), vec![first.clone()]);
        let second = ResultRow::harness_failure(
            "column-sweep",
            "local",
            0,
            1,
            &probe(),
            1.0,
            "HTTP 500".into(),
        );
        writer.append(&second).unwrap();
        assert_eq!(read_results(&path).unwrap(), vec![first, second]);
    }

    #[test]
    fn appending_adds_rows_under_the_one_header() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.csv");
        let first = ResultRow::measured("e", "local", 0, 0, &probe(), &result(), 7.5);
        ResultsWriter::open(&path).unwrap().append(&first).unwrap();
        let mut second = first.clone();
        second.target = "sqlite".into();
        second.d1_ms = None;
        ResultsWriter::open(&path).unwrap().append(&second).unwrap();
        assert_eq!(read_results(&path).unwrap(), vec![first, second]);
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.matches("experiment,target").count(), 1, "{text}");
    }

    #[test]
    fn header_starts_with_the_documented_columns() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.csv");
        let mut writer = ResultsWriter::open(&path).unwrap();
        writer
            .append(&ResultRow::measured(
                "e",
                "local",
                0,
                0,
                &probe(),
                &result(),
                1.0,
            ))
            .unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let header = text.lines().next().unwrap();
        assert_eq!(
            header,
            "experiment,target,strategy,columns,row_bytes,rows,rows_per_statement,statements,d1_calls,repeat,\
             outcome,refusal,rows_expected,rows_present,inside_ms,outside_ms,d1_ms,error,\
             probe_id,series,seed,statements_sent,max_statement_bytes,reconciled,reconcile_note,\
             label,escape_share,non_ascii_share,indexes,overhead_ms,\
             checksum_expected,checksum_present,checksum_equal"
        );
    }

    #[test]
    fn overhead_is_outside_minus_inside_and_absent_without_a_result() {
        let row = ResultRow::measured("e", "local", 0, 0, &probe(), &result(), 7.5);
        assert_eq!(row.overhead_ms, Some(5.5));
        let failed =
            ResultRow::harness_failure("e", "local", 0, 0, &probe(), 7.5, "HTTP 500".into());
        assert_eq!(failed.overhead_ms, None);
        assert_eq!(failed.d1_ms, None);
    }

    #[test]
    fn a_file_that_is_not_a_result_csv_is_named_in_the_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.csv");
        std::fs::write(&path, "a,b\n1,2\n").unwrap();
        let err = format!("{:#}", read_results(&path).unwrap_err());
        assert!(
            err.contains("results.csv: row 2 is not a d1bench result"),
            "{err}"
        );
    }
}

/// A plausible result row for other modules' tests to adjust.
#[cfg(test)]
pub mod tests_support {
    use super::*;

    pub fn row() -> ResultRow {
        ResultRow {
            experiment: "column-sweep".into(),
            target: "local".into(),
            strategy: Strategy::Bound,
            columns: 8,
            row_bytes: 1000,
            rows: 100,
            rows_per_statement: 12,
            statements: 9,
            d1_calls: 1,
            repeat: 0,
            outcome: "ok".into(),
            refusal: String::new(),
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
        }
    }
}
