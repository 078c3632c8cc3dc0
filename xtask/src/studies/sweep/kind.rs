//! Sweeps as a kind of study: an experiment file planned into sessions of shuffled probes (the
//! command line's overrides applied, `--debug-corrupt` checked on every probe, `--debug-slow`
//! set on every probe), the bare-SQLite baseline's sessions alternating with a target that runs
//! the Worker, measured by [`super::measure`], settled by [`super::settle`], resumed probe by
//! probe ([`super::resume`]) and reported by [`super::report::render_sweep`].

use std::collections::{BTreeSet, HashSet};
use std::path::Path;

use anyhow::{Result, anyhow, bail};
use d1bench_core::Corruption;

use super::schedule::SweepPlan;
use super::{Axis, PlannedProbe, SweepStudy};
use crate::base::{TargetKind, WorkerKind};
use crate::records::run_record::RunInfo;
use crate::records::{RunDir, RunRecord, StudyKind, Totals};
use crate::reports::Rendered;
use crate::studies::cost::Cost;
use crate::studies::kind::{self, Ask, Kind, Measuring, PlannedStudy, RunPlan, Skipped, Study};
use crate::targets::Session;

/// The sweep kind: every experiment file the other kinds do not claim.
pub struct SweepKind;

impl Kind for SweepKind {
    fn name(&self) -> StudyKind {
        StudyKind::Sweep
    }

    fn unit(&self) -> &'static str {
        "probes"
    }

    fn claims(&self, dir: &Path, name: &str) -> bool {
        dir.join(format!("{name}.toml")).exists()
    }

    fn load(&self, dir: &Path, name: &str) -> Result<Box<dyn Study>> {
        Ok(Box::new(SweepStudy::load(dir, name)?))
    }

    fn render(&self, run_dir: &RunDir, record: &RunRecord, titles: bool) -> Result<Rendered> {
        super::report::render_sweep(run_dir, record, titles)
    }

    fn ran_without_baseline(&self, run: &RunInfo) -> bool {
        run.target.runs_the_worker() && run.baseline.is_none()
    }
}

impl Study for SweepStudy {
    fn measures_libraries(&self) -> bool {
        self.has_orms()
    }

    fn listing(&self) -> String {
        let profiles: Vec<&str> = self.file.profile.keys().map(String::as_str).collect();
        format!(
            "{} [profiles: {}]",
            self.file.description,
            profiles.join(", ")
        )
    }

    fn priced(&self, profile: Option<&str>) -> Result<(String, Cost)> {
        let (profile, spec) = self.profile(profile)?;
        Ok((profile.to_owned(), super::cost::of(&self.probes(spec))))
    }

