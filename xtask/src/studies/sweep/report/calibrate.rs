//! `cargo xtask calibrate`'s analysis: an A/A test of compare on the machine at hand. One run's
//! sessions are split into two interleaved halves (even and odd sessions, and other splits
//! balanced the same way: one session of each consecutive pair in each half), every point is
//! judged with compare's own [`judge`], and what it calls changed is a false alarm, since both
//! halves measured the same thing. Writes `calibration.csv` (each point's noise floor, which
//! compare takes as its default threshold) and `calibration.md`.

use std::collections::BTreeSet;
use std::fmt::Write;
use std::path::Path;

use anyhow::{Context, Result, bail};
use serde::Serialize;

use super::compare::calibration::{self, CalibrationRow};
use super::compare::{Basis, ComparedPoint, MIN_SESSIONS, ThresholdRule, judge, load};
use crate::records::csv;
use crate::stats::median;
use crate::stats::sessions::FALSE_DISCOVERY_RATE;
use crate::studies::sweep::Axis;
use crate::studies::sweep::row::ProbeRow;

/// The most splits one run is judged in: each is one A/A comparison.
pub const MOST_SPLITS: usize = 8;

/// A division of a run's sessions into two halves, by session number.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Split {
    pub a: Vec<usize>,
    pub b: Vec<usize>,
}

/// Up to `most` balanced splits of `sessions` (sorted, distinct; an odd last one left out): the
/// sessions taken in consecutive pairs, one of each pair in each half, so a drift over the run
/// reaches both halves alike. The first split is even against odd sessions; the others swap the
/// later pairs by the bits of a counter (the first pair never swaps: a split and its mirror are
/// one comparison).
pub fn splits(sessions: &[usize], most: usize) -> Vec<Split> {
    let pairs: Vec<(usize, usize)> = sessions.chunks_exact(2).map(|p| (p[0], p[1])).collect();
    let possible = 1usize
        .checked_shl(pairs.len().saturating_sub(1) as u32)
        .unwrap_or(usize::MAX);
    (0..possible.min(most))
        .map(|mask| {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            for (i, &(first, second)) in pairs.iter().enumerate() {
                let swap = i > 0 && mask & (1 << (i - 1)) != 0;
                let (to_a, to_b) = if swap {
                    (second, first)
                } else {
                    (first, second)
                };
                a.push(to_a);
                b.push(to_b);
            }
            a.sort_unstable();
            b.sort_unstable();
            Split { a, b }
        })
        .collect()
}

/// What one split's comparison called.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SplitResult {
    pub split: Split,
    /// Points judged over sessions, and of those called `slower` or `faster`.
    pub judged: usize,
    pub false_alarms: usize,
    /// Own ratios judged, and of those called changed.
    pub ratios_judged: usize,
    pub ratio_false_alarms: usize,
}

/// A run calibrated.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Calibrated {
    /// Sessions in the run, and on each side of a split.
    pub sessions: usize,
    pub sessions_per_half: usize,
    pub splits: Vec<SplitResult>,
    /// One row per point of the run.
    pub points: Vec<CalibrationRow>,
}

impl Calibrated {
    /// Points judged over all splits, and false alarms among them.
    pub fn judged(&self) -> usize {
        self.splits.iter().map(|s| s.judged).sum()
    }

    pub fn false_alarms(&self) -> usize {
        self.splits.iter().map(|s| s.false_alarms).sum()
    }

    /// False alarms ÷ points judged, over every split; `None` when nothing was judged.
    pub fn false_alarm_rate(&self) -> Option<f64> {
        (self.judged() > 0).then(|| self.false_alarms() as f64 / self.judged() as f64)
    }

    /// Splits with at least one false alarm.
    pub fn splits_with_an_alarm(&self) -> usize {
        self.splits.iter().filter(|s| s.false_alarms > 0).count()
    }
}

/// The rows of `rows` whose session is in `sessions`.
fn half(rows: &[ProbeRow], sessions: &[usize]) -> Vec<ProbeRow> {
    rows.iter()
        .filter(|r| sessions.contains(&r.session))
        .cloned()
        .collect()
}

/// Own ratios of `points` judged, and of those called changed.
fn ratio_calls(points: &[ComparedPoint]) -> (usize, usize) {
    let ratios = points
        .iter()
        .flat_map(|p| [p.relative.vs_bound, p.relative.vs_baseline])
        .flatten();
    ratios.fold((0, 0), |(judged, called), r| {
        (judged + 1, called + usize::from(r.verdict.is_change()))
    })
}

