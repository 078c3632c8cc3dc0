//! The resumption: which records count as done, what is sent again, what is refused; and real
//! sqlite runs (a sweep and a ladder), cut short as an interrupt leaves them and resumed to the
//! end, in a git repository of their own.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::*;
use crate::flags::parse_run;
use crate::records::Totals;
use crate::records::csv::{self, Appender};
use crate::records::run_record::RunInfo;
use crate::studies::ladder::row::{ClimbFinding, RungRow};
use crate::studies::sweep::PlannedProbe;
use crate::studies::sweep::kind::SweepWork;
use crate::studies::sweep::row::ProbeRow;

const EXPERIMENT: &str = r#"
description = "d"
x-axis = "columns"
[profile.full]
repeats = 2
warmup = 1
[[profile.full.series]]
strategies = ["bound", "literal"]
columns = [1, 8]
row-bytes = [100]
rows = 10
"#;

/// A project root holding `experiments/t.toml` and the shipped column sweep and param-ceiling
/// ladder, committed in a git repository of its own.
fn project() -> (tempfile::TempDir, Paths, Shell) {
    let root = tempfile::tempdir().unwrap();
    let experiments = root.path().join("experiments");
    std::fs::create_dir(&experiments).unwrap();
    std::fs::write(experiments.join("t.toml"), EXPERIMENT).unwrap();
    let shipped = crate::paths::project_root().join("experiments");
    for name in ["column-sweep.toml", "param-ceiling.toml"] {
        std::fs::copy(shipped.join(name), experiments.join(name)).unwrap();
    }
    git(root.path(), &["init", "--quiet"]);
    git(root.path(), &["add", "experiments"]);
    git(root.path(), &["commit", "--quiet", "-m", "experiments"]);
    let sh = Shell::new().unwrap();
    sh.change_dir(root.path());
    let paths = Paths::new(root.path().to_owned());
    (root, paths, sh)
}

fn git(root: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(root)
        .output()
        .unwrap();
    assert!(output.status.success(), "git {args:?}: {output:?}");
    String::from_utf8(output.stdout).unwrap().trim().to_owned()
}

fn plan_of(paths: &Paths, args: &[&str]) -> RunPlan {
    super::super::plan(&parse_run(args).unwrap(), paths).unwrap()
}

/// The plan's sweep, with what resuming it read.
fn sweep(plan: &RunPlan) -> &SweepWork {
    let work: &dyn std::any::Any = plan.work.as_ref();
    work.downcast_ref().expect("a sweep")
}

fn probes(plan: &RunPlan) -> Vec<PlannedProbe> {
    sweep(plan).plan.probes()
}

/// Resumes `plan` on `target` (and its baseline) from what `run_dir` holds.
fn done(run_dir: &RunDir, plan: &mut RunPlan, target: TargetKind) -> Result<()> {
    let targets = plan.targets(target);
    plan.work.resume(run_dir, &plan.profile, &targets)
}

/// The probe of the plan that is (warm-up, repeat, columns, strategy): the plan runs them in
/// shuffled rounds, so their ids are found, not known.
fn find(plan: &RunPlan, key: (bool, usize, usize, &str)) -> PlannedProbe {
    let (warmup, repeat, columns, strategy) = key;
    let mut found = probes(plan).into_iter().filter(|p| {
        p.warmup == warmup
            && p.repeat == repeat
            && p.request.columns == columns
            && p.request.strategy.name() == strategy
    });
    let probe = found.next().expect("a probe of the plan");
    assert!(found.next().is_none(), "one probe of the plan");
    probe
}

/// What results.csv holds for `probe` on `target` (the parameters are what matching reads).
fn row(probe: &PlannedProbe, target: TargetKind) -> ProbeRow {
    let r = &probe.request;
    ProbeRow::target_failure("t", target, probe.series, probe.repeat, r, 1.0, "cut short")
}

