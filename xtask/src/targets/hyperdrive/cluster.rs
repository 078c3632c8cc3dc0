//! A private PostgreSQL cluster for one session of the hyperdrive target: `initdb` into a fresh
//! directory under `target/d1bench/hyperdrive/<port>/`, the server on a free loopback port (no
//! Unix socket), stopped on every way out as wrangler is: its process group stopped on drop, on
//! Ctrl-C and by its watchdog, and registered with the run so that the next run stops it after a
//! `kill -9` (`procs::reap_abandoned`) and removes its directory ([`clear_leftovers`]).
//!
//! initdb and the server refuse to run as root: run as root, both run as the `postgres` user
//! (Debian's package makes it), which owns the cluster's directory; otherwise as the user who
//! runs d1bench. The password is drawn from the kernel's generator for each cluster, and the
//! server takes SCRAM password authentication only (wrangler needs a password in the
//! connection string). The binaries are `$D1BENCH_PG_BIN`, else the newest
//! `/usr/lib/postgresql/<major>/bin` (Debian's), else the ones on PATH.

use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::paths::Paths;
use crate::procs::ProcessGroup;
use crate::targets::local::{log_tail, ports, random_token};

/// The role initdb creates, which the Worker connects as.
pub const USER: &str = "d1bench";
/// The database the Worker writes in: the one initdb creates.
pub const DATABASE: &str = "postgres";
/// How long the server may take to accept connections (0.2 s measured on 2 cores).
const READY_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a fast shutdown may take before the group is stopped by signals.
const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(10);

/// A running cluster; stopped, and its directory removed, when dropped.
pub struct Cluster {
    process: ProcessGroup,
    /// `target/d1bench/hyperdrive/<port>/`: the data directory, the password file and the logs.
    dir: PathBuf,
    port: u16,
    password: String,
    /// `postgres --version`.
    pub version: String,
    /// Milliseconds initdb took, and the server to accept connections.
    pub initdb_ms: f64,
    pub start_ms: f64,
    stopped: bool,
}

/// The user the cluster runs as: its uid and gid, or `None` to run as this process's.
#[derive(Debug, Clone, Copy)]
struct RunAs {
    uid: u32,
    gid: u32,
}

/// Root cannot run initdb: the `postgres` user, or an error saying what to do.
fn run_as() -> Result<Option<RunAs>> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Ok(None);
    }
    let name = std::ffi::CString::new("postgres").expect("no NUL");
    // SAFETY: getpwnam reads the user database; the record is copied before any other call.
    let entry = unsafe { libc::getpwnam(name.as_ptr()) };
    if entry.is_null() {
        bail!(
            "initdb refuses to run as root, and this machine has no `postgres` user to run the \
             cluster as: install PostgreSQL's server package (Debian: `apt-get install \
             postgresql`), which creates it, or run d1bench as an ordinary user"
        );
    }
    // SAFETY: checked non-null above.
    let (uid, gid) = unsafe { ((*entry).pw_uid, (*entry).pw_gid) };
    Ok(Some(RunAs { uid, gid }))
}

/// Where the server's binaries are: `$D1BENCH_PG_BIN`, the newest Debian package's, or PATH.
pub fn bin_dir() -> Result<PathBuf> {
    if let Some(dir) = std::env::var_os("D1BENCH_PG_BIN").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    let debian = Path::new("/usr/lib/postgresql");
    let newest = std::fs::read_dir(debian)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let major: u32 = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").exists().then_some((major, bin))
        })
        .max_by_key(|(major, _)| *major);
    if let Some((_, bin)) = newest {
        return Ok(bin);
    }
    let on_path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .find(|dir| dir.join("initdb").exists());
    on_path.context(
        "no PostgreSQL server binaries: none under /usr/lib/postgresql/*/bin, none on PATH, and \
         D1BENCH_PG_BIN is not set; install PostgreSQL's server package (Debian: `apt-get \
         install postgresql`) or point D1BENCH_PG_BIN at the folder holding initdb and postgres",
    )
}

