//! `cargo xtask run WORKLOAD --shards N` on this machine: N shard processes load one target
//! together. This process is their coordinator: it starts the target (one SQLite file, or one
//! `wrangler dev` with one local D1), writes the join file, starts the N processes (`run
//! --shard K/N --join FILE`, each its own run), seeds, checks and indexes each size of the table
//! while they wait, lets them load it (they meet before every phase, so their shares of each
//! timetable start together in absolute time), checks the table again with every shard's writes
//! in what it must hold, stops the target, and merges the shard runs into one run, whose
//! checks.csv is the coordinator's. Every process it starts is stopped on every way out: a
//! shard that fails ends the others' waits with its reason, and a coordinator killed outright
//! leaves its shards to their watchdogs and to their own wait, which sees it gone.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use xshell::Shell;

use super::merge;
use crate::base::{PgWorker, TargetKind, WorkerKind};
use crate::flags;
use crate::paths::Paths;
use crate::procs::ProcessGroup;
use crate::records::shard::Shard;
use crate::records::{RunDir, RunRecord, RunStatus, Totals, csv};
use crate::studies::workload::WorkloadPlan;
use crate::studies::workload::measure;
use crate::studies::workload::row::CheckRow;
use crate::targets::joined::rendezvous::{Party, Rendezvous};
use crate::targets::joined::{Join, JoinedSession, TOKEN_VAR};
use crate::targets::sqlite::workload::SqliteWorkload;
use crate::targets::workload::WorkloadClient;
use crate::targets::{Target, Workloads, worker::WorkerSession};

/// Longest the shards may take to write their reports and exit after the last check.
const EXIT_WAIT: Duration = Duration::from_secs(300);

/// The shard processes, each with its log: watched while the coordinator waits.
type Shards = Arc<Mutex<Vec<(u32, ProcessGroup, PathBuf)>>>;

/// `run WORKLOAD --shards N`.
pub fn run(flags: &flags::Run, sh: &Shell, paths: &Paths) -> Result<()> {
    let of = flags.shards.context("--shards N is given")?;
    // Planned as a shard plans it (each process offers its share of every rate), and refused
    // as any run is (a workload, a target on this machine).
    let as_shard = flags::Run {
        shard: Some(Shard { index: 1, of }),
        no_baseline: true,
        ..flags.clone()
    };
    let plan = crate::pipeline::plan(&as_shard, paths)?;
    let Some(workload) = (plan.work.as_ref() as &dyn std::any::Any).downcast_ref::<WorkloadPlan>()
    else {
        bail!("`{}` is not a workload", flags.experiment());
    };
    // Workloads never run on Postgres (the plan refuses them there).
    let tools = crate::pipeline::tools(flags, PgWorker::Probes, sh, paths)?;
    let out = flags
        .out
        .clone()
        .unwrap_or_else(|| paths.reports().join(flags.experiment()));
    let group = shards_dir(&out, flags.target)?;
    eprintln!(
        "{of} shard processes share one {} target; their runs and logs: {}",
        flags.target,
        group.display()
    );
    // The target, started here and stopped on every way out (dropped, or closed at the end).
    let (client, worker) = match flags.target {
        TargetKind::Local => {
            let tools = tools
                .as_ref()
                .context("the local target needs the toolchain")?;
            eprintln!("starting wrangler dev (workerd with a local D1) for every shard");
            let mut session =
                WorkerSession::local(paths, tools, None, WorkerKind::Rust, TargetKind::Local)?;
            (
                session.workload().map_err(|e| anyhow::anyhow!(e))?,
                Some(session),
            )
        }
        _ => {
            let file = group.join("shared.sqlite");
            let client: Arc<dyn WorkloadClient> = Arc::new(SqliteWorkload::open_file(&file)?);
            (client, None)
        }
    };
    let join = Join {
        target: flags.target,
        of,
        rendezvous: group.join("rendezvous"),
        sqlite: (flags.target == TargetKind::Sqlite).then(|| group.join("shared.sqlite")),
        url: worker.as_ref().map(|w| w.client().address().0.to_owned()),
        coordinator_pid: std::process::id(),
        wait_limit_s: wait_limit_s(workload),
        generation: measure::run_generation(),
    };
    let join_file = group.join("join.toml");
    join.write(&join_file)?;
    let token = worker.as_ref().map(|w| w.client().address().1.to_owned());
    let shards: Shards = Arc::new(Mutex::new(Vec::new()));
    for k in 1..=of {
        let (process, log) = start_shard(Shard { index: k, of }, &join_file, &group, &token)?;
        lock(&shards).push((k, process, log));
    }
    let watched = Arc::clone(&shards);
    let rendezvous = Rendezvous::new(
        &join.rendezvous,
        (of, Party::Coordinator),
        (join.wait_limit(), join.generation),
        Box::new(move || failed_shard(&watched)),
    )?;
    let coordinator_dir = RunDir::new(group.join("coordinator"));
    std::fs::create_dir_all(&coordinator_dir.path)
        .with_context(|| format!("cannot create {}", coordinator_dir.path.display()))?;
    let mut session = JoinedSession::coordinator(flags.target, client, rendezvous);
    let coordinated = measure::measure(
        &mut session,
        flags.experiment(),
        workload,
        &coordinator_dir,
        Instant::now(),
    )
    .and_then(|checked| {
        wait_for_exits(&shards)?;
        Ok(checked)
    });
    let checked = match coordinated {
        Ok(checked) => checked,
        Err(e) => {
            if let Some(rendezvous) = session.rendezvous() {
                rendezvous.abort(&format!("{e:#}"));
            }
            // Each shard ends its wait at the abort and records how its run ended; stopped
            // after a grace if it does not.
            let _ = wait_for_exits(&shards);
            stop_all(&shards);
            return Err(e.context(format!(
                "the shared run stopped; the shard runs, their logs and the coordinator's \
                 checks are in {}",
                group.display()
            )));
        }
    };
    if let Some(worker) = worker {
        let (_, closed) = (Box::new(worker) as Box<dyn Target>).close();
        closed?;
    }
    let _ = std::fs::remove_dir_all(&join.rendezvous);
    if let Some(file) = &join.sqlite {
        for end in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{end}", file.display()));
        }
    }
    merge_shards(&group, &out, &coordinator_dir, &checked, flags.titles)
}

