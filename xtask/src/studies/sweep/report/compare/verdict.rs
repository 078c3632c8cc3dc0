//! What a comparison can say and how it decides: the verdicts, their thresholds (given,
//! calibrated, or a point's own noise floor) and the rule that turns a change into a verdict.
//! Shared by the times ([`super::judge`]) and the own ratios ([`super::relative`]).

use serde::{Deserialize, Serialize};

use super::calibration::Calibration;
use super::key::PointKey;

/// Successful repeats each run needs at a point for a verdict within one session: with fewer,
/// each median's interval covers too little (at most 75% at 3 repeats) to decide anything.
pub const MIN_REPEATS: usize = 3;

/// Sessions with a value each run needs at a point for a verdict over sessions: Welch's t needs
/// a spread on each side.
pub const MIN_SESSIONS: usize = 2;

/// The threshold of a point judged within one session when neither `--threshold` nor a
/// calibration gives one (compare's fixed default before sessions).
pub const WITHIN_SESSION_DEFAULT_PERCENT: f64 = 5.0;

/// The change a comparison is asked to see when `--threshold` does not say: 20%, the size a
/// regression check of a write strategy must catch (issue 28). Where a point could not have
/// detected it (its [`Detectable::among`] is larger), its verdict is [`Verdict::CannotTell`].
pub const DEFAULT_QUESTION_PERCENT: f64 = 20.0;

/// The smallest change a point's comparison detects with 80% power ([`stats::power::POWER`]),
/// as a factor (1.20 = 20%), from its own variance and, with a calibration between runs, the
/// variance between runs it measured: two runs differ by that much with nothing changed, so a
/// change must stand out of it as well as of the sessions' spread.
///
/// [`stats::power::POWER`]: crate::stats::power::POWER
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Detectable {
    /// Judged alone, at the false discovery rate as a plain level (5%).
    pub alone: f64,
    /// Judged among the m points compared, when it alone changed: Benjamini–Hochberg then
    /// calls it only at 5% ÷ m.
    pub among: f64,
}

impl Detectable {
    /// From the change's standard error and degrees of freedom, among `m` points tested, with
    /// σ between runs `between` (on the log scale) where a calibration between runs gives one:
    /// the difference of two runs' log means then has variance se² + 2σ².
    pub fn of(
        change: &crate::stats::sessions::Change,
        m: usize,
        between: Option<f64>,
    ) -> Detectable {
        use crate::stats::power::{POWER, detectable};
        use crate::stats::sessions::FALSE_DISCOVERY_RATE;
        let sd = between.unwrap_or(0.0);
        let se = (change.se * change.se + 2.0 * sd * sd).sqrt();
        let at = |alpha: f64| detectable(se, change.df, alpha, POWER);
        Detectable {
            alone: at(FALSE_DISCOVERY_RATE),
            among: at(FALSE_DISCOVERY_RATE / m.max(1) as f64),
        }
    }
}

/// What a point's comparison says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// A discovery (over sessions) or an interval wholly above (within one session), and b ÷ a
    /// above the threshold.
    Slower,
    /// Likewise below 1 ÷ threshold.
    Faster,
    /// A discovery whose change stays within the threshold: real, and too small to count.
    WithinThreshold,
    /// Not a discovery (or the interval reaches inside the threshold).
    NoDetectableChange,
    /// Not a discovery, and the interval reaches past both 1 ÷ threshold and the threshold.
    IntervalTooWide,
    /// Not a discovery, and the point could not have detected the change asked about (the
    /// threshold given, else [`DEFAULT_QUESTION_PERCENT`]) with 80% power among the points
    /// compared: its silence says nothing.
    CannotTell,
    /// One session, and a run has fewer than [`MIN_REPEATS`] successful repeats here.
    TooFewRepeats,
    /// Repeats succeeded in a and none in b: worse than slower.
    NoLongerSucceeds,
    /// No repeat succeeded in a (or its time is 0 ms): nothing to divide by.
    NoTimeInA,
}

impl Verdict {
    pub fn text(self) -> String {
        match self {
            Verdict::Slower => "slower".into(),
            Verdict::Faster => "faster".into(),
            Verdict::WithinThreshold => "changed, within the threshold".into(),
            Verdict::NoDetectableChange => "no detectable change".into(),
            Verdict::IntervalTooWide => "no detectable change (interval too wide)".into(),
            Verdict::CannotTell => "cannot tell at this precision".into(),
            Verdict::TooFewRepeats => format!("too few repeats ({MIN_REPEATS} needed)"),
            Verdict::NoLongerSucceeds => "no longer succeeds".into(),
            Verdict::NoTimeInA => "no successful repeat in a".into(),
        }
    }

    /// Whether this fails a CI check: something got slower or stopped working.
    pub fn is_regression(self) -> bool {
        matches!(self, Verdict::Slower | Verdict::NoLongerSucceeds)
    }

    /// Whether this calls the point changed: what an A/A comparison counts as a false alarm.
    pub fn is_change(self) -> bool {
        matches!(self, Verdict::Slower | Verdict::Faster)
    }

