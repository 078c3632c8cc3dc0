//! `cargo xtask reproduce`: runs again, one at a time at the checked-out commit, every committed
//! run the README quotes ([`readme::QUOTED_RUNS`]), each with the command its run.toml records;
//! refuses to start one while this host runs slower than the host that made the committed run,
//! over the fixed reference workload both read, beyond its noise (`--force` makes it anyway and
//! the run's run.toml says so); once all are complete, puts them in place of the committed ones
//! (not one by one: a run put in place dirties the tree the next would record), makes again the
//! between-runs calibrations that involve them ([`readme::CALIBRATED_PAIRS`]) and rewrites the
//! README's generated sections from them. With `--replicates N`, makes the README's replicate
//! sets instead ([`sets`]).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::Parser;
use xshell::Shell;

use crate::flags;
use crate::paths::Paths;
use crate::readme;
use crate::records::host_speed::{HostReading, ReadingAt};
use crate::records::run_record::git;
use crate::records::{RunRecord, RunStatus};
use crate::reports::host_speed::{HostShift, HostVerdict};
use crate::reports::provenance::{command, command_args};
use crate::studies::sweep::report::calibrate::between::write_between;

mod sets;

/// A quoted run: where it is committed, and what its run.toml says of it.
struct Quoted {
    dir: &'static str,
    record: RunRecord,
}

impl Quoted {
    fn read(paths: &Paths, dir: &'static str) -> Result<Quoted> {
        let toml = paths.root.join(dir).join("run.toml");
        let record = RunRecord::read(&toml)
            .with_context(|| format!("{}: the README quotes this run", toml.display()))?;
        Ok(Quoted { dir, record })
    }

    /// How long the committed run measured, from its run.toml.
    fn minutes(&self) -> Option<f64> {
        readme::run_minutes(&self.record)
    }
}

/// How many readings of the reference workload reproduce takes before each run (about 3 s).
const READINGS: usize = 9;

/// The host now against the host that made `committed` (its readings of the reference
/// workload): refused when this one is slower beyond the reference's noise, unless `force`,
/// when the returned text is what the new run's run.toml records. A committed run without
/// readings cannot be judged, and is not refused. The load average is no guard: a day the
/// machine ran 1.6–1.9× slower passed it.
fn fast_enough(committed: &RunRecord, now: &[HostReading], force: bool) -> Result<Option<String>> {
    let Some(shift) = HostShift::between_readings(&committed.machine.speed, now) else {
        return Ok(None);
    };
    if shift.verdict != HostVerdict::Slower {
        eprintln!("[reproduce] this host took {}", shift.text());
        return Ok(None);
    }
    let said = format!(
        "this host took {} against the committed run `{}`",
        shift.text(),
        committed.run.id
    );
    if force {
        eprintln!("[reproduce] --force: {said}");
        return Ok(Some(said));
    }
    bail!(
        "{said}: a run made now would move with the machine, not with the code. Wait until it \
         is quiet or on its usual machine, or give --force (the new run's run.toml then says it \
         was forced); nothing was put in place"
    )
}

/// `READINGS` readings of this host now, to judge against a committed run's.
fn host_now() -> Result<Vec<HostReading>> {
    (0..READINGS)
        .map(|_| crate::pipeline::host_speed::read(ReadingAt::Between, 0.0))
        .collect()
}

/// The one run directory `cargo xtask run --out out` left in `out`.
fn new_run_dir(out: &Path) -> Result<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(out)
        .with_context(|| format!("cannot read {}", out.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("run.toml").is_file())
        .collect();
    match dirs.len() {
        1 => Ok(dirs.remove(0)),
        n => bail!("{} holds {n} run directories, not one", out.display()),
    }
}

/// `to`'s files replaced by those of the run directory `from` (files only: a run directory has
/// no subdirectories), leaving no file of the old run behind.
fn put_in_place(from: &Path, to: &Path) -> Result<()> {
    if to.is_dir() {
        std::fs::remove_dir_all(to).with_context(|| format!("cannot remove {}", to.display()))?;
    }
    std::fs::create_dir_all(to).with_context(|| format!("cannot create {}", to.display()))?;
    for entry in
        std::fs::read_dir(from).with_context(|| format!("cannot read {}", from.display()))?
    {
        let path = entry?.path();
        // The index over runs that `report` writes is not the run's.
        if path.is_file() && path.file_name().is_some_and(|n| n != "index.md") {
            let dest = to.join(path.file_name().expect("a file has a name"));
            std::fs::copy(&path, &dest)
                .with_context(|| format!("cannot copy {} to {}", path.display(), dest.display()))?;
        }
    }
    Ok(())
}

