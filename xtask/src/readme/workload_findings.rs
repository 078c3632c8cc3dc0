//! The README's workload figures, generated from the committed example workload runs
//! (`docs/example-workloads/read-path`, `workload-mix`, `write-contention` and `cache`) as the
//! sweep's findings are from `docs/example-run`: the read-path claims, the mix's latency against
//! the rate, the writes refused per rate and retry policy, and the cache's hit ratio and
//! staleness against the TTL, each from the run's own records; a test fails when the README and
//! the runs disagree.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context, Result};
use d1bench_core::workload::{IndexKind, Operation, Preparation};

use crate::base::numbers::num;
use crate::records::{RunRecord, RunStatus, csv};
use crate::reports::numbers::share_text;
use crate::stats::latencies::percentile_ratio;
use crate::stats::{CONFIDENCE, Latencies, Share};
use crate::studies::workload::RetryKind;
use crate::studies::workload::report::cache;
use crate::studies::workload::report::claims::{
    Answer, Clock, Comparison, Verdict, answers, ratio_text,
};
use crate::studies::workload::report::load_stats::{Key, OpStats, stats};
use crate::studies::workload::report::summary::cell;
use crate::studies::workload::row::OpRow;

/// Where the committed runs are, relative to the project root.
pub const READ_PATH: &str = "docs/example-workloads/read-path";
pub const MIX: &str = "docs/example-workloads/workload-mix";
pub const CACHE: &str = "docs/example-workloads/cache";
pub const CONTENTION: &str = "docs/example-workloads/write-contention";

/// A committed run: its record and its requests' statistics.
struct Run {
    record: RunRecord,
    rows: Vec<OpRow>,
    stats: Vec<OpStats>,
    requests: usize,
}

fn load(root: &Path, dir: &str) -> Result<Run> {
    let path = root.join(dir);
    let record = RunRecord::read(&path.join("run.toml"))
        .with_context(|| format!("{dir} is not a run d1bench can read"))?;
    let rows: Vec<OpRow> = csv::read(&path.join("results.csv"))
        .with_context(|| format!("{dir}/results.csv cannot be read"))?;
    // The run's own target: its SQLite baseline's requests are another runtime's figures.
    let rows: Vec<OpRow> = rows
        .into_iter()
        .filter(|r| r.target == record.run.target)
        .collect();
    let stats = stats(&rows);
    let requests = stats.iter().map(|s| s.n).sum();
    Ok(Run {
        record,
        rows,
        stats,
        requests,
    })
}

/// `(run `…` of `read-path` on `local`, profile `full`, commit `abc1234`, …)`.
fn provenance(dir: &str, run: &Run) -> String {
    let r = &run.record;
    let status = if r.run.status == RunStatus::Complete {
        "complete, every record reconciled".to_owned()
    } else {
        format!("status {:?}: not to be relied on", r.run.status)
    };
    let load = match (r.machine.load_at_start, r.machine.load_at_end) {
        (Some(a), Some(b)) => format!(", load average {a:.2} at the start and {b:.2} at the end"),
        _ => String::new(),
    };
    format!(
        "[`{dir}/`]({dir}/) (run `{}` of `{}` on `{}`, profile `{}`, commit `{}`, {} CPUs{load}; {} measured requests; {status})",
        r.run.id,
        r.run.experiment,
        r.run.target,
        r.run.profile,
        r.git.commit.short(7),
        r.machine.cpus,
        run.requests,
    )
}

/// `0.91 to 1.12`: the lowest and highest ratio of `answers`.
fn spread(answers: &[&Answer]) -> String {
    let lowest = answers
        .iter()
        .map(|a| a.ratio)
        .fold(f64::INFINITY, f64::min);
    let highest = answers.iter().map(|a| a.ratio).fold(0.0, f64::max);
    format!("{lowest:.2} to {highest:.2}")
}

/// `holds (…): 3; cannot tell (…): 1`: how many of `answers` got each verdict, in order of
/// first appearance.
fn verdicts(answers: &[&Answer]) -> String {
    let mut counted: Vec<(Verdict, usize)> = Vec::new();
    for a in answers {
        match counted.iter_mut().find(|(v, _)| *v == a.verdict()) {
            Some((_, n)) => *n += 1,
            None => counted.push((a.verdict(), 1)),
        }
    }
    counted
        .iter()
        .map(|(verdict, n)| format!("{verdict}: {n}"))
        .collect::<Vec<_>>()
        .join("; ")
}

