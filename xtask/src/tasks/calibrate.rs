//! `cargo xtask calibrate`: runs an experiment through the normal pipeline with an even number of
//! sessions (or takes a run already made, `--from`), then the A/A analysis of
//! `studies::sweep::report::calibrate` on it; with `--between`, two runs already made calibrated
//! against each other.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use xshell::Shell;

use crate::flags;
use crate::paths::Paths;
use crate::records::StudyKind;
use crate::studies::sweep::report::calibrate::between::{write_between, write_between_set};
use crate::studies::sweep::report::calibrate::write_calibration;
use crate::studies::sweep::report::compare::MIN_SESSIONS;

/// The directories in `dir` (none when it does not exist yet).
fn dirs_in(dir: &Path) -> BTreeSet<PathBuf> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default()
}

impl flags::Calibrate {
    /// The `run` this calibration makes: the experiment, profile and target given, `sessions`.
    fn run_flags(&self, sessions: Option<usize>) -> flags::Run {
        flags::Run {
            profile: Some(self.profile.clone()),
            out: self.out.clone(),
            sessions,
            ..flags::Run::of(self.experiment.as_deref().unwrap_or_default(), self.target)
        }
    }

    /// The sessions to run: `--sessions`, checked, else twice the profile's (at least 4).
    fn sessions(&self, paths: &Paths) -> Result<usize> {
        let plan = crate::pipeline::plan(&self.run_flags(None), paths)?;
        let experiment = self.experiment.as_deref().unwrap_or_default();
        if plan.work.kind().name() != StudyKind::Sweep {
            bail!(
                "`{experiment}` is a {} study: calibrate applies to sweeps, whose points compare \
                 judges",
                format!("{:?}", plan.work.kind().name()).to_lowercase()
            );
        }
        let least = 2 * MIN_SESSIONS;
        match self.sessions {
            Some(n) if n < least || n % 2 == 1 => bail!(
                "--sessions {n}: an even number from {least} (two interleaved halves of \
                 {MIN_SESSIONS} sessions at least, as compare needs for a verdict over sessions)"
            ),
            Some(n) => Ok(n),
            None => Ok((2 * plan.work.sessions()).max(least)),
        }
    }

    /// `cargo xtask calibrate`: the run (unless `--from`), then calibration.csv and .md in it.
    pub fn run(self, sh: &Shell, paths: &Paths) -> Result<()> {
        match self.between.as_deref() {
            Some([a, b]) => return write_between(a, b).map(drop),
            Some([set]) => return write_between_set(set).map(drop),
            _ => {}
        }
        if let Some(dir) = &self.from {
            return write_calibration(dir, "--from").map(drop);
        }
        let sessions = self.sessions(paths)?;
        let run = self.run_flags(Some(sessions));
        let out = run
            .out
            .clone()
            .unwrap_or_else(|| paths.reports().join(run.experiment()));
        let before = dirs_in(&out);
        crate::pipeline::run(&run, sh, paths)?;
        let made: Vec<PathBuf> = dirs_in(&out).difference(&before).cloned().collect();
        let [run_dir] = made.as_slice() else {
            bail!(
                "calibrate cannot tell which run directory in {} its run made: {} appeared",
                out.display(),
                made.len()
            );
        };
        write_calibration(run_dir, "the calibration run")
            .with_context(|| format!("the run in {} was made", run_dir.display()))
            .map(drop)
    }
}
