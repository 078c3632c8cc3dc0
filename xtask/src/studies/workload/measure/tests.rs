//! The workload pipeline's tests: seeding and reconciling on in-process SQLite (ids, checksums,
//! versions), the aggregate through the covering index, and the requests each point draws.

use super::*;
use crate::studies::workload::Workload;
use crate::targets::sqlite::workload::SqliteWorkload;
use d1bench_core::Outcome;
use d1bench_core::workload::IndexKind;

/// The measured requests of point `point` for `seconds`, versions counted from 1.
fn measure_jobs(plan: &WorkloadPlan, point: usize, seconds: f64, next: &mut u64) -> Vec<OpRequest> {
    let mut versions = BTreeMap::new();
    let mut ids = Ids {
        next_write_id: next,
        next_version: &mut versions,
        generation: 7000,
    };
    jobs(plan, &plan.points[point], Phase::Measure, seconds, &mut ids)
        .into_iter()
        .map(|(_, job)| job)
        .collect()
}

const CACHE: &str = r#"
description = "test"
[table]
columns = 4
row-bytes = 64
groups = 10
[[operation]]
kind = "cached-read"
weight = 70
[[operation]]
kind = "update"
weight = 30
[profile.smoke]
rows = [100]
cache-keys = 5
rates = [100]
ttls-s = [0.5, 30]
duration-s = 2
"#;

/// A cache workload: one point per TTL, reads and updates on the first `cache-keys` rows,
/// each update the next version of its row, each point's KV keys its own.
#[test]
fn cache_requests_take_their_ttl_and_each_update_the_next_version() {
    let plan = plan(CACHE);
    assert_eq!(plan.points.len(), 2);
    assert_eq!(plan.points[1].ttl_s, Some(30.0));
    let mut next = FIRST_WRITE_ID;
    let jobs = measure_jobs(&plan, 1, 2.0, &mut next);
    assert_eq!(next, FIRST_WRITE_ID);
    let mut last: BTreeMap<u64, u64> = BTreeMap::new();
    for job in &jobs {
        assert!((1..=5).contains(&job.key), "{job:?}");
        job.validate().unwrap();
        match job.op {
            Operation::Update => {
                let before = last.insert(job.key, job.version).unwrap_or(0);
                assert_eq!(job.version, before + 1);
            }
            Operation::CachedRead => {
                let cache = job.cache.unwrap();
                assert_eq!((cache.ttl_s, cache.generation), (30.0, 7002));
            }
            other => panic!("{other}"),
        }
    }
    assert!(last.values().sum::<u64>() > 20, "{last:?}");
}

/// Updates on SQLite leave each row's newest version, and the final check reconciles the
/// versions against what was acknowledged and sent.
#[test]
fn updates_reconcile_by_version() {
    let plan = plan(CACHE);
    let client = SqliteWorkload::open().unwrap();
    seed(&client, &plan, 0, 100).unwrap();
    let mut expected = Expected {
        seeded: 100,
        written: BTreeSet::new(),
        attempted: BTreeSet::new(),
        versions: RowVersions::default(),
    };
    let mut next = FIRST_WRITE_ID;
    for job in measure_jobs(&plan, 0, 2.0, &mut next)
        .iter()
        .filter(|j| j.op == Operation::Update)
    {
        let answer = client.op(job).result.unwrap();
        assert_eq!(
            (answer.outcome, answer.changes),
            (Outcome::Ok, 1),
            "{answer:?}"
        );
        expected.versions.sent(job.key, job.version);
        expected.versions.acknowledged(job.key, job.version);
    }
    let row = check(&client, &plan, &at(100), (1, 0.0), &expected, false).unwrap();
    assert!(row.reconciled, "{row:?}");
    // An acknowledged update the table does not hold: caught.
    expected.versions.acknowledged(3, 1_000);
    let row = check(&client, &plan, &at(100), (1, 0.0), &expected, true).unwrap();
    assert!(
        !row.reconciled && row.note.contains("older version"),
        "{row:?}"
    );
}

fn plan(source: &str) -> WorkloadPlan {
    let w = Workload::parse("t", std::path::Path::new("t.toml"), source.to_owned()).unwrap();
    let (_, profile) = w.profile(Some("smoke")).unwrap();
    w.plan(profile)
}

const FILE: &str = r#"
description = "test"
[table]
columns = 4
row-bytes = 64
groups = 10
[[operation]]
kind = "point-read"
weight = 50
[[operation]]
kind = "batch-write"
rows = 3
weight = 50
[profile.smoke]
rows = [100, 250]
rates = [200]
duration-s = 0.1
"#;

fn at(table_rows: u64) -> Table<'static> {
    Table {
        experiment: "t",
        target: TargetKind::Sqlite,
        when: "x",
        table_rows,
    }
}

