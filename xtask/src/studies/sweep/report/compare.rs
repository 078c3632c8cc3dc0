//! `cargo xtask compare <run-a> <run-b>`: two sweep runs of one experiment compared point by
//! point (b ÷ a of the time per 1,000 rows, judged over sessions by [`judge`], with the change of
//! each run's own ratios beside it), written as `compare.md` and `compare.json`; its exit status
//! says whether something got slower ([`Outcome`]).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::Serialize;

use crate::reports::host_speed::{HostShift, HostVerdict};
use between_runs::{Adjust, BetweenRuns, BetweenRunsRef};
use judge::judge_adjusted;

use crate::base::TargetKind;
use crate::records::run_record::Commit;
use crate::records::{RunDir, RunRecord, RunStatus, StudyKind, csv};
use crate::stats;
use crate::stats::sessions::FALSE_DISCOVERY_RATE;
use crate::studies::sweep::Axis;
use crate::studies::sweep::row::ProbeRow;

pub use calibration::{Calibration, CalibrationKind};
pub use judge::{Basis, ComparedPoint, Judged, Side, judge};
pub use key::PointKey;
pub use markdown::markdown;
pub use relative::{Reading, Relative, RelativeChange};
pub use verdict::{MIN_REPEATS, MIN_SESSIONS, Threshold, ThresholdRule, ThresholdSource, Verdict};

/// A run as a comparison names it.
#[derive(Debug, Clone, Serialize)]
pub struct RunRef {
    pub dir: PathBuf,
    pub id: String,
    pub target: TargetKind,
    pub profile: String,
    pub commit: Commit,
    pub dirty: bool,
    pub status: RunStatus,
}

/// What sets the thresholds, as the comparison reports it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "rule")]
pub enum ThresholdChoice {
    /// `--threshold PERCENT` for every point.
    Given { percent: f64 },
    /// Each point's noise floor in this calibration file (its own where the file lacks it).
    Calibrated {
        file: PathBuf,
        kind: CalibrationKind,
        /// Between runs: the largest move of b ÷ a over its points with nothing changed, and
        /// the one 95% of them stay within (factors).
        moves: Option<(f64, f64)>,
        /// Between runs: σ between runs per target (log scale), which each point's detectable
        /// adds to its sessions' variance; empty within one run or where the file states none.
        between_runs_sd: Vec<(TargetKind, f64)>,
    },
    /// Each point's own noise floor: no calibration was found or asked for.
    NoiseFloor,
}

/// Each target's σ between runs in words: "3.7% on local, 1.9% on sqlite".
pub fn sd_per_target(sd: &[(TargetKind, f64)]) -> String {
    sd.iter()
        .map(|(t, sd)| format!("{:.1}% on {t}", 100.0 * sd))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Where compare looks for a calibration when no `--threshold` is given.
#[derive(Debug, Clone, PartialEq)]
pub enum CalibrationSource {
    /// The newest of run b's experiment, profile, target and sessions under this reports
    /// directory or beside the runs compared, a between-runs one first.
    Newest(PathBuf),
    /// This calibration.csv (`--calibration`).
    File(PathBuf),
    /// None (`--no-calibration`).
    Off,
}

/// What compare's exit status is judged on (`--gate`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Gate {
    /// Each run's own ratios (strategy ÷ bound, target ÷ bare SQLite), in which the runner's
    /// speed cancels: a point fails when one of them got slower or the point no longer succeeds.
    /// A time that moved while its ratios held is reported as the machine, not failed. Where no
    /// point has an own ratio to judge (runs of one session), the times are gated instead, and
    /// compare.md says so. The default: CI runners and shared machines change speed.
    #[default]
    Ratios,
    /// The times themselves: for two runs on one quiet machine that did not change.
    Time,
}

impl Gate {
    pub fn name(self) -> &'static str {
        match self {
            Gate::Ratios => "ratios",
            Gate::Time => "time",
        }
    }
}

