//! One remote run's resources on Cloudflare, brought up: the run's name, its generated wrangler
//! config, the setup plan ([`setup_steps`]), and the deployments, each holding the
//! [`TeardownGuard`] (of [`super::teardown`]) that deletes what was created on every way out. A
//! D1 session's [`Deployment`] is the Worker with a database, a KV namespace and a Durable
//! Object; a `remote-hyperdrive` session's [`PgDeployment`] the Postgres Worker with a Hyperdrive
//! configuration of the user's server.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result, bail};

use super::api::Api;
use super::teardown::{Teardown, TeardownGuard};
use super::wrangler::{Secret, Step, Wrangler};
use crate::base::Location;
use crate::targets::hyperdrive::connection::ConnectionString;

/// Every remote run's Worker and database are named `d1bench-run-...`: `clean-remote` finds
/// leftovers by this prefix.
pub const NAME_PREFIX: &str = "d1bench-run-";

/// The secret the Worker checks bearer tokens against.
pub const TOKEN_SECRET: &str = "BENCH_TOKEN";

/// The name of one remote run's Worker and of its database (the same name for both):
/// `d1bench-run-[<tag>-]<UTC time>-<4 random hex digits>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunName(String);

impl RunName {
    pub fn new(tag: Option<&str>) -> Result<Self> {
        let (_, compact) = crate::base::clock::utc_now();
        let random = crate::targets::local::random_token()?;
        Ok(RunName(format!(
            "{}{}-{}",
            prefix(tag)?,
            compact.to_lowercase(),
            &random[..4]
        )))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// A given name, for tests that need to know it in advance.
    #[cfg(test)]
    pub fn fixed(name: &str) -> Self {
        RunName(name.to_owned())
    }
}

/// `d1bench-run-` or `d1bench-run-<tag>-`: what the names of runs with this tag start with.
pub fn prefix(tag: Option<&str>) -> Result<String> {
    match tag {
        None => Ok(NAME_PREFIX.to_owned()),
        Some(tag) => {
            check_tag(tag)?;
            Ok(format!("{NAME_PREFIX}{tag}-"))
        }
    }
}

/// A tag is 1 to 20 lowercase letters and digits: it goes into Worker names, which allow
/// little, and must not make one run's prefix a prefix of another tag's names.
pub fn check_tag(tag: &str) -> Result<()> {
    if tag.is_empty()
        || tag.len() > 20
        || !tag
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
    {
        bail!("--tag `{tag}` must be 1 to 20 lowercase letters and digits");
    }
    Ok(())
}

/// The ids a run's resources got when they were created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceIds {
    pub database: String,
    pub kv_namespace: String,
}

/// The wrangler config of a remote run: the built Worker, on workers.dev, with the run's
/// database bound as `DB`, its KV namespace (the cache workload's) as `CACHE`, and its SQLite-backed
/// Durable Object class `Store` as `STORE` (the Worker's `/do/` routes), created by the
/// configuration's one migration and deleted with the Worker. `entry` is
/// the built Worker's entry point. With `subrequests`, the Worker's `[limits] subrequests` is
/// set to it (the plan's default otherwise).
pub fn wrangler_config(
    name: &RunName,
    ids: &ResourceIds,
    entry: &Path,
    compatibility_date: &str,
    subrequests: Option<u32>,
) -> String {
    let limits = subrequests
        .map(|n| format!("\n[limits]\nsubrequests = {n}\n"))
        .unwrap_or_default();
    let config = format!(
        "{head}\
         [[d1_databases]]\n\
         binding = \"DB\"\n\
         database_name = {name_q}\n\
         database_id = {id}\n\
         \n\
         [[kv_namespaces]]\n\
         binding = {kv_binding}\n\
         id = {kv_id}\n\
         \n\
         [[durable_objects.bindings]]\n\
         name = \"STORE\"\n\
         class_name = \"Store\"\n\
         \n\
         [[migrations]]\n\
         tag = \"v1\"\n\
         new_sqlite_classes = [\"Store\"]\n",
        head = head("remote run", name, entry, compatibility_date),
        name_q = quote(name.as_str()),
        id = quote(&ids.database),
        kv_binding = quote(d1bench_core::workload::cache::KV_BINDING),
        kv_id = quote(&ids.kv_namespace),
    );
    config + &limits
}

