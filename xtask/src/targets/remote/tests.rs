//! The remote lifecycle against the stand-in wrangler (`xtask/tests/stand-in/wrangler`): the
//! exact commands (the database, the KV namespace, the Worker), teardown after a failure at
//! every step, rate-limit retries, `--keep`,
//! `clean-remote`, and that the bearer token and the API token appear nowhere but where they
//! must. Only the wrangler binary is replaced; every line of d1bench's code here is the real one.
//!
//! Past 600 lines as one file: every test drives the same stand-in and its command log.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::lifecycle::{self, Finished, RunName, Setup};
use super::wrangler::{Credentials, Launcher, Pacing, Secret, Wrangler};
use super::*;
use crate::paths::project_root;

const FAKE_API_TOKEN: &str = "fake-api-token-9f8e7d6c5b4a";
const UUID: &str = "6b3f3c1e-2a4d-4c8e-9f10-0a1b2c3d4e5f";
/// The KV namespace id the stand-in answers `kv namespace create` with.
const KV_ID: &str = "0f2ac74b498b48028cb68387df76e1b0";

fn ids() -> lifecycle::ResourceIds {
    lifecycle::ResourceIds {
        database: UUID.into(),
        kv_namespace: KV_ID.into(),
    }
}

/// A stand-in wrangler in a directory of its own, and what the runner said.
struct StandIn {
    dir: tempfile::TempDir,
    said: Arc<Mutex<Vec<String>>>,
}

impl StandIn {
    fn new() -> Self {
        StandIn {
            dir: tempfile::tempdir().unwrap(),
            said: Arc::default(),
        }
    }

    fn log(&self) -> PathBuf {
        self.dir.path().join("calls.log")
    }

    /// The runner's state directory (config, transcript).
    fn state(&self) -> PathBuf {
        self.dir.path().join("state")
    }

    /// A runner using the stand-in, configured by `env` (see the stand-in's header).
    fn wrangler(&self, env: &[(&str, &str)]) -> Arc<Wrangler> {
        self.wrangler_paced(env, Duration::ZERO)
    }

    fn wrangler_paced(&self, env: &[(&str, &str)], min_interval: Duration) -> Arc<Wrangler> {
        let credentials = Credentials {
            api_token: Secret::new(FAKE_API_TOKEN.into()),
            account_id: "stand-in-account".into(),
        };
        let said = Arc::clone(&self.said);
        let mut wrangler = Wrangler::new(
            Launcher::Executable(project_root().join("xtask/tests/stand-in/wrangler")),
            &self.state(),
            &credentials,
            Pacing {
                min_interval,
                first_backoff: Duration::from_millis(20),
                attempts: 3,
            },
            Arc::new(move |m: &str| said.lock().unwrap().push(m.to_owned())),
        )
        .unwrap()
        .with_env("STAND_IN_LOG", self.log())
        // These tests check the commands and their order: the stand-in only announces a URL.
        .with_env("STAND_IN_DEPLOY", "announce");
        for (key, value) in env {
            wrangler = wrangler.with_env(key, *value);
        }
        Arc::new(wrangler)
    }

    /// The calls the stand-in saw, one line each, with the state directory shown as `STATE`.
    fn calls(&self) -> Vec<String> {
        let state = self.state().display().to_string();
        std::fs::read_to_string(self.log())
            .unwrap_or_default()
            .lines()
            .map(|l| l.replace(&state, "STATE"))
            .collect()
    }

    fn said(&self) -> Vec<String> {
        self.said.lock().unwrap().clone()
    }

    /// What the stand-in received on stdin (the bearer token).
    fn secret_received(&self) -> String {
        std::fs::read_to_string(self.log().with_extension("log.stdin")).unwrap()
    }
}

fn setup(name: &str, keep: bool) -> Setup {
    Setup {
        name: RunName::fixed(name),
        location: Some(Location::Weur),
        entry: PathBuf::from("/project/worker/build/worker/shim.mjs"),
        compatibility_date: "2026-11-17".into(),
        keep,
        subrequests: None,
    }
}

