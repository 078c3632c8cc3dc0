//! A replicate set: a folder of complete run directories of one design (experiment and its
//! file's hash, kind, profile, target, baseline, Workers, Worker build, the CPUs it could use) made at separate times, the unit a finding
//! meant to hold tomorrow is stated over. Reading one lists its runs in the order they started
//! and refuses a set whose runs differ in what makes them one design, naming the field and the
//! run directories.

use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use super::{RunDir, RunRecord, RunStatus};

/// What the runs of a set must share, each named as run.toml names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SharedField {
    /// `run.experiment`.
    Experiment,
    /// `studies.sha256`: the experiment files as the run read them. A file changed between runs
    /// (other rows, another grid) is another design under the same name.
    StudyFiles,
    /// `run.kind`.
    Kind,
    /// `run.profile`.
    Profile,
    /// `run.target`.
    Target,
    /// `run.baseline`.
    Baseline,
    /// `run.alternate_workers`, `run.paired_workers` and `run.worker`: which Workers measured,
    /// and how.
    Workers,
    /// `versions.worker_wasm`: the hash of the Worker's bytes (the sources' hash,
    /// `versions.worker_build`, for a run that recorded no bytes). The bytes, not the sources:
    /// sources changed without changing the build (`build-worker --carry`) measure the same.
    WorkerBuild,
    /// `machine.cpus` and `machine.cpu_limit`: the CPUs the run could use. A run under a cgroup
    /// quota or the idle class measured the limit, not the machine (two runs of 2026-12-06 ran
    /// at 0.6 CPU; `cpus` = 1 gave them away before the limit itself was recorded).
    Cpus,
}

impl SharedField {
    pub const ALL: [SharedField; 9] = [
        SharedField::Experiment,
        SharedField::StudyFiles,
        SharedField::Kind,
        SharedField::Profile,
        SharedField::Target,
        SharedField::Baseline,
        SharedField::Workers,
        SharedField::WorkerBuild,
        SharedField::Cpus,
    ];

    /// The field's value in `record`, as text to compare and to print.
    fn value(self, record: &RunRecord) -> String {
        let run = &record.run;
        match self {
            SharedField::Experiment => run.experiment.clone(),
            SharedField::StudyFiles => record
                .studies
                .iter()
                .map(|study| format!("{} {}", study.file, study.sha256))
                .collect::<Vec<_>>()
                .join(", "),
            SharedField::Kind => format!("{:?}", run.kind),
            SharedField::Profile => run.profile.clone(),
            SharedField::Target => run.target.to_string(),
            SharedField::Baseline => run
                .baseline
                .map_or_else(|| "none".to_owned(), |b| b.to_string()),
            SharedField::Workers => format!(
                "{}{}",
                run.worker.unwrap_or_default(),
                match (run.alternate_workers, run.paired_workers) {
                    (true, _) => " alternating",
                    (_, true) => " paired",
                    _ => "",
                }
            ),
            SharedField::WorkerBuild => {
                (record.versions.worker_identity()).unwrap_or_else(|| "not recorded".to_owned())
            }
            SharedField::Cpus => {
                let machine = &record.machine;
                match &machine.cpu_limit {
                    Some(limit) => format!("{} CPUs, limited to {limit}", machine.cpus),
                    None => format!("{} CPUs", machine.cpus),
                }
            }
        }
    }
}

impl fmt::Display for SharedField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SharedField::Experiment => "run.experiment",
            SharedField::StudyFiles => "studies.sha256",
            SharedField::Kind => "run.kind",
            SharedField::Profile => "run.profile",
            SharedField::Target => "run.target",
            SharedField::Baseline => "run.baseline",
            SharedField::Workers => "run.worker / run.alternate_workers / run.paired_workers",
            SharedField::WorkerBuild => "versions.worker_wasm (or versions.worker_build)",
            SharedField::Cpus => "machine.cpus / machine.cpu_limit",
        })
    }
}

