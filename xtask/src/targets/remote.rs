//! The remote target: the Worker on real Cloudflare, and the clean-up of what runs left there.
//!
//! A remote session creates a D1 database of its own (with the location hint), deploys the
//! Worker under the same run-specific name bound to it, gives the Worker a fresh bearer token as
//! a secret, waits until it answers, and is then measured over HTTPS exactly as locally (see
//! [`super::worker`]); it deletes the Worker and the database on every way out (success, error,
//! panic, Ctrl-C) unless `--keep`. [`wrangler`] holds the commands as data and the one runner
//! that executes them; [`lifecycle`] the order and [`teardown`] the deletion; [`api`] the one REST call a
//! run makes itself, and [`rest`] workload writes sent through D1's REST API.
//!
//! A `remote-hyperdrive` session ([`RemotePgHost`]) deploys the Postgres Worker instead, bound
//! to a Hyperdrive configuration it creates (through [`api::hyperdrive`]) for the server in
//! `D1BENCH_HYPERDRIVE_URL`, and deletes both the same ways.

pub mod answers;
pub mod api;
pub mod lifecycle;
pub mod rest;
pub mod teardown;
pub mod wrangler;

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use super::http::{Health, WorkerClient};
use crate::base::{AccountPlan, Location, PgWorker, TargetKind};
use crate::paths::Paths;
use crate::procs;
use crate::studies::cost::queries_per_invocation;
use crate::toolchain::Toolchain;

use crate::targets::hyperdrive::connection::ConnectionString;
use lifecycle::{Deployment, PgDeployment, PgSetup, RunName};
use teardown::Teardown;
use wrangler::{Credentials, Launcher, Pacing, Step, Wrangler};

/// How long a freshly deployed Worker may take to answer on workers.dev.
const READY_TIMEOUT: Duration = Duration::from_secs(120);

pub fn say(message: &str) {
    eprintln!("[remote] {message}");
}

/// What `run --target remote` needs beyond a local run, checked before anything starts.
#[derive(Debug, Clone)]
pub struct Options {
    /// The name of the run's Worker and database, chosen before anything is created.
    pub name: RunName,
    pub credentials: Credentials,
    pub location: Option<Location>,
    pub plan: AccountPlan,
    pub keep: bool,
    /// Turn on D1 read replication for the run's database: the plan reads in D1 sessions, the
    /// only reads a replica may serve.
    pub read_replication: bool,
    /// The Worker's `limits.subrequests` (the plan's default when `None`): the plan sets it to
    /// see whether it moves D1's query budget.
    pub subrequests: Option<u32>,
    /// The server a `remote-hyperdrive` target or baseline writes to (`D1BENCH_HYPERDRIVE_URL`).
    pub postgres: Option<ConnectionString>,
}

/// What a run asked of a remote target (`run`'s `--location`, `--plan`, `--keep` and `--tag`),
/// before it is checked.
#[derive(Debug, Clone, Default)]
pub struct Asked<'a> {
    pub location: Option<Location>,
    pub plan: Option<AccountPlan>,
    pub keep: bool,
    pub tag: Option<&'a str>,
    /// The run's baseline: a `remote-hyperdrive` one needs its server as the target does.
    pub baseline: Option<TargetKind>,
}

