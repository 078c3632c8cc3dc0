//! Faults, for real, under a local run of the column sweep's smoke profile (its probes counted
//! from its own plan, each after a warm-up, on wrangler dev): the Worker's runtime killed (workerd, which wrangler
//! restarts), both workerd processes killed (the proxy in front does not forward again), the
//! xtask itself killed with -9 (with and without its watchdogs), and wrangler dev killed
//! whole. Each test waits until probes are being measured, injects the fault, and checks how
//! the run ended, after what, what it kept on disk, and that nothing it started still runs.
//!
//! Each starts its own wrangler dev (on a port of its own) and so may run beside the other
//! end-to-end tests, except the one that kills the xtask with -9: the next run is the one that
//! finds it dead, so no other run may start meanwhile (see `main.rs`). Whatever a test started is
//! killed when it ends, passing or not ([`Run`]'s drop).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use crate::harness::Trial;

use crate::support::{
    Proc, Row, XTASK, kill, live_members, processes, project_root, read_csv, run_toml, status_of,
    wait_until,
};

/// The tests that may run beside the others, longest first (the one with -9 runs alone, from
/// `main.rs`).
pub fn tests() -> Vec<Trial> {
    tests!(faults:
        both_workerd_killed_mid_run_fail_the_run_after_the_recovery_wait_not_later,
        the_workers_runtime_killed_mid_run_costs_one_probe_and_the_run_completes,
        wrangler_killed_whole_fails_the_run_at_once_and_keeps_what_was_measured,
    )
}

/// The run every fault is injected into: seconds long, probes of tens of milliseconds. One
/// session: the faults hit the target the run is measuring, and the time bounds below are about
/// how long the run takes to go on or give up after one, not about starting another session
/// (resuming across sessions is tested in `pipeline::resume`).
const SMOKE: &[&str] = &[
    "column-sweep",
    "--profile",
    "smoke",
    "--no-baseline",
    "--sessions",
    "1",
];

/// The measured probes and warm-ups (not recorded) of [`SMOKE`], from its own plan as
/// `--dry-run` prints it (`52 probes (26 measured, 26 warm-ups) at ...`): the experiment file
/// decides them, not this test.
fn smoke_plan() -> (usize, usize) {
    let out = Command::new(XTASK)
        .arg("run")
        .args(SMOKE)
        .arg("--dry-run")
        .output()
        .expect("run xtask --dry-run");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    let counts = text.lines().find_map(|line| {
        let inner = line.split_once(" probes (")?.1.split_once(')')?.0;
        let (measured, warmups) = inner.split_once(" measured, ")?;
        Some((
            measured.parse().ok()?,
            warmups.strip_suffix(" warm-ups")?.parse().ok()?,
        ))
    });
    counts.unwrap_or_else(|| panic!("no probe counts in the dry run's output:\n{text}"))
}

/// Rows in results.csv before a fault is injected: the run is measuring.
const ROWS_BEFORE_FAULT: usize = 2;

/// How long a run may take to build, start wrangler and measure its first rows.
const STARTUP: Duration = Duration::from_secs(120);

/// wrangler dev as a run started it.
#[derive(Debug)]
struct Wrangler {
    pgid: i32,
    port: u16,
}

impl Wrangler {
    /// The workerd processes in wrangler's group: the one serving wrangler's port (the proxy
    /// wrangler puts in front of the Worker) and the one running the Worker.
    fn workerd(&self) -> (Proc, Proc) {
        let entry = format!("--socket-addr=entry=127.0.0.1:{}", self.port);
        let workerd: Vec<Proc> = live_members(self.pgid)
            .into_iter()
            .filter(|p| p.args.first().is_some_and(|a| a.ends_with("/workerd")))
            .collect();
        let (proxy, runtime): (Vec<Proc>, Vec<Proc>) = workerd
            .iter()
            .cloned()
            .partition(|p| p.args.contains(&entry));
        assert!(
            proxy.len() == 1 && runtime.len() == 1,
            "expected two workerd in wrangler's group, one serving port {}: {workerd:#?}",
            self.port
        );
        (proxy[0].clone(), runtime[0].clone())
    }

    fn log(&self) -> String {
        let log = project_root()
            .join("target/d1bench/local")
            .join(self.port.to_string())
            .join("wrangler.log");
        std::fs::read_to_string(log).unwrap_or_default()
    }

