//! One load point on the target: its service time measured first (each arm's requests one at a
//! time), its rate capped to the profile's `max-utilisation` of that, then warm-up and measured
//! load on the open-loop timetable, each request of an arm drawn at random; the CPU time each
//! process took while it was measured; the point's row of `points.csv`.

use std::sync::Arc;

use anyhow::{Result, bail};
use d1bench_core::Outcome;
use d1bench_core::workload::OpRequest;

use super::load::{self, Done, Timetable};
use super::retry::{self, Attempted};
use super::{At, Ids, Recorder, jobs};
use crate::cpu::CpuTimes;
use crate::studies::workload::row::{OpRow, Phase, PointRow};
use crate::studies::workload::{LoadPoint, WorkloadPlan, WritePath, path, shard};
use crate::targets::joined::rendezvous::Rendezvous;
use crate::targets::remote::rest::{Endpoint, RestClient};
use crate::targets::workload::WorkloadClient;

/// A rate no calibration keeps up with: its requests go one after another (one thread).
const BACK_TO_BACK_PER_S: f64 = 1.0e6;

/// Where a point's requests go: the target's workload client, and D1's REST API for the writes
/// a series sends that way (on a target that has it).
pub(super) struct Senders {
    pub client: Arc<dyn WorkloadClient>,
    pub rest: Option<Arc<RestClient>>,
    /// Whether this process sends the calibration: on a shared target only shard 1 does.
    pub calibrates: bool,
}

/// What one phase of a point sent.
struct PhaseRun {
    rows: Vec<OpRow>,
    wall_ms: f64,
    senders_cpu_s: f64,
}

/// Runs `point`: calibration, warm-up and measured load; its row of `points.csv`.
pub(super) fn run(
    plan: &WorkloadPlan,
    planned: LoadPoint,
    senders: &Senders,
    recorder: &mut Recorder,
    ids: &mut Ids,
    pgid: Option<i32>,
    shared: Option<&Rendezvous>,
) -> Result<PointRow> {
    // On a shared target every shard starts each phase together (and shard 1 alone calibrates).
    let meet = |at: &str, payload: &str| match shared {
        Some(shared) => shared.meet(&format!("p{}-{at}", planned.id), payload),
        None => Ok(Vec::new()),
    };
    meet("calibrate", "")?;
    let calibrated = phase(
        plan,
        &planned,
        Phase::Calibrate,
        0.0,
        1,
        senders,
        recorder,
        ids,
    )?;
    let mut service = Service::of(&planned, &calibrated.rows);
    let told = meet(
        "calibrated",
        &match senders.calibrates {
            true => service.line(),
            false => String::new(),
        },
    )?;
    if let Some(line) = told.first() {
        service = Service::from_line(line)?;
    }
    let rate = match plan.max_utilisation {
        Some(cap) if planned.rate * service.inside_ms / 1000.0 > cap => {
            cap / (service.inside_ms / 1000.0)
        }
        _ => planned.rate,
    };
    let point = LoadPoint {
        rate,
        ..planned.clone()
    };
    let mut cpu = crate::cpu::CpuTimes::default();
    let mut measured_s = 0.0;
    let mut senders_cpu_s = 0.0;
    for (which, seconds) in [
        (Phase::Warmup, plan.warmup_s),
        (Phase::Measure, plan.duration_s),
    ] {
        if which == Phase::Measure {
            meet("measure", "")?;
        }
        let before = CpuTimes::now(pgid);
        let ran = phase(
            plan,
            &point,
            which,
            seconds,
            plan.max_in_flight,
            senders,
            recorder,
            ids,
        )?;
        if which == Phase::Measure {
            cpu = before.until(&CpuTimes::now(pgid));
            measured_s = ran.wall_ms / 1000.0;
            senders_cpu_s = ran.senders_cpu_s;
        }
        let failed = ran.rows.iter().filter(|r| r.outcome != Outcome::Ok).count();
        let late = ran
            .rows
            .iter()
            .filter_map(|r| r.late_ms)
            .fold(0.0, f64::max);
        let lag = ran.rows.iter().map(|r| r.lag_ms).fold(0.0, f64::max);
        eprintln!(
            "point {}/{} ({} rows, {}, {:.1}/s, utilisation {:.2}) {}: {} requests in {:.1} s, \
             {failed} not ok, generator late at most {late:.1} ms, lag at most {lag:.1} ms",
            point.id,
            plan.points.len(),
            point.table_rows,
            point.series(),
            point.rate,
            point.rate * service.inside_ms / 1000.0,
            match which {
                Phase::Warmup => "warm-up",
                _ => "measured",
            },
            ran.rows.len(),
            ran.wall_ms / 1000.0
        );
    }
    Ok(PointRow {
        experiment: recorder.experiment.to_owned(),
        target: recorder.target,
        point: point.id,
        table_rows: point.table_rows,
        arms: point.arms.len(),
        // What this process offered: a shard's share of the whole (whose utilisation is below).
        rate_planned: planned.rate / f64::from(plan.shard.of),
        rate: rate / f64::from(plan.shard.of),
        service_inside_ms: service.inside_ms,
        service_d1_ms: service.d1_ms,
        utilisation: rate * service.inside_ms / 1000.0,
        max_utilisation: plan.max_utilisation,
        max_in_flight: plan.max_in_flight,
        measured_s,
        cpu_generator_s: cpu.own_s,
        cpu_workerd_s: cpu.of("workerd"),
        cpu_wrangler_s: cpu.of("node"),
        cpu_senders_s: Some(senders_cpu_s),
    })
}

