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
        w.check_target(crate::flags::TargetKind::Local)?;
        w.check_target(crate::flags::TargetKind::Sqlite)
    });
    assert!(checked >= 1);
}
