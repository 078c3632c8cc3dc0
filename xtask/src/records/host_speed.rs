//! The host's speed as run.toml keeps it: each reading of the fixed reference workload
//! (`host_reference`: a CPU loop and a bare-SQLite probe, depending on nothing d1bench measures),
//! taken before a run's first session, between sessions and after its last, under `[machine]`.

use serde::{Deserialize, Serialize};

/// When in the run a reading was taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReadingAt {
    /// Before the attempt's first session (a resumed run takes one again).
    Before,
    /// After a session, with another to follow.
    Between,
    /// After the attempt's last session.
    After,
}

/// One reading of the reference workload: each half timed a few times, interleaved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostReading {
    pub at: ReadingAt,
    /// When the reading began (UTC, RFC 3339), so readings of a resumed run stay in order.
    pub utc: String,
    /// Seconds since the run began (its `started`) when the reading began.
    pub run_s: f64,
    /// `host_reference::VERSION`: readings of two versions are never compared.
    pub version: u32,
    /// The build profile the reference ran in (`host_reference::PROFILE`): readings of two
    /// profiles are never compared.
    pub profile: String,
    /// Each timing of the CPU loop, in milliseconds.
    pub cpu_ms: Vec<f64>,
    /// Each timing of the SQLite probe, in milliseconds.
    pub sqlite_ms: Vec<f64>,
}

impl HostReading {
    /// The reading as one number, in milliseconds: the geometric mean of the two halves' medians
    /// (each half weighs the same whatever its length). Lower is faster.
    pub fn reference_ms(&self) -> f64 {
        let median = |v: &[f64]| {
            let mut v = v.to_vec();
            v.sort_by(f64::total_cmp);
            let n = v.len();
            if n == 0 {
                f64::NAN
            } else if n % 2 == 1 {
                v[n / 2]
            } else {
                (v[n / 2 - 1] + v[n / 2]) / 2.0
            }
        };
        (median(&self.cpu_ms) * median(&self.sqlite_ms)).sqrt()
    }
}

/// The reference values (ms) of `readings` taken with `version` in `profile`, in order;
/// readings of another version or profile are left out.
pub fn reference_values(readings: &[HostReading], version: u32, profile: &str) -> Vec<f64> {
    readings
        .iter()
        .filter(|r| r.version == version && r.profile == profile)
        .map(HostReading::reference_ms)
        .filter(|v| v.is_finite() && *v > 0.0)
        .collect()
}

/// Readings of today's reference for tests, one per `(seconds into the run, ms)`, each half
/// timed once at that many ms.
#[cfg(test)]
pub fn readings_at(points: &[(f64, f64)]) -> Vec<HostReading> {
    points
        .iter()
        .map(|&(run_s, ms)| HostReading {
            at: ReadingAt::Between,
            utc: "2026-12-06T00:00:00Z".into(),
            run_s,
            version: crate::host_reference::VERSION,
            profile: crate::host_reference::PROFILE.into(),
            cpu_ms: vec![ms],
            sqlite_ms: vec![ms],
        })
        .collect()
}

/// [`readings_at`] all at the run's start.
#[cfg(test)]
pub fn readings(ms: &[f64]) -> Vec<HostReading> {
    readings_at(&ms.iter().map(|&v| (0.0, v)).collect::<Vec<_>>())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(cpu: &[f64], sqlite: &[f64], version: u32) -> HostReading {
        HostReading {
            at: ReadingAt::Between,
            utc: "2026-12-06T00:00:00Z".into(),
            run_s: 1.0,
            version,
            profile: "debug".into(),
            cpu_ms: cpu.to_vec(),
            sqlite_ms: sqlite.to_vec(),
        }
    }

    #[test]
    fn a_reading_is_the_geometric_mean_of_its_halves_medians() {
        let r = reading(&[10.0, 40.0, 20.0], &[80.0, 1000.0, 70.0, 90.0], 1);
        assert!((r.reference_ms() - (20.0f64 * 85.0).sqrt()).abs() < 1e-9);
    }

    #[test]
    fn readings_of_another_version_are_left_out() {
        let rs = [reading(&[4.0], &[9.0], 1), reading(&[1.0], &[1.0], 2)];
        assert_eq!(reference_values(&rs, 1, "debug"), vec![6.0]);
        assert_eq!(reference_values(&rs, 3, "debug"), Vec::<f64>::new());
        assert_eq!(reference_values(&rs, 1, "release"), Vec::<f64>::new());
    }

    #[test]
    fn a_reading_round_trips_through_toml() {
        let r = reading(&[1.5, 2.5], &[3.0], 1);
        let text = toml::to_string(&r).unwrap();
        assert_eq!(toml::from_str::<HostReading>(&text).unwrap(), r);
        assert!(toml::from_str::<HostReading>(&format!("{text}\nextra = 1")).is_err());
    }
}
