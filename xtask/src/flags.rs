//! The whole `cargo xtask` command line, declared in one place.

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

use crate::base::{
    AccountPlan, DebugCorruption, HeapSampling, Location, Orm, TargetKind, WorkerKind,
};
use crate::studies::sweep::report::compare::Gate;

#[derive(Debug, Parser)]
#[command(
    name = "cargo xtask",
    bin_name = "cargo xtask",
    about = "d1bench: measure which Cloudflare D1 write strategy wins and which limit stops you first",
    version
)]
pub struct Xtask {
    #[command(subcommand)]
    pub task: Task,
}

#[derive(Debug, Subcommand)]
pub enum Task {
    /// Run an experiment from experiments/<name>.toml and write its report.
    Run(Run),
    /// List the experiments with their one-line descriptions.
    List,
    /// Redraw a run's charts from its results.csv, without running anything.
    Plot(Plot),
    /// Install what running the Worker needs, and build it only if the committed build in
    /// worker/build is not the build of the sources; runs nothing.
    Setup,
    /// Rewrite the generated sections of the README and the docs: the parity table of
    /// docs/limits.md (from the committed parity CSVs, replaced by those of `run limits` runs
    /// given here), the README's findings of docs/example-run and the workload figures of
    /// docs/example-workloads in docs/workload-findings.md.
    ParityReadme(ParityReadme),
    /// Delete the Workers and D1 databases remote runs left on the Cloudflare account.
    CleanRemote(CleanRemote),
    /// Print the job matrix of the experiments workflow (JSON) with each job's cost.
    Matrix(Matrix),
    /// Redraw the charts of run directories and write one index.md over all of them.
    Report(Report),
    /// Compare two runs of one experiment point by point: b ÷ a of the time per 1,000 rows over
    /// sessions (Welch's t, verdicts held to a 5% false discovery rate by Benjamini–Hochberg,
    /// called past each point's noise floor), and the change of each run's own ratios beside it.
    ///
    /// Exit status, as diff has it: 0 when no regression is detected, 1 when a point got
    /// slower or no longer succeeds, 2 on trouble (bad flags, runs missing, unreadable or not
    /// comparable). "Slower" is judged on each run's own ratios by default, which the runner's
    /// speed cannot move (`--gate`).
    Compare(Compare),
    /// Measure compare's false-alarm rate on this machine (an A/A test): run the experiment
    /// with an even number of sessions, split them into interleaved halves, judge every point
    /// with compare's own code, and write calibration.csv (each point's noise floor, compare's
    /// default threshold) and calibration.md into the run directory.
    Calibrate(Calibrate),
    /// Print a run's measures as Bencher Metric Format JSON on standard output (per point and
    /// measure: value, lower_value and upper_value, the interval over sessions).
    Export(Export),
    /// Check .github/workflows (and dependabot.yml) with actionlint and zizmor (pinned, from PyPI).
    LintWorkflows,
    /// Pack a run into one .tar.gz: its directory, the experiment files it ran, the lock files,
    /// VERSIONS and SHA256SUMS.
    Archive(Archive),
    /// Run again, one at a time at this commit, every committed run the README quotes (the
    /// example run, its replicate, the two-Worker run), each with the command its run.toml
    /// records; refuse to start one while the load average is above the cores; put each new
    /// run in place of the committed one and rewrite the README's sections from them.
    Reproduce(Reproduce),
    /// Rebuild the Worker from its sources into worker/build and rewrite
    /// worker/build-manifest.toml; with --check, rebuild in a scratch copy and compare byte for
    /// byte with what is committed (exit 1 on any difference).
    BuildWorker(BuildWorker),
    /// Which strategy to write a table's rows with: from the committed decision map (its
    /// replicate set when there is one), judged as the map's summary judges it, with the
    /// runner-up and its margin, and each strategy's rows per statement under D1's limits with
    /// the limit that binds it; `--measure` measures that one shape on `--target` there and then.
    ///
    /// Exit status: 0 with an answer, 2 on input no strategy can answer for (no column, a row
    /// past every limit, a schema it cannot read), 1 on other trouble.
    Advise(Advise),
    /// Make one run of a workload's shard runs (`run --shard K/N`): their records together on
    /// one timetable, their HDR histograms added exactly, counts and refusals summed, every
    /// report written as for any run, and each shard judged on its own beside the whole.
    ///
    /// Exit status: 0 merged, 2 when the runs are not the shards of one run (other plans,
    /// commits, seeds or N; a shard twice; a shard missing without --allow-missing), 1 on other
    /// trouble.
    Merge(Merge),
    /// Measure this machine's load-generator ceiling: the highest rate one process schedules on
    /// time against a target that answers at once (a few seconds), written to
    /// reports/generator-ceiling.toml, which `run --dry-run` reads to say how many shards a
    /// workload's rates need.
    GeneratorCeiling(GeneratorCeiling),
}

