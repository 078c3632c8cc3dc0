//! Tests of compare over sessions: its false alarms on A/A runs and its power on a 20%
//! slowdown (by simulation), the multiplicity correction and the thresholds, the own ratios
//! that tell the machine from what is measured, and the fallback to one session.

use d1bench_core::Strategy;

use super::calibration::{Calibration, CalibrationRow};
use super::synthetic::{self, Shape};
use super::synthetic::{record, write_run};
use super::*;
use crate::records::StudyKind;

/// One point's rows from explicit times: `sessions[s]` holds session `s`'s repeats.
fn point(target: TargetKind, strategy: Strategy, sessions: &[&[f64]]) -> Vec<ProbeRow> {
    let mut rows = Vec::new();
    for (session, times) in sessions.iter().enumerate() {
        for (repeat, &ms) in times.iter().enumerate() {
            rows.push(synthetic::row(target, strategy, session, repeat, ms));
        }
    }
    rows
}

#[test]
fn at_the_committed_noise_a_and_a_raises_few_alarms_and_the_stated_power_holds() {
    let mut rng = fastrand::Rng::with_seed(19);
    // The main run's design: 8 sessions, one repeat each.
    let shape = Shape {
        repeats: 1,
        ..Shape::committed_noise(8)
    };
    let trials = 150;
    let (mut alarms, mut any_alarm, mut judged) = (0, 0, 0);
    let (mut caught_all, mut caught_one, mut stated) = (0, 0, Vec::new());
    for _ in 0..trials {
        let a = shape.run(&mut rng, |_| 1.0);
        let same = shape.run(&mut rng, |_| 1.0);
        let j = judge(&a, &same, Axis::Columns, &ThresholdRule::NoiseFloor);
        assert!(j.points.iter().all(|p| p.basis == Basis::BetweenSessions));
        let called = j.points.iter().filter(|p| p.verdict.is_change()).count();
        alarms += called;
        any_alarm += usize::from(called > 0);
        judged += j.points.len();
        // Every point 20% slower: Benjamini–Hochberg then lets each through near 5%, and the
        // share caught is about the power the points' `detectable.alone` states.
        let slow = shape.run(&mut rng, |_| 1.2);
        let j = judge(&a, &slow, Axis::Columns, &ThresholdRule::NoiseFloor);
        caught_all += j
            .points
            .iter()
            .filter(|p| p.verdict == Verdict::Slower)
            .count();
        stated.extend(
            j.points
                .iter()
                .filter_map(|p| p.detectable.map(|d| d.alone)),
        );
        // One point of 25 slower: it must pass 5% ÷ 25, and `detectable.among` says so.
        let one = shape.run(&mut rng, |r| {
            if r.columns == 64 && r.strategy == Strategy::Json {
                1.2
            } else {
                1.0
            }
        });
        let j = judge(&a, &one, Axis::Columns, &ThresholdRule::NoiseFloor);
        let p = j
            .points
            .iter()
            .find(|p| p.key.columns == 64 && p.key.strategy == Strategy::Json)
            .unwrap();
        caught_one += usize::from(p.verdict == Verdict::Slower);
        assert!(p.detectable.unwrap().among > p.detectable.unwrap().alone);
    }
    let per_point = alarms as f64 / judged as f64;
    assert!(
        per_point <= 0.01,
        "{alarms} false alarms in {judged} points"
    );
    let family = any_alarm as f64 / trials as f64;
    assert!(
        family <= 0.10,
        "an alarm in {family} of the A/A comparisons"
    );
    // 8 sessions at 12%: se = 0.06 on the logs, so a 20% change is caught about 80% of the
    // time at 5%; each point states a detectable change near 1.20 alone.
    let power_all = caught_all as f64 / judged as f64;
    assert!(
        (0.6..=0.92).contains(&power_all),
        "20% everywhere caught at {power_all}"
    );
    stated.sort_by(f64::total_cmp);
    let median = stated[stated.len() / 2];
    assert!(
        (1.14..=1.28).contains(&median),
        "stated detectable alone: median {median}"
    );
    // Alone among 25 the same change is caught far less often: what `among` states.
    let power_one = caught_one as f64 / trials as f64;
    assert!(
        power_one < 0.5,
        "20% at one point of 25 caught at {power_one}"
    );
}

