//! `cargo xtask calibrate --between <run-a> <run-b>`: a calibration between two complete runs of
//! one experiment, profile, target and design, which sees what halves of one run cannot, the
//! variance between runs. Run a against run b is judged by compare's own [`judge`] (an A/A
//! comparison: every `slower` or `faster` is a false alarm), and each point's difference of log
//! means, less what its sessions explain, gives a between-runs variance component, pooled over
//! the points of each target; each point's noise floor is its own interval widened by it.
//! Writes `calibration-between-runs.csv` (which compare takes first) and `.md` into run b; given
//! a replicate set (`--between <set>`), every pair of its runs in one calibration, written into
//! its newest run.

use std::fmt::Write;
use std::path::Path;

use anyhow::{Context, Result, bail};

use crate::base::TargetKind;
use crate::records::csv;
use crate::records::replicates::ReplicateSet;
use crate::stats::sessions::{FALSE_DISCOVERY_RATE, change_between, t_quantile};
use crate::stats::{CONFIDENCE, median};
use crate::studies::sweep::Axis;
use crate::studies::sweep::report::compare::calibration::{
    BETWEEN_RUNS_FILE, Calibration, CalibrationRow,
};
use crate::studies::sweep::report::compare::key::{keyed, measured, session_values};
use crate::studies::sweep::report::compare::{
    Basis, CalibrationKind, Loaded, ThresholdRule, judge, load,
};
use crate::studies::sweep::row::ProbeRow;

/// The between-runs variance of one target's points, pooled.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Component {
    pub target: TargetKind,
    /// Points pooled: each gives one difference between the runs, so at most this many degrees
    /// of freedom, and fewer when the points move together.
    pub points: usize,
    /// The mean of the points' log differences (b less a): the shift common to them all, one
    /// draw of the machine's state however many points share it.
    pub common_shift: f64,
    /// σ between runs on the log scale (0.03 ≈ 3%): √(max(0, mean(d² − se²)) ÷ 2), where d is a
    /// point's difference of log means and se² what its sessions alone explain of it
    /// (Welch's), so 2σ² is the excess of the difference's variance over Welch's.
    pub log_sd: f64,
}

/// Two runs calibrated against each other.
#[derive(Debug, Clone, PartialEq)]
pub struct BetweenRuns {
    /// Sessions of each run (the fewer of the two at any point).
    pub sessions: usize,
    /// Points judged over sessions, and called changed: false alarms.
    pub judged: usize,
    pub false_alarms: usize,
    pub components: Vec<Component>,
    /// One row per point; `noise_floor` widened by its target's component.
    pub points: Vec<CalibrationRow>,
}

/// One point's difference of log means and its Welch standard error and degrees of freedom.
struct Difference {
    target: TargetKind,
    d: f64,
    se: f64,
    df: f64,
}

/// Calibrates run `b` against run `a` along `axis`: both need two sessions or more at a point.
pub fn calibrate_between(a: &[ProbeRow], b: &[ProbeRow], axis: Axis) -> Result<BetweenRuns> {
    calibrate_runs(&[a, b], axis)
}

