//! Ladders as a kind of study: one ladder file, or every one for `limits`, planned into climbs
//! (a ladder of the Workers runtime refused on in-process SQLite and on Postgres, skipped under
//! `limits`; on Postgres a file's `postgres-` profile where it has one),
//! climbed by [`super::climb`], resumed climb by climb and reported by
//! [`super::report::render_ladder`].

use std::fmt::Write;
use std::path::Path;

use anyhow::{Result, bail};

use super::climb::{self, ClimbsDone};
use super::dialect::Dialect;
use super::{Climb, LIMITS, Ladder};
use crate::base::TargetKind;
use crate::records::csv;
use crate::records::{RunDir, RunRecord, StudyKind, Totals};
use crate::reports::Rendered;
use crate::studies::cost::Cost;
use crate::studies::dry_run::{compact, count};
use crate::studies::kind::{self, Ask, Kind, Measuring, PlannedStudy, RunPlan, Skipped, Study};
use crate::studies::ladder::row::{ClimbFinding, RungRow};
use crate::targets::Session;

/// The ladder kind: `limits`, and every file with a top-level `ladder` key.
pub struct LadderKind;

impl Kind for LadderKind {
    fn name(&self) -> StudyKind {
        StudyKind::Ladder
    }

    fn unit(&self) -> &'static str {
        "rungs"
    }

    fn claims(&self, dir: &Path, name: &str) -> bool {
        name == LIMITS || super::is_ladder_file(&dir.join(format!("{name}.toml")))
    }

    fn load(&self, dir: &Path, name: &str) -> Result<Box<dyn Study>> {
        let names = if name == LIMITS {
            super::names(dir)?
        } else {
            vec![name.to_owned()]
        };
        let ladders = names
            .iter()
            .map(|n| Ladder::load(dir, n))
            .collect::<Result<Vec<_>>>()?;
        Ok(Box::new(LadderSet(ladders)))
    }

    fn render(&self, run_dir: &RunDir, record: &RunRecord, titles: bool) -> Result<Rendered> {
        super::report::render_ladder(run_dir, record, titles)
    }
}

/// One ladder, or every ladder for `limits`.
pub struct LadderSet(pub Vec<Ladder>);

impl Study for LadderSet {
    fn listing(&self) -> String {
        match self.0.as_slice() {
            [l] => {
                let profiles: Vec<&str> = l.file.profile.keys().map(String::as_str).collect();
                format!(
                    "ladder: {} [profiles: {}]",
                    l.file.description,
                    profiles.join(", ")
                )
            }
            _ => "every ladder, then the limits parity table (parity.csv, summary.md)".to_owned(),
        }
    }

    fn priced(&self, profile: Option<&str>) -> Result<(String, Cost)> {
        let mut climbs = Vec::new();
        let mut profiles: Vec<String> = Vec::new();
        for ladder in &self.0 {
            let (profile, spec) = ladder.profile(profile)?;
            climbs.extend(ladder.climbs(spec));
            if !profiles.iter().any(|p| p == profile) {
                profiles.push(profile.to_owned());
            }
        }
        Ok((profiles.join("/"), super::cost::of(&climbs)))
    }

    fn plan(&self, ask: Ask) -> Result<RunPlan> {
        if ask.debug_corrupt.is_some()
            || ask.no_baseline
            || ask.baseline != TargetKind::Sqlite
            || ask.debug_slow_percent.is_some()
        {
            bail!(
                "--debug-corrupt, --debug-slow, --baseline and --no-baseline apply to experiments, not to ladders (`{}` climbs ladders; climb them on a Durable Object with `--target do`)",
                ask.experiment
            );
        }
        ask.overrides.refuse_for_ladders(ask.experiment)?;
        let mut climbs = Vec::new();
        let mut profiles: Vec<String> = Vec::new();
        let mut files = Vec::new();
        // One deployment serves every ladder of the run: one `limits.subrequests` for all.
        let mut subrequests: Option<(u32, &str)> = None;
        let dialect = Dialect::of(ask.target);
        for l in &self.0 {
            let kind = l.file.ladder;
            if !dialect.climbs(kind) {
                if ask.experiment == LIMITS {
                    continue;
                }
                bail!(
                    "{kind} climbs a limit of the Workers runtime and D1's service, which a \
                     Postgres connection does not have; run it with --target local, do or remote"
                );
            }
            if ask.target == TargetKind::Sqlite && !kind.runs_on_sqlite() {
                if ask.experiment == LIMITS {
                    continue;
                }
                bail!(
                    "{kind} climbs a limit of the Workers runtime and D1's service, which in-process SQLite does not have; run it with --target local or remote"
                );
            }
            let (profile, spec) = l.profile_in(ask.profile, dialect)?;
            let climbs_here = l.climbs(spec);
            for climb in &climbs_here {
                for value in climb.rungs.sequence() {
                    if let Err(e) = dialect.validate(&climb.rung(1, value)) {
                        bail!(
                            "{}: profile `{profile}` sends a rung {} cannot take ({e}); give \
                             the file a `{}{profile}` profile for it",
                            l.path.display(),
                            ask.target,
                            super::dialect::POSTGRES_PROFILE_PREFIX
                        );
                    }
                }
            }
            if let Some(n) = spec.subrequests() {
                match subrequests {
                    Some((m, other)) if m != n => bail!(
                        "{} sets worker-subrequests = {n} and {other} {m}: one run deploys one \
                         Worker; run them apart",
                        l.name
                    ),
                    _ => subrequests = Some((n, &l.name)),
                }
            }
            climbs.extend(climbs_here);
            if !profiles.iter().any(|p| p == profile) {
                profiles.push(profile.to_owned());
            }
            files.push(kind::study_file(
                ask.root,
                &l.name,
                &l.path,
                &l.source,
                &l.file.description,
            ));
        }
        Ok(RunPlan {
            work: Box::new(LadderWork {
                climbs,
                done: ClimbsDone::default(),
                subrequests: subrequests.map(|(n, _)| n),
            }),
            profile: profiles.join("/"),
            files,
            overrides: ask.overrides,
            baseline: None,
        })
    }
}

