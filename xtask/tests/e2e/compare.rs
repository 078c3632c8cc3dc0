//! compare, calibrate and export through the binary, on real bare-SQLite runs with sessions:
//! compare's exit status on every path (0 no change, 1 a regression, 2 trouble), a
//! `--debug-slow 20` run caught and two normal runs left quiet, calibrate running an experiment
//! in sessions and analysing a run already made, and export's Bencher Metric Format.

use std::path::{Path, PathBuf};

use crate::harness::Trial;
use crate::support::{read_csv, run_dir, run_toml, text, xtask};

/// Longest first (as measured), for `main.rs` to start the longest early.
pub fn tests() -> Vec<Trial> {
    // compare_catches_a_fourfold_slowdown_and_stays_quiet_between_two_normal_runs runs alone
    // (main.rs).
    tests!(compare:
        calibrate_runs_an_experiment_in_sessions_and_compare_takes_its_noise_floors,
        compare_exits_0_1_2_as_diff_does_and_export_writes_bmf,
    )
}

/// `cargo xtask run column-sweep --target sqlite --profile smoke` with `args`, into `out`: the
/// run directory it made.
fn sqlite_run(out: &Path, args: &[&str]) -> PathBuf {
    let output = xtask(&[
        "run",
        "column-sweep",
        "--target",
        "sqlite",
        "--profile",
        "smoke",
    ])
    .args(args)
    .arg("--out")
    .arg(out)
    .output()
    .unwrap();
    assert!(output.status.success(), "{}", text(&output));
    run_dir(out)
}

/// `cargo xtask compare a b` with `args`, its exit code and its output.
fn compare(a: &Path, b: &Path, args: &[&str]) -> (i32, String) {
    let output = xtask(&["compare"])
        .arg(a)
        .arg(b)
        .args(args)
        .output()
        .unwrap();
    (output.status.code().unwrap(), text(&output))
}

/// The verdicts of a compare.json, and how many are each of `slower` and `faster`.
fn verdicts_in(dir: &Path) -> (Vec<String>, usize, usize) {
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("compare.json")).unwrap()).unwrap();
    let verdicts: Vec<String> = json["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["verdict"].as_str().unwrap().to_owned())
        .collect();
    let count = |v: &str| verdicts.iter().filter(|x| *x == v).count();
    let (slower, faster) = (count("slower"), count("faster"));
    (verdicts, slower, faster)
}

/// How many of a compare.json's points have an own ratio (strategy ÷ bound, target ÷ bare
/// SQLite) called slower or faster.
fn ratio_changes_in(dir: &Path) -> usize {
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("compare.json")).unwrap()).unwrap();
    json["points"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| {
            ["vs_bound", "vs_baseline"].iter().any(|k| {
                matches!(
                    p["relative"][k]["verdict"].as_str(),
                    Some("slower") | Some("faster")
                )
            })
        })
        .count()
}

/// Two busy threads per core, as a build beside a run has it, until dropped (on every exit path).
struct Busy {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Busy {
    fn start() -> Busy {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let threads = (0..2 * std::thread::available_parallelism().map_or(2, |n| n.get()))
            .map(|_| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    let mut x = 0u64;
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                        x = std::hint::black_box(
                            x.wrapping_mul(6364136223846793005).wrapping_add(1),
                        );
                    }
                })
            })
            .collect();
        Busy { stop, threads }
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// Two runs of `shape` (seeds 1 and 2, one after the other) whose hosts the host reference reads
/// alike (compare's `host` verdict `same`): the A/A's premise, one machine state for both. Up
/// to three pairs; panics with each pair's reading when it read every pair apart.
fn quiet_pair(at: &dyn Fn(&str) -> PathBuf, shape: &[&str]) -> (PathBuf, PathBuf) {
    let mut readings = Vec::new();
    for attempt in 1..=3 {
        let run = |name: &str, seed: &str| {
            sqlite_run(
                &at(&format!("{name}-{attempt}")),
                &[shape, &["--seed", seed]].concat(),
            )
        };
        let (a, a2) = (run("a", "1"), run("a2", "2"));
        let out = at(&format!("host-{attempt}"));
        let (code, said) = compare(
            &a,
            &a2,
            &["--no-calibration", "--out", out.to_str().unwrap()],
        );
        assert!(code == 0 || code == 1, "{said}");
        let json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.join("compare.json")).unwrap()).unwrap();
        if json["host"]["verdict"] == "same" {
            return (a, a2);
        }
        eprintln!(
            "pair {attempt}: the host reference read the hosts apart: {}",
            json["host"]
        );
        readings.push(json["host"].to_string());
    }
    panic!(
        "the host reference read each of three pairs of idle runs apart, so this machine gave \
         no pair to judge an A/A on: {readings:?}"
    );
}

