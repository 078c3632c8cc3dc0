//! The dry run: its text for a small experiment, the estimate from earlier runs, and that it
//! touches nothing.

use std::path::Path;

use super::*;
use crate::base::TargetKind;
use crate::flags::parse_run;
use crate::records::run_history::Planned;
use crate::records::run_record::{GitInfo, RunInfo};
use crate::records::{RunRecord, Totals};
use crate::studies::dry_run::compact;
use crate::studies::sweep::row::ProbeRow;

const EXPERIMENT: &str = r#"
description = "d"
x-axis = "columns"
default-profile = "full"
[profile.full]
repeats = 3
warmup = 1
[[profile.full.series]]
strategies = ["bound", "literal"]
columns = [2, 8, 64]
row-bytes = [1000]
rows = 100
indexes = [2]
[[profile.full.series]]
label = "wide"
strategies = ["per-row"]
columns = [64]
row-bytes = [1000]
rows = 60
"#;

/// A project root holding `experiments/t.toml`.
fn root() -> (tempfile::TempDir, Paths) {
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir(root.path().join("experiments")).unwrap();
    std::fs::write(root.path().join("experiments/t.toml"), EXPERIMENT).unwrap();
    let paths = Paths::new(root.path().to_owned());
    (root, paths)
}

fn text(args: &[&str], estimate: &str, account: Option<crate::base::AccountPlan>) -> String {
    let (_root, paths) = root();
    let flags = parse_run(args).unwrap();
    let plan = super::super::plan(&flags, &paths).unwrap();
    describe(&flags, &plan, estimate, account)
}

#[test]
fn a_dry_run_lists_each_line_with_its_points_probes_and_rows() {
    assert_eq!(
        text(&["t", "--target", "sqlite"], "E", None),
        "dry run of `t`, profile `full`, on sqlite: nothing is installed, started or written\n\
         28 probes (21 measured, 7 warm-ups) at 7 points, 2,640 rows:\n\
         \x20 bound             3 points    12 probes   (3 warm-ups)       1,200 rows  columns 2, 8, 64\n\
         \x20 literal           3 points    12 probes   (3 warm-ups)       1,200 rows  columns 2, 8, 64\n\
         \x20 per-row (wide)     1 point     4 probes    (1 warm-up)         240 rows  columns 64\n\
         estimated wall time: E\n"
    );
}

#[test]
fn overrides_and_the_filter_show_in_the_plan() {
    assert_eq!(
        text(
            &[
                "t",
                "--target",
                "local",
                "--repeats",
                "1",
                "--warmup",
                "0",
                "--only",
                "columns=64"
            ],
            "E",
            None
        ),
        "dry run of `t`, profile `full`, on local: nothing is installed, started or written\n\
         overrides: --repeats 1 --warmup 0 --only columns=64\n\
         3 probes (3 measured, 0 warm-ups) at 3 points, 260 rows:\n\
         \x20 bound              1 point      1 probe   (0 warm-ups)         100 rows  columns 64\n\
         \x20 literal            1 point      1 probe   (0 warm-ups)         100 rows  columns 64\n\
         \x20 per-row (wide)     1 point      1 probe   (0 warm-ups)          60 rows  columns 64\n\
         and the same 3 probes on the baseline, sqlite (bare SQLite in-process)\n\
         estimated wall time: E\n"
    );
}

#[test]
fn a_remote_dry_run_prices_the_run_with_its_index_writes_against_the_quotas() {
    let text = text(
        &["t", "--target", "remote", "--plan", "free"],
        "E",
        Some(crate::base::AccountPlan::Free),
    );
    let cost = text.split_once("on Cloudflare").unwrap().1;
    // 24 bound and literal probes of 100 rows with 2 indexes (3 writes a row), 4 per-row of 60;
    // each probe's count reads its rows and its content checksum reads them several times
    // (`d1bench_core::checksum::rows_read`).
    assert_eq!(
        cost,
        ", plan free (no credentials were read):\n\
         \x20 Worker requests                                      85  (Free: 100,000 a day)\n\
         \x20 D1 rows written (each index entry a row)          7,440  (Free: 100,000 a day)\n\
         \x20 D1 rows read                                     34,816  (Free: 5,000,000 a day)\n\
         \x20 most D1 queries in one invocation: 60 (free allows 50 by D1's limits page, 1,000 by the Workers changelog of 2026-02-11)\n\
         warning: 4 probe(s) make more than the free plan's 50 D1 queries per invocation: \
         production refuses them (that refusal is what they measure)\n"
    );
}

