//! cargo xtask: d1bench's task runner. One dispatch; each task lives in its own module.

mod client;
mod experiment;
mod flags;
mod ladder;
mod ladder_chart;
mod ladder_run;
mod local;
mod matrix;
mod parity;
mod paths;
mod plot;
mod points;
mod procs;
mod provenance;
mod reconcile;
mod remote;
mod report;
mod report_index;
mod run;
mod rung_target;
mod sqlite;
mod stats;
mod summary;
mod target;
mod toolchain;
mod workflows;

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
        Task::List => list(&paths),
        Task::Plot(plot) => plot.run(),
        Task::ParityReadme(parity) => parity.run(&paths),
        Task::Setup => {
            let tools = toolchain::ensure(&sh, &paths)?;
            tools.build_worker(&sh, &paths)?;
            eprintln!("[setup] ready: toolchain installed and the Worker built");
            Ok(())
        }
        Task::CleanRemote(clean) => clean.run(&sh, &paths),
        Task::Matrix(matrix) => matrix.run(&paths),
        Task::Report(report) => report.run(),
        Task::LintWorkflows => workflows::lint(&sh, &paths),
    }
}

/// `cargo xtask list`: each experiment with its description; a broken file shows its error.
fn list(paths: &Paths) -> Result<()> {
    let dir = paths.experiments();
    let names = experiment::toml_stems(&dir)?;
    let width = names.iter().map(String::len).max().unwrap_or(0);
    for name in names {
        if ladder::is_ladder_file(&dir.join(format!("{name}.toml"))) {
            match ladder::Ladder::load(&dir, &name) {
                Ok(l) => {
                    let profiles = l
                        .file
                        .profile
                        .keys()
                        .map(String::as_str)
                        .collect::<Vec<_>>();
                    println!(
                        "{name:width$}  ladder: {} [profiles: {}]",
                        l.file.description,
                        profiles.join(", ")
                    );
                }
                Err(e) => println!("{name:width$}  INVALID: {e:#}"),
            }
            continue;
        }
        match experiment::Experiment::load(&dir, &name) {
            Ok(e) => {
                let profiles = e
                    .file
                    .profile
                    .keys()
                    .map(String::as_str)
                    .collect::<Vec<_>>()
                    .join(", ");
                println!(
                    "{name:width$}  {} [profiles: {profiles}]",
                    e.file.description
                );
            }
            Err(e) => println!("{name:width$}  INVALID: {e:#}"),
        }
    }
    println!(
        "{:width$}  every ladder, then the limits parity table (parity.csv, summary.md)",
        ladder_run::LIMITS
    );
    Ok(())
}