#[derive(Debug, Clone, clap::Args)]
pub struct Merge {
    /// The shard run directories (each with run.toml, results.csv and histograms.csv), in any
    /// order.
    #[arg(required = true, value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
    /// Directory the merged run directory is created in (default: reports/<experiment>/).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Merge even when some of the N shards are missing: the merged run says which, and the
    /// rate its present shards offered.
    #[arg(long)]
    pub allow_missing: bool,
}

#[derive(Debug, Clone, clap::Args)]
pub struct GeneratorCeiling {
    /// Seconds each rate is tried (0.2 to 10).
    #[arg(long, value_name = "S", default_value_t = 2.0)]
    pub seconds: f64,
    /// Where the figure is written (default: reports/generator-ceiling.toml).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

#[derive(Debug, Clone, clap::Args)]
pub struct Advise {
    /// Columns per row of the table.
    #[arg(long, value_name = "N", conflicts_with = "schema")]
    pub columns: Option<usize>,
    /// Average bytes per row (the payload the row generator writes: text and integers).
    #[arg(long, value_name = "B")]
    pub row_bytes: usize,
    /// A .sql file holding a CREATE TABLE, or a D1 migrations folder: the table's columns.
    #[arg(long, value_name = "FILE")]
    pub schema: Option<std::path::PathBuf>,
    /// The table of --schema to advise on, when it defines several.
    #[arg(long, value_name = "NAME", requires = "schema")]
    pub table: Option<String>,
    /// Measure this one shape now (interleaved over sessions, a minute or two) and answer from
    /// the measurement instead of the committed map.
    #[arg(long)]
    pub measure: bool,
    /// The target whose map answers (default: the committed map's own target), or that
    /// `--measure` measures on (default: sqlite).
    #[arg(long, value_enum)]
    pub target: Option<TargetKind>,
    /// The library the rows are written with: what its usual bulk insert sends for the shape,
    /// which strategy that is and its margin to the fastest, and the idiom of the same library
    /// that writes the answer.
    #[arg(long, value_enum, value_name = "LIB")]
    pub orm: Option<Orm>,
    /// Rows the library writes, for --orm's statements and D1 calls.
    #[arg(long, value_name = "N", default_value_t = 1000, requires = "orm")]
    pub rows: usize,
}

#[derive(Debug, Clone, clap::Args)]
pub struct BuildWorker {
    /// Compare instead of replacing: the committed build against a rebuild of the sources.
    #[arg(long, conflicts_with_all = ["carry", "carry_pg"])]
    pub check: bool,
    /// Keep the committed build for today's sources when they build the same bytes as the
    /// sources it was built from (both built here, in scratch copies); refuse otherwise.
    #[arg(long, conflicts_with = "carry_pg")]
    pub carry: bool,
    /// Keep the Postgres runs made at COMMIT: when the Postgres Worker (`worker-pg/`) as COMMIT
    /// has it builds the same bytes as today's (both built here, in scratch copies), record its
    /// sources hash in worker-pg/carried.toml; refuse otherwise.
    #[arg(long, value_name = "COMMIT")]
    pub carry_pg: Option<String>,
}

#[derive(Debug, Clone, clap::Args)]
pub struct Run {
    /// The experiment or ladder: the name of a file in experiments/ without `.toml`; `limits`
    /// runs every ladder and writes the parity table. Not given with --resume, which reads it
    /// from the run's run.toml.
    #[arg(required_unless_present = "resume")]
    pub experiment: Option<String>,
    /// Where the Worker runs.
    #[arg(long, value_enum, default_value = "local")]
    pub target: TargetKind,
    /// Which profile of the experiment file to run (default: the file's `default-profile`).
    #[arg(long)]
    pub profile: Option<String>,
    /// Directory the run directory is created in (default: reports/<experiment>/).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Skip the bare-SQLite baseline that a run on the local target also measures (the dashed
    /// grey reference line of its time chart).
    #[arg(long)]
    pub no_baseline: bool,
    /// What a sweep's baseline sessions run on, alternating with the target's: `sqlite` (bare
    /// SQLite in-process, the default); beside `--target local`, `do` (the same Worker writing
    /// through a SQLite-backed Durable Object) or `hyperdrive` (the Postgres Worker through a
    /// Hyperdrive binding); beside `--target remote`, `remote-do` or `remote-hyperdrive`; so
    /// that each point has D1 ÷ the baseline.
    #[arg(
        long,
        value_enum,
        value_name = "TARGET",
        default_value = "sqlite",
        conflicts_with = "no_baseline"
    )]
    pub baseline: TargetKind,
    /// On the local target, sample the Worker isolate's heap through V8's inspector while each
    /// probe and rung runs (a full garbage collection before each, a question every 10 ms during
    /// it), into results.csv's `isolate_heap_peak_bytes`. `--isolate-heap=alternate` samples
    /// one of each pair of them, interleaved, and the summary shows what sampling cost the timings.
    /// Off by default: that work happens on the isolate's thread.
    #[arg(long, value_enum, value_name = "WHICH", num_args = 0..=1, require_equals = true,
          default_missing_value = "every")]
    pub isolate_heap: Option<HeapSampling>,
    /// Which Worker measures on the local target: `rust` (worker/, the default), `js`
    /// (worker-js/, plain JavaScript writing the same statements) or `js-minimal` (the same,
    /// with nothing but the writes in its window). Sweeps only.
    #[arg(long, value_enum, default_value = "rust")]
    pub worker: WorkerKind,
    /// On the local target, alternate a sweep's sessions between the Rust Worker and a
    /// JavaScript one in ABBA order (session 0 the Rust Worker, 1 and 2 the JavaScript Worker, 3
    /// the Rust Worker, and so on), to measure the instrument's cost: summary.md then gives
    /// Rust ÷ JavaScript per point on the inside clock with its interval over sessions. The
    /// JavaScript Worker is the twin (`js`) unless `--worker js-minimal` is given. Needs 4
    /// sessions or more.
    #[arg(long)]
    pub alternate_workers: bool,
    /// On the local target, run the Rust Worker and a JavaScript one side by side in every
    /// session of a sweep (two `wrangler dev`, each with its own local D1), each probe sent to
    /// both back to back in a shuffled order: Rust ÷ JavaScript is then a ratio within each
    /// session, which the drift between sessions cannot move, and its interval is taken over
    /// the sessions' ratios. The JavaScript Worker is the twin (`js`) unless `--worker
    /// js-minimal` is given. No baseline; needs 2 sessions or more.
    #[arg(long, conflicts_with = "alternate_workers")]
    pub paired_workers: bool,
    /// Debugging the harness: corrupt every probe's table after its writes, to see
    /// reconciliation catch it. The run is then invalid and exits non-zero.
    #[arg(long, value_enum, value_name = "KIND")]
    pub debug_corrupt: Option<DebugCorruption>,
    /// Debugging the harness: stretch every probe's timed window by PERCENT (1 to 1000) with a
    /// wait inside it, in the target (a known slowdown for compare to catch). Recorded in
    /// run.toml; the run measures the harness, not D1.
    #[arg(long, value_name = "PERCENT", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub debug_slow: Option<u32>,
    /// Remote only: where D1 places the run's database (default: near the machine running this).
    #[arg(long, value_enum)]
    pub location: Option<Location>,
    /// Remote only: the account's Workers plan, recorded with the query budget it implies.
    #[arg(long, value_enum)]
    pub plan: Option<AccountPlan>,
    /// Remote only: leave the Worker and the database on the account after the run.
    #[arg(long)]
    pub keep: bool,
    /// Remote only: a tag put in the names of the run's Worker and database
    /// (`d1bench-run-<tag>-...`), so `clean-remote --tag` removes exactly these runs' leftovers.
    #[arg(long, value_name = "TAG")]
    pub tag: Option<String>,
    /// Draw each chart's title above it (by default a chart has none, for a paper to caption;
    /// summary.md's captions start with the title either way).
    #[arg(long)]
    pub titles: bool,
    /// Measured repeats of every point, instead of the profile's `repeats` (1 to 1000).
    #[arg(long, value_name = "N")]
    pub repeats: Option<usize>,
    /// Warm-ups of every point, instead of the profile's `warmup` (0 to 100).
    #[arg(long, value_name = "N")]
    pub warmup: Option<usize>,
    /// Seed of the row generator, instead of the profile's `seed`.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Seed of the probes' shuffled order, instead of the profile's `order-seed`: runs that
    /// replay one order share what each probe's position in it does to its time, so replicate
    /// runs should each take their own (`reproduce --replicates` does).
    #[arg(long, value_name = "N")]
    pub order_seed: Option<u64>,
    /// Sessions of every target, instead of the profile's `sessions` (1 to 100): each a fresh
    /// target with its own warm-ups and repeats, the baseline's alternating with the target's.
    #[arg(long, value_name = "N")]
    pub sessions: Option<usize>,
    /// Run only the probes meeting every condition, e.g. `columns=64,strategy=literal`, or
    /// `columns=1|8|64` for any of several values: keys columns, row-bytes, escape-share,
    /// nul-share, non-ascii-share, indexes, strategy, label; values as the experiment file
    /// writes them.
    #[arg(long, value_name = "KEY=VALUE,...")]
    pub only: Option<String>,
    /// Print the probes or rungs, the estimated wall time and (remote) what the run would cost,
    /// then stop: nothing is installed, started or written, and no credentials are read. For a
    /// workload, also how many shards its rates need, from the load generator's measured
    /// ceiling (`cargo xtask generator-ceiling`).
    #[arg(long)]
    pub dry_run: bool,
    /// Workloads only: offer shard K of N of the load, for N processes (or machines) together to
    /// offer the planned rates: each timetable's requests K, K + N, K + 2N, ... (counting from
    /// 1), at the rate ÷ N on the same clock offset by K - 1 requests, with the same plan, seeds
    /// and arms. `cargo xtask merge` makes one run of the N shard runs.
    #[arg(long, value_name = "K/N", conflicts_with = "shards")]
    pub shard: Option<crate::records::shard::Shard>,
    /// Workloads on this machine (`sqlite` or `local`) only: N shard processes (2 to 64) load
    /// one target together: this process starts it (one SQLite file, or one `wrangler dev` with
    /// one local D1), seeds and checks it with every shard's writes, starts the N processes
    /// (`--shard K/N` each), meets them before every phase so that their timetables start
    /// together, and merges their runs into one run (as `cargo xtask merge`).
    #[arg(
        long,
        value_name = "N",
        value_parser = clap::value_parser!(u32).range(2..=i64::from(crate::records::shard::MAX_SHARDS))
    )]
    pub shards: Option<u32>,
    /// Internal to `--shards`: the join file of the shared target a shard process loads.
    #[arg(long, value_name = "FILE", hide = true, requires = "shard")]
    pub join: Option<PathBuf>,
    /// Continue the interrupted, failed or abandoned run in RUN_DIR: the probes its results.csv
    /// holds are skipped, the rest appended. Refused when the experiment file or the code
    /// (git commit, uncommitted changes) differ from the run's.
    #[arg(
        long,
        value_name = "RUN_DIR",
        conflicts_with_all = [
            "experiment", "target", "profile", "out", "no_baseline", "baseline", "debug_corrupt",
            "location", "plan", "repeats", "warmup", "seed", "sessions", "only", "dry_run",
            "debug_slow", "shard", "shards", "join",
        ]
    )]
    pub resume: Option<PathBuf>,
}