#[test]
fn a_dry_run_through_a_durable_object_on_cloudflare_prices_its_rows_apart_from_d1s() {
    let alone = text(
        &[
            "t",
            "--target",
            "remote-do",
            "--plan",
            "free",
            "--no-baseline",
        ],
        "E",
        Some(crate::base::AccountPlan::Free),
    );
    let cost = alone.split_once("on Cloudflare").unwrap().1;
    assert_eq!(
        cost,
        ", plan free (no credentials were read):\n\
         \x20 Worker requests                                      85  (Free: 100,000 a day)\n\
         \x20 Durable Object rows written                       7,440  (its own storage, not D1's quota)\n\
         \x20 Durable Object rows read                         34,816  (its own storage, not D1's quota)\n\
         \x20 no D1 queries: the Durable Object's SQL calls are not D1's, and no query budget per invocation applies to them\n"
    );
    // Beside D1 on Cloudflare: every session deployed twice over, D1's rows and the object's.
    let beside = text(
        &[
            "t",
            "--target",
            "remote",
            "--baseline",
            "remote-do",
            "--plan",
            "free",
        ],
        "E",
        Some(crate::base::AccountPlan::Free),
    );
    assert!(
        beside.contains(
            "and the same 28 probes on the baseline, remote-do (the Worker's Durable Object on \
             Cloudflare, deployed afresh each session)"
        ),
        "{beside}"
    );
    let cost = beside.split_once("on Cloudflare,").unwrap().1;
    for line in [
        "Worker requests                                     170",
        "D1 rows written (each index entry a row)          7,440",
        "Durable Object rows written                       7,440",
        "most D1 queries in one invocation: 60",
        "warning: 4 probe(s) make more than the free plan's 50 D1 queries",
    ] {
        assert!(cost.contains(line), "{line} in {cost}");
    }
}

