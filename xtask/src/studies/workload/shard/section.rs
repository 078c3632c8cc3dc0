//! The shards' part of a workload run's reports: a shard run writes its `histograms.csv` and
//! says which share it offered; a merged run says which shards it was made from (and which
//! were missing), judges each shard on its own beside the whole, and sets its shards'
//! histograms, added, against the percentiles its records give.

use std::fmt::Write as _;

use anyhow::Result;

use super::histograms::{self, HistogramRow, MERGED};
use crate::base::numbers::num;
use crate::records::shard::Merged;
use crate::records::{RunDir, RunRecord, csv};
use crate::stats::CONFIDENCE;
use crate::studies::workload::report::load_stats::OpStats;
use crate::studies::workload::row::{OpRow, Phase};
use std::collections::BTreeMap;

/// `2026-12-06T16:10:00.123Z` of a time in ms since 1970.
fn utc_ms(unix_ms: f64) -> String {
    let (rfc, _) = crate::base::clock::utc((unix_ms / 1000.0) as u64);
    let ms = (unix_ms.rem_euclid(1000.0)) as u32;
    format!("{}.{ms:03}Z", rfc.trim_end_matches('Z'))
}

/// Writes a shard run's `histograms.csv` from its statistics; the section of summary.md on
/// the run's shards (empty for a whole run).
pub fn section(
    run_dir: &RunDir,
    record: &RunRecord,
    results: &[OpRow],
    stats: &[OpStats],
) -> Result<String> {
    if let Some(merged) = &record.merged {
        let rows: Vec<HistogramRow> = if csv::exists(&run_dir.histograms_csv()) {
            csv::read(&run_dir.histograms_csv())?
        } else {
            Vec::new()
        };
        let command = crate::reports::provenance::command(record);
        let intro = match merged.shared_target {
            true => shared_intro(merged, record, &command, results),
            false => merged_intro(merged, &command),
        };
        return Ok(merged_section(merged, &intro, &rows, stats));
    }
    let Some(shard) = record.run.shard else {
        return Ok(String::new());
    };
    let rows = histograms::of_stats(stats, &shard.to_string(), record.run.clock_zero_unix_ms)?;
    csv::write(&run_dir.histograms_csv(), &rows)?;
    let mut out = String::from("\n## Shard\n\n");
    writeln!(
        out,
        "This run is shard {shard} (`--shard {shard}`): of each timetable it offered requests \
         {}, {}, {}, … (counting from 1), at the rate ÷ {}, so the rates above are its share \
         of the plan's{}. `histograms.csv` holds, per point and arm, its successful requests' \
         latency histogram (HdrHistogram's V2 serialization) with its counts, refusals, \
         retries, rates and lag, which `cargo xtask merge` adds to the other shards'.",
        shard.index,
        shard.index + shard.of,
        shard.index + 2 * shard.of,
        shard.of,
        record
            .run
            .clock_zero_unix_ms
            .map_or(String::new(), |z| format!(
                "; its clock started at {}",
                utc_ms(z)
            ))
    )
    .unwrap();
    Ok(out)
}

/// The section of a merged run.
fn merged_section(
    merged: &Merged,
    intro: &str,
    rows: &[HistogramRow],
    stats: &[OpStats],
) -> String {
    let mut out = String::from("\n## Shards\n\n");
    out.push_str(intro);
    out.push_str(
        "| shard | run | status | CPU | clock offset ms |\n| --- | --- | --- | --- | --- |\n",
    );
    for s in &merged.shards {
        writeln!(
            out,
            "| {}/{} | `{}` | {} | {} × {} | {} |",
            s.index,
            merged.of,
            s.run,
            s.status,
            s.cpus,
            s.cpu,
            num(s.clock_offset_ms)
        )
        .unwrap();
    }
    merged_rest(out, merged, rows, stats)
}

