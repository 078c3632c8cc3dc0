//! `cargo xtask compare <run-a> <run-b>`: two sweep runs of one experiment compared point by
//! point, b ÷ a of the median time per 1,000 rows with its interval and a verdict
//! (`compare.md`, `compare.json`, exit status 2 when something got slower).

use std::fmt::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use d1bench_core::Strategy;
use serde::Serialize;

use super::points::{Measure, Point, points};
use crate::base::TargetKind;
use crate::base::numbers::num;
use crate::records::run_record::Commit;
use crate::records::{RunDir, RunRecord, RunStatus, StudyKind, csv};
use crate::stats;
use crate::studies::sweep::Axis;
use crate::studies::sweep::row::ProbeRow;

/// Successful repeats each run needs at a point for a verdict: with fewer, each median's
/// interval covers too little (at most 75% at 3 repeats) to decide anything.
pub const MIN_REPEATS: usize = 3;

/// What a point's comparison says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// The interval's lower end is above 1 + threshold.
    Slower,
    /// The interval's upper end is below 1 − threshold.
    Faster,
    /// The interval reaches inside the threshold on at least one side.
    NoDetectableChange,
    /// No detectable change, and the interval reaches past both 1 − threshold and 1 + threshold.
    IntervalTooWide,
    /// One run has fewer than [`MIN_REPEATS`] successful repeats here.
    TooFewRepeats,
    /// Repeats succeeded in a and none in b: worse than slower.
    NoLongerSucceeds,
    /// No repeat succeeded in a (or its median is 0 ms): nothing to divide by.
    NoTimeInA,
}

impl Verdict {
    pub fn text(self) -> String {
        match self {
            Verdict::Slower => "slower".into(),
            Verdict::Faster => "faster".into(),
            Verdict::NoDetectableChange => "no detectable change".into(),
            Verdict::IntervalTooWide => "no detectable change (interval too wide)".into(),
            Verdict::TooFewRepeats => format!("too few repeats ({MIN_REPEATS} needed)"),
            Verdict::NoLongerSucceeds => "no longer succeeds".into(),
            Verdict::NoTimeInA => "no successful repeat in a".into(),
        }
    }

    /// Whether this fails a CI check: something got slower or stopped working.
    pub fn is_regression(self) -> bool {
        matches!(self, Verdict::Slower | Verdict::NoLongerSucceeds)
    }
}

/// Everything that must be equal for two runs' points to be compared.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PointKey {
    pub target: TargetKind,
    /// The series' label; empty when it has none.
    pub label: String,
    pub strategy: Strategy,
    pub columns: usize,
    pub row_bytes: usize,
    /// Rows each probe wrote.
    pub rows: usize,
    pub escape_share: f64,
    pub non_ascii_share: f64,
    pub indexes: usize,
    pub nul_share: f64,
}

impl PointKey {
    fn of(point: &Point) -> Self {
        let first = point.rows[0];
        PointKey {
            target: point.line.target,
            label: point.line.label.clone(),
            strategy: point.line.strategy,
            columns: first.columns,
            row_bytes: first.row_bytes,
            rows: first.rows,
            escape_share: first.escape_share,
            non_ascii_share: first.non_ascii_share,
            indexes: first.indexes,
            nul_share: first.nul_share,
        }
    }

    /// Every parameter, for the lists of points only one run has.
    fn describe(&self) -> String {
        let series = if self.label.is_empty() {
            String::new()
        } else {
            format!(" (series \"{}\")", self.label)
        };
        format!(
            "{} {}{series}: columns {}, row-bytes {}, rows {}, escape-share {}, nul-share {}, \
             non-ascii-share {}, indexes {}",
            self.target,
            self.strategy,
            self.columns,
            self.row_bytes,
            self.rows,
            self.escape_share,
            self.nul_share,
            self.non_ascii_share,
            self.indexes
        )
    }
}

/// One run's side of a compared point.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Side {
    /// Successful repeats: the ones timed.
    pub n: usize,
    /// Median ms per 1,000 rows (outside clock less the target's preparation) of those;
    /// absent when none succeeded.
    pub median_ms_per_1000_rows: Option<f64>,
    /// Repeats refused by a limit, and repeats that ended in an error.
    pub refused: usize,
    pub errors: usize,
}

