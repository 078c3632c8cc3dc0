//! A workload sharded over processes and merged, for real on in-process SQLite (no Worker, so
//! no wrangler): the read path's smoke profile as two shard processes at once, merged in both
//! orders into the same run, whose percentiles are those of one histogram of every shard's raw
//! latencies and whose offered rate is the shards' sum, and which `report` takes as any run;
//! then every refusal, by exit status 2 and the files named: bad `--shard` values, `--shard` on
//! a sweep, a shard given twice, a shard missing (merged with `--allow-missing`, which says so),
//! and shards of another N, commit, seed or experiment file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;

use xtask::stats::latencies::Latencies;

use crate::harness::Trial;
use crate::support::{Row, ms, read_csv, run_dir, run_toml, text, xtask};

pub fn tests() -> Vec<Trial> {
    vec![
        crate::without_worker(
            "shards::two_shards_on_sqlite_merge_into_the_run_of_every_request",
            two_shards_on_sqlite_merge_into_the_run_of_every_request,
        ),
        crate::beside_others(
            "shards::shards_sharing_one_wrangler_dev_are_checked_once_with_every_shards_writes",
            shards_sharing_one_wrangler_dev_are_checked_once_with_every_shards_writes,
        ),
        crate::without_worker(
            "shards::shards_sharing_one_sqlite_file_are_checked_once_with_every_shards_writes",
            shards_sharing_one_sqlite_file_are_checked_once_with_every_shards_writes,
        ),
        crate::without_worker(
            "shards::bad_shard_flags_exit_2_naming_the_problem",
            bad_shard_flags_exit_2_naming_the_problem,
        ),
        crate::without_worker(
            "shards::a_shard_stops_waiting_when_its_coordinator_is_gone_or_its_join_file_is_bad",
            a_shard_stops_waiting_when_its_coordinator_is_gone_or_its_join_file_is_bad,
        ),
    ]
}

/// `run read-path --target sqlite --profile smoke --dry-run` with `extra`, its output.
fn smoke_dry_run(extra: &[&str]) -> Output {
    let base = [
        "run",
        "read-path",
        "--target",
        "sqlite",
        "--profile",
        "smoke",
    ];
    xtask(&[&base[..], extra, &["--dry-run"]].concat())
        .output()
        .unwrap()
}

/// The one directory in `out` whose name ends with `suffix`.
fn dir_ending(out: &Path, suffix: &str) -> PathBuf {
    let found: Vec<PathBuf> = std::fs::read_dir(out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(suffix))
        .collect();
    assert_eq!(found.len(), 1, "{found:?} in {}", out.display());
    found[0].clone()
}

fn shards_sharing_one_wrangler_dev_are_checked_once_with_every_shards_writes() {
    shards_sharing_one_target("local");
}

fn shards_sharing_one_sqlite_file_are_checked_once_with_every_shards_writes() {
    shards_sharing_one_target("sqlite");
}

