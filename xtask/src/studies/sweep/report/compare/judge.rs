//! compare's one definition of a verdict, which `calibrate` calls too: every point two sets of
//! rows share, judged over sessions (each session's median, Welch's t between the runs, the
//! verdicts held to a false discovery rate by Benjamini–Hochberg, and called only past a
//! threshold), or within one session by the order-statistic rule where a run has only one; and
//! beside it the change of each run's own ratios ([`super::relative`]).

use serde::Serialize;

use super::between_runs::Adjust;
use super::key::{PointKey, keyed, measured, session_values};
use super::relative::{self, Relative};
use super::verdict::{
    Detectable, MIN_REPEATS, MIN_SESSIONS, Threshold, ThresholdRule, Verdict, verdict_at,
};
use crate::stats::sessions::{Change, FALSE_DISCOVERY_RATE, benjamini_hochberg, change_between};
use crate::stats::{self, CONFIDENCE, Interval, median, ratio_of_medians};
use crate::studies::sweep::Axis;
use crate::studies::sweep::report::points::{Measure, Point};
use crate::studies::sweep::row::ProbeRow;

/// How a point's verdict was reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Basis {
    /// Each run's sessions: Welch's t on the logs of the sessions' medians, Benjamini–Hochberg
    /// over the points. Includes the variance between sessions, so between runs.
    BetweenSessions,
    /// A run has one session here: b ÷ a of the repeats' medians with their order-statistic
    /// intervals divided. Cannot include the variance between runs.
    WithinOneSession,
    /// No time on one side: nothing was divided.
    NoRatio,
}

/// The point's values of ms per 1,000 rows that count, over all its sessions.
fn values(point: &Point) -> Vec<f64> {
    point.values(Measure::MsPer1000Rows)
}

/// One run's side of a compared point.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Side {
    /// Successful repeats: the ones timed.
    pub n: usize,
    /// Sessions with at least one successful repeat.
    pub sessions: usize,
    /// Ms per 1,000 rows (outside clock less the target's preparation): over two sessions or
    /// more the geometric mean of the sessions' medians, in one session the median of its
    /// repeats; absent when none succeeded.
    pub ms_per_1000_rows: Option<f64>,
    /// Repeats refused by a limit, and repeats that ended in an error.
    pub refused: usize,
    pub errors: usize,
}

impl Side {
    fn of(point: &Point) -> Side {
        let sessions: Vec<f64> = session_values(point).into_values().collect();
        let values = values(point);
        let ms_per_1000_rows = if sessions.len() >= MIN_SESSIONS {
            stats::sessions::over_sessions(&sessions, CONFIDENCE).map(|o| o.center)
        } else {
            median(&values)
        };
        Side {
            n: values.len(),
            sessions: sessions.len(),
            ms_per_1000_rows,
            refused: point.refused(),
            errors: point.errors(),
        }
    }
}

/// A point both runs measured, judged.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ComparedPoint {
    #[serde(flatten)]
    pub key: PointKey,
    /// The point on the run's x axis.
    pub x: f64,
    pub a: Side,
    pub b: Side,
    pub basis: Basis,
    /// b ÷ a of the two sides' times; absent when either has none.
    pub ratio: Option<f64>,
    /// Its interval and the probability it holds (at least, within one session).
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    pub ci_coverage: Option<f64>,
    /// Over sessions: the two-sided p-value of "no change" (Welch's t on the logs).
    pub p_value: Option<f64>,
    /// Over sessions: whether Benjamini–Hochberg calls the point changed at the false discovery
    /// rate.
    pub discovery: bool,
    /// Over sessions: the smallest change this pair of runs can tell from none at the point
    /// (1.10 = 10%).
    pub noise_floor: Option<f64>,
    /// Over sessions: the smallest change this pair of runs detects here with 80% power.
    pub detectable: Option<Detectable>,
    pub threshold: Option<Threshold>,
    pub verdict: Verdict,
    /// The change of each run's own ratios at the point, where the runner's speed cancels.
    pub relative: Relative,
}

