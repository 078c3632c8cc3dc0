//! What a run can be asked to run, read from `experiments/`: a sweep ([`sweep`]), a ladder
//! ([`ladder`]), a workload under open-loop load ([`workload`]), or `limits` (every ladder); the shuffled order a sweep runs in ([`sweep::schedule`]);
//! what the command line may change of a sweep's profile ([`overrides`]); what each costs on
//! Cloudflare ([`cost`]); and what their files share ([`files`]). A name never reaches outside
//! `experiments/`.

pub mod cost;
pub mod files;
pub mod ladder;
pub mod overrides;
pub mod sweep;
pub mod workload;

use std::path::Path;

use anyhow::{Result, bail};

/// The name that runs every ladder and writes the parity table.
pub const LIMITS: &str = "limits";

/// A study loaded from its file (or files, for `limits`) and validated.
pub enum Study {
    Sweep(sweep::Experiment),
    /// One ladder, or every ladder for `limits`.
    Ladders(Vec<ladder::Ladder>),
    Workload(workload::Workload),
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

impl Study {
    /// Loads `name` from `dir`: `limits`, a ladder file, or an experiment file.
    pub fn load(dir: &Path, name: &str) -> Result<Study> {
        check_name(dir, name)?;
        if name == LIMITS {
            let ladders = ladder::names(dir)?
                .iter()
                .map(|n| ladder::Ladder::load(dir, n))
                .collect::<Result<Vec<_>>>()?;
            return Ok(Study::Ladders(ladders));
        }
        if ladder::is_ladder_file(&dir.join(format!("{name}.toml"))) {
            return Ok(Study::Ladders(vec![ladder::Ladder::load(dir, name)?]));
        }
        if workload::is_workload_file(&dir.join(format!("{name}.toml"))) {
            return Ok(Study::Workload(workload::Workload::load(dir, name)?));
        }
        Ok(Study::Sweep(sweep::Experiment::load(dir, name)?))
    }
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
            let err = Study::load(&dir, name).err().unwrap().to_string();
            assert!(
                err.contains("is not the name of an experiment or ladder"),
                "{name}: {err}"
            );
        }
        assert!(matches!(
            Study::load(&dir, "column-sweep").unwrap(),
            Study::Sweep(_)
        ));
        assert!(matches!(
            Study::load(&dir, LIMITS).unwrap(),
            Study::Ladders(l) if l.len() >= 10
        ));
    }
}