    fn assert_gone(&self, within: Duration) {
        assert!(
            wait_until(within, || live_members(self.pgid).is_empty()),
            "wrangler's group {} still runs {within:?} on: {:#?}",
            self.pgid,
            live_members(self.pgid)
        );
    }
}

/// `cargo xtask run` in the background; when dropped it is killed with -9, and so is every
/// group the test saw it start, so a failing assertion leaves nothing running.
struct Run {
    xtask: Child,
    out: tempfile::TempDir,
    logs: tempfile::TempDir,
    started: Instant,
    /// wrangler's group and the watchdogs', once seen.
    groups: Vec<i32>,
}

impl Run {
    fn start(args: &[&str]) -> Run {
        let out = tempfile::tempdir().unwrap();
        let logs = tempfile::tempdir().unwrap();
        let log = |name: &str| std::fs::File::create(logs.path().join(name)).unwrap();
        let xtask = Command::new(XTASK)
            .arg("run")
            .args(args)
            .arg("--out")
            .arg(out.path())
            .current_dir(project_root())
            .stdin(Stdio::null())
            .stdout(log("stdout"))
            .stderr(log("stderr"))
            .spawn()
            .unwrap();
        Run {
            xtask,
            out,
            logs,
            started: Instant::now(),
            groups: Vec::new(),
        }
    }

    fn pid(&self) -> i32 {
        self.xtask.id() as i32
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(self.logs.path().join("stderr")).unwrap()
    }

    fn stdout(&self) -> String {
        std::fs::read_to_string(self.logs.path().join("stdout")).unwrap()
    }

    /// The run directory, once the run created it.
    fn dir(&self) -> Option<PathBuf> {
        let dirs: Vec<PathBuf> = std::fs::read_dir(self.out.path())
            .ok()?
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_dir())
            .collect();
        assert!(dirs.len() <= 1, "more than one run directory: {dirs:?}");
        dirs.into_iter().next()
    }

    /// Rows in results.csv so far, counting only whole lines: the run may be writing one.
    fn rows_written(&self) -> usize {
        let text = self
            .dir()
            .and_then(|d| std::fs::read_to_string(d.join("results.csv")).ok())
            .unwrap_or_default();
        // The header is a line too; error texts in rows are kept to one line.
        text.matches('\n').count().saturating_sub(1)
    }

    /// Waits until results.csv holds `rows` rows; panics if the run ends first.
    fn wait_for_rows(&mut self, rows: usize) {
        let measuring = wait_until(STARTUP, || {
            if let Some(status) = self.xtask.try_wait().unwrap() {
                panic!(
                    "the run ended ({status}) before {rows} rows were measured:\n{}",
                    self.stderr()
                );
            }
            self.rows_written() >= rows
        });
        assert!(
            measuring,
            "no {rows} rows within {STARTUP:?}:\n{}",
            self.stderr()
        );
    }

    /// The run's wrangler dev, noted to be killed with the test; its watchdogs too.
    fn wrangler(&mut self) -> Wrangler {
        let children: Vec<Proc> = processes()
            .into_iter()
            .filter(|p| p.ppid == self.pid())
            .collect();
        let leaders: Vec<&Proc> = children
            .iter()
            .filter(|p| p.args.iter().any(|a| a.ends_with("wrangler.js")))
            .collect();
        assert_eq!(leaders.len(), 1, "one wrangler dev: {children:#?}");
        let leader = leaders[0];
        assert_eq!(leader.pgid, leader.pid, "wrangler leads a group of its own");
        let port = leader
            .args
            .iter()
            .skip_while(|a| *a != "--port")
            .nth(1)
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("no --port in {}", leader.command()));
        self.groups.push(leader.pgid);
        self.groups
            .extend(self.watchdogs().iter().map(|w| w.pgid).collect::<Vec<_>>());
        Wrangler {
            pgid: leader.pgid,
            port,
        }
    }

    /// The watchdogs of the groups the run started.
    fn watchdogs(&self) -> Vec<Proc> {
        processes()
            .into_iter()
            .filter(|p| p.ppid == self.pid() && p.args.iter().any(|a| a == "d1bench-watchdog"))
            .collect()
    }

    /// Waits for the run to end, at most `within`: its exit status.
    fn wait(&mut self, within: Duration) -> ExitStatus {
        let mut status = None;
        wait_until(within, || {
            status = self.xtask.try_wait().unwrap();
            status.is_some()
        });
        status.unwrap_or_else(|| {
            panic!(
                "the run still runs {within:?} on; it says:\n{}",
                self.stderr()
            )
        })
    }
}