fn ids(probes: &[PlannedProbe]) -> Vec<u64> {
    probes.iter().map(|p| p.request.probe_id).collect()
}

#[test]
fn recorded_probes_are_skipped_with_the_warm_ups_of_points_they_complete() {
    let (_root, paths, _sh) = project();
    let mut plan = plan_of(&paths, &["t", "--target", "local"]);
    // A warm-up round of every point's strategies, then two measured rounds.
    assert_eq!(ids(&probes(&plan)), (1..=12).collect::<Vec<u64>>());
    let dir = tempfile::tempdir().unwrap();
    let run_dir = RunDir::new(dir.path().to_owned());
    let mut results = Appender::<ProbeRow>::open(&run_dir.results_csv()).unwrap();
    // Columns 1 measured whole on local, then bound's first repeat at 8.
    let recorded = [
        (false, 0, 1, "bound"),
        (false, 0, 1, "literal"),
        (false, 1, 1, "bound"),
        (false, 1, 1, "literal"),
        (false, 0, 8, "bound"),
    ];
    for key in recorded {
        results
            .append(&row(&find(&plan, key), TargetKind::Local))
            .unwrap();
    }
    done(&run_dir, &mut plan, TargetKind::Local).unwrap();
    let local = sweep(&plan).remaining(&probes(&plan), TargetKind::Local);
    // Columns 8 again with both warm-ups: bound's point is not complete either.
    let mut expected: Vec<u64> = [
        (true, 0, 8, "bound"),
        (true, 0, 8, "literal"),
        (false, 0, 8, "literal"),
        (false, 1, 8, "bound"),
        (false, 1, 8, "literal"),
    ]
    .map(|key| find(&plan, key).request.probe_id)
    .to_vec();
    expected.sort();
    assert_eq!(ids(&local), expected);
    assert_eq!(
        ids(&sweep(&plan).remaining(&probes(&plan), TargetKind::Sqlite)),
        (1..=12).collect::<Vec<u64>>(),
        "the baseline has recorded nothing"
    );
    // What `measure` is told to skip: the rest of the plan.
    let skipped = sweep(&plan).skipped(TargetKind::Local);
    let mut skipped: Vec<u64> = skipped.into_iter().collect();
    skipped.sort();
    let mut rest: Vec<u64> = (1..=12).filter(|id| !expected.contains(id)).collect();
    rest.sort();
    assert_eq!(skipped, rest);
    let record = record_of(&plan, RunStatus::Interrupted);
    let resumption = resumption(&record, &plan, TargetKind::Local);
    assert_eq!(
        (
            resumption.skipped,
            resumption.warmups_skipped,
            resumption.remaining
        ),
        (5, 2, 5 + 12)
    );
    assert_eq!(resumption.unit, "probes");
}