/// The stand-in's log line of each command a full run makes, in order.
fn line(call: &str, stdin: &str) -> String {
    format!("{call} | stdin: {stdin} | credentials: set")
}

fn create(name: &str) -> String {
    line(&format!("d1 create {name} --location weur"), "none")
}
fn kv_create(name: &str) -> String {
    line(&format!("kv namespace create {name}"), "none")
}
fn kv_delete(name: &str) -> String {
    line(
        &format!("kv namespace delete {name} --skip-confirmation"),
        "none",
    )
}
fn deploy() -> String {
    line("deploy --config STATE/wrangler.toml", "none")
}
fn secret(name: &str) -> String {
    line(
        &format!("secret put BENCH_TOKEN --name {name} --config STATE/wrangler.toml"),
        "48 bytes",
    )
}
fn delete(name: &str) -> String {
    line(&format!("delete --name {name} --force"), "none")
}
fn d1_delete(name: &str) -> String {
    line(&format!("d1 delete {name} --skip-confirmation"), "none")
}

/// Every file under `dir`, as text.
fn files_under(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else {
            out.push((
                path.clone(),
                String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned(),
            ));
        }
    }
    out
}

#[test]
fn a_run_makes_exactly_the_planned_commands_and_deletes_what_it_made() {
    let stand_in = StandIn::new();
    let name = "d1bench-run-20261129t235502z-ab12";
    let mut seen = None;
    let finished = lifecycle::with_deployment(stand_in.wrangler(&[]), setup(name, false), |d| {
        seen = Some((
            d.url.clone(),
            d.created_in_region.clone(),
            d.token.expose().to_owned(),
        ));
        Ok(42)
    })
    .unwrap();
    assert_eq!(finished.into_result().unwrap(), 42);
    assert_eq!(
        stand_in.calls(),
        [
            create(name),
            kv_create(name),
            deploy(),
            secret(name),
            delete(name),
            kv_delete(name),
            d1_delete(name)
        ]
    );
    let (url, region, token) = seen.unwrap();
    assert_eq!(url, format!("https://{name}.stand-in.workers.dev"));
    assert_eq!(region.as_deref(), Some("WEUR"));
    assert_eq!(token.len(), 48);
    assert_eq!(stand_in.secret_received(), token);
    // The config deployed is the generated one, bound to the database and the KV namespace
    // just created.
    let config = std::fs::read_to_string(stand_in.state().join("wrangler.toml")).unwrap();
    assert_eq!(
        config,
        lifecycle::wrangler_config(
            &RunName::fixed(name),
            &ids(),
            Path::new("/project/worker/build/worker/shim.mjs"),
            "2026-11-17",
            None
        )
    );
}

#[test]
fn the_generated_wrangler_config_matches_its_golden_file() {
    let config = lifecycle::wrangler_config(
        &RunName::fixed("d1bench-run-20261129t235502z-ab12"),
        &ids(),
        Path::new("/project/worker/build/worker/shim.mjs"),
        "2026-11-17",
        None,
    );
    let golden = project_root().join("xtask/tests/golden/remote-wrangler.toml");
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&golden, &config).unwrap();
    }
    assert_eq!(config, std::fs::read_to_string(&golden).unwrap());
    // It is valid TOML binding the database as DB, and its date is worker/wrangler.toml's.
    let table: toml::Table = config.parse().unwrap();
    assert_eq!(table["d1_databases"][0]["binding"].as_str(), Some("DB"));
    assert_eq!(table["kv_namespaces"][0]["binding"].as_str(), Some("CACHE"));
    assert_eq!(table["kv_namespaces"][0]["id"].as_str(), Some(KV_ID));
    // The Durable Object is bound and created as local wrangler.toml does it.
    let local: toml::Table = std::fs::read_to_string(project_root().join("worker/wrangler.toml"))
        .unwrap()
        .parse()
        .unwrap();
    for key in ["durable_objects", "migrations"] {
        assert_eq!(table[key], local[key], "{key}");
    }
    assert_eq!(
        lifecycle::compatibility_date(&project_root().join("worker/wrangler.toml")).unwrap(),
        table["compatibility_date"].as_str().unwrap()
    );
    assert!(
        table.get("limits").is_none(),
        "no limits unless the plan sets them"
    );
}

