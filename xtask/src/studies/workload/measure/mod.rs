//! A workload measured on a target: the table seeded once to each size (in batches within D1's
//! limits) and checked by count, ids and content checksum; at each size every load point run
//! under open-loop load ([`load`]), warm-up then measured, each request appended to
//! `results.csv` as it lands; and a final check that every seeded row and every acknowledged
//! write is present exactly once, after which the table is dropped.
//!
//! On a target several processes share (`--shards N`, [`crate::targets::joined`]) the same loop
//! is split: the coordinator seeds, checks and indexes each size and checks the end, with every
//! shard's writes in what the table must hold; each shard waits for the table, runs its share of
//! the points, meeting the others before every phase so that all start together, and hands the
//! coordinator what its writes must have left.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use anyhow::{Result, anyhow, bail};
use d1bench_core::workload;
use d1bench_core::workload::cache::CacheParams;
use d1bench_core::workload::{CheckRequest, FIRST_WRITE_ID, OpRequest, Operation, SeedRequest};

pub mod exactly_once;
pub mod load;
mod point;
pub mod retry;
pub mod versions;

use exactly_once::Writes;
use load::Done;
use retry::Attempted;
use versions::RowVersions;

use crate::base::TargetKind;
use crate::records::csv::Appender;
use crate::records::{RunDir, Totals};
use crate::studies::workload::WritePath;
use crate::studies::workload::row::{CheckRow, OpRow, Phase, PointRow};
use crate::studies::workload::{Arm, CALIBRATION_PER_ARM, LoadPoint, WorkloadPlan};
use crate::targets::Workloads;
use crate::targets::joined::rendezvous::{Party, Rendezvous};
use crate::targets::workload::WorkloadClient;

/// What the table must hold: every seeded id, and every write acknowledged so far; and what it
/// may hold: the writes sent and not acknowledged (each at most once).
#[derive(serde::Serialize, serde::Deserialize)]
struct Expected {
    seeded: u64,
    written: BTreeSet<u64>,
    attempted: BTreeSet<u64>,
    /// The updates' versions: acknowledged and sent, per row.
    versions: RowVersions,
}

impl Expected {
    /// The ids that must be present, with the unacknowledged writes that are.
    fn ids<'a>(&'a self, landed: &'a [u64]) -> impl Iterator<Item = u64> + 'a {
        let mut ids: BTreeSet<u64> = self.written.clone();
        ids.extend(landed.iter().copied());
        (1..=self.seeded).chain(ids)
    }

    /// The coordinator's: the rows seeded, and the writes of every shard, read from what each
    /// handed over at `step` (each shard's writes so far).
    fn of_shards(seeded: u64, rendezvous: &Rendezvous, step: &str) -> Result<Expected> {
        let mut all = Expected::seeded(seeded);
        for path in rendezvous.gather(step)? {
            let text = std::fs::read_to_string(&path)
                .map_err(|e| anyhow!("cannot read a shard's writes, {path}: {e}"))?;
            let shard: Expected = serde_json::from_str(&text)
                .map_err(|e| anyhow!("{path}: not a shard's writes: {e}"))?;
            all.written.extend(shard.written);
            all.attempted.extend(shard.attempted);
            all.versions.absorb(&shard.versions);
        }
        Ok(all)
    }

    fn seeded(seeded: u64) -> Expected {
        Expected {
            seeded,
            written: BTreeSet::new(),
            attempted: BTreeSet::new(),
            versions: RowVersions::default(),
        }
    }

    /// A shard hands its writes so far to the coordinator at `step`.
    fn hand_over(&self, rendezvous: &Rendezvous, step: &str) -> Result<()> {
        let Party::Shard(k) = rendezvous.party() else {
            bail!("only a shard hands over its writes");
        };
        let path = rendezvous.path(&format!("{step}-writes-{k}.json"));
        std::fs::write(&path, serde_json::to_string(self)?)
            .map_err(|e| anyhow!("cannot write {}: {e}", path.display()))?;
        rendezvous.arrive(step, &path.display().to_string())
    }
}