impl Drop for Run {
    fn drop(&mut self) {
        let _ = self.xtask.kill();
        let _ = self.xtask.wait();
        for &pgid in &self.groups {
            kill(-pgid, libc::SIGKILL);
        }
    }
}

/// After a run ended: nothing it started runs `within` on (a watchdog orphaned by a killed
/// run gives its group up to 5 s after SIGTERM; a run that ends by itself dismisses it).
fn assert_nothing_left(run: &Run, within: Duration) {
    let left = || -> Vec<Proc> { run.groups.iter().flat_map(|&g| live_members(g)).collect() };
    assert!(
        wait_until(within, || left().is_empty()),
        "outlived the run by {within:?}: {:#?}",
        left()
    );
}

/// The rows the target answered reconciled; the ones it did not are marked as its failures.
fn target_failures_apart(rows: &[Row]) -> Vec<&Row> {
    let (failed, answered): (Vec<&Row>, Vec<&Row>) =
        rows.iter().partition(|r| r["target_failed"] == "true");
    for row in answered {
        assert_eq!(row["reconciled"], "true", "{row:?}");
        assert_eq!(row["checksum_equal"], "true", "{row:?}");
    }
    for row in &failed {
        assert_eq!(row["outcome"], "error", "{row:?}");
        assert_eq!(row["reconciled"], "false", "{row:?}");
        assert_eq!(
            row["reconcile_note"], "the target gave no answer: nothing to reconcile",
            "{row:?}"
        );
        assert_ne!(row["error"], "", "{row:?}");
    }
    failed
}

/// wrangler restarts the Worker's runtime within a second or two; the probe in flight is lost
/// (recorded as the target's failure) and every other probe of the smoke profile reconciles.
pub fn the_workers_runtime_killed_mid_run_costs_one_probe_and_the_run_completes() {
    let mut run = Run::start(SMOKE);
    run.wait_for_rows(ROWS_BEFORE_FAULT);
    let wrangler = run.wrangler();
    let (_, runtime) = wrangler.workerd();
    let killed_at = Instant::now();
    kill(runtime.pid, libc::SIGKILL);

    let status = run.wait(Duration::from_secs(120));
    let after_kill = killed_at.elapsed();
    eprintln!(
        "runtime killed {:.1?} into the run; the run ended {after_kill:.1?} after",
        killed_at - run.started
    );
    assert!(status.success(), "{status}:\n{}", run.stderr());
    // Not a time-out: the probe in flight failed because its runtime went away (not because its
    // request ran out of time), and the run went on after wrangler restarted the runtime (the
    // success above: a recovery wait that ran out fails the run).
    let lost = run
        .stderr()
        .lines()
        .filter(|l| l.contains("warning: the target gave no answer for probe "))
        .map(str::to_owned)
        .collect::<Vec<_>>();
    assert!(
        lost.iter().all(|l| !l.contains("timeout")),
        "the lost probe timed out: {lost:#?}"
    );
    assert!(
        wrangler
            .log()
            .contains("The Workers runtime crashed unexpectedly and is being restarted"),
        "the kill did not reach wrangler's runtime:\n{}",
        wrangler.log()
    );
    let dir = run.dir().unwrap();
    let rows = crate::support::measured(read_csv(&dir.join("results.csv")));
    let (measured, warmups) = smoke_plan();
    assert_eq!(rows.len(), measured, "every probe is recorded, lost or not");
    let failed = target_failures_apart(&rows);
    let record = run_toml(&dir);
    assert_eq!(status_of(&record), "complete", "{record:#?}");
    let totals = &record["reconciliation"];
    assert_eq!(
        totals["target_failures"].as_integer(),
        Some(failed.len() as i64)
    );
    // Exactly the probe in flight is lost: in results.csv, or a warm-up (not recorded).
    let lost_warmups = totals["warmups_target_failed"].as_integer().unwrap();
    assert_eq!(
        failed.len() as i64 + lost_warmups,
        1,
        "{failed:#?} and {lost_warmups} warm-ups"
    );
    assert_eq!(totals["warmups"].as_integer(), Some(warmups as i64));
    assert_eq!(
        totals["warmups_reconciled"].as_integer(),
        Some(warmups as i64)
    );
    let stderr = run.stderr();
    assert_eq!(
        stderr
            .matches("warning: the target gave no answer for probe ")
            .count(),
        1,
        "{stderr}"
    );
    assert!(
        run.stdout().contains("lost to target failures"),
        "{}",
        run.stdout()
    );
    assert_nothing_left(&run, Duration::ZERO);
}

