//! One remote run's resources on Cloudflare, deleted: the order ([`teardown_steps`]: the Worker,
//! its KV namespace and database; then, through the API, its Hyperdrive configuration) and the [`Teardown`] that
//! deletes what is noted on every way out: explicitly, on drop ([`TeardownGuard`]), and from the
//! interrupt handler.

use std::sync::{Arc, Mutex};

use anyhow::{Context, Result};

use super::api::Api;
use super::api::hyperdrive::Deleted;
use super::wrangler::{Step, Wrangler};
use crate::procs::{self, CleanupRegistration};

/// The wrangler commands that remove a run: the Worker first, then its KV namespace, then its
/// database. In that order a failure leaves the database, by which `clean-remote` finds the
/// run again (and a namespace left alone is found by its title too).
pub fn teardown_steps(
    worker: Option<&str>,
    kv_namespace: Option<&str>,
    database: Option<&str>,
) -> Vec<Step> {
    let mut steps = Vec::new();
    if let Some(name) = worker {
        steps.push(Step::DeleteWorker {
            name: name.to_owned(),
        });
    }
    if let Some(name) = kv_namespace {
        steps.push(Step::DeleteKvNamespace {
            name: name.to_owned(),
        });
    }
    if let Some(name) = database {
        steps.push(Step::DeleteDatabase {
            name: name.to_owned(),
        });
    }
    steps
}

/// What exists (or may exist: noted before the step that creates it) on the account.
#[derive(Debug, Default)]
struct Noted {
    worker: Option<String>,
    /// The KV namespace's title (the run's name): what `kv namespace delete` takes.
    kv_namespace: Option<String>,
    database: Option<String>,
    /// The Hyperdrive configuration's name, and its id once the API gave it.
    hyperdrive: Option<(String, Option<String>)>,
}

impl Noted {
    fn is_empty(&self) -> bool {
        self.worker.is_none()
            && self.kv_namespace.is_none()
            && self.database.is_none()
            && self.hyperdrive.is_none()
    }
}

/// Deletes what a run created. Safe to run from several threads and several times: each run
/// deletes what is noted at that moment, under a lock held until it is done, so the interrupt
/// handler waits for a teardown the main thread has started instead of exiting under it.
pub struct Teardown {
    wrangler: Arc<Wrangler>,
    /// The REST API, for what wrangler is not used to delete (a Hyperdrive configuration).
    api: Option<Arc<Api>>,
    noted: Mutex<Noted>,
    keep: bool,
}

impl Teardown {
    pub fn new(wrangler: Arc<Wrangler>, keep: bool) -> Self {
        Teardown {
            wrangler,
            api: None,
            noted: Mutex::new(Noted::default()),
            keep,
        }
    }

    /// The teardown, deleting Hyperdrive configurations through `api`.
    pub fn with_api(self, api: Arc<Api>) -> Self {
        Teardown {
            api: Some(api),
            ..self
        }
    }

    /// Notes a Hyperdrive configuration about to be created (found by its name if the creation
    /// was cut short), or found with its id.
    pub fn note_hyperdrive(&self, name: &str, id: Option<&str>) {
        self.lock().hyperdrive = Some((name.to_owned(), id.map(str::to_owned)));
    }