impl Options {
    /// `None` for a run on another target (which must not be asked anything remote); for a
    /// remote run, what it asked checked and the credentials read, or an error naming what is
    /// missing.
    pub fn for_target(target: TargetKind, asked: &Asked) -> Result<Option<Options>> {
        match target {
            TargetKind::Remote | TargetKind::RemoteDo | TargetKind::RemoteHyperdrive => {
                if let Some(tag) = asked.tag {
                    lifecycle::check_tag(tag)?;
                }
                let postgres =
                    if target == TargetKind::RemoteHyperdrive
                        || asked.baseline == Some(TargetKind::RemoteHyperdrive)
                    {
                        Some(super::hyperdrive::connection::given_server()?.with_context(|| {
                        format!(
                            "remote-hyperdrive needs {}: the connection string of a Postgres \
                             server that Cloudflare can reach (postgresql://user:password@host:\
                             port/database); the run creates a Hyperdrive configuration for it \
                             and deletes it afterwards",
                            super::hyperdrive::connection::SERVER_VAR
                        )
                    })?)
                    } else {
                        None
                    };
                Ok(Some(Options {
                    postgres,
                    name: RunName::new(asked.tag)?,
                    credentials: Credentials::from_env()?,
                    location: asked.location,
                    plan: asked.plan.unwrap_or(AccountPlan::Free),
                    keep: asked.keep,
                    read_replication: false,
                    subrequests: None,
                }))
            }
            other => {
                let given: Vec<&str> = [
                    ("--location", asked.location.is_some()),
                    ("--plan", asked.plan.is_some()),
                    ("--keep", asked.keep),
                    ("--tag", asked.tag.is_some()),
                ]
                .into_iter()
                .filter_map(|(flag, set)| set.then_some(flag))
                .collect();
                if !given.is_empty() {
                    bail!(
                        "{} only applies to --target remote, remote-do and remote-hyperdrive, not \
                         --target {}",
                        given.join(", "),
                        other.name()
                    );
                }
                Ok(None)
            }
        }
    }
}

impl Options {
    /// The options, asking for read replication when `sessions` (the plan reads in D1 sessions).
    pub fn replicated_if(self, sessions: bool) -> Self {
        Options {
            read_replication: sessions,
            ..self
        }
    }

    /// The options, with the Worker's `limits.subrequests` the plan sets (if any).
    pub fn with_subrequests(self, subrequests: Option<u32>) -> Self {
        Options {
            subrequests,
            ..self
        }
    }
}

impl RemoteRecord {
    /// What run.toml says of a remote run before its setup: its name, hint and plan.
    pub fn pending(options: &Options) -> Self {
        RemoteRecord {
            name: options.name.as_str().to_owned(),
            location_hint: options.location.map(|l| l.name().to_owned()),
            created_in_region: None,
            plan: options.plan.name().to_owned(),
            queries_per_invocation: queries_per_invocation(options.plan),
            served_by_region: Vec::new(),
            served_by_colo: Vec::new(),
            read_replication: None,
            subrequests: options.subrequests,
            hyperdrive: None,
            teardown: "pending".into(),
        }
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
    /// The database's read replication mode as the API reported it after the run turned it on
    /// (`auto`); absent when the plan has no reads in D1 sessions and it was left off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_replication: Option<String>,
    /// The Worker's `limits.subrequests` as the run's wrangler configuration set it; absent when
    /// left at the plan's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subrequests: Option<u32>,
    /// A `remote-hyperdrive` session's Hyperdrive configuration: its id, the server (password
    /// left out) and its query cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hyperdrive: Option<String>,
    /// `pending`, `deleted`, `kept` (`--keep`), or why deleting failed.
    pub teardown: String,
}

/// The wrangler a run uses: the override, or the pinned one the toolchain installed.
fn launcher_for_run(tools: &Toolchain) -> Launcher {
    Launcher::from_override().unwrap_or_else(|| Launcher::Node {
        node: tools.node_bin_dir.join("node"),
        wrangler_js: tools.wrangler_js.clone(),
    })
}

/// A run's Worker deployed on Cloudflare with its database; torn down by [`RemoteHost::teardown`]
/// or, failing that, when dropped (and from the interrupt handler).
pub struct RemoteHost {
    deployment: Deployment,
    /// What run.toml says of the deployment (the session adds where D1 served it).
    pub record: RemoteRecord,
    /// D1's REST API for the run's database, with the run's token.
    pub rest: Arc<rest::RestClient>,
}

impl RemoteHost {
    /// Creates the database, deploys the Worker, sets its token, and waits until it answers.
    /// Whatever fails, what was created is deleted before returning.
    pub fn start(
        paths: &Paths,
        tools: &Toolchain,
        options: &Options,
        warnings: &[String],
    ) -> Result<(Self, WorkerClient, Health)> {
        for warning in warnings {
            say(&format!("warning: {warning}"));
        }
        let name = options.name.clone();
        let wrangler = run_wrangler(paths, tools, options)?;
        let setup = lifecycle::Setup {
            name: name.clone(),
            location: options.location,
            entry: paths.worker_entry(),
            compatibility_date: lifecycle::compatibility_date(
                &paths.worker().join("wrangler.toml"),
            )?,
            keep: options.keep,
            subrequests: options.subrequests,
        };
        let deployment = Deployment::create(wrangler, setup)?;
        let read_replication = if options.read_replication {
            say(&format!(
                "turning on read replication for D1 database {} (the plan reads in D1 sessions)",
                name.as_str()
            ));
            // On failure the deployment is dropped here, which deletes it.
            let api = api::Api::from_env(&options.credentials, Pacing::CLOUDFLARE);
            Some(api.enable_read_replication(&deployment.database_id)?)
        } else {
            None
        };
        let client = WorkerClient::new(&deployment.url, deployment.token.expose());
        say(&format!("waiting for {} to answer", deployment.url));
        // On failure the deployment is dropped here, which deletes it.
        let health = wait_until_answering(&client, &deployment.url)?;
        let record = RemoteRecord {
            created_in_region: deployment.created_in_region.clone(),
            read_replication,
            ..RemoteRecord::pending(options)
        };
        let rest = Arc::new(rest::RestClient::from_env(
            &options.credentials,
            &deployment.database_id,
        ));
        Ok((
            RemoteHost {
                deployment,
                record,
                rest,
            },
            client,
            health,
        ))
    }

