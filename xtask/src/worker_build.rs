//! The Worker build committed in `worker/build/` and the manifest beside it naming the sources it
//! was built from: a fresh clone runs that build without compiling anything for wasm (no
//! wasm-bindgen-cli, no worker-build, minutes saved), a changed source tree rebuilds it, and
//! [`check`] proves in a scratch copy that the committed build is what the sources produce,
//! byte for byte.
//!
//! Byte-identical rebuilds hold because the build's inputs are pinned (Cargo.lock, the tool
//! versions, `worker/package-lock.json` for wasm-opt and esbuild) and the paths that would leak
//! into the wasm (the workspace, the cargo registry) are remapped (see [`BuildTools::env`]). The
//! compiler is the one input the project cannot pin here (a machine has the one rustc it has),
//! so the manifest records it and [`check`] rebuilds only under the same one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};
use xshell::{Shell, cmd};

use crate::base::PgWorker;
use crate::make_once::make_once;
use crate::paths::Paths;
use crate::toolchain::{self, BuildTools, Toolchain, WORKER_BUILD_VERSION};

pub mod carry;
pub mod carry_pg;

/// Where the manifest lives, relative to the project root.
pub const MANIFEST: &str = "worker/build-manifest.toml";
/// What worker-build writes into `worker/build/` that the Worker runs from.
const BUILD_FILES: [&str; 4] = [
    "index.js",
    "index_bg.wasm",
    "package.json",
    "worker/shim.mjs",
];
/// Source trees and files whose contents decide the build (relative to the root).
const INPUT_DIRS: [&str; 2] = ["worker/src", "core/src"];
/// Cargo.lock is an input too, but only the Worker's own packages in it (see [`worker_lock`]):
/// a crate the xtask adds does not change what the Worker is built from.
const INPUT_FILES: [&str; 5] = [
    "Cargo.toml",
    "worker/Cargo.toml",
    "core/Cargo.toml",
    // wasm-opt and esbuild, which worker-build runs, come from here.
    "worker/package-lock.json",
    "worker/package.json",
];

/// The crates outside the workspace's members that the xtask depends on by path: cargo loads
/// them to read the workspace, so the rebuild's scratch copy needs them (a test checks this list
/// against xtask/Cargo.toml).
const XTASK_PATH_DEPENDENCIES: [&str; 2] = ["core-pg", "core-pg-ladder"];

fn say(message: &str) {
    eprintln!("[setup] {message}");
}

/// `worker/build-manifest.toml`: what the committed build was made from and with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Manifest {
    /// SHA-256 over the inputs' relative paths and contents.
    pub sources: String,
    /// `rustc --version` of the compiler that built it.
    pub rustc: String,
    pub worker_build: String,
    pub wasm_bindgen: String,
    /// SHA-256 of each file under `worker/build/`.
    pub files: BTreeMap<String, String>,
    /// Earlier sources hashes the build stands for, oldest first: each was shown to build the
    /// same bytes as the next (`build-worker --carry`), so a run that recorded one of them ran
    /// these bytes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub carried: Vec<String>,
}

impl Manifest {
    fn path(root: &Path) -> PathBuf {
        root.join(MANIFEST)
    }

    /// The committed manifest, or `None` when there is none.
    pub fn read(root: &Path) -> Result<Option<Manifest>> {
        let path = Self::path(root);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        };
        crate::studies::files::parse_toml(&path, &text).map(Some)
    }

    fn write(&self, root: &Path) -> Result<()> {
        let header = "# The Worker build committed in worker/build/: the sources it was built from and the\n\
                      # tools it was built with. Written by `cargo xtask build-worker` (and by any run whose\n\
                      # sources changed); `cargo xtask build-worker --check` rebuilds it in a scratch copy\n\
                      # and compares byte for byte; `--carry` keeps it for sources that build the same\n\
                      # bytes as the ones it was built from, which `carried` lists.\n";
        let path = Self::path(root);
        std::fs::write(&path, format!("{header}{}", toml::to_string(self)?))
            .with_context(|| format!("cannot write {}", path.display()))
    }
}

/// The files whose contents decide the build, in a fixed order.
fn inputs(root: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for dir in INPUT_DIRS {
        toolchain::files_under(&root.join(dir), &mut files)?;
    }
    files.extend(INPUT_FILES.iter().map(|file| root.join(file)));
    Ok(files)
}

