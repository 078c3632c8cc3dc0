//! A target ÷ its baseline judged at all points at once, and the A/A test of that judgement.
//!
//! Each point's sessions give one ratio each (the target's median inside clock ÷ the baseline's,
//! from the sessions that ran beside each other, as [`Point::independent_ratio`] takes them).
//! Judged at once, a point's ratio differs from 1 when Student's t on the logs of its sessions'
//! ratios survives Benjamini–Hochberg at the run's false discovery rate over every point judged:
//! an interval that leaves 1 on its own is one verdict of many, and by chance alone about 5% of
//! them do. The A/A test splits each point's sessions into two halves balanced in time (of each
//! four in order, the first and last against the middle two, as the instrument's A/A does) and
//! judges the halves' ratios against each other by Welch's t and the same correction: nothing
//! differs between them by construction, so a working comparison calls about none.

use std::collections::BTreeMap;

use super::points::{Point, points};
use crate::base::TargetKind;
use crate::base::numbers::num;
use crate::stats::CONFIDENCE;
use crate::stats::halves::{self, HalvesTest};
use crate::stats::sessions::{self, FALSE_DISCOVERY_RATE};
use crate::studies::sweep::Axis;
use crate::studies::sweep::row::ProbeRow;

/// The target ÷ baseline ratios of a run, judged at once, and their A/A test.
#[derive(Debug, Clone, PartialEq)]
pub struct Judged {
    pub target: TargetKind,
    pub base: TargetKind,
    /// Points with a ratio from two sessions or more.
    pub points: usize,
    /// Points whose interval alone leaves 1, above and below (no correction).
    pub alone: (usize, usize),
    /// Points that differ from 1 after Benjamini–Hochberg, above and below.
    pub corrected: (usize, usize),
    /// The A/A test of that judgement: the same between halves of each point's sessions.
    pub a_a: HalvesTest,
}

/// `target` ÷ the run's baseline, judged at once; `None` when the run has no baseline or
/// `target` is it.
pub fn judge(rows: &[ProbeRow], axis: Axis, target: TargetKind) -> Option<Judged> {
    let base = TargetKind::baseline_among(rows.iter().map(|r| r.target))?;
    if target == base {
        return None;
    }
    let all = points(rows, axis);
    let theirs: BTreeMap<_, &Point> = all
        .iter()
        .filter(|p| p.line.target == base)
        .map(|p| ((p.line.label.clone(), p.line.strategy, p.x.to_bits()), p))
        .collect();
    let ratios: Vec<Vec<f64>> = all
        .iter()
        .filter(|p| p.line.target == target)
        .filter_map(|p| {
            let other = theirs.get(&(p.line.label.clone(), p.line.strategy, p.x.to_bits()))?;
            let ratios = p.session_ratios(other);
            (ratios.len() >= 2).then_some(ratios)
        })
        .collect();
    let overs: Vec<_> = ratios
        .iter()
        .map(|r| sessions::over_sessions(r, CONFIDENCE))
        .collect();
    let alone =
        overs
            .iter()
            .flatten()
            .filter_map(|o| o.interval)
            .fold((0, 0), |(above, below), i| {
                (
                    above + usize::from(i.low > 1.0),
                    below + usize::from(i.high < 1.0),
                )
            });
    let p_values: Vec<Option<f64>> = ratios.iter().map(|r| sessions::p_value_of_one(r)).collect();
    let called = sessions::benjamini_hochberg(&p_values, FALSE_DISCOVERY_RATE);
    let corrected = overs
        .iter()
        .zip(&called)
        .filter(|(_, called)| **called)
        .filter_map(|(o, _)| o.as_ref())
        .fold((0, 0), |(above, below), o| {
            (
                above + usize::from(o.center > 1.0),
                below + usize::from(o.center < 1.0),
            )
        });
    let a_a = halves::halves_test(&ratios);
    Some(Judged {
        target,
        base,
        points: ratios.len(),
        alone,
        corrected,
        a_a,
    })
}

