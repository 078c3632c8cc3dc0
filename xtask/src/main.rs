//! cargo xtask: d1bench's task runner. One dispatch; each task lives in the library's `tasks/`.

use anyhow::Result;
use clap::Parser;
use xshell::Shell;

use xtask::flags::{Task, Xtask};
use xtask::paths::{Paths, project_root};
use xtask::records::shard::ShardRefusal;
use xtask::studies::sweep::report::compare::Outcome;
use xtask::{procs, tasks};

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
        Task::Run(run) => shard_refusals_exit_2(run.run(&sh, &paths)),
        Task::List => tasks::list(&paths),
        Task::Plot(plot) => plot.run(),
        Task::ParityReadme(parity) => parity.run(&paths),
        Task::Setup => tasks::setup(&sh, &paths),
        Task::CleanRemote(clean) => clean.run(&sh, &paths),
        Task::Matrix(matrix) => matrix.run(&paths),
        Task::Report(report) => report.run(),
        Task::Compare(compare) => {
            // As diff has it: 0 no regression, 1 a regression, 2 trouble (clap's usage errors
            // already exit 2).
            let outcome = match compare.run(&paths) {
                Ok(comparison) => comparison.outcome(),
                Err(e) => {
                    eprintln!("error: {e:#}");
                    Outcome::Trouble
                }
            };
            std::process::exit(outcome.exit_code())
        }
        Task::Calibrate(calibrate) => calibrate.run(&sh, &paths),
        Task::Export(export) => export.run(),
        Task::LintWorkflows => tasks::workflows::lint(&sh, &paths),
        Task::Archive(archive) => archive.run(&sh, &paths),
        Task::BuildWorker(build) => build.run(&sh, &paths),
        Task::Reproduce(reproduce) => reproduce.run(&sh, &paths),
        Task::Advise(advise) => match advise.run(&sh, &paths) {
            // Input no strategy can answer for exits 2, as clap's usage errors do.
            Err(e) if e.downcast_ref::<tasks::advise::BadInput>().is_some() => {
                eprintln!("error: {e:#}");
                std::process::exit(2)
            }
            other => other,
        },
        Task::Merge(merge) => shard_refusals_exit_2(merge.run(&paths)),
        Task::GeneratorCeiling(ceiling) => ceiling.run(&paths),
    }
}

/// Shards that cannot be run or merged (a bad `--shard`, runs that are not the shards of one
/// run) exit 2, as clap's usage errors do.
fn shard_refusals_exit_2(result: Result<()>) -> Result<()> {
    match result {
        Err(e) if e.downcast_ref::<ShardRefusal>().is_some() => {
            eprintln!("error: {e:#}");
            std::process::exit(2)
        }
        other => other,
    }
}
