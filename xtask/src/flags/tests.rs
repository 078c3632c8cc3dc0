//! The tests of `flags`.

use super::*;
use clap::CommandFactory;

#[test]
fn the_cli_is_well_formed() {
    Xtask::command().debug_assert();
}

#[test]
fn isolate_heap_samples_every_request_alone_or_alternate_ones_with_a_value() {
    let parsed = |args: &[&str]| parse_run(args).unwrap().isolate_heap;
    assert_eq!(parsed(&["column-sweep"]), None);
    assert_eq!(
        parsed(&["column-sweep", "--isolate-heap"]),
        Some(HeapSampling::Every)
    );
    // Without `=` the next word is not its value.
    assert_eq!(
        parsed(&["--isolate-heap", "column-sweep"]),
        Some(HeapSampling::Every)
    );
    assert_eq!(
        parsed(&["column-sweep", "--isolate-heap=alternate"]),
        Some(HeapSampling::Alternate)
    );
    assert!(parse_run(&["column-sweep", "--isolate-heap=some"]).is_err());
}

#[test]
fn an_unknown_flag_is_named() {
    let err = Xtask::try_parse_from(["xtask", "run", "column-sweep", "--fast"]).unwrap_err();
    assert!(
        err.to_string().contains("unexpected argument '--fast'"),
        "{err}"
    );
}

#[test]
fn a_durable_object_target_and_baseline_parse_and_no_baseline_excludes_baseline() {
    let parse = |args: &[&str]| {
        let mut all = vec!["xtask", "run", "column-sweep"];
        all.extend(args);
        Xtask::try_parse_from(all).map(|x| match x.task {
            Task::Run(run) => run,
            _ => panic!("not a run"),
        })
    };
    let run = parse(&["--target", "do"]).unwrap();
    assert_eq!(
        (run.target, run.baseline),
        (TargetKind::Do, TargetKind::Sqlite)
    );
    let run = parse(&["--baseline", "do"]).unwrap();
    assert_eq!(
        (run.target, run.baseline),
        (TargetKind::Local, TargetKind::Do)
    );
    let err = parse(&["--baseline", "do", "--no-baseline"]).unwrap_err();
    assert!(err.to_string().contains("cannot be used with"), "{err}");
    let err = parse(&["--baseline", "kv"]).unwrap_err();
    assert!(err.to_string().contains("invalid value 'kv'"), "{err}");
}

#[test]
fn baseline_and_corruption_flags_parse() {
    let Task::Run(run) = Xtask::try_parse_from([
        "xtask",
        "run",
        "row-size-sweep",
        "--target",
        "sqlite",
        "--no-baseline",
        "--debug-corrupt",
        "text-byte",
    ])
    .unwrap()
    .task
    else {
        panic!("not a run")
    };
    assert_eq!(run.target, TargetKind::Sqlite);
    assert!(run.no_baseline);
    assert_eq!(run.debug_corrupt, Some(DebugCorruption::TextByte));
    let err = Xtask::try_parse_from(["xtask", "run", "x", "--debug-corrupt", "all"])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("text-byte") && err.contains("integer"),
        "{err}"
    );
}

#[test]
fn an_unknown_target_lists_the_known_ones() {
    let err =
        Xtask::try_parse_from(["xtask", "run", "column-sweep", "--target", "mars"]).unwrap_err();
    assert!(err.to_string().contains("invalid value 'mars'"), "{err}");
    assert!(err.to_string().contains("local"), "{err}");
}

#[test]
fn a_remote_run_parses_its_location_plan_and_keep() {
    let flags = Xtask::try_parse_from([
        "xtask",
        "run",
        "column-sweep",
        "--target",
        "remote",
        "--location",
        "apac",
        "--plan",
        "paid",
        "--keep",
    ])
    .unwrap();
    let Task::Run(run) = flags.task else {
        panic!("not a run")
    };
    assert_eq!(run.target, TargetKind::Remote);
    assert_eq!(run.location, Some(Location::Apac));
    assert_eq!(run.plan, Some(AccountPlan::Paid));
    assert!(run.keep);
}

#[test]
fn an_unknown_location_lists_the_hints() {
    let err = Xtask::try_parse_from([
        "xtask",
        "run",
        "x",
        "--target",
        "remote",
        "--location",
        "mars",
    ])
    .unwrap_err()
    .to_string();
    assert!(err.contains("invalid value 'mars'"), "{err}");
    for hint in ["weur", "eeur", "apac", "oc", "wnam", "enam"] {
        assert!(err.contains(hint), "{hint} missing from: {err}");
    }
}

#[test]
fn overrides_dry_run_and_resume_parse() {
    let run = parse_run;
    let r = run(&[
        "column-sweep",
        "--repeats",
        "3",
        "--warmup",
        "0",
        "--seed",
        "42",
        "--only",
        "columns=64,strategy=literal",
        "--dry-run",
    ])
    .unwrap();
    assert_eq!((r.repeats, r.warmup, r.seed), (Some(3), Some(0), Some(42)));
    assert_eq!(r.only.as_deref(), Some("columns=64,strategy=literal"));
    assert!(r.dry_run && r.resume.is_none());
    assert_eq!(r.experiment(), "column-sweep");
    let r = run(&["--resume", "reports/column-sweep/x"]).unwrap();
    assert_eq!(r.resume, Some(PathBuf::from("reports/column-sweep/x")));
    assert_eq!(r.experiment, None);
    // The target's default does not conflict; giving one does.
    assert_eq!(r.target, TargetKind::Local);
    let err = run(&["--resume", "d", "--target", "sqlite"])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("'--resume <RUN_DIR>' cannot be used with '--target <TARGET>'"),
        "{err}"
    );
    let err = run(&["column-sweep", "--resume", "d"])
        .unwrap_err()
        .to_string();
    assert!(err.contains("cannot be used with"), "{err}");
    let err = run(&["--resume", "d", "--only", "columns=1"])
        .unwrap_err()
        .to_string();
    assert!(err.contains("cannot be used with '--only"), "{err}");
    let err = run(&[]).unwrap_err().to_string();
    assert!(err.contains("<EXPERIMENT>"), "{err}");
    let err = run(&["x", "--repeats", "many"]).unwrap_err().to_string();
    assert!(
        err.contains("invalid value 'many' for '--repeats <N>'"),
        "{err}"
    );
    // --tag and --keep go with a resumed remote run.
    run(&["--resume", "d", "--keep", "--tag", "t"]).unwrap();
}

#[test]
fn matrix_lists_split_on_commas() {
    let flags = Xtask::try_parse_from([
        "xtask",
        "matrix",
        "--experiments",
        "a,b",
        "--targets",
        "both",
        "--locations",
        "weur,enam",
    ])
    .unwrap();
    let Task::Matrix(matrix) = flags.task else {
        panic!("not a matrix")
    };
    assert_eq!(matrix.experiments, ["a", "b"]);
    assert_eq!(matrix.locations, [Location::Weur, Location::Enam]);
}
