//! cargo xtask's library: every task and layer, so the binary and the integration tests share them.
//!
//! The layers, with no cycle among their files: `tasks` (the commands, `index.md` over runs) →
//! `pipeline` (one run of any study on any target), `readme` (the README's generated sections)
//! and `html` (the report pages a browser opens) → `studies` (one folder per kind: its file, plan, cost, measuring loop and reports) →
//! `targets` (sessions on local, sqlite, remote) and `reports` (what every kind's reports share)
//! → `records` (the run's files, whose rows name a few of the kinds' enums) → `charts`, `stats`,
//! `base`, with `cpu`, `flags`, `paths`, `procs`, `toolchain` beside them.

pub mod base;
pub mod charts;
pub mod cpu;
pub mod flags;
pub mod host_reference;
pub mod html;
pub mod make_once;
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
