//! The tests of `run_record`.

use super::*;

#[test]
fn commits_and_revisions_read_back_as_written() {
    let hash = "16c198ba95dc38a82458a9259b0366af832807e8";
    for (text, revision) in [
        (hash, (Commit::Known(hash.into()), false)),
        ("unknown", (Commit::Unknown, false)),
        ("unknown-dirty", (Commit::Unknown, true)),
    ] {
        let revision = Revision {
            commit: revision.0,
            dirty: revision.1,
        };
        assert_eq!(text.parse::<Revision>(), Ok(revision.clone()));
        assert_eq!(revision.to_string(), text);
    }
    let dirty = format!("{hash}-dirty").parse::<Revision>().unwrap();
    assert!(dirty.dirty);
    assert_eq!(dirty.commit.short(7), "16c198b");
    assert_eq!(Commit::Unknown.short(7), "unknown");
    assert!("".parse::<Commit>().is_err());
}

#[test]
fn a_running_record_of_a_dead_process_is_marked_abandoned_and_no_other() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.toml");
    let running = "[run]\nstatus = \"running\"\npid = 999999999\n";
    std::fs::write(&path, running).unwrap();
    assert!(
        !mark_abandoned(&path, 42),
        "another process's run was marked"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), running);
    assert!(mark_abandoned(&path, 999_999_999));
    let record = std::fs::read_to_string(&path).unwrap();
    assert!(record.contains("status = \"abandoned\""), "{record}");
    assert!(!record.contains("pid"), "{record}");
    assert!(
        record.contains("a later run found it and stopped what it had left running."),
        "{record}"
    );
    assert!(!mark_abandoned(&path, 999_999_999), "marked twice");
}

#[test]
fn a_record_round_trips_through_toml() {
    let mut record = tests_support::record();
    record.run.id = "x".into();
    record.run.target = TargetKind::Local;
    record.run.baseline = Some(TargetKind::Sqlite);
    record.run.ended = None;
    record.run.pid = Some(7);
    record.git.dirty = true;
    record.reconciliation = Some(Totals::default());
    let record = RunRecord {
        overrides: Overrides {
            repeats: Some(2),
            only: Some("strategy=bound".into()),
            ..Overrides::default()
        },
        planned: Some(Planned {
            probes: 4,
            rows: 40,
        }),
        sessions: vec![SessionTime {
            target: TargetKind::Local,
            session: 1,
            warmup_discarded: Some(3),
            worker: None,
            start_ms: 1.0,
            wall_ms: 2.0,
            calls_ms: 1.5,
            calls: 12,
            stop_ms: 0.5,
        }],
        resumed: vec![Resumption {
            at: "2026-11-29T23:56:02Z".into(),
            was: RunStatus::Interrupted,
            error: None,
            unit: "probes".into(),
            skipped: 3,
            warmups_skipped: 1,
            remaining: 1,
        }],
        ..record
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.toml");
    record.write(&path).unwrap();
    let back = RunRecord::read(&path).unwrap();
    assert_eq!(back.run.status, RunStatus::Complete);
    assert_eq!(back.run.x_axis, Some(Axis::Columns));
    assert_eq!(back.reconciliation, Some(Totals::default()));
    assert_eq!(back.overrides, record.overrides);
    assert_eq!(back.planned, record.planned);
    assert_eq!(back.sessions, record.sessions);
    assert_eq!(back.resumed, record.resumed);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.contains("[overrides]\nrepeats = 2\nonly = \"strategy=bound\""),
        "{text}"
    );
    assert!(!dir.path().join("run.toml.tmp").exists());
}

#[test]
fn a_sweep_record_of_the_earlier_shape_still_reads() {
    // The example run's run.toml as committed before records listed their studies.
    let path = crate::paths::project_root().join("xtask/tests/golden/run-before-studies.toml");
    let record = RunRecord::read(&path).unwrap();
    assert_eq!(record.run.kind, StudyKind::Sweep);
    assert_eq!(record.run.x_axis, Some(Axis::Columns));
    assert_eq!(record.studies[0].name, "column-sweep");
    assert_eq!(record.run.status, RunStatus::Complete);
}

#[test]
fn a_ladder_record_of_the_earlier_shape_still_reads() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.toml");
    std::fs::write(
        &path,
        r#"sqlite = "3.50.2"
[run]
id = "x"
experiment = "limits"
profile = "smoke"
target = "local"
status = "complete"
started = "2026-11-29T23:55:02Z"
[[ladders]]
name = "columns"
file = "experiments/columns.toml"
sha256 = "ab"
description = "d"
[git]
commit = "c"
dirty = false
[versions]
d1bench = "0.1.0"
worker = "w"
worker_crate = "0.8.7"
wrangler = "4"
workerd = "1"
rustc = "r"
[machine]
os = "linux"
arch = "x86_64"
cpu = "c"
cpus = 2
memory_gib = 1.0
[totals]
rungs = 3
reconciled = 3
refused = 1
errors = 0
"#,
    )
    .unwrap();
    let record = RunRecord::read(&path).unwrap();
    assert_eq!(record.run.kind, StudyKind::Ladder);
    assert_eq!(record.studies[0].name, "columns");
    assert_eq!(record.reconciliation.unwrap().records, 3);
    assert_eq!(record.versions.sqlite, "3.50.2");
}
