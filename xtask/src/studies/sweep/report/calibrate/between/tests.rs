//! Tests of the calibration between runs: its variance component recovers a simulated one at
//! the committed noise (12% per session value, half shared by the session), reads about none
//! where there is none, widens the floors, and is what compare takes first.

use super::*;
use crate::records::StudyKind;
use crate::studies::sweep::report::compare::synthetic::{Shape, normal, record, write_run};
use crate::studies::sweep::report::compare::{CalibrationSource, ThresholdChoice, compare};

/// Two runs of 8 sessions at the committed noise; each point of b moved by its own draw of
/// `between` (σ on the logs) against a.
fn pair(rng: &mut fastrand::Rng, between: f64) -> (Vec<ProbeRow>, Vec<ProbeRow>) {
    let shape = Shape::committed_noise(8);
    let a = shape.run(rng, |_| 1.0);
    let shifts: Vec<((d1bench_core::Strategy, usize), f64)> = shape
        .strategies
        .iter()
        .flat_map(|&s| shape.columns.iter().map(move |&c| (s, c)))
        .map(|k| (k, (between * std::f64::consts::SQRT_2 * normal(rng)).exp()))
        .collect();
    let b = shape.run(rng, |r| {
        shifts
            .iter()
            .find(|(k, _)| *k == (r.strategy, r.columns))
            .map_or(1.0, |(_, f)| *f)
    });
    (a, b)
}