/// `<out>/<UTC time>-<target>-shards`, made unique.
fn shards_dir(out: &Path, target: TargetKind) -> Result<PathBuf> {
    crate::records::create_unique_dir(out, &format!("{}-shards", target.name()))
}

/// The longest any one wait may last: seeding a size (the shards' longest wait) or every point
/// of a size (the coordinator's), bounded from the plan with room to spare.
fn wait_limit_s(plan: &WorkloadPlan) -> u64 {
    let loading = plan.points.len() as f64 * (plan.warmup_s + plan.duration_s + 30.0);
    600 + (2.0 * loading) as u64
}

fn lock(shards: &Shards) -> std::sync::MutexGuard<'_, Vec<(u32, ProcessGroup, PathBuf)>> {
    shards.lock().unwrap_or_else(|e| e.into_inner())
}

/// Starts shard `shard`: this command line without `--shards` and `--out`, with `--shard K/N
/// --join FILE --out DIR --no-baseline`; its output into `shard-K.log`.
fn start_shard(
    shard: Shard,
    join_file: &Path,
    group: &Path,
    token: &Option<String>,
) -> Result<(ProcessGroup, PathBuf)> {
    let log = group.join(format!("shard-{}.log", shard.index));
    let file =
        std::fs::File::create(&log).with_context(|| format!("cannot create {}", log.display()))?;
    let mut command = Command::new(std::env::current_exe().context("cannot find this program")?);
    command
        .args(shard_args(std::env::args_os().skip(1).collect()))
        .arg("--shard")
        .arg(shard.to_string())
        .arg("--join")
        .arg(join_file)
        .arg("--out")
        .arg(group)
        .arg("--no-baseline")
        .stdin(std::process::Stdio::null())
        .stdout(file.try_clone()?)
        .stderr(file);
    if let Some(token) = token {
        command.env(TOKEN_VAR, token);
    }
    let process = ProcessGroup::spawn(command, &format!("shard {shard}"))?;
    Ok((process, log))
}

