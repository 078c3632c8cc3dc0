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
use super::{build_in, copy_files, copy_spec, pg_inputs, pg_sources_hash, pg_target, say, short};
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
    /// `rustc --version` of the compiler both builds were made with: the claim holds for runs
    /// whose Worker that compiler built, and says nothing of another's.
    pub rustc: String,
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

    /// The earlier sources hashes that stand for `today`'s, for a run whose Worker `rustc`
    /// built: none when the file was carried to other sources than today's, or under another
    /// compiler.
    pub fn standing_for(&self, today: &str, rustc: &str) -> &[String] {
        if self.sources == today && self.rustc == rustc {
            &self.carried
        } else {
            &[]
        }
    }

    /// The file once `earlier` was shown to build what `today` builds under `rustc`: the chain
    /// goes on from a file carried to today's sources or to `earlier` under the same compiler,
    /// and starts again otherwise, as its links were shown for other sources or another compiler.
    fn with(self, earlier: &str, today: &str, rustc: &str) -> PgCarried {
        let continues = self.rustc == rustc && (self.sources == today || self.sources == earlier);
        let mut carried = if continues { self.carried } else { Vec::new() };
        if !carried.iter().any(|c| c == earlier) {
            carried.push(earlier.to_owned());
        }
        PgCarried {
            sources: today.to_owned(),
            carried,
            rustc: rustc.to_owned(),
        }
    }

    fn write(&self, root: &Path, which: PgWorker) -> Result<()> {
        let path = Self::path(root, which);
        let text = format!(
            "# Earlier sources of {}/ shown to build the same Worker, byte for byte, as the \
             sources `sources` names, under `rustc`\n# (`cargo xtask build-worker --carry-pg \
             COMMIT`): a run that recorded one of them as worker_pg_build, under that compiler, \
             ran this Worker.\n{}",
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
    let rustc = toolchain::rustc_version(sh)?;
    if earlier == today || file.standing_for(&today, &rustc).contains(&earlier) {
        return Ok(Carried::AlreadyToday);
    }
    let tools = toolchain::ensure_build_tools(sh, paths)?;
    say(&format!(
        "building {name}/ as {} has it, then as it is, in one scratch folder, under {rustc}",
        short(&rev)
    ));
    let target = pg_target(paths, which);
    build_in(sh, &workspace, name, npm, &tools, &target)?;
    let was = build_files(&workspace.join(name).join("build"))?;
    copy_files(root, &workspace, spec(which))?;
    build_in(sh, &workspace, name, npm, &tools, &target)?;
    let is = build_files(&workspace.join(name).join("build"))?;
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
    file.with(&earlier, &today, &rustc).write(root, which)?;
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

    const RUSTC: &str = "rustc 1.95.0";

    fn file(sources: &str, carried: &[&str]) -> PgCarried {
        PgCarried {
            sources: sources.into(),
            carried: carried.iter().map(|c| c.to_string()).collect(),
            rustc: RUSTC.into(),
        }
    }

    /// Only a file carried to today's sources, under the run's compiler, stands for anything.
    #[test]
    fn a_file_stands_for_todays_sources_only_when_carried_to_them() {
        let f = file("b", &["a"]);
        assert_eq!(f.standing_for("b", RUSTC), ["a".to_string()]);
        assert!(f.standing_for("c", RUSTC).is_empty());
        assert!(f.standing_for("b", "rustc 1.96.0").is_empty());
        assert!(PgCarried::default().standing_for("b", RUSTC).is_empty());
    }

    /// Carrying extends the chain from the sources the file was carried to, starts a new one
    /// when the file is stale or was made under another compiler, and keeps each hash once.
    #[test]
    fn carrying_extends_the_chain_or_starts_it_again() {
        let carry = |f: PgCarried, earlier, today| f.with(earlier, today, RUSTC);
        assert_eq!(carry(PgCarried::default(), "a", "b"), file("b", &["a"]));
        assert_eq!(carry(file("b", &["a"]), "b", "c"), file("c", &["a", "b"]));
        assert_eq!(
            carry(file("c", &["a", "b"]), "x", "c"),
            file("c", &["a", "b", "x"])
        );
        assert_eq!(
            carry(file("c", &["a", "b"]), "b", "c"),
            file("c", &["a", "b"])
        );
        assert_eq!(carry(file("q", &["p"]), "b", "c"), file("c", &["b"]));
        let other = PgCarried {
            rustc: "rustc 1.94.0".into(),
            ..file("b", &["a"])
        };
        assert_eq!(carry(other, "b", "c"), file("c", &["b"]));
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