/// About 70 s, most of it the run's 60 s wait for the target to answer again.
pub fn both_workerd_killed_mid_run_fail_the_run_after_the_recovery_wait_not_later() {
    let mut run = Run::start(SMOKE);
    run.wait_for_rows(ROWS_BEFORE_FAULT);
    let wrangler = run.wrangler();
    let (proxy, runtime) = wrangler.workerd();
    let killed_at = Instant::now();
    kill(proxy.pid, libc::SIGKILL);
    kill(runtime.pid, libc::SIGKILL);
    let rows_at_kill = run.rows_written();

    // wrangler restarts both, but its restarted proxy takes connections and never forwards
    // one: the run waits 60 s for /health (10 s per request), then gives up.
    let status = run.wait(Duration::from_secs(120));
    let after_kill = killed_at.elapsed();
    eprintln!(
        "both workerd killed {:.1?} into the run; the run ended {after_kill:.1?} after",
        killed_at - run.started
    );
    assert_eq!(status.code(), Some(1), "{status}:\n{}", run.stderr());
    // It waited out the 60 s recovery wait (and gave up then: the error below is that wait's).
    assert!(after_kill >= Duration::from_secs(60), "{after_kill:?}");
    let dir = run.dir().unwrap();
    let record = run_toml(&dir);
    assert_eq!(status_of(&record), "failed", "{record:#?}");
    let error = record["run"]["error"].as_str().unwrap();
    for expected in [
        "the target stopped answering at probe ",
        "the target did not answer again within ",
        "GET http://127.0.0.1:",
        "wrangler dev still runs but does not answer",
        "The Workers runtime crashed unexpectedly and is being restarted",
        "everything measured before it is kept in ",
    ] {
        assert!(error.contains(expected), "no {expected:?} in: {error}");
    }
    assert!(run.stderr().contains(error.lines().next().unwrap()));
    let rows = read_csv(&dir.join("results.csv"));
    assert!(
        rows.len() >= rows_at_kill && rows.len() < smoke_plan().0,
        "{rows:#?}"
    );
    assert!(target_failures_apart(&rows).len() <= 1, "{rows:#?}");
    assert_nothing_left(&run, Duration::ZERO);
}

/// A few seconds: the run ends as soon as it sees wrangler exit (0.1 to 1.7 s after the kill,
/// measured).
pub fn wrangler_killed_whole_fails_the_run_at_once_and_keeps_what_was_measured() {
    let mut run = Run::start(SMOKE);
    run.wait_for_rows(ROWS_BEFORE_FAULT);
    let wrangler = run.wrangler();
    let killed_at = Instant::now();
    kill(-wrangler.pgid, libc::SIGKILL);
    let rows_at_kill = run.rows_written();

    let status = run.wait(Duration::from_secs(30));
    let after_kill = killed_at.elapsed();
    eprintln!(
        "wrangler killed {:.1?} into the run; the run ended {after_kill:.1?} after",
        killed_at - run.started
    );
    assert_eq!(status.code(), Some(1), "{status}:\n{}", run.stderr());
    let dir = run.dir().unwrap();
    let record = run_toml(&dir);
    assert_eq!(status_of(&record), "failed", "{record:#?}");
    let error = record["run"]["error"].as_str().unwrap();
    for expected in [
        "the target stopped answering at probe ",
        "wrangler dev exited (signal: 9 (SIGKILL)); its log (",
        "everything measured before it is kept in ",
    ] {
        assert!(error.contains(expected), "no {expected:?} in: {error}");
    }
    // At once: the run saw wrangler's exit, not a target that stopped answering and was waited
    // for (that failure says "did not answer again within").
    assert!(!error.contains("did not answer again"), "{error}");
    assert!(
        run.stderr()
            .contains("wrangler dev exited (signal: 9 (SIGKILL))"),
        "{}",
        run.stderr()
    );
    let rows = read_csv(&dir.join("results.csv"));
    assert!(
        rows.len() >= rows_at_kill && rows.len() < smoke_plan().0,
        "{rows:#?}"
    );
    assert!(target_failures_apart(&rows).len() <= 1, "{rows:#?}");
    assert_nothing_left(&run, Duration::ZERO);
}

