//! `cargo xtask parity-readme`: publishes ladder runs' parity tables under `reports/` and
//! rewrites the generated sections of the README and the docs (`docs/limits.md`,
//! `docs/workload-findings.md`) from them and the committed example runs.

use anyhow::{Context, Result, bail};

use crate::base::TargetKind;
use crate::flags;
use crate::paths::Paths;
use crate::readme;
use crate::records::{RunRecord, RunStatus, csv};
use crate::studies::ladder::report::parity::{ParityRow, Source, committed, table_name};

impl flags::ParityReadme {
    pub fn run(self, paths: &Paths) -> Result<()> {
        for (target, dir) in [
            (TargetKind::Local, &self.local),
            (TargetKind::Sqlite, &self.sqlite),
            (TargetKind::Remote, &self.remote),
            (TargetKind::Do, &self.durable_object),
            (TargetKind::Hyperdrive, &self.postgres),
        ] {
            let Some(dir) = dir else { continue };
            let table = dir.join("parity.csv");
            let rows: Vec<ParityRow> = csv::read(&table).with_context(|| {
                format!("{} is not a parity table of a ladder run", table.display())
            })?;
            let record = RunRecord::read(&dir.join("run.toml"))?;
            if record.run.target != target {
                bail!(
                    "{} is a run on the {} target, not {target}",
                    dir.display(),
                    record.run.target
                );
            }
            if record.run.status != RunStatus::Complete {
                bail!(
                    "{} ended {:?}, not complete with every rung reconciled; refusing to publish it",
                    dir.display(),
                    record.run.status
                );
            }
            // Every row names the run it came from, whatever the run's own table carried.
            let source = Source::of(&record);
            let rows: Vec<ParityRow> = rows
                .into_iter()
                .map(|r| ParityRow {
                    run: source.run.clone(),
                    commit: source.commit.clone(),
                    versions: source.versions.clone(),
                    ..r
                })
                .collect();
            let dest = committed(paths, table_name(target));
            csv::write(&dest, &rows)?;
            eprintln!(
                "{} ({} limits) → {}",
                table.display(),
                rows.len(),
                dest.display()
            );
        }
        for file in readme::rewrite(paths)? {
            eprintln!("rewrote the generated sections of {}", file.display());
        }
        Ok(())
    }
}