/// Calibrates the run of `rows` along `axis`: at least two sessions a half, so four sessions.
pub fn calibrate(rows: &[ProbeRow], axis: Axis) -> Result<Calibrated> {
    let sessions: Vec<usize> = rows
        .iter()
        .map(|r| r.session)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    if sessions.len() < 2 * MIN_SESSIONS {
        bail!(
            "the run has {} session(s): calibrate needs {} or more (two halves of {} at least, \
             as compare needs {MIN_SESSIONS} sessions a run for a verdict over sessions)",
            sessions.len(),
            2 * MIN_SESSIONS,
            MIN_SESSIONS
        );
    }
    let splits = splits(&sessions, MOST_SPLITS);
    let per_half = sessions.len() / 2;
    let mut points: Vec<CalibrationRow> = Vec::new();
    let mut floors: Vec<Vec<f64>> = Vec::new();
    let mut results = Vec::new();
    for split in splits {
        let judged = judge(
            &half(rows, &split.a),
            &half(rows, &split.b),
            axis,
            &ThresholdRule::NoiseFloor,
        );
        let mut result = SplitResult {
            split,
            judged: 0,
            false_alarms: 0,
            ratios_judged: 0,
            ratio_false_alarms: 0,
        };
        (result.ratios_judged, result.ratio_false_alarms) = ratio_calls(&judged.points);
        for p in &judged.points {
            let i = match points.iter().position(|r| r.key() == p.key) {
                Some(i) => i,
                None => {
                    points.push(CalibrationRow::new(&p.key, p.x, per_half));
                    floors.push(Vec::new());
                    points.len() - 1
                }
            };
            if p.basis != Basis::BetweenSessions {
                continue;
            }
            let alarm = p.verdict.is_change();
            points[i].splits_judged += 1;
            points[i].false_alarms += usize::from(alarm);
            result.judged += 1;
            result.false_alarms += usize::from(alarm);
            floors[i].extend(p.noise_floor);
        }
        results.push(result);
    }
    for (row, floors) in points.iter_mut().zip(&floors) {
        row.noise_floor = median(floors);
    }
    Ok(Calibrated {
        sessions: sessions.len(),
        sessions_per_half: per_half,
        splits: results,
        points,
    })
}

/// `calibration.md`: the run, the method, the false-alarm rate and each point's noise floor.
pub fn markdown(run_dir: &Path, experiment: &str, axis: Axis, c: &Calibrated) -> String {
    let mut out = format!(
        "# calibrate: {experiment}\n\nRun: `{}`.\n\n",
        run_dir.display()
    );
    let left_out = if c.sessions % 2 == 1 {
        " (the last left out, for an even count)"
    } else {
        ""
    };
    writeln!(
        out,
        "An A/A test of `cargo xtask compare` on this run: its {} sessions{left_out} split into \
         two interleaved halves of {} (one session of each consecutive pair in each half, so a \
         drift over the run reaches both alike), {} such splits, each judged by compare's own \
         code with its default threshold (each point's own noise floor) and its \
         Benjamini–Hochberg correction at a false discovery rate of {:.0}%. Both halves measured \
         the same thing, so every point called `slower` or `faster` is a false alarm.\n",
        c.sessions,
        c.sessions_per_half,
        c.splits.len(),
        FALSE_DISCOVERY_RATE * 100.0
    )
    .unwrap();
    match c.false_alarm_rate() {
        Some(rate) => writeln!(
            out,
            "**False-alarm rate: {} of {} points judged ({:.1}%)**, over {} splits; {} of them \
             with any false alarm. The splits share this run's sessions, so they are not {} \
             independent A/A tests: together they are one run's evidence, and they see none of \
             the variance between runs (machine, day, build). The first split alone, even \
             against odd sessions, called {} of {} points.\n",
            c.false_alarms(),
            c.judged(),
            rate * 100.0,
            c.splits.len(),
            c.splits_with_an_alarm(),
            c.splits.len(),
            c.splits.first().map_or(0, |s| s.false_alarms),
            c.splits.first().map_or(0, |s| s.judged),
        )
        .unwrap(),
        None => out.push_str("**No point was judged over sessions**: no false-alarm rate.\n\n"),
    }
    let (rj, rf) = c.splits.iter().fold((0, 0), |(j, f), s| {
        (j + s.ratios_judged, f + s.ratio_false_alarms)
    });
    if rj > 0 {
        writeln!(
            out,
            "Own ratios (strategy ÷ bound, target ÷ bare SQLite): {rf} of {rj} called changed.\n"
        )
        .unwrap();
    }
    writeln!(
        out,
        "Each point's noise floor is the smallest change a comparison of {} sessions against {} \
         can tell from none at 95% (the half-width of its interval, the median over the \
         splits); `cargo xtask compare` takes it as the point's threshold for runs of this \
         experiment, profile and target.\n",
        c.sessions_per_half, c.sessions_per_half
    )
    .unwrap();
    writeln!(
        out,
        "| target | strategy | series | {} | splits judged | false alarms | noise floor |",
        axis.name()
    )
    .unwrap();
    out.push_str("| --- | --- | --- | --- | --- | --- | --- |\n");
    for p in &c.points {
        let floor = p
            .noise_floor
            .map_or("–".to_owned(), |f| format!("±{:.1}%", (f - 1.0) * 100.0));
        writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {floor} |",
            p.target,
            p.strategy,
            p.label,
            axis.format(p.x),
            p.splits_judged,
            p.false_alarms
        )
        .unwrap();
    }
    out
}

/// Calibrates the run in `run_dir` and writes calibration.csv and calibration.md into it.
pub fn write_calibration(run_dir: &Path, which: &str) -> Result<Calibrated> {
    let run = load(run_dir, which)?;
    let calibrated = calibrate(&run.rows, run.axis)
        .with_context(|| format!("cannot calibrate {}", run_dir.display()))?;
    let csv_path = run_dir.join(calibration::FILE);
    csv::write(&csv_path, &calibrated.points)?;
    let text = markdown(run_dir, &run.record.run.experiment, run.axis, &calibrated);
    let md = run_dir.join("calibration.md");
    std::fs::write(&md, &text).with_context(|| format!("cannot write {}", md.display()))?;
    print!("{text}");
    println!("calibration: {}", csv_path.display());
    println!("calibration: {}", md.display());
    Ok(calibrated)
}

pub mod between;
#[cfg(test)]
mod tests;