/// `cargo xtask run` of the column sweep's smoke profile on SQLite: what it says on stderr.
fn next_run_on_sqlite() -> String {
    let out = tempfile::tempdir().unwrap();
    let output = Command::new(XTASK)
        .args([
            "run",
            "column-sweep",
            "--profile",
            "smoke",
            "--target",
            "sqlite",
        ])
        .arg("--out")
        .arg(out.path())
        .current_dir(project_root())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{}:\n{stderr}", output.status);
    stderr
}

/// The line the next run prints about a run it found dead, if any.
fn found_dead<'a>(stderr: &'a str, dir: &Path, pid: i32) -> &'a str {
    let start = format!("found run {} of process {pid} dead: ", dir.display());
    stderr
        .lines()
        .find(|l| l.starts_with(&start))
        .unwrap_or_else(|| panic!("no {start:?} in:\n{stderr}"))
}

fn assert_abandoned(dir: &Path, rows_at_kill: usize) {
    let record = run_toml(dir);
    assert_eq!(status_of(&record), "abandoned", "{record:#?}");
    assert!(record["run"].get("pid").is_none(), "{record:#?}");
    assert!(
        record["run"]["error"]
            .as_str()
            .unwrap()
            .contains("died without recording how the run ended"),
        "{record:#?}"
    );
    let rows = read_csv(&dir.join("results.csv"));
    assert!(rows.len() >= rows_at_kill, "{rows:#?}");
    assert!(target_failures_apart(&rows).is_empty(), "{rows:#?}");
}

/// About 15 s: two local runs up to the kill, two SQLite runs after.
pub fn a_run_killed_with_9_leaves_nothing_running_and_the_next_run_marks_it_abandoned() {
    // The xtask alone: its watchdog stops wrangler and workerd.
    let mut run = Run::start(SMOKE);
    run.wait_for_rows(ROWS_BEFORE_FAULT);
    let wrangler = run.wrangler();
    assert_eq!(run.watchdogs().len(), 1, "{:#?}", run.watchdogs());
    let killed_at = Instant::now();
    kill(run.pid(), libc::SIGKILL);
    run.wait(Duration::from_secs(5));
    let rows_at_kill = run.rows_written();
    wrangler.assert_gone(Duration::from_secs(15));
    eprintln!(
        "xtask killed: wrangler gone {:.1?} after",
        killed_at.elapsed()
    );
    let dir = run.dir().unwrap();
    assert_eq!(status_of(&run_toml(&dir)), "running");
    let said = next_run_on_sqlite();
    assert_eq!(
        found_dead(&said, &dir, run.pid()),
        format!(
            "found run {} of process {} dead: nothing it had started was still running; its \
             run.toml now says `abandoned`",
            dir.display(),
            run.pid()
        )
    );
    assert_abandoned(&dir, rows_at_kill);
    assert_nothing_left(&run, Duration::from_secs(6));
    drop(run);

    // The xtask and its watchdog (the whole tree killed): the next run stops wrangler.
    let mut run = Run::start(SMOKE);
    run.wait_for_rows(ROWS_BEFORE_FAULT);
    let wrangler = run.wrangler();
    let watchdogs = run.watchdogs();
    assert_eq!(watchdogs.len(), 1, "{watchdogs:#?}");
    // The watchdog first: it would stop wrangler the moment the xtask is gone.
    kill(watchdogs[0].pid, libc::SIGKILL);
    kill(run.pid(), libc::SIGKILL);
    run.wait(Duration::from_secs(5));
    let rows_at_kill = run.rows_written();
    assert!(
        !live_members(wrangler.pgid).is_empty(),
        "wrangler stopped without its watchdog"
    );
    let dir = run.dir().unwrap();
    let said = next_run_on_sqlite();
    assert!(
        found_dead(&said, &dir, run.pid()).ends_with(
            ": stopped 1 process group(s) it had left running; its run.toml now says `abandoned`"
        ),
        "{said}"
    );
    // The next run stopped it (SIGKILL is delivered at once; the zombies are not counted).
    wrangler.assert_gone(Duration::from_secs(2));
    assert_abandoned(&dir, rows_at_kill);
    assert_nothing_left(&run, Duration::ZERO);
}
