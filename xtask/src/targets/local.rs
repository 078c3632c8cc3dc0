//! The local target: the Worker in workerd through `wrangler dev`, with a real local D1.
//!
//! Everything wrangler writes (D1 state, logs, config) goes under `target/d1bench/local/<port>/`;
//! the port is a free loopback port, never 8787 blindly; Cloudflare credentials are removed from
//! its environment so a local run can never touch an account.

pub mod heap;
pub(crate) mod ports;

use std::fs::File;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use super::http::{Health, WorkerClient};
use crate::base::WorkerKind;
use crate::paths::Paths;
use crate::procs::ProcessGroup;
use crate::toolchain::Toolchain;
use heap::{HeapPeak, HeapSampler};

/// How long wrangler dev may take to answer `/health` (it takes ~3 s on 2 cores).
const READY_TIMEOUT: Duration = Duration::from_secs(90);

/// Variables that would point wrangler at a Cloudflare account.
const CREDENTIAL_VARS: &[&str] = &[
    "CLOUDFLARE_API_TOKEN",
    "CLOUDFLARE_ACCOUNT_ID",
    "CLOUDFLARE_API_KEY",
    "CLOUDFLARE_EMAIL",
    "CF_API_TOKEN",
    "CF_ACCOUNT_ID",
];

/// What `wrangler dev` runs: a Worker's folder, its wrangler configuration, the protocol its
/// client speaks, and variables for its bindings (the Postgres Worker's connection string).
pub struct DevWorker {
    pub kind: WorkerKind,
    pub dir: std::path::PathBuf,
    pub config: std::path::PathBuf,
    pub env: Vec<(String, String)>,
}

impl DevWorker {
    /// One of the D1 Workers, as `--worker` names it.
    pub fn of(paths: &Paths, worker: WorkerKind) -> Self {
        DevWorker {
            kind: worker,
            dir: paths.worker_of(worker),
            config: paths.wrangler_config(worker),
            env: Vec::new(),
        }
    }
}

/// A running `wrangler dev`; stopped (with workerd) when dropped.
pub struct LocalWorker {
    process: ProcessGroup,
    log: std::path::PathBuf,
    /// The isolate's heap, through the inspector wrangler opened on its `--inspector-port`.
    heap: HeapSampler,
}

/// How many times wrangler dev is started on fresh ports when another socket took its port
/// between the draw and wrangler's bind.
const PORT_TRIES: usize = 5;

/// How one start of wrangler dev ended.
enum Launch {
    Ready(Box<(LocalWorker, WorkerClient, Health)>),
    /// It exited because its port was taken meanwhile: the port, and its log's last lines.
    PortTaken(u16, String),
}

/// Fills `bytes` from the kernel's generator.
fn urandom(bytes: &mut [u8]) -> Result<()> {
    std::io::Read::read_exact(
        &mut File::open("/dev/urandom").context("cannot open /dev/urandom")?,
        bytes,
    )
    .context("cannot read /dev/urandom")
}

/// A random bearer token from the kernel's generator.
pub fn random_token() -> Result<String> {
    let mut bytes = [0u8; 24];
    urandom(&mut bytes)?;
    Ok(crate::toolchain::hex(&bytes))
}

/// A seed from the kernel's generator: runs side by side must not draw the same ports.
fn random_seed() -> Result<u64> {
    let mut bytes = [0u8; 8];
    urandom(&mut bytes)?;
    Ok(u64::from_le_bytes(bytes))
}

