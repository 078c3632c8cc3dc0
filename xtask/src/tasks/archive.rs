//! `cargo xtask archive <run-dir>`: one `.tar.gz` holding a run and what it takes to check and
//! redo it: the run directory, the experiment or ladder files it ran, the lock files that pin its
//! Rust and JavaScript dependencies, `VERSIONS` (what it ran with, and where each project file
//! came from) and `SHA256SUMS` of every other file.
//!
//! The files keep the repository's layout under one top directory, `d1bench-<run-id>/`: the run
//! directory as `reports/<experiment>/<run-id>/`, so `cargo xtask plot` reads it where it lands,
//! and `sha256sum -c SHA256SUMS` checks it from there.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail, ensure};
use flate2::Compression;
use flate2::write::GzEncoder;
use serde::Serialize;
use xshell::{Shell, cmd};

use crate::flags;
use crate::paths::Paths;
use crate::records::run_record::{Commit, GitInfo, StudyFile, ToolVersions};
use crate::records::{RunDir, RunRecord};
use crate::toolchain::hash_bytes;

/// What pins the dependencies a run was built with: the xtask's and the Worker's crates, and
/// wrangler, workerd and the other JavaScript tools.
const LOCK_FILES: [&str; 2] = ["Cargo.lock", "worker/package-lock.json"];

impl flags::Archive {
    /// `cargo xtask archive <run-dir>`: writes the archive and says where.
    pub fn run(self, sh: &Shell, paths: &Paths) -> Result<()> {
        let archive = write(sh, paths, &self.run_dir, self.out.as_deref())?;
        println!("archive: {}", archive.display());
        Ok(())
    }
}

/// One file of the archive: its path under the top directory, and its bytes.
struct Entry {
    path: String,
    bytes: Vec<u8>,
}

/// Writes `<run-id>.tar.gz` of the run in `run_dir` into `out` (default: the directory holding
/// the run directory); returns its path. Project files are read with `sh`, in the project root.
pub fn write(sh: &Shell, paths: &Paths, run_dir: &Path, out: Option<&Path>) -> Result<PathBuf> {
    let run = RunDir::new(run_dir.to_owned());
    let record = read_run(&run)?;
    let id = run.id();
    let out = match out {
        Some(out) => out.to_owned(),
        None => run_dir
            .canonicalize()
            .with_context(|| format!("cannot find {}", run_dir.display()))?
            .parent()
            .map(Path::to_owned)
            .with_context(|| format!("{} has no parent directory", run_dir.display()))?,
    };
    ensure!(
        !same_or_inside(&out, run_dir),
        "cannot write the archive of {} inside the run directory itself: give --out a \
         directory outside it",
        run_dir.display()
    );
    std::fs::create_dir_all(&out).with_context(|| format!("cannot create {}", out.display()))?;

    let mut entries = Vec::new();
    let run_path = format!("reports/{}/{id}", record.run.experiment);
    for file in files_under(run_dir)? {
        let relative = file
            .strip_prefix(run_dir)
            .expect("a file under the run directory");
        let bytes =
            std::fs::read(&file).with_context(|| format!("cannot read {}", file.display()))?;
        let relative = relative.to_string_lossy().replace('\\', "/");
        entries.push(Entry {
            path: format!("{run_path}/{relative}"),
            bytes,
        });
    }
    let mut sources = BTreeMap::new();
    for study in &record.studies {
        let (bytes, source) = study_file(sh, paths, &record.git, study)?;
        sources.insert(study.file.clone(), source);
        entries.push(Entry {
            path: study.file.clone(),
            bytes,
        });
    }
    for lock in LOCK_FILES {
        let (bytes, source) = lock_file(sh, paths, &record.git, lock)?;
        sources.insert(lock.to_owned(), source);
        entries.push(Entry {
            path: lock.to_owned(),
            bytes,
        });
    }
    entries.push(Entry {
        path: "VERSIONS".to_owned(),
        bytes: versions(&record, &id, sources)?.into_bytes(),
    });
    let sums: String = entries
        .iter()
        .map(|e| format!("{}  {}\n", hash_bytes(&e.bytes), e.path))
        .collect();
    entries.push(Entry {
        path: "SHA256SUMS".to_owned(),
        bytes: sums.into_bytes(),
    });

    let archive = out.join(format!("{id}.tar.gz"));
    write_tar_gz(&archive, &format!("d1bench-{id}"), &entries)?;
    Ok(archive)
}

