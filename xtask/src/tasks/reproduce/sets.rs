//! `cargo xtask reproduce --replicates N`: makes the README's replicate sets
//! ([`readme::replicates::SETS`]): for each set, N runs of its command one after another (the
//! command its first committed run records, or before the set exists the run it repeats), seeds
//! 1 to N, each run's rows and its order of probes from its own (`--seed i --order-seed i`: runs
//! that replayed one order would share what each probe's place in it does to its time, which no
//! interval over them could see; `stats::runs`); once every set asked for has all N complete, each replaces its folder
//! (`docs/runs/replicates/<set>/<run-id>/`) and the README is rewritten from them
//! (`cargo xtask calibrate --between <set>` then reads the variance between its runs).

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use xshell::Shell;

use super::{put_in_place, run_recorded};
use crate::paths::Paths;
use crate::readme::{self, replicates::SetSpec};
use crate::records::RunRecord;
use crate::records::replicates::RUNS_WANTED;
use crate::reports::provenance::command;

/// The sets `only` names (all when it names none), refusing a name that is no set.
fn chosen(only: &[String]) -> Result<Vec<SetSpec>> {
    let sets: Vec<SetSpec> = readme::replicates::SETS
        .into_iter()
        .filter(|s| only.is_empty() || only.iter().any(|o| o == s.name))
        .collect();
    if sets.is_empty() {
        let names: Vec<&str> = readme::replicates::SETS.iter().map(|s| s.name).collect();
        bail!(
            "--only {}: the replicate sets are {}",
            only.join(" "),
            names.join(", ")
        );
    }
    Ok(sets)
}

/// The command a set repeats, as the record of a run of it (`seed` left to the caller): its
/// newest committed run's, else the run the set repeats.
fn template(paths: &Paths, spec: SetSpec) -> Result<RunRecord> {
    if let Some(set) = spec.read(&paths.root)? {
        let newest = set.runs.last().expect("a set holds a run");
        return Ok(newest.record.clone());
    }
    let mut record = RunRecord::read(&paths.root.join(spec.source).join("run.toml"))?;
    if let Some(baseline) = spec.baseline {
        record.run.baseline = Some(baseline);
    }
    if let Some((experiment, target)) = spec.alone_on {
        record.run.experiment = experiment.to_owned();
        record.run.target = target;
        record.run.baseline = None;
    }
    if let Some(sessions) = spec.paired_sessions {
        record.run.alternate_workers = false;
        record.run.paired_workers = true;
        record.run.baseline = None;
        record.overrides.sessions = Some(sessions);
    }
    Ok(record)
}

/// The record whose command is the set's `i`-th run (from 1): the template with seed `i` for its
/// rows and for its order.
fn replicate_of(template: &RunRecord, i: u64) -> RunRecord {
    let mut record = template.clone();
    record.overrides.seed = Some(i);
    record.overrides.order_seed = Some(i);
    record
}

/// Makes the sets `only` names (all when none), `n` runs each.
pub fn make(
    sh: &Shell,
    paths: &Paths,
    n: usize,
    only: &[String],
    dry_run: bool,
    force: bool,
) -> Result<()> {
    if n < 2 {
        bail!(
            "--replicates {n}: a replicate set holds two runs or more (the findings ask for \
             {RUNS_WANTED})"
        );
    }
    let sets = chosen(only)?;
    let mut plans = Vec::new();
    for spec in sets {
        let template = template(paths, spec)?;
        let minutes = readme::run_minutes(&template).unwrap_or(f64::NAN);
        eprintln!(
            "[reproduce] {}: {n} runs of `{}` (seeds and order seeds 1 to {n}), about {:.0} min",
            spec.dir(),
            command(&replicate_of(&template, 1)),
            minutes * n as f64
        );
        plans.push((spec, template));
    }
    if dry_run {
        return Ok(());
    }
    if crate::records::run_record::git(sh).dirty {
        bail!(
            "the tree has uncommitted changes: a run of a replicate set must name the commit it \
             ran (commit them first)"
        );
    }
    let scratch = paths.root.join("target/d1bench/reproduce/replicates");
    // Every run of every set first, into scratch: a run put in place would leave the tree dirty
    // for the next. The old sets stay until all are complete.
    let mut made: Vec<(SetSpec, Vec<(PathBuf, String)>)> = Vec::new();
    for (spec, template) in &plans {
        let mut runs = Vec::new();
        for i in 1..=n {
            let record = replicate_of(template, i as u64);
            let out = scratch.join(spec.name).join(i.to_string());
            let name = format!("{} ({i} of {n})", spec.dir());
            let (dir, made) = run_recorded(sh, paths, &record, &out, &name, &scratch, force)?;
            runs.push((dir, made.run.id));
        }
        made.push((*spec, runs));
    }
    for (spec, runs) in made {
        let to = paths.root.join(spec.dir());
        replace_set(&to, &runs)?;
        eprintln!("[reproduce] {} replaced by {n} runs", spec.dir());
    }
    for file in readme::rewrite(paths)? {
        eprintln!(
            "[reproduce] rewrote the generated sections of {}",
            file.display()
        );
    }
    Ok(())
}