/// Runs the command `record` records into the empty folder `out` (`name` says which run in
/// messages) once the machine is quiet, and returns the run directory it made and its record;
/// refuses a run that did not complete, saying that the runs made so far are under `scratch`.
fn run_recorded(
    sh: &Shell,
    paths: &Paths,
    record: &RunRecord,
    out: &Path,
    name: &str,
    scratch: &Path,
    force: bool,
) -> Result<(PathBuf, RunRecord)> {
    let forced = fast_enough(record, &host_now()?, force)?;
    if out.exists() {
        std::fs::remove_dir_all(out).with_context(|| format!("cannot clear {}", out.display()))?;
    }
    let mut args = vec!["xtask".to_owned()];
    args.extend(command_args(record));
    args.extend(["--out".to_owned(), out.display().to_string()]);
    let flags::Task::Run(run) = flags::Xtask::try_parse_from(&args)
        .with_context(|| format!("{name}: its recorded command does not parse"))?
        .task
    else {
        bail!("{name}: its recorded command is not a run");
    };
    eprintln!("[reproduce] {name}: {}", command(record));
    run.run(sh, paths)
        .with_context(|| format!("reproducing {name}"))?;
    let dir = new_run_dir(out)?;
    let mut made = RunRecord::read(&dir.join("run.toml"))?;
    if forced.is_some() {
        made.machine.forced = forced;
        made.write(&dir.join("run.toml"))?;
    }
    if made.run.status != RunStatus::Complete {
        bail!(
            "{} ended {}, not complete: nothing was put in place (the runs made so far are under \
             {})",
            dir.display(),
            made.run.status,
            scratch.display()
        );
    }
    Ok((dir, made))
}

/// The committed between-runs calibrations with a run among `placed`: put in place, a run
/// leaves no file of the old one behind, so its calibration must be made again from the new.
fn pairs_to_make_again(placed: &[&str]) -> Vec<(&'static str, &'static str)> {
    readme::CALIBRATED_PAIRS
        .into_iter()
        .filter(|(a, b)| placed.contains(a) || placed.contains(b))
        .collect()
}

