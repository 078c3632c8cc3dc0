//! Processes d1bench starts (wrangler and its workerd children): each runs in a process group
//! of its own and the whole group is stopped on every exit path: drop (success, error, panic
//! unwinding) and Ctrl-C or SIGTERM (the interrupt handler).
//!
//! Work that must still happen after an interrupt (deleting what a remote run created on
//! Cloudflare) registers with [`on_interrupt`]: the handler runs it after stopping the groups,
//! and its own processes are started with [`ProcessGroup::spawn_shielded`] so no stop reaches them.
//!
//! A run killed outright (`kill -9`) runs none of that. So every group has a watchdog
//! ([`Watchdog`]): a small `sh` that stops the group once this process is gone, however it died.
//! And a run registers itself in `target/d1bench/live/<pid>.toml` ([`register_run`]) with every
//! group it starts, and the next run ([`reap_abandoned`]) stops the groups of runs whose process
//! is gone (if their watchdog was killed too) and has the caller mark their run.toml `abandoned`.

use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

/// Process groups still running, for the interrupt handler.
static LIVE_GROUPS: Mutex<Vec<i32>> = Mutex::new(Vec::new());

/// How long a group gets to exit after SIGTERM before it is killed.
const GRACE: Duration = Duration::from_secs(5);

/// Set once Ctrl-C or SIGTERM arrived.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// How long the main thread gets to record how the run ended after an interrupt.
const WIND_DOWN: Duration = Duration::from_secs(10);

/// Whether the user interrupted the run; long loops check it between steps.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// On Ctrl-C or SIGTERM: stop every live group at once (a probe in flight then fails fast),
/// flag the interrupt so the main thread records it and exits with 130, and exit from here if
/// the main thread has not within [`WIND_DOWN`].
pub fn install_interrupt_handler() -> Result<()> {
    ctrlc::set_handler(|| {
        if INTERRUPTED.swap(true, Ordering::SeqCst) {
            return;
        }
        eprintln!(
            "\ninterrupted: stopping the processes d1bench started; results written so far are kept"
        );
        let groups = std::mem::take(&mut *LIVE_GROUPS.lock().unwrap_or_else(|e| e.into_inner()));
        for pgid in &groups {
            signal_group(*pgid, libc::SIGTERM);
        }
        let deadline = Instant::now() + GRACE;
        while groups.iter().any(|&g| group_runs(g)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        for pgid in groups {
            signal_group(pgid, libc::SIGKILL);
        }
        CLEANUPS.run_all();
        std::thread::sleep(WIND_DOWN);
        std::process::exit(130);
    })
    .context("cannot install the Ctrl-C handler")
}

/// Something to do before the process exits on an interrupt.
pub type Cleanup = Arc<dyn Fn() + Send + Sync>;

/// A list of registered cleanups; the process has one, [`CLEANUPS`].
struct Cleanups {
    list: Mutex<Vec<(u64, Cleanup)>>,
    next: std::sync::atomic::AtomicU64,
}

/// The cleanups the interrupt handler runs.
static CLEANUPS: Cleanups = Cleanups::new();

impl Cleanups {
    const fn new() -> Self {
        Cleanups {
            list: Mutex::new(Vec::new()),
            next: std::sync::atomic::AtomicU64::new(1),
        }
    }

    fn register(&'static self, cleanup: Cleanup) -> CleanupRegistration {
        let id = self.next.fetch_add(1, Ordering::SeqCst);
        self.list
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((id, cleanup));
        CleanupRegistration { list: self, id }
    }

    /// Runs every registered cleanup, newest first. The list is copied first so a cleanup (or
    /// the main thread dropping its registration meanwhile) never waits on the list's lock.
    fn run_all(&self) {
        let cleanups: Vec<Cleanup> = self
            .list
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(|(_, cleanup)| Arc::clone(cleanup))
            .collect();
        for cleanup in cleanups.iter().rev() {
            cleanup();
        }
    }
}

/// Keeps a cleanup registered; dropping it unregisters the cleanup.
#[must_use = "the cleanup is unregistered when this is dropped"]
pub struct CleanupRegistration {
    list: &'static Cleanups,
    id: u64,
}

impl Drop for CleanupRegistration {
    fn drop(&mut self) {
        self.list
            .list
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|(id, _)| *id != self.id);
    }
}

