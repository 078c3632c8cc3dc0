//! Tests of the shards: their timetables together are the whole one, a rate one process cannot
//! offer is refused with the shards it needs, histograms added are one histogram of every
//! value whatever the order, and every refusal of `merge`.

use std::path::PathBuf;

use super::histograms::{self, HistogramRow, MERGED};
use super::merge::{self, ShardRun};
use super::*;
use crate::records::RunStatus;
use crate::records::run_record::tests_support;
use crate::records::shard::ShardRefusal;
use crate::stats::latencies::Latencies;
use crate::studies::workload::Workload;

fn plan_at(rate: u32) -> WorkloadPlan {
    let source = format!(
        r#"
description = "test"
[table]
columns = 4
row-bytes = 64
groups = 10
[[operation]]
kind = "point-read"
weight = 100
[profile.smoke]
rows = [100]
rates = [{rate}]
duration-s = 1
"#
    );
    let w = Workload::parse("t", std::path::Path::new("t.toml"), source).unwrap();
    let (_, profile) = w.profile(Some("smoke")).unwrap();
    w.plan(profile)
}

/// Shard K of N's requests are due when the whole timetable's are: every request once.
#[test]
fn the_shards_timetables_together_are_the_whole_one() {
    let rate = 300.0;
    let whole = crate::studies::workload::measure::load::Timetable::at(rate);
    let mut due: Vec<(usize, f64)> = Vec::new();
    for index in 1..=3 {
        let shard = Shard { index, of: 3 };
        let mine = timetable(rate, shard);
        assert_eq!(mine.per_s, 100.0);
        let seqs: Vec<usize> = (0..30).filter(|&i| shard.takes(i)).collect();
        for (j, seq) in seqs.into_iter().enumerate() {
            due.push((seq, mine.due_s(j)));
        }
    }
    due.sort_by_key(|(seq, _)| *seq);
    assert_eq!(due.len(), 30);
    for (i, (seq, at)) in due.into_iter().enumerate() {
        assert_eq!(seq, i);
        assert!((at - whole.due_s(i)).abs() < 1e-9, "{i}: {at}");
    }
}

/// 5,000 requests a second is more than one process offers: refused, naming the point and
/// the shards it needs; as 3 shards of 1,667 it plans.
#[test]
fn a_rate_one_process_cannot_offer_names_the_shards_it_needs() {
    let mut plan = plan_at(5000);
    let err = check_rates(&plan, "t").unwrap_err().to_string();
    assert!(
        err.contains("point 1 asks 5000 requests a second")
            && err.contains("3 shards or more")
            && err.contains("--shard K/3"),
        "{err}"
    );
    plan.shard = Shard { index: 2, of: 2 };
    let err = check_rates(&plan, "t").unwrap_err().to_string();
    assert!(err.contains("2500 of them in each of 2 shards"), "{err}");
    plan.shard = Shard { index: 1, of: 3 };
    check_rates(&plan, "t").unwrap();
    assert_eq!(shards_needed(5000.0, 2000.0), 3);
    assert_eq!(shards_needed(10.0, 2000.0), 1);
}

/// The dry run names the point one process cannot offer by the measured ceiling.
#[test]
fn the_dry_run_counts_shards_by_the_measured_ceiling() {
    let plan = plan_at(1500);
    let ceiling = ceiling::Ceiling {
        per_process_per_s: 1000.0,
        throughput_per_s: 4000.0,
        measured: "2026-12-06T16:00:00Z".into(),
        cpu: "c".into(),
        cpus: 2,
        cpu_quota_cores: Some(0.45),
        load_at_start: Some(1.0),
        seconds_per_rate: 1.0,
        threads: 64,
        tries: Vec::new(),
    };
    let lines = ceiling::dry_run_lines(&plan, Some(&ceiling)).join("\n");
    assert!(lines.contains("1000 requests/s per process"), "{lines}");
    assert!(lines.contains("2 shards needed"), "{lines}");
    assert!(
        lines.contains("point 1 (1500 requests/s) is more than one process can offer"),
        "{lines}"
    );
    // A ceiling of 0 (nothing kept on time where it was measured) counts with the fixed cap.
    let zero = ceiling::Ceiling {
        per_process_per_s: 0.0,
        ..ceiling.clone()
    };
    let lines = ceiling::dry_run_lines(&plan, Some(&zero)).join("\n");
    assert!(lines.contains("the fixed cap is used"), "{lines}");
    assert!(lines.contains("1 shard needed"), "{lines}");
    let lines = ceiling::dry_run_lines(&plan, None).join("\n");
    assert!(lines.contains("no measured generator ceiling"), "{lines}");
    assert!(lines.contains("1 shard needed"), "{lines}");
    let lines = ceiling::dry_run_lines(&plan_at(5000), None).join("\n");
    assert!(
        lines.contains("it needs 3 shards (a run of this plan is refused"),
        "{lines}"
    );
}

