//! Tests of calibrate: its splits, its false-alarm rate on A/A data (simulated, with a session
//! effect), compare catching a 20% slowdown at the thresholds it calibrated, and its files.

use super::*;
use crate::records::StudyKind;
use crate::studies::sweep::report::compare::synthetic::Shape;
use crate::studies::sweep::report::compare::synthetic::{record, write_run};
use crate::studies::sweep::report::compare::{Calibration, Verdict};

#[test]
fn splits_interleave_the_sessions_in_balanced_halves() {
    let all = |n: usize| -> Vec<usize> { (0..n).collect() };
    let s = splits(&all(4), MOST_SPLITS);
    assert_eq!(
        s,
        [
            Split {
                a: vec![0, 2],
                b: vec![1, 3]
            },
            Split {
                a: vec![0, 3],
                b: vec![1, 2]
            },
        ]
    );
    // Six sessions: 2² splits; each half takes one of every pair.
    let s = splits(&all(6), MOST_SPLITS);
    assert_eq!(s.len(), 4);
    assert_eq!(
        s[0],
        Split {
            a: vec![0, 2, 4],
            b: vec![1, 3, 5]
        }
    );
    for split in &s {
        for pair in all(6).chunks(2) {
            assert_eq!(
                pair.iter().filter(|x| split.a.contains(x)).count(),
                1,
                "{split:?}"
            );
        }
    }
    // Many sessions: at most MOST_SPLITS, all different; an odd last session left out.
    let s = splits(&all(21), MOST_SPLITS);
    assert_eq!(s.len(), MOST_SPLITS);
    assert!(
        s.iter()
            .all(|x| x.a.len() == 10 && !x.a.contains(&20) && !x.b.contains(&20))
    );
    for (i, x) in s.iter().enumerate() {
        assert!(!s[..i].contains(x));
    }
}

#[test]
fn calibrate_refuses_a_run_with_too_few_sessions() {
    let mut rng = fastrand::Rng::with_seed(1);
    let rows = Shape::sqlite(3).run(&mut rng, |_| 1.0);
    let err = calibrate(&rows, Axis::Columns).unwrap_err().to_string();
    assert!(
        err.starts_with("the run has 3 session(s): calibrate needs 4 or more"),
        "{err}"
    );
}

#[test]
fn calibrate_finds_few_false_alarms_on_a_and_a_data_and_compare_then_catches_a_20_percent_slowdown()
{
    let mut rng = fastrand::Rng::with_seed(23);
    // At the committed runs' noise (12% a session value), calibrating 16 sessions gives halves
    // of 8, the main run's sessions: the floors compare then applies to runs of 8.
    let shape = Shape::committed_noise(16);
    let (mut judged, mut alarms) = (0, 0);
    let mut caught = 0;
    let trials = 30;
    for _ in 0..trials {
        let run = shape.run(&mut rng, |_| 1.0);
        let c = calibrate(&run, Axis::Columns).unwrap();
        assert_eq!(
            (c.sessions, c.sessions_per_half, c.splits.len()),
            (16, 8, 8)
        );
        assert_eq!(c.points.len(), 25);
        judged += c.judged();
        alarms += c.false_alarms();
        assert!(c.points.iter().all(|p| p.noise_floor.unwrap() > 1.0));
        // compare at the calibrated floors: two runs of 8 sessions, b 20% slower.
        let calibration = Calibration {
            file: "calibration.csv".into(),
            kind: crate::studies::sweep::report::compare::CalibrationKind::WithinRun,
            rows: c.points,
        };
        let short = Shape::committed_noise(8);
        let (a, b) = (short.run(&mut rng, |_| 1.0), short.run(&mut rng, |_| 1.2));
        let j = judge(
            &a,
            &b,
            Axis::Columns,
            &ThresholdRule::Calibrated(&calibration),
        );
        caught += j
            .points
            .iter()
            .filter(|p| p.verdict == Verdict::Slower)
            .count();
    }
    assert_eq!(judged, trials * 8 * 25);
    let rate = alarms as f64 / judged as f64;
    assert!(rate <= 0.01, "{alarms} false alarms in {judged}");
    // A 20% change against floors near 1.14 (t(14) · 0.12 · √(2/8) on the logs): caught at
    // most points, not all; at halves of 2 it would be caught almost never.
    let power = caught as f64 / (trials * 25) as f64;
    assert!(
        (0.5..=0.9).contains(&power),
        "a 20% slowdown caught at {power} of the points"
    );
}

#[test]
fn calibrate_writes_its_csv_and_markdown_into_the_run_directory() {
    let root = tempfile::tempdir().unwrap();
    let mut rng = fastrand::Rng::with_seed(5);
    let rows = Shape::sqlite(4).run(&mut rng, |_| 1.0);
    let dir = write_run(
        &root.path().join("run"),
        &record("column-sweep", StudyKind::Sweep),
        Some(&rows),
    );
    let c = write_calibration(&dir, "--from").unwrap();
    let back = Calibration::read(&dir.join(calibration::FILE)).unwrap();
    assert_eq!(back.rows, c.points);
    let md = std::fs::read_to_string(dir.join("calibration.md")).unwrap();
    for said in [
        "# calibrate: column-sweep\n",
        "its 4 sessions split into two interleaved halves of 2",
        "2 such splits",
        &format!(
            "**False-alarm rate: {} of 50 points judged",
            c.false_alarms()
        ),
        "| target | strategy | series | columns | splits judged | false alarms | noise floor |",
        "| sqlite | bound |  | 1 | 2 | ",
    ] {
        assert!(md.contains(said), "{said} not in\n{md}");
    }
    let err = format!(
        "{:#}",
        write_calibration(&root.path().join("none"), "--from").unwrap_err()
    );
    assert!(err.starts_with("--from: "), "{err}");
}