/// Registers `cleanup` to run on Ctrl-C or SIGTERM, after the process groups are stopped and
/// before the process exits. It may run while the main thread is still working, so it must be
/// safe to run concurrently with (and more than once after) the main thread's own cleanup.
pub fn on_interrupt(cleanup: Cleanup) -> CleanupRegistration {
    CLEANUPS.register(cleanup)
}

fn signal_group(pgid: i32, signal: i32) {
    // SAFETY: kill(2) with a negative pid signals a process group; it has no memory effects.
    unsafe {
        libc::kill(-pgid, signal);
    }
}

/// Whether any process (other than zombies already reaped) is left in the group.
fn group_alive(pgid: i32) -> bool {
    // SAFETY: signal 0 only checks that the group exists and may be signalled.
    unsafe { libc::kill(-pgid, 0) == 0 }
}

/// Whether the group has a process that still runs: not a zombie, which only waits for its
/// parent (for a dead run's orphans, init) to collect its exit status.
fn group_runs(pgid: i32) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return group_alive(pgid);
    };
    entries.flatten().any(|entry| {
        std::fs::read_to_string(entry.path().join("stat")).is_ok_and(|stat| {
            // After the command's closing parenthesis: state, ppid, pgrp.
            let fields: Vec<&str> = stat
                .rsplit_once(')')
                .map_or("", |(_, rest)| rest)
                .split_whitespace()
                .take(3)
                .collect();
            fields.len() == 3 && fields[0] != "Z" && fields[2] == pgid.to_string()
        })
    })
}

/// A started process and everything it spawned; stopped when dropped.
pub struct ProcessGroup {
    child: Child,
    pgid: i32,
    name: String,
    stopped: bool,
    watchdog: Option<Watchdog>,
}

impl ProcessGroup {
    /// Starts `command` as the leader of a new process group, stopped by the interrupt handler,
    /// and by its watchdog if this process dies without stopping it.
    pub fn spawn(command: Command, name: &str) -> Result<Self> {
        let mut group = Self::spawn_shielded(command, name)?;
        LIVE_GROUPS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(group.pgid);
        LiveRun::note_group(group.pgid, true);
        group.watchdog = Watchdog::start(group.pgid)
            .map_err(|e| {
                eprintln!(
                    "warning: {name} has no watchdog ({e:#}): if this process is killed outright, \
                     it runs until the next run stops it"
                );
            })
            .ok();
        Ok(group)
    }

    /// Starts `command` as the leader of a new process group that the interrupt handler leaves
    /// alone (a terminal's Ctrl-C does not reach it either): for the cleanup an interrupt must
    /// not cut short. Dropping it still stops it.
    pub fn spawn_shielded(mut command: Command, name: &str) -> Result<Self> {
        use std::os::unix::process::CommandExt;
        command.process_group(0);
        let child = command
            .spawn()
            .with_context(|| format!("cannot start {name}"))?;
        let pgid = child.id() as i32;
        Ok(ProcessGroup {
            child,
            pgid,
            name: name.to_owned(),
            stopped: false,
            watchdog: None,
        })
    }

    /// The group's id: what its processes' CPU time is read by.
    pub fn pgid(&self) -> i32 {
        self.pgid
    }

    /// The leader's standard input, when it was started with `Stdio::piped()`.
    pub fn take_stdin(&mut self) -> Option<ChildStdin> {
        self.child.stdin.take()
    }

    /// The leader's exit status if it has exited.
    pub fn try_wait(&mut self) -> Result<Option<ExitStatus>> {
        self.child
            .try_wait()
            .with_context(|| format!("cannot check on {}", self.name))
    }