#[test]
fn a_record_that_is_not_the_plans_is_refused_by_its_line() {
    let (_root, paths, _sh) = project();
    let mut plan = plan_of(&paths, &["t", "--target", "sqlite"]);
    type Change = Box<dyn Fn(&mut ProbeRow)>;
    let first = find(&plan, (false, 0, 1, "bound"));
    let second = find(&plan, (false, 0, 1, "literal"));
    let id = second.request.probe_id;
    let warmup = find(&plan, (true, 0, 1, "bound")).request.probe_id;
    let cases: [(Change, String); 5] = [
        (
            Box::new(|r| r.columns = 64),
            format!(
                "results.csv:3: probe {id} is session 0 series 1 repeat 0 literal columns 64 \
                 row-bytes 100 rows 10 escape-share 0 non-ascii-share 0 indexes 0 seed 1 in \
                 results.csv, but session 0 series 1 repeat 0 literal columns 1 row-bytes 100 \
                 rows 10 escape-share 0 non-ascii-share 0 indexes 0 seed 1 in the run's plan \
                 made again"
            ),
        ),
        (
            Box::new(|r| r.session = 1),
            format!("results.csv:3: probe {id} is session 1 series 1 repeat 0 literal"),
        ),
        (
            Box::new(move |r| r.probe_id = warmup),
            format!(
                "results.csv:3: probe {warmup} is session 0 series 1 repeat 0 literal columns 1 \
                 row-bytes 100 rows 10 escape-share 0 non-ascii-share 0 indexes 0 seed 1 in \
                 results.csv, but warm-up session 0 series 1 repeat 0 bound"
            ),
        ),
        (
            Box::new(|r| r.probe_id = 99),
            "results.csv:3: probe 99 is not a measured probe".to_owned(),
        ),
        (
            Box::new(|r| r.target = TargetKind::Local),
            "results.csv:3: a probe on local, which this run does not measure".to_owned(),
        ),
    ];
    for (change, expected) in cases {
        let dir = tempfile::tempdir().unwrap();
        let run_dir = RunDir::new(dir.path().to_owned());
        let mut results = Appender::<ProbeRow>::open(&run_dir.results_csv()).unwrap();
        results.append(&row(&first, TargetKind::Sqlite)).unwrap();
        let mut bad = row(&second, TargetKind::Sqlite);
        change(&mut bad);
        results.append(&bad).unwrap();
        let err = done(&run_dir, &mut plan, TargetKind::Sqlite)
            .unwrap_err()
            .to_string();
        assert!(err.contains(&expected), "expected {expected:?} in: {err}");
    }
}

#[test]
fn a_run_repeating_until_a_precision_is_refused_since_its_ids_depend_on_its_times() {
    let (root, paths, _sh) = project();
    std::fs::write(
        root.path().join("experiments/p.toml"),
        "description = \"d\"\nx-axis = \"columns\"\n[profile.full]\nrepeats = 2\n\
         precision = 0.05\nmax-repeats = 7\n[[profile.full.series]]\n\
         strategies = [\"bound\"]\ncolumns = [1]\nrow-bytes = [100]\nrows = 10\n",
    )
    .unwrap();
    let mut plan = plan_of(&paths, &["p", "--target", "sqlite"]);
    let dir = tempfile::tempdir().unwrap();
    let run_dir = RunDir::new(dir.path().to_owned());
    let err = done(&run_dir, &mut plan, TargetKind::Sqlite)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(
            "the run's profile `full` repeats its points until a precision (0.05 of the median, \
             at most 7 repeats)"
        ),
        "{err}"
    );
    assert!(err.contains("start a new run"), "{err}");
}

/// A run record of `plan` on sqlite with `status`, written nowhere.
fn record_of(plan: &RunPlan, status: RunStatus) -> RunRecord {
    let base = run_record::tests_support::record();
    RunRecord {
        run: RunInfo {
            id: "r".into(),
            experiment: "t".into(),
            profile: plan.profile.clone(),
            target: TargetKind::Sqlite,
            x_axis: Some(sweep(plan).x_axis),
            y_axis: None,
            baseline: None,
            debug_corrupt: None,
            debug_slow_percent: None,
            order_seed: None,
            precision: None,
            max_repeats: None,
            sessions: None,
            status,
            started: "2026-11-30T00:00:00Z".into(),
            ended: None,
            pid: Some(4242),
            ..base.run
        },
        studies: plan.files.clone(),
        git: GitInfo {
            commit: crate::records::run_record::Commit::Known("c".into()),
            ..base.git
        },
        machine: run_record::machine(),
        ..base
    }
}