impl ComparedPoint {
    /// "slower" or "faster" for a changed time, else "unchanged".
    pub fn verdict_word(&self) -> &'static str {
        match self.verdict {
            Verdict::Slower => "slower",
            Verdict::Faster => "faster",
            _ => "unchanged",
        }
    }

    fn interval(&self) -> Option<(f64, f64)> {
        Some((self.ci_low?, self.ci_high?))
    }
}

/// Two sets of rows judged: the points both hold, and those only one does.
#[derive(Debug, Clone, PartialEq)]
pub struct Judged {
    pub points: Vec<ComparedPoint>,
    pub only_in_a: Vec<PointKey>,
    pub only_in_b: Vec<PointKey>,
}

/// Within one session, today's rule: the order-statistic intervals of the two medians divided;
/// a change counts when the whole interval lies beyond the threshold.
fn within_one_session(a: &[f64], b: &[f64], threshold: f64) -> (Option<Interval>, Verdict) {
    let Some(measured) = ratio_of_medians(b, a) else {
        return (None, Verdict::NoTimeInA);
    };
    if a.len() < MIN_REPEATS || b.len() < MIN_REPEATS {
        return (measured.ci, Verdict::TooFewRepeats);
    }
    let Some(ci) = measured.ci else {
        // a's interval reaches 0: the ratio is unbounded above.
        return (None, Verdict::IntervalTooWide);
    };
    let outside = ci.low > threshold || ci.high < 1.0 / threshold;
    (
        Some(ci),
        verdict_at(measured.value, (ci.low, ci.high), outside, threshold),
    )
}

/// A point of both runs before its verdict: what the verdict needs.
struct Pending {
    point: ComparedPoint,
    change: Option<Change>,
}

/// One point of a and of b, measured: the ratio and its interval, not yet the verdict over
/// sessions (which needs every point's p-value).
fn measure(key: PointKey, a: &Point, b: &Point, rule: &ThresholdRule, adjust: &Adjust) -> Pending {
    let (side_a, side_b) = (Side::of(a), Side::of(b));
    let sessions = |p: &Point| -> Vec<f64> { session_values(p).into_values().collect() };
    let change = (side_a.sessions >= MIN_SESSIONS && side_b.sessions >= MIN_SESSIONS)
        .then(|| change_between(&sessions(a), &sessions(b), CONFIDENCE))
        .flatten()
        .map(|c| adjust.time(&key, &c));
    let basis = match () {
        _ if side_a.n == 0 || side_b.n == 0 => Basis::NoRatio,
        _ if change.is_some() => Basis::BetweenSessions,
        _ => Basis::WithinOneSession,
    };
    let threshold = rule.at(&key, change.map(|c| c.noise_floor));
    let mut point = ComparedPoint {
        key,
        x: a.x,
        a: side_a,
        b: side_b,
        basis,
        ratio: None,
        ci_low: None,
        ci_high: None,
        ci_coverage: None,
        p_value: change.map(|c| c.p_value),
        discovery: false,
        noise_floor: change.map(|c| c.noise_floor),
        detectable: None,
        threshold,
        verdict: Verdict::NoDetectableChange,
        relative: Relative::default(),
    };
    let mut set_interval = |ratio: Option<f64>, ci: Option<Interval>| {
        point.ratio = ratio;
        point.ci_low = ci.map(|i| i.low);
        point.ci_high = ci.map(|i| i.high);
        point.ci_coverage = ci.map(|i| i.coverage);
    };
    match (basis, change) {
        (Basis::BetweenSessions, Some(c)) => set_interval(Some(c.ratio), Some(c.interval)),
        _ if point.a.n == 0 => point.verdict = Verdict::NoTimeInA,
        _ if point.b.n == 0 => point.verdict = Verdict::NoLongerSucceeds,
        _ => {
            // Where the hosts differ, b's times are put on a's host (÷ the shift) and the
            // threshold widened by the shift's own noise (its interval's upper factor).
            let (host, host_noise) = adjust
                .host_applied()
                .map_or((1.0, 1.0), |h| (h.ratio, h.high / h.ratio));
            let b_values: Vec<f64> = values(b).iter().map(|v| v / host).collect();
            let factor = threshold.map_or(1.0, |t| t.factor) * host_noise;
            let (ci, verdict) = within_one_session(&values(a), &b_values, factor);
            let ratio = ratio_of_medians(&b_values, &values(a)).map(|r| r.value);
            set_interval(ratio, ci);
            point.verdict = verdict;
            if verdict == Verdict::NoTimeInA {
                point.basis = Basis::NoRatio;
            }
        }
    }
    Pending { point, change }
}