pub fn compare_catches_a_fourfold_slowdown_and_stays_quiet_between_two_normal_runs() {
    let root = tempfile::tempdir().unwrap();
    let at = |name: &str| root.path().join(name);
    // 16 points (five strategies at 1, 8 and 100 columns, per-row at 8), six sessions of three
    // repeats after the smoke profile's warm-up probes.
    let shape = [
        "--only",
        "columns=1|8|100",
        "--repeats",
        "3",
        "--sessions",
        "6",
    ];
    // The A/A: a second run on the same idle machine, seconds later, judged on the default gate,
    // each run's own ratios, where the run's moment cancels, with the variance between runs of
    // a replicate set of three more runs of this design (`--replicates`): the false discovery
    // rate's share, one point, may be called changed, and no more. Without that variance the
    // runs' sessions are all the A/A would see, and bare SQLite's own ratios also move from one
    // process to the next: over ten such runs (2026-12-07), 2 of 9 neighbouring pairs called an
    // own ratio changed (strategy ÷ bound at 8 columns moved 2.6% between runs); with a set of
    // three others, none did. The set did not remove the risk: twice in CI one strategy moved
    // 5-10% between a and a2 in all six sessions while the set's runs agreed. That was the
    // heap's layout, fixed per process by the command line, environment and seed; each session
    // now draws its own (`targets/sqlite/heap_offset.rs`), so a layout that slows a strategy
    // shows between sessions, which the intervals count, and not between runs. Blocks past
    // glibc's mmap threshold lay outside that heap, and once more a whole run was slow (json at
    // one column, 2.07×, at 2d45614): glibc's thresholds are now fixed
    // (`targets/sqlite/malloc_thresholds.rs`, docs/runs/heap-layout-aa/). And the machine must
    // hold still: in CI at 64b3ae0 the host reference read a2's host 1.28 (1.04-1.57) times
    // a's, and four strategies' ratios to bound at one column (probes of about 1 ms, where a
    // lost time slice weighs most) moved 14-19%. So the pair is made again when the reference
    // reads the two apart ([`quiet_pair`]); the A/A is judged only on a pair it reads alike.
    let (a, a2) = quiet_pair(&at, &shape);
    let set = at("set");
    std::fs::create_dir(&set).unwrap();
    for seed in ["4", "5", "6"] {
        let out = at(&format!("set-{seed}"));
        let run = sqlite_run(&out, &[&shape[..], &["--seed", seed]].concat());
        std::fs::rename(&run, set.join(run.file_name().unwrap())).unwrap();
    }
    // A third run with two busy threads per core beside it, as a build beside a run has it. A
    // shared machine is not a uniformly slower one (a preempted probe loses a whole time slice, a
    // larger share of a short probe than of a long one or of the host reference), so this run
    // checks what the design guarantees under contention: the host reference sees it, with an
    // interval above 1. Its quiet side is run `a`, made a minute earlier, and the machine's own
    // drift between the two is part of what the reference reads: with two busy threads on two
    // cores the reference read 1.34 (1.03-1.75) and 1.56 (1.26-1.93) here (2026-12-08), so a
    // neighbour that slowed run `a` by a third hid the load (CI at 06b3100 read 1.06 (0.89-1.27),
    // the busy run's probes 0.66 of run a's). With four it read 2.51 (2.29-2.76), 2.52
    // (2.40-2.65) and 2.58 (2.34-2.84).
    let busy = {
        let _busy = Busy::start();
        sqlite_run(&at("busy"), &[&shape[..], &["--seed", "3"]].concat())
    };
    let slow = sqlite_run(
        &at("slow"),
        &[&shape[..], &["--seed", "2", "--debug-slow", "300"]].concat(),
    );
    assert_eq!(
        run_toml(&slow)["run"]["debug_slow_percent"].as_integer(),
        Some(300)
    );
    let aa = at("aa");
    let (code, out) = compare(
        &a,
        &a2,
        &[
            "--no-calibration",
            "--replicates",
            set.to_str().unwrap(),
            "--out",
            aa.to_str().unwrap(),
        ],
    );
    let (verdicts, _, _) = verdicts_in(&aa);
    assert_eq!(verdicts.len(), 16, "{out}");
    assert!(ratio_changes_in(&aa) <= 1, "A/A: own ratios changed\n{out}");
    // The exit status follows that one allowed call: 1 when it is an own ratio called slower
    // (the ratio gate fails it), 0 otherwise. In CI at 305b249 json ÷ bound at 100 columns read
    // 5.45 -> 5.95, the one call, with the hosts alike (0.99, 0.99-1.00), and exit 1.
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(aa.join("compare.json")).unwrap()).unwrap();
    let ratio_slower = json["points"].as_array().unwrap().iter().any(|p| {
        ["vs_bound", "vs_baseline"]
            .iter()
            .any(|k| p["relative"][k]["verdict"] == "slower")
    });
    assert_eq!(code, i32::from(ratio_slower), "{out}");
    assert!(
        out.contains("the variance between runs of the replicate set")
            && out.contains("(3 runs of this design"),
        "{out}"
    );
    // A set with one run besides the two compared gives no variance between runs: refused.
    let thin = at("thin");
    std::fs::create_dir(&thin).unwrap();
    std::fs::rename(&a2, thin.join(a2.file_name().unwrap())).unwrap();
    let one = std::fs::read_dir(&set)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    std::fs::rename(&one, thin.join(one.file_name().unwrap())).unwrap();
    let a2 = thin.join(a2.file_name().unwrap());
    let (thin_code, said) = compare(&a, &a2, &["--replicates", thin.to_str().unwrap()]);
    assert_eq!(thin_code, 2, "{said}");
    assert!(
        said.contains("1 run(s) besides the two compared; a variance between runs needs two"),
        "{said}"
    );
    assert!(out.contains("**Over sessions** (16 points)"), "{out}");
    assert!(
        out.contains("**Exit status** judged each run's own ratios"),
        "{out}"
    );
    // The times are not asserted between two runs: with no replicate set's between-run variance
    // (`--no-calibration`), the time gate judges each run's moment as the code. Measured here
    // (2026-12-06, idle machine, runs 8 s apart, this test's shape): the second run took 1.14 to
    // 1.46 times as long at all 16 points, while the host reference read 1.01 (0.87-1.18); the
    // own ratios called nothing changed.
    // The busy host is reported slower, with its interval: the reference sees the contention.
    let ab = at("ab");
    let (_, out) = compare(
        &a,
        &busy,
        &["--no-calibration", "--out", ab.to_str().unwrap()],
    );
    assert!(
        out.contains("b's host took") && out.contains("slower, beyond the reference's own noise"),
        "{out}"
    );
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(ab.join("compare.json")).unwrap()).unwrap();
    let host = &json["host"];
    assert_eq!(host["verdict"], "slower", "{out}");
    assert!(host["low"].as_f64().unwrap() > 1.0, "{host}");
    // Every probe's window stretched fourfold (the sqlite target spins to its deadline, so the
    // stretch is what was asked), every strategy alike: the ratio gate cannot tell that from a
    // slower machine, so `--gate time` judges it. This smoke profile's noise floors between
    // sessions were 1.4 to 3.7 when it ran beside the other end-to-end tests, so a 20% stretch is not
    // resolvable here end to end (the unit tests in `studies::sweep::report::compare` show
    // compare catching 20% at realistic noise); half the points must be caught, and nothing may
    // be called faster.
    let cmp = at("slow-cmp");
    let (code, out) = compare(
        &a,
        &slow,
        &[
            "--no-calibration",
            "--gate",
            "time",
            "--out",
            cmp.to_str().unwrap(),
        ],
    );
    let (_, slower, faster) = verdicts_in(&cmp);
    assert_eq!(code, 1, "{out}");
    assert!(
        slower >= 8 && faster == 0,
        "--debug-slow 300: {slower} of 16 slower\n{out}"
    );
    assert!(
        out.contains("got slower or no longer succeed (gate: time): exit status 1"),
        "{out}"
    );
}

