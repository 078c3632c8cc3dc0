//! What every `summary.md` says of how its run was run, from run.toml alone: the command that
//! runs it again, with its overrides, and for remote runs its location and plan.

use std::fmt::Write;

use clap::ValueEnum;

use crate::records::RunRecord;

/// `cargo xtask run ...` with every flag that decides what the run measured.
pub fn command(record: &RunRecord) -> String {
    let run = &record.run;
    let mut command = format!("cargo xtask run {}", run.experiment);
    // Ladders that ran different profiles each ran their default: no --profile then.
    if !run.profile.contains('/') {
        write!(command, " --profile {}", run.profile).unwrap();
    }
    write!(command, " --target {}", run.target).unwrap();
    if let Some(remote) = &record.remote {
        if let Some(location) = &remote.location_hint {
            write!(command, " --location {location}").unwrap();
        }
        write!(command, " --plan {}", remote.plan).unwrap();
    }
    if run.baseline.is_none() && run.target.runs_the_worker() && run.x_axis.is_some() {
        command.push_str(" --no-baseline");
    }
    if let Some(kind) = run.debug_corrupt.and_then(|k| k.to_possible_value()) {
        write!(command, " --debug-corrupt {}", kind.get_name()).unwrap();
    }
    command.push_str(&record.overrides.command_line());
    command
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flags::TargetKind;
    use crate::records::StudyKind;
    use crate::studies::overrides::Overrides;
    use crate::targets::remote::RemoteRecord;

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
            teardown: "deleted".into(),
        }
    }

    #[test]
    fn the_command_carries_location_plan_and_overrides() {
        let mut r = record();
        r.remote = Some(remote(Some("weur"), "paid"));
        r.overrides = Overrides {
            repeats: Some(2),
            warmup: Some(0),
            seed: None,
            only: Some("columns=64,strategy=literal".into()),
        };
        assert_eq!(
            command(&r),
            "cargo xtask run column-sweep --profile full --target remote --location weur --plan \
             paid --repeats 2 --warmup 0 --only columns=64,strategy=literal"
        );
        r.remote = Some(remote(None, "free"));
        r.overrides = Overrides::default();
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
    }
}
