//! Takes the host's speed readings a run records: the reference workload ([`crate::host_reference`])
//! timed [`TIMINGS`] times (its two halves interleaved) before the first session, between
//! sessions and after the last, each reading written to run.toml as it is taken.

use anyhow::{Result, anyhow};

use crate::base::clock::utc_now;
use crate::host_reference;
use crate::records::host_speed::{HostReading, ReadingAt};

/// How many times a reading times each half of the reference (about 0.3 s in all here).
pub const TIMINGS: usize = 5;

/// One reading, `run_s` seconds after the run began.
pub fn read(at: ReadingAt, run_s: f64) -> Result<HostReading> {
    let utc = utc_now().0;
    let (mut cpu_ms, mut sqlite_ms) = (Vec::new(), Vec::new());
    for _ in 0..TIMINGS {
        let (cpu, sqlite) = host_reference::time_once()
            .map_err(|e| anyhow!("the host's speed cannot be read: {e}"))?;
        cpu_ms.push(cpu);
        sqlite_ms.push(sqlite);
    }
    Ok(HostReading {
        at,
        utc,
        run_s,
        version: host_reference::VERSION,
        profile: host_reference::PROFILE.to_owned(),
        cpu_ms,
        sqlite_ms,
    })
}