/// A point both runs measured, compared.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ComparedPoint {
    #[serde(flatten)]
    pub key: PointKey,
    /// The point on the run's x axis.
    pub x: f64,
    pub a: Side,
    pub b: Side,
    /// Median of b ÷ median of a; absent when either has no time.
    pub ratio: Option<f64>,
    /// The interval of the ratio ([`stats::ratio_of_medians`]: the two medians' order-statistic
    /// intervals divided) and the probability it holds, at least.
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    pub ci_coverage: Option<f64>,
    pub verdict: Verdict,
}

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

/// Two runs compared: what `compare.json` holds and `compare.md` shows.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub experiment: String,
    pub x_axis: Axis,
    pub a: RunRef,
    pub b: RunRef,
    /// Changes within ± this percentage do not count.
    pub threshold_percent: f64,
    /// The coverage each ratio's interval aims at (each point reports what it reaches).
    pub confidence: f64,
    /// Successful repeats each run needs at a point for a verdict.
    pub min_repeats: usize,
    pub points: Vec<ComparedPoint>,
    /// Points one run measured and the other did not: listed, not compared.
    pub only_in_a: Vec<PointKey>,
    pub only_in_b: Vec<PointKey>,
    /// What a reader must know about the two runs before trusting the table.
    pub notes: Vec<String>,
}

impl Comparison {
    /// Points that got slower or stopped succeeding.
    pub fn regressions(&self) -> usize {
        self.points
            .iter()
            .filter(|p| p.verdict.is_regression())
            .count()
    }

    fn count(&self, verdict: Verdict) -> usize {
        self.points.iter().filter(|p| p.verdict == verdict).count()
    }
}

/// The ratio b ÷ a of the medians of `a` and `b` (ms per 1,000 rows), its interval and the
/// verdict at `threshold` (a fraction: 0.05 for 5%).
fn judge(a: &[f64], b: &[f64], threshold: f64) -> (Option<f64>, Option<stats::Interval>, Verdict) {
    let measured = stats::ratio_of_medians(b, a);
    let ratio = measured.map(|r| r.value);
    let interval = measured.and_then(|r| r.ci);
    let verdict = match interval.map(|i| (i.low, i.high)) {
        _ if a.is_empty() => Verdict::NoTimeInA,
        _ if b.is_empty() => Verdict::NoLongerSucceeds,
        _ if ratio.is_none() => Verdict::NoTimeInA,
        _ if a.len() < MIN_REPEATS || b.len() < MIN_REPEATS => Verdict::TooFewRepeats,
        // a's interval reaches 0: the ratio is unbounded above.
        None => Verdict::IntervalTooWide,
        Some((low, _)) if low > 1.0 + threshold => Verdict::Slower,
        Some((_, high)) if high < 1.0 - threshold => Verdict::Faster,
        Some((low, high)) if low < 1.0 - threshold && high > 1.0 + threshold => {
            Verdict::IntervalTooWide
        }
        Some(_) => Verdict::NoDetectableChange,
    };
    (ratio, interval, verdict)
}

fn side(point: &Point) -> Side {
    let values = point.values(Measure::MsPer1000Rows);
    Side {
        n: values.len(),
        median_ms_per_1000_rows: stats::median(&values),
        refused: point.refused(),
        errors: point.errors(),
    }
}

/// The points of `a` and `b` compared where both have them, and those only one has.
fn compare_rows(
    a: &[ProbeRow],
    b: &[ProbeRow],
    axis: Axis,
    threshold: f64,
) -> (Vec<ComparedPoint>, Vec<PointKey>, Vec<PointKey>) {
    let keyed = |rows| -> Vec<(PointKey, Point)> {
        points(rows, axis)
            .into_iter()
            .map(|p| (PointKey::of(&p), p))
            .collect()
    };
    let (a, mut b) = (keyed(a), keyed(b));
    let mut compared = Vec::new();
    let mut only_in_a = Vec::new();
    for (key, point_a) in a {
        let Some(i) = b.iter().position(|(k, _)| *k == key) else {
            only_in_a.push(key);
            continue;
        };
        let (_, point_b) = b.remove(i);
        let (ratio, interval, verdict) = judge(
            &point_a.values(Measure::MsPer1000Rows),
            &point_b.values(Measure::MsPer1000Rows),
            threshold,
        );
        compared.push(ComparedPoint {
            key,
            x: point_a.x,
            a: side(&point_a),
            b: side(&point_b),
            ratio,
            ci_low: interval.map(|i| i.low),
            ci_high: interval.map(|i| i.high),
            ci_coverage: interval.map(|i| i.coverage),
            verdict,
        });
    }
    let only_in_b = b.into_iter().map(|(key, _)| key).collect();
    (compared, only_in_a, only_in_b)
}