    /// Deletes the Worker and the database (with `--keep`, says how to later): how it went,
    /// for run.toml, and the error if it failed.
    pub fn teardown(self) -> (String, Result<()>) {
        let keep = self.deployment.keep;
        how_it_went(keep, self.deployment.teardown())
    }
}

/// What run.toml says of a teardown that ended in `result`, and the result.
fn how_it_went(keep: bool, result: Result<()>) -> (String, Result<()>) {
    match result {
        Ok(()) if keep => ("kept".into(), Ok(())),
        Ok(()) => ("deleted".into(), Ok(())),
        Err(e) => (format!("failed: {e:#}"), Err(e)),
    }
}

/// The runner of a run's wrangler calls, in its own directory under the scratch directory.
fn run_wrangler(paths: &Paths, tools: &Toolchain, options: &Options) -> Result<Arc<Wrangler>> {
    let name = options.name.as_str();
    let dir = paths.scratch().join("remote").join(name);
    let wrangler = Arc::new(Wrangler::new(
        launcher_for_run(tools),
        &dir,
        &options.credentials,
        Pacing::CLOUDFLARE,
        Arc::new(say),
    )?);
    say(&format!(
        "run {name}: its wrangler config and transcript go to {}",
        dir.display()
    ));
    Ok(wrangler)
}

/// The Postgres Worker deployed to Cloudflare with a Hyperdrive configuration of the user's
/// server bound; torn down by [`RemotePgHost::teardown`] or, failing that, when dropped (and
/// from the interrupt handler).
pub struct RemotePgHost {
    deployment: PgDeployment,
    /// What run.toml says of the deployment.
    pub record: RemoteRecord,
}

impl RemotePgHost {
    /// Creates the configuration, deploys the Worker bound to it, sets its token, and waits
    /// until it answers. Whatever fails, what was created is deleted before returning.
    pub fn start(
        paths: &Paths,
        tools: &Toolchain,
        options: &Options,
        server: &ConnectionString,
        warnings: &[String],
        which: PgWorker,
    ) -> Result<(Self, WorkerClient, Health)> {
        for warning in warnings {
            say(&format!("warning: {warning}"));
        }
        let wrangler = run_wrangler(paths, tools, options)?;
        let api = Arc::new(api::Api::from_env(&options.credentials, Pacing::CLOUDFLARE));
        let setup = PgSetup {
            name: options.name.clone(),
            origin: server.clone(),
            entry: paths.worker_pg_entry(which),
            compatibility_date: lifecycle::compatibility_date(
                &paths.worker_pg_of(which).join("wrangler.toml"),
            )?,
            keep: options.keep,
        };
        let deployment = PgDeployment::create(wrangler, api, setup)?;
        let client = WorkerClient::new(&deployment.url, deployment.token.expose());
        say(&format!("waiting for {} to answer", deployment.url));
        // On failure the deployment is dropped here, which deletes it.
        let health = wait_until_answering(&client, &deployment.url)?;
        let record = RemoteRecord {
            hyperdrive: Some(format!(
                "configuration {} for {server}, query cache off",
                deployment.hyperdrive_id
            )),
            ..RemoteRecord::pending(options)
        };
        Ok((RemotePgHost { deployment, record }, client, health))
    }