#[test]
fn only_a_run_that_did_not_end_and_whose_process_is_gone_resumes() {
    let (_root, paths, _sh) = project();
    let plan = plan_of(&paths, &["t", "--target", "sqlite"]);
    let toml = Path::new("r/run.toml");
    let check = |status, alive: bool| {
        check_status(&record_of(&plan, status), toml, |pid| alive && pid == 4242)
            .map_err(|e| e.to_string())
    };
    for status in [
        RunStatus::Interrupted,
        RunStatus::Failed,
        RunStatus::Abandoned,
    ] {
        check(status, true).unwrap();
    }
    check(RunStatus::Running, false).unwrap();
    assert_eq!(
        check(RunStatus::Running, true).unwrap_err(),
        "r/run.toml: the run is still running (process 4242): resume it once that process has \
         ended"
    );
    assert_eq!(
        check(RunStatus::Complete, false).unwrap_err(),
        "r/run.toml: the run is complete: there is nothing to resume"
    );
    assert!(
        check(RunStatus::Invalid, false)
            .unwrap_err()
            .contains("the run ended invalid")
    );
}

#[test]
fn other_code_or_uncommitted_changes_are_refused() {
    let toml = Path::new("r/run.toml");
    let at = |commit: &str, dirty| GitInfo {
        commit: commit.parse().unwrap(),
        dirty,
    };
    let check = |then, now| check_code(&then, &now, toml).map_err(|e| e.to_string());
    check(at("a", false), at("a", false)).unwrap();
    assert!(
        check(at("a", false), at("b", false))
            .unwrap_err()
            .contains("the run was made at commit a, the tree is at b")
    );
    assert!(
        check(at("a", false), at("a", true))
            .unwrap_err()
            .contains("the tree has uncommitted changes")
    );
    assert!(
        check(at("a", true), at("a", true))
            .unwrap_err()
            .contains("the run was made from a tree with uncommitted changes")
    );
    assert!(
        check(at("unknown", false), at("unknown", false))
            .unwrap_err()
            .contains("git gives no commit")
    );
}

/// Runs `cargo xtask run <args>` in-process in the project; the one run directory under `out`.
fn run(paths: &Paths, sh: &Shell, args: &[&str]) -> Result<()> {
    super::super::run(&parse_run(args).unwrap(), sh, paths)
}