/// A command of the cluster's, run as its user.
fn command(bin: &Path, program: &str, user: Option<RunAs>) -> Command {
    let mut command = Command::new(bin.join(program));
    if let Some(RunAs { uid, gid }) = user {
        // std drops the supplementary groups when root sets a uid.
        command.uid(uid).gid(gid);
    }
    command.env("LC_ALL", "C").env_remove("PGDATA");
    command
}

/// How old a cluster's directory without a running server must be to count as left behind:
/// a run beside this one may be between its initdb and its server's start.
const STARTING: Duration = Duration::from_secs(600);

/// The file in a cluster's directory naming the process (the run) that made it.
const OWNER: &str = "owner.pid";

/// Removes the directories of clusters whose run is gone (a run killed outright leaves its
/// directory behind, and its watchdog or the next run stopped its server): each `<port>/` whose
/// [`OWNER`] names no running process; one without that file (made before the owner was written)
/// once it is older than [`STARTING`]. Says what it removed.
pub fn clear_leftovers(root: &Path) -> Vec<String> {
    let mut removed = Vec::new();
    for entry in std::fs::read_dir(root).into_iter().flatten().flatten() {
        let dir = entry.path();
        let pid = std::fs::read_to_string(dir.join(OWNER))
            .ok()
            .and_then(|text| text.trim().parse::<u32>().ok());
        let left = match pid {
            Some(pid) => !crate::procs::process_alive(pid),
            None => entry
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|at| at.elapsed().ok())
                .is_some_and(|age| age > STARTING),
        };
        if !left {
            continue;
        }
        if std::fs::remove_dir_all(&dir).is_ok() {
            removed.push(dir.display().to_string());
        }
    }
    removed
}

