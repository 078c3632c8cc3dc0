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
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TargetKind {
    /// The Worker in workerd via `wrangler dev`, with a real local D1 (SQLite). No account needed.
    Local,
    /// Real SQLite in-process with D1's documented limits applied: the bare baseline, not D1.
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

/// A deliberate corruption of every probe's table, to prove that reconciliation catches it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DebugCorruption {
    /// Change the last byte of the first row's first text value.
    TextByte,
    /// Add one to the first row's first integer (needs 3 columns or more).
    Integer,
}

#[derive(Debug, clap::Args)]
pub struct Run {
    /// The experiment: the name of a file in experiments/ without `.toml`.
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
    /// Skip the bare-SQLite baseline that a run on the local target also measures (the dashed
    /// grey reference line of its time chart).
    #[arg(long)]
    pub no_baseline: bool,
    /// Debugging the harness: corrupt one row of every probe's table after its writes, to see
    /// reconciliation catch it. The run is then invalid and exits non-zero.
    #[arg(long, value_enum, value_name = "KIND")]
    pub debug_corrupt: Option<DebugCorruption>,
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
    fn baseline_and_corruption_flags_parse() {
        let Task::Run(run) = Xtask::try_parse_from([
            "xtask",
            "run",
            "row-size-sweep",
            "--target",
            "sqlite",
            "--no-baseline",
            "--debug-corrupt",
            "text-byte",
        ])
        .unwrap()
        .task
        else {
            panic!("not a run")
        };
        assert_eq!(run.target, TargetKind::Sqlite);
        assert!(run.no_baseline);
        assert_eq!(run.debug_corrupt, Some(DebugCorruption::TextByte));
        let err = Xtask::try_parse_from(["xtask", "run", "x", "--debug-corrupt", "all"])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("text-byte") && err.contains("integer"),
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
