//! The README's workload figures, generated from the committed example workload runs
//! (`docs/example-workloads/read-path`, `workload-mix` and `cache`) as the sweep's findings are
//! from `docs/example-run`: the read-path claims, the mix's latency against the rate and the
//! cache's hit ratio and staleness against the TTL, each from the run's own records; a test
//! fails when the README and the runs disagree.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context, Result};
use d1bench_core::workload::Operation;

use super::cache::{self, Share};
use super::claims::{Answer, answers};
use super::load_stats::{OpStats, stats};
use super::quantiles::Latencies;
use super::stats::CONFIDENCE;
use super::workload::{cell, num};
use crate::records::workload_row::OpRow;
use crate::records::{RunRecord, RunStatus, csv};

pub const BEGIN: &str = "<!-- workloads:begin -->";
pub const END: &str = "<!-- workloads:end -->";
/// Where the committed runs are, relative to the project root.
pub const READ_PATH: &str = "docs/example-workloads/read-path";
pub const MIX: &str = "docs/example-workloads/workload-mix";
pub const CACHE: &str = "docs/example-workloads/cache";

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
        &r.git.commit[..r.git.commit.len().min(7)],
        r.machine.cpus,
        run.requests,
    )
}

fn ratio(a: &Answer) -> String {
    match a.ci {
        Some(ci) => format!(
            "{:.2} ({:.2}–{:.2}, {:.1}%)",
            a.ratio,
            ci.low,
            ci.high,
            ci.coverage * 100.0
        ),
        None => format!("{:.2} (no interval)", a.ratio),
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
        .filter(|a| a.clock == "latency" && a.q == 0.5)
        .collect();
    let (covering, reuse): (Vec<&Answer>, Vec<&Answer>) =
        p50.iter().partition(|a| a.what.starts_with("covering"));
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
            super::workload::statements(&a.key),
            ratio(a),
            a.verdict()
        )
        .unwrap();
    }
    if !reuse.is_empty() {
        let lowest = reuse.iter().map(|a| a.ratio).fold(f64::INFINITY, f64::min);
        let highest = reuse.iter().map(|a| a.ratio).fold(0.0, f64::max);
        let mut verdicts: Vec<(&str, usize)> = Vec::new();
        for a in &reuse {
            match verdicts.iter_mut().find(|(v, _)| *v == a.verdict()) {
                Some((_, n)) => *n += 1,
                None => verdicts.push((a.verdict(), 1)),
            }
        }
        let counted: Vec<String> = verdicts
            .iter()
            .map(|(verdict, n)| format!("{verdict}: {n}"))
            .collect();
        writeln!(
            out,
            "\n- **Reused prepared statements, claimed −15% (0.85)**, reuse ÷ per-call at p50 \
             latency from the due time, over the {} reads and settings measured both ways: \
             ratios {:.2} to {:.2}; {}.",
            reuse.len(),
            lowest,
            highest,
            counted.join("; ")
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
    cache_lines(&mut out, &load(root, CACHE)?);
    let runtime = match read.record.run.target {
        crate::flags::TargetKind::Local => "workerd's SQLite on this machine",
        crate::flags::TargetKind::Sqlite => "bare SQLite in-process, not D1",
        crate::flags::TargetKind::Remote => "Cloudflare's D1",
    };
    writeln!(
        out,
        "\nThese are figures of {runtime}: compare ratios, not milliseconds, with production."
    )
    .unwrap();
    Ok(out)
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
        let share = |share: Option<Share>| share.map_or("-".to_owned(), |s| s.text());
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

/// `readme` with the text between the workload markers replaced by `section`.
pub fn replace_section(readme: &str, section: &str) -> Result<String> {
    super::parity::replace_between(readme, BEGIN, END, section)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paths::project_root;

    #[test]
    fn the_readme_states_the_example_workloads_as_their_files_give_them() {
        let root = project_root();
        let expected = section(&root).unwrap();
        let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
        assert_eq!(
            replace_section(&readme, &expected).unwrap(),
            readme,
            "README.md's workload figures differ from docs/example-workloads: run `cargo xtask \
             parity-readme` to write them"
        );
        assert!(expected.contains("covering ÷ key"), "{expected}");
        assert!(expected.contains("| 400 |"), "{expected}");
        assert!(
            expected.contains("| TTL (s) | cached reads | hit ratio"),
            "{expected}"
        );
    }
}