/// A sweep run read back for comparison.
struct Loaded {
    record: RunRecord,
    rows: Vec<ProbeRow>,
    axis: Axis,
}

/// Reads the run in `path` (`which` is `a` or `b`), refusing what cannot be compared.
fn load(path: &Path, which: &str) -> Result<Loaded> {
    let dir = RunDir::new(path.to_owned());
    let shown = path.display();
    if !path.is_dir() {
        bail!("run {which}: {shown} is not a directory");
    }
    if !dir.run_toml().is_file() {
        bail!("run {which}: {shown} is not a run directory: it holds no run.toml");
    }
    let record = RunRecord::read(&dir.run_toml())
        .with_context(|| format!("run {which}: {shown} is not a run directory d1bench can read"))?;
    if record.run.kind == StudyKind::Ladder {
        bail!(
            "run {which}: {shown} is a ladder run (`{}`): compare applies to sweeps, whose points \
             are timed; a ladder finds where a limit refuses (see its parity.csv)",
            record.run.experiment
        );
    }
    if let Some(y_axis) = record.run.y_axis {
        bail!(
            "run {which}: {shown} is a grid run (`{}`, x {} × y {}): compare pairs points along \
             one axis and would mix the grid's rows; compare its decision-map.csv instead",
            record.run.experiment,
            record.run.x_axis.map_or("?", |a| a.name()),
            y_axis.name()
        );
    }
    if record.run.kind == StudyKind::Workload {
        bail!(
            "run {which}: {shown} is a workload run (`{}`): compare applies to sweeps; a workload's \
             own summary compares its settings (see its summary.md)",
            record.run.experiment
        );
    }
    let axis = record
        .run
        .x_axis
        .with_context(|| format!("run {which}: {} names no x axis", dir.run_toml().display()))?;
    let results = dir.results_csv();
    if !results.is_file() {
        bail!(
            "run {which}: {shown} has no results.csv: the run ({}) ended before measuring",
            record.run.status
        );
    }
    let rows: Vec<ProbeRow> =
        csv::read(&results).with_context(|| format!("run {which}: cannot read its results"))?;
    // What a session measured before it settled is left out, as every report leaves it out.
    let rows: Vec<ProbeRow> = rows.into_iter().filter(|r| !r.warmup_discarded).collect();
    if rows.is_empty() {
        bail!(
            "run {which}: {} holds no results: the run ({}) measured nothing",
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

/// Compares the runs in `a` and `b`; changes within ± `threshold_percent` do not count.
pub fn compare(a: &Path, b: &Path, threshold_percent: f64) -> Result<Comparison> {
    if !(0.0..100.0).contains(&threshold_percent) {
        bail!("--threshold {threshold_percent}: a percentage from 0 up to (not including) 100");
    }
    let (run_a, run_b) = (load(a, "a")?, load(b, "b")?);
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
    let threshold = threshold_percent / 100.0;
    let (points, only_in_a, only_in_b) =
        compare_rows(&run_a.rows, &run_b.rows, run_a.axis, threshold);
    Ok(Comparison {
        experiment: ra.experiment.clone(),
        x_axis: run_a.axis,
        a: run_ref(a, &run_a.record),
        b: run_ref(b, &run_b.record),
        threshold_percent,
        confidence: stats::CONFIDENCE,
        min_repeats: MIN_REPEATS,
        points,
        only_in_a,
        only_in_b,
        notes: notes::notes(&run_a.record, &run_b.record),
    })
}

fn side_cell(side: &Side) -> String {
    match side.median_ms_per_1000_rows {
        Some(median) => format!("{} (n={})", num(median), side.n),
        None => format!("– ({} refused, {} errors)", side.refused, side.errors),
    }
}

fn run_line(which: &str, run: &RunRef) -> String {
    format!(
        "- {which}: `{}` (run {}, {}, profile {}, commit `{}`{}, {})\n",
        run.dir.display(),
        run.id,
        run.target,
        run.profile,
        run.commit.short(12),
        if run.dirty { " dirty" } else { "" },
        run.status
    )
}

/// `compare.md`: the runs, the method, the table, the tally and the points not compared.
pub fn markdown(c: &Comparison) -> String {
    let t = c.threshold_percent / 100.0;
    let mut out = format!("# compare: {}\n\n", c.experiment);
    out.push_str(&run_line("a", &c.a));
    out.push_str(&run_line("b", &c.b));
    writeln!(
        out,
        "\nb ÷ a of the median time per 1,000 rows on the outside clock less the target's \
         preparation, at each point both runs measured (same target, series, strategy and parameters). The interval aims at {:.0}%: \
         each run's median with its order-statistic interval at the square root of that, divided \
         (the runs are independent, so it holds with at least the product of the two coverages; \
         `compare.json` gives it per point). Threshold {}%: `slower` when the interval's lower end is \
         above {}, `faster` when its upper end is below {}, else `no detectable change` \
         (`interval too wide` when it reaches past both). A verdict needs {} successful repeats \
         in each run. The interval covers the spread of the repeats within each run, not a \
         change of machine or of load on it between the runs.\n",
        c.confidence * 100.0,
        c.threshold_percent,
        1.0 + t,
        1.0 - t,
        c.min_repeats
    )
    .unwrap();
    for note in &c.notes {
        writeln!(out, "**Note:** {note}.\n").unwrap();
    }
    let labelled = c.points.iter().any(|p| !p.key.label.is_empty());
    let mut header = vec!["target", "strategy"];
    if labelled {
        header.push("series");
    }
    header.extend([
        c.x_axis.name(),
        "a ms/1k rows",
        "b ms/1k rows",
        "b ÷ a (95% interval)",
        "verdict",
    ]);
    writeln!(out, "| {} |", header.join(" | ")).unwrap();
    writeln!(out, "|{}", " --- |".repeat(header.len())).unwrap();
    for p in &c.points {
        let mut cells = vec![p.key.target.to_string(), p.key.strategy.to_string()];
        if labelled {
            cells.push(p.key.label.clone());
        }
        // Below MIN_REPEATS the interval is too narrow to mean anything: only the ratio.
        let ratio = match (p.ratio, p.ci_low, p.ci_high) {
            (Some(r), Some(lo), Some(hi)) if p.verdict != Verdict::TooFewRepeats => {
                format!("{r:.2} ({lo:.2}–{hi:.2})")
            }
            (Some(r), _, _) => format!("{r:.2}"),
            _ => "–".into(),
        };
        cells.extend([
            c.x_axis.format(p.x),
            side_cell(&p.a),
            side_cell(&p.b),
            ratio,
            p.verdict.text(),
        ]);
        writeln!(out, "| {} |", cells.join(" | ")).unwrap();
    }
    let tally: Vec<String> = [
        (Verdict::Slower, "slower"),
        (Verdict::Faster, "faster"),
        (Verdict::NoDetectableChange, "no detectable change"),
        (
            Verdict::IntervalTooWide,
            "no detectable change (interval too wide)",
        ),
        (Verdict::TooFewRepeats, "too few repeats"),
        (Verdict::NoLongerSucceeds, "no longer succeed"),
        (Verdict::NoTimeInA, "without a time in a"),
    ]
    .into_iter()
    .filter(|&(v, _)| c.count(v) > 0)
    .map(|(v, words)| format!("{} {words}", c.count(v)))
    .collect();
    writeln!(
        out,
        "\n{} points compared: {}.",
        c.points.len(),
        if tally.is_empty() {
            "none".to_owned()
        } else {
            tally.join(", ")
        }
    )
    .unwrap();
    for (which, keys) in [("a", &c.only_in_a), ("b", &c.only_in_b)] {
        if !keys.is_empty() {
            writeln!(out, "\nOnly in run {which}, not compared:\n").unwrap();
            for key in keys {
                writeln!(out, "- {}", key.describe()).unwrap();
            }
        }
    }
    out
}

/// `cargo xtask compare`: compares, writes compare.md and compare.json in `out` (default: run
/// b's directory), prints the table.
pub fn write_comparison(
    run_a: &Path,
    run_b: &Path,
    threshold: f64,
    out: Option<PathBuf>,
) -> Result<Comparison> {
    let comparison = compare(run_a, run_b, threshold)?;
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
            "{} point(s) got slower or no longer succeed: exit status 2",
            comparison.regressions()
        );
    }
    Ok(comparison)
}

mod notes;
#[cfg(test)]
mod tests;