/// One run of a set.
#[derive(Debug, Clone)]
pub struct Replicate {
    pub dir: RunDir,
    pub record: RunRecord,
}

/// The runs of a set, in the order they started.
#[derive(Debug, Clone)]
pub struct ReplicateSet {
    /// The set's folder.
    pub path: PathBuf,
    pub runs: Vec<Replicate>,
}

/// The sets' parent folder under the project's root: `docs/runs/replicates/<name>/<run-id>/`.
pub const REPLICATES_DIR: &str = "docs/runs/replicates";

/// The fewest runs a finding over runs is meant to rest on (issue 35); a set of two is read
/// and stated, saying it has fewer.
pub const RUNS_WANTED: usize = 3;

impl ReplicateSet {
    /// The set in `path`: every subfolder holding a run.toml is a run; each must be complete
    /// and all must share [`SharedField::ALL`].
    pub fn read(path: &Path) -> Result<ReplicateSet> {
        let mut runs = Vec::new();
        for entry in std::fs::read_dir(path)
            .with_context(|| format!("cannot read the replicate set {}", path.display()))?
        {
            let dir = entry?.path();
            if !dir.join("run.toml").is_file() {
                continue;
            }
            let dir = RunDir::new(dir);
            let record = RunRecord::read(&dir.run_toml())?;
            if record.run.status != RunStatus::Complete {
                bail!(
                    "{} ended {}: a replicate set holds complete runs only",
                    dir.path.display(),
                    record.run.status
                );
            }
            runs.push(Replicate { dir, record });
        }
        if runs.is_empty() {
            bail!(
                "{} holds no run directory (none with a run.toml)",
                path.display()
            );
        }
        runs.sort_by(|a, b| {
            (a.record.run.started.as_str(), a.dir.id())
                .cmp(&(b.record.run.started.as_str(), b.dir.id()))
        });
        let set = ReplicateSet {
            path: path.to_owned(),
            runs,
        };
        set.check()?;
        Ok(set)
    }

    /// The set under `root` named `name`, if its folder exists.
    pub fn find(root: &Path, name: &str) -> Result<Option<ReplicateSet>> {
        let path = root.join(REPLICATES_DIR).join(name);
        if !path.is_dir() {
            return Ok(None);
        }
        ReplicateSet::read(&path).map(Some)
    }

    /// Refuses a set whose runs differ in a field they must share, naming it, each value and
    /// the run directories that hold it.
    fn check(&self) -> Result<()> {
        let first = &self.runs[0];
        for field in SharedField::ALL {
            let want = field.value(&first.record);
            let differing: Vec<String> = self
                .runs
                .iter()
                .filter(|r| field.value(&r.record) != want)
                .map(|r| format!("{} has `{}`", r.dir.path.display(), field.value(&r.record)))
                .collect();
            if !differing.is_empty() {
                bail!(
                    "{} is not one design: {field} differs between its runs ({} has `{want}`; {}). \
                     A replicate set repeats one command at one Worker build: move the other \
                     runs out",
                    self.path.display(),
                    first.dir.path.display(),
                    differing.join("; ")
                );
            }
        }
        Ok(())
    }

    /// Whether `record` is a run of this set's design (shares [`SharedField::ALL`] with it).
    pub fn holds_design_of(&self, record: &RunRecord) -> bool {
        self.first_difference(record).is_none()
    }

    /// The first field `record` does not share with this set's runs: the field, the set's value
    /// and the record's.
    pub fn first_difference(&self, record: &RunRecord) -> Option<(SharedField, String, String)> {
        let first = &self.runs[0].record;
        SharedField::ALL.into_iter().find_map(|f| {
            let (mine, theirs) = (f.value(first), f.value(record));
            (mine != theirs).then_some((f, mine, theirs))
        })
    }

