//! What every `summary.md` says of how its run was run, from run.toml alone: the command that
//! runs it again (with its overrides, and for remote runs its location and plan), the times it
//! was resumed, and where its time went: each target's measuring wall time, the time inside the
//! target's calls, and the harness's share of it.

use std::fmt::Write;

use clap::ValueEnum;

use crate::base::TargetKind;
use crate::base::text::shell_word;
use crate::records::RunRecord;
use crate::records::run_history::{SessionTime, unix_secs};

/// `cargo xtask run ...` with every flag that decides what the run measured.
pub fn command(record: &RunRecord) -> String {
    let args: Vec<String> = command_args(record).iter().map(|a| shell_word(a)).collect();
    format!("cargo xtask {}", args.join(" "))
}

/// The arguments of [`command`] after `cargo xtask`, as a process takes them.
pub fn command_args(record: &RunRecord) -> Vec<String> {
    let run = &record.run;
    let mut args = vec!["run".to_owned(), run.experiment.clone()];
    let mut flag = |name: &str, value: Option<String>| {
        args.push(name.to_owned());
        args.extend(value);
    };
    // Ladders that ran different profiles each ran their default: no --profile then.
    if !run.profile.contains('/') {
        flag("--profile", Some(run.profile.clone()));
    }
    flag("--target", Some(run.target.to_string()));
    if let Some(remote) = &record.remote {
        if let Some(location) = &remote.location_hint {
            flag("--location", Some(location.to_string()));
        }
        flag("--plan", Some(remote.plan.to_string()));
    }
    if run.baseline.is_none() && run.target.runs_the_worker() && run.x_axis.is_some() {
        flag("--no-baseline", None);
    }
    if let Some(baseline) = run.baseline.filter(|&b| b != TargetKind::Sqlite) {
        flag("--baseline", Some(baseline.to_string()));
    }
    if run.alternate_workers {
        flag("--alternate-workers", None);
    }
    if run.paired_workers {
        flag("--paired-workers", None);
    }
    if let Some(worker) = run.worker.filter(|w| w.takes_statements()) {
        flag("--worker", Some(worker.name().to_owned()));
    }
    if run.isolate_heap_alternate {
        flag("--isolate-heap=alternate", None);
    } else if run.isolate_heap {
        flag("--isolate-heap", None);
    }
    if let Some(kind) = run.debug_corrupt.and_then(|k| k.to_possible_value()) {
        flag("--debug-corrupt", Some(kind.get_name().to_owned()));
    }
    if let Some(percent) = run.debug_slow_percent {
        flag("--debug-slow", Some(percent.to_string()));
    }
    if let Some(shard) = run.shard {
        flag("--shard", Some(shard.to_string()));
    }
    args.extend(record.overrides.args());
    args
}

/// One line per resumption, or nothing.
pub fn resumptions(record: &RunRecord) -> String {
    let mut out = String::new();
    for r in &record.resumed {
        let warmups = if r.warmups_skipped > 0 {
            format!(" (and {} warm-ups of their points)", r.warmups_skipped)
        } else {
            String::new()
        };
        writeln!(
            out,
            "- resumed at {} (the run was {}): {} {} already recorded were skipped{warmups}, {} \
             sent",
            r.at, r.was, r.skipped, r.unit, r.remaining
        )
        .unwrap();
    }
    if !out.is_empty() {
        out.insert_str(
            0,
            "This run was resumed (`cargo xtask run --resume`); every record is in the same files:\n\n",
        );
        out.push('\n');
    }
    out
}