#[test]
fn benjamini_hochberg_decides_and_the_threshold_gates_the_verdict() {
    // Bound 10% slower, tightly; literal unchanged, tightly.
    let quiet: [&[f64]; 4] = [
        &[10.0, 10.01],
        &[10.05, 10.04],
        &[9.95, 9.96],
        &[10.0, 10.0],
    ];
    let slower = quiet.map(|s| s.iter().map(|t| t * 1.1).collect::<Vec<f64>>());
    let slower: Vec<&[f64]> = slower.iter().map(Vec::as_slice).collect();
    let sqlite = TargetKind::Sqlite;
    let a = [
        point(sqlite, Strategy::Bound, &quiet),
        point(sqlite, Strategy::Literal, &quiet),
    ]
    .concat();
    let b = [
        point(sqlite, Strategy::Bound, &slower),
        point(sqlite, Strategy::Literal, &quiet),
    ]
    .concat();
    let at = |rule: &ThresholdRule| judge(&a, &b, Axis::Columns, rule).points;
    let own = at(&ThresholdRule::NoiseFloor);
    let (bound, literal) = (&own[0], &own[1]);
    assert_eq!(bound.basis, Basis::BetweenSessions);
    assert!(
        bound.discovery && bound.p_value.unwrap() < 0.01,
        "{bound:?}"
    );
    assert!((bound.ratio.unwrap() - 1.1).abs() < 1e-9);
    assert_eq!(bound.verdict, Verdict::Slower);
    let t = bound.threshold.unwrap();
    assert_eq!(t.source, ThresholdSource::OwnNoiseFloor);
    assert_eq!(Some(t.factor), bound.noise_floor);
    assert!(!literal.discovery && literal.verdict == Verdict::NoDetectableChange);
    // The same discovery within a given 20%: real, too small to count.
    let given = at(&ThresholdRule::Given(20.0));
    assert!(given[0].discovery);
    assert_eq!(given[0].verdict, Verdict::WithinThreshold);
    assert!(!given[0].verdict.is_regression());
    // A calibration that puts bound's floor at 15% and lacks literal.
    let mut row = CalibrationRow::new(&bound.key, bound.x, 2);
    row.noise_floor = Some(1.15);
    let calibration = Calibration {
        file: "calibration.csv".into(),
        kind: super::CalibrationKind::WithinRun,
        rows: vec![row],
    };
    let calibrated = at(&ThresholdRule::Calibrated(&calibration));
    assert_eq!(
        calibrated[0].threshold,
        Some(Threshold {
            factor: 1.15,
            source: ThresholdSource::Calibrated
        })
    );
    assert_eq!(calibrated[0].verdict, Verdict::WithinThreshold);
    assert_eq!(
        calibrated[1].threshold.unwrap().source,
        ThresholdSource::OwnNoiseFloor
    );
}