/// The run's record, or why `run` is not a run directory.
fn read_run(run: &RunDir) -> Result<RunRecord> {
    let dir = &run.path;
    ensure!(dir.is_dir(), "{} is not a directory", dir.display());
    ensure!(
        run.run_toml().is_file(),
        "{} is not a run directory: it has no run.toml (cargo xtask run writes one into every \
         run directory)",
        dir.display()
    );
    let record = RunRecord::read(&run.run_toml())?;
    if record.run.status == crate::records::RunStatus::Running {
        eprintln!(
            "warning: {} says the run is still running: the archive holds what it has written \
             so far",
            run.run_toml().display()
        );
    }
    Ok(record)
}

/// Whether `path` (which may not exist yet) is the directory `dir` or somewhere under it.
fn same_or_inside(path: &Path, dir: &Path) -> bool {
    let path = path
        .canonicalize()
        .or_else(|_| std::path::absolute(path))
        .unwrap_or_else(|_| path.to_owned());
    dir.canonicalize().is_ok_and(|dir| path.starts_with(dir))
}

/// Every regular file under `dir`, recursively, sorted.
fn files_under(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot list {}", dir.display()))?
        .map(|e| e.map(|e| e.path()))
        .collect::<std::io::Result<_>>()
        .with_context(|| format!("cannot list {}", dir.display()))?;
    entries.sort();
    for path in entries {
        let kind = std::fs::symlink_metadata(&path)
            .with_context(|| format!("cannot read {}", path.display()))?
            .file_type();
        if kind.is_dir() {
            files.extend(files_under(&path)?);
        } else if kind.is_file() {
            files.push(path);
        }
    }
    Ok(files)
}

/// `path` (relative to the project root) at the run's commit, when git knows it.
fn at_commit(sh: &Shell, git: &GitInfo, path: &str) -> Option<Vec<u8>> {
    if git.commit == Commit::Unknown {
        return None;
    }
    let spec = format!("{}:{path}", git.commit);
    let output = cmd!(sh, "git show {spec}")
        .quiet()
        .ignore_status()
        .output()
        .ok()?;
    output.status.success().then_some(output.stdout)
}

/// `path` (relative to the project root) as it is now.
fn in_working_tree(paths: &Paths, path: &str) -> Result<Vec<u8>> {
    let file = paths.root.join(path);
    std::fs::read(&file).with_context(|| format!("cannot read {}", file.display()))
}

/// The study file exactly as the run read it, by the SHA-256 run.toml recorded: from the run's
/// commit or from the working tree, whichever matches; and where it came from.
fn study_file(
    sh: &Shell,
    paths: &Paths,
    git: &GitInfo,
    study: &StudyFile,
) -> Result<(Vec<u8>, String)> {
    let path = study.file.as_str();
    if let Some(bytes) = at_commit(sh, git, path).filter(|b| hash_bytes(b) == study.sha256) {
        return Ok((bytes, format!("commit {}, sha256 as run.toml", git.commit)));
    }
    let now = in_working_tree(paths, path)?;
    let sha256 = hash_bytes(&now);
    if sha256 != study.sha256 {
        bail!(
            "{path} is not the file the run read: run.toml records sha256 {}, the working tree \
             has {sha256}, and the run's commit ({}) has no matching version. Check out the \
             file as it was, then archive again",
            study.sha256,
            git.commit
        );
    }
    Ok((now, "the working tree, sha256 as run.toml".to_owned()))
}

/// A lock file as the run built with it: from the run's commit when its tree was clean and git
/// knows the commit, else from the working tree; and where it came from.
fn lock_file(sh: &Shell, paths: &Paths, git: &GitInfo, path: &str) -> Result<(Vec<u8>, String)> {
    if !git.dirty
        && let Some(bytes) = at_commit(sh, git, path)
    {
        return Ok((bytes, format!("commit {}", git.commit)));
    }
    let bytes = in_working_tree(paths, path)?;
    let source = if git.dirty {
        "the working tree when archived (the run's tree differed from its commit, so this may \
         differ from what it built with)"
    } else {
        "the working tree when archived (the run's commit is not in this repository)"
    };
    Ok((bytes, source.to_owned()))
}

/// `VERSIONS`: run.toml's `[versions]` and `[git]`, and where each project file came from.
fn versions(record: &RunRecord, id: &str, files: BTreeMap<String, String>) -> Result<String> {
    #[derive(Serialize)]
    struct VersionsFile<'a> {
        run: &'a str,
        experiment: &'a str,
        target: String,
        profile: &'a str,
        git: &'a GitInfo,
        versions: &'a ToolVersions,
        /// Each project file in the archive, and where it was taken from.
        files: BTreeMap<String, String>,
    }
    let text = toml::to_string_pretty(&VersionsFile {
        run: id,
        experiment: &record.run.experiment,
        target: record.run.target.to_string(),
        profile: &record.run.profile,
        git: &record.git,
        versions: &record.versions,
        files,
    })
    .context("cannot write VERSIONS")?;
    Ok(format!(
        "# What d1bench run {id} ran with (run.toml's [versions] and [git]), and where each \
         project file of this archive came from.\n{text}"
    ))
}

