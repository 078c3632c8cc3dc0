//! The workload files' tests: every bad file refused with its golden error, every shipped file
//! parsed and planned, its smoke profile seconds long.

use super::*;
use crate::paths::project_root;

fn golden_dir() -> PathBuf {
    project_root().join("xtask/tests/bad-workloads")
}

#[test]
fn every_bad_workload_fails_with_its_golden_error() {
    let checked = crate::studies::files::check_golden_errors(&golden_dir(), Workload::parse);
    assert!(checked >= 8, "only {checked} bad workload files");
}

#[test]
fn the_workload_files_parse_and_plan() {
    let dir = project_root().join("experiments");
    let mut found = 0;
    for name in crate::studies::files::toml_stems(&dir).unwrap() {
        if !is_workload_file(&dir.join(format!("{name}.toml"))) {
            continue;
        }
        let w = Workload::load(&dir, &name).unwrap();
        for (profile_name, profile) in &w.file.profile {
            let plan = w.plan(profile);
            assert!(!plan.points.is_empty(), "{name} {profile_name}");
            assert!(
                plan.points
                    .windows(2)
                    .all(|p| p[0].table_rows <= p[1].table_rows)
            );
        }
        let (_, smoke) = w.profile(Some("smoke")).unwrap();
        let smoke = w.plan(smoke);
        let seconds = smoke.points.len() as f64 * (smoke.duration_s + smoke.warmup_s);
        assert!(
            seconds <= 60.0,
            "{name}'s smoke profile loads for {seconds} s"
        );
        found += 1;
    }
    assert!(found >= 2, "{found} workload files");
}

/// A workload through Workers KV, on a target without it: refused at the operation, before
/// anything starts.
#[test]
fn a_cache_workload_on_a_target_without_kv_fails_with_its_golden_error() {
    let dir = project_root().join("xtask/tests/bad-workloads-sqlite");
    let checked = crate::studies::files::check_golden_errors(&dir, |name, path, source| {
        let w = Workload::parse(name, path, source)?;
        w.check_target(crate::base::TargetKind::Local)?;
        w.check_target(crate::base::TargetKind::Sqlite)
    });
    assert!(checked >= 1);
}

/// A REST write path on a target without D1's REST API, or past the API's 1,200 calls in 5
/// minutes on remote: refused at the `path`, before anything starts.
#[test]
fn a_rest_path_off_remote_or_past_the_api_rate_fails_with_its_golden_error() {
    let dir = project_root().join("xtask/tests/bad-workloads-rest");
    let checked = crate::studies::files::check_golden_errors(&dir, |name, path, source| {
        let w = Workload::parse(name, path, source)?;
        let (_, profile) = w.profile(Some("smoke"))?;
        let plan = w.plan(profile);
        w.check_path_target(profile, &plan, crate::base::TargetKind::Remote)?;
        w.check_path_target(profile, &plan, crate::base::TargetKind::Local)
    });
    assert_eq!(checked, 2);
}

/// read-path's smoke profile sweeps a D1 session: every read in it with per-call statements
/// (a session lives for one request), as arms of the same points as the plain binding's, whose
/// names stay as they were; both indexes and both preparations share every point.
#[test]
fn read_path_plans_its_session_arms_with_per_call_statements() {
    use d1bench_core::workload::SessionMode;
    let w = Workload::load(&project_root().join("experiments"), "read-path").unwrap();
    let (_, smoke) = w.profile(Some("smoke")).unwrap();
    let plan = w.plan(smoke);
    // One point per size and read, each with 2 indexes × (reuse, per-call, per-call in a session).
    assert_eq!(plan.points.len(), 2 * 3);
    for p in &plan.points {
        assert_eq!(p.arms.len(), 2 * 3, "{}", p.series());
        let shares: f64 = p.arms.iter().map(|a| a.share).sum();
        assert!((shares - 1.0).abs() < 1e-9);
        for arm in p
            .arms
            .iter()
            .filter(|a| a.session == SessionMode::FirstUnconstrained)
        {
            assert_eq!(arm.preparation, Preparation::PerCall, "{}", arm.series());
            assert!(arm.series().ends_with("session=first-unconstrained"));
        }
        let plain = p
            .arms
            .iter()
            .find(|a| a.session == SessionMode::None)
            .unwrap();
        assert!(!plain.series().contains("session"), "{}", plain.series());
    }
    for op in [
        Operation::PointRead,
        Operation::RangeScan,
        Operation::Aggregate,
    ] {
        assert!(plan.points.iter().any(|p| p.arms[0].op.op == op), "{op}");
    }
}

/// write-contention interleaves single writes and batches at the same row rate: a batch of 10
/// is drawn a tenth as often as a single write, so each carries half the point's rows.
#[test]
fn write_contention_interleaves_single_and_batched_writes_at_one_row_rate() {
    let w = Workload::load(&project_root().join("experiments"), "write-contention").unwrap();
    let (_, smoke) = w.profile(Some("smoke")).unwrap();
    let plan = w.plan(smoke);
    for p in &plan.points {
        let rows_per_s = |op: Operation| -> f64 {
            p.arms
                .iter()
                .filter(|a| a.op.op == op)
                .map(|a| a.share * p.rate * a.op.rows as f64)
                .sum()
        };
        let single = rows_per_s(Operation::Write);
        let batched = rows_per_s(Operation::BatchWrite);
        assert!(
            single > 0.0 && (single - batched).abs() < 1e-9,
            "{single} {batched}"
        );
    }
}
