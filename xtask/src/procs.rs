//! Processes d1bench starts (wrangler and its workerd children): each runs in a process group
//! of its own and the whole group is stopped on every exit path: drop (success, error, panic
//! unwinding) and Ctrl-C or SIGTERM (the interrupt handler).
//!
//! Work that must still happen after an interrupt (deleting what a remote run created on
//! Cloudflare) registers with [`on_interrupt`]: the handler runs it after stopping the groups,
//! and its own processes are started with [`ProcessGroup::spawn_shielded`] so no stop reaches them.

use std::process::{Child, ChildStdin, Command, ExitStatus};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

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
        while groups.iter().any(|&g| group_alive(g)) && Instant::now() < deadline {
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

/// A started process and everything it spawned; stopped when dropped.
pub struct ProcessGroup {
    child: Child,
    pgid: i32,
    name: String,
    stopped: bool,
}

impl ProcessGroup {
    /// Starts `command` as the leader of a new process group, stopped by the interrupt handler.
    pub fn spawn(command: Command, name: &str) -> Result<Self> {
        let group = Self::spawn_shielded(command, name)?;
        LIVE_GROUPS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(group.pgid);
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
        })
    }

    #[cfg(test)]
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
            if leader_done && !group_alive(self.pgid) {
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
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        self.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_ends_the_leader_and_its_grandchildren() {
        let mut command = Command::new("sh");
        // The leader starts a grandchild that would outlive it if only the leader were killed.
        command.args(["-c", "sleep 300 & sleep 300"]);
        let mut group = ProcessGroup::spawn(command, "sleepers").unwrap();
        let pgid = group.pgid();
        std::thread::sleep(Duration::from_millis(100));
        assert!(group_alive(pgid));
        group.stop();
        assert!(
            !group_alive(pgid),
            "processes of group {pgid} survived stop()"
        );
    }

    #[test]
    fn interrupt_cleanups_run_newest_first_until_unregistered() {
        let ran = Arc::new(Mutex::new(Vec::new()));
        let note = |what: &'static str| -> Cleanup {
            let ran = Arc::clone(&ran);
            Arc::new(move || ran.lock().unwrap().push(what))
        };
        // A list of its own: other tests register real cleanups in the process-wide one.
        static LIST: Cleanups = Cleanups::new();
        let first = LIST.register(note("first"));
        let second = LIST.register(note("second"));
        LIST.run_all();
        drop(second);
        LIST.run_all();
        drop(first);
        LIST.run_all();
        assert_eq!(*ran.lock().unwrap(), ["second", "first", "first"]);
    }

    #[test]
    fn drop_stops_the_group_too() {
        let mut command = Command::new("sh");
        command.args(["-c", "sleep 300 & sleep 300"]);
        let group = ProcessGroup::spawn(command, "sleepers").unwrap();
        let pgid = group.pgid();
        drop(group);
        assert!(!group_alive(pgid));
    }
}
