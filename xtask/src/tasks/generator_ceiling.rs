//! `cargo xtask generator-ceiling`: measures the load generator's ceiling on this machine (the
//! workload shard study's calibration, `studies::workload::shard::ceiling`) and writes it where
//! `run --dry-run` reads it.

use anyhow::{Result, bail};

use crate::flags;
use crate::paths::Paths;
use crate::studies::workload::shard::ceiling::{self, Ceiling};

impl flags::GeneratorCeiling {
    pub fn run(self, paths: &Paths) -> Result<()> {
        if !(0.2..=10.0).contains(&self.seconds) {
            bail!(
                "--seconds {} is out of range: each rate is tried for 0.2 to 10 seconds",
                self.seconds
            );
        }
        let measured: Ceiling = ceiling::measure(self.seconds)?;
        let path = self.out.unwrap_or_else(|| paths.root.join(ceiling::FILE));
        measured.write(&path)?;
        println!(
            "one process keeps {} requests/s on time here and sends {} ({} × {}{}, load {} at \
             the start): written to {}",
            measured.per_process_per_s,
            measured.throughput_per_s,
            measured.cpus,
            measured.cpu,
            measured
                .cpu_quota_cores
                .map_or(String::new(), |q| format!(", capped to {q:.2} cores")),
            measured
                .load_at_start
                .map_or("unknown".to_owned(), |l| format!("{l:.2}")),
            path.display()
        );
        Ok(())
    }
}
