//! Tests of `compare.rs`, apart so that file holds only what it is for: most of it the expected
//! texts of compare.md (the command on real SQLite runs is tested in `tasks::reports`).

use std::path::Path;

use d1bench_core::{Outcome, Strategy};

use super::synthetic::{record, write_run};
use super::*;
use crate::studies::sweep::row::tests_support;

/// Judges `a` against `b` with one threshold (a fraction: 0.05 for 5%) for every point.
pub(super) fn compare_rows(
    a: &[ProbeRow],
    b: &[ProbeRow],
    axis: Axis,
    threshold: f64,
) -> (Vec<ComparedPoint>, Vec<PointKey>, Vec<PointKey>) {
    let judged = judge(a, b, axis, &ThresholdRule::Given(threshold * 100.0));
    (judged.points, judged.only_in_a, judged.only_in_b)
}

/// `compare` with one threshold in percent and no calibration.
fn compare_at(a: &Path, b: &Path, threshold: f64) -> Result<Comparison> {
    compare(a, b, Some(threshold), &CalibrationSource::Off)
}

/// Repeats of one point on sqlite, in one session: 100 rows each, so ms per 1,000 rows is 10 × `times`.
pub(super) fn repeats(strategy: Strategy, columns: usize, times: &[f64]) -> Vec<ProbeRow> {
    times
        .iter()
        .enumerate()
        .map(|(i, &ms)| {
            let mut row = tests_support::row();
            row.target = TargetKind::Sqlite;
            row.strategy = strategy;
            row.columns = columns;
            row.repeat = i;
            row.outside_ms = ms;
            row
        })
        .collect()
}

fn one_point(a: &[f64], b: &[f64]) -> ComparedPoint {
    let (a, b) = (
        repeats(Strategy::Bound, 8, a),
        repeats(Strategy::Bound, 8, b),
    );
    let (mut compared, only_a, only_b) = compare_rows(&a, &b, Axis::Columns, 0.05);
    assert_eq!((compared.len(), only_a.len(), only_b.len()), (1, 0, 0));
    compared.remove(0)
}

fn interval(p: &ComparedPoint) -> (f64, f64) {
    (p.ci_low.unwrap(), p.ci_high.unwrap())
}

const A: [f64; 5] = [10.0, 10.4, 9.7, 10.1, 9.9];

#[test]
fn compare_calls_a_2x_slowdown_slower_and_a_halving_faster() {
    let doubled = A.map(|t| t * 2.0);
    let p = one_point(&A, &doubled);
    assert_eq!(p.ratio, Some(2.0));
    assert_eq!(p.a.ms_per_1000_rows, Some(100.0));
    assert_eq!((p.a.n, p.b.n), (5, 5));
    let (lo, hi) = interval(&p);
    assert!(1.05 < lo && lo <= 2.0, "{lo}");
    assert!((2.0..2.2).contains(&hi), "{hi}");
    assert_eq!(p.verdict, Verdict::Slower);
    assert!(p.verdict.is_regression());

    let p = one_point(&doubled, &A);
    assert_eq!((p.ratio, p.verdict), (Some(0.5), Verdict::Faster));
    assert!(!p.verdict.is_regression());
}

#[test]
fn compare_finds_no_detectable_change_between_identical_samples() {
    // Five repeats spread ±4%: each median's interval is [min, max], and their quotient
    // reaches past ±5% on both sides: too wide to tell a 5% change, and said so.
    let p = one_point(&A, &A);
    assert_eq!(p.ratio, Some(1.0));
    let (lo, hi) = interval(&p);
    assert!(
        (lo - 9.7 / 10.4).abs() < 1e-12 && (hi - 10.4 / 9.7).abs() < 1e-12,
        "{lo} {hi}"
    );
    assert_eq!(p.verdict, Verdict::IntervalTooWide);
    // Quieter repeats, the same twice: well inside ± 5%.
    let quiet = [10.0, 10.1, 9.9, 10.05, 9.95, 10.02, 9.98];
    let p = one_point(&quiet, &quiet);
    let (lo, hi) = interval(&p);
    assert!(0.95 < lo && lo < 1.0 && 1.0 < hi && hi < 1.05, "{lo} {hi}");
    assert_eq!(p.verdict, Verdict::NoDetectableChange);
    // Without spread, the interval is the ratio itself.
    let p = one_point(&[3.0; 4], &[3.0; 4]);
    assert_eq!(
        (interval(&p), p.verdict),
        ((1.0, 1.0), Verdict::NoDetectableChange)
    );
}

