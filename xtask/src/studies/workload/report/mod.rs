//! A workload run's reports, derived from its results.csv and checks.csv: the requests'
//! statistics ([`load_stats`]), summary.csv and summary.md ([`summary`]) with the write-up's
//! read-path claims ([`claims`]), write contention ([`contention`]), binding vs REST API ([`paths`]), where reads were served
//! ([`placement`]) and the cache's figures ([`cache`], its staleness in [`staleness`]); the
//! latency chart ([`chart`]), the cache's and retries' charts ([`cache_chart`]) and each point's
//! latency percentile plot ([`percentile_chart`], drawn for the run's page).

pub mod cache;
pub mod cache_chart;
pub mod capacity;
pub mod chart;
pub mod claims;
pub mod contention;
pub mod load_stats;
pub mod paths;
pub mod percentile_chart;
pub mod placement;
pub mod saturation;
pub mod staleness;
pub mod summary;