/// Measures `plan` on the session's target; the totals of what it recorded.
pub fn measure(
    session: &mut dyn Workloads,
    experiment: &str,
    plan: &WorkloadPlan,
    run_dir: &RunDir,
    clock: Instant,
) -> Result<Totals> {
    let target = session.target();
    let client = session.workload().map_err(|e| anyhow!(e))?;
    // Writes a series sends through D1's REST API go from here, with the run's token.
    let rest = session.rest_writes();
    let mut results = Appender::<OpRow>::open(&run_dir.results_csv())?;
    let mut checks = Appender::<CheckRow>::open(&run_dir.checks_csv())?;
    let mut totals = Totals::default();
    let mut expected = Expected::seeded(0);
    // Shared (--shards): who seeds and checks (a whole run, the coordinator) and who loads (a
    // whole run, a shard).
    let shared = session.rendezvous();
    let party = shared.as_ref().map(|r| r.party());
    let prepares = !matches!(party, Some(Party::Shard(_)));
    let mut next_write_id = FIRST_WRITE_ID;
    let mut next_version = BTreeMap::new();
    // Each run's KV keys are its own: a local KV namespace persists across runs.
    let generation = shared
        .as_ref()
        .map_or_else(run_generation, |r| r.generation());
    let mut indexed = false;
    let check_row = |when: &str, table_rows: u64, batches, seed_ms, expected: &Expected, drop| {
        let at = Table {
            experiment,
            target,
            when,
            table_rows,
        };
        check(&*client, plan, &at, (batches, seed_ms), expected, drop)
    };
    let mut points = Appender::<PointRow>::open(&run_dir.points_csv())?;
    let pgid = session.process_group();
    for (i, &size) in plan.sizes.iter().enumerate() {
        let step = format!("size-{}", i + 1);
        if prepares {
            // Rows go in without a secondary index; the table takes every arm's after.
            if indexed {
                client
                    .index(&[])
                    .map_err(|e| anyhow!("cannot drop the indexes before seeding: {e}"))?;
            }
            let seeding = Instant::now();
            let batches = seed(&*client, plan, expected.seeded, size)?;
            let seed_ms = seeding.elapsed().as_secs_f64() * 1000.0;
            expected.seeded = size;
            eprintln!(
                "seeded {size} rows in {batches} batches ({:.1} s); checking them",
                seed_ms / 1000.0
            );
            let row = check_row("seeded", size, batches, seed_ms, &expected, false)?;
            totals.add(&row);
            checks.append(&row)?;
            if !row.reconciled {
                bail!("the seeded table does not reconcile: {}", row.note);
            }
            client
                .index(&plan.indexes)
                .map_err(|e| anyhow!("cannot create the indexes {:?}: {e}", plan.indexes))?;
            indexed = true;
        }
        match (&shared, party) {
            (Some(shared), Some(Party::Coordinator)) => {
                shared.post(&step)?;
                eprintln!("the shards load the table of {size} rows");
                expected = Expected::of_shards(size, shared, &format!("{step}-loaded"))?;
                continue;
            }
            (Some(shared), _) => {
                shared.await_post(&step)?;
                expected.seeded = size;
            }
            (None, _) => {}
        }
        for planned in plan.points.iter().filter(|p| p.table_rows == size) {
            // In-process SQLite has no Sessions API: its baseline is the plain binding's arms.
            let point = if target.runs_the_worker() {
                planned.clone()
            } else {
                planned.without_sessions()
            };
            if point.arms.is_empty() {
                continue;
            }
            let mut at = Recorder {
                experiment,
                target,
                clock,
                results: &mut results,
                totals: &mut totals,
                expected: &mut expected,
            };
            let mut ids = Ids {
                next_write_id: &mut next_write_id,
                next_version: &mut next_version,
                generation,
            };
            let senders = point::Senders {
                client: std::sync::Arc::clone(&client),
                rest: rest.clone(),
                // On a shared target shard 1 alone measures the service time.
                calibrates: matches!(party, None | Some(Party::Shard(1))),
            };
            let row = point::run(
                plan,
                point,
                &senders,
                &mut at,
                &mut ids,
                pgid,
                shared.as_deref(),
            )?;
            points.append(&row)?;
        }
        if let Some(shared) = &shared {
            expected.hand_over(shared, &format!("{step}-loaded"))?;
        }
    }
    if !prepares {
        // The coordinator checks the end, every shard's writes in it.
        return Ok(totals);
    }
    let last = plan.sizes.last().copied().unwrap_or(0);
    let row = check_row("final", last, 0, 0.0, &expected, true)?;
    totals.add(&row);
    checks.append(&row)?;
    Ok(totals)
}