#[test]
fn compare_gives_a_noisy_small_sample_a_wide_interval_and_no_verdict() {
    // The medians are the 2× of the first test, the spread a factor of 4 within each run.
    let (a, b) = ([5.0, 20.0, 10.0], [10.0, 40.0, 20.0]);
    let p = one_point(&a, &b);
    assert_eq!(p.ratio, Some(2.0));
    let (lo, hi) = interval(&p);
    assert!(lo < 0.95 && hi > 1.05 && hi - lo > 2.0, "{lo} {hi}");
    assert_eq!(p.verdict, Verdict::IntervalTooWide);
    assert_eq!(p.verdict.text(), "no detectable change (interval too wide)");
    // The same medians, quiet: the interval is narrow and says slower.
    let p = one_point(&[9.9, 10.0, 10.1], &[19.8, 20.0, 20.2]);
    let (lo, hi) = interval(&p);
    assert!(hi - lo < 0.1 && p.verdict == Verdict::Slower, "{lo} {hi}");
}

#[test]
fn compare_gives_no_verdict_below_three_repeats_and_respects_the_threshold() {
    // One repeat each: no interval at all, and no verdict.
    let p = one_point(&[1.0], &[10.0]);
    assert_eq!(p.ratio, Some(10.0));
    assert_eq!((p.ci_low, p.ci_high), (None, None));
    assert_eq!(p.verdict, Verdict::TooFewRepeats);
    assert_eq!(
        one_point(&[1.0, 1.1], &[10.0, 10.1, 9.9]).verdict,
        Verdict::TooFewRepeats
    );
    // 8% slower, tightly: slower at 5%, not at 10%.
    let quiet = [10.0, 10.02, 9.98, 10.01, 9.99];
    let (a, b) = (
        repeats(Strategy::Bound, 8, &quiet),
        repeats(Strategy::Bound, 8, &quiet.map(|t| t * 1.08)),
    );
    let at = |threshold| compare_rows(&a, &b, Axis::Columns, threshold).0[0].verdict;
    assert_eq!(at(0.05), Verdict::Slower);
    assert_eq!(at(0.10), Verdict::NoDetectableChange);
}

#[test]
fn compare_counts_a_point_that_stops_succeeding_as_a_regression() {
    let ok = repeats(Strategy::Literal, 100, &A);
    let mut refused = ok.clone();
    for row in &mut refused {
        row.outcome = Outcome::Refused;
    }
    let (points, _, _) = compare_rows(&ok, &refused, Axis::Columns, 0.05);
    assert_eq!(points[0].verdict, Verdict::NoLongerSucceeds);
    assert_eq!(points[0].b.refused, 5);
    assert!(points[0].verdict.is_regression() && points[0].ratio.is_none());
    let (points, _, _) = compare_rows(&refused, &ok, Axis::Columns, 0.05);
    assert_eq!(points[0].verdict, Verdict::NoTimeInA);
    assert!(!points[0].verdict.is_regression());
}

#[test]
fn compare_lists_points_only_one_run_has() {
    let a = [
        repeats(Strategy::Bound, 8, &A),
        repeats(Strategy::Literal, 8, &A),
    ]
    .concat();
    let mut labelled = repeats(Strategy::Bound, 8, &A);
    labelled
        .iter_mut()
        .for_each(|r| r.label = "all non-ASCII".into());
    let mut more_rows = repeats(Strategy::Bound, 8, &A);
    more_rows.iter_mut().for_each(|r| r.rows = 200);
    let mut local = repeats(Strategy::Bound, 8, &A);
    local.iter_mut().for_each(|r| r.target = TargetKind::Local);
    // One run never has two parameter sets at one point (the experiment file is refused),
    // so the point with more rows stands alone in b.
    let b = [
        repeats(Strategy::Literal, 8, &A),
        repeats(Strategy::Bound, 16, &A),
        labelled,
        more_rows,
        local,
    ]
    .concat();
    let (points, only_a, only_b) = compare_rows(&a, &b, Axis::Columns, 0.05);
    assert_eq!(points.len(), 1);
    assert_eq!(
        (points[0].key.strategy, points[0].x),
        (Strategy::Literal, 8.0)
    );
    let described =
        |keys: &[PointKey]| -> Vec<String> { keys.iter().map(PointKey::describe).collect() };
    assert_eq!(
        described(&only_a),
        [
            "sqlite bound: columns 8, row-bytes 1000, rows 100, escape-share 0, \
          nul-share 0, non-ascii-share 0, indexes 0"
        ]
    );
    let only_b = described(&only_b);
    assert_eq!(only_b.len(), 4, "{only_b:?}");
    assert!(
        only_b
            .iter()
            .any(|d| d.starts_with("local bound: columns 8"))
    );
    assert!(only_b.iter().any(|d| d.contains("columns 16,")));
    assert!(
        only_b
            .iter()
            .any(|d| d.contains("(series \"all non-ASCII\")"))
    );
    assert!(only_b.iter().any(|d| d.contains("rows 200,")));
}