    /// Every committed set under `root`, in name order; folders that are no set are skipped.
    pub fn all(root: &Path) -> Vec<ReplicateSet> {
        let Ok(entries) = std::fs::read_dir(root.join(REPLICATES_DIR)) else {
            return Vec::new();
        };
        let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        paths.sort();
        paths
            .into_iter()
            .filter(|p| p.is_dir())
            .filter_map(|p| ReplicateSet::read(&p).ok())
            .collect()
    }

    /// The set's name: its folder's.
    pub fn name(&self) -> String {
        RunDir::new(self.path.clone()).id()
    }

    /// Which of the runs replayed one schedule, in the set's order: runs of one order seed and
    /// one `--only` (the probes it shuffles: the set's runs share their experiment and profile),
    /// each pair hashed to one key; a run that records no order seed had one of its own.
    pub fn schedules(&self) -> crate::stats::runs::Schedules {
        use std::hash::{Hash, Hasher};
        crate::stats::runs::Schedules(
            self.runs
                .iter()
                .map(|r| {
                    let seed = r.record.run.order_seed?;
                    let mut h = std::collections::hash_map::DefaultHasher::new();
                    (seed, &r.record.overrides.only).hash(&mut h);
                    Some(h.finish())
                })
                .collect(),
        )
    }

    /// The runs' directories, in order.
    pub fn dirs(&self) -> Vec<&Path> {
        self.runs.iter().map(|r| r.dir.path.as_path()).collect()
    }

    /// Minutes every run measured, summed, from their run.toml.
    pub fn minutes(&self) -> f64 {
        self.runs.iter().filter_map(|r| minutes(&r.record)).sum()
    }

    /// When the runs were made, from their recorded starts (UTC), so a reader sees whether they
    /// span days or one sitting: "3 runs made 2026-12-06 18:29–18:59 UTC", "4 runs made
    /// 2026-12-03 to 2026-12-06".
    pub fn made(&self) -> String {
        let n = self.runs.len();
        let mut starts: Vec<&str> = self
            .runs
            .iter()
            .map(|r| r.record.run.started.as_str())
            .collect();
        starts.sort();
        let (Some(&first), Some(&last)) = (starts.first(), starts.last()) else {
            return format!("{n} runs");
        };
        let day = |s: &str| s.get(..10).unwrap_or(s).to_owned();
        let clock = |s: &str| s.get(11..16).unwrap_or("").to_owned();
        if day(first) == day(last) {
            format!(
                "{n} runs made {} {}–{} UTC",
                day(first),
                clock(first),
                clock(last)
            )
        } else {
            format!("{n} runs made {} to {}", day(first), day(last))
        }
    }
}

