//! The Worker build committed in worker/build is what its sources produce: `cargo xtask
//! build-worker --check` rebuilds it from a scratch copy of the sources and compares byte for
//! byte (under the compiler the manifest names; under another it checks the manifest against
//! the sources and the files only, and says so).

use std::path::Path;
use std::process::Command;

const XTASK: &str = env!("CARGO_BIN_EXE_xtask");

#[test]
fn the_committed_worker_build_is_what_the_sources_produce() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let output = Command::new(XTASK)
        .args(["build-worker", "--check"])
        .current_dir(root)
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