/// Grows the table from `from` rows to `to` in seed batches (creating it when empty); the
/// batches sent.
fn seed(client: &dyn WorkloadClient, plan: &WorkloadPlan, from: u64, to: u64) -> Result<usize> {
    let per = plan.spec.seed_batch_rows() as u64;
    let mut first = from + 1;
    let mut batches = 0;
    while first <= to {
        if crate::procs::interrupted() {
            bail!("interrupted while seeding");
        }
        let last = (first + per - 1).min(to);
        let request = SeedRequest {
            spec: plan.spec,
            create: first == 1,
            from: first,
            to: last,
        };
        let answer = client.seed(&request).map_err(|e| {
            anyhow!("seeding rows {first} to {last}: the target did not answer: {e}")
        })?;
        if let Some(error) = answer.error {
            bail!("seeding rows {first} to {last} was refused: {error}");
        }
        let rows = (last - first + 1) as usize;
        if answer.rows_written != rows {
            bail!(
                "seeding rows {first} to {last}: the target acknowledged {} rows, not {rows}",
                answer.rows_written
            );
        }
        batches += 1;
        first = last + 1;
    }
    Ok(batches)
}

/// Which check of which table: what its record says of where and when it was made.
struct Table<'a> {
    experiment: &'a str,
    target: TargetKind,
    /// `seeded` or `final`.
    when: &'a str,
    table_rows: u64,
}

/// Checks the table against what it must hold (and drops it, when `drop`); the seed batches
/// sent just before and the ms they took go into the record.
fn check(
    client: &dyn WorkloadClient,
    plan: &WorkloadPlan,
    at: &Table,
    (seed_batches, seed_ms): (usize, f64),
    expected: &Expected,
    drop: bool,
) -> Result<CheckRow> {
    let Table {
        experiment,
        target,
        when,
        table_rows,
    } = *at;
    let present = client
        .check(&CheckRequest {
            spec: plan.spec,
            drop,
        })
        .map_err(|e| anyhow!("the {when} check of the table got no answer: {e}"))?;
    let tally = exactly_once::reconcile(
        &Writes {
            acknowledged: expected.written.clone(),
            attempted: expected.attempted.clone(),
        },
        &present.write_ids,
    );
    let landed = &tally.unacknowledged_present;
    let checksum_expected = plan.spec.expected_checksum(expected.ids(landed));
    let rows_expected = expected.seeded + (expected.written.len() + landed.len()) as u64;
    let id_sum_expected = workload::id_sum(expected.ids(landed));
    let mut notes = tally.notes();
    notes.extend(expected.versions.reconcile(&present.versions));
    if present.rows_present != rows_expected {
        notes.push(format!(
            "{} rows present, {rows_expected} expected",
            present.rows_present
        ));
    }
    if present.id_sum != id_sum_expected {
        notes.push("the ids present differ from those expected".to_owned());
    }
    if present.misplaced > 0 {
        notes.push(format!("{} rows are not in their group", present.misplaced));
    }
    if present.checksum != checksum_expected {
        notes.push("the content checksum differs".to_owned());
    }
    Ok(CheckRow {
        experiment: experiment.to_owned(),
        target,
        when: when.to_owned(),
        table_rows,
        seed_batches,
        seed_ms,
        rows_expected,
        rows_present: present.rows_present,
        id_sum_expected,
        id_sum_present: present.id_sum,
        misplaced: present.misplaced,
        checksum_expected: checksum_expected.to_string(),
        checksum_present: present.checksum.to_string(),
        reconciled: notes.is_empty(),
        note: notes.join("; "),
        writes_acknowledged: tally.acknowledged,
        writes_unacknowledged_present: landed.len(),
        writes_missing: tally.missing.len(),
        writes_duplicated: tally.duplicated.len(),
    })
}