/// Calibrates every pair of `runs` (run j against run i, i < j) along `axis`, in one: each pair is
/// an A/A comparison judged by compare's own code, and every pair's difference at a point, less
/// what its sessions explain, goes into its target's between-runs variance (each pair's
/// `d² − se²` has expectation 2σ², so pooling every pair stays unbiased; pairs that share a run
/// are not independent, so R runs give at most R − 1 independent draws of a shift common to all
/// points). A row per point: the splits (pairs) that judged it, their false alarms, the largest
/// move b ÷ a among them, and the median over the pairs of its widened noise floor.
pub fn calibrate_runs(runs: &[&[ProbeRow]], axis: Axis) -> Result<BetweenRuns> {
    let mut rows: Vec<CalibrationRow> = Vec::new();
    let mut differences: Vec<Vec<Difference>> = Vec::new();
    let mut sessions = usize::MAX;
    for (i, a) in runs.iter().enumerate() {
        for b in &runs[i + 1..] {
            let judged = judge(a, b, axis, &ThresholdRule::NoiseFloor);
            let (ma, mb) = (measured(a), measured(b));
            let (ka, kb) = (keyed(&ma, axis), keyed(&mb, axis));
            let values = |p| -> Vec<f64> { session_values(p).into_values().collect() };
            for p in &judged.points {
                let at = match rows.iter().position(|r| r.key() == p.key && r.x == p.x) {
                    Some(at) => at,
                    None => {
                        rows.push(CalibrationRow::new(&p.key, p.x, 0));
                        differences.push(Vec::new());
                        rows.len() - 1
                    }
                };
                let sides = ka
                    .iter()
                    .find(|(k, _)| *k == p.key)
                    .zip(kb.iter().find(|(k, _)| *k == p.key));
                let change = sides
                    .filter(|_| p.basis == Basis::BetweenSessions)
                    .and_then(|((_, pa), (_, pb))| {
                        change_between(&values(pa), &values(pb), CONFIDENCE)
                    });
                let Some(c) = change else { continue };
                sessions = sessions.min(p.a.sessions.min(p.b.sessions));
                let row = &mut rows[at];
                row.splits_judged += 1;
                row.false_alarms += usize::from(p.verdict.is_change());
                let moved = |r: Option<f64>| r.map_or(0.0, |r| r.ln().abs());
                if row.observed_ratio.is_none() || moved(p.ratio) > moved(row.observed_ratio) {
                    row.observed_ratio = p.ratio;
                }
                differences[at].push(Difference {
                    target: p.key.target,
                    d: c.ratio.ln(),
                    se: c.se,
                    df: c.df,
                });
            }
        }
    }
    if sessions == usize::MAX {
        bail!(
            "no point has two sessions or more in both runs: a calibration between runs needs \
             each run's own spread, as compare's verdict over sessions does"
        );
    }
    let mut targets: Vec<TargetKind> = differences.iter().flatten().map(|d| d.target).collect();
    targets.sort();
    targets.dedup();
    let components: Vec<Component> = targets
        .into_iter()
        .map(|target| {
            let of: Vec<&Difference> = differences
                .iter()
                .flatten()
                .filter(|d| d.target == target)
                .collect();
            let n = of.len() as f64;
            let excess = of.iter().map(|d| d.d * d.d - d.se * d.se).sum::<f64>() / n;
            Component {
                target,
                points: of.len(),
                common_shift: of.iter().map(|d| d.d).sum::<f64>() / n,
                log_sd: (excess.max(0.0) / 2.0).sqrt(),
            }
        })
        .collect();
    for (row, of) in rows.iter_mut().zip(&differences) {
        row.sessions_per_half = sessions;
        let Some(first) = of.first() else { continue };
        let sd = components
            .iter()
            .find(|c| c.target == first.target)
            .map_or(0.0, |c| c.log_sd);
        let floors: Vec<f64> = of
            .iter()
            .map(|d| (t_quantile(d.df, CONFIDENCE) * (d.se * d.se + 2.0 * sd * sd).sqrt()).exp())
            .collect();
        row.noise_floor = median(&floors);
        row.between_runs_log_sd = Some(sd);
    }
    Ok(BetweenRuns {
        sessions,
        judged: rows.iter().map(|r| r.splits_judged).sum(),
        false_alarms: rows.iter().map(|r| r.false_alarms).sum(),
        components,
        points: rows,
    })
}

/// A factor as a percentage, "+3.1%".
fn percent(factor: f64) -> String {
    format!("{:.1}%", (factor - 1.0) * 100.0)
}

