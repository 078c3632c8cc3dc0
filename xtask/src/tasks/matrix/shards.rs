//! `cargo xtask matrix --shards N`: the experiments workflow's sharded jobs. Each workload job
//! is split into N jobs, one shard each (`run --shard K/N`, each on a runner of its own), named
//! by the group the merge job merges them into: the unsharded job's name.

use anyhow::{Result, bail};
use serde::Serialize;

use super::Job;
use crate::flags;
use crate::records::StudyKind;
use crate::records::shard::Shard;
use crate::studies;

/// One shard of a workload job.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ShardJob {
    /// The job as unsharded, named `<group>-shard-<K>-of-<N>`; its cost is the whole job's (each
    /// shard seeds and checks its table, and sends one request in N).
    #[serde(flatten)]
    pub job: Job,
    /// `K/N`, as `run --shard` takes it.
    pub shard: String,
    /// The unsharded job's name: the merge job merges the shards of one group into one run.
    pub group: String,
}

/// The workload jobs `flags` asks for, each split into `shards` jobs; a sweep or ladder named
/// is refused (it has no rate to share).
pub fn jobs(dir: &std::path::Path, flags: &flags::Matrix, shards: u32) -> Result<Vec<ShardJob>> {
    let workloads = studies::names(dir, StudyKind::Workload)?;
    let all = flags.experiments.iter().any(|e| e.trim() == "all");
    let mut out = Vec::new();
    for job in super::jobs(dir, flags)? {
        if !workloads.contains(&job.experiment) {
            if all {
                continue;
            }
            bail!(
                "--shards {shards}: `{}` is not a workload: only a workload's open-loop load is \
                 split between runners",
                job.experiment
            );
        }
        for index in 1..=shards {
            let shard = Shard { index, of: shards };
            out.push(ShardJob {
                job: Job {
                    name: format!("{}-shard-{index}-of-{shards}", job.name),
                    ..job.clone()
                },
                shard: shard.to_string(),
                group: job.name.clone(),
            });
        }
    }
    if out.is_empty() {
        bail!("--shards {shards}: no workload selected (--experiments names none)");
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn matrix(args: &[&str]) -> flags::Matrix {
        let mut argv = vec!["xtask", "matrix"];
        argv.extend_from_slice(args);
        match flags::Xtask::try_parse_from(argv).unwrap().task {
            flags::Task::Matrix(m) => m,
            _ => unreachable!(),
        }
    }

    /// Every shipped workload, three shards each, grouped by the unsharded job; sweeps left out
    /// of `all` and refused by name.
    #[test]
    fn each_workload_job_becomes_n_shard_jobs_of_one_group() {
        let dir = crate::paths::project_root().join("experiments");
        let jobs = jobs(&dir, &matrix(&["--experiments", "all", "--shards", "3"]), 3).unwrap();
        let workloads = studies::names(&dir, StudyKind::Workload).unwrap();
        assert_eq!(jobs.len(), 3 * workloads.len());
        let read_path: Vec<&ShardJob> = jobs
            .iter()
            .filter(|j| j.group == "read-path-local")
            .collect();
        assert_eq!(
            read_path
                .iter()
                .map(|j| j.shard.as_str())
                .collect::<Vec<_>>(),
            ["1/3", "2/3", "3/3"]
        );
        assert_eq!(read_path[1].job.name, "read-path-local-shard-2-of-3");
        let json = serde_json::to_value(read_path[0]).unwrap();
        for field in ["name", "experiment", "target", "profile", "shard", "group"] {
            assert!(json.get(field).is_some(), "{field} missing from {json}");
        }
        let err = jobs_err(&dir, &["--experiments", "column-sweep", "--shards", "2"]);
        assert!(err.contains("`column-sweep` is not a workload"), "{err}");
        let err = flags::Xtask::try_parse_from(["xtask", "matrix", "--shards", "1"])
            .unwrap_err()
            .to_string();
        assert!(err.contains("--shards"), "{err}");
    }

    fn jobs_err(dir: &std::path::Path, args: &[&str]) -> String {
        jobs(dir, &matrix(args), 2).unwrap_err().to_string()
    }
}