pub fn calibrate_runs_an_experiment_in_sessions_and_compare_takes_its_noise_floors() {
    let root = tempfile::tempdir().unwrap();
    let out = root.path().join("calibrated");
    let output = xtask(&[
        "calibrate",
        "column-sweep",
        "--target",
        "sqlite",
        "--sessions",
        "4",
        "--out",
    ])
    .arg(&out)
    .output()
    .unwrap();
    let said = text(&output);
    assert!(output.status.success(), "{said}");
    let dir = run_dir(&out);
    assert_eq!(run_toml(&dir)["run"]["sessions"].as_integer(), Some(4));
    assert!(said.contains("**False-alarm rate: "), "{said}");
    assert!(
        said.contains("its 4 sessions split into two interleaved halves of 2"),
        "{said}"
    );
    let rows = read_csv(&dir.join("calibration.csv"));
    assert_eq!(rows.len(), 26);
    assert!(rows.iter().all(|r| r["splits_judged"] == "2"), "{rows:?}");
    assert!(dir.join("calibration.md").is_file());
    // Again from the run, and compare at its floors.
    let again = xtask(&["calibrate", "--from"]).arg(&dir).output().unwrap();
    assert!(again.status.success(), "{}", text(&again));
    let calibration = dir.join("calibration.csv");
    let (code, said) = compare(
        &dir,
        &dir,
        &["--calibration", calibration.to_str().unwrap()],
    );
    assert_eq!(code, 0, "{said}");
    assert!(
        said.contains("each point's noise floor as calibrated in"),
        "{said}"
    );
    // What calibrate refuses, exit 1 with the reason (or clap's 2).
    let smoke = sqlite_run(&root.path().join("smoke"), &[]);
    for (args, code, want) in [
        (
            vec!["calibrate", "--from", smoke.to_str().unwrap()],
            1,
            "the run has 2 session(s): calibrate needs 4 or more",
        ),
        (
            vec![
                "calibrate",
                "column-sweep",
                "--target",
                "sqlite",
                "--sessions",
                "5",
            ],
            1,
            "--sessions 5: an even number from 4",
        ),
        (
            vec!["calibrate", "columns", "--target", "sqlite"],
            1,
            "is a ladder study: calibrate applies to sweeps",
        ),
        (
            vec!["calibrate", "column-sweep", "--from", "x"],
            2,
            "cannot be used with",
        ),
    ] {
        let output = xtask(&args).output().unwrap();
        let said = text(&output);
        assert_eq!(output.status.code(), Some(code), "{args:?}: {said}");
        assert!(said.contains(want), "{args:?}: {said}");
    }
}

