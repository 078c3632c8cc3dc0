//! One run made of a workload's shard runs (`cargo xtask merge`): the runs read and checked to
//! be the shards of one run, refused otherwise with the files named ([`read`], [`check`]);
//! then their records put on one timetable, each request at its rate summed over the shards
//! and its times moved onto the earliest shard's clock, their checks and points together,
//! their histograms added exactly, and one run.toml saying how it was made ([`merge`]). Every
//! report of the merged run is then written from those files as for any run.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Result;

use super::histograms::{self, HistogramRow};
use crate::base::TargetKind;
use crate::records::run_history::Planned;
use crate::records::shard::{Merged, MergedShard, Shard, ShardRefusal};
use crate::records::{RunDir, RunRecord, RunStatus, StudyKind, Totals, csv};
use crate::studies::workload::row::{CheckRow, OpRow, Phase, PointRow};

/// A shard run as `merge` was given it.
#[derive(Debug, Clone)]
pub struct ShardRun {
    pub dir: PathBuf,
    pub record: RunRecord,
    pub shard: Shard,
}

impl ShardRun {
    fn toml(&self) -> String {
        self.dir.join("run.toml").display().to_string()
    }
}

fn refuse(message: String) -> anyhow::Error {
    ShardRefusal(message).into()
}

/// Each directory's run, refused unless it is a workload's shard run.
pub fn read(dirs: &[PathBuf]) -> Result<Vec<ShardRun>> {
    dirs.iter()
        .map(|dir| {
            let toml = dir.join("run.toml");
            let record = RunRecord::read(&toml)
                .map_err(|e| refuse(format!("{}: not a run ({e:#})", toml.display())))?;
            if record.run.kind != StudyKind::Workload {
                return Err(refuse(format!(
                    "{}: `{}` is not a workload run: only workloads are run in shards",
                    toml.display(),
                    record.run.experiment
                )));
            }
            let Some(shard) = record.run.shard else {
                return Err(refuse(format!(
                    "{}: not a shard run (its [run] has no `shard`): merge takes the runs of \
                     `cargo xtask run {} --shard K/N`",
                    toml.display(),
                    record.run.experiment
                )));
            };
            Ok(ShardRun {
                dir: dir.clone(),
                record,
                shard,
            })
        })
        .collect()
}

/// What two runs of one plan must share, each as (what it is, its value in the run).
fn plan_of(r: &RunRecord) -> Vec<(&'static str, String)> {
    vec![
        ("experiment", r.run.experiment.clone()),
        ("profile", r.run.profile.clone()),
        ("target", r.run.target.to_string()),
        (
            "baseline",
            r.run.baseline.map_or("none".into(), |b| b.to_string()),
        ),
        (
            "experiment file (SHA-256)",
            r.studies
                .iter()
                .map(|s| format!("{} {}", s.file, s.sha256))
                .collect::<Vec<_>>()
                .join(", "),
        ),
        ("commit", r.git.revision().to_string()),
        (
            "order seed",
            r.run.order_seed.map_or("none".into(), |s| s.to_string()),
        ),
    ]
}