/// The coordinator's arguments a shard takes: all but `--shards N`, `--out DIR` and
/// `--no-baseline` (which it is given anew).
fn shard_args(args: Vec<OsString>) -> Vec<OsString> {
    let mut kept = Vec::new();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let text = arg.to_string_lossy();
        if text == "--shards" || text == "--out" {
            args.next();
        } else if !(text.starts_with("--shards=")
            || text.starts_with("--out=")
            || text == "--no-baseline")
        {
            kept.push(arg);
        }
    }
    kept
}

/// An error naming the first shard that exited with a failure, and its log's end.
fn failed_shard(shards: &Shards) -> Result<()> {
    for (k, process, log) in lock(shards).iter_mut() {
        if let Some(status) = process.try_wait()?
            && !status.success()
        {
            bail!(
                "shard {k} exited ({status}); its log, {}, ends:\n{}",
                log.display(),
                crate::targets::local::log_tail(log, 12)
            );
        }
    }
    Ok(())
}

/// Waits (bounded) for every shard to exit; an error names one that failed or did not exit.
fn wait_for_exits(shards: &Shards) -> Result<()> {
    let deadline = Instant::now() + EXIT_WAIT;
    loop {
        failed_shard(shards)?;
        let running: Vec<u32> = lock(shards)
            .iter_mut()
            .filter_map(|(k, p, _)| (!matches!(p.try_wait(), Ok(Some(_)))).then_some(*k))
            .collect();
        if running.is_empty() {
            return Ok(());
        }
        if Instant::now() >= deadline {
            bail!(
                "shards {running:?} had not exited {} s after the last check",
                EXIT_WAIT.as_secs()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn stop_all(shards: &Shards) {
    for (_, process, _) in lock(shards).iter_mut() {
        process.stop();
    }
}

/// The shard runs in `group` merged into one run in `out`, its checks the coordinator's, then
/// its reports and page written as for any run.
fn merge_shards(
    group: &Path,
    out: &Path,
    coordinator: &RunDir,
    checked: &Totals,
    titles: bool,
) -> Result<()> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(group)
        .with_context(|| format!("cannot read {}", group.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("run.toml").is_file())
        .collect();
    dirs.sort();
    let mut runs = merge::read(&dirs)?;
    let missing = merge::check(&mut runs, false)?;
    let target = runs[0].record.run.target;
    let run_dir = merge::create_dir(out, target)?;
    eprintln!(
        "merging the {} shard runs into {}",
        runs.len(),
        run_dir.path.display()
    );
    let mut record: RunRecord = merge::merge(&runs, &missing, &run_dir)?;
    // The table's checks are the coordinator's: the shards checked nothing.
    let checks: Vec<CheckRow> = csv::read(&coordinator.checks_csv())?;
    csv::write(&run_dir.checks_csv(), &checks)?;
    let totals = record
        .reconciliation
        .as_ref()
        .map_or_else(|| checked.clone(), |t| t.merged(checked));
    if !totals.all_reconciled() {
        record.run.status = RunStatus::Invalid;
    }
    record.reconciliation = Some(totals.clone());
    if let Some(merged) = &mut record.merged {
        merged.shared_target = true;
    }
    record.write(&run_dir.run_toml())?;
    let rendered = crate::studies::render(&run_dir, true, titles)?;
    println!("reconciliation: {}", totals.line("records"));
    let page = crate::html::run_pages::write(&run_dir, &record, &rendered.charts, titles)?;
    println!("{}", crate::html::run_pages::link(&page.path));
    if !totals.all_reconciled() {
        bail!(
            "the shared run is INVALID: what the target holds differs from what the shards \
             wrote (see `note` in {}); everything measured is kept",
            run_dir.checks_csv().display()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shard_takes_the_command_line_without_shards_out_and_no_baseline() {
        let given: Vec<OsString> = [
            "run",
            "write-contention",
            "--shards",
            "3",
            "--target",
            "sqlite",
            "--out=x",
            "--no-baseline",
            "--profile",
            "smoke",
            "--shards=3",
        ]
        .into_iter()
        .map(OsString::from)
        .collect();
        let kept: Vec<String> = shard_args(given)
            .into_iter()
            .map(|a| a.into_string().unwrap())
            .collect();
        assert_eq!(
            kept,
            [
                "run",
                "write-contention",
                "--target",
                "sqlite",
                "--profile",
                "smoke"
            ]
        );
    }
}