/// The last `lines` lines of a log file, for error messages.
pub fn log_tail(path: &Path, lines: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

impl LocalWorker {
    /// Starts wrangler dev and waits until the Worker answers `/health`; the client that
    /// reaches it, and what it answered.
    pub fn start(
        paths: &Paths,
        tools: &Toolchain,
        worker: WorkerKind,
    ) -> Result<(Self, WorkerClient, Health)> {
        Self::start_dev(paths, tools, &DevWorker::of(paths, worker))
    }

    /// Starts wrangler dev with `worker` and waits until it answers `/health`.
    pub fn start_dev(
        paths: &Paths,
        tools: &Toolchain,
        worker: &DevWorker,
    ) -> Result<(Self, WorkerClient, Health)> {
        let mut rng = fastrand::Rng::with_seed(random_seed()?);
        let mut last_taken = None;
        for _ in 0..PORT_TRIES {
            let ports = ports::free_ports(2, &mut rng)?;
            match Self::launch(paths, tools, worker, ports[0], ports[1])? {
                Launch::Ready(ready) => return Ok(*ready),
                Launch::PortTaken(port, tail) => {
                    eprintln!(
                        "wrangler dev could not bind 127.0.0.1:{port} (taken since it was found \
                         free); starting it again on other ports"
                    );
                    last_taken = Some((port, tail));
                }
            }
        }
        let (port, tail) = last_taken.expect("PORT_TRIES > 0");
        bail!(
            "wrangler dev found its port taken {PORT_TRIES} times in a row (last 127.0.0.1:{port}); \
             its log ends with:\n{tail}"
        )
    }

    /// Starts wrangler dev once on `port` and waits until the Worker answers `/health`.
    fn launch(
        paths: &Paths,
        tools: &Toolchain,
        worker: &DevWorker,
        port: u16,
        inspector_port: u16,
    ) -> Result<Launch> {
        let dir = paths.scratch().join("local").join(port.to_string());
        if dir.exists() {
            std::fs::remove_dir_all(&dir)
                .with_context(|| format!("cannot clear {}", dir.display()))?;
        }
        for sub in ["state", "config", "logs"] {
            std::fs::create_dir_all(dir.join(sub))
                .with_context(|| format!("cannot create {}", dir.join(sub).display()))?;
        }
        let token = random_token()?;
        let env_file = dir.join("dev.env");
        write_private(&env_file, &format!("BENCH_TOKEN={token}\n"))?;
        let log = dir.join("wrangler.log");
        let log_file =
            File::create(&log).with_context(|| format!("cannot create {}", log.display()))?;

        let mut command = Command::new(tools.node_bin_dir.join("node"));
        command
            .arg(&tools.wrangler_js)
            .arg("dev")
            .arg("--config")
            .arg(&worker.config)
            .args(["--ip", "127.0.0.1", "--port", &port.to_string()])
            .args(["--inspector-port", &inspector_port.to_string()])
            .arg("--persist-to")
            .arg(dir.join("state"))
            .arg("--env-file")
            .arg(&env_file)
            // Warnings and errors only: a line logged through wrangler for every request is
            // work on the request's path (about 1 ms of each, measured on 2 cores).
            .args([
                "--show-interactive-dev-session=false",
                "--log-level",
                "warn",
            ])
            .current_dir(&worker.dir)
            .env("PATH", prepend_path(&tools.node_bin_dir))
            .env("XDG_CONFIG_HOME", dir.join("config"))
            .env("WRANGLER_LOG_PATH", dir.join("logs"))
            .env("WRANGLER_SEND_METRICS", "false")
            .env("CLOUDFLARE_CF_FETCH_ENABLED", "false")
            // Wrangler's local trace collector (on by default) streams every event of the
            // Worker, each D1 call included, to a SQLite store while the probe runs: not D1,
            // and it took `/health` from about 5 ms to 9-16 (median of 60, 2 cores).
            .env("X_LOCAL_OBSERVABILITY", "false")
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(log_file.try_clone()?)
            .stderr(log_file);
        for var in CREDENTIAL_VARS {
            command.env_remove(var);
        }
        command.envs(worker.env.iter().map(|(k, v)| (k, v)));
        let mut process = ProcessGroup::spawn(command, "wrangler dev")?;
        let base_url = format!("http://127.0.0.1:{port}");
        let client = WorkerClient::of(worker.kind, &base_url, &token);

        let started = Instant::now();
        let health = loop {
            if let Some(status) = process.try_wait()? {
                let tail = log_tail(&log, 30);
                if ports::in_use(&tail) {
                    return Ok(Launch::PortTaken(port, tail));
                }
                bail!(
                    "wrangler dev exited ({status}) before the Worker answered; its log ({}) ends with:\n{}",
                    log.display(),
                    log_tail(&log, 30)
                );
            }
            match client.health() {
                Ok(health) => break health,
                Err(e) if started.elapsed() > READY_TIMEOUT => {
                    bail!(
                        "the Worker did not answer {base_url}/health within {READY_TIMEOUT:?} ({e:#}); wrangler's log ({}) ends with:\n{}",
                        log.display(),
                        log_tail(&log, 30)
                    );
                }
                Err(_) => std::thread::sleep(Duration::from_millis(100)),
            }
        };
        let heap = HeapSampler::new(inspector_port);
        Ok(Launch::Ready(Box::new((
            LocalWorker { process, log, heap },
            client,
            health,
        ))))
    }

    /// An error when wrangler dev itself has exited (workerd dying is not that: wrangler
    /// restarts it).
    /// The process group of wrangler and workerd.
    pub fn pgid(&self) -> i32 {
        self.process.pgid()
    }

    pub fn check_alive(&mut self) -> Result<()> {
        if let Some(status) = self.process.try_wait()? {
            bail!(
                "wrangler dev exited ({status}); its log ({}) ends with:\n{}",
                self.log.display(),
                log_tail(&self.log, 30)
            );
        }
        Ok(())
    }

    /// Why a wrangler dev that still runs does not answer, as far as its log tells.
    pub fn wedged(&self) -> String {
        format!(
            "wrangler dev still runs but does not answer (after its Workers runtime is killed \
             under it, wrangler restarts it, but the proxy in front of it may never forward a \
             request again); its log ({}) ends with:\n{}",
            self.log.display(),
            log_tail(&self.log, 10)
        )
    }

    /// Runs `request` while the isolate's heap is sampled: its answer, and the peak (or why
    /// there is none: the inspector did not answer).
    pub fn sampled<T>(&mut self, request: impl FnOnce() -> T) -> (T, Result<HeapPeak>) {
        let sampling = self.heap.start();
        let answer = request();
        let peak = sampling.and_then(|sampling| self.heap.finish(sampling));
        (answer, peak)
    }

    /// Stops wrangler and workerd now (dropping does the same).
    pub fn stop(mut self) {
        self.process.stop();
    }
}

fn prepend_path(dir: &Path) -> std::ffi::OsString {
    let mut parts = vec![dir.to_owned()];
    if let Some(path) = std::env::var_os("PATH") {
        parts.extend(std::env::split_paths(&path));
    }
    std::env::join_paths(parts).expect("PATH entries hold no separator")
}

/// Writes a file only its owner can read (it holds the bearer token).
fn write_private(path: &Path, contents: &str) -> Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("cannot create {}", path.display()))?;
    file.write_all(contents.as_bytes())
        .with_context(|| format!("cannot write {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paths::project_root;

    /// What stands in for `node wrangler.js dev` here: the first start fails as wrangler does
    /// when its port was taken (the text CI saw), every later one serves `/health` on the port
    /// it was given.
    const STAND_IN: &str = r#"#!/usr/bin/env bash
port=""
while [ $# -gt 0 ]; do
  if [ "$1" = --port ]; then port="$2"; fi
  shift
done
starts="$(dirname "$0")/../starts"
echo "$port" >> "$starts"
if [ "$(wc -l < "$starts")" -eq 1 ]; then
  echo "✘ [ERROR] Address already in use (127.0.0.1:$port). Please check that you are not already running a server on this address or specify a different port with --port."
  exit 1
fi
exec python3 -c '
import http.server, json, sys
class Health(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = json.dumps({"name": "stand-in", "version": "0"}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Health).serve_forever()
' "$port"
"#;

    /// A start whose port was taken between the draw and wrangler's bind is made again on
    /// other ports, and the Worker is reached on the second.
    #[test]
    fn a_start_whose_port_was_taken_is_made_again_on_other_ports() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::create_dir_all(dir.path().join("worker")).unwrap();
        let node = bin.join("node");
        std::fs::write(&node, STAND_IN).unwrap();
        std::fs::set_permissions(&node, std::fs::Permissions::from_mode(0o755)).unwrap();
        let tools = Toolchain {
            node_bin_dir: bin.clone(),
            wrangler_js: dir.path().join("wrangler.js"),
            esbuild: bin.join("esbuild"),
            wasm_opt: bin.join("wasm-opt"),
        };
        let paths = Paths::new(dir.path().to_owned());
        let (worker, _client, health) =
            LocalWorker::start(&paths, &tools, WorkerKind::Rust).expect("the second start answers");
        assert_eq!(health.name, "stand-in");
        let starts = std::fs::read_to_string(dir.path().join("starts")).unwrap();
        let ports: Vec<&str> = starts.lines().collect();
        assert_eq!(ports.len(), 2, "{starts}");
        assert_ne!(ports[0], ports[1], "started again on another port");
        worker.stop();
    }

    /// The JavaScript Worker's `/health` answers the workspace's version, as the Rust
    /// Worker's does (run.toml records it).
    #[test]
    fn the_js_worker_answers_the_workspaces_version() {
        let source =
            std::fs::read_to_string(project_root().join("worker-js/src/index.js")).unwrap();
        let line = format!("const VERSION = \"{}\";", env!("CARGO_PKG_VERSION"));
        assert!(
            source.contains(&line),
            "worker-js/src/index.js lacks `{line}`"
        );
    }
}