    /// A teardown of a run found on the account: its Worker, KV namespace and database share
    /// `name` (what is not there counts as deleted).
    pub fn leftover(wrangler: Arc<Wrangler>, name: &str) -> Self {
        let teardown = Teardown::new(wrangler, false);
        teardown.note_worker(name);
        teardown.note_kv_namespace(name);
        teardown.note_database(name);
        teardown
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Noted> {
        self.noted.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Notes a database about to be created: a step cut short may still have created it.
    pub(super) fn note_database(&self, name: &str) {
        self.lock().database = Some(name.to_owned());
    }

    /// Notes a KV namespace about to be created, for the same reason.
    pub(super) fn note_kv_namespace(&self, name: &str) {
        self.lock().kv_namespace = Some(name.to_owned());
    }

    /// Notes a Worker about to be deployed, for the same reason.
    pub(super) fn note_worker(&self, name: &str) {
        self.lock().worker = Some(name.to_owned());
    }

    /// Deletes what is noted: the Worker, the KV namespace and the database, then the Hyperdrive
    /// configuration, no longer bound to a Worker (or, with `--keep`, says how to).
    pub fn run(&self) -> Result<()> {
        let mut noted = self.lock();
        if noted.is_empty() {
            return Ok(());
        }
        if self.keep {
            let config = noted.hyperdrive.as_ref().map(|(name, _)| name.clone());
            let names: Vec<String> = [&noted.worker, &noted.kv_namespace, &noted.database, &config]
                .into_iter()
                .flatten()
                .cloned()
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect();
            self.wrangler.say(&format!(
                "--keep: what the run created stays on the account; delete it with `cargo xtask clean-remote {}`",
                names.join(" ")
            ));
            *noted = Noted::default();
            return Ok(());
        }
        let steps = teardown_steps(
            noted.worker.as_deref(),
            noted.kv_namespace.as_deref(),
            noted.database.as_deref(),
        );
        for step in steps {
            match &step {
                Step::DeleteWorker { name } => {
                    self.wrangler.say(&format!("deleting the Worker {name}"));
                    self.wrangler.run(&step).with_context(|| {
                        format!(
                            "cannot delete the Worker {name}; what the run created with it is left \
                             so that `cargo xtask clean-remote` finds both"
                        )
                    })?;
                    noted.worker = None;
                }
                Step::DeleteKvNamespace { name } => {
                    self.wrangler
                        .say(&format!("deleting the KV namespace {name}"));
                    self.wrangler.run(&step).with_context(|| {
                        format!(
                            "cannot delete the KV namespace {name}; its database is left so that \
                             `cargo xtask clean-remote` finds both"
                        )
                    })?;
                    noted.kv_namespace = None;
                }
                Step::DeleteDatabase { name } => {
                    self.wrangler
                        .say(&format!("deleting the D1 database {name}"));
                    self.wrangler.run(&step).with_context(|| {
                        format!(
                            "cannot delete the D1 database {name}; `cargo xtask clean-remote {name}` retries"
                        )
                    })?;
                    noted.database = None;
                }
                other => unreachable!("{other:?} is not a teardown step"),
            }
        }
        if let Some((name, id)) = noted.hyperdrive.clone() {
            self.delete_hyperdrive(&name, id.as_deref())?;
            noted.hyperdrive = None;
        }
        Ok(())
    }
}

impl Teardown {
    /// Deletes the Hyperdrive configuration `name` (by `id`, or found by its name when the
    /// creation was cut short before the API answered): the Worker bound to it is gone.
    fn delete_hyperdrive(&self, name: &str, id: Option<&str>) -> Result<()> {
        let api = self
            .api
            .as_ref()
            .context("a Hyperdrive configuration was noted without the API to delete it")?;
        let cannot = || {
            format!(
                "cannot delete the Hyperdrive configuration {name}; `cargo xtask clean-remote \
                 {name}` retries"
            )
        };
        let id = match id {
            Some(id) => id.to_owned(),
            None => match api
                .list_hyperdrive()
                .with_context(cannot)?
                .into_iter()
                .find(|c| c.name == name)
            {
                Some(found) => found.id,
                None => return Ok(()),
            },
        };
        self.wrangler.say(&format!(
            "deleting the Hyperdrive configuration {name} ({id})"
        ));
        match api.delete_hyperdrive(&id).with_context(cannot)? {
            Deleted::Now => {}
            Deleted::AlreadyGone => self.wrangler.say(&format!(
                "the Hyperdrive configuration {name} was already gone"
            )),
        }
        Ok(())
    }
}

/// Runs a [`Teardown`] when dropped (unless [`TeardownGuard::finish`] ran it), and on an
/// interrupt while alive.
pub struct TeardownGuard {
    pub(super) teardown: Arc<Teardown>,
    finished: bool,
    _on_interrupt: CleanupRegistration,
}

impl TeardownGuard {
    pub fn new(teardown: Teardown) -> Self {
        let teardown = Arc::new(teardown);
        let for_handler = Arc::clone(&teardown);
        let registration = procs::on_interrupt(Arc::new(move || {
            if let Err(e) = for_handler.run() {
                eprintln!("[remote] teardown after the interrupt failed: {e:#}");
            }
        }));
        TeardownGuard {
            teardown,
            finished: false,
            _on_interrupt: registration,
        }
    }

    /// Tears down now and reports how it went; dropping afterwards does not try again.
    pub fn finish(mut self) -> Result<()> {
        self.finished = true;
        self.teardown.run()
    }
}

impl Drop for TeardownGuard {
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        if let Err(e) = self.teardown.run() {
            eprintln!("[remote] teardown failed: {e:#}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::targets::remote::api::on_loopback;
    use crate::targets::remote::wrangler::{Credentials, Launcher, Pacing, Secret};

    /// A teardown whose API answers each call with the next of `answers`; the requests read.
    fn with_api(
        answers: Vec<(u16, &'static str)>,
        dir: &std::path::Path,
    ) -> (Teardown, std::thread::JoinHandle<Vec<String>>) {
        let (api, server) = on_loopback(answers);
        let credentials = Credentials {
            api_token: Secret::new("tok-123".into()),
            account_id: "acct-9".into(),
        };
        // No wrangler command runs here: nothing but a configuration is noted.
        let wrangler = Wrangler::new(
            Launcher::Executable("/nonexistent/wrangler".into()),
            dir,
            &credentials,
            Pacing::CLOUDFLARE,
            Arc::new(|_: &str| {}),
        )
        .unwrap();
        let teardown = Teardown::new(Arc::new(wrangler), false).with_api(Arc::new(api));
        (teardown, server)
    }

    #[test]
    fn a_configuration_whose_creation_was_cut_short_is_found_by_its_name_and_deleted() {
        let dir = tempfile::tempdir().unwrap();
        let (teardown, server) = with_api(
            vec![
                (
                    200,
                    r#"{"success":true,"errors":[],"result":[{"id":"other","name":"mine"},{"id":"hd-7","name":"d1bench-run-x"}]}"#,
                ),
                (200, r#"{"success":true,"errors":[],"result":null}"#),
            ],
            dir.path(),
        );
        teardown.note_hyperdrive("d1bench-run-x", None);
        teardown.run().unwrap();
        // Done: a second run has nothing left to delete and calls nothing.
        teardown.run().unwrap();
        let requests = server.join().unwrap();
        assert!(requests[0].starts_with("GET /client/v4/accounts/acct-9/hyperdrive/configs "));
        assert!(
            requests[1].starts_with("DELETE /client/v4/accounts/acct-9/hyperdrive/configs/hd-7 ")
        );
    }

    #[test]
    fn a_configuration_never_created_leaves_nothing_to_delete_and_a_failed_deletion_says_how_to_retry()
     {
        let dir = tempfile::tempdir().unwrap();
        let (teardown, server) = with_api(
            vec![(200, r#"{"success":true,"errors":[],"result":[]}"#)],
            dir.path(),
        );
        teardown.note_hyperdrive("d1bench-run-x", None);
        teardown.run().unwrap();
        assert_eq!(server.join().unwrap().len(), 1);

        let (teardown, _server) = with_api(
            vec![(
                500,
                r#"{"success":false,"errors":[{"code":1,"message":"boom"}]}"#,
            )],
            dir.path(),
        );
        teardown.note_hyperdrive("d1bench-run-y", Some("hd-9"));
        let error = format!("{:#}", teardown.run().unwrap_err());
        assert!(
            error.contains("cargo xtask clean-remote d1bench-run-y"),
            "{error}"
        );
        assert!(error.contains("boom (code 1)"), "{error}");
    }
}