/// The ids and versions the requests take, in plan order across the run.
struct Ids<'a> {
    /// The first id of the next insert.
    next_write_id: &'a mut u64,
    /// The next version of each row an update touches.
    next_version: &'a mut BTreeMap<u64, u64>,
    /// What this run's KV keys start with (with the point's id).
    generation: u64,
}

/// A number this run's KV keys start with: the run's start in ms, so that no entry a previous
/// run left in a persisted local KV namespace answers this run's reads.
pub fn run_generation() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
        * 1000
}

/// The requests of one phase of a point, each with its arm: arms drawn by their shares,
/// operations' keys drawn uniformly, from the profile's order seed (the same requests on every
/// target), write ids in order, each update the next version of its row. Calibration sends
/// `CALIBRATION_PER_ARM` requests of each arm in turn.
fn jobs(
    plan: &WorkloadPlan,
    point: &LoadPoint,
    phase: Phase,
    seconds: f64,
    ids: &mut Ids,
) -> Vec<(usize, OpRequest)> {
    let phase_bits = match phase {
        Phase::Warmup => 0,
        Phase::Measure => 1,
        Phase::Calibrate => 2,
    };
    let mut rng = fastrand::Rng::with_seed(
        plan.order_seed
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .wrapping_add((point.id as u64) << 2 | phase_bits),
    );
    let arms: Vec<usize> = match phase {
        Phase::Calibrate => (0..CALIBRATION_PER_ARM)
            .flat_map(|_| 0..point.arms.len())
            .collect(),
        Phase::Warmup | Phase::Measure => {
            let count = (point.rate * seconds).round() as usize;
            (0..count)
                .map(|_| {
                    let mut pick = rng.f64();
                    point
                        .arms
                        .iter()
                        .position(|a| {
                            let hit = pick < a.share;
                            pick -= a.share;
                            hit
                        })
                        .unwrap_or(point.arms.len() - 1)
                })
                .collect()
        }
    };
    let size = point.table_rows;
    let keys = plan.cache_keys.unwrap_or(size).min(size);
    let cache = point.ttl_s.map(|ttl_s| CacheParams {
        ttl_s,
        generation: ids.generation + point.id as u64,
    });
    // With one index on the table SQLite's planner chooses, as before arms shared a point.
    let named_index = plan.indexes.len() > 1;
    arms.into_iter()
        .map(|a| {
            let arm = &point.arms[a];
            let op = arm.op;
            let mut version = 0;
            let key = match op.op {
                Operation::PointRead => rng.u64(1..=size),
                Operation::CachedRead => rng.u64(1..=keys),
                Operation::Update => {
                    let key = rng.u64(1..=keys);
                    let next = ids.next_version.entry(key).or_insert(1);
                    version = *next;
                    *next += 1;
                    key
                }
                Operation::RangeScan => rng.u64(1..=size - op.rows as u64 + 1),
                Operation::Aggregate => rng.u64(0..plan.spec.groups),
                Operation::Write | Operation::BatchWrite => {
                    let first = *ids.next_write_id;
                    *ids.next_write_id += op.rows as u64;
                    first
                }
            };
            let request = OpRequest {
                spec: plan.spec,
                op: op.op,
                key,
                rows: op.rows,
                preparation: arm.preparation,
                version,
                cache: cache.filter(|_| op.op == Operation::CachedRead),
                session: arm.session,
                index: named_index.then_some(arm.index),
            };
            (a, request)
        })
        .collect()
}

/// Where a run's requests are recorded, and what they must leave in the table.
struct Recorder<'a> {
    experiment: &'a str,
    target: TargetKind,
    clock: Instant,
    results: &'a mut Appender<OpRow>,
    totals: &'a mut Totals,
    expected: &'a mut Expected,
}