    fn plan(&self, ask: Ask) -> Result<RunPlan> {
        let (profile, spec) = self.profile(ask.profile)?;
        let mut plan = ask.overrides.plan(self, spec)?;
        if let Some(corruption) = ask.debug_corrupt {
            corrupt_every_probe(&mut plan, corruption)?;
        }
        if let Some(percent) = ask.debug_slow_percent {
            eprintln!(
                "--debug-slow {percent}: every probe's timed window is stretched by {percent}% \
                 in the target; this run measures the harness, not D1"
            );
            for point in &mut plan.points {
                point.request.debug_slow_percent = Some(percent);
            }
        }
        let file = kind::study_file(
            ask.root,
            &self.name,
            &self.path,
            &self.source,
            &self.file.description,
        );
        if ask.baseline != TargetKind::Sqlite && !ask.target.takes_baseline(ask.baseline) {
            bail!(
                "--baseline {} does not go with --target {}: a sweep's baseline is `sqlite` \
                 (beside any target that runs the Worker), `do` (beside `--target local`) or \
                 `remote-do` (beside `--target remote`)",
                ask.baseline,
                ask.target
            );
        }
        // Libraries run only in the ORM Worker, so a run with them has no baseline (bare SQLite
        // cannot run them, and a baseline of half the probes would divide nothing).
        let orms = plan.points.iter().any(|p| !p.orms.is_empty());
        if orms && ask.worker != Some(WorkerKind::JsOrm) {
            bail!(
                "{} measures libraries (`orms`), which only the ORM Worker runs: \
                 `--target local --worker js-orm`",
                self.name
            );
        }
        // Paired Workers measure each other: a session holds both, and no baseline's sessions
        // alternate with them.
        if let Some(js) = ask.paired_workers {
            plan.workers = vec![WorkerKind::Rust, js];
            if !ask.no_baseline {
                eprintln!(
                    "--paired-workers: the Rust and the {js} Worker share every session, \
                     with no {} baseline",
                    ask.baseline
                );
            }
        }
        let baseline = (ask.target.takes_baseline(ask.baseline)
            && !ask.no_baseline
            && !orms
            && ask.paired_workers.is_none())
        .then_some(ask.baseline);
        self.check_engines(profile, &plan, ask.target, baseline)?;
        if orms && !ask.no_baseline && ask.target.takes_baseline(ask.baseline) {
            eprintln!(
                "{} measures libraries (`orms`), which only the ORM Worker runs: no {} baseline",
                self.name, ask.baseline
            );
        }
        Ok(RunPlan {
            work: Box::new(SweepWork {
                plan,
                x_axis: self.file.x_axis,
                y_axis: self.y_axis(),
                recorded: BTreeSet::new(),
            }),
            profile: profile.to_owned(),
            files: vec![file],
            overrides: ask.overrides,
            baseline,
        })
    }
}

/// A sweep's plan, and the probes earlier attempts of a resumed run recorded.
pub struct SweepWork {
    pub plan: SweepPlan,
    pub x_axis: Axis,
    /// A grid's second axis (the decision map's rows).
    pub y_axis: Option<Axis>,
    /// The probes in results.csv: (target, probe id).
    pub recorded: BTreeSet<(TargetKind, u64)>,
}

impl PlannedStudy for SweepWork {
    fn kind(&self) -> &'static dyn Kind {
        &SweepKind
    }

    fn sessions(&self) -> usize {
        self.plan.sessions
    }

    fn cost(&self) -> Cost {
        super::cost::of(&self.plan.probes())
    }

    fn sent(&self) -> (usize, usize) {
        let probes = self.plan.probes();
        (probes.len(), probes.iter().map(|p| p.request.rows).sum())
    }

    fn record_in(&self, run: &mut RunInfo) {
        run.x_axis = Some(self.x_axis);
        run.y_axis = self.y_axis;
        run.order_seed = Some(self.plan.order_seed);
        run.sessions = Some(self.plan.sessions);
        run.precision = self.plan.until.map(|u| u.precision);
        run.max_repeats = self.plan.until.map(|u| u.max_repeats);
    }

    fn dry_run(&self, out: &mut String, target: TargetKind, baseline: Option<TargetKind>) {
        super::dry_run::lines(out, &self.plan, self.x_axis, baseline);
        if target.is_postgres() || baseline.is_some_and(TargetKind::is_postgres) {
            super::dry_run::statement_limits(out, &self.plan);
        }
    }

    fn weight(&self, earlier: &Path, targets: &[TargetKind]) -> Option<f64> {
        super::dry_run::weight(&self.plan, earlier, targets)
    }

    fn resume(&mut self, run_dir: &RunDir, profile: &str, targets: &[TargetKind]) -> Result<()> {
        self.recorded = super::resume::recorded(&self.plan, run_dir, profile, targets)?;
        Ok(())
    }

    fn resumption(&self, targets: &[TargetKind]) -> Skipped {
        let probes = &self.plan.probes();
        let mut left = 0;
        let mut warmups_skipped = 0;
        for &t in targets {
            let remaining = self.remaining(probes, t);
            left += remaining.len();
            warmups_skipped += probes.iter().filter(|p| p.warmup).count()
                - remaining.iter().filter(|p| p.warmup).count();
        }
        Skipped {
            unit: "probes",
            skipped: self.recorded.len(),
            warmups_skipped,
            remaining: left,
        }
    }

    fn left_on(&self, target: TargetKind, session: usize) -> bool {
        let skipped = self.skipped(target);
        self.plan
            .session_probes(session)
            .iter()
            .any(|p| !skipped.contains(&p.request.probe_id))
    }

    fn measure(&self, session: &mut dyn Session, at: &Measuring) -> Result<Totals> {
        let skip = self.skipped(session.target());
        super::measure::measure(
            session,
            at.experiment,
            &self.plan,
            at.session,
            &skip,
            at.run_dir,
            at.clock,
        )
    }

    fn settle(
        &self,
        run_dir: &RunDir,
        target: TargetKind,
        session: usize,
    ) -> Result<Option<usize>> {
        super::settle::settle(run_dir, target, session).map(Some)
    }

    fn recorded_totals(&self, run_dir: &RunDir) -> Result<Totals> {
        super::resume::recorded_totals(run_dir)
    }
}