fn latencies(values_ms: &[f64]) -> Latencies {
    let mut l = Latencies::new();
    for &v in values_ms {
        l.record_ms(v);
    }
    l
}

fn row(shard: &str, values_ms: &[f64], refused: &str) -> HistogramRow {
    let l = latencies(values_ms);
    HistogramRow {
        shard: shard.into(),
        target: crate::base::TargetKind::Sqlite,
        point: 1,
        table_rows: 100,
        index: d1bench_core::workload::IndexKind::Key,
        preparation: d1bench_core::workload::Preparation::Reuse,
        session: d1bench_core::workload::SessionMode::None,
        op: d1bench_core::workload::Operation::PointRead,
        retry: crate::studies::workload::RetryKind::None,
        ttl_s: None,
        rate: 50.0,
        n: values_ms.len() + 1,
        ok: values_ms.len(),
        refused: 1,
        refused_by_class: refused.into(),
        errors: 0,
        target_failed: 0,
        retries: 2,
        offered_per_s: 50.0,
        achieved_per_s: 49.0,
        lag_p99_ms: 1.0,
        lag_max_ms: 2.0,
        late_p99_ms: Some(0.5),
        behind: false,
        load: "below saturation".into(),
        clock_zero_unix_ms: Some(1.0),
        p50_ms: None,
        p95_ms: None,
        p99_ms: None,
        histogram_v2: histograms::encode(&l).unwrap(),
    }
}

/// A V2 serialization reads back as the same histogram, and the shards' histograms added give
/// the percentiles of one histogram of every value, whatever order the shards come in.
#[test]
fn histograms_added_are_one_histogram_of_every_value_in_any_order() {
    let a: Vec<f64> = (1..=500).map(|i| f64::from(i) * 0.37).collect();
    let b: Vec<f64> = (1..=300).map(|i| 3.0 + f64::from(i % 17) * 11.3).collect();
    let back = histograms::decode(&histograms::encode(&latencies(&a)).unwrap()).unwrap();
    assert_eq!(back.histogram(), latencies(&a).histogram());
    let union = latencies(&[a.clone(), b.clone()].concat());
    let shards = [row("1/2", &a, "busy=1"), row("2/2", &b, "overloaded=1")];
    let one = histograms::merged(&shards).unwrap();
    let other = histograms::merged(&[shards[1].clone(), shards[0].clone()]).unwrap();
    assert_eq!(one.len(), 1);
    let (one, other) = (&one[0], &other[0]);
    assert_eq!(one.shard, MERGED);
    assert_eq!(one.latencies().unwrap().histogram(), union.histogram());
    assert_eq!(
        one.latencies().unwrap().histogram(),
        other.latencies().unwrap().histogram()
    );
    for (q, merged) in [(0.5, one.p50_ms), (0.95, one.p95_ms), (0.99, one.p99_ms)] {
        assert_eq!(merged, union.percentile(q, 0.95).map(|p| p.ms), "p{q}");
    }
    assert_eq!((one.n, one.ok, one.refused, one.retries), (802, 800, 2, 4));
    assert_eq!((one.rate, one.offered_per_s), (100.0, 100.0));
    assert_eq!(one.refused_by_class, "busy=1;overloaded=1");
    assert_eq!(other.refused_by_class, "overloaded=1;busy=1");
}

