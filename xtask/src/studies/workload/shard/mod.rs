//! A workload's load split between processes (`--shard K/N`): which requests of each timetable
//! shard K sends and when ([`timetable`], [`offered`]); whether one process can offer a plan's
//! rates, and how many shards they need by the load generator's measured ceiling
//! ([`ceiling`]); the latency histograms a shard leaves ([`histograms`]); and one run made of
//! the shards' ([`merge`]); N shard processes sharing one target on this machine, started,
//! coordinated and merged by one command ([`shared`]).

pub mod ceiling;
pub mod histograms;
pub mod merge;
mod section;
pub mod shared;

use anyhow::Result;

pub use section::section;

use super::measure::load::Timetable;
use super::{LoadPoint, MAX_RATE, WorkloadPlan};
use crate::records::shard::{MAX_SHARDS, Shard};

/// Shard `shard`'s timetable of a load at `rate` requests a second: every Nth request of the
/// whole timetable, so at the rate ÷ N, starting K - 1 requests in; the shards together offer
/// each request of the whole once, at the time it is due in the whole.
pub fn timetable(rate: f64, shard: Shard) -> Timetable {
    Timetable {
        per_s: rate / f64::from(shard.of),
        offset_s: f64::from(shard.index - 1) / rate,
    }
}

/// The point as shard `shard` offers it: the same arms at the rate ÷ N (what its records say
/// they were scheduled at).
pub fn offered(point: &LoadPoint, shard: Shard) -> LoadPoint {
    LoadPoint {
        rate: point.rate / f64::from(shard.of),
        ..point.clone()
    }
}

/// Shards that `rate` requests a second needs when one process offers at most `per_process`.
pub fn shards_needed(rate: f64, per_process: f64) -> u32 {
    ((rate / per_process).ceil() as u32).max(1)
}

/// Refuses a plan one of whose points asks more of this process than it schedules on time
/// ([`MAX_RATE`] requests a second), naming the point and the shards it needs.
pub fn check_rates(plan: &WorkloadPlan, experiment: &str) -> Result<()> {
    let shard = plan.shard;
    for point in &plan.points {
        let mine = point.rate / f64::from(shard.of);
        if mine > MAX_RATE {
            let needed = shards_needed(point.rate, MAX_RATE);
            anyhow::bail!(
                "`{experiment}` point {} asks {} requests a second{}: one process schedules at \
                 most {MAX_RATE} on time, so it needs {}: run it as shards, `--shard K/{}` for \
                 K = 1 to {} (each its own process or runner), then `cargo xtask merge` them",
                point.id,
                point.rate,
                if shard.of > 1 {
                    format!(", {mine} of them in each of {} shards", shard.of)
                } else {
                    String::new()
                },
                if needed > MAX_SHARDS {
                    format!("{needed} shards, more than the {MAX_SHARDS} allowed")
                } else {
                    format!("{needed} shards or more")
                },
                needed.min(MAX_SHARDS),
                needed.min(MAX_SHARDS)
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