/// `run write-contention --shards 2` on `target`: one target that a coordinator seeded and
/// checked, with both shards' acknowledged writes in its final count; shard 1 alone calibrated,
/// the shards checked nothing, and both loaded each point's measured phase, started together.
fn shards_sharing_one_target(target: &str) {
    let scratch = tempfile::tempdir().unwrap();
    let output = xtask(&[
        "run",
        "write-contention",
        "--target",
        target,
        "--profile",
        "smoke",
        "--shards",
        "2",
    ])
    .arg("--out")
    .arg(scratch.path())
    .output()
    .unwrap();
    assert!(output.status.success(), "{}", text(&output));
    let merged = dir_ending(scratch.path(), "-merged");
    let group = dir_ending(scratch.path(), "-shards");
    let record = run_toml(&merged);
    assert_eq!(record["run"]["status"].as_str(), Some("complete"));
    assert_eq!(record["merged"]["of"].as_integer(), Some(2));
    assert_eq!(record["merged"]["shared_target"].as_bool(), Some(true));

    // The shard runs: each its own, shard 1 alone calibrating, neither checking the table.
    let mut acknowledged_rows = 0u64;
    let mut shard_dirs = Vec::new();
    for k in 1..=2usize {
        let dir = std::fs::read_dir(&group)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| {
                p.join("run.toml").exists()
                    && run_toml(p)["run"]["shard"].as_str() == Some(&format!("{k}/2"))
            })
            .unwrap_or_else(|| panic!("no run of shard {k}/2 in {}", group.display()));
        assert!(read_csv(&dir.join("checks.csv")).is_empty(), "{k}");
        let rows = read_csv(&dir.join("results.csv"));
        let calibrations = rows.iter().filter(|r| r["phase"] == "calibrate").count();
        assert_eq!(
            calibrations > 0,
            k == 1,
            "shard {k}: {calibrations} calibrations"
        );
        acknowledged_rows += rows
            .iter()
            .filter(|r| {
                (r["op"] == "write" || r["op"] == "batch-write")
                    && r["outcome"] == "ok"
                    && r["target_failed"] == "false"
            })
            .map(|r| r["op_rows"].parse::<u64>().unwrap())
            .sum::<u64>();
        shard_dirs.push(dir);
    }
    assert!(acknowledged_rows > 0);
    // Each arm's histograms, added, are one histogram of both shards' raw latencies.
    let key = |r: &Row| -> Vec<String> {
        ["point", "table_rows", "index", "preparation", "op", "retry"]
            .iter()
            .map(|k| r[*k].clone())
            .collect()
    };
    let union = raw_latencies(&shard_dirs, key);
    let histograms = read_csv(&merged.join("histograms.csv"));
    let added = added_rows(&histograms);
    assert_eq!(added.len(), union.len());
    for r in added {
        for (q, column) in [(0.5, "p50_ms"), (0.95, "p95_ms"), (0.99, "p99_ms")] {
            let expected = union[&key(r)].percentile(q, 0.95).unwrap().ms;
            assert!(
                (ms(r, column) - expected).abs() <= expected * 1e-3,
                "{column} of {r:?}: against {expected}"
            );
        }
    }
    // Merged again by `merge`, in either order: the same records and histograms.
    let again = |dirs: [&Path; 2], name: &str| {
        let out = scratch.path().join(name);
        let output = merge(&dirs, &out, &[]);
        assert!(output.status.success(), "{}", text(&output));
        run_dir(&out)
    };
    let forward = again([&shard_dirs[0], &shard_dirs[1]], "again");
    let backward = again([&shard_dirs[1], &shard_dirs[0]], "again-reversed");
    for file in ["results.csv", "histograms.csv", "points.csv"] {
        let read = |d: &Path| std::fs::read_to_string(d.join(file)).unwrap();
        assert_eq!(read(&forward), read(&backward), "{file}");
        assert_eq!(read(&forward), read(&merged), "{file}");
    }
    // The coordinator's checks: the table seeded, then every shard's writes in it at the end.
    let checks = read_csv(&merged.join("checks.csv"));
    let when: Vec<&str> = checks.iter().map(|c| c["when"].as_str()).collect();
    assert_eq!(when, ["seeded", "final"], "{checks:?}");
    assert!(
        checks.iter().all(|c| c["reconciled"] == "true"),
        "{checks:?}"
    );
    let seeded: u64 = checks[0]["rows_present"].parse().unwrap();
    let last = &checks[1];
    assert_eq!(
        last["rows_expected"].parse::<u64>().unwrap(),
        seeded + acknowledged_rows,
        "{last:?}"
    );
    assert_eq!(last["rows_expected"], last["rows_present"]);

    // Both shards loaded each point's measured phase, on one clock, started together.
    let results = read_csv(&merged.join("results.csv"));
    let mut starts: BTreeMap<(String, u64), f64> = BTreeMap::new();
    for r in results.iter().filter(|r| r["phase"] == "measure") {
        let seq: u64 = r["seq"].parse().unwrap();
        starts.insert((r["point"].clone(), seq % 2), ms(r, "started_ms"));
    }
    for point in ["1", "2"] {
        let one = starts[&(point.to_owned(), 0)];
        let two = starts[&(point.to_owned(), 1)];
        // A meeting starts both within a few ms; a second apart would be no meeting at all.
        assert!((one - two).abs() < 1000.0, "point {point}: {one} and {two}");
    }
    let summary = std::fs::read_to_string(merged.join("summary.md")).unwrap();
    assert!(
        summary.contains(&format!("loaded one {target} target together")),
        "{summary}"
    );
    // What the coordinator made to share is gone; the shard runs and logs stay.
    assert!(!group.join("rendezvous").exists());
    assert!(!group.join("shared.sqlite").exists());
    assert!(group.join("shard-2.log").exists());
}

