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
    /// The Worker in workerd via `wrangler dev`, writing through a SQLite-backed Durable Object
    /// (`ctx.storage.sql`) on the same runtime instead of D1. No account needed.
    Do,
    /// The Worker deployed to Cloudflare as for `remote`, writing through its SQLite-backed
    /// Durable Object instead of D1. Needs the remote target's credentials.
    RemoteDo,
    /// A Rust Worker (`worker-pg/`) in workerd via `wrangler dev`, writing through its Hyperdrive
    /// binding to a private PostgreSQL cluster the run starts and stops. No account needed.
    Hyperdrive,
    /// The Postgres Worker deployed to Cloudflare, bound to a Hyperdrive configuration the run
    /// creates (and deletes) for the server in `D1BENCH_HYPERDRIVE_URL`. Needs the remote
    /// target's credentials; the baseline of `remote`.
    RemoteHyperdrive,
}

impl TargetKind {
    pub fn name(self) -> &'static str {
        match self {
            TargetKind::Local => "local",
            TargetKind::Sqlite => "sqlite",
            TargetKind::Remote => "remote",
            TargetKind::Do => "do",
            TargetKind::RemoteDo => "remote-do",
            TargetKind::Hyperdrive => "hyperdrive",
            TargetKind::RemoteHyperdrive => "remote-hyperdrive",
        }
    }

    /// Whether the target is the Worker deployed to Cloudflare (credentials, a deployment and
    /// its teardown, quotas).
    pub fn is_remote(self) -> bool {
        matches!(
            self,
            TargetKind::Remote | TargetKind::RemoteDo | TargetKind::RemoteHyperdrive
        )
    }

    /// Whether the Worker writes through its Durable Object rather than its D1 binding.
    pub fn through_do(self) -> bool {
        matches!(self, TargetKind::Do | TargetKind::RemoteDo)
    }

    /// Whether the target runs the Worker (and so needs its toolchain and build).
    pub fn runs_the_worker(self) -> bool {
        matches!(
            self,
            TargetKind::Local
                | TargetKind::Remote
                | TargetKind::Do
                | TargetKind::RemoteDo
                | TargetKind::Hyperdrive
                | TargetKind::RemoteHyperdrive
        )
    }

    /// Whether the target is PostgreSQL (through Hyperdrive), whose statements are planned
    /// against Postgres's limits in its dialect (`d1bench_core_pg`), not D1's.
    pub fn is_postgres(self) -> bool {
        matches!(self, TargetKind::Hyperdrive | TargetKind::RemoteHyperdrive)
    }

    /// The planner of the statements the target runs: the host plans the same ones to hold the
    /// target's answers against.
    pub fn planner(self) -> fn(&d1bench_core::ProbeRequest) -> d1bench_core::Plan {
        if self.is_postgres() {
            d1bench_core_pg::sql::plan
        } else {
            d1bench_core::sql::plan
        }
    }

    /// The documented limit of the target's engine that refuses even one row of `probe` as its
    /// strategy writes it: Postgres's on the hyperdrive targets, D1's on the others (bare
    /// SQLite and a Durable Object run D1's plan against D1's limits).
    pub fn wall(self, probe: &d1bench_core::ProbeRequest) -> Option<d1bench_core::sql::Wall> {
        if self.is_postgres() {
            d1bench_core_pg::wall::wall(probe)
        } else {
            d1bench_core::sql::wall(probe)
        }
    }

    /// Whether the target writes to D1 (the Worker's D1 binding), not to SQLite of its own.
    pub fn is_d1(self) -> bool {
        matches!(self, TargetKind::Local | TargetKind::Remote)
    }

    /// The targets a run may alternate with its target as its baseline: bare SQLite on any
    /// target that runs the Worker, and the Durable Object or Postgres beside the D1 it runs
    /// next to (`do` and `hyperdrive` beside the local D1, `remote-do` and `remote-hyperdrive`
    /// beside D1 on Cloudflare).
    pub fn takes_baseline(self, baseline: TargetKind) -> bool {
        match baseline {
            TargetKind::Sqlite => self.runs_the_worker(),
            TargetKind::Do => self == TargetKind::Local,
            TargetKind::RemoteDo => self == TargetKind::Remote,
            TargetKind::Hyperdrive => self == TargetKind::Local,
            TargetKind::RemoteHyperdrive => self == TargetKind::Remote,
            TargetKind::Local | TargetKind::Remote => false,
        }
    }

    /// Which of several targets measured in one run is the baseline the others are divided by:
    /// the one furthest from D1 on Cloudflare (bare SQLite, then a Durable Object, then
    /// Postgres through Hyperdrive).
    pub fn baseline_among(targets: impl IntoIterator<Item = TargetKind>) -> Option<TargetKind> {
        let targets: std::collections::BTreeSet<TargetKind> = targets.into_iter().collect();
        if targets.len() < 2 {
            return None;
        }
        [
            TargetKind::Sqlite,
            TargetKind::Do,
            TargetKind::RemoteDo,
            TargetKind::Hyperdrive,
            TargetKind::RemoteHyperdrive,
        ]
        .into_iter()
        .find(|t| targets.contains(t))
    }

    /// The name of the statistic "this target ÷ the baseline" when `self` is the baseline.
    pub fn ratio_stat(self) -> &'static str {
        match self {
            TargetKind::Sqlite => "ratio_to_sqlite",
            TargetKind::Do => "ratio_to_do",
            TargetKind::RemoteDo => "ratio_to_remote_do",
            TargetKind::Local => "ratio_to_local",
            TargetKind::Remote => "ratio_to_remote",
            TargetKind::Hyperdrive => "ratio_to_hyperdrive",
            TargetKind::RemoteHyperdrive => "ratio_to_remote_hyperdrive",
        }
    }

    /// What the target is as a run's baseline, in summary.md's words ("bare SQLite").
    pub fn as_baseline(self) -> &'static str {
        match self {
            TargetKind::Do | TargetKind::RemoteDo => {
                "the same Worker writing through a SQLite-backed Durable Object"
            }
            TargetKind::Hyperdrive => {
                "the Postgres Worker writing through a Hyperdrive binding to a private PostgreSQL \
                 cluster"
            }
            TargetKind::RemoteHyperdrive => {
                "the Postgres Worker writing through a Hyperdrive binding to the run's server, on \
                 Cloudflare"
            }
            TargetKind::Sqlite => "bare SQLite",
            // Never a baseline: D1 is what the others are held against.
            TargetKind::Local | TargetKind::Remote => self.prose(),
        }
    }

    /// What the target is, in a sentence's words ("÷ bare SQLite").
    pub fn prose(self) -> &'static str {
        match self {
            TargetKind::Sqlite => "bare SQLite",
            TargetKind::Do => "the Durable Object",
            TargetKind::RemoteDo => "the Durable Object on Cloudflare",
            TargetKind::Local => "the local D1",
            TargetKind::Remote => "D1 on Cloudflare",
            TargetKind::Hyperdrive => "Postgres through Hyperdrive",
            TargetKind::RemoteHyperdrive => "Postgres through Hyperdrive on Cloudflare",
        }
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
    /// The minimal JavaScript Worker (`worker-js/src/minimal.js`): the same statements, steps
    /// and bodies as `js`, and in its window nothing but the writes (no parts of the window, no
    /// reading of the answers): what the twin is held against.
    JsMinimal,
    /// The ORM Worker (`worker-orm/`): the JavaScript Worker's own code for the six strategies,
    /// and beside it Drizzle, Prisma and Kysely bulk inserts (an experiment's `orms`), bundled
    /// by wrangler with the libraries pinned in `worker-orm/package.json`.
    JsOrm,
}