/// The `compatibility_date` of worker/wrangler.toml: local and remote runs share one date.
pub fn compatibility_date(worker_toml: &Path) -> Result<String> {
    let text = std::fs::read_to_string(worker_toml)
        .with_context(|| format!("cannot read {}", worker_toml.display()))?;
    let table: toml::Table = text
        .parse()
        .with_context(|| format!("cannot parse {}", worker_toml.display()))?;
    table
        .get("compatibility_date")
        .and_then(|v| v.as_str())
        .map(str::to_owned)
        .with_context(|| format!("{} has no compatibility_date", worker_toml.display()))
}

/// The wrangler commands that bring a run up, in order: create the database, create the KV
/// namespace (titled as the run), deploy the Worker bound to both, give the Worker its bearer
/// token.
pub fn setup_steps(name: &RunName, location: Option<Location>, config: &Path) -> Vec<Step> {
    vec![
        Step::CreateDatabase {
            name: name.as_str().to_owned(),
            location,
        },
        Step::CreateKvNamespace {
            name: name.as_str().to_owned(),
        },
        Step::Deploy {
            config: config.to_owned(),
        },
        Step::PutSecret {
            key: TOKEN_SECRET.to_owned(),
            worker: name.as_str().to_owned(),
            config: config.to_owned(),
        },
    ]
}

/// What a run is brought up with.
#[derive(Debug, Clone)]
pub struct Setup {
    pub name: RunName,
    pub location: Option<Location>,
    /// The built Worker's entry point.
    pub entry: PathBuf,
    pub compatibility_date: String,
    /// Leave the Worker and the database on the account afterwards.
    pub keep: bool,
    /// The Worker's `limits.subrequests`, when the plan sets it.
    pub subrequests: Option<u32>,
}

/// A run's Worker, deployed with its database bound; torn down when dropped.
pub struct Deployment {
    /// The Worker's `https://<name>.<subdomain>.workers.dev` address.
    pub url: String,
    /// The bearer token the Worker accepts (its `BENCH_TOKEN` secret).
    pub token: Secret,
    /// The region wrangler said it created the database in, when it said.
    pub created_in_region: Option<String>,
    /// The database's id, from `d1 create`'s answer.
    pub database_id: String,
    /// `--keep`: the teardown leaves everything and says how to delete it.
    pub keep: bool,
    guard: TeardownGuard,
}

impl Deployment {
    /// Runs [`setup_steps`]; whatever fails, what was created is deleted before returning. The
    /// generated wrangler config is written into the runner's directory.
    pub fn create(wrangler: Arc<Wrangler>, setup: Setup) -> Result<Deployment> {
        let Setup {
            name,
            location,
            entry,
            compatibility_date,
            keep,
            subrequests,
        } = setup;
        let config: PathBuf = wrangler.dir().join("wrangler.toml");
        let token = Secret::new(crate::targets::local::random_token()?);
        let guard = TeardownGuard::new(Teardown::new(Arc::clone(&wrangler), keep));
        let mut url = None;
        let mut created_in_region = None;
        let mut database_id = None;
        for step in setup_steps(&name, location, &config) {
            match &step {
                Step::CreateDatabase { name, .. } => guard.teardown.note_database(name),
                Step::CreateKvNamespace { name } => guard.teardown.note_kv_namespace(name),
                Step::Deploy { .. } => guard.teardown.note_worker(name.as_str()),
                _ => {}
            }
            wrangler.say(&step.label());
            let answer = match &step {
                Step::PutSecret { .. } => wrangler.run_with_secret(&step, &token)?,
                _ => wrangler.run(&step)?,
            };
            match &step {
                Step::CreateDatabase { .. } => {
                    let text = answer.text();
                    let id = super::answers::parse_database_id(&text).with_context(|| {
                        format!(
                            "`{}` printed no database_id; it printed:\n{}",
                            step.label(),
                            text.trim()
                        )
                    })?;
                    created_in_region = super::answers::parse_created_region(&text);
                    database_id = Some(id);
                }
                Step::CreateKvNamespace { .. } => {
                    let text = answer.text();
                    let kv_namespace =
                        super::answers::parse_kv_namespace_id(&text).with_context(|| {
                            format!(
                                "`{}` printed no namespace id; it printed:\n{}",
                                step.label(),
                                text.trim()
                            )
                        })?;
                    let ids = ResourceIds {
                        database: database_id.clone().expect("the database is created first"),
                        kv_namespace,
                    };
                    let contents =
                        wrangler_config(&name, &ids, &entry, &compatibility_date, subrequests);
                    std::fs::write(&config, contents)
                        .with_context(|| format!("cannot write {}", config.display()))?;
                }
                Step::Deploy { .. } => url = Some(workers_dev_url(&step, &answer, &name)?),
                _ => {}
            }
        }
        Ok(Deployment {
            url: url.expect("the setup plan deploys"),
            token,
            created_in_region,
            database_id: database_id.expect("the setup plan creates the database"),
            keep,
            guard,
        })
    }