#[test]
fn seeded_and_written_rows_reconcile_and_a_lost_row_does_not() {
    let plan = plan(FILE);
    let client = SqliteWorkload::open().unwrap();
    let mut expected = Expected {
        seeded: 0,
        written: BTreeSet::new(),
        attempted: BTreeSet::new(),
        versions: RowVersions::default(),
    };
    assert_eq!(seed(&client, &plan, 0, 100).unwrap(), 1);
    expected.seeded = 100;
    let mut next = FIRST_WRITE_ID;
    let jobs = measure_jobs(&plan, 0, 0.1, &mut next);
    assert_eq!(jobs.len(), 20);
    for job in &jobs {
        let answer = client.op(job).result.unwrap();
        assert_eq!(answer.outcome, Outcome::Ok, "{answer:?}");
        if job.op == Operation::BatchWrite {
            assert_eq!(answer.changes, 3);
            expected.written.extend(job.written_ids());
        } else {
            assert_eq!(answer.rows_returned, 1);
        }
    }
    assert!(!expected.written.is_empty());
    let row = check(&client, &plan, &at(100), (1, 0.0), &expected, false).unwrap();
    assert!(row.reconciled, "{row:?}");
    // A write the table holds but no one acknowledged: caught.
    let lost = expected.written.pop_last().unwrap();
    let row = check(&client, &plan, &at(100), (1, 0.0), &expected, false).unwrap();
    assert!(!row.reconciled);
    expected.written.insert(lost);
    // The same number of rows, another id: caught by the id sum.
    let db = client
        .check(&CheckRequest {
            spec: plan.spec,
            drop: false,
        })
        .unwrap();
    assert_eq!(db.rows_present, 100 + expected.written.len() as u64);
    // Growing to the next size keeps every row.
    assert_eq!(seed(&client, &plan, 100, 250).unwrap(), 1);
    expected.seeded = 250;
    let row = check(&client, &plan, &at(250), (1, 0.0), &expected, true).unwrap();
    assert!(row.reconciled, "{row:?}");
}

/// A group's integers summed in index order through the covering index: `sum` overflowed
/// there at 2.1M rows (running sums of sorted values up to 2^53 leave 64 bits); `total`
/// does not.
#[test]
fn the_aggregate_does_not_overflow_through_the_covering_index() {
    let plan = plan(
        &FILE
            .replace("groups = 10", "groups = 1")
            .replace("rows = [100, 250]", "rows = [100, 4000]"),
    );
    let client = SqliteWorkload::open().unwrap();
    seed(&client, &plan, 0, 20000).unwrap();
    client.index(&[IndexKind::Covering]).unwrap();
    let op = OpRequest {
        spec: plan.spec,
        op: Operation::Aggregate,
        key: 0,
        rows: 1,
        preparation: d1bench_core::workload::Preparation::PerCall,
        version: 0,
        cache: None,
        session: Default::default(),
        index: Some(IndexKind::Covering),
    };
    let answer = client.op(&op).result.unwrap();
    assert_eq!(answer.outcome, Outcome::Ok, "{answer:?}");
    assert_eq!(answer.rows_returned, 1);
    // `INDEXED BY` names the index the arm reads through: one the table does not carry is an
    // error, never a silent other plan.
    let through_key = OpRequest {
        index: Some(IndexKind::Key),
        ..op
    };
    let answer = client.op(&through_key).result.unwrap();
    assert_ne!(answer.outcome, Outcome::Ok, "{answer:?}");
    assert!(answer.error.unwrap().contains("no such index"));
}

/// Arms share a point: each request's arm drawn by its share from the order seed, so both
/// indexes and both preparations are sent throughout the point, interleaved.
#[test]
fn the_arms_of_a_point_interleave_by_their_shares() {
    let plan = plan(&FILE.replace(
        "rates = [200]",
        "rates = [200]\nindexes = [\"key\", \"covering\"]\npreparation = [\"reuse\", \"per-call\"]",
    ));
    let point = &plan.points[0];
    let mut next = FIRST_WRITE_ID;
    let mut versions = BTreeMap::new();
    let mut ids = Ids {
        next_write_id: &mut next,
        next_version: &mut versions,
        generation: 0,
    };
    let drawn = jobs(&plan, point, Phase::Measure, 10.0, &mut ids);
    let arms: Vec<usize> = drawn.iter().map(|(a, _)| *a).collect();
    assert_eq!(point.arms.len() % 4, 0, "{:?}", point.arms);
    for (a, arm) in point.arms.iter().enumerate() {
        let n = arms.iter().filter(|&&x| x == a).count();
        let expected = arm.share * arms.len() as f64;
        assert!(
            (n as f64 - expected).abs() < 5.0 * expected.sqrt(),
            "{a}: {n} of {expected}"
        );
        // Both halves of the point send every arm.
        let half = arms.len() / 2;
        assert!(arms[..half].contains(&a) && arms[half..].contains(&a));
    }
    for (a, job) in &drawn {
        let arm = &point.arms[*a];
        assert_eq!(job.index, Some(arm.index));
        assert_eq!(job.preparation, arm.preparation);
        assert_eq!(job.op, arm.op.op);
    }
}

#[test]
fn the_requests_are_the_same_on_every_run_and_follow_the_weights() {
    let plan = plan(FILE);
    let mut a = FIRST_WRITE_ID;
    let mut b = FIRST_WRITE_ID;
    let first = measure_jobs(&plan, 0, 10.0, &mut a);
    let again = measure_jobs(&plan, 0, 10.0, &mut b);
    assert_eq!(first, again);
    let writes = first.iter().filter(|j| j.op.writes()).count();
    assert!((850..1150).contains(&writes), "{writes} of 2000");
    assert!(
        first
            .iter()
            .all(|j| j.op.writes() || (1..=100).contains(&j.key))
    );
    assert_eq!(a - FIRST_WRITE_ID, 3 * writes as u64);
}