    /// SIGTERM to the group, SIGKILL after [`GRACE`]; reaps the leader. Idempotent.
    pub fn stop(&mut self) {
        if self.stopped {
            return;
        }
        self.stopped = true;
        signal_group(self.pgid, libc::SIGTERM);
        let deadline = Instant::now() + GRACE;
        loop {
            let leader_done = matches!(self.child.try_wait(), Ok(Some(_)) | Err(_));
            if leader_done && !group_runs(self.pgid) {
                break;
            }
            if Instant::now() >= deadline {
                signal_group(self.pgid, libc::SIGKILL);
                let _ = self.child.wait();
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        LIVE_GROUPS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|&g| g != self.pgid);
        LiveRun::note_group(self.pgid, false);
        if let Some(watchdog) = self.watchdog.take() {
            watchdog.dismiss();
        }
    }
}

/// Stops a process group once this process is gone, even killed outright (`kill -9`), which
/// runs no destructor and no handler: a `sh` in a process group of its own (no terminal
/// signal nor a kill of this process's group reaches it) reading a pipe that only this process
/// holds open. The kernel closes the pipe when this process dies, however it dies: `sh` reads
/// end-of-file and stops the group as [`ProcessGroup::stop`] would. A group stopped the
/// ordinary way dismisses its watchdog first, so a process group id reused later is never hit.
struct Watchdog {
    sh: Child,
    pipe: ChildStdin,
}

impl Watchdog {
    /// `$1` is the group; SIGTERM, SIGKILL after [`GRACE`] (5 s), as [`ProcessGroup::stop`].
    const SCRIPT: &str = r#"read -r word; [ "$word" = stopped ] && exit 0
kill -s TERM -- "-$1" 2>/dev/null || exit 0
i=0; while [ $i -lt 5 ] && kill -s 0 -- "-$1" 2>/dev/null; do sleep 1; i=$((i+1)); done
kill -s KILL -- "-$1" 2>/dev/null; exit 0"#;

    fn start(pgid: i32) -> Result<Watchdog> {
        use std::os::unix::process::CommandExt;
        use std::process::Stdio;
        let mut command = Command::new("sh");
        command
            .args(["-c", Self::SCRIPT, "d1bench-watchdog", &pgid.to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0);
        let mut sh = command.spawn().context("cannot start sh")?;
        let pipe = sh
            .stdin
            .take()
            .context("the watchdog's stdin is not a pipe")?;
        Ok(Watchdog { sh, pipe })
    }

    /// The group was stopped: the watchdog exits without a signal.
    fn dismiss(mut self) {
        use std::io::Write;
        // A watchdog that is already gone (killed with the rest) has nothing left to do.
        let _ = self.pipe.write_all(b"stopped\n");
        drop(self.pipe);
        let _ = self.sh.wait();
    }

    /// What this process dying does to the watchdog, while this process lives on (for the
    /// tests): the pipe closes. The watchdog's `sh`, to be waited for.
    #[cfg(test)]
    fn orphan(self) -> Child {
        drop(self.pipe);
        self.sh
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        self.stop();
    }
}

/// When a process started, in clock ticks since boot (field 22 of `/proc/<pid>/stat`): with
/// the pid, it names one process even after the pid is reused.
/// Whether process `pid` is running (a zombie, dead but not yet reaped, is not).
pub fn process_alive(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    let state = stat
        .rfind(')')
        .and_then(|end| stat[end + 1..].split_whitespace().next());
    !matches!(state, None | Some("Z" | "X"))
}

fn start_ticks(pid: i32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses: count from its closing one.
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(19)?.parse().ok()
}

/// A process group a run started, as the live file records it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct LiveGroup {
    pgid: i32,
    /// The leader's start time ([`start_ticks`]).
    start: u64,
}

/// `target/d1bench/live/<pid>.toml`: a run in progress and the groups it has started.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct LiveRun {
    pid: u32,
    start: u64,
    run_dir: PathBuf,
    groups: Vec<LiveGroup>,
}