impl Cluster {
    /// initdb on a free port's directory, then the server, waited for until it accepts
    /// connections.
    pub fn start(paths: &Paths) -> Result<Cluster> {
        let bin = bin_dir()?;
        let user = run_as()?;
        let root = paths.scratch().join("hyperdrive");
        for dir in clear_leftovers(&root) {
            eprintln!("removed {dir}: a PostgreSQL cluster a run left behind");
        }
        let mut rng = fastrand::Rng::new();
        let port = ports::free_ports(1, &mut rng)?[0];
        let dir = root.join(port.to_string());
        if dir.exists() {
            std::fs::remove_dir_all(&dir)
                .with_context(|| format!("cannot clear {}", dir.display()))?;
        }
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        std::fs::write(dir.join(OWNER), std::process::id().to_string())
            .with_context(|| format!("cannot write {}", dir.join(OWNER).display()))?;
        let password = random_token()?;
        let pwfile = dir.join("password");
        std::fs::write(&pwfile, &password)
            .with_context(|| format!("cannot write {}", pwfile.display()))?;
        if let Some(RunAs { uid, gid }) = user {
            for path in [&dir, &pwfile] {
                std::os::unix::fs::chown(path, Some(uid), Some(gid)).with_context(|| {
                    format!("cannot give {} to the postgres user", path.display())
                })?;
            }
        }
        let version = command(&bin, "postgres", user)
            .arg("--version")
            .output()
            .ok()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
            .unwrap_or_default();

        let data = dir.join("data");
        let initdb_log = dir.join("initdb.log");
        let started = Instant::now();
        let status = command(&bin, "initdb", user)
            .arg("-D")
            .arg(&data)
            .args([
                "-U",
                USER,
                "-A",
                "scram-sha-256",
                "-E",
                "UTF8",
                "--locale=C",
            ])
            .arg(format!("--pwfile={}", pwfile.display()))
            // The cluster lives for one session: nothing of it needs to survive a crash.
            .args(["--no-sync", "--no-instructions"])
            .stdin(Stdio::null())
            .stdout(File::create(&initdb_log)?)
            .stderr(File::create(initdb_log.with_extension("err"))?)
            .status()
            .with_context(|| format!("cannot run {}", bin.join("initdb").display()))?;
        if !status.success() {
            bail!(
                "initdb failed ({status}) in {}; it said:\n{}",
                data.display(),
                log_tail(&initdb_log.with_extension("err"), 20)
            );
        }
        let initdb_ms = started.elapsed().as_secs_f64() * 1000.0;
        let _ = std::fs::remove_file(&pwfile);

        let log = dir.join("postgres.log");
        let log_file =
            File::create(&log).with_context(|| format!("cannot create {}", log.display()))?;
        if let Some(RunAs { uid, gid }) = user {
            std::os::unix::fs::chown(&log, Some(uid), Some(gid))?;
        }
        let mut server = command(&bin, "postgres", user);
        server
            .arg("-D")
            .arg(&data)
            .args(["-p", &port.to_string()])
            .args(["-c", "listen_addresses=127.0.0.1"])
            .args(["-c", "unix_socket_directories="])
            .stdin(Stdio::null())
            .stdout(log_file.try_clone()?)
            .stderr(log_file);
        let started = Instant::now();
        let mut process = ProcessGroup::spawn(server, "postgres")?;
        let cluster = loop {
            if let Some(status) = process.try_wait()? {
                bail!(
                    "postgres exited ({status}) before it accepted connections; its log ({}) ends with:\n{}",
                    log.display(),
                    log_tail(&log, 20)
                );
            }
            let ready = Command::new(bin.join("pg_isready"))
                .args(["-h", "127.0.0.1", "-p", &port.to_string(), "-q"])
                .args(["-U", USER, "-d", DATABASE])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            if ready {
                break Cluster {
                    process,
                    dir,
                    port,
                    password,
                    version,
                    initdb_ms,
                    start_ms: started.elapsed().as_secs_f64() * 1000.0,
                    stopped: false,
                };
            }
            if started.elapsed() > READY_TIMEOUT {
                bail!(
                    "postgres did not accept connections on 127.0.0.1:{port} within {READY_TIMEOUT:?}; its log ({}) ends with:\n{}",
                    log.display(),
                    log_tail(&log, 20)
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        Ok(cluster)
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The connection string the Worker's Hyperdrive binding is given: password
    /// authentication, no TLS (wrangler then connects straight to the server).
    pub fn connection_string(&self) -> String {
        format!(
            "postgresql://{USER}:{}@127.0.0.1:{}/{DATABASE}",
            self.password, self.port
        )
    }

    /// An error when the server has exited.
    pub fn check_alive(&mut self) -> Result<()> {
        if let Some(status) = self.process.try_wait()? {
            bail!(
                "postgres exited ({status}); its log ({}) ends with:\n{}",
                self.dir.join("postgres.log").display(),
                log_tail(&self.dir.join("postgres.log"), 20)
            );
        }
        Ok(())
    }

    /// A fast shutdown (SIGINT: sessions ended, a checkpoint, exit), the group stopped by
    /// signals if it takes longer than [`SHUTDOWN_TIMEOUT`], then the directory removed; how
    /// long it took. Idempotent.
    pub fn stop(&mut self) -> Result<Duration> {
        let started = Instant::now();
        if self.stopped {
            return Ok(Duration::ZERO);
        }
        self.stopped = true;
        // SAFETY: kill(2) on the server's pid (the group's leader); no memory effects.
        unsafe {
            libc::kill(self.process.pgid(), libc::SIGINT);
        }
        while started.elapsed() < SHUTDOWN_TIMEOUT {
            if matches!(self.process.try_wait(), Ok(Some(_)) | Err(_)) {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        self.process.stop();
        std::fs::remove_dir_all(&self.dir)
            .with_context(|| format!("cannot remove the cluster's {}", self.dir.display()))?;
        Ok(started.elapsed())
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if let Err(e) = self.stop() {
            eprintln!("{e:#}");
        }
    }
}

#[cfg(test)]
mod tests;
