//! `cargo xtask merge`: one run from a workload's shard runs. The shard study's merge checks
//! and writes the records (`studies::workload::shard::merge`); this task makes the run
//! directory, then writes every report and the run's page from the files, as for any run.

use anyhow::Result;

use crate::flags;
use crate::paths::Paths;
use crate::studies::workload::shard::merge;

impl flags::Merge {
    pub fn run(self, paths: &Paths) -> Result<()> {
        let mut runs = merge::read(&self.dirs)?;
        let missing = merge::check(&mut runs, self.allow_missing)?;
        let first = &runs[0].record.run;
        let out = self
            .out
            .clone()
            .unwrap_or_else(|| paths.reports().join(&first.experiment));
        let run_dir = merge::create_dir(&out, first.target)?;
        eprintln!(
            "merging {} of {} shards into {}",
            runs.len(),
            runs[0].shard.of,
            run_dir.path.display()
        );
        if !missing.is_empty() {
            eprintln!(
                "shards missing: {}; the merged run's rates are what the {} present shards \
                 offered ({} of {} of the plan's)",
                missing
                    .iter()
                    .map(|k| format!("{k}/{}", runs[0].shard.of))
                    .collect::<Vec<_>>()
                    .join(", "),
                runs.len(),
                runs.len(),
                runs[0].shard.of
            );
        }
        let record = merge::merge(&runs, &missing, &run_dir)?;
        let rendered = crate::studies::render(&run_dir, true, false)?;
        let page = crate::html::run_pages::write(&run_dir, &record, &rendered.charts, false)?;
        println!("{}", crate::html::run_pages::link(&page.path));
        Ok(())
    }
}