/// The first paragraph of a merged run's section.
fn merged_intro(merged: &Merged, command: &str) -> String {
    let mut out = String::new();
    writeln!(
        out,
        "Merged by `cargo xtask merge` from {} of {} shard runs of one plan (the same commit, \
         experiment file, profile and seeds), each offering one request in {} of each \
         timetable at the rate ÷ {}, their clocks lined up by UTC. Its records are theirs \
         together, so every table above judges the whole load; each shard's own judgment is \
         below. Made again by `{} --shard K/{}` for K = 1 to {}, each its own process (or \
         runner), then `cargo xtask merge` of their run directories.\n",
        merged.shards.len(),
        merged.of,
        merged.of,
        merged.of,
        command,
        merged.of,
        merged.of
    )
    .unwrap();
    out
}

/// The first paragraph of a run whose shards shared one target (`run --shards N`): how it was
/// made, and how closely the shards' measured phases started together.
fn shared_intro(merged: &Merged, record: &RunRecord, command: &str, results: &[OpRow]) -> String {
    let of = merged.of as u64;
    // Each measured phase's start, per point and shard (a request's place says its shard).
    let mut starts: BTreeMap<(String, usize), BTreeMap<u64, f64>> = BTreeMap::new();
    for r in results.iter().filter(|r| r.phase == Phase::Measure) {
        starts
            .entry((r.target.to_string(), r.point))
            .or_default()
            .insert(r.seq % of, r.started_ms);
    }
    let spread = starts
        .values()
        .filter(|by_shard| by_shard.len() > 1)
        .map(|by_shard| {
            let (lo, hi) = by_shard
                .values()
                .fold((f64::MAX, f64::MIN), |(lo, hi), t| (lo.min(*t), hi.max(*t)));
            hi - lo
        })
        .fold(None, |most: Option<f64>, s| {
            Some(most.map_or(s, |m| m.max(s)))
        });
    format!(
        "Made by `{command} --shards {of}` on one machine: {of} shard processes loaded one \
         {target} target together ({what}), which a coordinator process started, seeded and \
         indexed before they loaded each size of the table, and checked after (checks.csv is \
         its: every shard's acknowledged writes must be in the table exactly once). Each shard \
         offered one request in {of} of each timetable at the rate ÷ {of}; the shards met \
         before each point's calibration and before its measured phase and started them \
         together, in UTC, {aligned}. Shard 1 alone measured each point's service time, one \
         request at a time, and every shard capped its rate on it. Its records are the shards' \
         together, so every table above judges the whole load on the one target; each shard's \
         own judgment is below. `cargo xtask merge` of the shard runs (in the `-shards` \
         directory beside this run) makes the same run again, without the coordinator's \
         checks.\n\n",
        target = record.run.target,
        what = match record.run.target {
            crate::base::TargetKind::Local => "one `wrangler dev`, one local D1",
            _ => "one SQLite file in WAL mode, each process with its own connections",
        },
        aligned = match spread {
            Some(ms) => format!(
                "their measured phases starting at most {} ms apart (the largest over points)",
                num(ms)
            ),
            None => "though no point had records of two shards to compare".to_owned(),
        },
    )
}

