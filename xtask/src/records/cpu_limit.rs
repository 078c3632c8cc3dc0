//! The CPU limit a run was measured under, when one was set on its process: a cgroup CPU quota
//! (a fraction of the machine's cores) or the idle scheduling class (a CPU only when nothing else
//! wants one), on the runner's own cgroup or one above it. Such a run measures the limit, not the
//! machine: run.toml records it, the run warns as it starts, and a replicate set refuses to mix
//! it with runs made without it.
//!
//! Read by hand from `/proc/self/cgroup` and the cgroup files (cgroup v1's `cpu.cfs_quota_us`,
//! `cpu.cfs_period_us` and `cpu.idle`; v2's `cpu.max` and `cpu.idle`): two small text files per
//! level, which no well-kept crate reads without pulling in a cgroup manager.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// A CPU limit on the runner's process.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuLimit {
    /// The cgroup that sets the tightest limit, as `/proc/self/cgroup` names it (`/slow`).
    pub cgroup: String,
    /// The quota in CPUs (quota ÷ period), when one is set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quota_cpus: Option<f64>,
    /// Whether that cgroup, or one above it, schedules at the idle class (`cpu.idle` = 1).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub idle: bool,
}

impl fmt::Display for CpuLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if let Some(quota) = self.quota_cpus {
            parts.push(format!("a quota of {quota:.2} CPU"));
        }
        if self.idle {
            parts.push("the idle scheduling class".to_owned());
        }
        write!(f, "{} (cgroup {})", parts.join(" and "), self.cgroup)
    }
}

/// The limit on this process, if any (none off Linux, or where the cgroup files cannot be read).
pub fn of_this_process() -> Option<CpuLimit> {
    read(Path::new("/proc/self/cgroup"), Path::new("/sys/fs/cgroup"))
}

/// The limit `proc_cgroup` (a `/proc/<pid>/cgroup`) puts on its process, with the cgroup
/// hierarchies mounted under `fs_root`.
fn read(proc_cgroup: &Path, fs_root: &Path) -> Option<CpuLimit> {
    let text = std::fs::read_to_string(proc_cgroup).ok()?;
    let (mount, path) = cpu_hierarchy(&text, fs_root)?;
    // From the process's own cgroup up to the hierarchy's root: a limit anywhere above applies.
    let mut levels = vec![path.clone()];
    let mut at = Path::new(&path);
    while let Some(parent) = at.parent() {
        levels.push(parent.to_string_lossy().into_owned());
        at = parent;
    }
    let mut limit: Option<CpuLimit> = None;
    for level in levels {
        let dir = mount.join(level.trim_start_matches('/'));
        let quota = quota_cpus(&dir);
        let idle = std::fs::read_to_string(dir.join("cpu.idle")).is_ok_and(|s| s.trim() == "1");
        let tighter = match (quota, limit.as_ref().and_then(|l| l.quota_cpus)) {
            (Some(q), Some(known)) => q < known,
            (Some(_), None) => true,
            (None, _) => false,
        };
        match &mut limit {
            Some(known) => {
                if tighter {
                    known.quota_cpus = quota;
                    known.cgroup = level.clone();
                }
                known.idle |= idle;
            }
            None if quota.is_some() || idle => {
                limit = Some(CpuLimit {
                    cgroup: level.clone(),
                    quota_cpus: quota,
                    idle,
                })
            }
            None => {}
        }
    }
    limit
}

/// Where the `cpu` controller's hierarchy is mounted and the process's path in it: cgroup v1's
/// `N:cpu[,cpuacct]:/path` line when there is one, else v2's `0::/path`.
fn cpu_hierarchy(proc_cgroup: &str, fs_root: &Path) -> Option<(PathBuf, String)> {
    let lines: Vec<(&str, &str)> = proc_cgroup
        .lines()
        .filter_map(|line| {
            let mut fields = line.splitn(3, ':');
            let (_, controllers, path) = (fields.next()?, fields.next()?, fields.next()?);
            Some((controllers, path))
        })
        .collect();
    if let Some((controllers, path)) = lines
        .iter()
        .find(|(controllers, _)| controllers.split(',').any(|c| c == "cpu"))
    {
        let mount = [fs_root.join(controllers), fs_root.join("cpu")]
            .into_iter()
            .find(|dir| dir.join("cpu.cfs_quota_us").exists() || dir.join("cpu.idle").exists())?;
        return Some((mount, (*path).to_owned()));
    }
    let (_, path) = lines
        .iter()
        .find(|(controllers, _)| controllers.is_empty())?;
    let mount = [fs_root.to_owned(), fs_root.join("unified")]
        .into_iter()
        .find(|dir| dir.join("cgroup.controllers").exists())?;
    Some((mount, (*path).to_owned()))
}