impl SweepWork {
    /// The probes of `probes` still to send on `target`: those results.csv does not hold, with
    /// the warm-ups of their points not recorded either (a point whose measured probes are all
    /// recorded is skipped whole, warm-ups included).
    pub fn remaining(&self, probes: &[PlannedProbe], target: TargetKind) -> Vec<PlannedProbe> {
        let recorded = |p: &PlannedProbe| self.recorded.contains(&(target, p.request.probe_id));
        let open: HashSet<String> = probes
            .iter()
            .filter(|p| !p.warmup && !recorded(p))
            .map(point_key)
            .collect();
        probes
            .iter()
            .filter(|p| {
                if p.warmup {
                    open.contains(&point_key(p)) && !recorded(p)
                } else {
                    !recorded(p)
                }
            })
            .cloned()
            .collect()
    }

    /// The ids of the probes of the plan not to send on `target`: the measured probes
    /// results.csv holds, and the warm-ups of the points whose measured probes are all recorded
    /// (what [`SweepWork::remaining`] leaves out of [`SweepPlan::probes`]).
    pub fn skipped(&self, target: TargetKind) -> HashSet<u64> {
        let probes = self.plan.probes();
        let remaining: HashSet<u64> = self
            .remaining(&probes, target)
            .iter()
            .map(|p| p.request.probe_id)
            .collect();
        probes
            .iter()
            .map(|p| p.request.probe_id)
            .filter(|id| !remaining.contains(id))
            .collect()
    }
}

/// What a probe shares with the other repeats and warm-ups of its point in its session: its
/// session, series, label and parameters (its strategy or library included), without its id.
fn point_key(probe: &PlannedProbe) -> String {
    let request = d1bench_core::ProbeRequest {
        probe_id: 0,
        ..probe.request.clone()
    };
    let orm = probe.orm.map_or(String::new(), |o| format!("|{o}"));
    format!(
        "{}|{}|{}|{request:?}{orm}",
        probe.session, probe.series, probe.label
    )
}

/// Sets `--debug-corrupt` on every probe, checking that each can take it.
fn corrupt_every_probe(plan: &mut SweepPlan, corruption: Corruption) -> Result<()> {
    eprintln!(
        "--debug-corrupt {}: every probe's table is changed after its writes; this run will be invalid",
        corruption.name()
    );
    for point in &mut plan.points {
        point.request.debug_corrupt = Some(corruption);
        for &strategy in &point.strategies {
            let probe = point.probe(strategy, 0);
            probe.validate().map_err(|e| {
                anyhow!(
                    "--debug-corrupt {} cannot apply to the {strategy} probes at columns {}, \
                     row-bytes {}, rows {}: {e}",
                    corruption.name(),
                    probe.columns,
                    probe.row_bytes,
                    probe.rows
                )
            })?;
        }
    }
    Ok(())
}