impl Recorder<'_> {
    /// Records one request: its row appended, what its write must have left noted.
    fn record(
        &mut self,
        at: &At,
        (job, path): (&OpRequest, WritePath),
        done: Done<Attempted>,
    ) -> Result<OpRow> {
        let row = op_row(self.experiment, self.target, at, (job, path), done);
        let expected = &mut *self.expected;
        if job.op.writes() {
            expected.attempted.extend(job.written_ids());
        }
        if row.acknowledged() {
            expected.written.extend(job.written_ids());
        }
        if job.op == Operation::Update {
            expected.versions.sent(job.key, job.version);
            if row.acknowledged() {
                expected.versions.acknowledged(job.key, job.version);
            }
        }
        // Warm-ups are records too: their writes are in the table.
        self.totals.add(&row);
        self.results.append(&row)?;
        Ok(row)
    }
}

/// Where a request ran: its point, arm and phase, when the phase started, the run's clock.
struct At<'a> {
    point: &'a LoadPoint,
    arm: &'a Arm,
    phase: Phase,
    started_ms: f64,
    clock: Instant,
}

/// The record of one request.
fn op_row(
    experiment: &str,
    target: crate::base::TargetKind,
    at: &At,
    (job, path): (&OpRequest, WritePath),
    done: Done<Attempted>,
) -> OpRow {
    let At {
        point,
        arm,
        phase,
        started_ms,
        clock,
    } = *at;
    let since = |t: Instant| t.saturating_duration_since(clock).as_secs_f64() * 1000.0;
    let (sent_ms, answered_ms) = (since(done.sent_at), since(done.answered_at));
    let attempted = done.answer;
    let (answer, target_failed) = match attempted.last.result {
        Ok(answer) => (answer, false),
        Err(e) => (crate::targets::workload::no_answer(e.to_string()), true),
    };
    let served = answer.served_by.clone().unwrap_or_default();
    OpRow {
        experiment: experiment.to_owned(),
        target,
        point: point.id,
        phase,
        table_rows: point.table_rows,
        index: arm.index,
        preparation: arm.preparation,
        rate: point.rate,
        op: job.op,
        op_rows: job.rows,
        seq: done.seq as u64,
        key: job.key,
        scheduled_ms: done.scheduled_ms,
        lag_ms: done.lag_ms,
        latency_ms: done.latency_ms,
        service_ms: done.service_ms,
        inside_ms: (!target_failed).then_some(answer.inside_ms),
        d1_ms: answer.d1_ms,
        rows_read: answer.rows_read,
        rows_written: answer.rows_written,
        rows_returned: answer.rows_returned,
        changes: answer.changes,
        outcome: answer.outcome,
        refusal: answer.refusal,
        target_failed,
        error: crate::records::error_text::recorded(&answer.error.clone().unwrap_or_default()),
        started_ms,
        retry: arm.retry.kind,
        attempts: attempted.attempts,
        first_refusal: attempted.first_refusal,
        first_failed: attempted.first_failed,
        retry_wait_ms: attempted.waited_ms,
        ttl_s: point.ttl_s,
        cache: answer.cache,
        version: answer.version,
        sent_ms: Some(sent_ms),
        answered_ms: Some(answered_ms),
        served_by_region: served.region.unwrap_or_default(),
        served_by_colo: served.colo.unwrap_or_default(),
        // Locally miniflare makes up a `cf` object (colo `DFW` among it): only Cloudflare's
        // colo is recorded.
        worker_colo: match target {
            t if t.is_remote() => answer.worker_colo.unwrap_or_default(),
            _ => String::new(),
        },
        session: job.session,
        session_bookmark: answer.session_bookmark,
        served_by_primary: served.primary,
        d1_attempts: answer.d1_attempts,
        sql_duration_ms: answer.sql_duration_ms,
        late_ms: Some(done.late_ms),
        path,
    }
}

#[cfg(test)]
mod tests;
