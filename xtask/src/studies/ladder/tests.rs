//! The tests of ladder files and the climber: golden errors, the shipped files, climbs that
//! find an exact ceiling.

use super::*;
use crate::paths::project_root;

/// Runs a climb against a limit: values above `limit` fail.
fn climb(rungs: Rungs, confirm: usize, limit: usize) -> (Vec<(usize, Role)>, Verdict) {
    let mut climber = Climber::new(&rungs, confirm);
    let mut sent = Vec::new();
    while let Some((value, role)) = climber.next() {
        assert!(sent.len() < 1_000, "the climb does not end: {sent:?}");
        sent.push((value, role));
        climber.record(value, value > limit);
    }
    (sent, climber.verdict())
}

#[test]
fn a_list_stops_after_the_first_refusal_and_its_confirmation() {
    let (sent, verdict) = climb(Rungs::List(vec![999, 1000, 1001, 2000, 3000]), 1, 1000);
    assert_eq!(
        sent,
        [
            (999, Role::Climb),
            (1000, Role::Climb),
            (1001, Role::Climb),
            (2000, Role::Confirm)
        ]
    );
    assert_eq!(verdict.last_ok, Some(1000));
    assert_eq!(verdict.first_failed, Some(1001));
    assert_eq!(verdict.confirmed, Some(true));
}

#[test]
fn growth_then_bisection_finds_the_exact_ceiling() {
    for limit in [1, 7, 33, 100, 4095] {
        let rungs = Rungs::Grow {
            start: 1,
            factor: 2.0,
            max: 4096,
            resolution: 1,
        };
        let (sent, verdict) = climb(rungs, 1, limit);
        assert_eq!(verdict.last_ok, Some(limit), "{sent:?}");
        assert_eq!(verdict.first_failed, Some(limit + 1), "{sent:?}");
        // A first refusal at the cap has no rung past it to confirm with.
        let confirmable = limit < 2048;
        assert_eq!(verdict.confirmed, confirmable.then_some(true), "{sent:?}");
        assert!(sent.len() <= 26, "{} rungs for {limit}", sent.len());
    }
}

#[test]
fn a_climb_without_refusal_reports_how_far_it_went() {
    let rungs = Rungs::Grow {
        start: 1000,
        factor: 2.0,
        max: 200_000,
        resolution: 1000,
    };
    assert_eq!(
        rungs.sequence(),
        [1000, 2000, 4000, 8000, 16000, 32000, 64000, 128000, 200000]
    );
    let (sent, verdict) = climb(rungs, 1, usize::MAX);
    assert_eq!(sent.len(), 9);
    assert_eq!(verdict.last_ok, Some(200_000));
    assert_eq!((verdict.first_failed, verdict.confirmed), (None, None));
}

#[test]
fn a_coarse_resolution_stops_bisecting_early_and_a_flaky_confirmation_shows() {
    let rungs = Rungs::Grow {
        start: 1000,
        factor: 10.0,
        max: 1_000_000,
        resolution: 1000,
    };
    let (_, verdict) = climb(rungs.clone(), 1, 54_321);
    let (lo, hi) = (verdict.last_ok.unwrap(), verdict.first_failed.unwrap());
    assert!(lo <= 54_321 && hi > 54_321 && hi - lo <= 1000, "{lo}..{hi}");

    let mut climber = Climber::new(&Rungs::List(vec![1, 2, 3]), 1);
    climber.record(1, false);
    climber.record(2, true);
    climber.record(3, false);
    assert_eq!(climber.verdict().confirmed, Some(false));
}

fn golden_dir() -> PathBuf {
    project_root().join("xtask/tests/bad-ladders")
}

/// Every `bad-ladders/*.toml` fails with exactly the text in its `.err` file.
#[test]
fn bad_ladder_files_fail_with_their_golden_error() {
    let checked = crate::studies::files::check_golden_errors(&golden_dir(), Ladder::parse);
    assert!(checked >= 8, "only {checked} golden files");
}