/// Point reads at the largest table, reused statements, outside any session: p50, p95 and p99
/// with each index, and covering ÷ key at each.
fn point_reads_at_largest(out: &mut String, stats: &[OpStats]) {
    let Some(largest) = stats.iter().map(|s| s.key.table_rows).max() else {
        return;
    };
    let find = |index: IndexKind| {
        stats.iter().find(|s| {
            s.key.table_rows == largest
                && s.key.op == Operation::PointRead
                && s.key.index == index
                && s.key.preparation == Preparation::Reuse
                && s.key.session.is_none()
        })
    };
    let (Some(key), Some(covering)) = (find(IndexKind::Key), find(IndexKind::Covering)) else {
        return;
    };
    writeln!(
        out,
        "\n- **Point reads at the largest table** ({largest} rows, reused statements, no \
         session), latency from the due time in ms (95% intervals), and covering ÷ key \
         (interval, coverage):\n\n| percentile | key index | covering index | covering ÷ key |\n\
         | --- | --- | --- | --- |"
    )
    .unwrap();
    for q in [0.5, 0.95, 0.99] {
        let ratio = percentile_ratio(&covering.latencies, &key.latencies, q)
            .map_or_else(|| "-".to_owned(), |(r, ci)| ratio_text(r, ci));
        writeln!(
            out,
            "| p{} | {} | {} | {ratio} |",
            (q * 100.0).round(),
            cell(key, q),
            cell(covering, q)
        )
        .unwrap();
    }
}

/// The README section from the two committed runs under `root`.
pub fn section(root: &Path) -> Result<String> {
    let read = load(root, READ_PATH)?;
    let mix = load(root, MIX)?;
    let mut out = String::new();
    writeln!(out, "From {}:\n", provenance(READ_PATH, &read)).unwrap();
    // The p50 of the latency from the due time: what a client on the timetable saw.
    let p50: Vec<Answer> = answers(&read.stats)
        .into_iter()
        .filter(|a| a.clock == Clock::Latency && a.q == 0.5)
        .collect();
    let of = |what: Comparison| -> Vec<&Answer> { p50.iter().filter(|a| a.what == what).collect() };
    let (covering, control, reuse) = (
        of(Comparison::CoveringIndex),
        of(Comparison::IndexControl),
        of(Comparison::ReusedStatement),
    );
    out.push_str(
        "- **Covering index, claimed −40% (a ratio of 0.60)**, on the aggregate (the read the \
         index serves), p50 latency from the due time, covering ÷ key (interval, coverage):\n\n\
         | rows | statements | covering ÷ key | verdict |\n| --- | --- | --- | --- |\n",
    );
    for a in &covering {
        writeln!(
            out,
            "| {} | {} | {} | {} |",
            a.key.table_rows,
            crate::studies::workload::report::summary::statements(&a.key),
            ratio_text(a.ratio, a.ci),
            a.verdict()
        )
        .unwrap();
    }
    point_reads_at_largest(&mut out, &read.stats);
    if !control.is_empty() {
        writeln!(
            out,
            "\n- **The control, covering ÷ key on the reads by primary key** (point reads and \
             range scans, which neither index serves; expected 1), p50 latency from the due time, \
             over the {} settings measured both ways: ratios {}; {}. The settings run one after \
             the other, so a ratio away from 1 here is drift between their runs, and the claims' \
             ratios carry as much.",
            control.len(),
            spread(&control),
            verdicts(&control)
        )
        .unwrap();
    }
    if !reuse.is_empty() {
        writeln!(
            out,
            "\n- **Reused prepared statements, claimed −15% (0.85)**, reuse ÷ per-call at p50 \
             latency from the due time, over the {} reads and settings measured both ways: \
             ratios {}; {}.",
            reuse.len(),
            spread(&reuse),
            verdicts(&reuse)
        )
        .unwrap();
    }
    writeln!(
        out,
        "\nFrom {}, point reads and single writes, latency from the due time in ms (95% \
         intervals):\n\n| rate/s (all requests) | point read p50 | point read p99 | write p50 | write p99 | generator |\n| --- | --- | --- | --- | --- | --- |",
        provenance(MIX, &mix)
    )
    .unwrap();
    let mut rates: Vec<f64> = Vec::new();
    for s in &mix.stats {
        if !rates.contains(&s.key.rate) {
            rates.push(s.key.rate);
        }
    }
    for rate in rates {
        let of = |op: Operation| {
            mix.stats
                .iter()
                .find(|s| s.key.rate == rate && s.key.op == op)
        };
        let at = |op: Operation, q: f64| of(op).map_or("-".to_owned(), |s| cell(s, q));
        let behind = mix
            .stats
            .iter()
            .filter(|s| s.key.rate == rate)
            .find(|s| s.behind);
        let generator = match behind {
            Some(s) => format!("behind its timetable (lag p99 {} ms)", num(s.lag_p99_ms)),
            None => "on time".to_owned(),
        };
        let refused: usize = mix
            .stats
            .iter()
            .filter(|s| s.key.rate == rate)
            .map(|s| s.n - s.ok)
            .sum();
        let generator = if refused > 0 {
            format!("{generator}; {refused} requests not ok")
        } else {
            generator
        };
        writeln!(
            out,
            "| {rate} | {} | {} | {} | {} | {generator} |",
            at(Operation::PointRead, 0.5),
            at(Operation::PointRead, 0.99),
            at(Operation::Write, 0.5),
            at(Operation::Write, 0.99),
        )
        .unwrap();
    }
    contention_lines(&mut out, &load(root, CONTENTION)?);
    cache_lines(&mut out, &load(root, CACHE)?);
    let runtime = match read.record.run.target {
        crate::base::TargetKind::Local => "workerd's SQLite on this machine",
        crate::base::TargetKind::Sqlite => "bare SQLite in-process, not D1",
        crate::base::TargetKind::Remote => "Cloudflare's D1",
    };
    writeln!(
        out,
        "\nThese are figures of {runtime}: compare ratios, not milliseconds, with production."
    )
    .unwrap();
    Ok(out)
}

