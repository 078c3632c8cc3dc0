//! Workloads as a kind of study: a `[table]` file planned into its profile's load points (the
//! sweep-only flags refused), the bare-SQLite baseline after a target that runs the Worker
//! unless it needs Workers KV, measured under open-loop load by [`super::measure`] and reported
//! by [`super::report::summary::render`]. A workload run cannot be resumed.

use std::fmt::Write;
use std::path::Path;

use anyhow::{Result, bail};

use super::shard::ceiling::Ceiling;
use super::{Workload, WorkloadPlan};
use crate::base::TargetKind;
use crate::base::numbers::thousands;
use crate::records::run_record::RunInfo;
use crate::records::shard::Shard;
use crate::records::{RunDir, RunRecord, StudyKind, Totals};
use crate::reports::Rendered;
use crate::studies::cost::Cost;
use crate::studies::kind::{self, Ask, Kind, Measuring, PlannedStudy, RunPlan, Skipped, Study};
use crate::targets::Session;

/// The workload kind: every file that declares a `[table]`.
pub struct WorkloadKind;

impl Kind for WorkloadKind {
    fn name(&self) -> StudyKind {
        StudyKind::Workload
    }

    fn unit(&self) -> &'static str {
        "records"
    }

    fn claims(&self, dir: &Path, name: &str) -> bool {
        super::is_workload_file(&dir.join(format!("{name}.toml")))
    }

    fn load(&self, dir: &Path, name: &str) -> Result<Box<dyn Study>> {
        Ok(Box::new(Workload::load(dir, name)?))
    }

    fn render(&self, run_dir: &RunDir, record: &RunRecord, titles: bool) -> Result<Rendered> {
        super::report::summary::render(run_dir, record, titles)
    }
}

impl Study for Workload {
    fn listing(&self) -> String {
        let profiles: Vec<&str> = self.file.profile.keys().map(String::as_str).collect();
        format!(
            "workload: {} [profiles: {}]",
            self.file.description,
            profiles.join(", ")
        )
    }

    fn priced(&self, profile: Option<&str>) -> Result<(String, Cost)> {
        let (profile, spec) = self.profile(profile)?;
        Ok((profile.to_owned(), self.plan(spec).cost()))
    }

    /// Its profile's load points, with the bare-SQLite baseline after a target that runs the
    /// Worker (unless `--no-baseline`); the sweep-only flags refused before anything starts.
    fn plan(&self, ask: Ask) -> Result<RunPlan> {
        if ask.debug_corrupt.is_some() {
            bail!(
                "--debug-corrupt applies to sweeps: `{}` is a workload, whose table is checked \
                 by count, ids and checksum after seeding and at the end",
                ask.experiment
            );
        }
        if ask.debug_slow_percent.is_some() {
            bail!(
                "--debug-slow applies to sweeps: `{}` is a workload, whose latencies are taken \
                 from when each request was due, not from a probe's timed window",
                ask.experiment
            );
        }
        if !ask.overrides.is_empty() {
            bail!(
                "--repeats, --warmup, --seed, --order-seed, --sessions and --only apply to sweeps, \
                 not to workloads \
                 (`{}` is a workload: its profile sets its rates, duration and warm-up)",
                ask.experiment
            );
        }
        self.check_target(ask.target)?;
        if ask.target.through_do() || ask.baseline != TargetKind::Sqlite {
            bail!(
                "`{}` is a workload, and workloads run on D1 and bare SQLite only: the `do` and \
                 `remote-do` targets and `--baseline do` run sweeps and ladders (the Worker's \
                 Durable Object answers /setup, /probe, /verify and /rung)",
                ask.experiment
            );
        }
        let (profile, spec) = self.profile(ask.profile)?;
        // A workload through Workers KV has no bare-SQLite baseline: SQLite has no KV.
        let baseline = (ask.target.runs_the_worker() && !ask.no_baseline && !self.needs_kv())
            .then_some(TargetKind::Sqlite);
        let file = kind::study_file(
            ask.root,
            &self.name,
            &self.path,
            &self.source,
            &self.file.description,
        );
        let mut plan = Workload::plan(self, spec);
        self.check_path_target(spec, &plan, ask.target)?;
        plan.shard = ask.shard.unwrap_or(Shard::WHOLE);
        plan.ceiling = Ceiling::read(ask.root)?;
        // A dry run names the points one process cannot offer in its lines; a run refuses them.
        if !ask.dry_run {
            super::shard::check_rates(&plan, ask.experiment)?;
        }
        Ok(RunPlan {
            work: Box::new(plan),
            profile: profile.to_owned(),
            files: vec![file],
            overrides: ask.overrides,
            baseline,
        })
    }
}