/// The rest of a merged run's section: the missing shards, each shard on its own, the
/// histograms added.
fn merged_rest(
    mut out: String,
    merged: &Merged,
    rows: &[HistogramRow],
    stats: &[OpStats],
) -> String {
    if !merged.missing.is_empty() {
        let missing: Vec<String> = merged
            .missing
            .iter()
            .map(|k| format!("{k}/{}", merged.of))
            .collect();
        writeln!(
            out,
            "\n**Shards missing** (`--allow-missing`): {}. Their requests were never sent: \
             the rates above are what the {} present shards offered, {} of the plan's.",
            missing.join(", "),
            merged.shards.len(),
            format_args!("{}/{}", merged.shards.len(), merged.of)
        )
        .unwrap();
    }
    let own: Vec<&HistogramRow> = rows.iter().filter(|r| r.shard != MERGED).collect();
    if !own.is_empty() {
        out.push_str(
            "\n### Each shard on its own\n\nAs each shard's own records judged it, per point \
             (its arms together): what it offered and achieved, its generator's own lateness (a \
             shard that could not keep its timetable says so), and how the point ran as its \
             requests saw it.\n\n\
             | shard | target | point | operations | offered/s | achieved/s | generator late \
             p99 ms | behind | load |\n\
             | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n",
        );
        let mut points: Vec<(&HistogramRow, Vec<String>, f64, f64, bool)> = Vec::new();
        for r in own {
            let same = |p: &&mut (&HistogramRow, Vec<String>, f64, f64, bool)| {
                p.0.shard == r.shard && p.0.target == r.target && p.0.point == r.point
            };
            match points.iter_mut().find(|p| same(p)) {
                Some(p) => {
                    if !p.1.contains(&r.op.to_string()) {
                        p.1.push(r.op.to_string());
                    }
                    p.2 += r.offered_per_s;
                    p.3 += r.achieved_per_s;
                    p.4 |= r.behind;
                }
                None => points.push((
                    r,
                    vec![r.op.to_string()],
                    r.offered_per_s,
                    r.achieved_per_s,
                    r.behind,
                )),
            }
        }
        for (r, ops, offered, achieved, behind) in points {
            writeln!(
                out,
                "| {} | {} | {} | {} | {offered:.1} | {achieved:.1} | {} | {} | {} |",
                r.shard,
                r.target,
                r.point,
                ops.join(", "),
                r.late_p99_ms.map_or("-".to_owned(), num),
                if behind { "**yes**" } else { "no" },
                r.load
            )
            .unwrap();
        }
    }
    let added: Vec<&HistogramRow> = rows.iter().filter(|r| r.shard == MERGED).collect();
    if !added.is_empty() {
        out.push_str(
            "\n### The shards' histograms, added\n\nPer arm, the shards' HDR histograms added \
             exactly (`histograms.csv`, rows `merged`), against the percentiles the latency \
             table reads from the records; the histogram keeps every value within 0.1% (3 \
             significant digits), so the two agree within that.\n\n\
             | target | point | operation | index, statements | n ok | p50 ms | p95 ms | p99 ms | \
             largest difference from the records ms |\n\
             | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n",
        );
        for r in added {
            let from_records = stats.iter().find(|s| {
                (
                    s.key.target,
                    s.point,
                    s.key.index,
                    s.key.preparation,
                    s.key.session,
                    s.key.op,
                    s.key.retry,
                    s.key.ttl_s.map_or(0, f64::to_bits),
                ) == r.arm()
            });
            let difference = from_records.map(|s| {
                [(0.5, r.p50_ms), (0.95, r.p95_ms), (0.99, r.p99_ms)]
                    .into_iter()
                    .map(|(q, added)| {
                        let records = s.latencies.percentile(q, CONFIDENCE).map(|p| p.ms);
                        match (records, added) {
                            (Some(a), Some(b)) => (a - b).abs(),
                            (None, None) => 0.0,
                            _ => f64::INFINITY,
                        }
                    })
                    .fold(0.0, f64::max)
            });
            let ms = |v: Option<f64>| v.map_or("-".to_owned(), num);
            writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                r.target,
                r.point,
                r.op,
                arm_words(r),
                r.ok,
                ms(r.p50_ms),
                ms(r.p95_ms),
                ms(r.p99_ms),
                difference.map_or("no such arm in the records".to_owned(), num)
            )
            .unwrap();
        }
    }
    out
}

/// `key, reuse` (with the session and retry policy when the arm has them).
fn arm_words(r: &HistogramRow) -> String {
    let mut out = format!("{}, {}", r.index, r.preparation);
    if !r.session.is_none() {
        write!(out, ", session {}", r.session).unwrap();
    }
    if r.retry != crate::studies::workload::RetryKind::None {
        write!(out, ", retry {}", r.retry).unwrap();
    }
    out
}
