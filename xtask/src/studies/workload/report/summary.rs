//! The summary of a workload run, from its `results.csv` and `checks.csv` only: per target,
//! table size, index, preparation, D1 session, rate and operation, the latency percentiles (p50 to p99.9,
//! each with its order-statistic interval, and the max) from HDR histograms, throughput offered
//! and achieved, the shares refused by class, D1's clock and the rows D1 bills, and whether the
//! load generator kept its timetable (`summary.csv`, `summary.md`); and the read-path answers:
//! covering ÷ key index and reused ÷ per-call statements, against the write-up's −40% and −15%.

use std::fmt::Write as _;

use anyhow::{Context, Result};
use d1bench_core::workload::{IndexKind, Operation, Preparation, SessionMode};
use serde::Serialize;

use super::claims::{answers, answers_table};
use super::load_stats::{LAG_TOLERANCE_MS, OpStats, stats_capped};
use crate::base::TargetKind;
use crate::base::numbers::num;
use crate::records::csv;
use crate::records::{RunDir, RunRecord};
use crate::reports::{Rendered, chart_files, provenance, title};
use crate::stats::CONFIDENCE;
use crate::studies::workload::row::{CheckRow, OpRow, PointRow};

/// One row of a workload run's `summary.csv`.
#[derive(Debug, Serialize)]
pub struct SummaryRow {
    pub target: TargetKind,
    pub table_rows: u64,
    pub index: IndexKind,
    pub preparation: Preparation,
    pub op: Operation,
    pub rate: f64,
    pub n: usize,
    pub ok: usize,
    pub refused: usize,
    /// Refused requests by class, `class=count;…`.
    pub refused_by_class: String,
    pub errors: usize,
    pub target_failed: usize,
    pub offered_per_s: f64,
    pub achieved_per_s: f64,
    /// `p50,p90,p95,p99,p99.9` then each with `_low`, `_high` and `_coverage`; empty where the
    /// requests were too few.
    pub percentiles: String,
    pub p50_ms: Option<f64>,
    pub p50_low: Option<f64>,
    pub p50_high: Option<f64>,
    pub p90_ms: Option<f64>,
    pub p95_ms: Option<f64>,
    pub p95_low: Option<f64>,
    pub p95_high: Option<f64>,
    pub p99_ms: Option<f64>,
    pub p99_low: Option<f64>,
    pub p99_high: Option<f64>,
    pub p999_ms: Option<f64>,
    pub p999_low: Option<f64>,
    pub p999_high: Option<f64>,
    pub max_ms: Option<f64>,
    pub inside_ms_p50: Option<f64>,
    pub d1_ms_p50: Option<f64>,
    pub rows_read_mean: Option<f64>,
    pub rows_written: Option<u64>,
    pub lag_p99_ms: f64,
    pub lag_max_ms: f64,
    pub behind_schedule: bool,
    /// How the Worker opened D1 for the reads: `none` (the plain binding) or the session's
    /// constraint (last, so the columns before it are where they were).
    pub session: SessionMode,
}

fn summary_row(s: &OpStats) -> SummaryRow {
    let p = |q: f64| s.latencies.percentile(q, CONFIDENCE);
    let ms = |q: f64| p(q).map(|p| p.ms);
    let low = |q: f64| p(q).and_then(|p| p.ci).map(|c| c.low);
    let high = |q: f64| p(q).and_then(|p| p.ci).map(|c| c.high);
    SummaryRow {
        target: s.key.target,
        table_rows: s.key.table_rows,
        index: s.key.index,
        preparation: s.key.preparation,
        op: s.key.op,
        rate: s.key.rate,
        n: s.n,
        ok: s.ok,
        refused: s.refused.iter().map(|(_, n)| n).sum(),
        refused_by_class: s
            .refused
            .iter()
            .map(|(k, n)| format!("{k}={n}"))
            .collect::<Vec<_>>()
            .join(";"),
        errors: s.errors,
        target_failed: s.target_failed,
        offered_per_s: s.offered_per_s,
        achieved_per_s: s.achieved_per_s,
        percentiles: "nearest-rank, order-statistic 95% intervals".into(),
        p50_ms: ms(0.5),
        p50_low: low(0.5),
        p50_high: high(0.5),
        p90_ms: ms(0.9),
        p95_ms: ms(0.95),
        p95_low: low(0.95),
        p95_high: high(0.95),
        p99_ms: ms(0.99),
        p99_low: low(0.99),
        p99_high: high(0.99),
        p999_ms: ms(0.999),
        p999_low: low(0.999),
        p999_high: high(0.999),
        max_ms: (!s.latencies.is_empty()).then(|| s.latencies.max_ms()),
        inside_ms_p50: s.inside_ms_p50,
        d1_ms_p50: s.d1_ms_p50,
        rows_read_mean: s.rows_read_mean,
        rows_written: s.rows_written,
        lag_p99_ms: s.lag_p99_ms,
        lag_max_ms: s.lag_max_ms,
        behind_schedule: s.behind,
        session: s.key.session,
    }
}