impl WorkerKind {
    pub const ALL: [WorkerKind; 4] = [
        WorkerKind::Rust,
        WorkerKind::Js,
        WorkerKind::JsMinimal,
        WorkerKind::JsOrm,
    ];

    /// The Worker of `session` in a run that alternates the Rust Worker with `javascript`
    /// (`--alternate-workers`): ABBA, so that a drift over the run falls on both alike.
    pub fn of_session(session: usize, javascript: WorkerKind) -> WorkerKind {
        if matches!(session % 4, 1 | 2) {
            javascript
        } else {
            WorkerKind::Rust
        }
    }

    /// Whether the Worker takes the statements the host planned (the JavaScript Workers), rather
    /// than planning them itself.
    pub fn takes_statements(self) -> bool {
        self != WorkerKind::Rust
    }

    /// Whether the Worker runs the ORMs' probes (an experiment's `orms`).
    pub fn runs_orms(self) -> bool {
        self == WorkerKind::JsOrm
    }

    pub fn name(self) -> &'static str {
        match self {
            WorkerKind::Rust => "rust",
            WorkerKind::Js => "js",
            WorkerKind::JsMinimal => "js-minimal",
            WorkerKind::JsOrm => "js-orm",
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

#[cfg(test)]
mod tests {
    use super::TargetKind::{self, *};

    #[test]
    fn the_baseline_of_a_run_is_the_target_furthest_from_d1() {
        assert_eq!(TargetKind::baseline_among([Local, Sqlite]), Some(Sqlite));
        assert_eq!(TargetKind::baseline_among([Do, Sqlite]), Some(Sqlite));
        assert_eq!(TargetKind::baseline_among([Local, Do, Local]), Some(Do));
        assert_eq!(TargetKind::baseline_among([Local, Local]), None);
        assert_eq!(TargetKind::baseline_among([Local, Remote]), None);
        assert_eq!(TargetKind::baseline_among([]), None);
    }

    #[test]
    fn only_sqlite_and_beside_the_local_d1_the_durable_object_are_baselines() {
        assert!(Local.takes_baseline(Sqlite) && Remote.takes_baseline(Sqlite));
        assert!(Do.takes_baseline(Sqlite) && Local.takes_baseline(Do));
        assert!(!Remote.takes_baseline(Do) && !Do.takes_baseline(Do));
        assert!(!Sqlite.takes_baseline(Sqlite) && !Local.takes_baseline(Local));
        assert!(Do.runs_the_worker() && !Do.is_d1() && Local.is_d1());
        assert_eq!(Do.ratio_stat(), "ratio_to_do");
    }

    #[test]
    fn the_durable_object_on_cloudflare_is_a_remote_target_and_remote_d1s_baseline() {
        assert!(RemoteDo.is_remote() && Remote.is_remote() && !Do.is_remote());
        assert!(RemoteDo.through_do() && Do.through_do() && !Remote.through_do());
        assert!(RemoteDo.runs_the_worker() && !RemoteDo.is_d1());
        assert!(Remote.takes_baseline(RemoteDo) && RemoteDo.takes_baseline(Sqlite));
        assert!(!Local.takes_baseline(RemoteDo) && !Remote.takes_baseline(Do));
        assert_eq!(
            TargetKind::baseline_among([Remote, RemoteDo]),
            Some(RemoteDo)
        );
        assert_eq!(RemoteDo.name(), "remote-do");
        assert_eq!(RemoteDo.ratio_stat(), "ratio_to_remote_do");
    }

    #[test]
    fn postgres_through_hyperdrive_runs_a_worker_plans_its_own_sql_and_is_the_local_d1s_baseline() {
        assert!(Hyperdrive.runs_the_worker() && !Hyperdrive.is_d1() && !Hyperdrive.is_remote());
        assert!(Hyperdrive.is_postgres() && !Local.is_postgres());
        assert!(Local.takes_baseline(Hyperdrive) && Hyperdrive.takes_baseline(Sqlite));
        assert!(!Remote.takes_baseline(Hyperdrive) && !Hyperdrive.takes_baseline(Hyperdrive));
        assert_eq!(
            TargetKind::baseline_among([Local, Hyperdrive]),
            Some(Hyperdrive)
        );
        assert_eq!(
            TargetKind::baseline_among([Hyperdrive, Sqlite]),
            Some(Sqlite)
        );
        assert_eq!(Hyperdrive.ratio_stat(), "ratio_to_hyperdrive");
        assert!(RemoteHyperdrive.is_postgres() && RemoteHyperdrive.is_remote());
        assert!(RemoteHyperdrive.runs_the_worker() && !RemoteHyperdrive.is_d1());
        assert!(Remote.takes_baseline(RemoteHyperdrive) && !Local.takes_baseline(RemoteHyperdrive));
        assert_eq!(
            TargetKind::baseline_among([Remote, RemoteHyperdrive]),
            Some(RemoteHyperdrive)
        );
        let probe: d1bench_core::ProbeRequest = serde_json::from_str(
            r#"{"probe_id":1,"strategy":"bound","columns":100,"rows":700,"row_bytes":1000,"seed":1}"#,
        )
        .unwrap();
        assert_eq!(Hyperdrive.planner()(&probe).rows_per_statement(), 655);
        assert_eq!(Local.planner()(&probe).rows_per_statement(), 1);
    }
}

/// Which Postgres Worker a run on the hyperdrive targets starts: the probes' (`worker-pg/`) for a
/// sweep, the ladders' (`worker-pg-ladder/`) for a ladder. Two Workers and not one with both
/// routes, so that the probe Worker's sources stay as its committed runs measured them
/// (`worker-pg-ladder/src/lib.rs` says more).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PgWorker {
    Probes,
    Ladders,
}

impl PgWorker {
    /// The Worker a study of kind `ladder` (true) or any other starts.
    pub fn for_ladders(ladder: bool) -> PgWorker {
        if ladder {
            PgWorker::Ladders
        } else {
            PgWorker::Probes
        }
    }

    /// Its crate's folder under the project root.
    pub fn dir_name(self) -> &'static str {
        match self {
            PgWorker::Probes => "worker-pg",
            PgWorker::Ladders => "worker-pg-ladder",
        }
    }
}
