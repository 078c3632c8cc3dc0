//! Every run committed under docs/ is what today's code derives from its records: `cargo xtask
//! report` on a copy of each rewrites its summary.md and summary.csv byte for byte as committed,
//! and its HTML page (index.html) too where one is committed (docs/example-run's).
//! A change to the statistics or the reports that alters a committed figure fails here, and the
//! committed runs are regenerated in a commit that says so.

mod support;

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

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

/// The files of a committed run that `cargo xtask report` writes, compared where committed.
const REWRITTEN: [&str; 3] = ["summary.md", "summary.csv", "index.html"];

/// `cargo xtask report` on a copy of `run` under `scratch`: how many of its summary files were
/// compared, and those (relative to `root`) that came out otherwise than committed.
fn rewrite(root: &Path, run: &Path, scratch: &Path) -> (usize, Vec<String>) {
    let name = run
        .strip_prefix(root)
        .unwrap()
        .display()
        .to_string()
        .replace('/', "-");
    let copy = scratch.join(&name);
    copy_dir(run, &copy);
    // Removed from the copy, so that a report that skipped the run fails here instead of
    // leaving the committed files to be compared with themselves.
    for name in REWRITTEN {
        let _ = std::fs::remove_file(copy.join(name));
    }
    let output = support::xtask(&["report"])
        .arg(&copy)
        .arg("--out")
        .arg(scratch.join(format!("index-{name}")))
        .output()
        .expect("cannot run the xtask");
    assert!(
        output.status.success(),
        "report failed on {}:\n{}",
        run.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    let (mut compared, mut differing) = (0, Vec::new());
    for name in REWRITTEN {
        let committed = run.join(name);
        if !committed.exists() {
            continue;
        }
        compared += 1;
        let rewritten = std::fs::read(copy.join(name))
            .unwrap_or_else(|e| panic!("report did not rewrite {name} of {}: {e}", run.display()));
        if std::fs::read(&committed).unwrap() != rewritten {
            differing.push(committed.strip_prefix(root).unwrap().display().to_string());
        }
    }
    (compared, differing)
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
    // Each report is a process of its own, mostly drawing charts: one per core at a time.
    let next = AtomicUsize::new(0);
    let found = Mutex::new((0, Vec::new()));
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                while let Some(run) = runs.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let (compared, differing) = rewrite(root, run, scratch.path());
                    let mut found = found.lock().unwrap();
                    found.0 += compared;
                    found.1.extend(differing);
                }
            });
        }
    });
    let (compared, mut differing) = found.into_inner().unwrap();
    differing.sort();
    assert!(compared >= runs.len(), "compared only {compared} files");
    assert!(
        differing.is_empty(),
        "`cargo xtask report` no longer writes these committed files as they are: {differing:?}; \
         if the change is meant, regenerate them (cargo xtask report DIR) in a commit that says why"
    );
}
