//! Keeping the Postgres runs for sources that build the same Postgres Worker: `cargo xtask
//! build-worker --carry-pg COMMIT` builds the probe Worker (`worker-pg/`) from its sources as
//! COMMIT has them and then as they are, in one scratch folder under one compiler, and only when
//! every file of the two builds is byte for byte the same records COMMIT's sources hash in
//! `worker-pg/carried.toml`, so that runs which recorded it stand for today's Worker.
//!
//! Why: a run on Postgres records the hash of the Worker's sources (`worker_pg_build`), and the
//! quoted-runs test holds it to today's. Those sources are whole folders (core/src, core-pg/src)
//! and so take in files that never build into the Worker, such as the planner's tests; without
//! this, formatting a test would mean making every Postgres run again. Unlike the D1 Worker's,
//! the Postgres Worker's build is not committed, so what is kept is the claim, shown by the two
//! builds, that the earlier sources and today's make one Worker.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};
use xshell::{Shell, cmd};

use super::carry::{Carried, sources_at};
use super::{copy_files, copy_spec, pg_inputs, pg_sources_hash, say, short};
use crate::base::PgWorker;
use crate::paths::Paths;
use crate::toolchain::{self, Toolchain};

/// The file, beside the Worker's sources (not among them: it does not change what they hash to).
const FILE: &str = "carried.toml";

/// `worker-pg/carried.toml`: earlier sources hashes shown to build the Worker today's build.
#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PgCarried {
    /// The sources hash the earlier ones were carried to; stale (and so nothing carried) once
    /// the sources hash to something else.
    pub sources: String,
    /// Earlier sources hashes, oldest first, each shown to build the same bytes as a later one
    /// or as `sources`.
    pub carried: Vec<String>,
}

impl PgCarried {
    fn path(root: &Path, which: PgWorker) -> std::path::PathBuf {
        root.join(which.dir_name()).join(FILE)
    }

    /// The committed file, or an empty one when there is none.
    pub fn read(root: &Path, which: PgWorker) -> Result<PgCarried> {
        let path = Self::path(root, which);
        match std::fs::read_to_string(&path) {
            Ok(text) => toml::from_str(&text).with_context(|| format!("in {}", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(PgCarried::default()),
            Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
        }
    }

    /// The earlier sources hashes that stand for `today`'s: none when the file was carried to
    /// other sources than today's.
    pub fn standing_for(&self, today: &str) -> &[String] {
        if self.sources == today {
            &self.carried
        } else {
            &[]
        }
    }

    /// The file once `earlier` was shown to build what `today` builds: the chain goes on from
    /// a file carried to today's sources or to `earlier`, and starts again from a stale one, as
    /// its links were shown equal to sources that are neither.
    fn with(self, earlier: &str, today: &str) -> PgCarried {
        let mut carried = if self.sources == today || self.sources == earlier {
            self.carried
        } else {
            Vec::new()
        };
        if !carried.iter().any(|c| c == earlier) {
            carried.push(earlier.to_owned());
        }
        PgCarried {
            sources: today.to_owned(),
            carried,
        }
    }

    fn write(&self, root: &Path, which: PgWorker) -> Result<()> {
        let path = Self::path(root, which);
        let text = format!(
            "# Earlier sources of {}/ shown to build the same Worker, byte for byte, as the \
             sources `sources` names\n# (`cargo xtask build-worker --carry-pg COMMIT`): a run \
             that recorded one of them as worker_pg_build ran this Worker.\n{}",
            which.dir_name(),
            toml::to_string(self)?
        );
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))
    }
}

/// What a scratch copy needs to build Postgres Worker `which`: the workspace a build reads (its
/// path dependencies inherit from it) and the Worker's own inputs.
fn spec(which: PgWorker) -> (Vec<String>, Vec<String>) {
    let (mut dirs, mut files) = copy_spec();
    let (own_dirs, own_files) = pg_inputs(which);
    dirs.extend(
        own_dirs
            .into_iter()
            .filter(|d| !dirs.contains(d))
            .collect::<Vec<_>>(),
    );
    files.extend(
        own_files
            .into_iter()
            .filter(|f| !files.contains(f))
            .collect::<Vec<_>>(),
    );
    (dirs, files)
}