/// Two runs compared: what `compare.json` holds and `compare.md` shows.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub experiment: String,
    pub x_axis: Axis,
    pub a: RunRef,
    pub b: RunRef,
    pub threshold: ThresholdChoice,
    /// The gate asked for (`--gate`); [`Comparison::gated_on`] says what it judged.
    pub gate: Gate,
    /// The false discovery rate Benjamini–Hochberg holds the verdicts over sessions to.
    pub false_discovery_rate: f64,
    /// The coverage each ratio's interval aims at (each point reports what it reaches).
    pub confidence: f64,
    /// Successful repeats each run needs at a point for a verdict within one session.
    pub min_repeats: usize,
    /// Sessions each run needs at a point for a verdict over sessions.
    pub min_sessions: usize,
    pub points: Vec<ComparedPoint>,
    /// Points one run measured and the other did not: listed, not compared.
    pub only_in_a: Vec<PointKey>,
    pub only_in_b: Vec<PointKey>,
    /// What a reader must know about the two runs before trusting the table.
    pub notes: Vec<String>,
    /// Run b's host against run a's over the reference workload both recorded; absent unless
    /// both recorded readings. Divided out of the times where the hosts differ.
    pub host: Option<HostShift>,
    /// The committed replicate set whose variance between runs was added to every change.
    pub between_runs: Option<BetweenRunsRef>,
}

/// What a comparison found, as its exit status says it (as `diff` does).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Exit 0: no point got slower or stopped succeeding.
    NoRegression,
    /// Exit 1: a point got slower or no longer succeeds.
    Regression,
    /// Exit 2: trouble — bad flags, runs missing, unreadable or not comparable.
    Trouble,
}

impl Outcome {
    pub fn exit_code(self) -> i32 {
        match self {
            Outcome::NoRegression => 0,
            Outcome::Regression => 1,
            Outcome::Trouble => 2,
        }
    }
}

/// Whether the point fails the gate `gate`: it no longer succeeds, or (on the times) its time
/// got slower, or (on the ratios) one of its own ratios did.
fn fails(p: &ComparedPoint, gate: Gate) -> bool {
    match gate {
        Gate::Time => p.verdict.is_regression(),
        Gate::Ratios => {
            p.verdict == Verdict::NoLongerSucceeds
                || [p.relative.vs_bound, p.relative.vs_baseline]
                    .into_iter()
                    .flatten()
                    .any(|r| r.verdict.is_regression())
        }
    }
}

impl Comparison {
    /// The gate the exit status is judged on: [`Gate::Time`] also when the ratio gate was
    /// asked for and no point has an own ratio to judge.
    pub fn gated_on(&self) -> Gate {
        let judged = self
            .points
            .iter()
            .any(|p| p.relative.vs_bound.is_some() || p.relative.vs_baseline.is_some());
        match self.gate {
            Gate::Ratios if judged => Gate::Ratios,
            _ => Gate::Time,
        }
    }

    /// Points that fail the gate: got slower (on what it judges) or stopped succeeding.
    pub fn regressions(&self) -> usize {
        self.points
            .iter()
            .filter(|p| fails(p, self.gated_on()))
            .count()
    }

    /// Points whose time got slower though they pass the gate (the machine, on the ratio gate).
    pub fn slower_in_time_only(&self) -> usize {
        self.points
            .iter()
            .filter(|p| p.verdict == Verdict::Slower && !fails(p, self.gated_on()))
            .count()
    }

    /// Sets the gate the exit status is judged on.
    pub fn gate(mut self, gate: Gate) -> Comparison {
        self.gate = gate;
        self
    }

    pub fn outcome(&self) -> Outcome {
        if self.regressions() > 0 {
            Outcome::Regression
        } else {
            Outcome::NoRegression
        }
    }