/// A plan that sets the Worker's `limits.subrequests` gets it in the generated configuration,
/// as wrangler reads it, and nothing else changes.
#[test]
fn a_planned_subrequest_limit_is_in_the_generated_wrangler_config() {
    let config = |subrequests| {
        lifecycle::wrangler_config(
            &RunName::fixed("d1bench-run-20261129t235502z-ab12"),
            &ids(),
            Path::new("/project/worker/build/worker/shim.mjs"),
            "2026-11-17",
            subrequests,
        )
    };
    let set = config(Some(50_000));
    let table: toml::Table = set.parse().unwrap();
    assert_eq!(table["limits"]["subrequests"].as_integer(), Some(50_000));
    assert!(set.starts_with(&config(None)), "{set}");
}

#[test]
fn a_failure_at_each_setup_step_deletes_what_was_made_before_it() {
    let name = "d1bench-run-20261129t235502z-cd34";
    let cases: [(&str, Vec<String>); 4] = [
        ("create", vec![create(name), d1_delete(name)]),
        (
            "kv-create",
            vec![
                create(name),
                kv_create(name),
                kv_delete(name),
                d1_delete(name),
            ],
        ),
        (
            "deploy",
            vec![
                create(name),
                kv_create(name),
                deploy(),
                delete(name),
                kv_delete(name),
                d1_delete(name),
            ],
        ),
        (
            "secret",
            vec![
                create(name),
                kv_create(name),
                deploy(),
                secret(name),
                delete(name),
                kv_delete(name),
                d1_delete(name),
            ],
        ),
    ];
    for (verb, expected) in cases {
        let stand_in = StandIn::new();
        let mut worked = false;
        let err = lifecycle::with_deployment(
            stand_in.wrangler(&[("STAND_IN_FAIL", verb)]),
            setup(name, false),
            |_| {
                worked = true;
                Ok(())
            },
        )
        .unwrap_err();
        let err = format!("{err:#}");
        assert!(!worked, "{verb}: the work ran after a failed setup");
        assert!(
            err.contains(&format!("stand-in failure injected at {verb}")),
            "{verb}: {err}"
        );
        assert_eq!(stand_in.calls(), expected, "{verb}");
    }
}

#[test]
fn a_failure_or_panic_while_measuring_still_deletes_everything() {
    let name = "d1bench-run-20261129t235502z-ef56";
    let full = [
        create(name),
        kv_create(name),
        deploy(),
        secret(name),
        delete(name),
        kv_delete(name),
        d1_delete(name),
    ];

    let stand_in = StandIn::new();
    let finished: Finished<()> =
        lifecycle::with_deployment(stand_in.wrangler(&[]), setup(name, false), |_| {
            anyhow::bail!("the Worker answered 500")
        })
        .unwrap();
    assert!(finished.teardown.is_ok());
    let err = format!("{:#}", finished.into_result().unwrap_err());
    assert_eq!(err, "the Worker answered 500");
    assert_eq!(stand_in.calls(), full);

    let stand_in = StandIn::new();
    let wrangler = stand_in.wrangler(&[]);
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        lifecycle::with_deployment(wrangler, setup(name, false), |_| -> Result<()> {
            panic!("a bug while measuring")
        })
    }));
    assert!(panicked.is_err());
    assert_eq!(stand_in.calls(), full);
}

#[test]
fn a_worker_that_cannot_be_deleted_keeps_its_database_as_the_marker() {
    let name = "d1bench-run-20261129t235502z-0a0b";
    let stand_in = StandIn::new();
    let finished = lifecycle::with_deployment(
        stand_in.wrangler(&[("STAND_IN_FAIL", "delete")]),
        setup(name, false),
        |_| Ok(()),
    )
    .unwrap();
    let err = format!("{:#}", finished.into_result().unwrap_err());
    assert!(
        err.starts_with(
            "everything was measured, but deleting the run's Worker and database failed"
        ),
        "{err}"
    );
    assert!(err.contains("clean-remote"), "{err}");
    assert_eq!(
        stand_in.calls(),
        [
            create(name),
            kv_create(name),
            deploy(),
            secret(name),
            delete(name)
        ]
    );
}

