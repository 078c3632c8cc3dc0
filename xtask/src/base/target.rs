//! Where a run runs: the target, and for a remote run the D1 location hint and the account's plan.

use clap::ValueEnum;
use serde::{Deserialize, Serialize};

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, ValueEnum, Serialize, Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum TargetKind {
    /// The Worker in workerd via `wrangler dev`, with a real local D1 (SQLite). No account needed.
    Local,
    /// Real SQLite in-process with D1's documented limits applied: the bare baseline of the
    /// experiments (not D1), and ladders of SQLite's limits.
    Sqlite,
    /// The Worker deployed to Cloudflare with a D1 database of its own, both deleted afterwards.
    /// Needs CLOUDFLARE_API_TOKEN and CLOUDFLARE_ACCOUNT_ID.
    Remote,
}

impl TargetKind {
    pub fn name(self) -> &'static str {
        match self {
            TargetKind::Local => "local",
            TargetKind::Sqlite => "sqlite",
            TargetKind::Remote => "remote",
        }
    }

    /// Whether the target runs the Worker (and so needs its toolchain and build).
    pub fn runs_the_worker(self) -> bool {
        matches!(self, TargetKind::Local | TargetKind::Remote)
    }
}

/// Which Worker measures on a target that runs one: the instrument.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    ValueEnum,
    Serialize,
    Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum WorkerKind {
    /// The Rust Worker (`worker/`, workers-rs compiled to wasm): plans and generates its rows
    /// itself. The default.
    #[default]
    Rust,
    /// The plain JavaScript Worker (`worker-js/`, no build step): takes the statements the
    /// host planned with the same planner, and writes them as a JavaScript Worker does.
    Js,
}

impl WorkerKind {
    pub const ALL: [WorkerKind; 2] = [WorkerKind::Rust, WorkerKind::Js];

    /// The Worker of `session` in a run that alternates them (`--alternate-workers`): ABBA,
    /// so that a drift over the run falls on both alike.
    pub fn of_session(session: usize) -> WorkerKind {
        if matches!(session % 4, 1 | 2) {
            WorkerKind::Js
        } else {
            WorkerKind::Rust
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            WorkerKind::Rust => "rust",
            WorkerKind::Js => "js",
        }
    }
}

impl std::fmt::Display for WorkerKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::fmt::Display for TargetKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A D1 primary location hint (`wrangler d1 create --location`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, ValueEnum)]
pub enum Location {
    /// Western Europe.
    Weur,
    /// Eastern Europe.
    Eeur,
    /// Asia Pacific.
    Apac,
    /// Oceania.
    Oc,
    /// Western North America.
    Wnam,
    /// Eastern North America.
    Enam,
}

impl Location {
    pub fn name(self) -> &'static str {
        match self {
            Location::Weur => "weur",
            Location::Eeur => "eeur",
            Location::Apac => "apac",
            Location::Oc => "oc",
            Location::Wnam => "wnam",
            Location::Enam => "enam",
        }
    }
}

/// The Workers plan of the Cloudflare account: it sets D1's query budget per invocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AccountPlan {
    /// Workers Free: 50 D1 queries per invocation, 100,000 rows written a day.
    Free,
    /// Workers Paid: 1,000 D1 queries per invocation.
    Paid,
}

impl AccountPlan {
    pub fn name(self) -> &'static str {
        match self {
            AccountPlan::Free => "free",
            AccountPlan::Paid => "paid",
        }
    }
}