/// A point's mean service time per request, its arms weighed by their shares.
struct Service {
    inside_ms: f64,
    d1_ms: Option<f64>,
}

impl Service {
    /// From the calibration's answered requests: each arm's mean inside (and D1) time; the
    /// outside clock where an arm has no inside one.
    fn of(point: &LoadPoint, rows: &[OpRow]) -> Service {
        let mut inside_ms = 0.0;
        let mut d1_ms = Some(0.0);
        for arm in &point.arms {
            let mine: Vec<&OpRow> = rows
                .iter()
                .filter(|r| {
                    r.op == arm.op.op
                        && r.index == arm.index
                        && r.preparation == arm.preparation
                        && r.session == arm.session
                        && r.retry == arm.retry.kind
                })
                .collect();
            let mean = |f: &dyn Fn(&OpRow) -> Option<f64>| -> Option<f64> {
                let v: Vec<f64> = mine.iter().filter_map(|r| f(r)).collect();
                (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
            };
            let inside = mean(&|r| r.inside_ms.filter(|_| !r.target_failed))
                .or_else(|| mean(&|r| Some(r.service_ms)))
                .unwrap_or(0.0);
            inside_ms += arm.share * inside;
            d1_ms = d1_ms
                .zip(mean(&|r| r.d1_ms))
                .map(|(s, d)| s + arm.share * d);
        }
        Service { inside_ms, d1_ms }
    }

    /// As one line for the other shards: `inside_ms d1_ms` (`-` without a D1 clock).
    fn line(&self) -> String {
        let d1 = self.d1_ms.map_or("-".to_owned(), |d| d.to_string());
        format!("{} {d1}", self.inside_ms)
    }

    fn from_line(line: &str) -> Result<Service> {
        let bad = || anyhow::anyhow!("shard 1's service time is not `inside d1`: {line:?}");
        let (inside, d1) = line.split_once(' ').ok_or_else(bad)?;
        Ok(Service {
            inside_ms: inside.parse().map_err(|_| bad())?,
            d1_ms: match d1 {
                "-" => None,
                d1 => Some(d1.parse().map_err(|_| bad())?),
            },
        })
    }
}

/// Sends one phase of `point` on the timetable, recording each request as it lands.
#[allow(clippy::too_many_arguments)]
fn phase(
    plan: &WorkloadPlan,
    point: &LoadPoint,
    which: Phase,
    seconds: f64,
    max_in_flight: usize,
    senders: &Senders,
    recorder: &mut Recorder,
    ids: &mut Ids,
) -> Result<PhaseRun> {
    let jobs = jobs(plan, point, which, seconds, ids);
    let ways = path::assign(
        plan.order_seed,
        point,
        which,
        jobs.iter().map(|(_, j)| j.op),
        senders.rest.is_some(),
    );
    // Every job of the whole timetable was drawn (the same keys, ids and versions in every
    // shard); a shard sends its own, each keeping its place in the whole.
    let jobs: Vec<(u64, usize, OpRequest, WritePath)> = jobs
        .into_iter()
        .zip(ways)
        .enumerate()
        .filter(|(i, _)| match which {
            Phase::Calibrate => senders.calibrates,
            _ => plan.shard.takes(*i),
        })
        .map(|(i, ((arm, j), way))| (i as u64, arm, j, way))
        .collect();
    if jobs.is_empty() {
        return Ok(PhaseRun {
            rows: Vec::new(),
            wall_ms: 0.0,
            senders_cpu_s: 0.0,
        });
    }
    let started_ms = recorder.clock.elapsed().as_secs_f64() * 1000.0;
    let sender = Arc::clone(&senders.client);
    let rest = senders.rest.clone();
    let point_id = point.id;
    // Retries run here, in the load generator: each attempt its own request (a separate Worker
    // invocation), as a client retries; the jitter's seed is the arm's policy's, mixed with the
    // request's place. A write sent through the REST API waits at least what a 429's
    // Retry-After asks.
    let arms = &point.arms;
    let send = move |(seq, arm, job, way): &(u64, usize, OpRequest, WritePath)| {
        let policy = arms[*arm].retry;
        let rng = policy.rng(point_id, *seq);
        retry::attempt_told(job, &policy, rng, &|j| match (way, &rest) {
            (WritePath::Rest, Some(rest)) => {
                let answer = rest.write(j, Endpoint::Query);
                (answer.timed, answer.retry_after)
            }
            _ => (sender.op(j), None),
        })
    };
    // Calibration is each shard's own, one request at a time; the load is its share.
    let (timetable, offered) = match which {
        Phase::Calibrate => (Timetable::at(BACK_TO_BACK_PER_S), point.clone()),
        _ => (
            shard::timetable(point.rate, plan.shard),
            shard::offered(point, plan.shard),
        ),
    };
    let mut rows = Vec::new();
    let ran = load::open_loop(
        &jobs,
        timetable,
        max_in_flight,
        &send,
        &crate::procs::interrupted,
        |done: Done<Attempted>, (seq, arm, job, way)| {
            let done = Done {
                seq: *seq as usize,
                ..done
            };
            let at = At {
                point: &offered,
                arm: &offered.arms[*arm],
                phase: which,
                started_ms,
                clock: recorder.clock,
            };
            rows.push(recorder.record(&at, (job, *way), done)?);
            Ok(())
        },
    )?;
    if crate::procs::interrupted() {
        bail!("interrupted");
    }
    Ok(PhaseRun {
        rows,
        wall_ms: ran.wall_ms,
        senders_cpu_s: ran.senders_cpu_s,
    })
}