/// A ladder run's climbs, and those earlier attempts of a resumed run finished.
pub struct LadderWork {
    pub climbs: Vec<Climb>,
    pub done: ClimbsDone,
    /// The Worker's `limits.subrequests` the profile sets, if any.
    pub subrequests: Option<u32>,
}

impl PlannedStudy for LadderWork {
    fn kind(&self) -> &'static dyn Kind {
        &LadderKind
    }

    fn worker_subrequests(&self) -> Option<u32> {
        self.subrequests
    }

    fn cost(&self) -> Cost {
        super::cost::of(&self.climbs)
    }

    // Ladder tables have no index: every row written is a row inserted.
    fn sent(&self) -> (usize, usize) {
        let cost = self.cost();
        (cost.probes, cost.rows_written)
    }

    fn dry_run(&self, out: &mut String, _target: TargetKind, _baseline: Option<TargetKind>) {
        climb_lines(out, &self.climbs);
    }

    /// Reads the climbs with a finding in findings.csv (each checked to be the climb of its
    /// index, of the same ladder, on `targets`' first) and the next free rung id.
    fn resume(&mut self, run_dir: &RunDir, _profile: &str, targets: &[TargetKind]) -> Result<()> {
        let target = targets[0];
        let findings = run_dir.findings_csv();
        if findings.exists() {
            for (i, finding) in csv::read::<ClimbFinding>(&findings)?.iter().enumerate() {
                let planned = self.climbs.get(finding.climb).map(|c| c.ladder);
                if finding.target != target || planned != Some(finding.ladder) {
                    bail!(
                        "{}:{}: climb {} of {} on {} is not a climb of the run's plan made \
                         again",
                        findings.display(),
                        i + 2,
                        finding.climb,
                        finding.ladder,
                        finding.target
                    );
                }
                self.done.climbs.insert(finding.climb);
            }
        }
        let results = run_dir.results_csv();
        if results.exists() {
            let rungs = csv::read::<RungRow>(&results)?;
            if let Some(last) = rungs.iter().map(|r| r.rung_id).max() {
                self.done.next_rung_id = last + 1;
            }
        }
        Ok(())
    }

    fn resumption(&self, _targets: &[TargetKind]) -> Skipped {
        Skipped {
            unit: "climbs",
            skipped: self.done.climbs.len(),
            warmups_skipped: 0,
            remaining: self.climbs.len() - self.done.climbs.len(),
        }
    }

    fn left_on(&self, _target: TargetKind, _session: usize) -> bool {
        self.climbs.len() > self.done.climbs.len()
    }

    fn measure(&self, session: &mut dyn Session, at: &Measuring) -> Result<Totals> {
        climb::climb_all(session, &self.climbs, &self.done, at.run_dir)
    }

    fn recorded_totals(&self, run_dir: &RunDir) -> Result<Totals> {
        let mut totals = Totals::default();
        csv::read::<RungRow>(&run_dir.results_csv())?
            .iter()
            .for_each(|r| totals.add(r));
        Ok(totals)
    }
}

/// Each ladder: its climbs (what they hold) and the most rungs they may take.
fn climb_lines(out: &mut String, climbs: &[Climb]) {
    let mut ladders: Vec<(String, Vec<&Climb>)> = Vec::new();
    for climb in climbs {
        let name = climb.ladder.to_string();
        match ladders.iter_mut().find(|(n, _)| *n == name) {
            Some((_, group)) => group.push(climb),
            None => ladders.push((name, vec![climb])),
        }
    }
    writeln!(
        out,
        "{} climbs, at most {} rungs:",
        climbs.len(),
        super::cost::of(climbs).probes
    )
    .unwrap();
    let width = ladders.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
    for (name, group) in &ladders {
        let owned: Vec<Climb> = group.iter().map(|c| (*c).clone()).collect();
        let held: Vec<String> = group.iter().map(|c| c.held.label()).collect();
        writeln!(
            out,
            "  {name:width$}  {:>10}  at most {:>10}  {}",
            count(group.len(), "climb"),
            count(super::cost::of(&owned).probes, "rung"),
            compact(&held)
        )
        .unwrap();
        let mut planned: Vec<String> = group.iter().map(|c| c.rungs.label()).collect();
        planned.dedup();
        for rungs in planned {
            writeln!(out, "  {:width$}  rungs: {rungs}", "").unwrap();
        }
    }
}