/// The hash the manifest's `sources` must equal for the tree at `root`: the input files, then
/// the Worker's packages in Cargo.lock.
pub fn sources_hash(root: &Path) -> Result<String> {
    let lock_path = root.join("Cargo.lock");
    let lock = std::fs::read_to_string(&lock_path)
        .with_context(|| format!("cannot read {}", lock_path.display()))?;
    let packages = worker_lock(&lock).with_context(|| format!("in {}", lock_path.display()))?;
    let mut files = named(root, inputs(root)?)?;
    files.push((
        "Cargo.lock (the Worker's packages)".into(),
        packages.into_bytes(),
    ));
    Ok(toolchain::hash_named(&files))
}

/// The hash of the JavaScript Workers' sources (`worker-js/`: both entries and their wrangler
/// configurations, run as they are, no build step): what run.toml records as `worker_js_build`
/// for a run that used one, so a quoted run whose JavaScript side went stale is seen.
pub fn js_sources_hash(root: &Path) -> Result<String> {
    let mut files = Vec::new();
    toolchain::files_under(&root.join("worker-js"), &mut files)?;
    Ok(toolchain::hash_named(&named(root, files)?))
}

/// Each of `files` read, named by its path relative to `root`: what a sources hash hashes.
fn named(root: &Path, files: Vec<PathBuf>) -> Result<Vec<(PathBuf, Vec<u8>)>> {
    files
        .into_iter()
        .map(|file| {
            let bytes =
                std::fs::read(&file).with_context(|| format!("cannot read {}", file.display()))?;
            let name = file.strip_prefix(root).unwrap_or(&file).to_path_buf();
            Ok((name, bytes))
        })
        .collect()
}

/// The hash of the ORM Worker's sources and what pins its libraries (`worker-orm/`: its entry
/// modules, wrangler configuration, package.json, package-lock.json and Prisma schema; not
/// `node_modules` or the generated client, which those determine): what run.toml records as
/// `worker_orm_build` for a run with `--worker js-orm`.
pub fn orm_sources_hash(root: &Path) -> Result<String> {
    let dir = root.join("worker-orm");
    let mut files = Vec::new();
    toolchain::files_under(&dir.join("src"), &mut files)?;
    for file in [
        "wrangler.toml",
        "package.json",
        "package-lock.json",
        "prisma/schema.prisma",
    ] {
        files.push(dir.join(file));
    }
    toolchain::hash_tree(root, &files)
}

/// A Postgres Worker's inputs, relative to the root: its crate (sources, its own workspace's
/// manifest and lock, its wrangler configuration), the Postgres planner it runs (and, for the
/// ladder Worker, the rungs' planner) and the core that planner builds on, and the npm lock that
/// pins wasm-opt and esbuild. The probe Worker's list is what its committed runs were hashed
/// with: the ladder crates are not in it.
fn pg_inputs(which: PgWorker) -> (Vec<String>, Vec<String>) {
    let own = which.dir_name();
    let mut dirs = vec![
        format!("{own}/src"),
        "core-pg/src".into(),
        "core/src".into(),
    ];
    let mut files = vec![
        format!("{own}/Cargo.toml"),
        format!("{own}/Cargo.lock"),
        format!("{own}/wrangler.toml"),
        "core-pg/Cargo.toml".into(),
        "core/Cargo.toml".into(),
        "worker/package-lock.json".into(),
    ];
    if which == PgWorker::Ladders {
        dirs.push("core-pg-ladder/src".into());
        files.push("core-pg-ladder/Cargo.toml".into());
    }
    (dirs, files)
}

/// The hash of the Postgres Worker `which`'s sources: what run.toml records as `worker_pg_build`
/// for a run on the hyperdrive targets, and the stamp its build is kept under.
pub fn pg_sources_hash(root: &Path, which: PgWorker) -> Result<String> {
    let (dirs, inputs) = pg_inputs(which);
    let mut files = Vec::new();
    for dir in dirs {
        toolchain::files_under(&root.join(dir), &mut files)?;
    }
    files.extend(inputs.iter().map(|file| root.join(file)));
    toolchain::hash_tree(root, &files)
}

/// Cargo's target directory for Postgres Worker `which`'s wasm build.
fn pg_target(paths: &Paths, which: PgWorker) -> PathBuf {
    paths.root.join("target").join(which.dir_name())
}