/// A shard of a coordinator that is gone ends its wait, saying so, and its run says it failed;
/// a join file that is not one is named with its line.
fn a_shard_stops_waiting_when_its_coordinator_is_gone_or_its_join_file_is_bad() {
    let scratch = tempfile::tempdir().unwrap();
    let mut gone = std::process::Command::new("true").spawn().unwrap();
    let pid = gone.id();
    gone.wait().unwrap();
    let join = scratch.path().join("join.toml");
    std::fs::write(
        &join,
        format!(
            "target = \"sqlite\"\nof = 2\nrendezvous = \"{}\"\nsqlite = \"{}\"\n\
             coordinator_pid = {pid}\nwait_limit_s = 600\ngeneration = 1\n",
            scratch.path().join("rendezvous").display(),
            scratch.path().join("shared.sqlite").display()
        ),
    )
    .unwrap();
    let shard = |join: &Path| {
        xtask(&[
            "run",
            "write-contention",
            "--target",
            "sqlite",
            "--profile",
            "smoke",
            "--shard",
            "1/2",
            "--no-baseline",
        ])
        .arg("--join")
        .arg(join)
        .arg("--out")
        .arg(scratch.path().join("out"))
        .output()
        .unwrap()
    };
    let output = shard(&join);
    assert!(!output.status.success(), "{}", text(&output));
    assert!(
        text(&output).contains(&format!("the coordinator (pid {pid}) is gone")),
        "{}",
        text(&output)
    );
    let record = run_toml(&run_dir(&scratch.path().join("out")));
    assert_eq!(record["run"]["status"].as_str(), Some("failed"), "{record}");

    let bad = scratch.path().join("bad.toml");
    std::fs::write(&bad, "target = \"sqlite\"\nof = \"two\"\n").unwrap();
    let output = shard(&bad);
    assert!(!output.status.success());
    assert!(
        text(&output).contains(&format!("{}: not a join file", bad.display()))
            && text(&output).contains("line 2"),
        "{}",
        text(&output)
    );
}

/// `cargo xtask merge <dirs> --out <out>`, its output.
fn merge(dirs: &[&Path], out: &Path, extra: &[&str]) -> Output {
    let mut command = xtask(&["merge"]);
    command.args(dirs).arg("--out").arg(out).args(extra);
    command.output().unwrap()
}

fn refused(output: &Output, says: &[&str]) {
    assert_eq!(output.status.code(), Some(2), "{}", text(output));
    for s in says {
        assert!(
            text(output).contains(s),
            "{s:?} missing from: {}",
            text(output)
        );
    }
}

/// A copy of the shard run in `from` whose run.toml has `edit` applied, in `to`.
fn edited(from: &Path, to: &Path, edit: impl Fn(&mut toml::Table)) -> PathBuf {
    std::fs::create_dir_all(to).unwrap();
    for file in ["results.csv", "checks.csv", "points.csv", "histograms.csv"] {
        std::fs::copy(from.join(file), to.join(file)).unwrap();
    }
    let mut record = run_toml(from);
    edit(&mut record);
    std::fs::write(to.join("run.toml"), toml::to_string(&record).unwrap()).unwrap();
    to.to_owned()
}

/// One histogram per arm (`key` of a row) of every measured, answered request's latency in the
/// runs `dirs`.
fn raw_latencies<K: Ord>(dirs: &[PathBuf], key: impl Fn(&Row) -> K) -> BTreeMap<K, Latencies> {
    let mut union: BTreeMap<K, Latencies> = BTreeMap::new();
    for dir in dirs {
        for r in read_csv(&dir.join("results.csv")) {
            if r["phase"] == "measure" && r["outcome"] == "ok" && r["target_failed"] == "false" {
                union
                    .entry(key(&r))
                    .or_default()
                    .record_ms(ms(&r, "latency_ms"));
            }
        }
    }
    union
}

/// The merged histograms' rows of histograms.csv.
fn added_rows(histograms: &[Row]) -> Vec<&Row> {
    histograms
        .iter()
        .filter(|r| r["shard"] == "merged")
        .collect()
}

/// The arm a row of results.csv, summary.csv or histograms.csv is about.
fn arm(r: &Row) -> (String, String, String, String, String) {
    (
        r.get("point").cloned().unwrap_or_default(),
        r["table_rows"].clone(),
        r["index"].clone(),
        r["preparation"].clone(),
        r["op"].clone(),
    )
}