/// `## Where the time went`: per target, the measuring's wall time, the time inside the
/// target's calls and the harness's share; nothing for a run recorded before sessions were.
pub fn time_section(record: &RunRecord) -> String {
    let mut targets: Vec<TargetKind> = Vec::new();
    for session in &record.sessions {
        if !targets.contains(&session.target) {
            targets.push(session.target);
        }
    }
    if targets.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "## Where the time went\n\n\
         | target | measuring (wall) | inside the target's calls | harness share | calls | starting and stopping the target |\n\
         | --- | --- | --- | --- | --- | --- |\n",
    );
    for target in targets {
        let Some(t) = SessionTime::total(&record.sessions, target) else {
            continue;
        };
        writeln!(
            out,
            "| `{target}` | {} | {} | {} | {} | {} |",
            seconds(t.wall_ms),
            seconds(t.calls_ms),
            t.harness_share()
                .map_or("–".to_owned(), |s| format!("{:.1}%", 100.0 * s)),
            t.calls,
            seconds(t.start_ms + t.stop_ms)
        )
        .unwrap();
    }
    let run = &record.run;
    let whole = run
        .ended
        .as_deref()
        .and_then(unix_secs)
        .zip(unix_secs(&run.started))
        .and_then(|(ended, started)| ended.checked_sub(started));
    let attempts = record.resumed.len() + 1;
    out.push_str(
        "\nThe harness share is (wall − inside the calls) ÷ wall of the measuring: the xtask's own \
         work between the target's calls (reconciling each probe against the host's plan and \
         expected checksum, each computed once per distinct probe; results.csv; progress). Each call (setup, probe, verify; a rung's three steps) \
         is timed around it, warm-ups included.",
    );
    if record
        .sessions
        .iter()
        .any(|s| s.calls == 0 && s.wall_ms > 0.0)
    {
        out.push_str(
            " A workload's requests overlap and each is timed on its own (its latencies above), \
             not as the session's calls: its harness share is not measured (–).",
        );
    }
    if let Some(whole) = whole {
        write!(
            out,
            " From start to end (run.toml's started → ended) the run took {whole} s{}.",
            if attempts > 1 {
                format!(" over {attempts} attempts (the time between them included)")
            } else {
                String::new()
            }
        )
        .unwrap();
    }
    out.push_str("\n\n");
    let reference = super::host_speed::reference_record(&crate::paths::project_root());
    out.push_str(&super::host_speed::section(record, reference.as_ref()));
    out
}

