//! Verdicts that survive a change of machine: beside b ÷ a of the times, the change of each
//! run's own ratios at a point, in which the runner's speed cancels — this strategy ÷ bound
//! (paired repeat by repeat within each session, as they ran side by side) and this target ÷
//! its bare-SQLite baseline (session by session, as their sessions alternate) — and which of the
//! two changed.

use serde::Serialize;

use super::between_runs::Adjust;
use super::key::PointKey;
use super::own_ratio::Kind;
use super::verdict::{Detectable, ThresholdRule, Verdict, verdict_at};
use crate::stats::CONFIDENCE;
use crate::stats::sessions::{
    Change, FALSE_DISCOVERY_RATE, benjamini_hochberg, change_between, over_sessions,
};
use crate::studies::sweep::report::points::Point;

/// The change of one of a point's own ratios between the runs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RelativeChange {
    /// Each run's ratio: the geometric mean of its sessions' ratios.
    pub a: f64,
    pub b: f64,
    /// b's ratio ÷ a's, with its interval (Welch's t on the sessions' logs) and p-value.
    pub change: f64,
    pub ci_low: f64,
    pub ci_high: f64,
    pub p_value: f64,
    /// Whether Benjamini–Hochberg calls it changed, over this kind of ratio at every point.
    pub discovery: bool,
    /// The smallest change of this ratio the pair detects with 80% power.
    pub detectable: Detectable,
    /// A discovery past the threshold: `--threshold` when given, else its own noise floor.
    pub verdict: Verdict,
}

/// Which of the two kinds of verdict changed at a point.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reading {
    /// No own ratio could be judged here (a run with one session, bound itself on bare SQLite).
    #[default]
    NotJudged,
    /// Neither the time nor any own ratio changed.
    Unchanged,
    /// The time changed and every own ratio judged stayed: the runner's speed (the machine, its
    /// load), or a change that moved the reference alike.
    Machine,
    /// The time changed and so did an own ratio: a change in what is measured.
    Measured,
    /// Only an own ratio changed: a shift in what is measured that the time's noise hides.
    RatioOnly,
}

impl Reading {
    pub fn text(self) -> &'static str {
        match self {
            Reading::NotJudged => "–",
            Reading::Unchanged => "neither changed",
            Reading::Machine => {
                "time changed, ratios did not: the runner's speed, or a change that moved the reference alike"
            }
            Reading::Measured => "time and ratio changed: what is measured",
            Reading::RatioOnly => "only a ratio changed",
        }
    }
}

/// A point's own ratios compared between the runs, and what they say together with the time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Relative {
    /// This strategy ÷ bound; absent for bound itself or where a run has too few sessions.
    pub vs_bound: Option<RelativeChange>,
    /// This target ÷ bare SQLite; absent on bare SQLite or where a run has no baseline.
    pub vs_baseline: Option<RelativeChange>,
    pub reading: Reading,
}

/// The own ratios of the points `keys` (both runs measured them; `a` and `b`: each run's
/// points) judged, each kind held to the false discovery rate by Benjamini–Hochberg on its own,
/// and, from `times` (the verdicts of their times), which of time and ratio changed.
pub fn judge_relative(
    keys: &[&PointKey],
    times: &[Verdict],
    a: &[(PointKey, Point)],
    b: &[(PointKey, Point)],
    rule: &ThresholdRule,
    adjust: &Adjust,
) -> Vec<Relative> {
    let mut relative = vec![Relative::default(); keys.len()];
    for kind in Kind::ALL {
        let changes: Vec<Option<(f64, f64, Change)>> = keys
            .iter()
            .map(|key| {
                let (sa, sb) = (kind.series(a, key)?, kind.series(b, key)?);
                let center = |s: &[f64]| over_sessions(s, CONFIDENCE).map(|o| o.center);
                let change = change_between(&sa, &sb, CONFIDENCE)?;
                // The ratios cancel the hosts' speed; the variance between runs they keep.
                Some((center(&sa)?, center(&sb)?, adjust.ratio(kind, key, &change)))
            })
            .collect();
        let p_values: Vec<Option<f64>> = changes
            .iter()
            .map(|c| c.map(|(_, _, c)| c.p_value))
            .collect();
        let discoveries = benjamini_hochberg(&p_values, FALSE_DISCOVERY_RATE);
        let tested = p_values.iter().flatten().count();
        for ((r, change), discovery) in relative.iter_mut().zip(changes).zip(discoveries) {
            let Some((ra, rb, c)) = change else { continue };
            let threshold = rule.for_ratio(c.noise_floor);
            // A calibration between runs measures the times' variance between runs, not the
            // ratios': the ratios' detectable is their own, with the variance between runs a
            // replicate set measured already in `c` where one was found ([`Adjust`]).
            let detectable = Detectable::of(&c, tested, None);
            let judged = RelativeChange {
                a: ra,
                b: rb,
                change: c.ratio,
                ci_low: c.interval.low,
                ci_high: c.interval.high,
                p_value: c.p_value,
                discovery,
                detectable,
                verdict: rule.or_cannot_tell(
                    verdict_at(
                        c.ratio,
                        (c.interval.low, c.interval.high),
                        discovery,
                        threshold,
                    ),
                    detectable,
                ),
            };
            match kind {
                Kind::VsBound => r.vs_bound = Some(judged),
                Kind::VsBaseline => r.vs_baseline = Some(judged),
            }
        }
    }
    for (r, time) in relative.iter_mut().zip(times) {
        r.reading = reading(*time, r);
    }
    relative
}

/// Which of the time (its verdict `time`) and the own ratios `r` changed.
fn reading(time: Verdict, r: &Relative) -> Reading {
    let ratios: Vec<Verdict> = [r.vs_bound, r.vs_baseline]
        .into_iter()
        .flatten()
        .map(|r| r.verdict)
        .collect();
    if ratios.is_empty() {
        return Reading::NotJudged;
    }
    let ratio_changed = ratios.iter().any(|v| v.is_change());
    match (time.is_change(), ratio_changed) {
        (false, false) => Reading::Unchanged,
        (true, false) => Reading::Machine,
        (true, true) => Reading::Measured,
        (false, true) => Reading::RatioOnly,
    }
}
