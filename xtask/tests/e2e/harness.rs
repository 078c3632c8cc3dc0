//! A small test harness: cargo's test command line (name filters, `--exact`, `--skip`,
//! `--list`, `--test-threads`) and its `test result:` line, running first, one by one, the tests
//! that must run alone, then the others in the order given, [`THREADS`] at once unless told
//! otherwise.
//!
//! Hand-written rather than a crate such as libtest-mimic: a dev-dependency enters Cargo.lock,
//! which is one of the inputs whose hash `worker/build-manifest.toml` records, so adding one
//! would mean rebuilding the committed Worker (see `xtask/src/worker_build.rs`).

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Tests at once unless `--test-threads` (or `RUST_TEST_THREADS`) says otherwise: cargo's
/// harness would run as many as there are cores (two on the machines this runs on), but the runs
/// of these tests mostly wait on wrangler dev and on their schedules. Measured on 2 cores shared
/// with other work: the 30 tests took 208 s 4 at once and 162 s 6 at once (588 s as four
/// binaries of one-at-a-time tests).
pub const THREADS: usize = 6;

/// One test: its name (`module::function`), whether it must run with no other test running,
/// and what runs it (a panic fails it).
pub struct Trial {
    pub name: &'static str,
    pub alone: bool,
    pub run: Box<dyn FnOnce() + Send>,
}

/// What the command line asks for.
struct Args {
    filters: Vec<String>,
    skip: Vec<String>,
    exact: bool,
    list: bool,
    ignored_only: bool,
    threads: usize,
}

fn parse(mut args: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut parsed =
        Args {
            filters: Vec::new(),
            skip: Vec::new(),
            exact: false,
            list: false,
            ignored_only: false,
            // As cargo's harness, RUST_TEST_THREADS unless the command line says otherwise.
            threads: match std::env::var("RUST_TEST_THREADS") {
                Ok(n) => n.parse().ok().filter(|&n| n > 0).ok_or_else(|| {
                    format!("RUST_TEST_THREADS must be a positive count, not `{n}`")
                })?,
                Err(_) => THREADS,
            },
        };
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => (flag.to_owned(), Some(value.into())),
            _ => (arg.clone(), None),
        };
        let mut value = |name: &str| {
            inline
                .clone()
                .or_else(|| args.next())
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match flag.as_str() {
            "--exact" => parsed.exact = true,
            "--list" => parsed.list = true,
            "--ignored" => parsed.ignored_only = true,
            "--skip" => parsed.skip.push(value("--skip")?),
            "--test-threads" => {
                let n = value("--test-threads")?;
                parsed.threads =
                    n.parse().ok().filter(|&n| n > 0).ok_or_else(|| {
                        format!("--test-threads must be a positive count, not `{n}`")
                    })?;
            }
            // Accepted as cargo's harness accepts them; nothing here captures or colours output.
            "--include-ignored" | "--nocapture" | "--show-output" | "-q" | "--quiet" => {}
            "--color" | "--format" => {
                value(&flag)?;
            }
            other if other.starts_with('-') => {
                return Err(format!("unknown option `{other}`"));
            }
            _ => parsed.filters.push(arg),
        }
    }
    Ok(parsed)
}

impl Args {
    fn selects(&self, name: &str) -> bool {
        let matches = |pattern: &String| {
            if self.exact {
                name == pattern
            } else {
                name.contains(pattern.as_str())
            }
        };
        !self.ignored_only
            && (self.filters.is_empty() || self.filters.iter().any(matches))
            && !self.skip.iter().any(matches)
    }
}

/// Runs the trials the command line selects and exits: 0 when all passed, 101 (as cargo's
/// harness) when one failed, 2 for a bad command line.
pub fn run(trials: Vec<Trial>) -> ! {
    let args = match parse(std::env::args().skip(1)) {
        Ok(args) => args,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    let total = trials.len();
    let selected: VecDeque<Trial> = trials
        .into_iter()
        .filter(|t| args.selects(t.name))
        .collect();
    let filtered_out = total - selected.len();
    if args.list {
        for trial in &selected {
            println!("{}: test", trial.name);
        }
        std::process::exit(0);
    }
    println!(
        "\nrunning {} tests ({} at once)",
        selected.len(),
        args.threads
    );
    let started = Instant::now();
    let (alone, beside): (VecDeque<Trial>, VecDeque<Trial>) =
        selected.into_iter().partition(|t| t.alone);
    let results = Mutex::new(Results::default());
    for trial in alone {
        run_one(trial, &results);
    }
    let queue = Mutex::new(beside);
    std::thread::scope(|scope| {
        for _ in 0..args.threads {
            scope.spawn(|| {
                loop {
                    // Its own statement, so the queue is unlocked while the test runs.
                    let Some(trial) = queue.lock().unwrap().pop_front() else {
                        return;
                    };
                    run_one(trial, &results);
                }
            });
        }
    });
    let Results { passed, failed } = results.into_inner().unwrap();
    if !failed.is_empty() {
        println!("\nfailures:");
        for name in &failed {
            println!("    {name}");
        }
    }
    println!(
        "\ntest result: {}. {passed} passed; {} failed; 0 ignored; 0 measured; {filtered_out} \
         filtered out; finished in {}\n",
        if failed.is_empty() { "ok" } else { "FAILED" },
        failed.len(),
        seconds(started.elapsed())
    );
    std::process::exit(if failed.is_empty() { 0 } else { 101 });
}

#[derive(Default)]
struct Results {
    passed: usize,
    failed: Vec<&'static str>,
}

/// Runs `trial` in a thread of its own, named for the test (its panic then names the test, and
/// the join tells whether it panicked), and says how it went.
fn run_one(trial: Trial, results: &Mutex<Results>) {
    let began = Instant::now();
    let outcome = std::thread::Builder::new()
        .name(trial.name.to_owned())
        .spawn(trial.run)
        .expect("cannot start a test thread")
        .join();
    let took = seconds(began.elapsed());
    let mut results = results.lock().unwrap();
    match outcome {
        Ok(()) => {
            println!("test {} ... ok ({took})", trial.name);
            results.passed += 1;
        }
        Err(_) => {
            println!("test {} ... FAILED ({took})", trial.name);
            results.failed.push(trial.name);
        }
    }
}

fn seconds(d: Duration) -> String {
    format!("{:.2}s", d.as_secs_f64())
}
