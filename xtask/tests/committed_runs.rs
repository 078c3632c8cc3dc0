//! Every run committed under docs/ is what today's code derives from its records: `cargo xtask
//! report` on a copy of each rewrites its summary.md and summary.csv byte for byte as committed.
//! A change to the statistics or the reports that alters a committed figure fails here, and the
//! committed runs are regenerated in a commit that says so.

mod support;

use std::path::{Path, PathBuf};

/// The run directories under `dir` (those holding a run.toml), sorted.
fn run_dirs(dir: &Path, found: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    if entries.iter().any(|p| p.ends_with("run.toml")) {
        found.push(dir.to_path_buf());
    }
    for path in entries.into_iter().filter(|p| p.is_dir()) {
        run_dirs(&path, found);
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let target = to.join(path.file_name().unwrap());
        if path.is_dir() {
            copy_dir(&path, &target);
        } else {
            std::fs::copy(&path, &target).unwrap();
        }
    }
}

#[test]
fn report_rewrites_every_committed_summary_byte_for_byte() {
    let root = &support::project_root();
    let mut runs = Vec::new();
    run_dirs(&root.join("docs"), &mut runs);
    assert!(
        runs.len() >= 10,
        "expected the committed runs under docs/, found {}: {runs:?}",
        runs.len()
    );
    let scratch = tempfile::tempdir().unwrap();
    let mut differing = Vec::new();
    let mut compared = 0;
    for (i, run) in runs.iter().enumerate() {
        let copy = scratch.path().join(i.to_string());
        copy_dir(run, &copy);
        let output = support::xtask(&["report"])
            .arg(&copy)
            .arg("--out")
            .arg(scratch.path().join(format!("index-{i}")))
            .output()
            .expect("cannot run the xtask");
        assert!(
            output.status.success(),
            "report failed on {}:\n{}",
            run.display(),
            String::from_utf8_lossy(&output.stderr)
        );
        for name in ["summary.md", "summary.csv"] {
            let committed = run.join(name);
            if !committed.exists() {
                continue;
            }
            compared += 1;
            let rewritten = std::fs::read(copy.join(name)).unwrap();
            if std::fs::read(&committed).unwrap() != rewritten {
                differing.push(committed.strip_prefix(root).unwrap().display().to_string());
            }
        }
    }
    assert!(compared >= runs.len(), "compared only {compared} files");
    assert!(
        differing.is_empty(),
        "`cargo xtask report` no longer writes these committed files as they are: {differing:?}; \
         if the change is meant, regenerate them (cargo xtask report DIR) in a commit that says why"
    );
}