    /// Points judged on `basis`.
    pub fn on(&self, basis: Basis) -> usize {
        self.points.iter().filter(|p| p.basis == basis).count()
    }
}

/// A sweep run read back for comparison.
pub struct Loaded {
    pub record: RunRecord,
    pub rows: Vec<ProbeRow>,
    pub axis: Axis,
}

/// Reads the run in `path` (`which` names it in errors: `run a`, `--from`), refusing what cannot
/// be compared.
pub fn load(path: &Path, which: &str) -> Result<Loaded> {
    let dir = RunDir::new(path.to_owned());
    let shown = path.display();
    if !path.is_dir() {
        bail!("{which}: {shown} is not a directory");
    }
    if !dir.run_toml().is_file() {
        bail!("{which}: {shown} is not a run directory: it holds no run.toml");
    }
    let record = RunRecord::read(&dir.run_toml())
        .with_context(|| format!("{which}: {shown} is not a run directory d1bench can read"))?;
    if record.run.kind == StudyKind::Ladder {
        bail!(
            "{which}: {shown} is a ladder run (`{}`): compare applies to sweeps, whose points \
             are timed; a ladder finds where a limit refuses (see its parity.csv)",
            record.run.experiment
        );
    }
    if let Some(y_axis) = record.run.y_axis {
        bail!(
            "{which}: {shown} is a grid run (`{}`, x {} × y {}): compare pairs points along \
             one axis and would mix the grid's rows; compare its decision-map.csv instead",
            record.run.experiment,
            record.run.x_axis.map_or("?", |a| a.name()),
            y_axis.name()
        );
    }
    if record.run.kind == StudyKind::Workload {
        bail!(
            "{which}: {shown} is a workload run (`{}`): compare applies to sweeps; a workload's \
             own summary compares its settings (see its summary.md)",
            record.run.experiment
        );
    }
    let axis = record
        .run
        .x_axis
        .with_context(|| format!("{which}: {} names no x axis", dir.run_toml().display()))?;
    let results = dir.results_csv();
    if !results.is_file() {
        bail!(
            "{which}: {shown} has no results.csv: the run ({}) ended before measuring",
            record.run.status
        );
    }
    let rows: Vec<ProbeRow> =
        csv::read(&results).with_context(|| format!("{which}: cannot read its results"))?;
    // What a session measured before it settled is left out, as every report leaves it out.
    let rows: Vec<ProbeRow> = rows.into_iter().filter(|r| r.counts()).collect();
    if rows.is_empty() {
        bail!(
            "{which}: {} holds no results: the run ({}) measured nothing",
            results.display(),
            record.run.status
        );
    }
    Ok(Loaded { record, rows, axis })
}

fn run_ref(path: &Path, record: &RunRecord) -> RunRef {
    RunRef {
        dir: path.to_owned(),
        id: record.run.id.clone(),
        target: record.run.target,
        profile: record.run.profile.clone(),
        commit: record.git.commit.clone(),
        dirty: record.git.dirty,
        status: record.run.status,
    }
}

/// The calibration `source` points at, if any: a file given must be readable; the newest
/// found must have halves of `sessions` sessions, those of the runs compared.
fn calibration(
    source: &CalibrationSource,
    runs: [&Path; 2],
    b: &RunRecord,
    sessions: usize,
) -> Result<Option<Calibration>> {
    match source {
        CalibrationSource::Off => Ok(None),
        CalibrationSource::File(file) => Calibration::read(file).map(Some),
        CalibrationSource::Newest(reports) => Calibration::newest(
            reports,
            &runs.map(Path::to_owned),
            &b.run.experiment,
            &b.run.profile,
            b.run.target,
            sessions,
        ),
    }
}

/// Compares the runs in `a` and `b`: one percentage of threshold for every point when
/// `threshold_percent` is given, else each point's noise floor (from a calibration `source`
/// finds, else the pair's own).
pub fn compare(
    a: &Path,
    b: &Path,
    threshold_percent: Option<f64>,
    source: &CalibrationSource,
) -> Result<Comparison> {
    compare_with(a, b, threshold_percent, source, None)
}