#[test]
fn every_shipped_ladder_parses_with_a_smoke_and_a_default_profile() {
    let dir = project_root().join("experiments");
    let names = names(&dir).unwrap();
    let kinds: Vec<LadderKind> = names
        .iter()
        .map(|n| Ladder::load(&dir, n).unwrap().file.ladder)
        .collect();
    for kind in LadderKind::ALL {
        assert!(kinds.contains(&kind), "no ladder file climbs {kind}");
    }
    for name in names {
        let ladder = Ladder::load(&dir, &name).unwrap();
        assert_eq!(
            ladder.file.ladder.name(),
            name,
            "the file is named after its ladder"
        );
        let (_, smoke) = ladder.profile(Some("smoke")).unwrap();
        assert!(!ladder.climbs(smoke).is_empty());
        let (_, default) = ladder.profile(None).unwrap();
        assert!(!ladder.climbs(default).is_empty());
    }
}

#[test]
fn columns_from_to_gives_one_climb_per_count() {
    let source = r#"
ladder = "param-ceiling"
description = "d"
[[profile.full.climb]]
rungs = { start = 1, factor = 2, max = 128, resolution = 1 }
held = { columns = { from = 1, to = 100 } }
"#;
    let ladder = Ladder::parse("p", Path::new("p.toml"), source.into()).unwrap();
    let (_, profile) = ladder.profile(None).unwrap();
    let climbs = ladder.climbs(profile);
    assert_eq!(climbs.len(), 100);
    assert_eq!(climbs[99].held.columns, Some(100));
}

/// The query budget's two documents (D1's limits page: 1,000 Paid, 50 Free; the Workers
/// changelog of 2026-02-11: 10,000 Paid, 1,000 Free): the default (Paid) profiles of
/// query-budget and batch-accounting climb past 10,000, the `free` ones past 1,000, growing to the
/// first refusal and then bisecting to the exact value, whichever document D1 follows.
#[test]
fn the_budget_ladders_climb_past_both_documents_on_each_plan() {
    let dir = project_root().join("experiments");
    for name in ["query-budget", "batch-accounting"] {
        let ladder = Ladder::load(&dir, name).unwrap();
        for (profile, past) in [(None, 10_000), (Some("free"), 1_000)] {
            let (_, p) = ladder.profile(profile).unwrap();
            let climbs = ladder.climbs(p);
            let growing: Vec<&Climb> = climbs
                .iter()
                .filter(|c| matches!(c.rungs, Rungs::Grow { .. }))
                .collect();
            assert!(!growing.is_empty(), "{name} {profile:?}");
            for climb in growing {
                assert!(climb.rungs.max() > past, "{name} {profile:?}: {climb:?}");
                // Whichever budget holds, the climb finds it exactly.
                for limit in [past / 10, past] {
                    let (sent, verdict) = self::climb(climb.rungs.clone(), climb.confirm, limit);
                    assert_eq!(verdict.last_ok, Some(limit), "{name} {profile:?} {limit}");
                    let bisected = sent.iter().filter(|(_, r)| *r == Role::Bisect).count();
                    assert!(bisected <= climb.rungs.most_bisections(), "{sent:?}");
                }
            }
        }
    }
}

#[test]
fn the_most_bisections_bound_every_climb() {
    let rungs = Rungs::Grow {
        start: 1000,
        factor: 2.0,
        max: 64_000,
        resolution: 1,
    };
    // The widest gap, 32,000 to 64,000, halves to 1 in 15 steps.
    assert_eq!(rungs.most_bisections(), 15);
    assert_eq!(Rungs::List(vec![1, 2, 3]).most_bisections(), 0);
    for limit in [1000, 1001, 9_999, 10_000, 33_333, 63_999] {
        let (sent, _) = climb(rungs.clone(), 1, limit);
        let bisected = sent.iter().filter(|(_, r)| *r == Role::Bisect).count();
        assert!(bisected <= rungs.most_bisections(), "{limit}: {sent:?}");
    }
    assert_eq!(
        rungs.label(),
        "1,000, 2,000, 4,000, 8,000, 16,000, 32,000, 64,000, then bisection to 1"
    );
}

/// query-budget's subrequest series set the Worker's `limits.subrequests` (one run each); the
/// default profile leaves it at the plan's default.
#[test]
fn the_subrequest_series_set_the_workers_limit() {
    let dir = project_root().join("experiments");
    let ladder = Ladder::load(&dir, "query-budget").unwrap();
    for (profile, expected) in [
        (None, None),
        (Some("subrequests-1000"), Some(1000)),
        (Some("subrequests-50000"), Some(50_000)),
    ] {
        let (_, p) = ladder.profile(profile).unwrap();
        assert_eq!(p.subrequests(), expected, "{profile:?}");
    }
}