/// Writes `entries` under `top/` into a gzip-compressed tar at `path`, through a temporary file
/// so no half archive is left under the final name.
fn write_tar_gz(path: &Path, top: &str, entries: &[Entry]) -> Result<()> {
    let tmp = path.with_extension("gz.tmp");
    let file =
        std::fs::File::create(&tmp).with_context(|| format!("cannot create {}", tmp.display()))?;
    let mut tar = tar::Builder::new(GzEncoder::new(file, Compression::default()));
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    for entry in entries {
        let mut header = tar::Header::new_gnu();
        header.set_entry_type(tar::EntryType::Regular);
        header.set_size(entry.bytes.len() as u64);
        header.set_mode(0o644);
        header.set_mtime(now);
        let name = format!("{top}/{}", entry.path);
        tar.append_data(&mut header, &name, entry.bytes.as_slice())
            .with_context(|| format!("cannot add {name} to {}", tmp.display()))?;
    }
    tar.into_inner()
        .and_then(|gz| gz.finish())
        .with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;
    use crate::records::run_record::RunInfo;

    /// A project with an experiment file and both lock files, outside any git repository, and
    /// a run of that experiment in `reports/`; the project's paths and the run directory.
    fn synthetic_project(root: &Path) -> (Paths, PathBuf) {
        let paths = Paths::new(root.to_owned());
        let experiment = b"description = \"d\"\nx-axis = \"columns\"\n";
        std::fs::create_dir_all(root.join("experiments")).unwrap();
        std::fs::write(root.join("experiments/column-sweep.toml"), experiment).unwrap();
        std::fs::create_dir_all(root.join("worker")).unwrap();
        std::fs::write(root.join("Cargo.lock"), "# lock\n").unwrap();
        std::fs::write(root.join("worker/package-lock.json"), "{}\n").unwrap();
        let run_dir = root.join("reports/column-sweep/20261130T000000Z-sqlite");
        std::fs::create_dir_all(&run_dir).unwrap();
        let base = crate::records::run_record::tests_support::record();
        let record = RunRecord {
            run: RunInfo {
                id: "20261130T000000Z-sqlite".into(),
                x_axis: None,
                started: "2026-11-30T00:00:00Z".into(),
                ended: None,
                ..base.run
            },
            studies: vec![StudyFile {
                sha256: hash_bytes(experiment),
                ..crate::records::run_record::tests_support::study("column-sweep")
            }],
            versions: ToolVersions {
                wrangler: "4.164.0".into(),
                sqlite: "3.50.2".into(),
                ..ToolVersions::default()
            },
            ..base
        };
        record.write(&run_dir.join("run.toml")).unwrap();
        std::fs::write(run_dir.join("results.csv"), "experiment,target\n").unwrap();
        std::fs::write(run_dir.join("time.png"), [0x89, b'P', b'N', b'G', 0, 1, 2]).unwrap();
        (paths, run_dir)
    }

    fn shell_in(root: &Path) -> Shell {
        let sh = Shell::new().unwrap();
        sh.change_dir(root);
        sh
    }

    /// Every file of the archive at `path`: its path and its bytes.
    fn read_back(path: &Path) -> BTreeMap<String, Vec<u8>> {
        let gz = flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap());
        let mut archive = tar::Archive::new(gz);
        archive
            .entries()
            .unwrap()
            .map(|entry| {
                let mut entry = entry.unwrap();
                let path = entry.path().unwrap().to_string_lossy().into_owned();
                let mut bytes = Vec::new();
                entry.read_to_end(&mut bytes).unwrap();
                (path, bytes)
            })
            .collect()
    }

    #[test]
    fn an_archive_holds_the_run_its_files_versions_and_their_checksums() {
        let root = tempfile::tempdir().unwrap();
        let (paths, run_dir) = synthetic_project(root.path());
        let archive = write(&shell_in(root.path()), &paths, &run_dir, None).unwrap();
        assert_eq!(
            archive,
            run_dir
                .canonicalize()
                .unwrap()
                .with_file_name("20261130T000000Z-sqlite.tar.gz"),
            "next to the run directory"
        );
        let files = read_back(&archive);
        let top = "d1bench-20261130T000000Z-sqlite";
        let run = format!("{top}/reports/column-sweep/20261130T000000Z-sqlite");
        let names: Vec<&str> = files.keys().map(String::as_str).collect();
        assert_eq!(
            names,
            [
                format!("{top}/Cargo.lock"),
                format!("{top}/SHA256SUMS"),
                format!("{top}/VERSIONS"),
                format!("{top}/experiments/column-sweep.toml"),
                format!("{run}/results.csv"),
                format!("{run}/run.toml"),
                format!("{run}/time.png"),
                format!("{top}/worker/package-lock.json"),
            ]
        );
        // Byte for byte what is on disk.
        assert_eq!(
            files[&format!("{run}/time.png")],
            std::fs::read(run_dir.join("time.png")).unwrap()
        );
        assert_eq!(files[&format!("{top}/Cargo.lock")], b"# lock\n");

        // SHA256SUMS: every other file, once, with its hash, as `sha256sum -c` reads it.
        let sums = String::from_utf8(files[&format!("{top}/SHA256SUMS")].clone()).unwrap();
        let listed: Vec<&str> = sums
            .lines()
            .map(|l| l.split_once("  ").unwrap().1)
            .collect();
        assert_eq!(listed.len(), files.len() - 1, "{sums}");
        for line in sums.lines() {
            let (hash, path) = line.split_once("  ").unwrap();
            assert_eq!(hash, hash_bytes(&files[&format!("{top}/{path}")]), "{path}");
        }
        assert!(!listed.contains(&"SHA256SUMS"));

        // VERSIONS: what run.toml says the run ran with, and where each project file came from
        // (no git repository here: the working tree, the experiment checked by its hash).
        let versions = String::from_utf8(files[&format!("{top}/VERSIONS")].clone()).unwrap();
        let table: toml::Table = versions.parse().unwrap();
        assert_eq!(table["git"]["commit"].as_str(), Some("c0ffee"));
        assert_eq!(table["versions"]["wrangler"].as_str(), Some("4.164.0"));
        assert_eq!(table["versions"]["sqlite"].as_str(), Some("3.50.2"));
        assert_eq!(
            table["files"]["experiments/column-sweep.toml"].as_str(),
            Some("the working tree, sha256 as run.toml")
        );
        assert!(
            table["files"]["Cargo.lock"]
                .as_str()
                .unwrap()
                .starts_with("the working tree when archived"),
            "{versions}"
        );

        // --out elsewhere; never inside the run directory.
        let out = tempfile::tempdir().unwrap();
        let elsewhere = write(&shell_in(root.path()), &paths, &run_dir, Some(out.path())).unwrap();
        assert_eq!(elsewhere, out.path().join("20261130T000000Z-sqlite.tar.gz"));
        let err = write(&shell_in(root.path()), &paths, &run_dir, Some(&run_dir)).unwrap_err();
        assert!(
            err.to_string().contains("inside the run directory itself"),
            "{err:#}"
        );
    }

    #[test]
    fn a_directory_that_is_not_a_run_or_an_experiment_file_that_changed_is_refused() {
        let root = tempfile::tempdir().unwrap();
        let (paths, run_dir) = synthetic_project(root.path());
        let sh = shell_in(root.path());
        let reports = root.path().join("reports");
        let err = write(&sh, &paths, &reports, None).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "{} is not a run directory: it has no run.toml (cargo xtask run writes one into \
                 every run directory)",
                reports.display()
            )
        );
        let missing = root.path().join("nowhere");
        let err = write(&sh, &paths, &missing, None).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("{} is not a directory", missing.display())
        );
        std::fs::write(run_dir.join("run.toml"), "status = 1\n").unwrap();
        let err = write(&sh, &paths, &run_dir, None).unwrap_err();
        assert!(
            format!("{err:#}").contains("is not a d1bench run record"),
            "{err:#}"
        );

        let (paths, run_dir) = synthetic_project(root.path());
        std::fs::write(root.path().join("experiments/column-sweep.toml"), "changed").unwrap();
        let err = write(&sh, &paths, &run_dir, None).unwrap_err().to_string();
        assert!(
            err.starts_with("experiments/column-sweep.toml is not the file the run read"),
            "{err}"
        );
        assert!(err.contains(&hash_bytes(b"changed")), "{err}");
        assert!(
            !run_dir
                .with_file_name("20261130T000000Z-sqlite.tar.gz")
                .exists(),
            "no archive left behind"
        );
    }
}