/// Records `rev`'s sources of Postgres Worker `which` as standing for today's when the two
/// build the same bytes; refuses (nothing written) when they do not.
pub fn carry_pg(
    sh: &Shell,
    paths: &Paths,
    npm: &Toolchain,
    which: PgWorker,
    rev: &str,
) -> Result<Carried> {
    let root = &paths.root;
    let today = pg_sources_hash(root, which)?;
    let commit = format!("{rev}^{{commit}}");
    let rev = cmd!(sh, "git -C {root} rev-parse --verify {commit}")
        .quiet()
        .read()
        .with_context(|| format!("`{rev}` names no commit of this repository"))?;
    let name = which.dir_name();
    // One folder for both builds, one after the other: cargo hashes a path dependency outside
    // the Worker's own workspace (core, core-pg) by its absolute path into every symbol, so two
    // folders build other bytes from the same sources (found 2026-12-07: index_bg.wasm differed).
    let workspace = paths.scratch().join(format!("{name}-carry"));
    sources_at(sh, root, &rev, &workspace, spec(which))?;
    let earlier = pg_sources_hash(&workspace, which)?;
    let file = PgCarried::read(root, which)?;
    if earlier == today || file.standing_for(&today).contains(&earlier) {
        return Ok(Carried::AlreadyToday);
    }
    let tools = toolchain::ensure_build_tools(sh, paths)?;
    let rustc = toolchain::rustc_version(sh)?;
    say(&format!(
        "building {name}/ as {} has it, then as it is, in one scratch folder, under {rustc}",
        short(&rev)
    ));
    let target = root.join("target").join(name);
    let mut builds = Vec::new();
    for sources in ["earlier", "today"] {
        if sources == "today" {
            copy_files(root, &workspace, spec(which))?;
        }
        let dir = workspace.join(name);
        let _dir = sh.push_dir(&dir);
        let worker_build = &tools.worker_build;
        let mut build = cmd!(sh, "{worker_build} --release");
        for (key, value) in tools.env(npm, &workspace, &target) {
            build = build.env(key, value);
        }
        build
            .run()
            .with_context(|| format!("cannot build {} (worker-build --release)", dir.display()))?;
        builds.push(build_files(&dir.join("build"))?);
    }
    let (was, is) = (&builds[0], &builds[1]);
    let differ: std::collections::BTreeSet<&String> = was
        .keys()
        .chain(is.keys())
        .filter(|f| was.get(*f) != is.get(*f))
        .collect();
    if !differ.is_empty() {
        bail!(
            "{name}/ as {} has it builds other bytes than today's ({}): the change reaches the \
             Worker, so the runs made with it must be made again",
            short(&rev),
            differ
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    file.with(&earlier, &today).write(root, which)?;
    Ok(Carried::Carried {
        from: earlier,
        to: today,
    })
}

/// Each file under a build folder, by its path there, with its SHA-256.
fn build_files(dir: &Path) -> Result<BTreeMap<String, String>> {
    let mut files = Vec::new();
    toolchain::files_under(dir, &mut files)?;
    files
        .into_iter()
        .map(|path| {
            let bytes =
                std::fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
            let name = path.strip_prefix(dir).expect("under its folder");
            Ok((name.display().to_string(), toolchain::hash_bytes(&bytes)))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(sources: &str, carried: &[&str]) -> PgCarried {
        PgCarried {
            sources: sources.into(),
            carried: carried.iter().map(|c| c.to_string()).collect(),
        }
    }

    /// Only a file carried to today's sources stands for anything: one carried to other
    /// sources says nothing of today's.
    #[test]
    fn a_file_stands_for_todays_sources_only_when_carried_to_them() {
        let f = file("b", &["a"]);
        assert_eq!(f.standing_for("b"), ["a".to_string()]);
        assert!(f.standing_for("c").is_empty());
        assert!(PgCarried::default().standing_for("b").is_empty());
    }

    /// Carrying extends the chain from the sources the file was carried to, starts a new one
    /// when the file is stale, and keeps each hash once.
    #[test]
    fn carrying_extends_the_chain_or_starts_it_again() {
        assert_eq!(PgCarried::default().with("a", "b"), file("b", &["a"]));
        assert_eq!(file("b", &["a"]).with("b", "c"), file("c", &["a", "b"]));
        assert_eq!(
            file("c", &["a", "b"]).with("x", "c"),
            file("c", &["a", "b", "x"])
        );
        assert_eq!(
            file("c", &["a", "b"]).with("b", "c"),
            file("c", &["a", "b"])
        );
        assert_eq!(file("q", &["p"]).with("b", "c"), file("c", &["b"]));
    }

    /// The scratch copy holds the workspace a build reads and the Worker's own inputs, once
    /// each.
    #[test]
    fn the_scratch_copy_holds_the_workspace_and_the_workers_inputs() {
        let (dirs, files) = spec(PgWorker::Probes);
        for needed in ["worker-pg/src", "core-pg/src", "core/src"] {
            assert_eq!(dirs.iter().filter(|d| *d == needed).count(), 1, "{dirs:?}");
        }
        for needed in ["Cargo.toml", "worker-pg/Cargo.lock", "core-pg/Cargo.toml"] {
            assert_eq!(
                files.iter().filter(|f| *f == needed).count(),
                1,
                "{files:?}"
            );
        }
    }
}