#[test]
fn what_is_already_gone_counts_as_deleted() {
    let name = "d1bench-run-20261129t235502z-1a1b";
    for verb in ["delete", "kv-delete", "d1-delete"] {
        let stand_in = StandIn::new();
        let finished = lifecycle::with_deployment(
            stand_in.wrangler(&[("STAND_IN_GONE", verb)]),
            setup(name, false),
            |_| Ok(()),
        )
        .unwrap();
        finished.into_result().unwrap();
        assert!(
            stand_in
                .said()
                .iter()
                .any(|m| m.ends_with(": already gone")),
            "{verb}: {:?}",
            stand_in.said()
        );
    }
}

#[test]
fn rate_limits_are_waited_out_with_a_note_and_give_up_in_the_end() {
    let name = "d1bench-run-20261129t235502z-2a2b";
    let stand_in = StandIn::new();
    let finished = lifecycle::with_deployment(
        stand_in.wrangler(&[("STAND_IN_RATE_LIMIT", "create:2")]),
        setup(name, false),
        |_| Ok(()),
    )
    .unwrap();
    finished.into_result().unwrap();
    let calls = stand_in.calls();
    assert_eq!(calls[..3], [create(name), create(name), create(name)]);
    assert_eq!(calls.len(), 9);
    let waits: Vec<String> = stand_in
        .said()
        .into_iter()
        .filter(|m| m.starts_with("the Cloudflare API is rate-limiting"))
        .collect();
    assert_eq!(waits.len(), 2, "{waits:?}");
    assert!(
        waits[0].contains("waiting 0.0 s before attempt 2 of 3"),
        "{waits:?}"
    );

    // More refusals than attempts: the run fails, naming why, and cleans up.
    let stand_in = StandIn::new();
    let err = lifecycle::with_deployment(
        stand_in.wrangler(&[("STAND_IN_RATE_LIMIT", "create:9")]),
        setup(name, false),
        |_| Ok(()),
    )
    .unwrap_err();
    let err = format!("{err:#}");
    assert!(err.contains("still rate-limited after 3 attempts"), "{err}");
    assert!(err.contains("throttling your request speed"), "{err}");
    assert_eq!(stand_in.calls().last(), Some(&d1_delete(name)));
}

#[test]
fn calls_are_paced_and_the_wait_is_said() {
    let stand_in = StandIn::new();
    let wrangler = stand_in.wrangler_paced(&[], Duration::from_millis(300));
    let started = std::time::Instant::now();
    wrangler.run(&Step::ListDatabases).unwrap();
    wrangler.run(&Step::ListDatabases).unwrap();
    assert!(started.elapsed() >= Duration::from_millis(300));
    assert!(
        stand_in
            .said()
            .iter()
            .any(|m| m.starts_with("pacing Cloudflare API calls: waiting")
                && m.ends_with("before `wrangler d1 list --json`")),
        "{:?}",
        stand_in.said()
    );
}

#[test]
fn keep_leaves_everything_and_says_how_to_delete_it() {
    let name = "d1bench-run-20261129t235502z-3a3b";
    let stand_in = StandIn::new();
    lifecycle::with_deployment(stand_in.wrangler(&[]), setup(name, true), |_| Ok(()))
        .unwrap()
        .into_result()
        .unwrap();
    assert_eq!(
        stand_in.calls(),
        [create(name), kv_create(name), deploy(), secret(name)]
    );
    assert!(
        stand_in
            .said()
            .iter()
            .any(|m| m.contains(&format!("cargo xtask clean-remote {name}`"))),
        "{:?}",
        stand_in.said()
    );
}