/// The set folder `to` emptied and filled with `runs`, each as `<run-id>/`.
fn replace_set(to: &Path, runs: &[(PathBuf, String)]) -> Result<()> {
    if to.is_dir() {
        std::fs::remove_dir_all(to)
            .map_err(|e| anyhow::anyhow!("cannot remove {}: {e}", to.display()))?;
    }
    for (dir, id) in runs {
        put_in_place(dir, &to.join(id))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flags;
    use crate::paths::project_root;
    use crate::reports::provenance::command_args;
    use clap::Parser;

    #[test]
    fn each_set_repeats_its_command_with_seeds_and_order_seeds_one_to_n() {
        let paths = Paths::new(project_root());
        for spec in chosen(&[]).unwrap() {
            let template = template(&paths, spec).unwrap();
            for i in 1..=3 {
                let record = replicate_of(&template, i);
                let mut args = vec!["xtask".to_owned()];
                args.extend(command_args(&record));
                let flags::Task::Run(run) = flags::Xtask::try_parse_from(&args).unwrap().task
                else {
                    panic!("{}: not a run", spec.name);
                };
                assert_eq!(run.seed, Some(i), "{}", spec.name);
                assert_eq!(run.order_seed, Some(i), "{}", spec.name);
                assert_eq!(run.target, template.run.target, "{}", spec.name);
                assert_eq!(run.alternate_workers, template.run.alternate_workers);
                assert_eq!(run.paired_workers, template.run.paired_workers);
            }
        }
        // The two Workers' set repeats `--alternate-workers --sessions 12`; D1's beside the
        // object, `--baseline do`.
        let two = command(&template(&paths, readme::replicates::TWO_WORKERS).unwrap());
        assert!(two.contains("--alternate-workers"), "{two}");
        assert!(two.contains("--sessions 12"), "{two}");
        // The paired set, `--paired-workers --sessions 8` and no baseline.
        let paired = command(&template(&paths, readme::replicates::TWO_WORKERS_PAIRED).unwrap());
        assert!(
            paired.contains("--no-baseline --paired-workers") && paired.contains("--sessions 8"),
            "{paired}"
        );
        assert!(!paired.contains("--alternate-workers"), "{paired}");
        let durable = command(&template(&paths, readme::replicates::D1_BESIDE_DO).unwrap());
        assert!(durable.contains("--baseline do"), "{durable}");
    }

    #[test]
    fn a_set_that_is_no_set_or_of_one_run_is_refused() {
        let err = chosen(&["example-run".to_owned()]).unwrap_err().to_string();
        assert!(
            err.contains("the replicate sets are column-sweep, d1-beside-do"),
            "{err}"
        );
        let paths = Paths::new(project_root());
        let sh = Shell::new().unwrap();
        let err = make(&sh, &paths, 1, &[], true, false)
            .unwrap_err()
            .to_string();
        assert!(err.contains("two runs or more"), "{err}");
        assert!(make(&sh, &paths, 3, &["column-sweep".to_owned()], true, false).is_ok());
    }

    #[test]
    fn a_set_is_replaced_whole_by_its_new_runs() {
        let root = tempfile::tempdir().unwrap();
        let to = root.path().join("set");
        std::fs::create_dir_all(to.join("old-run")).unwrap();
        std::fs::write(to.join("old-run/run.toml"), "old").unwrap();
        let mut runs = Vec::new();
        for id in ["a", "b"] {
            let dir = root.path().join("scratch").join(id);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("run.toml"), id).unwrap();
            runs.push((dir, format!("run-{id}")));
        }
        replace_set(&to, &runs).unwrap();
        let mut names: Vec<String> = std::fs::read_dir(&to)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["run-a", "run-b"]);
        assert_eq!(
            std::fs::read_to_string(to.join("run-b/run.toml")).unwrap(),
            "b"
        );
    }
}