/// A copy of the run in `from` at `to`, every outside time multiplied by `factor` (only the
/// strategy `only`'s, when given).
fn slowed_copy(from: &Path, to: &Path, factor: f64, only: Option<&str>) -> PathBuf {
    std::fs::create_dir_all(to).unwrap();
    std::fs::copy(from.join("run.toml"), to.join("run.toml")).unwrap();
    let mut reader = csv::Reader::from_path(from.join("results.csv")).unwrap();
    let headers = reader.headers().unwrap().clone();
    let column = headers.iter().position(|h| h == "outside_ms").unwrap();
    let strategy = headers.iter().position(|h| h == "strategy").unwrap();
    let mut writer = csv::Writer::from_path(to.join("results.csv")).unwrap();
    writer.write_record(&headers).unwrap();
    for record in reader.records() {
        let record = record.unwrap();
        let slowed = only.is_none_or(|s| &record[strategy] == s);
        let fields: Vec<String> = record
            .iter()
            .enumerate()
            .map(|(i, f)| match (i == column, f.parse::<f64>()) {
                (true, Ok(ms)) if slowed => (ms * factor).to_string(),
                _ => f.to_owned(),
            })
            .collect();
        writer.write_record(&fields).unwrap();
    }
    writer.flush().unwrap();
    to.to_owned()
}