/// `12.3 (11.9–12.8)` in ms, or with the note of no interval.
pub(crate) fn cell(s: &OpStats, q: f64) -> String {
    if s.load.shows_capacity() {
        return "saturated".into();
    }
    match s.latencies.percentile(q, CONFIDENCE) {
        None => "-".into(),
        Some(p) => match p.ci {
            Some(ci) => format!("{} ({}–{})", num(p.ms), num(ci.low), num(ci.high)),
            None => format!("{} (n too small)", num(p.ms)),
        },
    }
}

/// The statements column of a point: its preparation, then its D1 session and retry policy
/// when it has them.
pub(crate) fn statements(key: &super::load_stats::Key) -> String {
    let mut out = key.preparation.to_string();
    if !key.session.is_none() {
        write!(out, ", session {}", key.session).unwrap();
    }
    if key.retry != crate::studies::workload::RetryKind::None {
        write!(out, ", retry {}", key.retry).unwrap();
    }
    out
}

/// The latency table: one line per operation at each point.
pub fn latency_table(stats: &[OpStats]) -> String {
    let mut out = String::from(
        "| target | rows | index | statements | operation | rate/s | n | ok | p50 ms | p90 ms | p95 ms | p99 ms | p99.9 ms | max ms | achieved/s | inside ms p50 | D1 ms p50 | rows read/req | generator lag p99 / max ms |\n\
         | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n",
    );
    for s in stats {
        let opt = |v: Option<f64>| v.map_or("-".to_owned(), num);
        writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.1} | {} | {} | {} | {} / {}{} |",
            s.key.target,
            s.key.table_rows,
            s.key.index,
            statements(&s.key),
            match s.key.ttl_s {
                Some(ttl) => format!("{} (TTL {ttl} s)", s.key.op),
                None => s.key.op.to_string(),
            },
            // A shard's share of a rate is the rate ÷ N but for the last bits of the division.
            crate::base::numbers::without_float_noise(s.key.rate),
            s.n,
            s.ok,
            cell(s, 0.5),
            cell(s, 0.9),
            cell(s, 0.95),
            cell(s, 0.99),
            cell(s, 0.999),
            if s.latencies.is_empty() { "-".into() } else { num(s.latencies.max_ms()) },
            s.achieved_per_s,
            opt(s.inside_ms_p50),
            opt(s.d1_ms_p50),
            opt(s.rows_read_mean),
            num(s.lag_p99_ms),
            num(s.lag_max_ms),
            if s.behind { " **behind**" } else { "" },
        )
        .unwrap();
    }
    out
}

/// The check lines: each seeding and the final check, per target.
fn checks_lines(checks: &[CheckRow]) -> String {
    let mut out = String::new();
    for c in checks {
        writeln!(
            out,
            "- {} `{}` at {} rows{}: {} rows expected, {} present; ids {}; content checksum {}{}{}",
            c.target,
            c.when,
            c.table_rows,
            if c.seed_batches > 0 {
                format!(
                    " (seeded in {} batches, {:.1} s)",
                    c.seed_batches,
                    c.seed_ms / 1000.0
                )
            } else {
                String::new()
            },
            c.rows_expected,
            c.rows_present,
            if c.id_sum_expected == c.id_sum_present && c.misplaced == 0 {
                "and groups as expected"
            } else {
                "DIFFER"
            },
            if c.checksum_expected == c.checksum_present {
                "equal"
            } else {
                "DIFFERS"
            },
            if c.writes_acknowledged + c.writes_unacknowledged_present > 0 {
                format!(
                    "; writes: {} acknowledged, {} missing, {} present twice, {} unacknowledged \
                     but present",
                    c.writes_acknowledged,
                    c.writes_missing,
                    c.writes_duplicated,
                    c.writes_unacknowledged_present
                )
            } else {
                String::new()
            },
            if c.reconciled {
                ": reconciled".to_owned()
            } else {
                format!(": NOT reconciled ({})", c.note)
            }
        )
        .unwrap();
    }
    out
}