#[test]
fn the_tokens_appear_nowhere_but_on_stdin_and_in_the_environment() {
    let name = "d1bench-run-20261129t235502z-4a4b";
    let stand_in = StandIn::new();
    let wrangler = stand_in.wrangler(&[]);
    let finished: Finished<()> =
        lifecycle::with_deployment(Arc::clone(&wrangler), setup(name, false), |d| {
            anyhow::bail!("measuring failed, with the deployment {:?}", d.token)
        })
        .unwrap();
    let err = format!("{:#} / {:?}", finished.work.as_ref().unwrap_err(), finished);
    let token = stand_in.secret_received();
    assert_eq!(token.len(), 48);
    let mut places: Vec<(String, String)> = files_under(stand_in.dir.path())
        .into_iter()
        .filter(|(path, _)| !path.ends_with("calls.log.stdin"))
        .map(|(path, text)| (path.display().to_string(), text))
        .collect();
    assert!(places.iter().any(|(p, _)| p.ends_with("wrangler.log")));
    assert!(places.iter().any(|(p, _)| p.ends_with("calls.log")));
    places.push(("the error".into(), err));
    places.push(("what the runner said".into(), stand_in.said().join("\n")));
    for (place, text) in places {
        for (what, secret) in [
            ("bearer token", token.as_str()),
            ("API token", FAKE_API_TOKEN),
        ] {
            assert!(
                !text.contains(secret),
                "the {what} leaked into {place}:\n{text}"
            );
        }
    }
}

#[test]
fn the_database_id_is_read_from_a_toml_snippet_too() {
    let name = "d1bench-run-20261129t235502z-5a5b";
    let stand_in = StandIn::new();
    lifecycle::with_deployment(
        stand_in.wrangler(&[("STAND_IN_SNIPPET", "toml")]),
        setup(name, false),
        |_| Ok(()),
    )
    .unwrap()
    .into_result()
    .unwrap();
    assert_eq!(stand_in.calls().len(), 7);
}

#[test]
fn remote_options_are_refused_on_a_local_run() {
    let asked = Asked {
        location: Some(Location::Weur),
        keep: true,
        ..Asked::default()
    };
    let err = Options::for_target(TargetKind::Local, &asked)
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "--location, --keep only applies to --target remote, remote-do and remote-hyperdrive, \
         not --target local"
    );
    assert!(
        Options::for_target(TargetKind::Local, &Asked::default())
            .unwrap()
            .is_none()
    );
    let asked = Asked {
        tag: Some("Bad-Tag"),
        ..Asked::default()
    };
    let err = Options::for_target(TargetKind::Remote, &asked)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("--tag `Bad-Tag` must be 1 to 20 lowercase letters and digits"),
        "{err}"
    );
}

#[test]
fn run_names_are_unique_prefixed_and_valid_worker_names() {
    let a = RunName::new(None).unwrap();
    let b = RunName::new(Some("gh42")).unwrap();
    assert!(a.as_str().starts_with("d1bench-run-2"), "{}", a.as_str());
    assert!(
        b.as_str().starts_with("d1bench-run-gh42-"),
        "{}",
        b.as_str()
    );
    assert_ne!(a, RunName::new(None).unwrap());
    for name in [a.as_str(), b.as_str()] {
        assert!(name.len() <= 63, "{name}");
        assert!(
            name.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
            "{name}"
        );
    }
}

mod clean;

/// run.toml's `[remote]` records the Worker's `limits.subrequests` when the plan set it, and
/// reads a record written before the field as unset.
#[test]
fn run_toml_records_the_workers_subrequest_limit() {
    let record = RemoteRecord {
        name: "d1bench-run-x".into(),
        location_hint: None,
        created_in_region: None,
        plan: "paid".into(),
        queries_per_invocation: 1000,
        served_by_region: Vec::new(),
        served_by_colo: Vec::new(),
        read_replication: None,
        subrequests: Some(50_000),
        hyperdrive: None,
        teardown: "deleted".into(),
    };
    let text = toml::to_string(&record).unwrap();
    assert!(text.contains("subrequests = 50000"), "{text}");
    let back: RemoteRecord = toml::from_str(&text).unwrap();
    assert_eq!(back, record);
    let unset = RemoteRecord {
        subrequests: None,
        ..record
    };
    let text = toml::to_string(&unset).unwrap();
    assert!(!text.contains("subrequests"), "{text}");
    assert_eq!(toml::from_str::<RemoteRecord>(&text).unwrap(), unset);
}