/// Makes `<which>/build/` the build of that Postgres Worker's current sources: kept when its
/// stamp names them, else built with worker-build (the D1 Worker's tools and environment: off
/// the network, paths remapped) into `target/<which>`. Not committed: the committed Postgres
/// runs are checked against the sources' hash, and a build takes about a minute once.
pub fn ensure_pg(sh: &Shell, paths: &Paths, npm: &Toolchain, which: PgWorker) -> Result<()> {
    let sources = pg_sources_hash(&paths.root, which)?;
    let name = which.dir_name();
    let dir = paths.worker_pg_of(which);
    let stamp = dir.join("build").join(".d1bench-sources-sha256");
    let current = || {
        Ok(std::fs::read_to_string(&stamp).is_ok_and(|s| s == sources)
            && dir.join("build/worker/shim.mjs").exists())
    };
    // Once only, though two runs (or two end-to-end tests) ask at the same moment: a second
    // build would rewrite its build/ under the first one's wrangler dev.
    make_once(&paths.scratch(), &format!("{name}-build"), current, || {
        let tools = toolchain::ensure_build_tools(sh, paths)?;
        build_in(sh, &paths.root, name, npm, &tools, &pg_target(paths, which))?;
        std::fs::write(&stamp, &sources)
            .with_context(|| format!("cannot write {}", stamp.display()))
    })
}

/// One `[[package]]` of Cargo.lock, as far as the hash needs it.
#[derive(Debug, Deserialize, Serialize)]
struct LockedPackage {
    name: String,
    version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    source: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    checksum: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    dependencies: Vec<String>,
}

#[derive(Debug, Deserialize)]
struct Lock {
    #[serde(default)]
    package: Vec<LockedPackage>,
}

/// The packages of `lock` (Cargo.lock's text) that the Worker can depend on: `d1bench-worker`
/// and everything its entries reach (dev and target-specific dependencies included, a
/// superset of what the wasm build compiles), written back as TOML in the lock's order.
/// A dependency entry is `name`, `name version` or `name version (source)`.
fn worker_lock(lock: &str) -> Result<String> {
    let lock: Lock = toml::from_str(lock).context("Cargo.lock is not a lock file")?;
    let mut wanted = vec![("d1bench-worker".to_owned(), None::<String>)];
    let mut kept = vec![false; lock.package.len()];
    while let Some((name, version)) = wanted.pop() {
        let found =
            lock.package.iter().enumerate().filter(|(_, p)| {
                p.name == name && version.as_ref().is_none_or(|v| *v == p.version)
            });
        let mut any = false;
        for (i, package) in found {
            any = true;
            if std::mem::replace(&mut kept[i], true) {
                continue;
            }
            for dependency in &package.dependencies {
                let mut words = dependency.split_whitespace();
                let name = words.next().unwrap_or_default().to_owned();
                wanted.push((name, words.next().map(str::to_owned)));
            }
        }
        if !any {
            bail!("no package {name} {} in it", version.unwrap_or_default());
        }
    }
    let package = lock
        .package
        .into_iter()
        .zip(kept)
        .filter_map(|(package, kept)| kept.then_some(package))
        .collect::<Vec<_>>();
    #[derive(Serialize)]
    struct Kept {
        package: Vec<LockedPackage>,
    }
    Ok(toml::to_string(&Kept { package })?)
}

/// SHA-256 of each of the build's files under `build_dir`; an error names a missing one.
fn build_hashes(build_dir: &Path) -> Result<BTreeMap<String, String>> {
    BUILD_FILES
        .iter()
        .map(|name| {
            let path = build_dir.join(name);
            let bytes =
                std::fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
            Ok((name.to_string(), toolchain::hash_bytes(&bytes)))
        })
        .collect()
}

/// How the Worker came to be ready.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ready {
    /// The committed build is the build of these sources: nothing compiled.
    Committed,
    /// The sources changed: built here, and the manifest rewritten.
    Rebuilt,
}