impl Run {
    /// Whether sessions measure two Workers (`--alternate-workers`, `--paired-workers`).
    pub fn two_workers(&self) -> bool {
        self.alternate_workers || self.paired_workers
    }

    /// The JavaScript Worker an `--alternate-workers` run alternates the Rust Worker with: the
    /// one `--worker` names, the twin (`js`) when it names the Rust Worker.
    pub fn javascript(&self) -> WorkerKind {
        match self.worker {
            WorkerKind::Rust => WorkerKind::Js,
            other => other,
        }
    }

    /// A run of `experiment` on `target` with every other flag at its default (for the tasks
    /// that run the pipeline themselves, and tests).
    pub fn of(experiment: &str, target: TargetKind) -> Run {
        Run {
            experiment: Some(experiment.to_owned()),
            target,
            profile: None,
            out: None,
            no_baseline: false,
            baseline: TargetKind::Sqlite,
            worker: WorkerKind::Rust,
            alternate_workers: false,
            paired_workers: false,
            isolate_heap: None,
            debug_corrupt: None,
            debug_slow: None,
            location: None,
            plan: None,
            keep: false,
            tag: None,
            titles: false,
            repeats: None,
            warmup: None,
            seed: None,
            order_seed: None,
            sessions: None,
            only: None,
            dry_run: false,
            shard: None,
            shards: None,
            join: None,
            resume: None,
        }
    }