/// Refuses runs that are not the shards of one run: a plan, commit, seed or N that differs
/// (the two files named with their values), a shard given twice, a run that did not end, or a
/// shard missing unless `allow_missing`. The shards missing, in order.
pub fn check(runs: &mut [ShardRun], allow_missing: bool) -> Result<Vec<u32>> {
    let Some(first) = runs.first().cloned() else {
        return Err(refuse("no shard run given".into()));
    };
    for run in runs.iter() {
        if run.shard.of != first.shard.of {
            return Err(refuse(format!(
                "{} is shard {} and {} is shard {}: the shards of one run share N",
                first.toml(),
                first.shard,
                run.toml(),
                run.shard
            )));
        }
        for ((what, a), (_, b)) in plan_of(&first.record).into_iter().zip(plan_of(&run.record)) {
            if a != b {
                return Err(refuse(format!(
                    "{} and {} are not shards of one run: their {what} differs ({a} and {b})",
                    first.toml(),
                    run.toml()
                )));
            }
        }
        if !matches!(
            run.record.run.status,
            RunStatus::Complete | RunStatus::Invalid
        ) {
            return Err(refuse(format!(
                "{}: shard {} did not end (status {}): run it again",
                run.toml(),
                run.shard,
                run.record.run.status
            )));
        }
    }
    runs.sort_by_key(|r| r.shard.index);
    for pair in runs.windows(2) {
        if pair[0].shard == pair[1].shard {
            let same = pair[0].dir == pair[1].dir
                || matches!(
                    (std::fs::canonicalize(&pair[0].dir), std::fs::canonicalize(&pair[1].dir)),
                    (Ok(a), Ok(b)) if a == b
                );
            return Err(refuse(format!(
                "shard {} is given twice: {}{}",
                pair[0].shard,
                pair[0].toml(),
                if same {
                    " (the same run, named twice)".to_owned()
                } else {
                    format!(" and {}", pair[1].toml())
                }
            )));
        }
    }
    let missing: Vec<u32> = (1..=first.shard.of)
        .filter(|k| !runs.iter().any(|r| r.shard.index == *k))
        .collect();
    if !missing.is_empty() && !allow_missing {
        let names = |ks: &[u32]| {
            ks.iter()
                .map(|k| format!("{k}/{}", first.shard.of))
                .collect::<Vec<_>>()
                .join(", ")
        };
        return Err(refuse(format!(
            "shard{} {} {} missing (given: {}); merge them all, or pass --allow-missing to \
             merge what is there and say what was offered",
            if missing.len() == 1 { "" } else { "s" },
            names(&missing),
            if missing.len() == 1 { "is" } else { "are" },
            runs.iter()
                .map(|r| format!("{} in {}", r.shard, r.toml()))
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    Ok(missing)
}

/// Each measured point's request rate summed over the shards, by target and point: what the
/// shards offered together.
fn rates_offered(shards: &[Vec<OpRow>]) -> BTreeMap<(TargetKind, usize), f64> {
    let mut sum: BTreeMap<(TargetKind, usize), f64> = BTreeMap::new();
    for rows in shards {
        let mut mine: BTreeMap<(TargetKind, usize), f64> = BTreeMap::new();
        for r in rows.iter().filter(|r| r.phase != Phase::Calibrate) {
            mine.insert((r.target, r.point), r.rate);
        }
        for (key, rate) in mine {
            *sum.entry(key).or_default() += rate;
        }
    }
    // N shares of a rate, summed, are the rate again but for the last bits of the division.
    for rate in sum.values_mut() {
        *rate = crate::base::numbers::without_float_noise(*rate);
    }
    sum
}

/// The shards' rows of `file` (each run's, in shard order), read.
fn each<T: serde::de::DeserializeOwned>(
    runs: &[ShardRun],
    file: impl Fn(&RunDir) -> PathBuf,
) -> Result<Vec<Vec<T>>> {
    runs.iter()
        .map(|r| {
            let path = file(&RunDir::new(r.dir.clone()));
            if !csv::exists(&path) {
                return Err(refuse(format!(
                    "{}: missing: shard {} has no such records (was its run's report written?)",
                    path.display(),
                    r.shard
                )));
            }
            csv::read(&path)
        })
        .collect()
}

/// The shards' points.csv rows of each point as one: rates, caps on requests in flight and CPU
/// summed, service times averaged, the longest measured time.
fn merged_points(shards: Vec<Vec<PointRow>>) -> Vec<PointRow> {
    let mut out: Vec<(PointRow, usize)> = Vec::new();
    for p in shards.into_iter().flatten() {
        match out
            .iter_mut()
            .find(|(q, _)| q.target == p.target && q.point == p.point)
        {
            None => out.push((p, 1)),
            Some((q, n)) => {
                *n += 1;
                let k = *n as f64;
                q.rate_planned += p.rate_planned;
                q.rate += p.rate;
                q.service_inside_ms += (p.service_inside_ms - q.service_inside_ms) / k;
                q.service_d1_ms = q
                    .service_d1_ms
                    .zip(p.service_d1_ms)
                    .map(|(a, b)| a + (b - a) / k);
                q.max_in_flight += p.max_in_flight;
                q.measured_s = q.measured_s.max(p.measured_s);
                q.cpu_generator_s += p.cpu_generator_s;
                q.cpu_workerd_s += p.cpu_workerd_s;
                q.cpu_wrangler_s += p.cpu_wrangler_s;
                q.cpu_senders_s = q.cpu_senders_s.zip(p.cpu_senders_s).map(|(a, b)| a + b);
            }
        }
    }
    out.into_iter()
        .map(|(p, _)| PointRow {
            utilisation: p.rate * p.service_inside_ms / 1000.0,
            ..p
        })
        .collect()
}

/// Writes the merged run of `runs` (checked by [`check`], in shard order; `missing` the shards
/// absent) into `out`: results.csv, checks.csv, points.csv, histograms.csv and run.toml. The
/// merged run's record.
pub fn merge(runs: &[ShardRun], missing: &[u32], out: &RunDir) -> Result<RunRecord> {
    let zeros: Vec<f64> = runs
        .iter()
        .map(|r| {
            r.record.run.clock_zero_unix_ms.ok_or_else(|| {
                refuse(format!(
                    "{}: shard {} did not record when its clock started \
                     (`clock_zero_unix_ms`), so its records cannot be lined up",
                    r.toml(),
                    r.shard
                ))
            })
        })
        .collect::<Result<_>>()?;
    let zero = zeros.iter().copied().fold(f64::INFINITY, f64::min);
    let results: Vec<Vec<OpRow>> = each(runs, RunDir::results_csv)?;
    let histograms: Vec<Vec<HistogramRow>> = each(runs, RunDir::histograms_csv)?;
    let checks: Vec<Vec<CheckRow>> = each(runs, RunDir::checks_csv)?;
    let points: Vec<Vec<PointRow>> = each(runs, RunDir::points_csv)?;
    let offered = rates_offered(&results);
    let mut targets: Vec<TargetKind> = Vec::new();
    let mut rows: Vec<OpRow> = Vec::new();
    for (shard_rows, at) in results.into_iter().zip(&zeros) {
        let offset = at - zero;
        for mut r in shard_rows {
            if !targets.contains(&r.target) {
                targets.push(r.target);
            }
            if r.phase != Phase::Calibrate {
                r.rate = offered[&(r.target, r.point)];
            }
            r.started_ms += offset;
            r.sent_ms = r.sent_ms.map(|t| t + offset);
            r.answered_ms = r.answered_ms.map(|t| t + offset);
            rows.push(r);
        }
    }
    let phase_rank = |p: Phase| match p {
        Phase::Calibrate => 0,
        Phase::Warmup => 1,
        Phase::Measure => 2,
    };
    rows.sort_by_key(|r| {
        let target = targets.iter().position(|t| *t == r.target);
        (target, r.point, phase_rank(r.phase), r.seq)
    });
    csv::write(&out.results_csv(), &rows)?;
    csv::write(&out.checks_csv(), &checks.concat())?;
    csv::write(&out.points_csv(), &merged_points(points))?;
    let mut all: Vec<HistogramRow> = histograms.concat();
    all.extend(histograms::merged(&all)?);
    csv::write(&out.histograms_csv(), &all)?;
    let record = merged_record(runs, missing, out, zero, &zeros);
    record.write(&out.run_toml())?;
    Ok(record)
}

/// The merged run's record: the first shard's, as one run of every shard, saying how it was
/// made.
fn merged_record(
    runs: &[ShardRun],
    missing: &[u32],
    out: &RunDir,
    zero: f64,
    zeros: &[f64],
) -> RunRecord {
    let first = &runs[0].record;
    let mut record = first.clone();
    record.run.id = out.id();
    record.run.shard = None;
    record.run.clock_zero_unix_ms = Some(zero);
    record.run.pid = None;
    record.run.status = if runs
        .iter()
        .all(|r| r.record.run.status == RunStatus::Complete)
    {
        RunStatus::Complete
    } else {
        RunStatus::Invalid
    };
    record.run.started = runs
        .iter()
        .map(|r| r.record.run.started.clone())
        .min()
        .unwrap_or_default();
    record.run.ended = runs.iter().filter_map(|r| r.record.run.ended.clone()).max();
    record.run.error = None;
    record.reconciliation = runs
        .iter()
        .map(|r| r.record.reconciliation.clone())
        .reduce(|a, b| a.zip(b).map(|(a, b): (Totals, Totals)| a.merged(&b)))
        .flatten();
    record.planned = runs
        .iter()
        .map(|r| r.record.planned)
        .reduce(|a, b| {
            a.zip(b).map(|(a, b)| Planned {
                probes: a.probes + b.probes,
                rows: a.rows + b.rows,
            })
        })
        .flatten();
    record.sessions = runs
        .iter()
        .flat_map(|r| r.record.sessions.clone())
        .collect();
    record.merged = Some(Merged {
        of: runs[0].shard.of,
        shards: runs
            .iter()
            .zip(zeros)
            .map(|(r, at)| MergedShard {
                index: r.shard.index,
                run: r.record.run.id.clone(),
                dir: r.dir.display().to_string(),
                status: r.record.run.status,
                clock_zero_unix_ms: *at,
                clock_offset_ms: at - zero,
                cpu: r.record.machine.cpu.clone(),
                cpus: r.record.machine.cpus,
            })
            .collect(),
        missing: missing.to_vec(),
        shared_target: false,
    });
    record
}

/// `<out>/<UTC time>-<target>-merged`, made unique if two merges start in the same second.
pub fn create_dir(out: &Path, target: TargetKind) -> Result<RunDir> {
    crate::records::create_unique_dir(out, &format!("{}-merged", target.name())).map(RunDir::new)
}