/// Makes the Worker in `worker/build/` the build of the current sources: the committed one when
/// the manifest says it is (and its files are intact), else a rebuild.
pub fn ensure(sh: &Shell, paths: &Paths, npm: &Toolchain) -> Result<Ready> {
    let sources = sources_hash(&paths.root)?;
    let current = || {
        Ok(Manifest::read(&paths.root)?.is_some_and(|manifest| {
            manifest.sources == sources
                && build_hashes(&paths.worker().join("build")).ok().as_ref()
                    == Some(&manifest.files)
        }))
    };
    let mut ready = Ready::Committed;
    make_once(&paths.scratch(), "worker-build", current, || {
        say(&format!(
            "worker/build is not the build of these sources ({MANIFEST} says otherwise): building it"
        ));
        rebuild(sh, paths, npm)?;
        say(&format!(
            "rebuilt worker/build and {MANIFEST}: commit both with the change to the sources"
        ));
        ready = Ready::Rebuilt;
        Ok(())
    })?;
    Ok(ready)
}

/// Builds the Worker from the sources and rewrites the manifest. It builds in the same scratch
/// copy `check` builds in, then copies the build into `worker/build`: a build in the working
/// tree itself came out with other closure symbols than any scratch copy (measured 2026-12-03:
/// the tree gave index_bg.wasm 525d07e9, scratch copies at two paths both a54fbab4), so only a
/// build made as the check makes it can be checked byte for byte.
pub fn rebuild(sh: &Shell, paths: &Paths, npm: &Toolchain) -> Result<Manifest> {
    let tools = toolchain::ensure_build_tools(sh, paths)?;
    let scratch = paths.scratch().join("worker-build");
    copy_sources(&paths.root, &scratch)?;
    build_in(sh, &scratch, "worker", npm, &tools, &paths.worker_target())?;
    let (built, committed) = (scratch.join("worker/build"), paths.worker().join("build"));
    for name in BUILD_FILES {
        let (from, to) = (built.join(name), committed.join(name));
        std::fs::create_dir_all(to.parent().expect("a build file has a directory"))?;
        std::fs::copy(&from, &to)
            .with_context(|| format!("cannot copy {} to {}", from.display(), to.display()))?;
    }
    let manifest = manifest_for(&paths.root, &tools, &committed)?;
    manifest.write(&paths.root)?;
    Ok(manifest)
}

fn manifest_for(root: &Path, tools: &BuildTools, build_dir: &Path) -> Result<Manifest> {
    Ok(Manifest {
        sources: sources_hash(root)?,
        rustc: tools.rustc.clone(),
        worker_build: WORKER_BUILD_VERSION.to_owned(),
        wasm_bindgen: toolchain::locked_version(&root.join("Cargo.lock"), "wasm-bindgen")?,
        files: build_hashes(build_dir)?,
        // New bytes stand for no earlier sources.
        carried: Vec::new(),
    })
}

/// `worker-build --release` in `<workspace>/worker`, off the network and path-independent.
fn build_in(
    sh: &Shell,
    workspace: &Path,
    worker: &str,
    npm: &Toolchain,
    tools: &BuildTools,
    target_dir: &Path,
) -> Result<()> {
    say(&format!(
        "building {worker}/ (worker-build --release; about a minute cold, seconds after)"
    ));
    let dir = workspace.join(worker);
    let _dir = sh.push_dir(&dir);
    let worker_build = &tools.worker_build;
    let mut build = cmd!(sh, "{worker_build} --release");
    for (key, value) in tools.env(npm, workspace, target_dir) {
        build = build.env(key, value);
    }
    build.run().with_context(|| {
        format!(
            "cannot build {worker}/ (worker-build --release in {})",
            dir.display()
        )
    })
}

/// What [`check`] found.
#[derive(Debug, Default)]
pub struct CheckReport {
    /// Each way the committed build differs from what the sources produce.
    pub problems: Vec<String>,
    /// Why the byte-for-byte rebuild was not done, when it was not.
    pub not_rebuilt: Option<String>,
}

/// The differences between the committed manifest and what was found: a line per difference.
fn differences(committed: &Manifest, found: &Manifest) -> Vec<String> {
    let mut problems = Vec::new();
    if committed.sources != found.sources {
        problems.push(format!(
            "{MANIFEST}: the sources changed since the committed build (sources {} committed, {} now); run `cargo xtask build-worker` and commit worker/build and {MANIFEST}",
            short(&committed.sources),
            short(&found.sources)
        ));
    }
    for name in BUILD_FILES {
        let (was, is) = (committed.files.get(name), found.files.get(name));
        if was != is {
            problems.push(format!(
                "worker/build/{name}: {MANIFEST} records {}, the build has {}",
                was.map_or("nothing", |h| short(h)),
                is.map_or("nothing", |h| short(h))
            ));
        }
    }
    problems
}

