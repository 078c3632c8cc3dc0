//! Keeping the committed Worker build when its sources change without changing what they build:
//! `cargo xtask build-worker --carry` builds the sources the manifest names (as the commit that
//! last wrote it has them) and today's, each in a scratch copy under one compiler, and only when
//! every file of the two builds is byte for byte the same does it move the manifest to today's
//! sources, the earlier hash kept in `carried`.
//!
//! Why: the committed build is what every quoted run measured (run.toml records its wasm's
//! hash), and it cannot be made again byte for byte today (the rebuild differs from it in
//! closure symbols and 1.2 KB; see the CHANGELOG of 2026-12-07), so a rebuild for a change
//! that does not touch the D1 Worker's code (a strategy only the Postgres Worker compiles, a
//! comment) would replace the bytes every quoted run was measured by. Two builds of today that
//! agree show that the change compiles to nothing in the D1 Worker, so the bytes the earlier
//! sources built stand for today's too.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use xshell::{Shell, cmd};

use super::{
    BUILD_FILES, MANIFEST, Manifest, build_hashes, build_in, copy_spec, say, short, sources_hash,
};
use crate::paths::Paths;
use crate::toolchain::{self, Toolchain};

/// What `--carry` did.
#[derive(Debug)]
pub enum Carried {
    /// The manifest already names today's sources: nothing built.
    AlreadyToday,
    /// Both builds were the same: the manifest now names today's sources.
    Carried { from: String, to: String },
}

/// Moves the manifest to today's sources when they build the same bytes as the sources it
/// names; refuses (nothing written) when they do not.
pub fn carry(sh: &Shell, paths: &Paths, npm: &Toolchain) -> Result<Carried> {
    let root = &paths.root;
    let Some(mut manifest) = Manifest::read(root)? else {
        bail!("{MANIFEST} is missing: there is no committed build to carry");
    };
    let today = sources_hash(root)?;
    if manifest.sources == today {
        return Ok(Carried::AlreadyToday);
    }
    // Two builds that agree under this compiler stand for the committed one only if it was made
    // with this compiler too.
    let rustc = toolchain::rustc_version(sh)?;
    if rustc != manifest.rustc {
        bail!(
            "the committed build was made with `{}`, this machine has `{rustc}`: builds that agree \
             here say nothing of what that compiler made",
            manifest.rustc
        );
    }
    let tools = toolchain::ensure_build_tools(sh, paths)?;
    let rev = manifest_commit(sh, root)?;
    let earlier = paths.scratch().join("worker-carry-earlier");
    sources_at(sh, root, &rev, &earlier, copy_spec())?;
    if sources_hash(&earlier)? != manifest.sources {
        bail!(
            "the sources at {} (the commit that last wrote {MANIFEST}) hash to {}, not to the \
             {} it names: the committed manifest does not describe its commit's sources",
            short(&rev),
            short(&sources_hash(&earlier)?),
            short(&manifest.sources)
        );
    }
    let now = paths.scratch().join("worker-carry-today");
    super::copy_sources(root, &now)?;
    say(&format!(
        "building the sources {MANIFEST} names (at {}) and today's, each in a scratch copy, \
         under {rustc}",
        short(&rev)
    ));
    build_in(sh, &earlier, "worker", npm, &tools, &paths.worker_target())?;
    build_in(sh, &now, "worker", npm, &tools, &paths.worker_target())?;
    let (was, is) = (
        build_hashes(&earlier.join("worker/build"))?,
        build_hashes(&now.join("worker/build"))?,
    );
    let differ: Vec<&str> = BUILD_FILES
        .iter()
        .copied()
        .filter(|name| was.get(*name) != is.get(*name))
        .collect();
    if !differ.is_empty() {
        bail!(
            "today's sources build other bytes than the sources {MANIFEST} names ({}): the change \
             reaches the D1 Worker, so `cargo xtask build-worker` rebuilds it, and every quoted \
             run must be made again with it",
            differ.join(", ")
        );
    }
    let from = std::mem::replace(&mut manifest.sources, today.clone());
    manifest.carried.push(from.clone());
    manifest.write(root)?;
    Ok(Carried::Carried { from, to: today })
}

/// The commit that last wrote the manifest: the sources it names are that commit's.
fn manifest_commit(sh: &Shell, root: &Path) -> Result<String> {
    let rev = cmd!(sh, "git -C {root} log -1 --format=%H -- {MANIFEST}")
        .read()
        .context("cannot find the commit that last wrote the manifest")?;
    if rev.is_empty() {
        bail!("{MANIFEST} is not committed: there is no earlier build to carry from");
    }
    Ok(rev)
}

/// The sources `spec` names (folders, single files; a build's: [`copy_spec`]) as commit `rev`
/// has them, written under `to`; what the commit did not have (a crate added since) is left
/// out, as its workspace had it.
pub(super) fn sources_at(
    sh: &Shell,
    root: &Path,
    rev: &str,
    to: &Path,
    spec: (Vec<String>, Vec<String>),
) -> Result<()> {
    if to.exists() {
        std::fs::remove_dir_all(to).with_context(|| format!("cannot clear {}", to.display()))?;
    }
    let (dirs, single) = spec;
    let listed = cmd!(sh, "git -C {root} ls-tree -r --name-only {rev}").read()?;
    let files = listed.lines().filter(|f| {
        single.iter().any(|s| s == f) || dirs.iter().any(|d| Path::new(f).starts_with(d))
    });
    for file in files {
        let output = cmd!(sh, "git -C {root} show {rev}:{file}")
            .quiet()
            .output()?;
        let dest: PathBuf = to.join(file);
        std::fs::create_dir_all(dest.parent().expect("a file has a parent"))?;
        std::fs::write(&dest, output.stdout)
            .with_context(|| format!("cannot write {}", dest.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `--carry` builds as the earlier sources is what the manifest's commit had: they hash
    /// to the sources the manifest names at that commit.
    #[test]
    fn the_sources_at_the_manifests_commit_hash_to_what_it_named_there() {
        let root = crate::paths::project_root();
        let sh = Shell::new().unwrap();
        let rev = manifest_commit(&sh, &root).unwrap();
        let text = cmd!(sh, "git -C {root} show {rev}:{MANIFEST}")
            .read()
            .unwrap();
        let named: Manifest = toml::from_str(&text).unwrap();
        let dir = tempfile::tempdir().unwrap();
        sources_at(&sh, &root, &rev, dir.path(), copy_spec()).unwrap();
        assert_eq!(sources_hash(dir.path()).unwrap(), named.sources);
    }
}