/// `summary.md` of a workload run.
// Each argument is one part of the run read from its files by the caller; a struct of them
// would only be built here.
#[allow(clippy::too_many_arguments)]
pub fn markdown(
    record: &RunRecord,
    stats: &[OpStats],
    checks: &[CheckRow],
    cache: &[super::cache::TtlStats],
    placements: &[super::placement::Placement],
    paths: &str,
    charts: &[crate::reports::charts::Drawn],
    points: &[PointRow],
    shards: &str,
) -> String {
    let mut out = format!("# {}\n\n", title(record));
    if let Some(study) = record.studies.first() {
        writeln!(out, "{}\n", study.description).unwrap();
    }
    writeln!(
        out,
        "Run `{}` on `{}`, status **{}**; reproduce with `{}`.\n",
        record.run.id,
        record.run.target,
        record.run.status,
        provenance::command(record),
    )
    .unwrap();
    if let Some(totals) = &record.reconciliation {
        writeln!(out, "Reconciliation: {}.\n", totals.line("records")).unwrap();
    }
    out.push_str("## The table, checked\n\n");
    out.push_str(&checks_lines(checks));
    out.push_str(
        "\n## Latency\n\nEach request was due on a fixed timetable at the rate shown, whatever \
         the latency of earlier ones (open loop), and its latency runs from when it was due to \
         its whole answer, so queueing behind slow requests counts. Percentiles are nearest-rank \
         order statistics of the successful requests, read from an HDR histogram (3 significant \
         digits); in brackets each one's distribution-free order-statistic interval at 95% (see \
         `xtask/src/stats/order.rs`), which assumes independent requests: under queueing \
         neighbours are correlated and it is narrower than it should be. `n too small`: too \
         few requests for a 95% interval of that percentile.\n\n",
    );
    out.push_str(&latency_table(stats));
    let behind: Vec<&OpStats> = stats.iter().filter(|s| s.behind).collect();
    out.push_str("\n## Did the load generator keep its timetable?\n\n");
    if behind.is_empty() {
        writeln!(
            out,
            "Yes: at every point 99% of the requests left within {LAG_TOLERANCE_MS} ms of when \
             they were due (or a tenth of the time between two requests, if more)."
        )
        .unwrap();
    } else {
        let mut seen = Vec::new();
        for s in behind {
            let k = (
                s.key.target,
                s.key.table_rows,
                s.key.index,
                s.key.preparation,
                s.key.session,
                s.key.rate.to_bits(),
            );
            if seen.contains(&k) {
                continue;
            }
            seen.push(k);
            writeln!(
                out,
                "- **No** on {} at {} rows, index {}, statements {}, {}/s: its lag (due → sent) \
                 was {} ms at p99 and {} ms at most; the requests waited for a free slot or for \
                 the scheduler, and their latencies include that wait.",
                s.key.target,
                s.key.table_rows,
                s.key.index,
                statements(&s.key),
                s.key.rate,
                num(s.lag_p99_ms),
                num(s.lag_max_ms)
            )
            .unwrap();
        }
    }
    let refused: Vec<&OpStats> = stats.iter().filter(|s| s.ok < s.n).collect();
    if !refused.is_empty() {
        out.push_str("\n## Requests that did not succeed\n\n");
        for s in refused {
            writeln!(
                out,
                "- {} {}{} at {} rows, {}/s: {} of {} refused ({}), {} errors, {} unanswered",
                s.key.target,
                s.key.op,
                match s.key.session {
                    SessionMode::None => String::new(),
                    session => format!(" in a `{session}` session"),
                },
                s.key.table_rows,
                s.key.rate,
                s.refused.iter().map(|(_, n)| n).sum::<usize>(),
                s.n,
                summary_row(s).refused_by_class,
                s.errors,
                s.target_failed
            )
            .unwrap();
        }
    }
    out.push_str(shards);
    out.push_str(&super::capacity::section(stats, points));
    out.push_str(&super::contention::section(stats));
    out.push_str(paths);
    out.push_str(&super::placement::section(placements));
    out.push_str(&super::cache::section(cache));
    out.push_str(&claims_section(stats));
    out.push_str(&crate::reports::charts::section(charts));
    out.push_str(&provenance::time_section(record));
    out
}

