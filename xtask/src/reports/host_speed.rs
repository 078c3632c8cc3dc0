//! The host's speed as every report states it, from run.toml's readings of the fixed reference
//! workload ([`crate::records::host_speed`]): the run's own speed and its spread, and the run
//! against another (the committed example run in a summary; run a in `compare`; the committed
//! run in `reproduce`): `after ÷ before` of the reference's time with its interval over the
//! readings, and whether the hosts differ beyond the reference's own noise.

use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;

use crate::host_reference;
use crate::records::RunRecord;
use crate::records::host_speed::{HostReading, reference_values};
use crate::stats::sessions::{Change, change_between, over_sessions};
use crate::stats::{CONFIDENCE, Interval};

/// The committed run every summary states its host's speed against.
pub const REFERENCE_RUN: &str = "docs/example-run";

/// A run's host speed over its readings.
#[derive(Debug, Clone, PartialEq)]
pub struct HostSpeed {
    /// The readings of this version of the reference.
    pub readings: usize,
    /// The geometric mean of the readings' reference times, in ms (lower is faster).
    pub center_ms: f64,
    /// Its interval over the readings (t on the logs); `None` with one reading.
    pub interval: Option<Interval>,
    /// The standard deviation of the readings' logs: the reference's own noise in this run.
    pub spread: f64,
    pub min_ms: f64,
    pub max_ms: f64,
}

impl HostSpeed {
    /// The run's host speed; `None` for a run recorded without readings (before 2026-12-06).
    pub fn of(record: &RunRecord) -> Option<HostSpeed> {
        let values = values(&record.machine.speed);
        let over = over_sessions(&values, CONFIDENCE)?;
        Some(HostSpeed {
            readings: values.len(),
            center_ms: over.center,
            interval: over.interval,
            spread: over.log_sd,
            min_ms: values.iter().copied().fold(f64::INFINITY, f64::min),
            max_ms: values.iter().copied().fold(0.0, f64::max),
        })
    }
}

/// How two hosts compare.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum HostVerdict {
    /// The second host took longer over the reference: its interval lies wholly above 1.
    Slower,
    /// The second host took less time: its interval lies wholly below 1.
    Faster,
    /// The interval includes 1: the hosts do not differ beyond the reference's own noise.
    Same,
}

impl HostVerdict {
    pub fn text(self) -> &'static str {
        match self {
            HostVerdict::Slower => "slower, beyond the reference's own noise",
            HostVerdict::Faster => "faster, beyond the reference's own noise",
            HostVerdict::Same => "the same within the reference's own noise",
        }
    }
}

/// The second run's host against the first's: `after ÷ before` of the reference's time.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct HostShift {
    /// `after ÷ before`: above 1, the second host took longer (ran slower).
    pub ratio: f64,
    pub low: f64,
    pub high: f64,
    /// The standard error of the log ratio, and its degrees of freedom (Welch).
    pub log_se: f64,
    pub df: f64,
    pub readings: (usize, usize),
    pub verdict: HostVerdict,
}

impl HostShift {
    /// The shift of `after`'s host from `before`'s; `None` unless both have two readings or
    /// more of the same version of the reference.
    pub fn between(before: &RunRecord, after: &RunRecord) -> Option<HostShift> {
        Self::between_readings(&before.machine.speed, &after.machine.speed)
    }

    /// [`HostShift::between`] of two runs' readings.
    pub fn between_readings(before: &[HostReading], after: &[HostReading]) -> Option<HostShift> {
        let (a, b) = (values(before), values(after));
        let change: Change = change_between(&a, &b, CONFIDENCE)?;
        let verdict = match () {
            _ if change.interval.low > 1.0 => HostVerdict::Slower,
            _ if change.interval.high < 1.0 => HostVerdict::Faster,
            _ => HostVerdict::Same,
        };
        Some(HostShift {
            ratio: change.ratio,
            low: change.interval.low,
            high: change.interval.high,
            log_se: change.se,
            df: change.df,
            readings: (a.len(), b.len()),
            verdict,
        })
    }