/// The live file of this process's run, once registered.
static LIVE_RUN: Mutex<Option<(PathBuf, LiveRun)>> = Mutex::new(None);

impl LiveRun {
    fn write(path: &Path, run: &LiveRun) {
        // Best effort: without the file only the next run's clean-up is lost.
        if let Ok(text) = toml::to_string(run) {
            let _ = std::fs::write(path, text);
        }
    }

    /// Adds (or removes) a group of this process's run in its live file.
    fn note_group(pgid: i32, started: bool) {
        let mut live = LIVE_RUN.lock().unwrap_or_else(|e| e.into_inner());
        let Some((path, run)) = live.as_mut() else {
            return;
        };
        run.groups.retain(|g| g.pgid != pgid);
        if started && let Some(start) = start_ticks(pgid) {
            run.groups.push(LiveGroup { pgid, start });
        }
        LiveRun::write(path, run);
    }
}

/// Keeps this process's run registered; dropping it removes the live file.
#[must_use = "the run is unregistered when this is dropped"]
pub struct RunRegistration {
    path: PathBuf,
}

impl Drop for RunRegistration {
    fn drop(&mut self) {
        *LIVE_RUN.lock().unwrap_or_else(|e| e.into_inner()) = None;
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Registers this process as measuring into `run_dir`, under `scratch/live/`.
pub fn register_run(scratch: &Path, run_dir: &Path) -> Result<RunRegistration> {
    let dir = scratch.join("live");
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let pid = std::process::id();
    let path = dir.join(format!("{pid}.toml"));
    let run = LiveRun {
        pid,
        start: start_ticks(pid as i32).unwrap_or(0),
        run_dir: run_dir.to_owned(),
        groups: Vec::new(),
    };
    LiveRun::write(&path, &run);
    *LIVE_RUN.lock().unwrap_or_else(|e| e.into_inner()) = Some((path.clone(), run));
    Ok(RunRegistration { path })
}

/// Stops what runs that died without a word left running, and has `mark_abandoned` mark their
/// record (given the run directory and the dead pid; whether it marked it); says what it found,
/// one line each.
pub fn reap_abandoned(
    scratch: &Path,
    mark_abandoned: impl Fn(&Path, u32) -> bool,
) -> Result<Vec<String>> {
    let dir = scratch.join("live");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Ok(Vec::new());
    };
    let mut found = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "toml") {
            continue;
        }
        let Some(run) = std::fs::read_to_string(&path)
            .ok()
            .and_then(|text| toml::from_str::<LiveRun>(&text).ok())
        else {
            let _ = std::fs::remove_file(&path);
            continue;
        };
        let alive = run.pid == std::process::id()
            || start_ticks(run.pid as i32).is_some_and(|start| start == run.start);
        if alive {
            continue;
        }
        let mut stopped = 0;
        for group in &run.groups {
            // The leader may be gone with its children left; a leader of another start is a
            // reused pid: not ours.
            let ours = start_ticks(group.pgid).is_none_or(|start| start == group.start);
            // A group of zombies is a group init has yet to collect: nothing to stop.
            if ours && group_runs(group.pgid) {
                signal_group(group.pgid, libc::SIGTERM);
                let deadline = Instant::now() + GRACE;
                while group_runs(group.pgid) && Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(50));
                }
                signal_group(group.pgid, libc::SIGKILL);
                stopped += 1;
            }
        }
        let marked = mark_abandoned(&run.run_dir, run.pid);
        let stopped = match stopped {
            0 => "nothing it had started was still running".to_owned(),
            n => format!("stopped {n} process group(s) it had left running"),
        };
        found.push(format!(
            "found run {} of process {} dead: {stopped}{}",
            run.run_dir.display(),
            run.pid,
            if marked {
                "; its run.toml now says `abandoned`"
            } else {
                ""
            }
        ));
        let _ = std::fs::remove_file(&path);
    }
    Ok(found)
}

#[cfg(test)]
mod tests;