#[test]
fn the_variance_between_runs_is_recovered_and_widens_the_floors() {
    let mut rng = fastrand::Rng::with_seed(7);
    let trials = 40;
    let (mut with, mut without) = (Vec::new(), Vec::new());
    let mut wider = 0;
    for _ in 0..trials {
        let (a, b) = pair(&mut rng, 0.10);
        let c = calibrate_between(&a, &b, Axis::Columns).unwrap();
        assert_eq!((c.sessions, c.judged, c.components.len()), (8, 25, 1));
        with.push(c.components[0].log_sd);
        let own = judge(&a, &b, Axis::Columns, &ThresholdRule::NoiseFloor);
        wider += c
            .points
            .iter()
            .zip(&own.points)
            .filter(|(r, p)| r.noise_floor.unwrap() > p.noise_floor.unwrap() + 1e-12)
            .count();
        let (a, b) = pair(&mut rng, 0.0);
        without.push(calibrate_between(&a, &b, Axis::Columns).unwrap().components[0].log_sd);
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    // σ = 10% between runs, on top of sessions whose difference has se ≈ 0.12 · √(2/8) = 6%:
    // pooled over 25 points the estimate centres near 0.10; with none, near 0 (it cannot go
    // below, so its mean is a little above).
    assert!((0.08..0.12).contains(&mean(&with)), "{with:?}");
    assert!(mean(&without) < 0.03, "{without:?}");
    // With variance between runs, nearly every point's floor is wider than its own.
    assert!(wider as f64 > 0.9 * (trials * 25) as f64, "{wider}");
}

#[test]
fn compare_takes_a_between_runs_calibration_before_a_within_run_one() {
    let root = tempfile::tempdir().unwrap();
    let mut rng = fastrand::Rng::with_seed(3);
    let runs = root.path().join("runs");
    let mut dirs = Vec::new();
    for (name, started) in [("a", "2026-11-01T00:00:00Z"), ("b", "2026-11-01T01:00:00Z")] {
        let mut r = record("column-sweep", StudyKind::Sweep);
        r.run.started = started.into();
        r.run.sessions = Some(8);
        let rows = Shape::committed_noise(8).run(&mut rng, |_| 1.0);
        dirs.push(write_run(&runs.join(name), &r, Some(&rows)));
    }
    let reports = root.path().join("reports");
    // A within-run calibration beside them, newer: compare still takes the between-runs one.
    let mut r = record("column-sweep", StudyKind::Sweep);
    r.run.started = "2026-11-02T00:00:00Z".into();
    let within = Shape::committed_noise(16).run(&mut rng, |_| 1.0);
    let w = write_run(&runs.join("within"), &r, Some(&within));
    crate::studies::sweep::report::calibrate::write_calibration(&w, "--from").unwrap();
    let source = CalibrationSource::Newest(reports.clone());
    let c = compare(&dirs[0], &dirs[1], None, &source).unwrap();
    assert!(
        matches!(
            &c.threshold,
            ThresholdChoice::Calibrated {
                kind: CalibrationKind::WithinRun,
                ..
            }
        ),
        "{:?}",
        c.threshold
    );
    assert!(
        c.notes
            .iter()
            .any(|n| n.contains("no between-runs calibration"))
    );
    let between = write_between(&dirs[0], &dirs[1]).unwrap();
    assert_eq!(between.judged, 25);
    let c = compare(&dirs[0], &dirs[1], None, &source).unwrap();
    let ThresholdChoice::Calibrated {
        kind, moves, file, ..
    } = &c.threshold
    else {
        panic!("{:?}", c.threshold)
    };
    assert_eq!(*kind, CalibrationKind::BetweenRuns);
    assert_eq!(file, &dirs[1].join(BETWEEN_RUNS_FILE));
    assert!(moves.unwrap().0 >= moves.unwrap().1);
    let md = crate::studies::sweep::report::compare::markdown(&c);
    assert!(md.contains("Between runs, a point moved by up to"), "{md}");
    assert!(
        c.notes
            .iter()
            .any(|n| n.contains("sits in a run compared here"))
    );
    // Runs of another design are refused.
    let mut r = record("column-sweep", StudyKind::Sweep);
    r.run.sessions = Some(4);
    let four = write_run(
        &runs.join("four"),
        &r,
        Some(&Shape::committed_noise(4).run(&mut rng, |_| 1.0)),
    );
    let err = write_between(&dirs[0], &four).unwrap_err().to_string();
    assert!(err.starts_with("the runs differ in design"), "{err}");
}

/// A calibration between runs that measured σ between runs makes compare's detectable the
/// difference's whole variance, se² + 2σ²: read back from the csv, it widens every point's
/// detectable over what the sessions alone give, by the rule's own amount.
#[test]
fn the_variance_between_runs_widens_what_compare_says_it_could_detect() {
    let mut rng = fastrand::Rng::with_seed(11);
    let root = tempfile::tempdir().unwrap();
    let (a, b) = pair(&mut rng, 0.10);
    let mut dirs = Vec::new();
    for (name, rows) in [("a", &a), ("b", &b)] {
        let mut r = record("column-sweep", StudyKind::Sweep);
        r.run.sessions = Some(8);
        dirs.push(write_run(&root.path().join(name), &r, Some(rows)));
    }
    let written = write_between(&dirs[0], &dirs[1]).unwrap();
    let sd = written.components[0].log_sd;
    assert!(sd > 0.05, "σ between runs {sd}");
    let calibration = Calibration::read(&dirs[1].join(BETWEEN_RUNS_FILE)).unwrap();
    assert!(
        calibration
            .rows
            .iter()
            .all(|r| r.between_runs_log_sd == Some(sd)),
        "every point carries its target's σ"
    );
    let own = judge(&a, &b, Axis::Columns, &ThresholdRule::NoiseFloor);
    let calibrated = judge(
        &a,
        &b,
        Axis::Columns,
        &ThresholdRule::Calibrated(&calibration),
    );
    let mut checked = 0;
    for (p, c) in own.points.iter().zip(&calibrated.points) {
        assert_eq!(p.key, c.key);
        let (Some(o), Some(c)) = (p.detectable, c.detectable) else {
            continue;
        };
        // detectable = exp(k · se) and a floor exp(t · se), with the same k and t (the same
        // degrees of freedom) on both sides: the calibration widens its floor, ln exp(t ·
        // √(se² + 2σ²)), by the factor compare must widen the detectable's logarithm by.
        let widened = calibration.noise_floor(&p.key).unwrap().ln() / p.noise_floor.unwrap().ln();
        let got = c.alone.ln() / o.alone.ln();
        assert!(widened > 1.0, "{widened}");
        assert!(
            (got - widened).abs() < 1e-9,
            "{got} against the floor's {widened}"
        );
        checked += 1;
    }
    assert_eq!(checked, 25);
    // A within-run calibration carries no σ, and leaves the detectable as the sessions give it.
    let within = Calibration {
        kind: CalibrationKind::WithinRun,
        ..calibration.clone()
    };
    let judged = judge(&a, &b, Axis::Columns, &ThresholdRule::Calibrated(&within));
    for (o, w) in own.points.iter().zip(&judged.points) {
        assert_eq!(o.detectable, w.detectable);
    }
}

/// A replicate set of three runs is calibrated in one, every pair of its runs: each point is
/// judged three times, the variance between runs pooled from all three pairs recovers the
/// simulated one, and the files go into the newest run.
#[test]
fn a_replicate_set_is_calibrated_over_every_pair_of_its_runs() {
    let mut rng = fastrand::Rng::with_seed(5);
    let set = tempfile::tempdir().unwrap();
    let shape = Shape::committed_noise(8);
    let mut dirs = Vec::new();
    for (i, name) in ["r1", "r2", "r3"].into_iter().enumerate() {
        // Each point of each run moved by its own draw, σ 10% between runs.
        let shifts: Vec<((d1bench_core::Strategy, usize), f64)> = shape
            .strategies
            .iter()
            .flat_map(|&s| shape.columns.iter().map(move |&c| (s, c)))
            .map(|k| (k, (0.10 * normal(&mut rng)).exp()))
            .collect();
        let rows = shape.run(&mut rng, |r| {
            shifts
                .iter()
                .find(|(k, _)| *k == (r.strategy, r.columns))
                .map_or(1.0, |(_, f)| *f)
        });
        let mut r = record("column-sweep", StudyKind::Sweep);
        r.run.sessions = Some(8);
        r.run.started = format!("2026-12-0{}T00:00:00Z", i + 1);
        dirs.push(write_run(&set.path().join(name), &r, Some(&rows)));
    }
    let c = write_between_set(set.path()).unwrap();
    assert_eq!(
        c.judged,
        3 * 25,
        "every point judged by each of the 3 pairs"
    );
    assert!(c.points.iter().all(|p| p.splits_judged == 3));
    let sd = c.components[0].log_sd;
    assert!((0.06..0.14).contains(&sd), "{:?}", c.components);
    assert!(dirs[2].join(BETWEEN_RUNS_FILE).is_file());
    assert!(!dirs[0].join(BETWEEN_RUNS_FILE).is_file());
    let md = std::fs::read_to_string(dirs[2].join(BETWEEN_RUNS_FILE).with_extension("md")).unwrap();
    assert!(md.contains("every pair of them (3 pairs)"), "{md}");
    // A pair's calibration is the set's of two.
    let (a, b) = (
        crate::records::csv::read::<ProbeRow>(&dirs[0].join("results.csv")).unwrap(),
        crate::records::csv::read::<ProbeRow>(&dirs[1].join("results.csv")).unwrap(),
    );
    assert_eq!(
        calibrate_between(&a, &b, Axis::Columns).unwrap(),
        calibrate_runs(&[&a, &b], Axis::Columns).unwrap()
    );
    // One run is not a set to calibrate.
    std::fs::remove_dir_all(&dirs[1]).unwrap();
    std::fs::remove_dir_all(&dirs[2]).unwrap();
    let err = write_between_set(set.path()).unwrap_err().to_string();
    assert!(err.contains("holds one run"), "{err}");
}