    /// Every verdict, in the order the tallies list them.
    pub const ALL: [Verdict; 9] = [
        Verdict::Slower,
        Verdict::Faster,
        Verdict::WithinThreshold,
        Verdict::NoDetectableChange,
        Verdict::IntervalTooWide,
        Verdict::CannotTell,
        Verdict::TooFewRepeats,
        Verdict::NoLongerSucceeds,
        Verdict::NoTimeInA,
    ];
}

/// Where a point's threshold came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ThresholdSource {
    /// `--threshold PERCENT`.
    Given,
    /// The point's noise floor in a calibration of this experiment, profile and target.
    Calibrated,
    /// The point's own noise floor in this comparison (the half-width of its interval).
    OwnNoiseFloor,
    /// Within one session, without a calibration: [`WITHIN_SESSION_DEFAULT_PERCENT`].
    Default,
}

impl ThresholdSource {
    pub fn text(self) -> &'static str {
        match self {
            ThresholdSource::Given => "given",
            ThresholdSource::Calibrated => "calibrated",
            ThresholdSource::OwnNoiseFloor => "own noise floor",
            ThresholdSource::Default => "default",
        }
    }
}

/// A point's threshold: a change counts when b ÷ a is above `factor` or below `1 / factor`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Threshold {
    /// 1.05 for 5%.
    pub factor: f64,
    pub source: ThresholdSource,
}

/// What sets each point's threshold.
#[derive(Debug, Clone, Copy)]
pub enum ThresholdRule<'a> {
    /// One percentage for every point (`--threshold`).
    Given(f64),
    /// Each point's calibrated noise floor; a point the calibration lacks takes its own.
    Calibrated(&'a Calibration),
    /// Each point's own noise floor.
    NoiseFloor,
}

impl ThresholdRule<'_> {
    /// The threshold of the point `key`, whose own noise floor (over sessions) is `own`.
    pub fn at(&self, key: &PointKey, own: Option<f64>) -> Option<Threshold> {
        let given = |percent: f64| Threshold {
            factor: 1.0 + percent / 100.0,
            source: ThresholdSource::Given,
        };
        let calibrated = |c: &Calibration| {
            c.noise_floor(key).map(|factor| Threshold {
                factor,
                source: ThresholdSource::Calibrated,
            })
        };
        let fallback = match own {
            Some(factor) => Threshold {
                factor,
                source: ThresholdSource::OwnNoiseFloor,
            },
            None => Threshold {
                factor: 1.0 + WITHIN_SESSION_DEFAULT_PERCENT / 100.0,
                source: ThresholdSource::Default,
            },
        };
        Some(match self {
            ThresholdRule::Given(percent) => given(*percent),
            ThresholdRule::Calibrated(c) => calibrated(c).unwrap_or(fallback),
            ThresholdRule::NoiseFloor => fallback,
        })
    }
}

impl ThresholdRule<'_> {
    /// σ between runs at `key` (log scale), where the rule's calibration is one between runs
    /// that states it.
    pub fn between_runs_log_sd(&self, key: &PointKey) -> Option<f64> {
        match self {
            ThresholdRule::Calibrated(c) => c.between_runs_log_sd(key),
            _ => None,
        }
    }

    /// The change asked about, as a factor: the given threshold, else
    /// [`DEFAULT_QUESTION_PERCENT`].
    pub fn question(&self) -> f64 {
        match self {
            ThresholdRule::Given(percent) => 1.0 + percent / 100.0,
            _ => 1.0 + DEFAULT_QUESTION_PERCENT / 100.0,
        }
    }

    /// A verdict over sessions `verdict` made honest about power: a point that saw no change
    /// and could not have seen `question` ([`Detectable::among`] larger) cannot tell.
    pub fn or_cannot_tell(&self, verdict: Verdict, detectable: Detectable) -> Verdict {
        let silent = matches!(
            verdict,
            Verdict::NoDetectableChange | Verdict::IntervalTooWide
        );
        if silent && detectable.among > self.question() {
            Verdict::CannotTell
        } else {
            verdict
        }
    }

    /// The threshold factor of an own ratio's change, whose noise floor is `own`: the given
    /// percentage, else that noise floor (calibrations hold the times' floors, not the ratios').
    pub fn for_ratio(&self, own: f64) -> f64 {
        match self {
            ThresholdRule::Given(percent) => 1.0 + percent / 100.0,
            _ => own,
        }
    }
}

/// The verdict of a change `ratio` with interval `(low, high)`, called changed or not (a
/// discovery, or an interval wholly outside), at `threshold`.
pub fn verdict_at(ratio: f64, interval: (f64, f64), called: bool, threshold: f64) -> Verdict {
    let (low, high) = interval;
    match () {
        _ if called && ratio > threshold => Verdict::Slower,
        _ if called && ratio < 1.0 / threshold => Verdict::Faster,
        _ if called => Verdict::WithinThreshold,
        _ if low < 1.0 / threshold && high > threshold => Verdict::IntervalTooWide,
        _ => Verdict::NoDetectableChange,
    }
}