/// `calibration-between-runs.md`; `runs` names the runs calibrated ("Run a: `x`; run b: `y`.").
pub fn markdown(runs: &str, experiment: &str, axis: Axis, c: &BetweenRuns) -> String {
    let mut out = format!("# calibrate between runs: {experiment}\n\n{runs}\n\n");
    writeln!(
        out,
        "An A/A test of `cargo xtask compare` between two complete runs of one design ({} \
         sessions each): run b judged against run a by compare's own code with its default \
         threshold (each point's own noise floor) and Benjamini–Hochberg at {:.0}%. Nothing \
         changed between them, so every point called `slower` or `faster` is a false alarm.\n",
        c.sessions,
        FALSE_DISCOVERY_RATE * 100.0
    )
    .unwrap();
    writeln!(
        out,
        "**False alarms: {} of {} points judged.** This is one A/A comparison: the points share \
         the two runs, so they are not {} independent tests, and a second pair may call more or \
         fewer.\n",
        c.false_alarms, c.judged, c.judged
    )
    .unwrap();
    let calibration = Calibration {
        file: BETWEEN_RUNS_FILE.into(),
        kind: CalibrationKind::BetweenRuns,
        rows: c.points.clone(),
    };
    if let Some((largest, most)) = calibration.moves() {
        writeln!(
            out,
            "**Between runs, a point moved by up to {} with nothing changed** (b ÷ a either way, \
             the largest of {} points; 95% of them within {}).\n",
            percent(largest),
            c.judged,
            percent(most)
        )
        .unwrap();
    }
    out.push_str(
        "The variance between runs, per target (on the logs; d is a point's difference of log \
         means, se² the part of its variance its sessions explain, Welch's): σ² = max(0, \
         mean(d² − se²)) ÷ 2, pooled over the target's points. With two runs each point gives \
         one difference, so a target of m points gives at most m degrees of freedom, and fewer \
         when its points move together: the common shift (their mean d) is one draw of the \
         runs' state, however many points share it, and a pair cannot say how large the next \
         pair's will be. σ can also come out 0 when the sessions explain the whole difference; \
         that does not show there is no variance between runs.\n\n",
    );
    out.push_str(
        "| target | points | common shift | σ between runs |\n| --- | --- | --- | --- |\n",
    );
    for k in &c.components {
        writeln!(
            out,
            "| {} | {} | {} | {:.1}% |",
            k.target,
            k.points,
            percent(k.common_shift.exp()),
            k.log_sd * 100.0
        )
        .unwrap();
    }
    writeln!(
        out,
        "\nEach point's noise floor is the half-width of its 95% interval with the variance \
         between runs added, exp(t · √(se² + 2σ²)): the smallest change a comparison of two \
         runs of {} sessions can tell from none. `cargo xtask compare` takes it as the point's \
         threshold for runs of this experiment, profile, target and sessions, before a \
         within-run calibration.\n",
        c.sessions
    )
    .unwrap();
    writeln!(
        out,
        "| target | strategy | series | {} | b ÷ a | false alarm | noise floor |",
        axis.name()
    )
    .unwrap();
    out.push_str("| --- | --- | --- | --- | --- | --- | --- |\n");
    for p in &c.points {
        let floor = p
            .noise_floor
            .map_or("–".to_owned(), |f| format!("±{}", percent(f)));
        let ratio = p
            .observed_ratio
            .map_or("–".to_owned(), |r| format!("{r:.3}"));
        let alarm = match (p.splits_judged, p.false_alarms) {
            (0, _) => "–",
            (_, 0) => "no",
            _ => "yes",
        };
        writeln!(
            out,
            "| {} | {} | {} | {} | {ratio} | {alarm} | {floor} |",
            p.target,
            p.strategy,
            p.label,
            axis.format(p.x)
        )
        .unwrap();
    }
    out
}

