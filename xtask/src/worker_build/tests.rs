//! The tests of `worker_build`.

use super::*;

fn manifest() -> Manifest {
    Manifest {
        carried: Vec::new(),
        sources: "a".repeat(64),
        rustc: "rustc 1.95.0".into(),
        worker_build: WORKER_BUILD_VERSION.into(),
        wasm_bindgen: "0.2.130".into(),
        files: BUILD_FILES
            .iter()
            .map(|f| (f.to_string(), "b".repeat(64)))
            .collect(),
    }
}

const LOCK: &str = r#"version = 4

[[package]]
name = "d1bench-worker"
version = "0.1.0"
dependencies = [
 "serde",
 "worker 0.8.7",
]

[[package]]
name = "serde"
version = "1.0.0"
source = "registry+https://github.com/rust-lang/crates.io-index"
checksum = "aa"

[[package]]
name = "worker"
version = "0.8.7"
source = "registry+https://github.com/rust-lang/crates.io-index"
checksum = "bb"
dependencies = [
 "serde",
]

[[package]]
name = "worker"
version = "0.1.0"
source = "registry+https://github.com/rust-lang/crates.io-index"
checksum = "cc"

[[package]]
name = "xtask"
version = "0.1.0"
dependencies = [
 "clap",
]
"#;

#[test]
fn only_the_workers_packages_in_cargo_lock_count() {
    let kept = worker_lock(LOCK).unwrap();
    assert!(kept.contains("name = \"serde\""), "{kept}");
    assert!(kept.contains("checksum = \"bb\""), "{kept}");
    // Another version of a package it uses, and a package only the xtask uses, do not.
    assert!(!kept.contains("checksum = \"cc\""), "{kept}");
    assert!(!kept.contains("xtask"), "{kept}");
    // The xtask gaining a crate leaves the Worker's packages as they were...
    let grown = LOCK.replace(
        "[[package]]\nname = \"xtask\"",
        "[[package]]\nname = \"clap\"\nversion = \"4.0.0\"\n\n[[package]]\nname = \"xtask\"",
    );
    assert_eq!(worker_lock(&grown).unwrap(), kept);
    // ...and a changed checksum of one of its own packages does not.
    assert_ne!(
        worker_lock(&LOCK.replace("\"aa\"", "\"ab\"")).unwrap(),
        kept
    );
    let broken = LOCK.replace("\"worker 0.8.7\"", "\"worker 9.9.9\"");
    let error = worker_lock(&broken).unwrap_err().to_string();
    assert!(error.contains("no package worker 9.9.9"), "{error}");
}

#[test]
fn a_changed_file_or_source_tree_is_named() {
    let committed = manifest();
    assert!(differences(&committed, &committed).is_empty());
    let mut found = committed.clone();
    found.files.insert("index_bg.wasm".into(), "c".repeat(64));
    found.sources = "d".repeat(64);
    let problems = differences(&committed, &found);
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(problems[0].contains("the sources changed"), "{problems:?}");
    assert!(
        problems[1].starts_with("worker/build/index_bg.wasm"),
        "{problems:?}"
    );
    found.files.remove("index.js");
    let problems = differences(&committed, &found);
    assert_eq!(problems.len(), 3, "{problems:?}");
    assert!(
        problems.iter().any(
            |p| p.starts_with("worker/build/index.js:") && p.ends_with("the build has nothing")
        ),
        "{problems:?}"
    );
}

/// The Postgres Worker and its planner live outside the D1 Worker's inputs, so the
/// committed D1 build (and every quoted run measured by it) stays today's; its own hash
/// changes with its planner and with the core both build on.
#[test]
fn the_postgres_crates_leave_the_d1_workers_build_hash_alone() {
    let root = crate::paths::project_root();
    let manifest = Manifest::read(&root)
        .unwrap()
        .expect("the manifest is committed");
    assert_eq!(
        sources_hash(&root).unwrap(),
        manifest.sources,
        "the D1 Worker's sources changed: {MANIFEST} no longer names them"
    );
    let inputs = inputs(&root).unwrap();
    assert!(
        !inputs
            .iter()
            .any(|f| f.starts_with(root.join("core-pg")) || f.starts_with(root.join("worker-pg"))),
        "a Postgres crate is an input of the D1 Worker's build"
    );
    let pg = pg_sources_hash(&root, crate::base::PgWorker::Probes).unwrap();
    assert_eq!(pg.len(), 64);
    assert_ne!(pg, manifest.sources);
    // The ladder Worker is another build; none of its crates is an input of the probe Worker's,
    // which the committed Postgres runs recorded.
    let ladders = pg_sources_hash(&root, crate::base::PgWorker::Ladders).unwrap();
    assert_ne!(ladders, pg);
    let (dirs, files) = pg_inputs(crate::base::PgWorker::Probes);
    assert!(
        !dirs.iter().chain(&files).any(|p| p.contains("ladder")),
        "{dirs:?} {files:?}"
    );
}

#[test]
fn ci_builds_with_the_compiler_that_built_the_committed_worker() {
    let root = crate::paths::project_root();
    let manifest = Manifest::read(&root)
        .unwrap()
        .expect("the manifest is committed");
    let version = manifest.rustc.split_whitespace().nth(1).unwrap();
    let ci = std::fs::read_to_string(root.join(".github/workflows/ci.yml")).unwrap();
    assert!(
        ci.contains(&format!("rustup default {version}")),
        "ci.yml must install rustc {version}, which built worker/build"
    );
}

#[test]
fn the_manifest_round_trips_and_refuses_unknown_keys() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("worker")).unwrap();
    manifest().write(dir.path()).unwrap();
    assert_eq!(Manifest::read(dir.path()).unwrap(), Some(manifest()));
    let path = dir.path().join(MANIFEST);
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, format!("colour = \"red\"\n{text}")).unwrap();
    let error = format!("{:#}", Manifest::read(dir.path()).unwrap_err());
    assert!(error.contains("build-manifest.toml:"), "{error}");
}

/// The rebuild's scratch copy holds every crate cargo must load to read the workspace: each
/// dependency the xtask names by a path outside the workspace's members (`build-worker --check`
/// failed with "failed to load manifest for dependency `d1bench-core-pg`" while core-pg was
/// missing from the copy).
#[test]
fn the_scratch_copy_holds_every_path_dependency_of_the_xtask() {
    let root = crate::paths::project_root();
    let text = std::fs::read_to_string(root.join("xtask/Cargo.toml")).unwrap();
    let manifest: toml::Table = text.parse().unwrap();
    let mut named: Vec<String> = manifest["dependencies"]
        .as_table()
        .unwrap()
        .values()
        .filter_map(|d| d.get("path").and_then(|p| p.as_str()))
        .map(|p| p.trim_start_matches("../").to_owned())
        .collect();
    named.sort();
    assert_eq!(named, XTASK_PATH_DEPENDENCIES);
}
