//! What a run can be asked to run, read from `experiments/`, and the one list of the kinds of
//! study ([`KINDS`]): a sweep ([`sweep`]), a ladder or `limits`, every ladder ([`ladder`]), a
//! workload under open-loop load ([`workload`]), each behind the traits of [`kind`]; what the
//! command line may change of a sweep's profile ([`overrides`]); what a study costs on
//! Cloudflare ([`cost`]); what their files share ([`files`]) and their dry runs print
//! ([`dry_run`]); the progress of a run's records ([`progress`]). A name never reaches outside
//! `experiments/`.

pub mod cost;
pub mod dry_run;
pub mod files;
pub mod kind;
pub mod ladder;
pub mod overrides;
pub mod progress;
pub mod sweep;
pub mod workload;

use std::path::Path;

use anyhow::{Result, bail};

use crate::records::{RunDir, RunRecord, StudyKind};
use crate::reports::Rendered;
use kind::{Kind, Study};

pub use ladder::LIMITS;

/// Every kind of study, in the order they claim a study's name: a fourth kind is a folder of
/// its own and one line here. The last takes every file the others do not claim.
pub static KINDS: [&dyn Kind; 3] = [
    &ladder::kind::LadderKind,
    &workload::kind::WorkloadKind,
    &sweep::kind::SweepKind,
];

/// The kind a run recorded as its `kind`.
pub fn kind_of(name: StudyKind) -> &'static dyn Kind {
    *KINDS
        .iter()
        .find(|k| k.name() == name)
        .expect("every kind run.toml can name is in KINDS")
}

/// Checks that `name` names a file inside `dir` and nothing else: letters, digits, `-` and `_`
/// (no path separators, no `..`).
pub fn check_name(dir: &Path, name: &str) -> Result<()> {
    let valid = !name.is_empty()
        && name.len() <= 100
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !valid {
        bail!(
            "`{name}` is not the name of an experiment or ladder: a name is the stem of a file in {} \
             (letters, digits, `-` and `_`; no paths); see `cargo xtask list`",
            dir.display()
        );
    }
    Ok(())
}

/// The kind that claims `name` in `dir`, if any does (none does for a name without a file).
pub fn kind_of_file(dir: &Path, name: &str) -> Option<&'static dyn Kind> {
    KINDS.iter().copied().find(|k| k.claims(dir, name))
}

/// The study named `name` in `dir`, of whichever kind claims it; an unknown name lists the
/// experiments (the files of the last kind, sweeps).
pub fn load(dir: &Path, name: &str) -> Result<Box<dyn Study>> {
    check_name(dir, name)?;
    let Some(kind) = kind_of_file(dir, name) else {
        let fallback = KINDS[KINDS.len() - 1].name();
        bail!(
            "no experiment named `{name}` in {}; the experiments are: {}",
            dir.display(),
            names(dir, fallback)?.join(", ")
        );
    };
    kind.load(dir, name)
}

/// The names in `dir` of the files `kind` claims first, sorted.
pub fn names(dir: &Path, kind: StudyKind) -> Result<Vec<String>> {
    Ok(files::toml_stems(dir)?
        .into_iter()
        .filter(|name| kind_of_file(dir, name).is_some_and(|k| k.name() == kind))
        .collect())
}

/// Writes every report of `run_dir` from its run.toml and record files, by the kind of study
/// it ran; with `print`, shows the key tables (the files written are listed by the run's page
/// and summary.md, not on the terminal). With `titles`, charts carry their titles (their
/// captions always do). The same code serves `cargo xtask run` at its end, `cargo xtask plot`
/// and `cargo xtask report`, so they cannot disagree.
pub fn render(run_dir: &RunDir, print: bool, titles: bool) -> Result<Rendered> {
    let record = RunRecord::read(&run_dir.run_toml())?;
    let rendered = kind_of(record.run.kind).render(run_dir, &record, titles)?;
    if print {
        print!("{}", rendered.tables);
    }
    Ok(rendered)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paths::project_root;

    #[test]
    fn a_name_cannot_leave_the_experiments_folder() {
        let dir = project_root().join("experiments");
        for name in [
            "../Cargo",
            "/etc/passwd",
            "..",
            "a/b",
            "",
            "column-sweep.toml",
        ] {
            let err = load(&dir, name).err().unwrap().to_string();
            assert!(
                err.contains("is not the name of an experiment or ladder"),
                "{name}: {err}"
            );
        }
        assert_eq!(
            kind_of_file(&dir, "column-sweep").map(|k| k.name()),
            Some(StudyKind::Sweep)
        );
        assert!(load(&dir, "column-sweep").is_ok());
        assert_eq!(
            kind_of_file(&dir, LIMITS).map(|k| k.name()),
            Some(StudyKind::Ladder)
        );
        assert!(
            load(&dir, LIMITS)
                .unwrap()
                .listing()
                .starts_with("every ladder")
        );
    }

    #[test]
    fn an_unknown_experiment_lists_the_known_ones() {
        let err = load(&project_root().join("experiments"), "colum-sweep")
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("no experiment named `colum-sweep`"), "{err}");
        assert!(err.contains("column-sweep"), "{err}");
    }

    #[test]
    fn every_kind_run_toml_names_is_registered_once() {
        for kind in [StudyKind::Sweep, StudyKind::Ladder, StudyKind::Workload] {
            assert_eq!(KINDS.iter().filter(|k| k.name() == kind).count(), 1);
        }
    }

    #[test]
    fn each_shipped_file_is_claimed_by_the_kind_its_keys_say() {
        let dir = project_root().join("experiments");
        assert_eq!(
            names(&dir, StudyKind::Ladder).unwrap(),
            ladder::names(&dir).unwrap()
        );
        for name in names(&dir, StudyKind::Workload).unwrap() {
            assert!(workload::is_workload_file(
                &dir.join(format!("{name}.toml"))
            ));
        }
        let sweeps = names(&dir, StudyKind::Sweep).unwrap();
        assert!(sweeps.iter().any(|n| n == "column-sweep"), "{sweeps:?}");
        assert!(
            !sweeps.iter().any(|n| n == "columns" || n == "read-path"),
            "{sweeps:?}"
        );
    }
}