    /// The experiment or ladder to run; a run resumed from its run.toml has it from there.
    pub fn experiment(&self) -> &str {
        self.experiment.as_deref().unwrap_or_default()
    }
}

#[derive(Debug, clap::Args)]
pub struct CleanRemote {
    /// Names of Workers and databases to delete (default: every one named `d1bench-run-*`).
    pub names: Vec<String>,
    /// Only those of runs started with `--tag TAG` (`d1bench-run-<TAG>-*`).
    #[arg(long, value_name = "TAG", conflicts_with = "names")]
    pub tag: Option<String>,
    /// List what would be deleted, delete nothing.
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MatrixFormat {
    /// `{"include": [...]}` on one line, for a workflow's `strategy.matrix`.
    Json,
    /// A table for people, with the plan's quotas.
    Table,
}

#[derive(Debug, clap::Args)]
pub struct Matrix {
    /// Experiments to include, comma-separated, or `all`.
    #[arg(long, value_delimiter = ',', default_value = "all")]
    pub experiments: Vec<String>,
    /// Targets, comma-separated: `local`, `remote`, or `both`.
    #[arg(long, value_delimiter = ',', default_value = "local")]
    pub targets: Vec<String>,
    /// Location hints of the remote jobs, comma-separated: one job per location.
    #[arg(long, value_delimiter = ',', value_enum, default_value = "weur")]
    pub locations: Vec<Location>,
    /// Profile every job runs (default: each experiment's default profile).
    #[arg(long)]
    pub profile: Option<String>,
    /// Profile the local jobs run instead, where an experiment has it (the weekly schedule's
    /// `weekly`: enough sessions for its comparison to catch a 20% change, where no account's
    /// quota limits them); the others run `--profile`'s.
    #[arg(long, value_name = "PROFILE")]
    pub local_profile: Option<String>,
    /// The account's plan, for the remote jobs and the cost check.
    #[arg(long, value_enum, default_value = "free")]
    pub plan: AccountPlan,
    #[arg(long, value_enum, default_value = "json")]
    pub format: MatrixFormat,
    /// The sharded jobs instead: each workload selected split into N jobs, one shard each
    /// (`run --shard K/N`), with the group the merge job merges them into (2 to 64).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(2..=64))]
    pub shards: Option<u32>,
}

#[derive(Debug, clap::Args)]
pub struct Report {
    /// Run directories, or directories holding them at any depth (each has a run.toml).
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// Where index.md is written (default: the first directory given).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub struct Compare {
    /// The reference run directory (a): what b is measured against.
    pub run_a: PathBuf,
    /// The run directory compared with it (b).
    pub run_b: PathBuf,
    /// One threshold for every point, in percent: a change counts past 1 + PERCENT/100 (or
    /// below its inverse). By default each point's noise floor sets it: the calibrated one
    /// when `cargo xtask calibrate` measured this experiment, profile and target under
    /// reports/, else the pair's own.
    #[arg(long, value_name = "PERCENT")]
    pub threshold: Option<f64>,
    /// Take the noise floors from this calibration.csv instead of the newest under reports/.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["threshold", "no_calibration"])]
    pub calibration: Option<PathBuf>,
    /// Use no calibration: each point's own noise floor.
    #[arg(long, conflicts_with = "threshold")]
    pub no_calibration: bool,
    /// Add the variance between runs of this replicate set (a folder of complete runs of b's
    /// design made at separate times, as `docs/runs/replicates/<set>/`) to every change: what
    /// one pair of runs cannot see of itself. By default a committed set of b's design is
    /// used, unless `--no-calibration`.
    #[arg(long, value_name = "DIR")]
    pub replicates: Option<PathBuf>,
    /// What the exit status judges: `ratios` (the default), each run's own ratios, which the
    /// runner's speed cannot move (strategy ÷ bound, target ÷ bare SQLite); `time`, the times
    /// themselves, for two runs on one quiet machine that did not change.
    #[arg(long, value_enum, default_value_t = Gate::Ratios)]
    pub gate: Gate,
    /// Where compare.md and compare.json are written (default: run b's directory).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub struct Calibrate {
    /// The experiment to run (a sweep along one axis): the name of a file in experiments/
    /// without `.toml`. Not given with --from or --between.
    #[arg(required_unless_present_any = ["from", "between"])]
    pub experiment: Option<String>,
    /// Which profile of the experiment file to run.
    #[arg(long, default_value = "smoke")]
    pub profile: String,
    /// Where the Worker runs, as `run` has it.
    #[arg(long, value_enum, default_value = "local")]
    pub target: TargetKind,
    /// Sessions of the run: an even number from 4, two halves of 2K ÷ 2 (default: twice the
    /// profile's sessions, at least 4, so each half is one run of the profile).
    #[arg(long, value_name = "2K")]
    pub sessions: Option<usize>,
    /// Directory the run directory is created in (default: reports/<experiment>/, where
    /// compare looks for calibrations).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Analyse the run in RUN_DIR instead of running one (its sessions, 4 or more).
    #[arg(
        long,
        value_name = "RUN_DIR",
        conflicts_with_all = ["experiment", "profile", "target", "sessions", "out"]
    )]
    pub from: Option<PathBuf>,
    /// Calibrate between two complete runs of one design already made, RUN_A and RUN_B (the
    /// A/A comparison of b against a, and the variance between runs): writes
    /// calibration-between-runs.csv and .md into RUN_B, which compare takes first. Given one
    /// folder, a replicate set (`docs/runs/replicates/<set>/`), every pair of its runs in one,
    /// written into its newest run.
    #[arg(
        long,
        num_args = 1..=2,
        value_names = ["RUN_A|SET", "RUN_B"],
        conflicts_with_all = ["experiment", "profile", "target", "sessions", "out", "from"]
    )]
    pub between: Option<Vec<PathBuf>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    /// Bencher Metric Format: `{"<benchmark>": {"<measure>": {"value", "lower_value",
    /// "upper_value"}}}`.
    Bmf,
}