fn shard_run(dir: &str, shard: &str) -> ShardRun {
    let mut record = tests_support::record();
    record.run.kind = crate::records::StudyKind::Workload;
    record.run.experiment = "read-path".into();
    record.run.order_seed = Some(1);
    record.run.shard = Some(shard.parse().unwrap());
    record.run.clock_zero_unix_ms = Some(1.0e12);
    ShardRun {
        dir: PathBuf::from(dir),
        shard: shard.parse().unwrap(),
        record,
    }
}

fn refusal(runs: &mut [ShardRun], allow_missing: bool) -> String {
    let err = merge::check(runs, allow_missing).unwrap_err();
    assert!(err.downcast_ref::<ShardRefusal>().is_some(), "{err}");
    err.to_string()
}

/// Every refusal of runs that are not the shards of one run names the files and what differs.
#[test]
fn merge_refuses_what_is_not_the_shards_of_one_run() {
    let good = || vec![shard_run("a", "1/2"), shard_run("b", "2/2")];
    let mut runs = good();
    assert_eq!(merge::check(&mut runs, false).unwrap(), Vec::<u32>::new());

    let mut runs = vec![shard_run("a", "1/2"), shard_run("b", "2/3")];
    let err = refusal(&mut runs, false);
    assert!(
        err.contains("a/run.toml is shard 1/2 and b/run.toml is shard 2/3"),
        "{err}"
    );

    for (what, change) in [
        (
            "commit",
            Box::new(|r: &mut ShardRun| {
                r.record.git.commit = crate::records::run_record::Commit::Known("beef".into())
            }) as Box<dyn Fn(&mut ShardRun)>,
        ),
        (
            "order seed",
            Box::new(|r: &mut ShardRun| r.record.run.order_seed = Some(2)),
        ),
        (
            "experiment file (SHA-256)",
            Box::new(|r: &mut ShardRun| r.record.studies[0].sha256 = "cd".into()),
        ),
        (
            "profile",
            Box::new(|r: &mut ShardRun| r.record.run.profile = "full".into()),
        ),
    ] {
        let mut runs = good();
        change(&mut runs[1]);
        let err = refusal(&mut runs, false);
        assert!(
            err.contains("a/run.toml and b/run.toml are not shards of one run")
                && err.contains(&format!("their {what} differs")),
            "{what}: {err}"
        );
    }

    let mut runs = vec![shard_run("a", "1/2"), shard_run("a", "1/2")];
    let err = refusal(&mut runs, false);
    assert!(
        err.contains("shard 1/2 is given twice: a/run.toml"),
        "{err}"
    );
    let mut runs = vec![shard_run("a", "1/2"), shard_run("c", "1/2")];
    let err = refusal(&mut runs, false);
    assert!(
        err.contains("shard 1/2 is given twice: a/run.toml and c/run.toml"),
        "{err}"
    );

    let mut runs = vec![shard_run("b", "2/3")];
    let err = refusal(&mut runs, false);
    assert!(
        err.contains("shards 1/3, 3/3 are missing (given: 2/3 in b/run.toml)")
            && err.contains("--allow-missing"),
        "{err}"
    );
    assert_eq!(merge::check(&mut runs, true).unwrap(), vec![1, 3]);

    let mut runs = good();
    runs[0].record.run.status = RunStatus::Failed;
    let err = refusal(&mut runs, false);
    assert!(
        err.contains("a/run.toml: shard 1/2 did not end (status failed)"),
        "{err}"
    );
}

/// Directories that are not shard runs are refused by name.
#[test]
fn merge_refuses_a_directory_that_is_not_a_shard_run() {
    let dir = tempfile::tempdir().unwrap();
    let err = merge::read(&[dir.path().to_owned()]).unwrap_err();
    assert!(err.downcast_ref::<ShardRefusal>().is_some(), "{err}");
    assert!(err.to_string().contains("run.toml: not a run"), "{err}");
    let mut record = tests_support::record();
    record.run.kind = crate::records::StudyKind::Workload;
    record.write(&dir.path().join("run.toml")).unwrap();
    let err = merge::read(&[dir.path().to_owned()])
        .unwrap_err()
        .to_string();
    assert!(err.contains("not a shard run"), "{err}");
}