fn the_run_dir(out: &Path) -> PathBuf {
    let dirs: Vec<PathBuf> = std::fs::read_dir(out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    dirs.into_iter().next().unwrap()
}

/// Leaves the run as an interrupt would have, after `keep` of its results.csv rows.
fn cut_short<T: serde::Serialize + serde::de::DeserializeOwned>(
    run_dir: &RunDir,
    keep: usize,
) -> Vec<T> {
    let rows: Vec<T> = csv::read(&run_dir.results_csv()).unwrap();
    csv::write(&run_dir.results_csv(), &rows[..keep]).unwrap();
    let mut record = RunRecord::read(&run_dir.run_toml()).unwrap();
    record.run.status = RunStatus::Interrupted;
    record.run.error = Some(format!("interrupted after {keep} records"));
    record.reconciliation = None;
    record.write(&run_dir.run_toml()).unwrap();
    rows
}

fn status(run_dir: &RunDir) -> RunStatus {
    RunRecord::read(&run_dir.run_toml()).unwrap().run.status
}

#[test]
fn a_sweep_cut_short_resumes_to_every_probe_once_and_reconciles() {
    let (root, paths, sh) = project();
    let out = tempfile::tempdir().unwrap();
    let out_dir = out.path().to_str().unwrap();
    run(
        &paths,
        &sh,
        &[
            "column-sweep",
            "--target",
            "sqlite",
            "--profile",
            "smoke",
            "--out",
            out_dir,
        ],
    )
    .unwrap();
    let run_dir = RunDir::new(the_run_dir(out.path()));
    let resume = ["--resume", run_dir.path.to_str().unwrap()];
    let err = run(&paths, &sh, &resume).unwrap_err().to_string();
    assert!(
        err.contains("the run is complete: there is nothing to resume"),
        "{err}"
    );

    // Cut short in its second session: the first is whole on disk, the second has 4 records
    // (its 2 warm-ups and 2 measured probes).
    let full: Vec<ProbeRow> = cut_short(&run_dir, 32);
    assert_eq!(
        full.len(),
        56,
        "the smoke profile measures 26 points once in each of 2 sessions, after 2 warm-ups"
    );
    assert!(full[..28].iter().all(|r| r.session == 0));
    assert!(full[28..].iter().all(|r| r.session == 1));
    assert_eq!(full.iter().filter(|r| r.warmup).count(), 4);

    // Refused, leaving the run as it was: the experiment file changed...
    let file = root.path().join("experiments/column-sweep.toml");
    let original = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, format!("{original}# changed\n")).unwrap();
    let err = run(&paths, &sh, &resume).unwrap_err().to_string();
    assert!(
        err.contains("experiments/column-sweep.toml changed since the run (SHA-256"),
        "{err}"
    );
    // ...the same file at another commit...
    std::fs::write(&file, &original).unwrap();
    let commit = git(root.path(), &["rev-parse", "HEAD"]);
    std::fs::write(root.path().join("notes"), "n").unwrap();
    git(root.path(), &["add", "notes"]);
    git(root.path(), &["commit", "--quiet", "-m", "notes"]);
    let err = run(&paths, &sh, &resume).unwrap_err().to_string();
    assert!(
        err.contains(&format!(
            "the run was made at commit {commit}, the tree is at"
        )),
        "{err}"
    );
    // ...the run's commit with uncommitted changes.
    git(root.path(), &["reset", "--quiet", "--hard", &commit]);
    std::fs::write(root.path().join("experiments/t.toml"), "# changed").unwrap();
    let err = run(&paths, &sh, &resume).unwrap_err().to_string();
    assert!(err.contains("the tree has uncommitted changes"), "{err}");
    git(root.path(), &["checkout", "--quiet", "--", "experiments"]);
    assert_eq!(status(&run_dir), RunStatus::Interrupted);
    assert_eq!(
        csv::read::<ProbeRow>(&run_dir.results_csv()).unwrap().len(),
        32
    );

    run(&paths, &sh, &resume).unwrap();
    let rows: Vec<ProbeRow> = csv::read(&run_dir.results_csv()).unwrap();
    assert_eq!(
        rows[..32],
        full[..32],
        "the rows recorded before stay as they were"
    );
    assert!(
        rows[32..].iter().all(|r| r.session == 1 && !r.warmup),
        "what was left was the second session's, and keeps its index"
    );
    let mut ids: Vec<u64> = rows.iter().map(|r| r.probe_id).collect();
    ids.sort_unstable();
    let mut expected: Vec<u64> = full.iter().map(|r| r.probe_id).collect();
    expected.sort_unstable();
    assert_eq!(ids, expected, "every probe once, none twice");
    assert!(
        rows.iter().all(|r| r.reconciled && r.checksum_equal),
        "{rows:?}"
    );
    let record = RunRecord::read(&run_dir.run_toml()).unwrap();
    assert_eq!(record.run.status, RunStatus::Complete);
    assert_eq!(record.run.pid, None);
    let totals = record.reconciliation.unwrap();
    assert!(totals.all_reconciled());
    assert_eq!((totals.records, totals.reconciled), (52, 52));
    // The first session is not started again; the second's warm-ups were recorded before it
    // was cut short, so it goes on without them: every probe once.
    assert_eq!(totals.warmups, 4);
    let resumed = &record.resumed[0];
    assert_eq!(resumed.was, RunStatus::Interrupted);
    assert_eq!(
        (resumed.skipped, resumed.warmups_skipped, resumed.remaining),
        (32, 4, 24)
    );
    let sessions: Vec<usize> = record.sessions.iter().map(|s| s.session).collect();
    assert_eq!(
        sessions,
        [0, 1, 1],
        "the first attempt's two sessions and this one's second"
    );
    let summary = std::fs::read_to_string(run_dir.summary_md()).unwrap();
    assert!(
        summary.contains("(the run was interrupted): 32 probes already recorded"),
        "{summary}"
    );
    assert!(summary.contains("status complete"), "{summary}");
    // Two sessions on disk, one cut short and finished by the resumption: every interval is
    // between sessions.
    assert!(
        summary.contains(
            "(outside clock less the target's preparation, 95% interval over 2 sessions)"
        ),
        "{summary}"
    );
    let points: Vec<std::collections::HashMap<String, String>> =
        csv::read(&run_dir.summary_csv()).unwrap();
    for point in points.iter().filter(|p| p["measure"] == "ms_per_1000_rows") {
        assert_eq!(point["ci_method"], "between-sessions", "{point:?}");
        assert_eq!(
            (point["n"].as_str(), point["sessions"].as_str()),
            ("2", "2")
        );
    }
}