#[test]
fn a_dry_run_touches_nothing_and_reads_no_credentials() {
    let (root, paths) = root();
    for args in [
        ["t", "--target", "remote", "--dry-run"],
        ["t", "--target", "local", "--dry-run"],
    ] {
        let flags = parse_run(&args).unwrap();
        print(&flags, &paths).unwrap();
    }
    let made: Vec<String> = std::fs::read_dir(root.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(made, ["experiments"], "a dry run made files");
    // Bad input is refused as for a run.
    let err = print(
        &parse_run(&["t", "--only", "rows=1", "--dry-run"]).unwrap(),
        &paths,
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("there is no key `rows`"), "{err}");
    let err = print(
        &parse_run(&["t", "--target", "sqlite", "--plan", "paid", "--dry-run"]).unwrap(),
        &paths,
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("--plan only applies to --target remote"),
        "{err}"
    );
}

/// A run record of `t` on sqlite, profile full, with this status, times and plan.
fn earlier(
    out: &Path,
    name: &str,
    status: RunStatus,
    started: &str,
    ended: &str,
    planned: Option<Planned>,
) -> RunRecord {
    let base = run_record::tests_support::record();
    let record = RunRecord {
        run: RunInfo {
            id: name.into(),
            experiment: "t".into(),
            profile: "full".into(),
            status,
            started: started.into(),
            ended: Some(ended.into()),
            ..base.run
        },
        studies: Vec::new(),
        git: GitInfo {
            commit: crate::records::run_record::Commit::Known("c".into()),
            ..base.git
        },
        machine: run_record::machine(),
        reconciliation: Some(Totals {
            records: 21,
            warmups: 7,
            ..Totals::default()
        }),
        planned,
        ..base
    };
    std::fs::create_dir_all(out.join(name)).unwrap();
    record.write(&out.join(name).join("run.toml")).unwrap();
    record
}

#[test]
fn the_estimate_scales_the_newest_comparable_run_by_rows_or_probes() {
    let (_root, paths) = root();
    let out = tempfile::tempdir().unwrap();
    let flags = parse_run(&["t", "--target", "sqlite"]).unwrap();
    let plan = super::super::plan(&flags, &paths).unwrap();
    let machine = run_record::machine();
    let estimate = || estimate(out.path(), &flags, &plan, &machine, &paths);
    assert!(
        estimate().starts_with(
            "no earlier run to estimate from (none complete of `t`, profile `full`, on sqlite"
        ),
        "{}",
        estimate()
    );
    // Older, complete: 100 s for half the rows, then 1,320.
    let half = Some(Planned {
        probes: 14,
        rows: 1_320,
    });
    earlier(
        out.path(),
        "a",
        RunStatus::Complete,
        "2026-11-30T00:00:00Z",
        "2026-11-30T00:01:40Z",
        half,
    );
    assert_eq!(
        estimate(),
        "about 3 min 20 s, from run a (1 min 40 s for 1,320 rows, scaled to 2,640 rows)"
    );
    // Newer runs that do not count: interrupted, another machine, resumed.
    earlier(
        out.path(),
        "b",
        RunStatus::Interrupted,
        "2026-12-01T00:00:00Z",
        "2026-12-01T00:00:10Z",
        half,
    );
    let mut other = earlier(
        out.path(),
        "c",
        RunStatus::Complete,
        "2026-12-02T00:00:00Z",
        "2026-12-02T00:00:10Z",
        half,
    );
    other.machine.cpus += 1;
    other.write(&out.path().join("c/run.toml")).unwrap();
    let mut resumed = earlier(
        out.path(),
        "d",
        RunStatus::Complete,
        "2026-12-03T00:00:00Z",
        "2026-12-03T00:00:10Z",
        half,
    );
    resumed
        .resumed
        .push(crate::records::run_history::Resumption {
            at: "2026-12-03T00:00:05Z".into(),
            was: RunStatus::Interrupted,
            error: None,
            unit: "probes".into(),
            skipped: 1,
            warmups_skipped: 0,
            remaining: 1,
        });
    resumed.write(&out.path().join("d/run.toml")).unwrap();
    assert!(estimate().contains("from run a"), "{}", estimate());
    // The newest comparable one, recorded before `planned` was: scaled by its probes.
    earlier(
        out.path(),
        "e",
        RunStatus::Complete,
        "2026-12-04T00:00:00Z",
        "2026-12-04T00:00:56Z",
        None,
    );
    assert_eq!(
        estimate(),
        "about 56 s, from run e (56 s for 28 probes, scaled to 28 probes)"
    );
}

#[test]
fn durations_read_as_people_say_them() {
    assert_eq!(duration(0.4), "0 s");
    assert_eq!(duration(59.6), "1 min 0 s");
    assert_eq!(duration(185.0), "3 min 5 s");
    assert_eq!(duration(7_440.0), "2 h 4 min");
}

#[test]
fn long_lists_are_cut_in_the_middle() {
    let values: Vec<String> = (1..=20).map(|v| v.to_string()).collect();
    assert_eq!(
        compact(&values),
        "1, 2, 3, 4, 5, 6, 7, 8, 9, 10, …, 20 (20 values)"
    );
    assert_eq!(compact(&values[..3]), "1, 2, 3");
    assert_eq!(compact(&[String::new()]), "-");
}

#[test]
fn the_estimate_weighs_each_point_by_its_time_in_the_earlier_run() {
    let (_root, paths) = root();
    let out = tempfile::tempdir().unwrap();
    let full =
        super::super::plan(&parse_run(&["t", "--target", "sqlite"]).unwrap(), &paths).unwrap();
    let mut record = earlier(
        out.path(),
        "a",
        RunStatus::Complete,
        "2026-11-30T00:00:00Z",
        "2026-11-30T00:01:40Z",
        Some(full.planned()),
    );
    record.studies = full.files.clone();
    record.write(&out.path().join("a/run.toml")).unwrap();
    // Bound and literal took 10 ms a probe in their calls, per-row 100 (their writes took 1).
    let work: &dyn std::any::Any = full.work.as_ref();
    let sweep: &crate::studies::sweep::kind::SweepWork = work.downcast_ref().expect("a sweep");
    let probes = sweep.plan.probes();
    let mut results =
        crate::records::csv::Appender::open(&out.path().join("a/results.csv")).unwrap();
    for p in probes.iter().filter(|p| !p.warmup) {
        let mut row = ProbeRow::target_failure(
            "t",
            TargetKind::Sqlite,
            p.series,
            p.repeat,
            &p.request,
            1.0,
            "",
        );
        row.calls_ms = Some(if p.label.is_empty() { 10.0 } else { 100.0 });
        row.label = p.label.clone();
        results.append(&row).unwrap();
    }
    let flags = parse_run(&["t", "--target", "sqlite", "--only", "strategy=per-row"]).unwrap();
    let plan = super::super::plan(&flags, &paths).unwrap();
    // 4 per-row probes of 100 ms against 24 of 10 and 4 of 100: 62.5% of 100 s.
    assert_eq!(
        estimate(out.path(), &flags, &plan, &run_record::machine(), &paths),
        "about 1 min 3 s, from run a (1 min 40 s; scaled by the time each point took in it: \
         this plan is 62.5% of that run's)"
    );
    // Once the experiment file changed, that run's plan cannot be made again: rows it is.
    std::fs::write(
        paths.experiments().join("t.toml"),
        format!("{EXPERIMENT}# changed\n"),
    )
    .unwrap();
    let plan = super::super::plan(&flags, &paths).unwrap();
    assert_eq!(
        estimate(out.path(), &flags, &plan, &run_record::machine(), &paths),
        "about 9 s, from run a (1 min 40 s for 2,640 rows, scaled to 240 rows)"
    );
}

/// On remote with the Free plan and no `--profile`, a study with a `free` profile runs it, and
/// the dry run says so; any `--profile`, `--plan paid`, another target or a study without one
/// keeps the default.
#[test]
fn the_free_plan_takes_a_free_profile_by_itself_and_says_so() {
    let (_root, paths) = root();
    let free = format!(
        "{EXPERIMENT}[profile.free]\nrepeats = 1\n[[profile.free.series]]\nstrategies = \
         [\"bound\"]\ncolumns = [2]\nrow-bytes = [100]\nrows = 10\n"
    );
    std::fs::write(paths.experiments().join("f.toml"), free).unwrap();
    let profile = |args: &[&str]| {
        let flags = parse_run(args).unwrap();
        super::super::plan(&flags, &paths).unwrap().profile
    };
    let said = |args: &[&str], account| {
        let flags = parse_run(args).unwrap();
        let plan = super::super::plan(&flags, &paths).unwrap();
        describe(&flags, &plan, "E", account).contains("profile `free` taken by itself")
    };
    let free_plan = Some(crate::base::AccountPlan::Free);
    assert_eq!(
        profile(&["f", "--target", "remote", "--plan", "free"]),
        "free"
    );
    assert!(said(
        &["f", "--target", "remote", "--plan", "free"],
        free_plan
    ));
    assert_eq!(profile(&["f", "--target", "remote"]), "free");
    let pinned = [
        "f",
        "--target",
        "remote",
        "--plan",
        "free",
        "--profile",
        "full",
    ];
    for other in [
        &["f", "--target", "remote", "--plan", "paid"][..],
        &pinned,
        &["f", "--target", "local"],
        &["t", "--target", "remote", "--plan", "free"],
    ] {
        assert_eq!(profile(other), "full", "{other:?}");
    }
    assert!(!said(&pinned, free_plan));
}