impl Judged {
    /// The paragraph under the ratio table of summary.md.
    pub fn paragraph(&self) -> String {
        let (target, base) = (self.target, self.base);
        if self.points == 0 {
            return format!(
                "Judged at once: no point has a ratio from two sessions, so `{target}` ÷ `{base}` \
                 is judged nowhere (one session's repeats are not independent evidence of what \
                 another session would measure).\n"
            );
        }
        let mut text = format!(
            "Judged at once: of the {} points with two sessions or more, `{target}` ÷ `{base}` \
             differs from 1 at {} (above 1 at {}, below at {}) after Benjamini–Hochberg at a 5% \
             false discovery rate over them (Student's t on the logs of each point's session \
             ratios); the intervals above leave 1 on their own at {} (above) and {} (below), of \
             which about {} would by chance alone.",
            self.points,
            self.corrected.0 + self.corrected.1,
            self.corrected.0,
            self.corrected.1,
            self.alone.0,
            self.alone.1,
            (FALSE_DISCOVERY_RATE * self.points as f64).round(),
        );
        if self.a_a.judged > 0 {
            text.push_str(&format!(
                " A/A test: each point's sessions in two halves balanced in time (of each four, \
                 the first and last against the middle two), the halves' ratios judged against \
                 each other the same way (Welch's t, Benjamini–Hochberg): called different at {} \
                 of {} points, where nothing differs by construction. With half the sessions a \
                 side it could only have caught a difference between halves of about {} at one \
                 point (80% power, among the points; median over them), so what it checks is \
                 calibration: judged alone at 5%, the halves differ at {} of those points, about {} \
                 by chance if the intervals are right.",
                self.a_a.called,
                self.a_a.judged,
                self.a_a.detectable.map_or("–".to_owned(), num),
                self.a_a.alone,
                self.a_a.alone_by_chance(),
            ));
        } else {
            text.push_str(" No point has the four sessions an A/A test of halves needs.");
        }
        text.push('\n');
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::studies::sweep::row::tests_support::row;
    use d1bench_core::Strategy;

    /// Rows of `sessions` sessions at columns 1..=`points` for one strategy, on `local` and on
    /// bare SQLite, local slower by `factor` at column 1 only, each session's values moved by
    /// `noise` (seeded) on both targets alike and apart.
    fn run(sessions: usize, points: usize, factor: f64, noise: f64, seed: u64) -> Vec<ProbeRow> {
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut rows = Vec::new();
        for session in 0..sessions {
            for columns in 1..=points {
                for target in [TargetKind::Local, TargetKind::Sqlite] {
                    let slower = if target == TargetKind::Local && columns == 1 {
                        factor
                    } else {
                        1.0
                    };
                    let jitter = 1.0 + noise * (rng.f64() - 0.5);
                    rows.push(ProbeRow {
                        probe_id: rows.len() as u64 + 1,
                        target,
                        session,
                        columns,
                        strategy: Strategy::Bound,
                        rows: 1000,
                        inside_ms: 10.0 * slower * jitter,
                        ..row()
                    });
                }
            }
        }
        rows
    }

    #[test]
    fn a_real_difference_survives_the_correction_and_the_a_a_calls_none() {
        let judged = judge(&run(8, 20, 2.0, 0.2, 1), Axis::Columns, TargetKind::Local).unwrap();
        assert_eq!(judged.base, TargetKind::Sqlite);
        assert_eq!(judged.points, 20);
        assert_eq!(judged.corrected, (1, 0), "{judged:?}");
        assert_eq!(
            (judged.a_a.called, judged.a_a.judged),
            (0, 20),
            "{judged:?}"
        );
        assert!(
            judged
                .paragraph()
                .contains("differs from 1 at 1 (above 1 at 1, below at 0)")
        );
        assert!(
            judged
                .paragraph()
                .contains("called different at 0 of 20 points")
        );
    }

    #[test]
    fn noise_alone_is_rarely_called_after_the_correction() {
        // 200 runs of 20 points with nothing different: how often any point is called.
        let runs = 200;
        let (mut any, mut alone, mut a_a_any, mut a_a_alone) = (0, 0, 0, 0);
        for seed in 0..runs {
            let judged = judge(
                &run(8, 20, 1.0, 0.3, seed),
                Axis::Columns,
                TargetKind::Local,
            )
            .unwrap();
            any += usize::from(judged.corrected != (0, 0));
            alone += judged.alone.0 + judged.alone.1;
            a_a_any += usize::from(judged.a_a.called > 0);
            a_a_alone += judged.a_a.alone;
        }
        // The A/A test's halves, likewise: rarely any call after the correction, about 5% of
        // points judged alone.
        assert!(
            a_a_any <= 20,
            "the A/A called a point in {a_a_any} of {runs} runs"
        );
        assert!(
            (120..=300).contains(&a_a_alone),
            "{a_a_alone} of 4000 halves differed alone"
        );
        // Benjamini–Hochberg under no difference holds the chance of any call to about 5%;
        // the intervals alone leave 1 at about 5% of the 4,000 points.
        assert!(any <= 20, "{any} of {runs} runs called a point");
        assert!(
            (120..=300).contains(&alone),
            "{alone} intervals of 4000 left 1 alone"
        );
    }

    #[test]
    fn a_run_without_a_baseline_or_sessions_for_halves_says_so() {
        let rows: Vec<ProbeRow> = run(2, 3, 1.0, 0.1, 2)
            .into_iter()
            .filter(|r| r.target == TargetKind::Local)
            .collect();
        assert_eq!(judge(&rows, Axis::Columns, TargetKind::Local), None);
        let judged = judge(&run(2, 3, 1.0, 0.1, 2), Axis::Columns, TargetKind::Local).unwrap();
        assert_eq!((judged.a_a.called, judged.a_a.judged), (0, 0));
        assert!(
            judged
                .paragraph()
                .contains("No point has the four sessions")
        );
        assert_eq!(
            judge(&run(2, 3, 1.0, 0.1, 2), Axis::Columns, TargetKind::Sqlite),
            None
        );
    }
}
