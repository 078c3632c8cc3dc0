//! The tests of `procs`.

use super::*;

#[test]
fn stop_ends_the_leader_and_its_grandchildren() {
    let mut command = Command::new("sh");
    // The leader starts a grandchild that would outlive it if only the leader were killed.
    command.args(["-c", "sleep 300 & sleep 300"]);
    let mut group = ProcessGroup::spawn(command, "sleepers").unwrap();
    let pgid = group.pgid();
    std::thread::sleep(Duration::from_millis(100));
    assert!(group_runs(pgid));
    group.stop();
    assert!(
        !group_runs(pgid),
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
fn the_watchdog_stops_the_group_when_this_process_is_gone_and_only_then() {
    let mut command = Command::new("sh");
    command.args(["-c", "sleep 300 & sleep 300"]);
    let mut group = ProcessGroup::spawn(command, "sleepers").unwrap();
    let pgid = group.pgid();
    std::thread::sleep(Duration::from_millis(100));
    // The kernel closing the pipe when this process dies, nothing else.
    let mut sh = group.watchdog.take().expect("a watchdog").orphan();
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        // This test is the leader's parent: it reaps it, as init would once we are gone.
        let leader_done = matches!(group.child.try_wait(), Ok(Some(_)));
        if leader_done && !group_runs(pgid) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the watchdog left group {pgid} running"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(sh.wait().unwrap().success());
    group.stop();

    // Stopped the ordinary way, the group dismisses its watchdog, which signals nothing.
    let mut command = Command::new("sh");
    command.args(["-c", "sleep 300"]);
    let mut group = ProcessGroup::spawn(command, "sleeper").unwrap();
    let watchdog_pid = group.watchdog.as_ref().expect("a watchdog").sh.id() as i32;
    group.stop();
    assert!(group.watchdog.is_none());
    assert!(
        start_ticks(watchdog_pid).is_none(),
        "the dismissed watchdog still runs"
    );
}

#[test]
fn this_process_is_alive_and_a_pid_past_the_kernels_maximum_is_not() {
    assert!(process_alive(std::process::id()));
    assert!(!process_alive(999_999_999));
    let mut child = Command::new("true").spawn().unwrap();
    let pid = child.id();
    // Exited and not yet waited for: a zombie (state Z), not a live process.
    let state = || {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
        let after = stat[stat.rfind(')').unwrap() + 1..].to_owned();
        after.split_whitespace().next().unwrap().to_owned()
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while state() != "Z" && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(state(), "Z");
    assert!(!process_alive(pid));
    child.wait().unwrap();
}

#[test]
fn drop_stops_the_group_too() {
    let mut command = Command::new("sh");
    command.args(["-c", "sleep 300 & sleep 300"]);
    let group = ProcessGroup::spawn(command, "sleepers").unwrap();
    let pgid = group.pgid();
    drop(group);
    assert!(!group_runs(pgid));
}

#[test]
fn a_dead_runs_groups_are_stopped_and_its_record_marked_abandoned() {
    let scratch = tempfile::tempdir().unwrap();
    let run_dir = scratch.path().join("run");
    std::fs::create_dir_all(&run_dir).unwrap();
    let marked = Mutex::new(Vec::new());
    let mark = |dir: &Path, pid: u32| {
        marked.lock().unwrap().push((dir.to_owned(), pid));
        true
    };
    // A group left behind by a "dead" run: a process that is not this one.
    let mut command = Command::new("sh");
    command.args(["-c", "sleep 300 & sleep 300"]);
    use std::os::unix::process::CommandExt;
    command.process_group(0);
    let mut child = command.spawn().unwrap();
    let pgid = child.id() as i32;
    std::thread::sleep(Duration::from_millis(100));
    let live = scratch.path().join("live");
    std::fs::create_dir_all(&live).unwrap();
    // A pid that is not running: the kernel's pid_max is far below this.
    let dead = LiveRun {
        pid: 999_999_999,
        start: 1,
        run_dir: run_dir.clone(),
        groups: vec![LiveGroup {
            pgid,
            start: start_ticks(pgid).unwrap(),
        }],
    };
    LiveRun::write(&live.join("999999999.toml"), &dead);
    let found = reap_abandoned(scratch.path(), mark).unwrap();
    let _ = child.wait();
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].contains("stopped 1 process group(s) it had left running"),
        "{found:?}"
    );
    assert!(
        found[0].ends_with("; its run.toml now says `abandoned`"),
        "{found:?}"
    );
    assert!(!group_runs(pgid), "the dead run's group survived");
    assert_eq!(*marked.lock().unwrap(), [(run_dir.clone(), 999_999_999)]);
    assert!(!live.join("999999999.toml").exists());
    // A live run (this process) is left alone.
    let _registration = register_run(scratch.path(), &run_dir).unwrap();
    assert!(reap_abandoned(scratch.path(), mark).unwrap().is_empty());
    assert_eq!(marked.lock().unwrap().len(), 1);
}