/// Milliseconds as seconds with three significant figures.
fn seconds(ms: f64) -> String {
    let s = ms / 1000.0;
    if s >= 100.0 {
        format!("{s:.0} s")
    } else if s >= 10.0 {
        format!("{s:.1} s")
    } else {
        format!("{s:.2} s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::WorkerKind;
    use crate::records::run_history::Resumption;
    use crate::records::{RunStatus, StudyKind};
    use crate::targets::remote::RemoteRecord;

    /// docs/run-outputs.md quotes the example run's harness share per target: it must be what
    /// that run's own run.toml gives.
    #[test]
    fn the_reference_quotes_the_example_runs_harness_share() {
        let root = crate::paths::project_root();
        let record = RunRecord::read(&root.join("docs/example-run/run.toml")).unwrap();
        let reference = std::fs::read_to_string(root.join("docs/run-outputs.md")).unwrap();
        let reference = reference.split_whitespace().collect::<Vec<_>>().join(" ");
        for (target, label) in [
            (TargetKind::Local, "local"),
            (TargetKind::Sqlite, "its sqlite baseline"),
        ] {
            let t = SessionTime::total(&record.sessions, target).unwrap();
            let quoted = format!(
                "{label} {:.0} s{} {:.0} s",
                t.wall_ms / 1000.0,
                if target == TargetKind::Local {
                    " of measuring,"
                } else {
                    ","
                },
                t.calls_ms / 1000.0
            );
            let share = format!("{:.1}%", 100.0 * t.harness_share().unwrap());
            assert!(
                reference.contains(&quoted) && reference.contains(&share),
                "docs/run-outputs.md should quote `{quoted}` and `{share}` from docs/example-run"
            );
        }
    }

    fn record() -> RunRecord {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.toml");
        std::fs::write(
            &path,
            r#"
[run]
id = "20261130T000000Z-remote"
experiment = "column-sweep"
profile = "full"
target = "remote"
x_axis = "columns"
baseline = "sqlite"
status = "complete"
started = "2026-11-30T00:00:00Z"
ended = "2026-11-30T00:02:05Z"
[git]
commit = "c0ffee"
dirty = false
[versions]
d1bench = "0.1.0"
worker = "w"
worker_crate = "0.8.7"
wrangler = "4"
workerd = "1"
rustc = "r"
[machine]
os = "linux"
arch = "x86_64"
cpu = "c"
cpus = 2
memory_gib = 1.0
"#,
        )
        .unwrap();
        RunRecord::read(&path).unwrap()
    }

    fn remote(location: Option<&str>, plan: &str) -> RemoteRecord {
        RemoteRecord {
            name: "d1bench-run-x".into(),
            location_hint: location.map(str::to_owned),
            created_in_region: None,
            plan: plan.into(),
            queries_per_invocation: 1000,
            served_by_region: Vec::new(),
            served_by_colo: Vec::new(),
            read_replication: None,
            subrequests: None,
            hyperdrive: None,
            teardown: "deleted".into(),
        }
    }

    #[test]
    fn the_command_carries_location_plan_and_overrides() {
        let mut r = record();
        let axis = r.run.x_axis;
        r.remote = Some(remote(Some("weur"), "paid"));
        // Field by field, so that reports/ names nothing of studies/.
        r.overrides.repeats = Some(2);
        r.overrides.warmup = Some(0);
        r.overrides.seed = None;
        r.overrides.only = Some("columns=64,strategy=literal".into());
        assert_eq!(
            command(&r),
            "cargo xtask run column-sweep --profile full --target remote --location weur --plan \
             paid --repeats 2 --warmup 0 --only columns=64,strategy=literal"
        );
        r.remote = Some(remote(None, "free"));
        r.overrides = Default::default();
        r.run.baseline = None;
        assert_eq!(
            command(&r),
            "cargo xtask run column-sweep --profile full --target remote --plan free --no-baseline"
        );
        // Ladders: no baseline to skip, and mixed profiles are each ladder's default.
        r.remote = None;
        r.run.target = TargetKind::Local;
        r.run.x_axis = None;
        r.run.kind = StudyKind::Ladder;
        r.run.experiment = "limits".into();
        r.run.profile = "full/smoke".into();
        assert_eq!(command(&r), "cargo xtask run limits --target local");
        // The Workers: alternating, or the JavaScript one alone.
        r.run.kind = StudyKind::Sweep;
        r.run.experiment = "column-sweep".into();
        r.run.profile = "full".into();
        r.run.x_axis = axis;
        r.run.alternate_workers = true;
        assert!(command(&r).ends_with("--target local --no-baseline --alternate-workers"));
        // Against the minimal JavaScript Worker, which run.toml names.
        r.run.worker = Some(WorkerKind::JsMinimal);
        assert!(command(&r).ends_with("--alternate-workers --worker js-minimal"));
        r.run.alternate_workers = false;
        r.run.paired_workers = true;
        assert!(command(&r).ends_with("--no-baseline --paired-workers --worker js-minimal"));
        r.run.paired_workers = false;
        r.run.worker = Some(WorkerKind::Js);
        r.run.isolate_heap = true;
        r.run.isolate_heap_alternate = true;
        assert!(
            command(&r).ends_with("--no-baseline --worker js --isolate-heap=alternate"),
            "{}",
            command(&r)
        );
    }

    #[test]
    fn the_time_section_gives_each_targets_harness_share() {
        let mut r = record();
        assert_eq!(time_section(&r), "", "a run recorded before sessions were");
        let session = |target, wall_ms, calls_ms| SessionTime {
            target,
            session: 0,
            warmup_discarded: None,
            worker: None,
            start_ms: 1_500.0,
            wall_ms,
            calls_ms,
            calls: 300,
            stop_ms: 500.0,
        };
        r.sessions = vec![
            session(TargetKind::Remote, 90_000.0, 81_000.0),
            session(TargetKind::Sqlite, 4_000.0, 3_000.0),
        ];
        let text = time_section(&r);
        assert!(
            text.contains("| `remote` | 90.0 s | 81.0 s | 10.0% | 300 | 2.00 s |"),
            "{text}"
        );
        assert!(
            text.contains("| `sqlite` | 4.00 s | 3.00 s | 25.0% | 300 | 2.00 s |"),
            "{text}"
        );
        assert!(text.contains("the run took 125 s."), "{text}");
        assert!(!text.contains("not measured"), "{text}");
        let mut workload = r.clone();
        workload.sessions = vec![SessionTime {
            calls: 0,
            ..session(TargetKind::Local, 294_000.0, 0.0)
        }];
        let text = time_section(&workload);
        assert!(
            text.contains("| `local` | 294 s | 0.00 s | – | 0 | 2.00 s |"),
            "{text}"
        );
        assert!(text.contains("its harness share is not measured"), "{text}");
        r.resumed.push(Resumption {
            at: "2026-11-30T00:01:00Z".into(),
            was: RunStatus::Interrupted,
            error: None,
            unit: "probes".into(),
            skipped: 20,
            warmups_skipped: 4,
            remaining: 40,
        });
        r.sessions
            .push(session(TargetKind::Remote, 10_000.0, 9_000.0));
        let text = time_section(&r);
        assert!(
            text.contains("| `remote` | 100 s | 90.0 s | 10.0% | 600 | 4.00 s |"),
            "{text}"
        );
        assert!(text.contains("over 2 attempts"), "{text}");
        assert_eq!(
            resumptions(&r),
            "This run was resumed (`cargo xtask run --resume`); every record is in the same \
             files:\n\n- resumed at 2026-11-30T00:01:00Z (the run was interrupted): 20 probes \
             already recorded were skipped (and 4 warm-ups of their points), 40 sent\n\n"
        );
    }
}
