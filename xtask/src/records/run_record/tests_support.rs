//! A plausible run record for other modules' tests to adjust: one place that writes a
//! [`RunRecord`] out whole, so a field added to it is added here once.

use super::*;

/// A complete run of column-sweep's smoke profile on sqlite, on a fixed, quiet 2-core machine,
/// with nothing optional recorded (no baseline, no reconciliation, no remote, no overrides).
pub fn record() -> RunRecord {
    RunRecord {
        run: RunInfo {
            id: "20261129T235502Z-sqlite".into(),
            experiment: "column-sweep".into(),
            kind: StudyKind::Sweep,
            profile: "smoke".into(),
            target: TargetKind::Sqlite,
            x_axis: Some(Axis::Columns),
            y_axis: None,
            baseline: None,
            debug_corrupt: None,
            debug_slow_percent: None,
            isolate_heap: false,
            worker: None,
            alternate_workers: false,
            paired_workers: false,
            isolate_heap_alternate: false,
            order_seed: None,
            precision: None,
            max_repeats: None,
            sessions: None,
            status: RunStatus::Complete,
            started: "2026-11-29T23:55:02Z".into(),
            ended: Some("2026-11-29T23:56:02Z".into()),
            error: None,
            pid: None,
            shard: None,
            clock_zero_unix_ms: None,
        },
        studies: vec![study("column-sweep")],
        git: GitInfo {
            commit: Commit::Known("c0ffee".into()),
            dirty: false,
        },
        versions: ToolVersions::default(),
        machine: Machine {
            os: "linux".into(),
            arch: "x86_64".into(),
            cpu: "c".into(),
            cpus: 2,
            memory_gib: 1.0,
            load_at_start: None,
            load_at_end: None,
            speed: Vec::new(),
            forced: None,
            cpu_limit: None,
        },
        reconciliation: None,
        remote: None,
        baseline_remote: None,
        overrides: Overrides::default(),
        planned: None,
        sessions: Vec::new(),
        resumed: Vec::new(),
        merged: None,
    }
}

/// The study file `experiments/<name>.toml` as a run records it (its hash made up).
pub fn study(name: &str) -> StudyFile {
    StudyFile {
        name: name.into(),
        file: format!("experiments/{name}.toml"),
        sha256: "ab".into(),
        description: "d".into(),
    }
}
