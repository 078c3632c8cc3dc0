//! What run.toml says of how a run went, beyond how it ended: what it planned, each session's
//! time (the wall time of its measuring and the time inside the target's calls), and each time
//! it was resumed.

use serde::{Deserialize, Serialize};

use super::RunStatus;
use crate::base::TargetKind;

/// What a run planned to send, warm-ups and the baseline included; it scales the estimate of a
/// later dry run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Planned {
    /// Probes (sweeps) or rungs at most (ladders), over every target.
    pub probes: usize,
    /// Rows those probes or rungs insert.
    pub rows: usize,
}

/// One session on one target: started, measured, stopped (an attempt of a resumed run that
/// measured part of a session adds an entry of its own for it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionTime {
    pub target: TargetKind,
    /// Which of the plan's sessions, from 0 (0 in records written before runs had sessions).
    #[serde(default)]
    pub session: usize,
    /// Milliseconds from starting the target to its answering (the Worker's build comes before,
    /// apart).
    pub start_ms: f64,
    /// Milliseconds of the measuring: from the first call of the first probe or rung to the
    /// end of the last one.
    pub wall_ms: f64,
    /// Milliseconds inside the target's calls during the measuring: every setup, probe and
    /// verify (a rung's prepare, climb and finish), each timed around the call, warm-ups
    /// included.
    pub calls_ms: f64,
    /// Calls made.
    pub calls: usize,
    /// Milliseconds stopping the target and removing what it created.
    pub stop_ms: f64,
    /// Measured records of the session discarded as warm-up, measured by the warm-up rule
    /// (kept in results.csv, marked `warmup_discarded`); absent for a kind that keeps them all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_discarded: Option<usize>,
    /// The Worker that measured the session, as `[versions] worker` names it (which records
    /// the last session's): with `--alternate-workers` the sessions' Workers differ. Absent on
    /// a target without a Worker, and in records written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker: Option<String>,
}

impl SessionTime {
    /// The share of the measuring's wall time spent outside the target's calls: the harness's
    /// own work (reconciling each probe against its plan and expected checksum, CSV, progress).
    /// None without calls: a workload's requests overlap and are timed one by one, not as the
    /// session's calls, so its wall time has no harness share to split off.
    pub fn harness_share(&self) -> Option<f64> {
        (self.wall_ms > 0.0 && self.calls > 0)
            .then(|| (self.wall_ms - self.calls_ms) / self.wall_ms)
    }

    /// The sessions of `target` in `sessions`, added up (a run has one per session and
    /// attempt).
    pub fn total(sessions: &[SessionTime], target: TargetKind) -> Option<SessionTime> {
        sessions
            .iter()
            .filter(|s| s.target == target)
            .fold(None, |sum: Option<SessionTime>, s| {
                Some(match sum {
                    None => s.clone(),
                    Some(sum) => SessionTime {
                        target,
                        session: sum.session,
                        start_ms: sum.start_ms + s.start_ms,
                        wall_ms: sum.wall_ms + s.wall_ms,
                        calls_ms: sum.calls_ms + s.calls_ms,
                        calls: sum.calls + s.calls,
                        stop_ms: sum.stop_ms + s.stop_ms,
                        warmup_discarded: match (sum.warmup_discarded, s.warmup_discarded) {
                            (None, None) => None,
                            (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
                        },
                        worker: sum.worker,
                    },
                })
            })
    }
}

/// One `cargo xtask run --resume` of the run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resumption {
    /// When it was resumed (UTC, RFC 3339).
    pub at: String,
    /// How the run had ended before.
    pub was: RunStatus,
    /// Why it had ended so, when run.toml said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// `probes` (a sweep, every target counted) or `climbs` (ladders).
    pub unit: String,
    /// Already in results.csv (findings.csv for climbs), so not sent again.
    pub skipped: usize,
    /// Warm-ups of points whose probes were all recorded: not sent again either.
    #[serde(default)]
    pub warmups_skipped: usize,
    /// Probes (warm-ups included) or climbs sent by this resumption.
    pub remaining: usize,
}

/// Seconds since 1970 of an RFC 3339 UTC time as run.toml writes it (`2026-11-29T23:55:02Z`).
pub fn unix_secs(rfc3339: &str) -> Option<u64> {
    let (date, time) = rfc3339.strip_suffix('Z')?.split_once('T')?;
    let mut date = date.splitn(3, '-').map(str::parse::<i64>);
    let (year, month, day) = (date.next()?.ok()?, date.next()?.ok()?, date.next()?.ok()?);
    let mut time = time.splitn(3, ':').map(str::parse::<i64>);
    let (h, m, s) = (time.next()?.ok()?, time.next()?.ok()?, time.next()?.ok()?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || h > 23 || m > 59 || s > 60 {
        return None;
    }
    // Days from 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    u64::try_from(days * 86_400 + h * 3600 + m * 60 + s).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unix_secs_reads_back_what_run_toml_writes() {
        assert_eq!(unix_secs("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(unix_secs("2000-02-29T00:00:00Z"), Some(951_782_400));
        assert_eq!(unix_secs("2026-11-29T23:55:02Z"), Some(1_795_996_502));
        for secs in [1_795_996_502, 4_102_444_799, 68_169_600] {
            let (text, _) = crate::base::clock::utc(secs);
            assert_eq!(unix_secs(&text), Some(secs), "{text}");
        }
        for bad in [
            "2026-11-29 23:55:02",
            "2026-13-01T00:00:00Z",
            "yesterday",
            "",
        ] {
            assert_eq!(unix_secs(bad), None, "{bad}");
        }
    }

    #[test]
    fn sessions_add_up_per_target_and_give_the_harness_share() {
        let session = |target, wall_ms, calls_ms| SessionTime {
            target,
            session: 0,
            warmup_discarded: None,
            worker: None,
            start_ms: 1.0,
            wall_ms,
            calls_ms,
            calls: 3,
            stop_ms: 2.0,
        };
        let sessions = [
            session(TargetKind::Local, 1_000.0, 900.0),
            session(TargetKind::Sqlite, 400.0, 100.0),
            session(TargetKind::Local, 1_000.0, 700.0),
        ];
        let local = SessionTime::total(&sessions, TargetKind::Local).unwrap();
        assert_eq!(
            (local.wall_ms, local.calls_ms, local.calls),
            (2_000.0, 1_600.0, 6)
        );
        assert_eq!(local.harness_share(), Some(0.2));
        let sqlite = SessionTime::total(&sessions, TargetKind::Sqlite).unwrap();
        assert_eq!(sqlite.harness_share(), Some(0.75));
        assert_eq!(SessionTime::total(&sessions, TargetKind::Remote), None);
        assert_eq!(session(TargetKind::Local, 0.0, 0.0).harness_share(), None);
        let workload = SessionTime {
            calls: 0,
            ..session(TargetKind::Local, 294_000.0, 0.0)
        };
        assert_eq!(workload.harness_share(), None, "no calls: nothing to split");
    }
}