pub fn compare_exits_0_1_2_as_diff_does_and_export_writes_bmf() {
    let root = tempfile::tempdir().unwrap();
    let at = |name: &str| root.path().join(name);
    let a = sqlite_run(
        &at("a"),
        &["--repeats", "3", "--sessions", "4", "--only", "columns=1|8"],
    );
    let cmp = at("cmp");
    let out = ["--out", cmp.to_str().unwrap()];
    // 0: a run against itself.
    let (code, said) = compare(&a, &a, &out);
    assert_eq!(code, 0, "{said}");
    // 1: against itself with literal made 100 times slower (twice was not always enough: two
    // sessions of sub-millisecond probes on a loaded machine can differ by more than that): its
    // ratio to bound moved, which no machine does.
    let literal = slowed_copy(&a, &at("literal"), 100.0, Some("literal"));
    let (code, said) = compare(&a, &literal, &out);
    assert_eq!(code, 1, "{said}");
    let (code, said) = compare(&literal, &a, &out);
    assert_eq!(code, 0, "faster is no regression: {said}");
    // Everything 100 times slower is what a slower machine does: the default gate, on the own
    // ratios, passes it and says so; `--gate time` fails it.
    let slow = slowed_copy(&a, &at("slow"), 100.0, None);
    let (code, said) = compare(&a, &slow, &out);
    assert_eq!(code, 0, "{said}");
    assert!(
        said.contains("slower in time while their own ratios held"),
        "{said}"
    );
    let (code, said) = compare(&a, &slow, &[&out[..], &["--gate", "time"]].concat());
    assert_eq!(code, 1, "{said}");
    // 2: trouble, each with its reason.
    let ladder = at("ladder");
    std::fs::create_dir_all(&ladder).unwrap();
    let toml = std::fs::read_to_string(a.join("run.toml")).unwrap();
    std::fs::write(
        ladder.join("run.toml"),
        toml.replace("kind = \"sweep\"", "kind = \"ladder\""),
    )
    .unwrap();
    let missing = at("missing");
    for (b, args, want) in [
        (&missing, &[][..], "run b: "),
        (&ladder, &[], "is a ladder run"),
        (
            &a,
            &["--threshold", "abc"],
            "invalid value 'abc' for '--threshold <PERCENT>'",
        ),
        (
            &a,
            &["--threshold", "100"],
            "--threshold 100: a percentage from 0",
        ),
        (
            &a,
            &["--calibration", "/nonexistent/calibration.csv"],
            "cannot read the calibration",
        ),
        (&a, &["--frobnicate"], "unexpected argument '--frobnicate'"),
        (
            &a,
            &["--gate", "speed"],
            "invalid value 'speed' for '--gate <GATE>'",
        ),
    ] {
        let (code, said) = compare(&a, b, args);
        assert_eq!(code, 2, "{args:?}: {said}");
        assert!(said.contains(want), "{args:?}: {want} not in {said}");
    }
    let help = xtask(&["compare", "--help"]).output().unwrap();
    assert!(help.status.success());
    assert!(
        text(&help).contains("Exit status, as diff has it: 0"),
        "{}",
        text(&help)
    );
    // export: the run as BMF on stdout, every point with its interval over four sessions.
    let output = xtask(&["export"])
        .arg(&a)
        .args(["--format", "bmf"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output));
    let bmf: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let mut benchmarks = bmf.as_object().unwrap().clone();
    // The host's speed as a benchmark of its own, with its interval over the run's readings.
    let host = benchmarks
        .remove("column-sweep/host/reference")
        .unwrap_or_else(|| panic!("no host/reference in {bmf}"));
    let r = &host["reference-ms"];
    assert!(
        r["lower_value"].as_f64().unwrap() <= r["value"].as_f64().unwrap()
            && r["value"].as_f64().unwrap() <= r["upper_value"].as_f64().unwrap(),
        "{host}"
    );
    // Five strategies at 1 and 8 columns, per-row at 8.
    assert_eq!(benchmarks.len(), 11, "{bmf}");
    for (name, measures) in &benchmarks {
        let m = &measures["ms-per-1000-rows"];
        let (low, value, high) = (
            m["lower_value"].as_f64().unwrap(),
            m["value"].as_f64().unwrap(),
            m["upper_value"].as_f64().unwrap(),
        );
        assert!(low <= value && value <= high, "{name}: {m}");
    }
    let output = xtask(&["export"])
        .arg(&a)
        .args(["--format", "csv"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", text(&output));
}
