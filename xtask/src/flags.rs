//! The whole `cargo xtask` command line, declared in one place.

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(
    name = "cargo xtask",
    bin_name = "cargo xtask",
    about = "d1bench: measure which Cloudflare D1 write strategy wins and which limit stops you first",
    version
)]
pub struct Xtask {
    #[command(subcommand)]
    pub task: Task,
}

#[derive(Debug, Subcommand)]
pub enum Task {
    /// Run an experiment from experiments/<name>.toml and write its report.
    Run(Run),
    /// List the experiments with their one-line descriptions.
    List,
    /// Redraw a run's charts from its results.csv, without running anything.
    Plot(Plot),
    /// Install the toolchain and build the Worker, without running anything.
    Setup,
    /// Rewrite the README's parity table from the parity.csv of `run limits` runs.
    ParityReadme(ParityReadme),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TargetKind {
    /// The Worker in workerd via `wrangler dev`, with a real local D1 (SQLite). No account needed.
    Local,
    /// Real SQLite in-process with D1's documented limits applied (ladders of SQLite's limits).
    Sqlite,
}

impl TargetKind {
    pub fn name(self) -> &'static str {
        match self {
            TargetKind::Local => "local",
            TargetKind::Sqlite => "sqlite",
        }
    }
}

#[derive(Debug, clap::Args)]
pub struct Run {
    /// The experiment or ladder: the name of a file in experiments/ without `.toml`; `limits`
    /// runs every ladder and writes the parity table.
    pub experiment: String,
    /// Where the Worker runs.
    #[arg(long, value_enum, default_value = "local")]
    pub target: TargetKind,
    /// Which profile of the experiment file to run (default: the file's `default-profile`).
    #[arg(long)]
    pub profile: Option<String>,
    /// Directory the run directory is created in (default: reports/<experiment>/).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub struct ParityReadme {
    /// A `run limits --target local` run directory whose parity.csv becomes reports/parity-local.csv.
    #[arg(long, value_name = "RUN_DIR")]
    pub local: Option<PathBuf>,
    /// A `run limits --target sqlite` run directory whose parity.csv becomes reports/parity-sqlite.csv.
    #[arg(long, value_name = "RUN_DIR")]
    pub sqlite: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub struct Plot {
    /// A run directory holding results.csv and run.toml.
    pub run_dir: PathBuf,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_cli_is_well_formed() {
        Xtask::command().debug_assert();
    }

    #[test]
    fn an_unknown_flag_is_named() {
        let err = Xtask::try_parse_from(["xtask", "run", "column-sweep", "--fast"]).unwrap_err();
        assert!(
            err.to_string().contains("unexpected argument '--fast'"),
            "{err}"
        );
    }

    #[test]
    fn an_unknown_target_lists_the_known_ones() {
        let err = Xtask::try_parse_from(["xtask", "run", "column-sweep", "--target", "mars"])
            .unwrap_err();
        assert!(err.to_string().contains("invalid value 'mars'"), "{err}");
        assert!(err.to_string().contains("local"), "{err}");
    }
}