pub fn two_shards_on_sqlite_merge_into_the_run_of_every_request() {
    let scratch = tempfile::tempdir().unwrap();
    let shard = |k: &str| {
        let mut command = xtask(&[
            "run",
            "read-path",
            "--target",
            "sqlite",
            "--profile",
            "smoke",
            "--shard",
            k,
        ]);
        let name = k.replace('/', "-of-");
        command.arg("--out").arg(scratch.path().join(&name));
        // Each one's output in a file of its own, shown if it fails.
        let log = scratch.path().join(format!("{name}.log"));
        let file = std::fs::File::create(&log).unwrap();
        command.stdout(file.try_clone().unwrap()).stderr(file);
        (command.spawn().unwrap(), log)
    };
    // Two processes at once, as two runners would.
    let children = [shard("1/2"), shard("2/2")];
    for (mut child, log) in children {
        let status = child.wait().unwrap();
        assert!(
            status.success(),
            "{}",
            std::fs::read_to_string(log).unwrap_or_default()
        );
    }
    let one = run_dir(&scratch.path().join("1-of-2"));
    let two = run_dir(&scratch.path().join("2-of-2"));
    for (dir, k) in [(&one, "1/2"), (&two, "2/2")] {
        let record = run_toml(dir);
        assert_eq!(record["run"]["shard"].as_str(), Some(k), "{record}");
        assert!(record["run"]["clock_zero_unix_ms"].as_float().is_some());
        assert_eq!(record["run"]["status"].as_str(), Some("complete"));
        assert!(dir.join("histograms.csv").exists());
        let rows = read_csv(&dir.join("results.csv"));
        let index: usize = k[..1].parse().unwrap();
        // Each sends its own requests of the whole timetable, at their times in it.
        for r in rows.iter().filter(|r| r["phase"] == "measure") {
            let seq: usize = r["seq"].parse().unwrap();
            assert_eq!(seq % 2, index - 1, "{r:?}");
            let due = seq as f64 * 1000.0 / (2.0 * ms(r, "rate"));
            assert!((ms(r, "scheduled_ms") - due).abs() < 1e-6, "{r:?}");
        }
    }

    let merged = |dirs: &[&Path], name: &str| {
        let out = scratch.path().join(name);
        let output = merge(dirs, &out, &[]);
        assert!(output.status.success(), "{}", text(&output));
        run_dir(&out)
    };
    let m = merged(&[&one, &two], "merged");
    let reversed = merged(&[&two, &one], "merged-reversed");
    // The same run whatever the order of the shards.
    for file in [
        "results.csv",
        "histograms.csv",
        "summary.csv",
        "points.csv",
        "checks.csv",
    ] {
        assert_eq!(
            std::fs::read_to_string(m.join(file)).unwrap(),
            std::fs::read_to_string(reversed.join(file)).unwrap(),
            "{file}"
        );
    }
    let record = run_toml(&m);
    assert_eq!(record["run"]["status"].as_str(), Some("complete"));
    assert!(record["run"].get("shard").is_none(), "{record}");
    assert_eq!(record["merged"]["of"].as_integer(), Some(2));
    let summary_md = std::fs::read_to_string(m.join("summary.md")).unwrap();
    assert!(summary_md.contains("## Shards"), "{summary_md}");
    assert!(
        summary_md.contains("### Each shard on its own"),
        "{summary_md}"
    );

    // One histogram of every shard's raw latencies, per arm.
    let union = raw_latencies(&[one.clone(), two.clone()], arm);
    let histograms = read_csv(&m.join("histograms.csv"));
    let added = added_rows(&histograms);
    assert_eq!(added.len(), union.len());
    let summary = read_csv(&m.join("summary.csv"));
    let mut largest = 0.0f64;
    for r in &added {
        let all = &union[&arm(r)];
        let s = summary
            .iter()
            .find(|s| {
                (
                    s["table_rows"].as_str(),
                    s["index"].as_str(),
                    s["preparation"].as_str(),
                    s["op"].as_str(),
                ) == (
                    r["table_rows"].as_str(),
                    r["index"].as_str(),
                    r["preparation"].as_str(),
                    r["op"].as_str(),
                )
            })
            .unwrap();
        for (q, column) in [(0.5, "p50_ms"), (0.95, "p95_ms"), (0.99, "p99_ms")] {
            let expected = all.percentile(q, 0.95).unwrap().ms;
            // The histogram's stated precision: 3 significant digits.
            for got in [ms(r, column), ms(s, column)] {
                assert!(
                    (got - expected).abs() <= expected * 1e-3,
                    "{column} of {r:?}: {got} against {expected}"
                );
                largest = largest.max((got - expected).abs());
            }
        }
        // The offered rate is the shards' sum.
        let shards: Vec<&Row> = histograms
            .iter()
            .filter(|h| h["shard"] != "merged" && arm(h) == arm(r))
            .collect();
        assert_eq!(shards.len(), 2);
        let sum: f64 = shards.iter().map(|h| ms(h, "offered_per_s")).sum();
        assert!((ms(r, "offered_per_s") - sum).abs() < 1e-6 * sum, "{r:?}");
        // The summary's, from the merged records: the whole point's count over its span, which
        // differs from the sum only when the point's requests did not split evenly.
        assert!((ms(s, "offered_per_s") - sum).abs() < 0.05 * sum, "{s:?}");
        let n: usize = shards
            .iter()
            .map(|h| h["n"].parse::<usize>().unwrap())
            .sum();
        assert_eq!(r["n"].parse::<usize>().unwrap(), n);
    }
    eprintln!("merged against one histogram of every latency: largest difference {largest} ms");

    // An ordinary run: `report` takes it.
    let report = xtask(&["report"])
        .arg(&m)
        .arg("--out")
        .arg(scratch.path())
        .output()
        .unwrap();
    assert!(report.status.success(), "{}", text(&report));

    // Refusals, each naming the files.
    let out = scratch.path().join("refused");
    refused(&merge(&[&one, &one], &out, &[]), &["given twice", "1-of-2"]);
    refused(
        &merge(&[&two], &out, &[]),
        &["shard 1/2 is missing", "--allow-missing"],
    );
    let three = edited(&one, &scratch.path().join("of-3"), |r| {
        r["run"]["shard"] = "1/3".into();
    });
    refused(
        &merge(&[&three, &two], &out, &[]),
        &["share N", "of-3/run.toml"],
    );
    let commit = edited(&one, &scratch.path().join("commit"), |r| {
        r["git"]["commit"] = "0123456789abcdef".into();
    });
    refused(
        &merge(&[&commit, &two], &out, &[]),
        &["their commit differs", "commit/run.toml"],
    );
    let seed = edited(&one, &scratch.path().join("seed"), |r| {
        r["run"]["order_seed"] = toml::Value::Integer(7);
    });
    refused(
        &merge(&[&seed, &two], &out, &[]),
        &["their order seed differs"],
    );
    let plan = edited(&one, &scratch.path().join("plan"), |r| {
        r["studies"][0]["sha256"] = "00".into();
    });
    refused(
        &merge(&[&plan, &two], &out, &[]),
        &["their experiment file (SHA-256) differs"],
    );
    assert!(!out.exists(), "a refused merge wrote {}", out.display());

    // With --allow-missing: merged, saying which shard is missing and what was offered.
    let partial = merge(&[&two], &out, &["--allow-missing"]);
    assert!(partial.status.success(), "{}", text(&partial));
    let partial = run_dir(&out);
    let summary_md = std::fs::read_to_string(partial.join("summary.md")).unwrap();
    assert!(summary_md.contains("**Shards missing**"), "{summary_md}");
    assert!(summary_md.contains("1/2"), "{summary_md}");
    assert_eq!(
        run_toml(&partial)["merged"]["missing"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );
}

pub fn bad_shard_flags_exit_2_naming_the_problem() {
    for (shard, says) in [
        ("0/2", "shards count from 1"),
        ("3/2", "names shard 3 of 2"),
        ("x", "is not K/N"),
        ("1/0", "at least 1"),
    ] {
        let output = xtask(&["run", "read-path", "--target", "sqlite", "--shard", shard])
            .output()
            .unwrap();
        refused(&output, &[says, "--shard <K/N>"]);
    }
    let output = xtask(&[
        "run",
        "column-sweep",
        "--target",
        "sqlite",
        "--shard",
        "1/2",
        "--dry-run",
    ])
    .output()
    .unwrap();
    refused(&output, &["`column-sweep` is a sweep study"]);
    // --shards: workloads on a target of this machine, N from 2, not with --shard.
    for (args, says) in [
        (
            &["column-sweep", "--target", "sqlite", "--shards", "2"][..],
            "`column-sweep` is a sweep study",
        ),
        (
            &["read-path", "--target", "remote", "--shards", "2"][..],
            "sqlite or local, not remote",
        ),
        (
            &["read-path", "--target", "sqlite", "--shards", "1"][..],
            "2..=64",
        ),
        (
            &[
                "read-path",
                "--target",
                "sqlite",
                "--shards",
                "2",
                "--shard",
                "1/2",
            ][..],
            "cannot be used with",
        ),
    ] {
        let output = xtask(&[&["run"][..], args, &["--dry-run"]].concat())
            .output()
            .unwrap();
        refused(&output, &[says]);
    }
    let output = smoke_dry_run(&["--shards", "3"]);
    assert!(
        output.status.success()
            && text(&output).contains("--shards 3: 3 processes on this machine load one sqlite")
            && text(&output).contains("shard 1/3"),
        "{}",
        text(&output)
    );
    // The dry run counts the shards the rates need.
    let output = smoke_dry_run(&[]);
    assert!(output.status.success(), "{}", text(&output));
    assert!(
        text(&output).contains("the busiest point asks")
            && text(&output).contains("1 shard needed"),
        "{}",
        text(&output)
    );
}