    /// Deletes the Worker and the database now (with `--keep`, says how to later).
    pub fn teardown(self) -> Result<()> {
        self.guard.finish()
    }
}

/// The address `wrangler deploy` (`step`) printed for the Worker `name`, or an error quoting
/// what it printed instead.
fn workers_dev_url(
    step: &Step,
    answer: &super::wrangler::Answer,
    name: &RunName,
) -> Result<String> {
    let text = answer.text();
    super::answers::parse_workers_dev_url(&text, name.as_str()).with_context(|| {
        format!(
            "`{}` printed no https://{}.<subdomain>.workers.dev address (does the account have \
             a workers.dev subdomain?); it printed:\n{}",
            step.label(),
            name.as_str(),
            text.trim()
        )
    })
}

/// The wrangler config of a `remote-hyperdrive` session: the built Postgres Worker (`entry`) on
/// workers.dev, its binding `PG` to the run's Hyperdrive configuration `hyperdrive_id`.
pub fn pg_wrangler_config(
    name: &RunName,
    hyperdrive_id: &str,
    entry: &Path,
    compatibility_date: &str,
) -> String {
    format!(
        "{head}[[hyperdrive]]\nbinding = \"PG\"\nid = {id}\n",
        head = head("remote-hyperdrive session", name, entry, compatibility_date),
        id = quote(hyperdrive_id),
    )
}

/// `s` as a TOML string.
fn quote(s: &str) -> String {
    toml::Value::String(s.to_owned()).to_string()
}

/// The top of a run's generated wrangler config, up to its bindings: what generated it for which
/// `run` ("remote run <name>"), the Worker's name, entry point and date, on workers.dev only.
fn head(run: &str, name: &RunName, entry: &Path, compatibility_date: &str) -> String {
    format!(
        "# wrangler configuration generated by d1bench for the {run} {name}; deleted with it.\n\
         name = {name_q}\n\
         main = {main}\n\
         compatibility_date = {date}\n\
         send_metrics = false\n\
         workers_dev = true\n\
         preview_urls = false\n\
         \n",
        name = name.as_str(),
        name_q = quote(name.as_str()),
        main = quote(&entry.to_string_lossy()),
        date = quote(compatibility_date),
    )
}

/// What a `remote-hyperdrive` session is brought up with.
#[derive(Debug, Clone)]
pub struct PgSetup {
    pub name: RunName,
    /// The user's server (`D1BENCH_HYPERDRIVE_URL`).
    pub origin: ConnectionString,
    /// The built Postgres Worker's entry point.
    pub entry: PathBuf,
    pub compatibility_date: String,
    pub keep: bool,
}

