//! A replicate set on disk: a folder (`docs/runs/replicates/<name>/`) of run directories of the
//! same experiment made at separate times, each as `cargo xtask run` left it. A minimal reader:
//! the run directories in it, in name order (their ids start with their start time).

use std::path::Path;

use anyhow::{Context, Result};

use super::RunDir;

/// The run directories of the set at `folder`: every directory holding a run.toml, at its top
/// or one level down (`<run-id>/` or `<experiment>/<run-id>/`), in path order. Empty when the
/// folder does not exist.
pub fn run_dirs(folder: &Path) -> Result<Vec<RunDir>> {
    let mut found = Vec::new();
    if !folder.is_dir() {
        return Ok(found);
    }
    let children = |dir: &Path| -> Result<Vec<std::path::PathBuf>> {
        let mut paths: Vec<_> = std::fs::read_dir(dir)
            .with_context(|| format!("cannot read {}", dir.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_dir())
            .collect();
        paths.sort();
        Ok(paths)
    };
    for child in children(folder)? {
        if child.join("run.toml").is_file() {
            found.push(RunDir::new(child));
            continue;
        }
        for grandchild in children(&child)? {
            if grandchild.join("run.toml").is_file() {
                found.push(RunDir::new(grandchild));
            }
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_runs_of_a_set_are_found_at_either_depth_in_order() {
        let dir = tempfile::tempdir().unwrap();
        for run in ["b-run", "a-run", "exp/c-run"] {
            let path = dir.path().join(run);
            std::fs::create_dir_all(&path).unwrap();
            std::fs::write(path.join("run.toml"), "").unwrap();
        }
        std::fs::create_dir_all(dir.path().join("empty")).unwrap();
        let names: Vec<String> = run_dirs(dir.path())
            .unwrap()
            .iter()
            .map(|r| {
                r.path
                    .strip_prefix(dir.path())
                    .unwrap()
                    .display()
                    .to_string()
            })
            .collect();
        assert_eq!(names, ["a-run", "b-run", "exp/c-run"]);
        assert!(run_dirs(&dir.path().join("none")).unwrap().is_empty());
    }
}