/// [`compare`], the variance between runs read from the replicate set `replicates` when one is
/// given (`--replicates`), else from a committed set of b's design unless the calibration is
/// off.
pub fn compare_with(
    a: &Path,
    b: &Path,
    threshold_percent: Option<f64>,
    source: &CalibrationSource,
    replicates: Option<&Path>,
) -> Result<Comparison> {
    if let Some(t) = threshold_percent.filter(|t| !(0.0..100.0).contains(t)) {
        bail!("--threshold {t}: a percentage from 0 up to (not including) 100");
    }
    let (run_a, run_b) = (load(a, "run a")?, load(b, "run b")?);
    let (ra, rb) = (&run_a.record.run, &run_b.record.run);
    if ra.experiment != rb.experiment {
        bail!(
            "{} ran `{}` and {} ran `{}`: compare takes two runs of one experiment",
            a.display(),
            ra.experiment,
            b.display(),
            rb.experiment
        );
    }
    if run_a.axis != run_b.axis {
        bail!(
            "{} sweeps {} and {} sweeps {}: the experiment changed its x axis between the runs",
            a.display(),
            run_a.axis.name(),
            b.display(),
            run_b.axis.name()
        );
    }
    // The sessions each run has: a calibration's floors hold for halves of that many.
    let sessions = ra.sessions.unwrap_or(1).min(rb.sessions.unwrap_or(1));
    let calibration = match threshold_percent {
        Some(_) => None,
        None => calibration(source, [a, b], &run_b.record, sessions)?,
    };
    let mut notes = notes::notes(&run_a.record, &run_b.record);
    notes.extend(notes::calibration(calibration.as_ref(), source, [a, b]));
    if let Some(half) = calibration
        .as_ref()
        .and_then(Calibration::sessions_per_half)
        .filter(|h| *h != sessions)
    {
        notes.push(format!(
            "the calibration's halves hold {half} sessions and these runs {sessions}: its noise \
             floors are not these runs' (a floor shrinks about as √sessions grows)"
        ));
    }
    let (rule, threshold) = match (threshold_percent, &calibration) {
        (Some(percent), _) => (
            ThresholdRule::Given(percent),
            ThresholdChoice::Given { percent },
        ),
        (None, Some(c)) => (
            ThresholdRule::Calibrated(c),
            ThresholdChoice::Calibrated {
                file: c.file.clone(),
                kind: c.kind,
                moves: c.moves(),
                between_runs_sd: c.between_runs_sd(),
            },
        ),
        (None, None) => (ThresholdRule::NoiseFloor, ThresholdChoice::NoiseFloor),
    };
    let host = HostShift::between(&run_a.record, &run_b.record);
    let compared = [ra.id.as_str(), rb.id.as_str()];
    let between = match (replicates, source) {
        (Some(dir), _) => Some(BetweenRuns::of_set(dir, &run_b.record, &compared)?),
        (None, CalibrationSource::Off) => None,
        (None, _) => BetweenRuns::find(&crate::paths::project_root(), &run_b.record, &compared)?,
    };
    notes.extend(host_notes(host.as_ref(), between.as_ref()));
    let adjust = Adjust {
        host,
        between: between.clone(),
    };
    let judged = judge_adjusted(&run_a.rows, &run_b.rows, run_a.axis, &rule, &adjust);
    Ok(Comparison {
        experiment: ra.experiment.clone(),
        x_axis: run_a.axis,
        a: run_ref(a, &run_a.record),
        b: run_ref(b, &run_b.record),
        threshold,
        gate: Gate::default(),
        false_discovery_rate: FALSE_DISCOVERY_RATE,
        confidence: stats::CONFIDENCE,
        min_repeats: MIN_REPEATS,
        min_sessions: MIN_SESSIONS,
        points: judged.points,
        only_in_a: judged.only_in_a,
        only_in_b: judged.only_in_b,
        notes,
        host,
        between_runs: between.as_ref().map(BetweenRuns::describe),
    })
}

