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
/// (a session lives for one request), labelled apart from the plain binding's series, which keep
/// their names.
#[test]
fn read_path_plans_its_session_series_with_per_call_statements() {
    use d1bench_core::workload::SessionMode;
    let w = Workload::load(&project_root().join("experiments"), "read-path").unwrap();
    let (_, smoke) = w.profile(Some("smoke")).unwrap();
    let plan = w.plan(smoke);
    let in_session: Vec<&LoadPoint> = plan
        .points
        .iter()
        .filter(|p| p.session == SessionMode::FirstUnconstrained)
        .collect();
    assert!(!in_session.is_empty());
    for p in &in_session {
        assert_eq!(p.preparation, Preparation::PerCall, "{}", p.series());
        assert!(
            p.series().ends_with("session=first-unconstrained"),
            "{}",
            p.series()
        );
    }
    for op in [
        Operation::PointRead,
        Operation::RangeScan,
        Operation::Aggregate,
    ] {
        assert!(in_session.iter().any(|p| p.ops[0].op == op), "{op}");
    }
    let plain = plan
        .points
        .iter()
        .find(|p| p.session == SessionMode::None)
        .unwrap();
    assert!(!plain.series().contains("session"), "{}", plain.series());
    // Every preparation on the plain binding, and the session on per-call: three series per
    // size, index and operation.
    assert_eq!(plan.points.len(), 2 * 2 * 3 * 3);
}