/// How long a run measured, in minutes, from its run.toml's start and end.
pub fn minutes(record: &RunRecord) -> Option<f64> {
    use super::run_history::unix_secs;
    let started = unix_secs(&record.run.started)?;
    let ended = unix_secs(record.run.ended.as_deref()?)?;
    Some(ended.checked_sub(started)? as f64 / 60.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paths::project_root;

    /// A set in a temporary folder of the committed runs' run.toml files.
    fn set_of(runs: &[&str]) -> tempfile::TempDir {
        let root = project_root();
        let set = tempfile::tempdir().unwrap();
        for (i, run) in runs.iter().enumerate() {
            let to = set.path().join(format!("run-{i}"));
            std::fs::create_dir_all(&to).unwrap();
            std::fs::copy(root.join(run).join("run.toml"), to.join("run.toml")).unwrap();
        }
        set
    }

    #[test]
    fn a_set_of_one_design_lists_its_runs_in_the_order_they_started() {
        let set = set_of(&["docs/runs/column-sweep-replicate", "docs/example-run"]);
        let read = ReplicateSet::read(set.path()).unwrap();
        assert_eq!(read.runs.len(), 2);
        assert!(read.runs[0].record.run.started <= read.runs[1].record.run.started);
        assert!(read.minutes() > 0.0);
    }

    #[test]
    fn a_set_says_when_its_runs_were_made_in_one_sitting_or_over_days() {
        let set = set_of(&["docs/runs/column-sweep-replicate", "docs/example-run"]);
        let mut read = ReplicateSet::read(set.path()).unwrap();
        read.runs[0].record.run.started = "2026-12-03T18:39:50Z".into();
        read.runs[1].record.run.started = "2026-12-06T04:24:52Z".into();
        assert_eq!(read.made(), "2 runs made 2026-12-03 to 2026-12-06");
        read.runs[0].record.run.started = "2026-12-06T03:13:04Z".into();
        assert_eq!(read.made(), "2 runs made 2026-12-06 03:13–04:24 UTC");
    }

    #[test]
    fn a_set_of_two_designs_is_refused_naming_the_field_and_the_runs() {
        let set = set_of(&["docs/example-run", "docs/runs/d1-beside-do"]);
        let err = ReplicateSet::read(set.path()).unwrap_err().to_string();
        assert!(
            err.contains("run.baseline differs between its runs"),
            "{err}"
        );
        assert!(err.contains("run-0") && err.contains("run-1"), "{err}");
        assert!(err.contains("`sqlite`") && err.contains("`do`"), "{err}");
        let set = set_of(&["docs/example-run", "docs/runs/decision-map"]);
        let err = ReplicateSet::read(set.path()).unwrap_err().to_string();
        assert!(err.contains("run.experiment differs"), "{err}");
    }

    #[test]
    fn a_set_whose_experiment_file_changed_between_runs_is_refused() {
        let set = set_of(&["docs/example-run", "docs/example-run"]);
        let toml = set.path().join("run-1/run.toml");
        let text = std::fs::read_to_string(&toml).unwrap();
        let (_, after) = text.split_once("sha256 = \"").unwrap();
        let hash = &after[..64];
        std::fs::write(&toml, text.replace(hash, &"0".repeat(64))).unwrap();
        let err = ReplicateSet::read(set.path()).unwrap_err().to_string();
        assert!(err.contains("studies.sha256 differs"), "{err}");
        assert!(err.contains(hash) && err.contains(&"0".repeat(64)), "{err}");
    }

    #[test]
    fn a_run_made_under_a_cpu_limit_is_refused_beside_runs_made_without_one() {
        let set = set_of(&["docs/example-run", "docs/example-run"]);
        let toml = set.path().join("run-1/run.toml");
        let mut record = RunRecord::read(&toml).unwrap();
        record.machine.cpu_limit = Some(crate::records::cpu_limit::CpuLimit {
            cgroup: "/slow".into(),
            quota_cpus: Some(0.6),
            idle: true,
        });
        record.write(&toml).unwrap();
        let err = ReplicateSet::read(set.path()).unwrap_err().to_string();
        assert!(
            err.contains("machine.cpus / machine.cpu_limit differs"),
            "{err}"
        );
        assert!(
            err.contains("limited to a quota of 0.60 CPU and the idle scheduling class"),
            "{err}"
        );
        // A run whose record predates the limit shows it by the CPUs it could use.
        record.machine.cpu_limit = None;
        record.machine.cpus = 1;
        record.write(&toml).unwrap();
        let err = ReplicateSet::read(set.path()).unwrap_err().to_string();
        assert!(err.contains("has `1 CPUs`"), "{err}");
    }

    #[test]
    fn a_run_that_did_not_complete_or_an_empty_folder_is_refused() {
        let set = set_of(&["docs/example-run"]);
        let toml = set.path().join("run-0/run.toml");
        let text = std::fs::read_to_string(&toml).unwrap();
        std::fs::write(
            &toml,
            text.replace("status = \"complete\"", "status = \"failed\""),
        )
        .unwrap();
        let err = ReplicateSet::read(set.path()).unwrap_err().to_string();
        assert!(
            err.contains("a replicate set holds complete runs only"),
            "{err}"
        );
        let empty = tempfile::tempdir().unwrap();
        assert!(ReplicateSet::read(empty.path()).is_err());
        assert!(
            ReplicateSet::find(empty.path(), "column-sweep")
                .unwrap()
                .is_none()
        );
    }
}