/// The write-contention run: per row rate and write operation, the share of writes refused at
/// their last attempt under each retry policy (without retries that is the first attempt), and
/// goodput and latency without retries.
fn contention_lines(out: &mut String, run: &Run) {
    writeln!(
        out,
        "\nFrom {}, single writes (one row a request) and batched writes (one `db.batch()` of \
         several rows) at the same row rates; the share of writes refused at their last attempt \
         (95% Wilson intervals) under no retry, a fixed delay and exponential backoff with full \
         jitter; goodput and latency from the due time (ms, 95% intervals) without retries:\n\n\
         | rows/s offered | operation | refused, no retry | refused, fixed delay | refused, exponential | goodput rows/s | p50 | p99 | generator |\n\
         | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        provenance(CONTENTION, run)
    )
    .unwrap();
    let writes = run.stats.iter().filter(|s| s.key.op.writes());
    for plain in writes.clone().filter(|s| s.key.retry == RetryKind::None) {
        let refused = |retry: RetryKind| {
            writes
                .clone()
                .find(|s| s.key == Key { retry, ..plain.key })
                .and_then(|s| Share::of(s.n - s.ok, s.n))
                .map_or("-".to_owned(), |share| share_text(&share))
        };
        writeln!(
            out,
            "| {:.0} | {} × {} | {} | {} | {} | {:.1} | {} | {} | {} |",
            plain.offered_rows_per_s,
            plain.key.op,
            plain.op_rows,
            refused(RetryKind::None),
            refused(RetryKind::Fixed),
            refused(RetryKind::Exponential),
            plain.goodput_rows_per_s,
            cell(plain, 0.5),
            cell(plain, 0.99),
            if plain.behind {
                format!("behind (lag p99 {} ms)", num(plain.lag_p99_ms))
            } else {
                "on time".to_owned()
            }
        )
        .unwrap();
    }
}

/// The cache run's hit ratio, latencies and staleness per TTL.
fn cache_lines(out: &mut String, run: &Run) {
    let p50 = |latencies: &Latencies| match latencies.percentile(0.5, CONFIDENCE) {
        None => "-".to_owned(),
        Some(p) => match p.ci {
            Some(ci) => format!("{} ({}–{})", num(p.ms), num(ci.low), num(ci.high)),
            None => format!("{} (n too small)", num(p.ms)),
        },
    };
    writeln!(
        out,
        "\nFrom {}, cached reads through Workers KV while updates (not invalidating the cache) \
         bump the same rows' versions; hit ratio and stale share with 95% Wilson intervals, \
         latency from the due time and staleness in ms with 95% intervals:\n\n\
         | TTL (s) | cached reads | hit ratio | hit p50 | miss p50 | stale share | staleness p50 | staleness max |\n\
         | --- | --- | --- | --- | --- | --- | --- | --- |",
        provenance(CACHE, run)
    )
    .unwrap();
    for s in cache::stats(&run.rows) {
        let share = |share: Option<Share>| share.map_or("-".to_owned(), |s| share_text(&s));
        let (stale_p50, stale_max) = if s.stale == 0 {
            ("none stale".to_owned(), "-".to_owned())
        } else {
            (p50(&s.staleness), num(s.staleness.max_ms()))
        };
        writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {stale_p50} | {stale_max} |",
            s.ttl_s,
            s.reads,
            share(s.hit_ratio()),
            p50(&s.hit_latency),
            p50(&s.miss_latency),
            share(s.stale_share()),
        )
        .unwrap();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paths::project_root;

    /// Whether the README quotes this text is checked in [`crate::readme`].
    #[test]
    fn the_example_workloads_answer_the_read_path_contention_and_cache_questions() {
        let root = project_root();
        let expected = section(&root).unwrap();
        assert!(expected.contains("covering ÷ key"), "{expected}");
        // The question, point reads at the largest table with each index, and the
        // control that says how much drift the ratios carry.
        assert!(
            expected.contains("| percentile | key index | covering index | covering ÷ key |"),
            "{expected}"
        );
        assert!(
            expected.contains("**The control, covering ÷ key"),
            "{expected}"
        );
        assert!(expected.contains("| 400 |"), "{expected}");
        assert!(
            expected.contains("| rows/s offered | operation | refused, no retry |"),
            "{expected}"
        );
        assert!(
            expected.contains("| TTL (s) | cached reads | hit ratio"),
            "{expected}"
        );
    }
}
