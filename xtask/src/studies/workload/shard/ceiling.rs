//! The load generator's ceiling on this machine: the highest rate one process schedules on time
//! (its own lateness, due → handed to a thread, within the tolerance the reports judge it by)
//! against a target that answers at once, measured by `cargo xtask generator-ceiling` and kept
//! in `reports/generator-ceiling.toml`, from which a dry run says how many shards a plan needs.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use super::shards_needed;
use crate::stats::nearest_rank;
use crate::studies::workload::measure::load::{Timetable, open_loop};
use crate::studies::workload::report::saturation::LATE_TOLERANCE_MS;
use crate::studies::workload::{MAX_RATE, WorkloadPlan};

/// Where the measured ceiling is kept, from the project's root.
pub const FILE: &str = "reports/generator-ceiling.toml";

/// Threads the calibration sends with: the profiles' default `max-in-flight`.
const THREADS: usize = 64;

/// The rate the calibration starts at. Rates are doubled while the generator still sends them
/// (its throughput), then the step where it stopped keeping time is bisected [`BISECTIONS`]
/// times; when even the first is not kept on time, rates are halved down to [`LOWEST_RATE`].
const FIRST_RATE: f64 = 500.0;
const BISECTIONS: usize = 3;
const LOWEST_RATE: f64 = 50.0;
/// The calibration stops at this rate even if it is kept.
const LAST_RATE: f64 = 256_000.0;
/// A rate is sent (throughput) when every request was and this share of it was achieved over
/// the wall time to the last answer (which a throttled or busy machine's waits lengthen).
const SENT_SHARE: f64 = 0.9;

/// What `reports/generator-ceiling.toml` holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ceiling {
    /// The highest rate tried that one process kept on time, requests a second; 0 when it kept
    /// none (a machine too busy, or too throttled, to time anything).
    pub per_process_per_s: f64,
    /// The highest rate tried that it still sent, late or not (every request, at least 90% of
    /// the rate achieved): its throughput, above the ceiling when it is late.
    pub throughput_per_s: f64,
    /// When it was measured (UTC, RFC 3339), and on what.
    pub measured: String,
    pub cpu: String,
    pub cpus: usize,
    /// The CPU the process was allowed, in cores, when a cgroup capped it (`cpu.max` or
    /// `cpu.cfs_quota_us`); absent when nothing capped it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_quota_cores: Option<f64>,
    /// The 1-minute load average when it started: above `cpus`, other work shared the machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_at_start: Option<f64>,
    /// Seconds each rate was tried, and the threads that sent.
    pub seconds_per_rate: f64,
    pub threads: usize,
    /// Every rate tried, in order.
    pub tries: Vec<Try>,
}

/// One rate tried.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Try {
    pub rate: f64,
    /// Requests due, and sent.
    pub due: usize,
    pub sent: usize,
    /// The 99th percentile of the generator's own lateness, ms, and the most it allows.
    pub late_p99_ms: f64,
    pub late_allowed_ms: f64,
    /// Requests a second achieved: sent over the wall time to the last answer.
    pub achieved_per_s: f64,
    /// Whether every request was sent and the lateness was within what is allowed.
    pub kept: bool,
}

/// Tries `rate` for `seconds` against a target that answers at once.
fn attempt(rate: f64, seconds: f64) -> Result<Try> {
    let due = (rate * seconds).round().max(1.0) as usize;
    let jobs: Vec<usize> = (0..due).collect();
    let mut late = Vec::with_capacity(due);
    let ran = open_loop(
        &jobs,
        Timetable::at(rate),
        THREADS,
        &|_| (),
        &crate::procs::interrupted,
        |done, _| {
            late.push(done.late_ms);
            Ok(())
        },
    )?;
    late.sort_by(f64::total_cmp);
    let late_p99_ms = late
        .get(nearest_rank(late.len(), 0.99).saturating_sub(1))
        .copied()
        .unwrap_or(f64::INFINITY);
    let late_allowed_ms = LATE_TOLERANCE_MS.max(100.0 / rate);
    Ok(Try {
        rate,
        due,
        sent: ran.sent,
        late_p99_ms,
        late_allowed_ms,
        achieved_per_s: ran.sent as f64 / (ran.wall_ms / 1000.0).max(seconds),
        kept: ran.sent == due && late_p99_ms <= late_allowed_ms,
    })
}