impl flags::Reproduce {
    pub fn run(self, sh: &Shell, paths: &Paths) -> Result<()> {
        if let Some(n) = self.replicates {
            return sets::make(sh, paths, n, &self.only, self.dry_run, self.force);
        }
        let mut quoted = Vec::new();
        for dir in readme::QUOTED_RUNS {
            if self.only.is_empty() || self.only.iter().any(|o| dir.ends_with(o.as_str())) {
                quoted.push(Quoted::read(paths, dir)?);
            }
        }
        if quoted.is_empty() {
            bail!(
                "--only {}: the README quotes {}",
                self.only.join(" "),
                readme::QUOTED_RUNS.join(", ")
            );
        }
        let total: f64 = quoted.iter().filter_map(Quoted::minutes).sum();
        eprintln!(
            "[reproduce] {} run(s), one at a time, about {total:.0} min as last measured:",
            quoted.len()
        );
        for q in &quoted {
            eprintln!(
                "  {}: `{}` ({})",
                q.dir,
                command(&q.record),
                q.minutes()
                    .map_or("duration not recorded".to_owned(), |m| format!(
                        "{m:.1} min"
                    ))
            );
        }
        if self.dry_run {
            return Ok(());
        }
        let revision = git(sh);
        if revision.dirty {
            bail!(
                "the tree has uncommitted changes: a reproduced run must name the commit it ran \
                 (commit them first)"
            );
        }
        let scratch = paths.root.join("target/d1bench/reproduce");
        // Every run first, into scratch: a run put in place would leave the tree dirty for the
        // next, whose run.toml would then say so. Only when all are complete are they put in
        // place, together.
        let mut made = Vec::new();
        for q in &quoted {
            let out = scratch.join(q.dir.replace('/', "+"));
            let (dir, record) =
                run_recorded(sh, paths, &q.record, &out, q.dir, &scratch, self.force)?;
            made.push((q.dir, dir, record.run.id));
        }
        let placed: Vec<&str> = made.iter().map(|(committed, ..)| *committed).collect();
        let pairs = pairs_to_make_again(&placed);
        for (committed, dir, id) in made {
            let to = paths.root.join(committed);
            // A run's page (index.html) is written by `report`, not by the run: a committed run
            // that had one gets it again, with index.md and the page over runs kept out of docs/.
            let had_page = to.join(crate::html::run_page::PAGE).is_file();
            put_in_place(&dir, &to)?;
            if had_page {
                super::index::write_index(std::slice::from_ref(&to), Some(scratch.join("index")))?;
            }
            eprintln!("[reproduce] {committed} replaced by {id}");
        }
        // A calibration names its runs as given: from the root, as the committed ones read.
        std::env::set_current_dir(&paths.root)
            .with_context(|| format!("cannot enter {}", paths.root.display()))?;
        for (a, b) in pairs {
            write_between(Path::new(a), Path::new(b))
                .with_context(|| format!("calibrating {b} against {a} again"))?;
            eprintln!("[reproduce] calibrated {b} against {a} again");
        }
        for file in readme::rewrite(paths)? {
            eprintln!(
                "[reproduce] rewrote the generated sections of {}",
                file.display()
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paths::project_root;

    fn with_readings(id: &str, ms: &[f64]) -> RunRecord {
        let mut r = crate::records::run_record::tests_support::record();
        r.run.id = id.into();
        r.machine.speed = crate::records::host_speed::readings(ms);
        r
    }

    #[test]
    fn a_slower_host_is_refused_with_what_to_do_unless_forced() {
        let committed = with_readings("c", &[30.0, 30.5, 29.8, 30.2]);
        let slow = with_readings("now", &[50.0, 50.9, 49.5, 50.3])
            .machine
            .speed;
        let refused = fast_enough(&committed, &slow, false)
            .unwrap_err()
            .to_string();
        assert!(
            refused.contains("this host took 1.67× as long"),
            "{refused}"
        );
        assert!(
            refused.contains("against the committed run `c`"),
            "{refused}"
        );
        assert!(refused.contains("--force") && refused.contains("nothing was put in place"));
        let forced = fast_enough(&committed, &slow, true).unwrap().unwrap();
        assert!(forced.contains("1.67× as long"), "{forced}");
        let same = with_readings("now", &[30.1, 29.9, 30.4, 30.0])
            .machine
            .speed;
        assert_eq!(fast_enough(&committed, &same, false).unwrap(), None);
        // A faster host, and a committed run without readings, are not refused.
        let fast = with_readings("now", &[20.0, 20.1, 19.9, 20.2])
            .machine
            .speed;
        assert_eq!(fast_enough(&committed, &fast, false).unwrap(), None);
        let old = crate::records::run_record::tests_support::record();
        assert_eq!(fast_enough(&old, &slow, false).unwrap(), None);
    }

    #[test]
    fn every_quoted_run_parses_back_into_the_run_it_was() {
        let paths = Paths::new(project_root());
        for dir in readme::QUOTED_RUNS {
            let q = Quoted::read(&paths, dir).unwrap();
            let mut args = vec!["xtask".to_owned()];
            args.extend(command_args(&q.record));
            let flags::Task::Run(run) = flags::Xtask::try_parse_from(&args).unwrap().task else {
                panic!("{dir}: not a run");
            };
            assert_eq!(
                run.experiment.as_deref(),
                Some(q.record.run.experiment.as_str())
            );
            assert_eq!(run.target, q.record.run.target, "{dir}");
            assert_eq!(
                run.alternate_workers, q.record.run.alternate_workers,
                "{dir}"
            );
            assert_eq!(run.paired_workers, q.record.run.paired_workers, "{dir}");
            assert_eq!(run.no_baseline, q.record.run.baseline.is_none(), "{dir}");
            assert!(q.minutes().is_some_and(|m| m > 0.0), "{dir}");
        }
    }

    #[test]
    fn a_calibration_is_made_again_when_either_of_its_runs_is_put_in_place() {
        let pair = readme::CALIBRATED_PAIRS[0];
        assert_eq!(pairs_to_make_again(&[pair.0]), [pair]);
        assert_eq!(pairs_to_make_again(&[pair.1]), [pair]);
        assert_eq!(pairs_to_make_again(&[pair.0, pair.1]), [pair]);
        assert!(pairs_to_make_again(&[readme::durable::D1_BESIDE_DO]).is_empty());
    }

    /// Every between-runs calibration committed under docs/ is one reproduce knows to make
    /// again, naming the runs the list gives: one it did not know of would be deleted with its
    /// run and not come back.
    #[test]
    fn every_committed_between_runs_calibration_is_a_known_pair() {
        let root = project_root();
        let mut found = Vec::new();
        let mut stack = vec![root.join("docs")];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                } else if path
                    .file_name()
                    .is_some_and(|n| n == "calibration-between-runs.md")
                {
                    found.push(path);
                }
            }
        }
        assert!(
            !found.is_empty(),
            "the committed pair's calibration is under docs/"
        );
        for md in found {
            let b = md.parent().unwrap().strip_prefix(&root).unwrap();
            let text = std::fs::read_to_string(&md).unwrap();
            let pair = readme::CALIBRATED_PAIRS
                .into_iter()
                .find(|(_, pb)| Path::new(pb) == b)
                .unwrap_or_else(|| panic!("{}: not in readme::CALIBRATED_PAIRS", md.display()));
            let names = format!("Run a: `{}`; run b: `{}`.", pair.0, pair.1);
            assert!(
                text.contains(&names),
                "{}: should say {names}",
                md.display()
            );
        }
    }

    #[test]
    fn a_run_is_put_in_place_without_leaving_old_files_or_the_index() {
        let root = tempfile::tempdir().unwrap();
        let (from, to) = (root.path().join("new"), root.path().join("old"));
        std::fs::create_dir_all(&from).unwrap();
        std::fs::create_dir_all(&to).unwrap();
        std::fs::write(from.join("run.toml"), "new").unwrap();
        std::fs::write(from.join("index.md"), "index").unwrap();
        std::fs::write(to.join("run.toml"), "old").unwrap();
        std::fs::write(to.join("stale.csv"), "stale").unwrap();
        put_in_place(&from, &to).unwrap();
        let mut names: Vec<String> = std::fs::read_dir(&to)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["run.toml"]);
        assert_eq!(std::fs::read_to_string(to.join("run.toml")).unwrap(), "new");
        assert!(
            new_run_dir(root.path()).is_err(),
            "no run.toml in either: none found"
        );
    }
}
