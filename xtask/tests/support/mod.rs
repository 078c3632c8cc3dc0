//! What the integration tests share: the xtask binary run from the project root, a run's files
//! read back (its CSV files as rows, its run.toml as a table), the processes a run started, and
//! the Worker made ready once, before end-to-end runs start side by side.

// Each test binary uses a part of this module: what one of them leaves unused is not dead.
#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Once;
use std::time::{Duration, Instant};

pub use xtask::paths::project_root;

/// The xtask binary cargo built for these tests.
pub const XTASK: &str = env!("CARGO_BIN_EXE_xtask");

/// A CSV row by column name.
pub type Row = HashMap<String, String>;

/// The xtask with `args`, run from the project root, with nothing on stdin.
pub fn xtask(args: &[&str]) -> Command {
    let mut command = Command::new(XTASK);
    command
        .args(args)
        .current_dir(project_root())
        .stdin(Stdio::null());
    command
}

/// Its stdout, then its stderr.
pub fn text(output: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// The single run directory a run created under `out`.
pub fn run_dir(out: &Path) -> PathBuf {
    let dirs: Vec<PathBuf> = std::fs::read_dir(out)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", out.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    assert_eq!(
        dirs.len(),
        1,
        "expected one run directory in {}, found {dirs:?}",
        out.display()
    );
    dirs.into_iter().next().unwrap()
}

/// A sweep's rows less its recorded warm-up probes (`warmup = true`), which every report
/// leaves out too.
pub fn measured(rows: Vec<Row>) -> Vec<Row> {
    rows.into_iter()
        .filter(|r| r.get("warmup").is_none_or(|w| w != "true"))
        .collect()
}

/// Every row of the CSV file at `path`.
pub fn read_csv(path: &Path) -> Vec<Row> {
    let mut reader = csv::Reader::from_path(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let headers = reader.headers().unwrap().clone();
    reader
        .records()
        .map(|r| {
            headers
                .iter()
                .map(str::to_owned)
                .zip(r.unwrap().iter().map(str::to_owned))
                .collect()
        })
        .collect()
}

/// The run.toml in `dir`, as written (read as TOML, not through the xtask's own types, so the
/// tests hold the file's format).
pub fn run_toml(dir: &Path) -> toml::Table {
    let path = dir.join("run.toml");
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
        .parse()
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `run.status` of a run.toml.
pub fn status_of(record: &toml::Table) -> &str {
    record["run"]["status"].as_str().unwrap()
}

/// The count in column `key`.
pub fn num(row: &Row, key: &str) -> usize {
    row[key]
        .parse()
        .unwrap_or_else(|_| panic!("{key} = {:?} is not a count", row[key]))
}

/// The time (or other real number) in column `key`.
pub fn ms(row: &Row, key: &str) -> f64 {
    row[key]
        .parse()
        .unwrap_or_else(|_| panic!("{key} = {:?} is not a time", row[key]))
}

/// Every file under `dir` as text.
pub fn files_under(dir: &Path) -> HashMap<PathBuf, String> {
    let mut out = HashMap::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else {
            let bytes = std::fs::read(&path).unwrap();
            out.insert(path, String::from_utf8_lossy(&bytes).into_owned());
        }
    }
    out
}

/// A process as /proc shows it: its parent, group, state and command line.
#[derive(Debug, Clone)]
pub struct Proc {
    pub pid: i32,
    pub ppid: i32,
    pub pgid: i32,
    pub zombie: bool,
    pub args: Vec<String>,
}

impl Proc {
    pub fn command(&self) -> String {
        self.args.join(" ")
    }
}

/// Every process on the machine now.
pub fn processes() -> Vec<Proc> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // Fields after the command's closing parenthesis: state ppid pgrp ...
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.len() < 3 {
            continue;
        }
        let args = std::fs::read(entry.path().join("cmdline"))
            .unwrap_or_default()
            .split(|&b| b == 0)
            .filter(|a| !a.is_empty())
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        found.push(Proc {
            pid,
            ppid: fields[1].parse().unwrap(),
            pgid: fields[2].parse().unwrap(),
            zombie: fields[0] == "Z",
            args,
        });
    }
    found
}

/// Live (non-zombie) processes in group `pgid`.
pub fn live_members(pgid: i32) -> Vec<Proc> {
    processes()
        .into_iter()
        .filter(|p| p.pgid == pgid && !p.zombie)
        .collect()
}

/// Sends `signal` to `pid` (a negative pid is a process group).
pub fn kill(pid: i32, signal: i32) {
    // SAFETY: kill(2) has no memory effects.
    unsafe {
        libc::kill(pid, signal);
    }
}

/// Waits (polling) until `done`, at most `within`; whether it came.
pub fn wait_until(within: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + within;
    loop {
        if done() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

static READY: Once = Once::new();

/// `cargo xtask setup`, once per test binary, before its first run that starts the Worker: the
/// runs that follow find wrangler installed and the Worker built, and so can start side by side
/// (two runs each installing or building at once would share `worker/node_modules` and
/// `worker/build`).
pub fn worker_ready() {
    READY.call_once(|| {
        let output = xtask(&["setup"]).output().expect("cannot run the xtask");
        assert!(
            output.status.success(),
            "`cargo xtask setup` failed:\n{}",
            text(&output)
        );
    });
}