/// Measures the ceiling and the throughput: rates doubled from [`FIRST_RATE`] while they are
/// sent, the step where time stopped being kept bisected, or rates halved when the first is
/// already late; each tried for `seconds`. Progress goes to stderr.
pub fn measure(seconds: f64) -> Result<Ceiling> {
    let machine = crate::records::run_record::machine();
    let load_at_start = crate::records::run_record::load_average();
    let mut tries: Vec<Try> = Vec::new();
    let tried = |rate: f64, tries: &mut Vec<Try>| -> Result<Try> {
        let t = attempt(rate, seconds)?;
        eprintln!(
            "{:>9.0} requests/s: {} of {} sent ({:.0}/s achieved), late p99 {:.3} ms (at most \
             {:.3}): {}",
            t.rate,
            t.sent,
            t.due,
            t.achieved_per_s,
            t.late_p99_ms,
            t.late_allowed_ms,
            if t.kept { "kept" } else { "late" }
        );
        tries.push(t.clone());
        Ok(t)
    };
    let sent = |t: &Try| t.sent == t.due && t.achieved_per_s >= SENT_SHARE * t.rate;
    let mut rate = FIRST_RATE;
    while rate <= LAST_RATE {
        let t = tried(rate, &mut tries)?;
        if !sent(&t) || crate::procs::interrupted() {
            break;
        }
        rate *= 2.0;
    }
    let kept_below = |tries: &[Try]| {
        tries
            .iter()
            .filter(|t| t.kept)
            .map(|t| t.rate)
            .fold(0.0, f64::max)
    };
    let low = kept_below(&tries);
    let late_above = tries
        .iter()
        .filter(|t| !t.kept && t.rate > low)
        .map(|t| t.rate)
        .fold(f64::INFINITY, f64::min);
    if low == 0.0 {
        let mut rate = FIRST_RATE / 2.0;
        while rate >= LOWEST_RATE && !crate::procs::interrupted() {
            if tried(rate, &mut tries)?.kept {
                break;
            }
            rate = (rate / 2.0).round();
        }
    } else if late_above.is_finite() {
        let (mut low, mut high) = (low, late_above);
        for _ in 0..BISECTIONS {
            let mid = ((low + high) / 2.0).round();
            if mid <= low || mid >= high || crate::procs::interrupted() {
                break;
            }
            if tried(mid, &mut tries)?.kept {
                low = mid;
            } else {
                high = mid;
            }
        }
    }
    let throughput_per_s = tries
        .iter()
        .filter(|t| sent(t))
        .map(|t| t.rate)
        .fold(0.0, f64::max);
    Ok(Ceiling {
        per_process_per_s: kept_below(&tries),
        throughput_per_s,
        measured: crate::base::clock::utc_now().0,
        cpu: machine.cpu,
        cpus: machine.cpus,
        cpu_quota_cores: cpu_quota_cores(),
        load_at_start,
        seconds_per_rate: seconds,
        threads: THREADS,
        tries,
    })
}

/// The cores this process's cgroup allows it, when a quota caps them (cgroup v2 `cpu.max`, or
/// v1 `cpu.cfs_quota_us` over `cpu.cfs_period_us`).
fn cpu_quota_cores() -> Option<f64> {
    let groups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    for line in groups.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let read = |file: PathBuf| std::fs::read_to_string(file).ok();
        if controllers.is_empty() {
            let max = read(
                Path::new("/sys/fs/cgroup")
                    .join(path.trim_start_matches('/'))
                    .join("cpu.max"),
            )?;
            let mut words = max.split_whitespace();
            let (quota, period) = (words.next()?, words.next()?);
            if let (Ok(q), Ok(p)) = (quota.parse::<f64>(), period.parse::<f64>()) {
                return Some(q / p);
            }
        } else if controllers.split(',').any(|c| c == "cpu") {
            let dir = Path::new("/sys/fs/cgroup")
                .join(controllers)
                .join(path.trim_start_matches('/'));
            let quota: f64 = read(dir.join("cpu.cfs_quota_us"))?.trim().parse().ok()?;
            let period: f64 = read(dir.join("cpu.cfs_period_us"))?.trim().parse().ok()?;
            if quota > 0.0 && period > 0.0 {
                return Some(quota / period);
            }
        }
    }
    None
}