/// Judges every point `a` and `b` share along `axis`: the one definition of compare's verdicts,
/// which `calibrate` applies to halves of one run.
///
/// Points with two sessions or more on both sides are judged together: Benjamini–Hochberg over
/// their p-values at [`FALSE_DISCOVERY_RATE`], and a discovery is `slower` or `faster` only past
/// its threshold. Points with one session on a side are judged alone by the order-statistic
/// rule ([`Basis::WithinOneSession`]).
pub fn judge(a: &[ProbeRow], b: &[ProbeRow], axis: Axis, rule: &ThresholdRule) -> Judged {
    judge_adjusted(a, b, axis, rule, &Adjust::default())
}

/// [`judge`] with each change adjusted ([`Adjust`]): the hosts' shift divided out of the times
/// where the hosts differ, and a replicate set's variance between runs added to every change.
pub fn judge_adjusted(
    a: &[ProbeRow],
    b: &[ProbeRow],
    axis: Axis,
    rule: &ThresholdRule,
    adjust: &Adjust,
) -> Judged {
    let (a, b) = (measured(a), measured(b));
    let (a, b) = (keyed(&a, axis), keyed(&b, axis));
    let mut in_a = vec![false; b.len()];
    let mut pending = Vec::new();
    let mut only_in_a = Vec::new();
    for (key, point_a) in &a {
        // A key is unique within a run: its x follows from its parameters.
        match b.iter().position(|(k, _)| k == key) {
            Some(j) => {
                in_a[j] = true;
                pending.push(measure(key.clone(), point_a, &b[j].1, rule, adjust));
            }
            None => only_in_a.push(key.clone()),
        }
    }
    let p_values: Vec<Option<f64>> = pending
        .iter()
        .map(|p| p.change.map(|c| c.p_value))
        .collect();
    let discoveries = benjamini_hochberg(&p_values, FALSE_DISCOVERY_RATE);
    let tested = p_values.iter().flatten().count();
    let mut points: Vec<ComparedPoint> = pending
        .into_iter()
        .zip(discoveries)
        .map(|(Pending { mut point, change }, discovery)| {
            if let (Some(c), Some(t)) = (change, point.threshold) {
                let between = rule.between_runs_log_sd(&point.key);
                let detectable = Detectable::of(&c, tested, between);
                point.discovery = discovery;
                point.detectable = Some(detectable);
                point.verdict = rule.or_cannot_tell(
                    verdict_at(
                        c.ratio,
                        (c.interval.low, c.interval.high),
                        discovery,
                        t.factor,
                    ),
                    detectable,
                );
            }
            point
        })
        .collect();
    let keys: Vec<&PointKey> = points.iter().map(|p| &p.key).collect();
    let times: Vec<Verdict> = points.iter().map(|p| p.verdict).collect();
    let relative = relative::judge_relative(&keys, &times, &a, &b, rule, adjust);
    for (point, relative) in points.iter_mut().zip(relative) {
        point.relative = relative;
    }
    let only_in_b = b
        .into_iter()
        .zip(in_a)
        .filter(|(_, in_a)| !in_a)
        .map(|((key, _), _)| key)
        .collect();
    Judged {
        points,
        only_in_a,
        only_in_b,
    }
}

/// The verdicts of `points` over sessions, tallied.
pub fn tally(points: &[ComparedPoint]) -> Vec<(Verdict, usize)> {
    Verdict::ALL
        .into_iter()
        .map(|v| (v, points.iter().filter(|p| p.verdict == v).count()))
        .filter(|(_, n)| *n > 0)
        .collect()
}

/// Kept for the markdown: a point's interval when it means something.
pub fn shown_interval(p: &ComparedPoint) -> Option<(f64, f64)> {
    (p.verdict != Verdict::TooFewRepeats)
        .then(|| p.interval())
        .flatten()
}