#[derive(Debug, clap::Args)]
pub struct Export {
    /// A sweep run directory (one holding run.toml and results.csv).
    pub run_dir: PathBuf,
    #[arg(long, value_enum)]
    pub format: ExportFormat,
}

#[derive(Debug, clap::Args)]
pub struct Reproduce {
    /// Only the quoted runs whose directory ends with one of these (e.g. `example-run`).
    #[arg(long, value_name = "DIR", num_args = 1..)]
    pub only: Vec<String>,
    /// Print the runs and their commands with how long each took last time; run nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Make the runs even when this host runs slower than the committed runs' did (beyond the
    /// reference workload's noise); each run's run.toml records that it was forced.
    #[arg(long)]
    pub force: bool,
    /// Make the README's replicate sets instead (`docs/runs/replicates/<set>/`, `--only` naming
    /// sets): N runs of each set's command one after another, seeds 1 to N, put in place of
    /// the set once all N completed; then the README is rewritten from them.
    #[arg(long, value_name = "N")]
    pub replicates: Option<usize>,
}

#[derive(Debug, clap::Args)]
pub struct ParityReadme {
    /// A `run limits --target local` run directory whose parity.csv becomes reports/parity-local.csv.
    #[arg(long, value_name = "RUN_DIR")]
    pub local: Option<PathBuf>,
    /// A `run limits --target sqlite` run directory whose parity.csv becomes reports/parity-sqlite.csv.
    #[arg(long, value_name = "RUN_DIR")]
    pub sqlite: Option<PathBuf>,
    /// A `run limits --target remote` run directory whose parity.csv becomes
    /// reports/parity-remote.csv (the README's Cloudflare column).
    #[arg(long, value_name = "RUN_DIR")]
    pub remote: Option<PathBuf>,
    /// A `run limits --target do` run directory whose parity.csv becomes reports/parity-do.csv
    /// (the Durable Object column).
    #[arg(long = "do", value_name = "RUN_DIR")]
    pub durable_object: Option<PathBuf>,
    /// A `run limits --target hyperdrive` run directory whose parity.csv becomes
    /// reports/parity-postgres.csv (the Postgres through Hyperdrive column).
    #[arg(long, value_name = "RUN_DIR")]
    pub postgres: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub struct Archive {
    /// A run directory (one holding run.toml).
    pub run_dir: PathBuf,
    /// Where `<run-id>.tar.gz` is written (default: the directory holding the run directory).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub struct Plot {
    /// A run directory holding results.csv and run.toml.
    pub run_dir: PathBuf,
    /// Draw each chart's title above it (by default a chart has none, for a paper to caption).
    #[arg(long)]
    pub titles: bool,
}

/// `cargo xtask run <args>` parsed, for other modules' tests.
#[cfg(test)]
pub fn parse_run(args: &[&str]) -> Result<Run, clap::Error> {
    let argv = ["xtask", "run"].into_iter().chain(args.iter().copied());
    Xtask::try_parse_from(argv).map(|flags| match flags.task {
        Task::Run(run) => run,
        other => panic!("not a run: {other:?}"),
    })
}

#[cfg(test)]
mod tests;
