//! The Worker build committed in worker/build is the build of today's sources. Always (cheap,
//! nothing built): the hash of the sources that worker/build-manifest.toml records is the hash of
//! today's sources, and each committed file has the hash it records. With
//! `D1BENCH_REBUILD_WORKER=1` (`.ci/run` sets it) also byte for byte: `cargo xtask build-worker
//! --check` rebuilds it from a scratch copy of the sources and compares (under the compiler the
//! manifest names; under another it checks the manifest against the sources and the files only,
//! and says so). That rebuild installs wasm-bindgen-cli and worker-build first: 8 to 15 minutes
//! on 2 cores.

mod support;

/// What asks for the byte-for-byte rebuild.
const REBUILD: &str = "D1BENCH_REBUILD_WORKER";

#[test]
fn the_committed_worker_build_is_the_build_of_these_sources() {
    let (_, problems) = xtask::worker_build::check_committed(&support::project_root()).unwrap();
    assert!(
        problems.is_empty(),
        "worker/build is not the committed build of these sources:\n{}\nrun `cargo xtask \
         build-worker` and commit worker/build and {}; `{REBUILD}=1 cargo test --test \
         worker_build` then proves it byte for byte",
        problems.join("\n"),
        xtask::worker_build::MANIFEST
    );
}

#[test]
fn the_committed_worker_build_is_what_the_sources_produce_byte_for_byte() {
    match std::env::var(REBUILD).as_deref() {
        Ok("1") => {}
        Ok(other) => panic!("{REBUILD} is `{other}`: set it to 1 to rebuild, or unset it"),
        Err(_) => {
            eprintln!(
                "not rebuilt byte for byte ({REBUILD} is not set; `{REBUILD}=1 cargo test --test \
                 worker_build` rebuilds it; see the CHANGELOG for why .ci/run no longer does)"
            );
            return;
        }
    }
    let output = support::xtask(&["build-worker", "--check"])
        .output()
        .expect("cannot run the xtask");
    let stderr = String::from_utf8_lossy(&output.stderr);
    eprintln!("{stderr}");
    assert!(
        output.status.success(),
        "the committed Worker build does not match its sources:\n{stderr}"
    );
    assert!(stderr.contains("[check] ok:"), "{stderr}");
}
