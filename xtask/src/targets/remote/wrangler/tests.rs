//! Tests of `wrangler.rs`, apart so that file holds only what it is for.

use super::*;
use crate::targets::remote::answers::*;

const UUID: &str = "6b3f3c1e-2a4d-4c8e-9f10-0a1b2c3d4e5f";

#[test]
fn each_step_has_exactly_its_documented_arguments() {
    let config = PathBuf::from("/t/wrangler.toml");
    let cases = [
        (
            Step::CreateDatabase {
                name: "d1bench-run-x".into(),
                location: Some(Location::Weur),
            },
            "wrangler d1 create d1bench-run-x --location weur",
        ),
        (
            Step::CreateDatabase {
                name: "d1bench-run-x".into(),
                location: None,
            },
            "wrangler d1 create d1bench-run-x",
        ),
        (Step::ListDatabases, "wrangler d1 list --json"),
        (
            Step::Deploy {
                config: config.clone(),
            },
            "wrangler deploy --config /t/wrangler.toml",
        ),
        (
            Step::PutSecret {
                key: "BENCH_TOKEN".into(),
                worker: "d1bench-run-x".into(),
                config: config.clone(),
            },
            "wrangler secret put BENCH_TOKEN --name d1bench-run-x --config /t/wrangler.toml",
        ),
        (
            Step::DeleteWorker {
                name: "d1bench-run-x".into(),
            },
            "wrangler delete --name d1bench-run-x --force",
        ),
        (
            Step::DeleteDatabase {
                name: "d1bench-run-x".into(),
            },
            "wrangler d1 delete d1bench-run-x --skip-confirmation",
        ),
        (
            Step::CreateKvNamespace {
                name: "d1bench-run-x".into(),
            },
            "wrangler kv namespace create d1bench-run-x",
        ),
        (Step::ListKvNamespaces, "wrangler kv namespace list"),
        (
            Step::DeleteKvNamespace {
                name: "d1bench-run-x".into(),
            },
            "wrangler kv namespace delete d1bench-run-x --skip-confirmation",
        ),
    ];
    for (step, label) in cases {
        assert_eq!(step.label(), label);
        assert_eq!(step.is_teardown(), label.contains(" delete "), "{label}");
    }
}

/// What wrangler 4.164 prints for `kv namespace create` (its JSON snippet, or TOML) and `kv
/// namespace list`, and its words for a namespace that is not there.
#[test]
fn kv_namespace_answers_are_read() {
    use crate::targets::remote::answers::{parse_kv_namespace_id, parse_kv_namespace_list};
    let id = "0f2ac74b498b48028cb68387df76e1b0";
    let json = format!(
        "Resource location: remote\n🌀 Creating namespace with title \"d1bench-run-x\"\n✨ Success!\n\
         To access your new KV Namespace in your Worker, add the following snippet to your \
         configuration file:\n{{\n  \"kv_namespaces\": [\n    {{\n      \"binding\": \
         \"d1bench_run_x\",\n      \"id\": \"{id}\"\n    }}\n  ]\n}}\n"
    );
    let toml = format!("[[kv_namespaces]]\nbinding = \"d1bench_run_x\"\nid = \"{id}\"\n");
    assert_eq!(parse_kv_namespace_id(&json).as_deref(), Some(id));
    assert_eq!(parse_kv_namespace_id(&toml).as_deref(), Some(id));
    assert_eq!(
        parse_kv_namespace_id("database_id = \"0f2ac74b498b48028cb68387df76e1b0\""),
        None
    );
    assert_eq!(parse_kv_namespace_id("id = \"0f2ac74b\""), None);
    let list = parse_kv_namespace_list(&format!(
        "[\n  {{\n    \"id\": \"{id}\",\n    \"title\": \"d1bench-run-x\",\n    \"supports_url_encoding\": true\n  }}\n]"
    ))
    .unwrap();
    assert_eq!(
        (list[0].id.as_str(), list[0].title.as_str()),
        (id, "d1bench-run-x")
    );
    assert_eq!(
        classify(
            "✘ [ERROR] Not able to delete namespace.\nNo KV namespace named \"x\" was found in your account."
        ),
        Failure::Gone
    );
}