#[test]
fn a_marginal_point_among_many_is_held_to_the_false_discovery_rate() {
    // One point of twenty with p ≈ 0.02 on its own, the others unchanged: uncorrected it would
    // be called; Benjamini–Hochberg calls the smallest p-value only below 5% ÷ 20.
    let a: [&[f64]; 3] = [&[10.0], &[10.6], &[9.4]];
    let b: [&[f64]; 3] = [&[11.7], &[12.3], &[11.1]];
    let (mut rows_a, mut rows_b) = (Vec::new(), Vec::new());
    for columns in 1..=20 {
        let after = if columns == 1 { &b } else { &a };
        for (rows, times) in [(&mut rows_a, &a), (&mut rows_b, after)] {
            let mut p = point(TargetKind::Sqlite, Strategy::Bound, times);
            p.iter_mut().for_each(|r| r.columns = columns);
            rows.extend(p);
        }
    }
    let judged = judge(&rows_a, &rows_b, Axis::Columns, &ThresholdRule::Given(0.0));
    let p = judged.points[0].p_value.unwrap();
    assert!((0.0025..0.05).contains(&p), "{p}");
    assert!(
        judged
            .points
            .iter()
            .all(|p| !p.discovery && !p.verdict.is_change())
    );
    // Alone, the same point is a discovery.
    let one = |rows: &[ProbeRow]| -> Vec<ProbeRow> {
        rows.iter().filter(|r| r.columns == 1).cloned().collect()
    };
    let alone = judge(
        &one(&rows_a),
        &one(&rows_b),
        Axis::Columns,
        &ThresholdRule::Given(0.0),
    );
    assert_eq!(alone.points[0].verdict, Verdict::Slower);
}

/// A run on the local target with its bare-SQLite baseline, bound and literal, five sessions.
fn local_shape() -> Shape {
    Shape {
        targets: vec![TargetKind::Local, TargetKind::Sqlite],
        strategies: vec![Strategy::Bound, Strategy::Literal],
        columns: vec![1, 8, 64],
        session_drift: 0.02,
        point_drift: 0.02,
        ..Shape::sqlite(5)
    }
}

/// The shift of a host 30% slower, as [`HostShift::between`] gives it from readings.
fn host_slower_by(factor: f64) -> crate::reports::host_speed::HostShift {
    let with = |ms: &[f64]| {
        let mut r = record("column-sweep", StudyKind::Sweep);
        r.machine.speed = crate::records::host_speed::readings(ms);
        r
    };
    let readings = [30.0, 30.6, 29.7, 30.2, 30.4, 29.9, 30.1, 30.3, 29.8];
    let slower: Vec<f64> = readings.iter().map(|v| v * factor).collect();
    crate::reports::host_speed::HostShift::between(&with(&readings), &with(&slower)).unwrap()
}

#[test]
fn a_host_uniformly_slower_is_not_called_a_regression_once_its_shift_is_divided_out() {
    let shape = local_shape();
    let mut rng = fastrand::Rng::with_seed(4);
    let a = shape.run(&mut rng, |_| 1.0);
    let machine = shape.run(&mut rng, |_| 1.3);
    let host = host_slower_by(1.3);
    assert_eq!(
        host.verdict,
        crate::reports::host_speed::HostVerdict::Slower
    );
    let adjust = between_runs::Adjust {
        host: Some(host),
        between: None,
    };
    let j = judge::judge_adjusted(
        &a,
        &machine,
        Axis::Columns,
        &ThresholdRule::NoiseFloor,
        &adjust,
    );
    assert!(
        j.points.iter().all(|p| p.verdict != Verdict::Slower),
        "{:?}",
        j.points
    );
    // A slowdown of the target beyond the host's is still called.
    let target = shape.run(&mut rng, |r| {
        if r.target == TargetKind::Local {
            1.3 * 1.6
        } else {
            1.3
        }
    });
    let j = judge::judge_adjusted(
        &a,
        &target,
        Axis::Columns,
        &ThresholdRule::NoiseFloor,
        &adjust,
    );
    for p in &j.points {
        let local = p.key.target == TargetKind::Local;
        assert_eq!(p.verdict == Verdict::Slower, local, "{:?}", p);
    }
}