    /// "1.08× as long (1.02–1.14, 95% over 17 and 17 readings): slower, beyond ..."
    pub fn text(&self) -> String {
        format!(
            "{:.2}× as long ({:.2}–{:.2}, 95% over {} and {} readings, Welch's t on the logs): {}",
            self.ratio,
            self.low,
            self.high,
            self.readings.0,
            self.readings.1,
            self.verdict.text()
        )
    }
}

/// The reference times of `readings` of today's version of the reference.
fn values(readings: &[HostReading]) -> Vec<f64> {
    reference_values(readings, host_reference::VERSION, host_reference::PROFILE)
}

/// The committed example run's record under `root`, if it holds readings.
pub fn reference_record(root: &Path) -> Option<RunRecord> {
    let record = RunRecord::read(&root.join(REFERENCE_RUN).join("run.toml")).ok()?;
    HostSpeed::of(&record).map(|_| record)
}

/// `## The host's speed` of a summary: the run's readings, and the run against `reference`
/// (the committed example run) unless it is that run; nothing for a run without readings.
pub fn section(record: &RunRecord, reference: Option<&RunRecord>) -> String {
    let Some(speed) = HostSpeed::of(record) else {
        return String::new();
    };
    let mut out = format!(
        "## The host's speed\n\n\
         The fixed reference workload (`host_reference` v{}: a CPU loop and a bare-SQLite probe \
         that depend on nothing this run measures), read {} times before, between and after the \
         sessions: {:.1} ms",
        host_reference::VERSION,
        speed.readings,
        speed.center_ms
    );
    if let Some(ci) = speed.interval {
        write!(
            out,
            " ({:.1}–{:.1}, 95% over the readings)",
            ci.low, ci.high
        )
        .unwrap();
    }
    write!(
        out,
        ", the readings from {:.1} to {:.1} ms (sd of their logs {:.1}%: the reference's own \
         noise in this run).",
        speed.min_ms,
        speed.max_ms,
        100.0 * speed.spread
    )
    .unwrap();
    let against = reference
        .filter(|r| r.run.id != record.run.id)
        .and_then(|r| Some((r, HostShift::between(r, record)?)));
    if let Some((reference, shift)) = against {
        write!(
            out,
            " Against the committed example run (`{REFERENCE_RUN}`, run `{}`): this host took {}.",
            reference.run.id,
            shift.text()
        )
        .unwrap();
        if shift.verdict != HostVerdict::Same {
            out.push_str(
                " Its milliseconds are not the example run's machine's: compare ratios between \
                 strategies, and `cargo xtask compare` judges the times with this shift taken \
                 out.",
            );
        }
    }
    out.push_str("\n\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::run_record::tests_support::record;

    fn with_readings(id: &str, ms: &[f64]) -> RunRecord {
        let mut r = record();
        r.run.id = id.into();
        r.machine.speed = crate::records::host_speed::readings(ms);
        r
    }

    #[test]
    fn a_run_without_readings_says_nothing() {
        assert_eq!(section(&record(), None), "");
    }

    #[test]
    fn a_slower_host_is_called_slower_and_a_quiet_one_the_same() {
        let a = with_readings("a", &[10.0, 10.2, 9.9, 10.1]);
        let slow = with_readings("b", &[15.0, 15.3, 14.8, 15.1]);
        let shift = HostShift::between(&a, &slow).unwrap();
        assert_eq!(shift.verdict, HostVerdict::Slower);
        assert!((shift.ratio - 1.5).abs() < 0.02, "{shift:?}");
        let same = with_readings("c", &[10.1, 9.9, 10.2, 10.0]);
        assert_eq!(
            HostShift::between(&a, &same).unwrap().verdict,
            HostVerdict::Same
        );
        let text = section(&slow, Some(&a));
        assert!(text.contains("read 4 times"), "{text}");
        assert!(text.contains("1.50× as long"), "{text}");
        assert!(
            text.contains("slower, beyond the reference's own noise"),
            "{text}"
        );
        // The reference itself is not compared with itself.
        assert!(!section(&a, Some(&a)).contains("Against"));
    }

    #[test]
    fn readings_of_another_version_are_not_compared() {
        let a = with_readings("a", &[10.0, 10.2]);
        let mut b = with_readings("b", &[15.0, 15.3]);
        for r in &mut b.machine.speed {
            r.version += 1;
        }
        assert!(HostShift::between(&a, &b).is_none());
    }
}