/// The quota a cgroup directory sets, in CPUs: v2's `cpu.max` (`max 100000` is none), else v1's
/// `cpu.cfs_quota_us` (-1 is none) over `cpu.cfs_period_us`.
fn quota_cpus(dir: &Path) -> Option<f64> {
    let number = |name: &str| -> Option<f64> {
        std::fs::read_to_string(dir.join(name))
            .ok()?
            .trim()
            .parse()
            .ok()
    };
    let (quota, period) = match std::fs::read_to_string(dir.join("cpu.max")) {
        Ok(max) => {
            let mut fields = max.split_whitespace();
            let quota = fields.next()?.parse::<f64>().ok()?;
            (quota, fields.next()?.parse::<f64>().ok()?)
        }
        Err(_) => (number("cpu.cfs_quota_us")?, number("cpu.cfs_period_us")?),
    };
    (quota > 0.0 && period > 0.0).then(|| quota / period)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, files: &[(&str, &str)]) {
        std::fs::create_dir_all(dir).unwrap();
        for (name, text) in files {
            std::fs::write(dir.join(name), text).unwrap();
        }
    }

    /// This machine's layout: cgroup v1, the cpu controller alone, a `slow` group at 0.6 CPU and
    /// the idle class, its root unlimited.
    fn v1(root: &Path) {
        let cpu = root.join("cpu");
        let free = [
            ("cpu.cfs_quota_us", "-1\n"),
            ("cpu.cfs_period_us", "100000\n"),
            ("cpu.idle", "0\n"),
        ];
        write(&cpu, &free);
        write(
            &cpu.join("slow"),
            &[
                ("cpu.cfs_quota_us", "60000\n"),
                ("cpu.cfs_period_us", "100000\n"),
                ("cpu.idle", "1\n"),
            ],
        );
        write(&cpu.join("slow/inner"), &free);
        write(&root.join("unified"), &[("cgroup.controllers", "")]);
    }

    fn proc_file(dir: &Path, text: &str) -> PathBuf {
        let path = dir.join("proc-cgroup");
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn a_process_in_the_root_cgroup_has_no_limit() {
        let dir = tempfile::tempdir().unwrap();
        v1(dir.path());
        let proc = proc_file(dir.path(), "4:memory:/x\n1:cpu:/\n0::/\n");
        assert_eq!(read(&proc, dir.path()), None);
    }

    #[test]
    fn a_quota_and_the_idle_class_set_above_the_process_are_found() {
        let dir = tempfile::tempdir().unwrap();
        v1(dir.path());
        let proc = proc_file(dir.path(), "1:cpu:/slow/inner\n0::/\n");
        let limit = read(&proc, dir.path()).unwrap();
        assert_eq!(limit.cgroup, "/slow");
        assert!((limit.quota_cpus.unwrap() - 0.6).abs() < 1e-9);
        assert!(limit.idle);
        assert_eq!(
            limit.to_string(),
            "a quota of 0.60 CPU and the idle scheduling class (cgroup /slow)"
        );
    }

    #[test]
    fn cgroup_v2_quotas_are_read_from_cpu_max_and_the_tightest_wins() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            &[("cgroup.controllers", "cpu"), ("cpu.max", "max 100000\n")],
        );
        write(&dir.path().join("ci"), &[("cpu.max", "150000 100000\n")]);
        write(
            &dir.path().join("ci/job"),
            &[("cpu.max", "300000 100000\n")],
        );
        let proc = proc_file(dir.path(), "0::/ci/job\n");
        let limit = read(&proc, dir.path()).unwrap();
        assert_eq!(
            (limit.cgroup.as_str(), limit.quota_cpus),
            ("/ci", Some(1.5))
        );
        assert!(!limit.idle);
    }

    #[test]
    fn unreadable_or_malformed_cgroup_files_give_no_limit() {
        let dir = tempfile::tempdir().unwrap();
        let proc = proc_file(dir.path(), "garbage\n");
        assert_eq!(read(&proc, dir.path()), None);
        assert_eq!(read(&dir.path().join("missing"), dir.path()), None);
    }
}