/// What compare says of the hosts and of the variance between runs it added.
fn host_notes(host: Option<&HostShift>, between: Option<&BetweenRuns>) -> Vec<String> {
    let mut notes = Vec::new();
    match host {
        Some(h) => notes.push(format!(
            "the hosts' speed (the fixed reference workload, read before, between and after \
             every session of both runs): b's host took {}{}",
            h.text(),
            if h.verdict == HostVerdict::Same {
                "; the times are judged as measured".to_owned()
            } else {
                format!(
                    ". The times are judged with that shift divided out (b's times ÷ {:.2}, its \
                     uncertainty added): a uniform slowdown of the host is not called a \
                     regression; the own ratios, in which the host cancels, are judged as they are",
                    h.ratio
                )
            }
        )),
        None => notes.push(
            "the hosts' speed is unknown: a run recorded before 2026-12-06 has no readings of \
             the reference workload, so a change of machine or day cannot be told from a change \
             of the code"
                .to_owned(),
        ),
    }
    if let Some(b) = between {
        let d = b.describe();
        notes.push(format!(
            "the variance between runs of the replicate set `{}` ({} runs of this design made \
             at separate times, the runs compared here left out) is added to every change: between-run σ of the times median \
             {:.1}% (largest {:.1}%), of the own ratios median {:.1}% (largest {:.1}%); the \
             detectable figures below count it",
            d.set.display(),
            d.runs,
            100.0 * d.time_sd_median,
            100.0 * d.time_sd_max,
            100.0 * d.ratio_sd_median,
            100.0 * d.ratio_sd_max
        ));
    }
    notes
}

/// `cargo xtask compare`: compares, writes compare.md and compare.json in `out` (default: run
/// b's directory), prints the table.
pub fn write_comparison(
    run_a: &Path,
    run_b: &Path,
    threshold: Option<f64>,
    source: &CalibrationSource,
    replicates: Option<&Path>,
    gate: Gate,
    out: Option<PathBuf>,
) -> Result<Comparison> {
    let comparison = compare_with(run_a, run_b, threshold, source, replicates)?.gate(gate);
    let out = out.unwrap_or_else(|| run_b.to_owned());
    std::fs::create_dir_all(&out).with_context(|| format!("cannot create {}", out.display()))?;
    let text = markdown(&comparison);
    let md = out.join("compare.md");
    std::fs::write(&md, &text).with_context(|| format!("cannot write {}", md.display()))?;
    let json = out.join("compare.json");
    let bytes = serde_json::to_vec_pretty(&comparison).context("cannot serialize compare")?;
    std::fs::write(&json, bytes).with_context(|| format!("cannot write {}", json.display()))?;
    print!("{text}");
    println!("compare: {}", md.display());
    println!("json: {}", json.display());
    if comparison.regressions() > 0 {
        eprintln!(
            "{} point(s) got slower or no longer succeed (gate: {}): exit status {}",
            comparison.regressions(),
            comparison.gated_on().name(),
            Outcome::Regression.exit_code()
        );
    }
    if comparison.slower_in_time_only() > 0 {
        eprintln!(
            "{} point(s) slower in time while their own ratios held: the machine, not gated \
             (`--gate time` gates the times, for two runs on one quiet machine)",
            comparison.slower_in_time_only()
        );
    }
    Ok(comparison)
}

pub mod between_runs;
pub mod calibration;
pub mod judge;
pub mod key;
mod markdown;
mod notes;
mod own_ratio;
mod relative;
#[cfg(test)]
mod sessions_tests;
#[cfg(test)]
pub mod synthetic;
#[cfg(test)]
mod tests;
mod verdict;