#[test]
fn compare_refuses_what_is_not_two_sweeps_of_one_experiment_naming_the_path() {
    let root = tempfile::tempdir().unwrap();
    let at = |name: &str| root.path().join(name);
    let rows = repeats(Strategy::Bound, 8, &A);
    let sweep = record("column-sweep", StudyKind::Sweep);
    let good = write_run(&at("good"), &sweep, Some(&rows));
    let other = write_run(
        &at("other"),
        &record("row-size-sweep", StudyKind::Sweep),
        Some(&rows),
    );
    let ladder = write_run(&at("ladder"), &record("columns", StudyKind::Ladder), None);
    let mut grid_record = record("decision-map", StudyKind::Sweep);
    grid_record.run.y_axis = Some(Axis::RowBytes);
    let grid = write_run(&at("grid"), &grid_record, Some(&rows));
    let workload = write_run(
        &at("workload"),
        &record("read-path", StudyKind::Workload),
        None,
    );
    let unmeasured = write_run(&at("unmeasured"), &sweep, None);
    let empty = write_run(&at("empty"), &sweep, Some(&[]));
    std::fs::create_dir_all(at("plain")).unwrap();
    std::fs::create_dir_all(at("garbage")).unwrap();
    std::fs::write(at("garbage/run.toml"), "run = [").unwrap();
    let err = |a: &Path, b: &Path| format!("{:#}", compare_at(a, b, 5.0).unwrap_err());
    let shown = |p: &Path| p.display().to_string();
    let cases = [
        (
            err(&at("missing"), &good),
            format!("run a: {} is not a directory", shown(&at("missing"))),
        ),
        (
            err(&good, &at("plain")),
            format!(
                "run b: {} is not a run directory: it holds no run.toml",
                shown(&at("plain"))
            ),
        ),
        (
            err(&at("garbage"), &good),
            format!(
                "run a: {} is not a run directory d1bench can read: ",
                shown(&at("garbage"))
            ),
        ),
        (
            err(&good, &other),
            format!(
                "{} ran `column-sweep` and {} ran `row-size-sweep`: compare takes two runs \
                 of one experiment",
                shown(&good),
                shown(&other)
            ),
        ),
        (
            err(&ladder, &good),
            format!(
                "run a: {} is a ladder run (`columns`): compare applies to sweeps",
                shown(&ladder)
            ),
        ),
        (
            err(&grid, &grid),
            format!(
                "run a: {} is a grid run (`decision-map`, x columns × y row-bytes): compare \
                 pairs points along one axis",
                shown(&grid)
            ),
        ),
        (
            err(&good, &workload),
            format!(
                "run b: {} is a workload run (`read-path`): compare applies to sweeps",
                shown(&workload)
            ),
        ),
        (
            err(&good, &unmeasured),
            format!(
                "run b: {} has no results.csv: the run (complete) ended before measuring",
                shown(&unmeasured)
            ),
        ),
        (
            err(&good, &empty),
            format!(
                "run b: {} holds no results: the run (complete) measured nothing",
                shown(&empty.join("results.csv"))
            ),
        ),
    ];
    for (got, want) in cases {
        assert!(got.starts_with(&want), "got:  {got}\nwant: {want}");
    }
    for threshold in [-1.0, 100.0, f64::NAN] {
        let got = format!("{:#}", compare_at(&good, &good, threshold).unwrap_err());
        assert!(
            got.contains("a percentage from 0 up to (not including) 100"),
            "{got}"
        );
    }
    assert_eq!(compare_at(&good, &good, 0.0).unwrap().points.len(), 1);
}

#[test]
fn a_run_on_a_shared_machine_is_noted_as_such() {
    let root = tempfile::tempdir().unwrap();
    let rows = repeats(Strategy::Bound, 8, &A);
    let a = write_run(
        &root.path().join("a"),
        &record("column-sweep", StudyKind::Sweep),
        Some(&rows),
    );
    let mut busy = record("column-sweep", StudyKind::Sweep);
    busy.machine.cpus = 2;
    busy.machine.load_at_start = Some(1.5);
    busy.machine.load_at_end = Some(3.25);
    let b = write_run(&root.path().join("b"), &busy, Some(&rows));
    let quiet = compare_at(&a, &a, 5.0).unwrap();
    assert!(
        !markdown(&quiet).contains("shared its machine"),
        "{}",
        markdown(&quiet)
    );
    let md = markdown(&compare_at(&a, &b, 5.0).unwrap());
    assert!(
        md.contains(
            "**Note:** run b shared its machine with other work (1-minute load average 1.50 at \
             the start, 3.25 at the end, on 2 CPUs)"
        ),
        "{md}"
    );
    assert!(!md.contains("run a shared"), "{md}");
}