fn short(hash: &str) -> &str {
    &hash[..hash.len().min(12)]
}

/// The committed manifest, and each way it disagrees with the sources and the files under
/// `worker/build/` at `root` (hashes only, nothing built: the first half of [`check`]).
pub fn check_committed(root: &Path) -> Result<(Manifest, Vec<String>)> {
    let Some(committed) = Manifest::read(root)? else {
        bail!("{MANIFEST} is missing: run `cargo xtask build-worker` and commit what it writes");
    };
    let as_committed = Manifest {
        sources: sources_hash(root)?,
        files: build_hashes(&root.join("worker/build"))?,
        ..committed.clone()
    };
    let problems = differences(&committed, &as_committed);
    Ok((committed, problems))
}

/// Checks the committed build: its manifest against the sources and the files, then (under the
/// manifest's rustc) a rebuild from a scratch copy of the sources compared byte for byte.
pub fn check(sh: &Shell, paths: &Paths, npm: &Toolchain) -> Result<CheckReport> {
    let root = &paths.root;
    let (committed, problems) = check_committed(root)?;
    let mut report = CheckReport {
        problems,
        ..CheckReport::default()
    };

    let rustc = toolchain::rustc_version(sh)?;
    if rustc != committed.rustc {
        report.not_rebuilt = Some(format!(
            "the committed build was made with `{}`, this machine has `{rustc}`: a byte-for-byte rebuild needs the same compiler",
            committed.rustc
        ));
        return Ok(report);
    }
    let tools = toolchain::ensure_build_tools(sh, paths)?;
    let scratch = paths.scratch().join("worker-check");
    copy_sources(root, &scratch)?;
    build_in(sh, &scratch, "worker", npm, &tools, &paths.worker_target())?;
    // The sources were compared above; here only what they build.
    let rebuilt = Manifest {
        files: build_hashes(&scratch.join("worker").join("build"))?,
        ..committed.clone()
    };
    for line in differences(&committed, &rebuilt) {
        report
            .problems
            .push(format!("rebuilt from the sources: {line}"));
    }
    Ok(report)
}

/// What a scratch copy that builds the Worker holds, relative to the root: source trees (every
/// file under each) and single files.
fn copy_spec() -> (Vec<String>, Vec<String>) {
    let mut dirs: Vec<String> = INPUT_DIRS.iter().map(|d| d.to_string()).collect();
    let mut files: Vec<String> = INPUT_FILES.iter().map(|f| f.to_string()).collect();
    // The lock file, so the copy builds the locked versions: without it cargo resolves afresh,
    // and a release published since (http 1.6.0 for 1.5.0, url 2.5.9 for 2.5.8, found
    // 2026-12-06) builds other closure symbols from the same sources.
    files.push("Cargo.lock".into());
    // The workspace's other member must be loadable for cargo to read the workspace, and so
    // must the crates beside the workspace it depends on by path (the Postgres planners).
    files.push("xtask/Cargo.toml".into());
    dirs.push("xtask/src".into());
    for dir in XTASK_PATH_DEPENDENCIES {
        files.push(format!("{dir}/Cargo.toml"));
        dirs.push(format!("{dir}/src"));
    }
    (dirs, files)
}

/// A copy of the workspace that building the Worker reads ([`copy_spec`]: no build output, no
/// node_modules), at `to`, replacing what was there.
fn copy_sources(root: &Path, to: &Path) -> Result<()> {
    copy_files(root, to, copy_spec())
}

/// The files `spec` names (folders, single files), copied from `root` to `to`, replacing what
/// was there.
fn copy_files(root: &Path, to: &Path, spec: (Vec<String>, Vec<String>)) -> Result<()> {
    if to.exists() {
        std::fs::remove_dir_all(to).with_context(|| format!("cannot clear {}", to.display()))?;
    }
    let (dirs, single) = spec;
    let mut files: Vec<PathBuf> = single.iter().map(|f| root.join(f)).collect();
    for dir in dirs {
        toolchain::files_under(&root.join(dir), &mut files)?;
    }
    for file in files {
        let relative = file.strip_prefix(root).expect("inputs lie under the root");
        let dest = to.join(relative);
        std::fs::create_dir_all(dest.parent().expect("a file has a parent"))?;
        std::fs::copy(&file, &dest)
            .with_context(|| format!("cannot copy {} to {}", file.display(), dest.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
