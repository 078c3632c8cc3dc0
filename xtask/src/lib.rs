//! cargo xtask's library: every task and layer, so the binary and the integration tests share them.
//!
//! The layers, each using only those below it: `tasks` (the commands) → `pipeline` (one run of
//! any study on any target) → `reports` (everything derived from a run's files) → `records`
//! (the run's files) → `targets` (sessions on local, sqlite, remote) → `studies` (experiment and
//! ladder files, their plans and costs) → `flags`, `paths`, `procs`, `toolchain`.

pub mod base;
pub mod charts;
pub mod flags;
pub mod paths;
pub mod pipeline;
pub mod procs;
pub mod readme;
pub mod records;
pub mod reports;
pub mod stats;
pub mod studies;
pub mod targets;
pub mod tasks;
pub mod toolchain;
pub mod worker_build;