/// Refuses two runs a between-runs calibration cannot pair: another experiment, profile,
/// target or axis, or a run not complete.
fn comparable(a: &Loaded, b: &Loaded) -> Result<()> {
    let (ra, rb) = (&a.record.run, &b.record.run);
    for (which, r) in [("run a", ra), ("run b", rb)] {
        if r.status != crate::records::RunStatus::Complete {
            bail!(
                "{which} is `{}`: a calibration between runs takes complete runs",
                r.status
            );
        }
    }
    let same = (&ra.experiment, &ra.profile, ra.target, ra.sessions, a.axis)
        == (&rb.experiment, &rb.profile, rb.target, rb.sessions, b.axis);
    if !same {
        bail!(
            "the runs differ in design (experiment, profile, target, sessions or axis: `{}` {} \
             {} {:?} against `{}` {} {} {:?}): a calibration between runs takes two runs of one",
            ra.experiment,
            ra.profile,
            ra.target,
            ra.sessions,
            rb.experiment,
            rb.profile,
            rb.target,
            rb.sessions
        );
    }
    Ok(())
}

/// Calibrates the run in `b` against the run in `a`; writes the csv and markdown into `b`.
pub fn write_between(a: &Path, b: &Path) -> Result<BetweenRuns> {
    let (run_a, run_b) = (load(a, "run a")?, load(b, "run b")?);
    comparable(&run_a, &run_b)?;
    let c = calibrate_between(&run_a.rows, &run_b.rows, run_a.axis)
        .with_context(|| format!("cannot calibrate {} against {}", b.display(), a.display()))?;
    let runs = format!("Run a: `{}`; run b: `{}`.", a.display(), b.display());
    write_files(b, &runs, &run_b, &c)?;
    Ok(c)
}

/// Calibrates between every pair of the runs of the replicate set in `set` (a folder of run
/// directories of one design, `records::replicates`): writes the csv and markdown into its
/// newest run, where compare finds them beside it.
pub fn write_between_set(set: &Path) -> Result<BetweenRuns> {
    let read = ReplicateSet::read(set)?;
    if read.runs.len() < 2 {
        bail!(
            "{} holds one run: a calibration between runs takes two or more",
            set.display()
        );
    }
    let loaded: Vec<Loaded> = read
        .dirs()
        .into_iter()
        .map(|dir| load(dir, "a run of the set"))
        .collect::<Result<_>>()?;
    for other in &loaded[1..] {
        comparable(&loaded[0], other)?;
    }
    let rows: Vec<&[ProbeRow]> = loaded.iter().map(|l| l.rows.as_slice()).collect();
    let c = calibrate_runs(&rows, loaded[0].axis)
        .with_context(|| format!("cannot calibrate the runs of {}", set.display()))?;
    let dirs: Vec<String> = read
        .dirs()
        .iter()
        .map(|d| format!("`{}`", d.display()))
        .collect();
    let pairs = dirs.len() * (dirs.len() - 1) / 2;
    let runs = format!(
        "Replicate set `{}`: runs {}; every pair of them ({pairs} pairs), the later run against \
         the earlier, in one calibration.",
        set.display(),
        dirs.join(", ")
    );
    let newest = read.dirs().last().expect("two runs or more").to_path_buf();
    write_files(&newest, &runs, loaded.last().expect("two runs or more"), &c)?;
    Ok(c)
}

/// Writes the calibration's csv and markdown into `dir` and prints the markdown.
fn write_files(dir: &Path, runs: &str, newest: &Loaded, c: &BetweenRuns) -> Result<()> {
    let csv_path = dir.join(BETWEEN_RUNS_FILE);
    csv::write(&csv_path, &c.points)?;
    let text = markdown(runs, &newest.record.run.experiment, newest.axis, c);
    let md = csv_path.with_extension("md");
    std::fs::write(&md, &text).with_context(|| format!("cannot write {}", md.display()))?;
    print!("{text}");
    println!("calibration: {}", csv_path.display());
    println!("calibration: {}", md.display());
    Ok(())
}

#[cfg(test)]
mod tests;