/// The write-up's read-path claims tested at every point measured both ways, with their
/// equivalence tests: summary.md's section, which a run's page shows first. Empty for a run
/// that measured no claim.
pub fn claims_section(stats: &[OpStats]) -> String {
    let mut out = String::new();
    let answers = answers(stats);
    if !answers.is_empty() {
        out.push_str(
            "\n## The write-up's read-path claims, here\n\nEach ratio divides one setting's \
             latency percentile by the other's at the same table size, rate and operation; \
             its interval divides the two percentiles' order-statistic intervals at √95% each \
             (both hold together with at least the probability shown). The claims: a covering \
             index −40% (ratio 0.60), a reused prepared statement −15% (ratio 0.85). A claim \
             holds when the interval covers its ratio and not 1. The index is compared on the \
             aggregate only: point reads and range scans go by primary key and never use it. \
             Two clocks: `latency`, from when each request was due (what a client on the \
             timetable saw: when one setting's reads take longer than the time between requests, \
             a queue grows and this ratio measures it too), and `inside`, the operation alone \
             inside its invocation (whole milliseconds on the Worker's clock, so reads of under a \
             millisecond tie).\n\n",
        );
        out.push_str(&answers_table(&answers));
        if let Some(spread) = super::claims::control_spread(&answers)
            && answers
                .iter()
                .any(|a| a.design == super::claims::Design::Interleaved)
        {
            writeln!(out, "\n{spread}").unwrap();
        }
    }
    out
}

/// Writes `summary.csv` and `summary.md` of a workload run and the tables for the terminal.
pub fn render(run_dir: &RunDir, record: &RunRecord, titles: bool) -> Result<Rendered> {
    let rows: Vec<OpRow> = if csv::exists(&run_dir.results_csv()) {
        csv::read(&run_dir.results_csv())?
    } else {
        Vec::new()
    };
    let checks: Vec<CheckRow> = if run_dir.checks_csv().exists() {
        csv::read(&run_dir.checks_csv())?
    } else {
        Vec::new()
    };
    let point_rows: Vec<PointRow> = if run_dir.points_csv().exists() {
        csv::read(&run_dir.points_csv())?
    } else {
        Vec::new()
    };
    let stats = stats_capped(&rows, point_rows.first().map(|p| p.max_in_flight));
    let summary: Vec<SummaryRow> = stats.iter().map(summary_row).collect();
    csv::write(&run_dir.summary_csv(), &summary)?;
    let shards = crate::studies::workload::shard::section(run_dir, record, &rows, &stats)?;
    let cache = super::cache::stats(&rows);
    let mut drawn = super::chart::render(&run_dir.path, &stats, titles)?;
    drawn.extend(super::cache_chart::render(&run_dir.path, &cache, titles)?);
    drawn.extend(super::cache_chart::render_refusals(
        &run_dir.path,
        &stats,
        titles,
    )?);
    std::fs::write(
        run_dir.summary_md(),
        markdown(
            record,
            &stats,
            &checks,
            &cache,
            &super::placement::placements(&rows),
            &super::paths::section(&rows),
            &drawn,
            &point_rows,
            &shards,
        ),
    )
    .with_context(|| format!("cannot write {}", run_dir.summary_md().display()))?;
    let mut tables = format!(
        "latency from when each request was due (ms, 95% intervals):\n{}",
        latency_table(&stats)
    );
    let contention = super::contention::section(&stats);
    if !contention.is_empty() {
        tables.push_str(contention.trim_start());
        tables.push('\n');
    }
    let answers = answers(&stats);
    if !answers.is_empty() {
        tables.push_str(&format!("read-path claims:\n{}", answers_table(&answers)));
    }
    let cache = super::cache::section(&cache);
    if !cache.is_empty() {
        tables.push_str(cache.trim_start());
    }
    Ok(Rendered {
        charts: drawn.into_iter().flat_map(chart_files).collect(),
        tables,
    })
}

#[cfg(test)]
mod tests;