#[test]
fn own_ratios_tell_a_slower_machine_from_a_slower_target() {
    let shape = local_shape();
    let mut rng = fastrand::Rng::with_seed(4);
    let a = shape.run(&mut rng, |_| 1.0);
    // The runner 30% slower at everything: times change, ratios do not.
    let machine = shape.run(&mut rng, |_| 1.3);
    let j = judge(&a, &machine, Axis::Columns, &ThresholdRule::NoiseFloor);
    for p in &j.points {
        assert_eq!(p.verdict, Verdict::Slower, "{:?}", p.key);
        let local = p.key.target == TargetKind::Local;
        let literal = p.key.strategy == Strategy::Literal;
        assert_eq!(p.relative.vs_baseline.is_some(), local, "{:?}", p.key);
        assert_eq!(p.relative.vs_bound.is_some(), literal, "{:?}", p.key);
        let want = if local || literal {
            Reading::Machine
        } else {
            // Bound on SQLite has neither ratio.
            Reading::NotJudged
        };
        assert_eq!(p.relative.reading, want, "{:?}", p.key);
    }
    // The target alone 30% slower: its ratio to the baseline moves with it.
    let target = shape.run(&mut rng, |r| {
        if r.target == TargetKind::Local {
            1.3
        } else {
            1.0
        }
    });
    let j = judge(&a, &target, Axis::Columns, &ThresholdRule::NoiseFloor);
    for p in &j.points {
        let vs_baseline = p.relative.vs_baseline.map(|r| r.verdict);
        if p.key.target == TargetKind::Local {
            assert_eq!(p.verdict, Verdict::Slower);
            assert_eq!(vs_baseline, Some(Verdict::Slower), "{:?}", p.key);
            assert_eq!(p.relative.reading, Reading::Measured);
        } else {
            assert!(!p.verdict.is_change(), "{:?}", p);
        }
    }
    let c = Comparison {
        experiment: "column-sweep".into(),
        x_axis: Axis::Columns,
        a: run_ref(Path::new("a"), &record("column-sweep", StudyKind::Sweep)),
        b: run_ref(Path::new("b"), &record("column-sweep", StudyKind::Sweep)),
        threshold: ThresholdChoice::NoiseFloor,
        gate: Gate::Ratios,
        false_discovery_rate: FALSE_DISCOVERY_RATE,
        confidence: stats::CONFIDENCE,
        min_repeats: MIN_REPEATS,
        min_sessions: MIN_SESSIONS,
        points: j.points,
        only_in_a: vec![],
        only_in_b: vec![],
        notes: vec![],
        host: None,
        between_runs: None,
    };
    let md = markdown(&c);
    assert!(
        md.contains("| ÷ bound | ÷ sqlite | which changed |"),
        "{md}"
    );
    assert!(
        md.contains("Time and own ratio both changed at 6, the time alone (the machine) at 0"),
        "{md}"
    );
    assert!(
        md.contains("time and ratio changed: what is measured |"),
        "{md}"
    );
}

#[test]
fn compare_over_sessions_states_its_correction_and_falls_back_within_one_session() {
    let root = tempfile::tempdir().unwrap();
    let shape = Shape::sqlite(4);
    let mut rng = fastrand::Rng::with_seed(8);
    let sweep = record("column-sweep", StudyKind::Sweep);
    let a = write_run(
        &root.path().join("a"),
        &sweep,
        Some(&shape.run(&mut rng, |_| 1.0)),
    );
    let b = write_run(
        &root.path().join("b"),
        &sweep,
        Some(&shape.run(&mut rng, |_| 1.0)),
    );
    let c = compare(&a, &b, None, &CalibrationSource::Off).unwrap();
    assert_eq!(c.on(Basis::BetweenSessions), 25);
    assert_eq!(c.threshold, ThresholdChoice::NoiseFloor);
    assert_eq!(c.outcome(), Outcome::NoRegression);
    let md = markdown(&c);
    for said in [
        "**Over sessions** (25 points)",
        "held to a false discovery rate of 5% by Benjamini–Hochberg over these points",
        "Threshold: each point's own noise floor",
        "(n=12, 4 sessions)",
    ] {
        assert!(md.contains(said), "{said} not in\n{md}");
    }
    assert!(!md.contains("Within one session"), "{md}");
    // The same run's first session alone against b: one session on a side.
    let rows: Vec<ProbeRow> = csv::read(&a.join("results.csv")).unwrap();
    let first: Vec<ProbeRow> = rows.into_iter().filter(|r| r.session == 0).collect();
    let one = write_run(&root.path().join("one"), &sweep, Some(&first));
    let c = compare(&one, &b, None, &CalibrationSource::Off).unwrap();
    assert_eq!(c.on(Basis::WithinOneSession), 25);
    assert!(
        c.points
            .iter()
            .all(|p| p.threshold.unwrap().source == ThresholdSource::Default)
    );
    let md = markdown(&c);
    assert!(md.contains("**Within one session** (25 points)"), "{md}");
    assert!(
        md.contains("cannot include the variance between runs"),
        "{md}"
    );
    assert!(md.contains("Threshold: 5% (no calibration found)"), "{md}");
    assert!(!md.contains("**Over sessions**"), "{md}");
}