#[test]
fn compare_md_states_the_runs_the_method_the_table_and_what_was_left_out() {
    let root = tempfile::tempdir().unwrap();
    let a_rows = [
        repeats(Strategy::Bound, 8, &A),
        repeats(Strategy::Literal, 8, &A),
    ]
    .concat();
    let b_rows = [
        repeats(Strategy::Bound, 8, &A.map(|t| t * 2.0)),
        repeats(Strategy::Literal, 8, &A),
        repeats(Strategy::Literal, 16, &A),
    ]
    .concat();
    let a = write_run(
        &root.path().join("a"),
        &record("column-sweep", StudyKind::Sweep),
        Some(&a_rows),
    );
    let mut invalid = record("column-sweep", StudyKind::Sweep);
    invalid.run.status = RunStatus::Invalid;
    invalid.machine.cpus = 64;
    invalid.machine.cpu = "Big Iron".into();
    let b = write_run(&root.path().join("b"), &invalid, Some(&b_rows));
    let c = compare_at(&a, &b, 5.0).unwrap();
    assert_eq!(c.regressions(), 1);
    let m = crate::records::run_record::machine();
    let md = markdown(&c);
    let want = format!(
        "# compare: column-sweep\n\n\
         - a: `{}` (run 20261129T235502Z-sqlite, sqlite, profile smoke, commit `c0ffee`, complete)\n\
         - b: `{}` (run 20261129T235502Z-sqlite, sqlite, profile smoke, commit `c0ffee`, invalid)\n\n\
         b ÷ a of the time per 1,000 rows on the outside clock less the target's preparation, \
         at each point both runs measured (same target, series, strategy and parameters).\n\n\
         **Within one session** (2 points): a run has a single session there, so the verdict \
         cannot include the variance between runs. It falls back to the rule compare had before \
         sessions: each run's median with its order-statistic interval at the square root of \
         95%, divided (a lower bound of its coverage in `compare.json`); `slower` when the whole \
         interval is above the threshold, `faster` when it is below its inverse; no \
         multiplicity correction. Threshold: 5% (`--threshold`). A verdict needs 3 successful \
         repeats in each run. Two runs of one commit judged this way called 8 of 26 points \
         slower: run two sessions or more (`--sessions`) for verdicts to rely on.\n\n\
         **Own ratios** (strategy ÷ bound, target ÷ bare SQLite, where the runner's speed \
         cancels) are judged over sessions only: no point has two sessions or more of them in \
         both runs.\n\n\
         **Exit status** judged the times: the ratio gate (the default) was asked for, but no \
         point has an own ratio judged over two sessions or more in both runs, so the times are \
         gated instead; they move with the runner's speed. 1 point(s) fail it.\n\n\
         **Note:** run b is `invalid`, not complete: see its run.toml before trusting its times.\n\n\
         **Note:** a ran on {} × {} ({} {}) and b on 64 × Big Iron ({} {}): a change of machine \
         is measured along with any change of code.\n\n\
         **Note:** the hosts' speed is unknown: a run recorded before 2026-12-06 has no readings \
         of the reference workload, so a change of machine or day cannot be told from a change \
         of the code.\n\n\
         | target | strategy | columns | a ms/1k rows | b ms/1k rows | b ÷ a (95% interval) | \
         threshold | detectable | verdict |\n\
         | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n",
        a.display(),
        b.display(),
        m.cpus,
        m.cpu,
        m.os,
        m.arch,
        m.os,
        m.arch
    );
    assert!(md.starts_with(&want), "got:\n{md}\nwant:\n{want}");
    let (lo, hi) = interval(&c.points[0]);
    let rest = &md[want.len()..];
    assert_eq!(
        rest,
        format!(
            "| sqlite | bound | 8 | 100 (n=5) | 200 (n=5) | 2.00 ({lo:.2}–{hi:.2}) | 1.05 | – | slower |\n\
             | sqlite | literal | 8 | 100 (n=5) | 100 (n=5) | 1.00 ({:.2}–{:.2}) | 1.05 | – | \
             no detectable change (interval too wide) |\n\n\
             2 points compared: 1 slower, 1 no detectable change (interval too wide).\n\n\
             Only in run b, not compared:\n\n\
             - sqlite literal: columns 16, row-bytes 1000, rows 100, escape-share 0, \
             nul-share 0, non-ascii-share 0, indexes 0\n",
            c.points[1].ci_low.unwrap(),
            c.points[1].ci_high.unwrap()
        )
    );
}