/// The Postgres Worker deployed with a Hyperdrive configuration of the user's server bound;
/// torn down (the Worker, then the configuration) when dropped.
pub struct PgDeployment {
    pub url: String,
    /// The bearer token the Worker accepts (its `BENCH_TOKEN` secret).
    pub token: Secret,
    /// The Hyperdrive configuration's id, from the API's answer.
    pub hyperdrive_id: String,
    pub keep: bool,
    guard: TeardownGuard,
}

impl PgDeployment {
    /// Creates the Hyperdrive configuration (caching off), deploys the Postgres Worker bound to
    /// it and gives it its token; whatever fails, what was created is deleted before returning.
    pub fn create(wrangler: Arc<Wrangler>, api: Arc<Api>, setup: PgSetup) -> Result<PgDeployment> {
        let PgSetup {
            name,
            origin,
            entry,
            compatibility_date,
            keep,
        } = setup;
        let config: PathBuf = wrangler.dir().join("wrangler.toml");
        let token = Secret::new(crate::targets::local::random_token()?);
        let teardown = Teardown::new(Arc::clone(&wrangler), keep).with_api(Arc::clone(&api));
        let guard = TeardownGuard::new(teardown);
        guard.teardown.note_hyperdrive(name.as_str(), None);
        wrangler.say(&format!(
            "creating the Hyperdrive configuration {name} for {origin} (query cache off)",
            name = name.as_str()
        ));
        let created = api.create_hyperdrive(name.as_str(), &origin)?;
        guard
            .teardown
            .note_hyperdrive(name.as_str(), Some(&created.id));
        let contents = pg_wrangler_config(&name, &created.id, &entry, &compatibility_date);
        std::fs::write(&config, contents)
            .with_context(|| format!("cannot write {}", config.display()))?;
        let deploy = Step::Deploy {
            config: config.clone(),
        };
        guard.teardown.note_worker(name.as_str());
        wrangler.say(&deploy.label());
        let url = workers_dev_url(&deploy, &wrangler.run(&deploy)?, &name)?;
        let secret = Step::PutSecret {
            key: TOKEN_SECRET.to_owned(),
            worker: name.as_str().to_owned(),
            config,
        };
        wrangler.say(&secret.label());
        wrangler.run_with_secret(&secret, &token)?;
        Ok(PgDeployment {
            url,
            token,
            hyperdrive_id: created.id,
            keep,
            guard,
        })
    }

    /// Deletes the Worker and the configuration now (with `--keep`, says how to later).
    pub fn teardown(self) -> Result<()> {
        self.guard.finish()
    }
}

/// How a run on a deployment went: the work's result and the teardown's, apart (the tests
/// drive a deployment this way; a run does through its session).
#[cfg(test)]
#[derive(Debug)]
pub struct Finished<T> {
    pub work: Result<T>,
    pub teardown: Result<()>,
}

#[cfg(test)]
impl<T> Finished<T> {
    /// The work's result, failed also when the teardown failed.
    pub fn into_result(self) -> Result<T> {
        match (self.work, self.teardown) {
            (Ok(value), Ok(())) => Ok(value),
            (Err(e), Ok(())) => Err(e),
            (Ok(_), Err(t)) => Err(t.context(
                "everything was measured, but deleting the run's Worker and database failed",
            )),
            (Err(e), Err(t)) => Err(e.context(format!(
                "and deleting the run's Worker and database failed too: {t:#}"
            ))),
        }
    }
}

/// Brings a run up, hands it to `work`, and tears it down whatever `work` did (a panic in
/// `work` tears down too, through the guard's drop). `Err` when the setup itself failed, after
/// deleting what the setup had created.
#[cfg(test)]
pub fn with_deployment<T>(
    wrangler: Arc<Wrangler>,
    setup: Setup,
    work: impl FnOnce(&Deployment) -> Result<T>,
) -> Result<Finished<T>> {
    let deployment = Deployment::create(wrangler, setup)?;
    let work = work(&deployment);
    let teardown = deployment.teardown();
    Ok(Finished { work, teardown })
}