#[test]
fn missing_credentials_are_named() {
    let env = |pairs: &'static [(&'static str, &'static str)]| {
        move |name: &str| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    };
    let err = Credentials::from_lookup(env(&[])).unwrap_err().to_string();
    assert!(
        err.starts_with("CLOUDFLARE_API_TOKEN and CLOUDFLARE_ACCOUNT_ID is not set"),
        "{err}"
    );
    let err = Credentials::from_lookup(env(&[("CLOUDFLARE_ACCOUNT_ID", "abc")]))
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("CLOUDFLARE_API_TOKEN is not set"), "{err}");
    let err = Credentials::from_lookup(env(&[
        ("CLOUDFLARE_API_TOKEN", "t"),
        ("CLOUDFLARE_ACCOUNT_ID", "  "),
    ]))
    .unwrap_err()
    .to_string();
    assert!(err.starts_with("CLOUDFLARE_ACCOUNT_ID is not set"), "{err}");
    let ok = Credentials::from_lookup(env(&[
        ("CLOUDFLARE_API_TOKEN", "t0ken"),
        ("CLOUDFLARE_ACCOUNT_ID", "abc"),
    ]))
    .unwrap();
    assert_eq!(ok.account_id, "abc");
    assert!(!format!("{ok:?}").contains("t0ken"));
}

#[test]
fn the_database_id_is_read_from_toml_and_json_snippets() {
    let toml = format!(
        "✅ Successfully created DB 'd1bench-run-x' in region WEUR\nCreated your new D1 database.\n\n\
         [[d1_databases]]\nbinding = \"DB\"\ndatabase_name = \"d1bench-run-x\"\ndatabase_id = \"{UUID}\"\n"
    );
    let json = format!(
        "{{\n  \"d1_databases\": [\n    {{\n      \"binding\": \"d1bench_run_x\",\n      \
         \"database_name\": \"d1bench-run-x\",\n      \"database_id\": \"{UUID}\"\n    }}\n  ]\n}}"
    );
    assert_eq!(parse_database_id(&toml).as_deref(), Some(UUID));
    assert_eq!(parse_database_id(&json).as_deref(), Some(UUID));
    assert_eq!(parse_created_region(&toml).as_deref(), Some("WEUR"));
    assert_eq!(
        parse_created_region("✅ Successfully created DB 'x' using primary location hint weur"),
        None
    );
    assert_eq!(parse_database_id("database_id = \"not-a-uuid\""), None);
    assert_eq!(parse_database_id(&format!("uuid {UUID} but no key")), None);
    assert_eq!(
        parse_database_id(&format!("database_id = \"{UUID}0\"")),
        None
    );
}

#[test]
fn the_workers_dev_url_is_the_one_named_after_the_worker() {
    let deploy = "Total Upload: 612.43 KiB / gzip: 231.02 KiB\n\
         See https://developers.cloudflare.com/workers/ for more.\n\
         Uploaded d1bench-run-x (3.21 sec)\n\
         Deployed d1bench-run-x triggers (0.88 sec)\n  https://d1bench-run-x.acme.workers.dev\n\
         Current Version ID: 0d2b6c1a-0000-4000-8000-000000000000\n";
    assert_eq!(
        parse_workers_dev_url(deploy, "d1bench-run-x").as_deref(),
        Some("https://d1bench-run-x.acme.workers.dev")
    );
    assert_eq!(parse_workers_dev_url(deploy, "d1bench-run-y"), None);
    assert_eq!(
        parse_workers_dev_url("No targets deployed for d1bench-run-x", "d1bench-run-x"),
        None
    );
    // A Worker served elsewhere (the stand-in's wrangler dev) prints its address alone.
    assert_eq!(
        parse_workers_dev_url(
            "Uploaded d1bench-run-x\n  http://127.0.0.1:4321\n",
            "d1bench-run-x"
        )
        .as_deref(),
        Some("http://127.0.0.1:4321")
    );
}

#[test]
fn the_database_list_is_read_from_wrangler_json() {
    let stdout = r#"[
  {
"uuid": "6b3f3c1e-2a4d-4c8e-9f10-0a1b2c3d4e5f",
"name": "d1bench-run-a",
"created_at": "2026-11-29T23:15:02.000Z",
"version": "production",
"num_tables": 0,
"file_size": 12288
  },
  { "uuid": "00000000-0000-4000-8000-000000000001", "name": "mine" }
]"#;
    let list = parse_database_list(stdout).unwrap();
    assert_eq!(list.len(), 2);
    assert_eq!(list[0].name, "d1bench-run-a");
    assert_eq!(list[1].created_at, None);
    let err = format!("{:#}", parse_database_list("Not logged in.").unwrap_err());
    assert!(err.contains("printed no JSON array"), "{err}");
}

#[test]
fn failures_are_classified_for_retrying() {
    assert_eq!(
        classify("A request to the Cloudflare API failed. Too Many Requests [code: 971]"),
        Failure::RateLimited
    );
    assert_eq!(classify("HTTP 429"), Failure::RateLimited);
    assert_eq!(
        classify("✘ [ERROR] Couldn't find DB with name 'd1bench-run-x'"),
        Failure::Gone
    );
    assert_eq!(
        classify("This Worker does not exist on your account. [code: 10007]"),
        Failure::Gone
    );
    assert_eq!(
        classify("Authentication error [code: 10000]"),
        Failure::Other
    );
}
