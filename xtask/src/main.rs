//! cargo xtask: d1bench's task runner. One dispatch; each task lives in `tasks/`.
//!
//! The layers, each using only those below it: `tasks` (the commands) and `flags` (their command
//! line) → `pipeline` (one run of any study on any target) → `reports` (everything derived from
//! a run's files) → `records` (the run's files) → `targets` (sessions on local, sqlite, remote)
//! → `studies` (experiment and ladder files, their plans and costs) → `base` (the targets, the
//! clock, number formats), `paths`, `procs`, `toolchain`.

mod base;
mod flags;
mod paths;
mod pipeline;
mod procs;
mod records;
mod reports;
mod studies;
mod targets;
mod tasks;
mod toolchain;
mod worker_build;

use anyhow::Result;
use clap::Parser;
use xshell::Shell;

use crate::flags::{Task, Xtask};
use crate::paths::{Paths, project_root};

fn main() {
    let result = run();
    if procs::interrupted() {
        if let Err(e) = result {
            eprintln!("error: {e:#}");
        }
        std::process::exit(130);
    }
    if let Err(e) = result {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

fn run() -> Result<()> {
    let flags = Xtask::parse();
    procs::install_interrupt_handler()?;
    let sh = Shell::new()?;
    let paths = Paths::new(project_root());
    sh.change_dir(&paths.root);
    match flags.task {
        Task::Run(run) => run.run(&sh, &paths),
        Task::List => tasks::list(&paths),
        Task::Plot(plot) => plot.run(),
        Task::ParityReadme(parity) => parity.run(&paths),
        Task::Setup => tasks::setup(&sh, &paths),
        Task::CleanRemote(clean) => clean.run(&sh, &paths),
        Task::Matrix(matrix) => matrix.run(&paths),
        Task::Report(report) => report.run(),
        Task::Compare(compare) => {
            // Exit status 2, apart from errors' 1: the comparison ran and something got slower.
            if compare.run()?.regressions() > 0 {
                std::process::exit(2);
            }
            Ok(())
        }
        Task::LintWorkflows => tasks::workflows::lint(&sh, &paths),
        Task::Archive(archive) => archive.run(&sh, &paths),
        Task::BuildWorker(build) => build.run(&sh, &paths),
    }
}
