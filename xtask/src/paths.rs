//! Where things live: the project root, d1bench's scratch space under target/, the tool cache.

use crate::base::PgWorker;
use std::path::{Component, Path, PathBuf};

/// The repository's root (the xtask crate's parent directory).
pub fn project_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives one level below the root")
        .to_owned()
}

/// `to` relative to the directory `from` (both made absolute first), for links in index.md and
/// the HTML pages.
pub fn relative(from: &Path, to: &Path) -> PathBuf {
    let absolute = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_owned());
    let (from, to) = (absolute(from), absolute(to));
    let from: Vec<Component> = from.components().collect();
    let to: Vec<Component> = to.components().collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut out = PathBuf::new();
    for _ in common..from.len() {
        out.push("..");
    }
    for part in &to[common..] {
        out.push(part);
    }
    out
}

/// Paths relative to the project root; everything d1bench writes outside `reports/` is under
/// `target/d1bench/`, never in the user's home (except the tool cache below).
pub struct Paths {
    pub root: PathBuf,
    /// Where experiment files are read from, when not `experiments/` (`advise --measure`
    /// writes the one cell it measures under `target/d1bench/`).
    experiments: Option<PathBuf>,
}

impl Paths {
    pub fn new(root: PathBuf) -> Self {
        Paths {
            root,
            experiments: None,
        }
    }
    /// The same paths, with experiment files read from `dir`.
    pub fn with_experiments(self, dir: PathBuf) -> Self {
        Paths {
            experiments: Some(dir),
            ..self
        }
    }
    pub fn experiments(&self) -> PathBuf {
        self.experiments
            .clone()
            .unwrap_or_else(|| self.root.join("experiments"))
    }
    pub fn reports(&self) -> PathBuf {
        self.root.join("reports")
    }
    pub fn worker(&self) -> PathBuf {
        self.root.join("worker")
    }
    /// The JavaScript Worker's folder (plain JavaScript, no build step).
    pub fn worker_js(&self) -> PathBuf {
        self.root.join("worker-js")
    }
    /// The ORM Worker's folder: its sources import the JavaScript Worker's, wrangler bundles them
    /// with the libraries of its own `node_modules`.
    pub fn worker_orm(&self) -> PathBuf {
        self.root.join("worker-orm")
    }
    /// The Postgres Worker's folder (the hyperdrive target): a crate of its own, built by
    /// worker-build before a run into its `build/`.
    pub fn worker_pg(&self) -> PathBuf {
        self.worker_pg_of(PgWorker::Probes)
    }
    /// The folder of the Postgres Worker `which` (its sources, wrangler configuration and build).
    pub fn worker_pg_of(&self, which: PgWorker) -> PathBuf {
        self.root.join(which.dir_name())
    }
    /// The folder of `worker`'s sources and wrangler configuration.
    pub fn worker_of(&self, worker: crate::base::WorkerKind) -> PathBuf {
        match worker {
            crate::base::WorkerKind::Rust => self.worker(),
            crate::base::WorkerKind::Js | crate::base::WorkerKind::JsMinimal => self.worker_js(),
            crate::base::WorkerKind::JsOrm => self.worker_orm(),
        }
    }
    /// The wrangler configuration `wrangler dev` runs `worker` with.
    pub fn wrangler_config(&self, worker: crate::base::WorkerKind) -> PathBuf {
        let file = match worker {
            crate::base::WorkerKind::JsMinimal => "wrangler.minimal.toml",
            _ => "wrangler.toml",
        };
        self.worker_of(worker).join(file)
    }
    pub fn node_modules(&self) -> PathBuf {
        self.worker().join("node_modules")
    }
    /// d1bench's scratch space.
    pub fn scratch(&self) -> PathBuf {
        self.root.join("target").join("d1bench")
    }
    /// Cargo's target directory for the wasm build, apart from the host build's so the two
    /// never wait on each other's lock.
    pub fn worker_target(&self) -> PathBuf {
        self.root.join("target").join("worker")
    }
    /// The built Worker's entry point (worker-build's output).
    pub fn worker_entry(&self) -> PathBuf {
        self.worker().join("build").join("worker").join("shim.mjs")
    }
    /// The built Postgres Worker's entry point (`main` of worker-pg/wrangler.toml).
    pub fn worker_pg_entry(&self, which: PgWorker) -> PathBuf {
        self.worker_pg_of(which)
            .join("build")
            .join("worker")
            .join("shim.mjs")
    }
}

/// Where installed Rust tools (worker-build, wasm-bindgen-cli) are kept, one directory per
/// tool and version, shared by every clone so a second checkout does not rebuild them:
/// `$D1BENCH_TOOLS`, else `$XDG_CACHE_HOME/d1bench/tools`, else `~/.cache/d1bench/tools`,
/// else `target/d1bench/tools`.
pub fn tool_cache(root: &Path) -> PathBuf {
    let from_env = |name| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(dir) = from_env("D1BENCH_TOOLS") {
        return dir;
    }
    if let Some(cache) = from_env("XDG_CACHE_HOME") {
        return cache.join("d1bench").join("tools");
    }
    if let Some(home) = from_env("HOME") {
        return home.join(".cache").join("d1bench").join("tools");
    }
    root.join("target").join("d1bench").join("tools")
}
