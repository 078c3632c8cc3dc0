//! Who used the CPU: the user and system time, from `/proc`, of this process (the load
//! generator's threads, and in-process SQLite when that is the target) and of every process of
//! a started target's process group by name (`workerd`, and wrangler's `node`), so a workload
//! point can say how the two cores were shared while it ran.

use std::collections::BTreeMap;

/// CPU seconds used so far: this process, and the target's processes by command name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CpuTimes {
    pub own_s: f64,
    /// Per command name (`workerd`, `node`, …) in the target's process group.
    pub target_s: BTreeMap<String, f64>,
}

impl CpuTimes {
    /// The times now: this process, and the processes of group `pgid` when there is one.
    pub fn now(pgid: Option<i32>) -> CpuTimes {
        let own_s = read_stat(std::path::Path::new("/proc/self/stat"))
            .map_or(0.0, |s| s.cpu_ticks as f64 / ticks_per_s());
        let mut target_s = BTreeMap::new();
        if let Some(pgid) = pgid
            && let Ok(entries) = std::fs::read_dir("/proc")
        {
            for entry in entries.flatten() {
                if let Some(stat) = read_stat(&entry.path().join("stat"))
                    && stat.pgrp == pgid
                {
                    *target_s.entry(stat.comm).or_insert(0.0) +=
                        stat.cpu_ticks as f64 / ticks_per_s();
                }
            }
        }
        CpuTimes { own_s, target_s }
    }

    /// What was used between `self` (earlier) and `later`; a target process that started in
    /// between counts from 0.
    pub fn until(&self, later: &CpuTimes) -> CpuTimes {
        CpuTimes {
            own_s: (later.own_s - self.own_s).max(0.0),
            target_s: later
                .target_s
                .iter()
                .map(|(name, s)| {
                    let before = self.target_s.get(name).copied().unwrap_or(0.0);
                    (name.clone(), (s - before).max(0.0))
                })
                .collect(),
        }
    }

    /// Seconds of the target's processes whose name is `name`.
    pub fn of(&self, name: &str) -> f64 {
        self.target_s.get(name).copied().unwrap_or(0.0)
    }
}

/// The fields of `/proc/<pid>/stat` used here.
struct Stat {
    comm: String,
    pgrp: i32,
    /// utime + stime, in clock ticks.
    cpu_ticks: u64,
}

fn read_stat(path: &std::path::Path) -> Option<Stat> {
    parse_stat(&std::fs::read_to_string(path).ok()?)
}

/// `pid (comm) state ppid pgrp … utime stime …`: the name may hold spaces and parentheses, so
/// the fields after it are counted from its last `)`.
fn parse_stat(stat: &str) -> Option<Stat> {
    let open = stat.find('(')?;
    let (inside, rest) = stat[open + 1..].rsplit_once(')')?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After the name: state(0) ppid(1) pgrp(2) … utime(11) stime(12).
    Some(Stat {
        comm: inside.to_owned(),
        pgrp: fields.get(2)?.parse().ok()?,
        cpu_ticks: fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?,
    })
}

/// CPU seconds (user and system) the calling thread has used so far, from `getrusage`
/// (`RUSAGE_THREAD`); 0 where it fails. Read by a thread just before it ends, since a thread's
/// own times leave `/proc` with it.
pub fn this_thread_s() -> f64 {
    // SAFETY: an all-zero `rusage` is a valid value of the plain C struct that getrusage fills.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes only into `usage`, which lives for the call.
    if unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) } != 0 {
        return 0.0;
    }
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    s(usage.ru_utime) + s(usage.ru_stime)
}

fn ticks_per_s() -> f64 {
    // SAFETY: sysconf reads a constant of the system; it has no memory effects.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if ticks > 0 { ticks as f64 } else { 100.0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stat_line_with_a_name_of_spaces_and_parentheses_parses() {
        let line = "4242 (work (er) d) S 1 4200 4200 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 8 0 \
                    12345 0 0";
        let stat = parse_stat(line).unwrap();
        assert_eq!(stat.comm, "work (er) d");
        assert_eq!(stat.pgrp, 4200);
        assert_eq!(stat.cpu_ticks, 300);
    }

    /// This process's own time grows while it spins, and a group that does not exist has no
    /// processes.
    #[test]
    fn own_time_grows_with_work() {
        let before = CpuTimes::now(Some(i32::MAX));
        let start = std::time::Instant::now();
        let mut x = 0u64;
        while start.elapsed() < std::time::Duration::from_millis(300) {
            x = x.wrapping_mul(31).wrapping_add(7);
        }
        std::hint::black_box(x);
        let used = before.until(&CpuTimes::now(Some(i32::MAX)));
        assert!(used.own_s > 0.0, "{used:?}");
        assert!(used.target_s.is_empty());
    }
}