impl Ceiling {
    /// The ceiling kept under `root`, if it was measured.
    pub fn read(root: &Path) -> Result<Option<Ceiling>> {
        let path = root.join(FILE);
        if !path.exists() {
            return Ok(None);
        }
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        toml::from_str(&text)
            .map(Some)
            .with_context(|| format!("{} is not a generator ceiling", path.display()))
    }

    pub fn write(&self, path: &Path) -> Result<()> {
        let text = format!(
            "# The load generator's ceiling, measured by `cargo xtask generator-ceiling`: the \
             highest rate\n# one process kept on time against a target that answers at once \
             (docs/sharding.md).\n{}",
            toml::to_string(self)?
        );
        std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
    }

    /// What a process may be asked to offer: the ceiling, and never more than the fixed cap on
    /// a profile's rate per process ([`MAX_RATE`]); the cap alone when no rate was kept on time
    /// (a ceiling of 0 says the machine was too busy to measure it, not that it offers nothing).
    pub fn usable_per_s(&self) -> f64 {
        if self.per_process_per_s > 0.0 {
            self.per_process_per_s.min(MAX_RATE)
        } else {
            MAX_RATE
        }
    }
}

/// The dry run's lines on shards: what this process offers, the ceiling it is held to and where
/// it was measured, the shards the busiest point needs, and each point one shard cannot offer.
pub fn dry_run_lines(plan: &WorkloadPlan, ceiling: Option<&Ceiling>) -> Vec<String> {
    let mut lines = Vec::new();
    let shard = plan.shard;
    if shard.of > 1 {
        lines.push(format!(
            "shard {shard}: every {}th request of each timetable from request {}, at the rate \
             ÷ {} (`cargo xtask merge` the {} shard runs)",
            shard.of, shard.index, shard.of, shard.of
        ));
    }
    let (per_process, said) = match ceiling {
        Some(c) => (
            c.usable_per_s(),
            format!(
                "the load generator's measured ceiling: {} requests/s per process on time, {} \
                 sent ({} on {} × {}{}; {FILE}), so at most {} a process{}",
                c.per_process_per_s,
                c.throughput_per_s,
                c.measured,
                c.cpus,
                c.cpu,
                c.cpu_quota_cores
                    .map_or(String::new(), |q| format!(", capped to {q:.2} cores")),
                c.usable_per_s(),
                if c.per_process_per_s > 0.0 {
                    ""
                } else {
                    " (no rate was kept on time where it was measured: the fixed cap is used)"
                }
            ),
        ),
        None => (
            MAX_RATE,
            format!(
                "no measured generator ceiling ({FILE}: `cargo xtask generator-ceiling` \
                 measures it); held to the fixed cap of {MAX_RATE} requests/s per process"
            ),
        ),
    };
    lines.push(said);
    let busiest = plan.points.iter().map(|p| p.rate).fold(0.0, f64::max);
    let needed = shards_needed(busiest, per_process);
    lines.push(format!(
        "the busiest point asks {busiest} requests/s: {needed} shard{} needed{}",
        if needed == 1 { "" } else { "s" },
        if needed > shard.of {
            format!(", more than the {} this run is split into", shard.of)
        } else {
            String::new()
        }
    ));
    for p in &plan.points {
        if p.rate / f64::from(shard.of) > per_process {
            lines.push(format!(
                "point {} ({} requests/s) is more than one {} can offer: it needs {} shards{}",
                p.id,
                p.rate,
                if shard.of > 1 { "shard" } else { "process" },
                shards_needed(p.rate, per_process),
                if p.rate / f64::from(shard.of) > MAX_RATE {
                    format!(" (a run of this plan is refused: more than {MAX_RATE} a process)")
                } else {
                    String::new()
                }
            ));
        }
    }
    lines
}