    /// Deletes the Worker and the configuration (with `--keep`, says how to later): how it
    /// went, for run.toml, and the error if it failed.
    pub fn teardown(self) -> (String, Result<()>) {
        let keep = self.deployment.keep;
        how_it_went(keep, self.deployment.teardown())
    }
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

/// Deletes the Workers, KV namespaces, databases and Hyperdrive configurations named (or, with
/// no names, every database, KV namespace and configuration whose name has the prefix of `tag`'s
/// runs, with the Worker of the same name). Configurations are listed through `api`; when that
/// fails (a token without Hyperdrive's permission), it says so and cleans the rest. Returns the
/// names handled.
pub fn clean(
    wrangler: &Arc<Wrangler>,
    api: Option<&Arc<api::Api>>,
    names: &[String],
    tag: Option<&str>,
    dry_run: bool,
) -> Result<Vec<String>> {
    let configs = match api.map(|api| api.list_hyperdrive()) {
        Some(Ok(configs)) => configs,
        Some(Err(e)) => {
            wrangler.say(&format!(
                "warning: Hyperdrive configurations were not looked for ({e:#}); those of \
                 remote-hyperdrive runs stay until this succeeds"
            ));
            Vec::new()
        }
        None => Vec::new(),
    };
    let names: Vec<String> = if names.is_empty() {
        let prefix = lifecycle::prefix(tag)?;
        let answer = wrangler.run(&Step::ListDatabases)?;
        let mut found: Vec<String> = answers::parse_database_list(&answer.stdout)?
            .into_iter()
            .map(|db| db.name)
            .filter(|name| name.starts_with(&prefix))
            .collect();
        // A namespace whose database is gone (a teardown cut short between the two) too.
        let answer = wrangler.run(&Step::ListKvNamespaces)?;
        found.extend(
            answers::parse_kv_namespace_list(&answer.stdout)?
                .into_iter()
                .map(|ns| ns.title)
                .filter(|title| title.starts_with(&prefix)),
        );
        // A remote-hyperdrive run has no database: its configuration names it.
        found.extend(
            configs
                .iter()
                .map(|c| c.name.clone())
                .filter(|name| name.starts_with(&prefix)),
        );
        found.sort();
        found.dedup();
        if found.is_empty() {
            wrangler.say(&format!(
                "nothing to clean: no D1 database, KV namespace or Hyperdrive configuration is \
                 named {prefix}*"
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
            "{}: Worker, KV namespace, D1 database and Hyperdrive configuration {name}",
            if dry_run { "would delete" } else { "deleting" }
        ));
    }
    if dry_run {
        return Ok(names);
    }
    let mut failed = Vec::new();
    for name in &names {
        let mut teardown = Teardown::leftover(Arc::clone(wrangler), name);
        if let (Some(api), Some(config)) = (api, configs.iter().find(|c| &c.name == name)) {
            teardown = teardown.with_api(Arc::clone(api));
            teardown.note_hyperdrive(name, Some(&config.id));
        }
        if let Err(e) = teardown.run() {
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