#[test]
fn compare_takes_the_newest_calibration_of_the_same_experiment_profile_and_target() {
    let root = tempfile::tempdir().unwrap();
    let reports = root.path().join("reports");
    let shape = Shape::sqlite(3);
    let mut rng = fastrand::Rng::with_seed(2);
    let mut sweep = record("column-sweep", StudyKind::Sweep);
    // Runs of 2 sessions: a calibration applies when its halves hold 2 too.
    sweep.run.sessions = Some(2);
    let rows = shape.run(&mut rng, |_| 1.0);
    let run = write_run(&reports.join("column-sweep/b"), &sweep, Some(&rows));
    let key = judge(&rows, &rows, Axis::Columns, &ThresholdRule::NoiseFloor).points[0]
        .key
        .clone();
    let calibrate = |dir: &str, started: &str, profile: &str, floor: f64, half: usize| {
        let mut r = sweep.clone();
        r.run.started = started.into();
        r.run.profile = profile.into();
        let dir = write_run(&reports.join("column-sweep").join(dir), &r, None);
        let mut row = CalibrationRow::new(&key, 1.0, half);
        row.noise_floor = Some(floor);
        csv::write(&dir.join(calibration::FILE), &[row]).unwrap();
        dir.join(calibration::FILE)
    };
    calibrate("old", "2026-11-01T00:00:00Z", &sweep.run.profile, 1.3, 2);
    let newest = calibrate("new", "2026-11-02T00:00:00Z", &sweep.run.profile, 1.2, 2);
    calibrate("other-profile", "2026-11-03T00:00:00Z", "full", 1.1, 2);
    // Newer, but its halves hold 4 sessions: not these runs' floors, passed over.
    let wider = calibrate("wider", "2026-11-04T00:00:00Z", &sweep.run.profile, 1.05, 4);
    let found = Calibration::newest(
        &reports,
        &[],
        "column-sweep",
        &sweep.run.profile,
        sweep.run.target,
        2,
    )
    .unwrap()
    .unwrap();
    assert_eq!(
        (found.file.clone(), found.noise_floor(&key)),
        (newest.clone(), Some(1.2))
    );
    let c = compare(
        &run,
        &run,
        None,
        &CalibrationSource::Newest(reports.clone()),
    )
    .unwrap();
    assert_eq!(
        c.threshold,
        ThresholdChoice::Calibrated {
            file: newest,
            kind: super::CalibrationKind::WithinRun,
            moves: None,
            between_runs_sd: Vec::new(),
        }
    );
    assert_eq!(c.points[0].threshold.unwrap().factor, 1.2);
    assert!(markdown(&c).contains("each point's noise floor as calibrated in"));
    assert!(
        c.notes.iter().all(|n| !n.contains("calibration's halves")),
        "{:?}",
        c.notes
    );
    // Given by hand, a calibration of other halves is used, and the note says so.
    let c = compare(&run, &run, None, &CalibrationSource::File(wider)).unwrap();
    assert!(
        c.notes
            .iter()
            .any(|n| n.contains("the calibration's halves hold 4 sessions and these runs 2")),
        "{:?}",
        c.notes
    );
    // Nothing for another target; a calibration file that is not one is trouble, named.
    assert!(
        Calibration::newest(&reports, &[], "column-sweep", "smoke", TargetKind::Local, 2)
            .unwrap()
            .is_none()
    );
    let bad = root.path().join("bad.csv");
    std::fs::write(&bad, "not,a\ncalibration,file\n").unwrap();
    let err = format!(
        "{:#}",
        compare(&run, &run, None, &CalibrationSource::File(bad.clone())).unwrap_err()
    );
    assert!(
        err.starts_with(&format!("cannot read the calibration {}", bad.display())),
        "{err}"
    );
}