#[test]
fn a_ladder_run_cut_short_climbs_again_the_climbs_without_a_finding() {
    let (_root, paths, sh) = project();
    let out = tempfile::tempdir().unwrap();
    let out_dir = out.path().to_str().unwrap();
    let args = [
        "param-ceiling",
        "--target",
        "sqlite",
        "--profile",
        "smoke",
        "--out",
        out_dir,
    ];
    run(&paths, &sh, &args).unwrap();
    let run_dir = RunDir::new(the_run_dir(out.path()));
    let findings: Vec<ClimbFinding> = csv::read(&run_dir.findings_csv()).unwrap();
    assert_eq!(findings.len(), 4, "one climb per column count");
    // Two climbs found, the third cut short after two of its rungs.
    let rungs: Vec<RungRow> = csv::read(&run_dir.results_csv()).unwrap();
    let kept = rungs.iter().filter(|r| r.climb < 2).count() + 2;
    cut_short::<RungRow>(&run_dir, kept);
    csv::write(&run_dir.findings_csv(), &findings[..2]).unwrap();

    run(&paths, &sh, &["--resume", run_dir.path.to_str().unwrap()]).unwrap();
    let again: Vec<ClimbFinding> = csv::read(&run_dir.findings_csv()).unwrap();
    assert_eq!(
        again.iter().map(|f| f.climb).collect::<Vec<_>>(),
        [0, 1, 2, 3]
    );
    for (then, now) in findings.iter().zip(&again) {
        assert_eq!(
            (then.last_ok, then.first_failed),
            (now.last_ok, now.first_failed)
        );
    }
    let rows: Vec<RungRow> = csv::read(&run_dir.results_csv()).unwrap();
    let mut ids: Vec<u64> = rows.iter().map(|r| r.rung_id).collect();
    let count = ids.len();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), count, "a rung id twice");
    // The cut climb's two rungs stay, and it is climbed whole again.
    assert_eq!(rows.len(), rungs.len() + 2);
    let record = RunRecord::read(&run_dir.run_toml()).unwrap();
    assert_eq!(record.run.status, RunStatus::Complete);
    assert_eq!(
        (
            record.resumed[0].skipped,
            record.resumed[0].remaining,
            record.resumed[0].unit.as_str()
        ),
        (2, 2, "climbs")
    );
    let totals: Totals = record.reconciliation.unwrap();
    assert_eq!(totals.records, rows.len());
    assert!(totals.all_reconciled());

    // Cut short after its last finding: nothing is left, and no target is started for it.
    cut_short::<RungRow>(&run_dir, rows.len());
    run(&paths, &sh, &["--resume", run_dir.path.to_str().unwrap()]).unwrap();
    let after = RunRecord::read(&run_dir.run_toml()).unwrap();
    assert_eq!(after.run.status, RunStatus::Complete);
    assert_eq!(
        after.sessions.len(),
        record.sessions.len(),
        "a session was opened"
    );
    assert_eq!(after.resumed[1].remaining, 0);
    assert_eq!(
        csv::read::<RungRow>(&run_dir.results_csv()).unwrap().len(),
        rows.len()
    );
}