impl PlannedStudy for WorkloadPlan {
    fn kind(&self) -> &'static dyn Kind {
        &WorkloadKind
    }

    fn cost(&self) -> Cost {
        WorkloadPlan::cost(self)
    }

    fn sent(&self) -> (usize, usize) {
        (self.requests(), self.seeded_rows() as usize)
    }

    fn reads_in_sessions(&self) -> bool {
        self.points
            .iter()
            .any(|p| p.arms.iter().any(|a| !a.session.is_none()))
    }

    fn record_in(&self, run: &mut RunInfo) {
        run.order_seed = Some(self.order_seed);
    }

    fn dry_run(&self, out: &mut String, _target: TargetKind, baseline: Option<TargetKind>) {
        workload_lines(out, self);
        for line in super::shard::ceiling::dry_run_lines(self, self.ceiling.as_ref()) {
            writeln!(out, "{line}").unwrap();
        }
        if let Some(baseline) = baseline {
            writeln!(
                out,
                "then the same load on the baseline, {baseline} (bare SQLite in-process)"
            )
            .unwrap();
        }
    }

    fn resume(&mut self, run_dir: &RunDir, _profile: &str, _targets: &[TargetKind]) -> Result<()> {
        bail!(
            "{}: a workload run cannot be resumed: its table and the writes acknowledged so far \
             live in the target that ran it; start a new run",
            run_dir.run_toml().display()
        )
    }

    fn resumption(&self, _targets: &[TargetKind]) -> Skipped {
        Skipped {
            unit: "requests",
            skipped: 0,
            warmups_skipped: 0,
            remaining: self.requests(),
        }
    }

    fn measure(&self, session: &mut dyn Session, at: &Measuring) -> Result<Totals> {
        super::measure::measure(session, at.experiment, self, at.run_dir, at.clock)
    }

    fn recorded_totals(&self, _run_dir: &RunDir) -> Result<Totals> {
        bail!("a workload run cannot be resumed")
    }
}

/// What a workload does: the table's sizes and seed batches, then each load point.
fn workload_lines(out: &mut String, plan: &WorkloadPlan) {
    writeln!(
        out,
        "table: {} columns (and id, k) of {} bytes, {} groups; seeded to {} rows in {} batches \
         of at most {} rows",
        plan.spec.columns,
        plan.spec.row_bytes,
        plan.spec.groups,
        plan.sizes
            .iter()
            .map(|n| n.to_string())
            .collect::<Vec<_>>()
            .join(", then "),
        plan.seed_batches(),
        plan.spec.seed_batch_rows()
    )
    .unwrap();
    for p in &plan.points {
        let ops: Vec<String> = p
            .arms
            .iter()
            .map(|a| format!("{} {} {:.1}%", a.op.op, a.series(), a.share * 100.0))
            .collect();
        writeln!(
            out,
            "point {}: {} rows, {}, {} requests/s for {} s after {} s of warm-up: {}",
            p.id,
            p.table_rows,
            p.series(),
            p.rate,
            plan.duration_s,
            plan.warmup_s,
            ops.join(", ")
        )
        .unwrap();
    }
    writeln!(
        out,
        "{} requests in all, at most {} in flight",
        plan.requests(),
        plan.max_in_flight
    )
    .unwrap();
    if let Some(busiest) = super::path::busiest_rest_window(plan) {
        writeln!(
            out,
            "D1's REST API: at most {} calls in any 5 minutes (every attempt of every write \
             sent that way), within its limit of {} per 5 minutes per account",
            thousands(busiest.ceil() as usize),
            thousands(crate::targets::remote::rest::REQUESTS_PER_WINDOW as usize)
        )
        .unwrap();
    }
}