#[test]
fn the_ratio_gate_passes_a_slower_machine_and_fails_a_slower_target() {
    let root = tempfile::tempdir().unwrap();
    let shape = local_shape();
    let mut rng = fastrand::Rng::with_seed(11);
    let sweep = record("column-sweep", StudyKind::Sweep);
    let run =
        |name: &str, rows: Vec<ProbeRow>| write_run(&root.path().join(name), &sweep, Some(&rows));
    let a = run("a", shape.run(&mut rng, |_| 1.0));
    // Everything 30% slower, the baseline too: the machine.
    let machine = run("machine", shape.run(&mut rng, |_| 1.3));
    // The local target alone 30% slower, its baseline not.
    let target = run(
        "target",
        shape.run(&mut rng, |r| {
            if r.target == TargetKind::Local {
                1.3
            } else {
                1.0
            }
        }),
    );
    let judged = |b: &Path, gate: Gate| {
        compare(&a, b, None, &CalibrationSource::Off)
            .unwrap()
            .gate(gate)
    };
    let on_ratios = judged(&machine, Gate::Ratios);
    assert_eq!(on_ratios.gated_on(), Gate::Ratios);
    assert_eq!(on_ratios.outcome(), Outcome::NoRegression);
    assert_eq!(on_ratios.slower_in_time_only(), on_ratios.points.len());
    let md = markdown(&on_ratios);
    assert!(
        md.contains("**Exit status** judged each run's own ratios"),
        "{md}"
    );
    assert!(
        md.contains("0 point(s) fail it; 12 more are slower in time alone"),
        "{md}"
    );
    let on_time = judged(&machine, Gate::Time);
    assert_eq!(on_time.outcome(), Outcome::Regression);
    assert_eq!(on_time.regressions(), on_time.points.len());
    let slower_target = judged(&target, Gate::Ratios);
    assert_eq!(slower_target.outcome(), Outcome::Regression);
    for p in &slower_target.points {
        let local = p.key.target == TargetKind::Local;
        assert_eq!(fails(p, Gate::Ratios), local, "{:?}", p.key);
    }
}

#[test]
fn the_ratio_gate_falls_back_on_the_times_where_no_ratio_can_be_judged() {
    let root = tempfile::tempdir().unwrap();
    let shape = Shape::sqlite(1);
    let mut rng = fastrand::Rng::with_seed(12);
    let sweep = record("column-sweep", StudyKind::Sweep);
    let a = write_run(
        &root.path().join("a"),
        &sweep,
        Some(&shape.run(&mut rng, |_| 1.0)),
    );
    let b = write_run(
        &root.path().join("b"),
        &sweep,
        Some(&shape.run(&mut rng, |_| 1.0)),
    );
    let c = compare(&a, &b, None, &CalibrationSource::Off).unwrap();
    assert_eq!((c.gate, c.gated_on()), (Gate::Ratios, Gate::Time));
    assert!(
        markdown(&c).contains("no point has an own ratio judged over two sessions or more"),
        "{}",
        markdown(&c)
    );
}
