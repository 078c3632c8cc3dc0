//! `cargo xtask run <ladder>` and `cargo xtask run limits`: climbs ladders on a target, one
//! fresh invocation per rung step, and writes what they found.
//!
//! A run directory holds `results.csv` (one row per rung, flushed as each lands),
//! `findings.csv` (one row per climb, appended as each ends), `parity.csv` and `summary.md`
//! (the parity table and every finding), `run.toml`, and the param-ceiling chart when that
//! ladder ran. Each rung is reconciled: the target's plan against the host's, the statements
//! and rows D1 acknowledged against the calls that completed, and the rows present afterwards
//! against the rows acknowledged (a refused batch must leave none).

use std::fmt::Write as _;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use d1bench_core::ladder::{self, LadderKind, MAX_STEPS_PER_MS, RungPlan, RungRequest};
use d1bench_core::{Outcome, RefusalKind};
use serde::{Deserialize, Serialize};
use xshell::Shell;

use crate::flags::{self, TargetKind};
use crate::ladder::{Climb, Climber, Ladder, Role};
use crate::local::LocalWorker;
use crate::paths::Paths;
use crate::provenance::{self, GitInfo, Machine, RunInfo, Versions};
use crate::rung_target::{RungTarget, SqliteRungs, WorkerRungs};
use crate::{ladder_chart, parity, procs, toolchain};

/// The name that runs every ladder and writes the parity table.
pub const LIMITS: &str = "limits";

/// Why `--target remote` refuses ladders for now.
const REMOTE_NOT_YET: &str = "ladders run on the local and sqlite targets for now: a remote ladder \
     needs the remote target's deploy and teardown around its rungs, which is not wired yet";

/// Longest one rung step may take (query-duration's longest rungs run for tens of seconds).
const STEP_TIMEOUT: Duration = Duration::from_secs(600);

/// One rung as measured: a row of `results.csv`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RungRow {
    pub ladder: LadderKind,
    /// `local` or `sqlite`.
    pub target: String,
    /// Index of the climb within the run, from 0.
    pub climb: usize,
    /// What the climb held fixed (`columns=8`, `mode=one-batch`, ...).
    pub held: String,
    pub rung_id: u64,
    /// `climb`, `confirm`, `bisect` or `calibrate`.
    pub role: String,
    /// The climbed value, in `unit`.
    pub value: usize,
    pub unit: String,
    /// `ok`, `refused` or `error`.
    pub outcome: String,
    /// The limit that refused (`too-many-variables`, ...), `other`, or empty.
    pub refusal: String,
    /// The target's error text, verbatim; empty when none.
    pub error: String,
    /// The step that failed: `prepare`, `climb`, `finish`, or empty.
    pub failed_step: String,
    pub calls_planned: usize,
    /// D1 calls that succeeded before the first failure.
    pub calls_completed: usize,
    pub statements_planned: usize,
    /// Statements in the calls that succeeded: how much work completed before a refusal.
    pub statements_completed: usize,
    /// Rows of the calls that succeeded.
    pub rows_acknowledged: usize,
    /// Rows counted in the table afterwards, in a separate invocation.
    pub rows_present: usize,
    pub table_exists: bool,
    /// UTF-8 bytes of the longest statement.
    pub max_statement_bytes: usize,
    /// Characters of the longest statement.
    pub max_statement_chars: usize,
    /// Milliseconds on the xtask's clock around the measured step (authoritative).
    pub outside_ms: f64,
    /// Milliseconds on the target's clock around the measured calls.
    pub inside_ms: f64,
    /// Milliseconds D1 reported (`meta.duration`), summed; 0 where the target has no such clock.
    pub d1_ms: f64,
    pub reconciled: bool,
    /// Why the rung did not reconcile; empty when it did.
    pub reconcile_note: String,
}

impl RungRow {
    fn failed(&self) -> bool {
        self.outcome != Outcome::Ok.name()
    }
    /// A failure that is not the target's answer: no verdict on the limit can rest on it.
    fn harness_failure(&self) -> bool {
        self.failed() && self.refusal.is_empty()
    }
}

/// What one climb found: a row of `findings.csv`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    pub ladder: LadderKind,
    pub target: String,
    pub climb: usize,
    pub held: String,
    /// The held column count (param-ceiling), for the chart.
    pub columns: Option<usize>,
    pub unit: String,
    /// The largest value that succeeded below the first failure.
    pub last_ok: Option<usize>,
    /// The smallest value that failed.
    pub first_failed: Option<usize>,
    /// The largest value tried.
    pub max_tried: Option<usize>,
    /// `refused` or `error` for the first failure; empty without one.
    pub outcome: String,
    pub refusal: String,
    /// The first failure's error text, verbatim.
    pub error: String,
    /// Work completed before the first failure: statements in the calls that succeeded.
    pub statements_completed: Option<usize>,
    /// `yes` when every confirmation rung failed too, `no` when one succeeded, empty when none ran.
    pub confirmed: String,
    /// Why the climb ended.
    pub stopped: String,
    /// The clocks of the largest success (ms).
    pub ok_outside_ms: Option<f64>,
    pub ok_inside_ms: Option<f64>,
    pub ok_d1_ms: Option<f64>,
    pub rungs: usize,
    /// Whether every rung of the climb reconciled.
    pub reconciled: bool,
}

impl Finding {
    /// The measured duration of the largest success: D1's clock when it has one.
    pub fn ok_ms(&self) -> Option<f64> {
        match (self.ok_d1_ms, self.ok_inside_ms) {
            (Some(d1), _) if d1 > 0.0 => Some(d1),
            (_, inside) => inside,
        }
    }
}

/// Appends serializable rows to a CSV file, flushing after each.
pub struct CsvAppender {
    writer: csv::Writer<File>,
    path: PathBuf,
}

impl CsvAppender {
    pub fn create(path: &Path) -> Result<Self> {
        let file =
            File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
        Ok(CsvAppender {
            writer: csv::Writer::from_writer(file),
            path: path.to_owned(),
        })
    }

    pub fn append(&mut self, row: &impl Serialize) -> Result<()> {
        self.writer
            .serialize(row)
            .with_context(|| format!("cannot write to {}", self.path.display()))?;
        self.writer
            .flush()
            .with_context(|| format!("cannot flush {}", self.path.display()))
    }
}

pub fn read_csv<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Vec<T>> {
    let mut reader =
        csv::Reader::from_path(path).with_context(|| format!("cannot open {}", path.display()))?;
    reader
        .deserialize()
        .enumerate()
        .map(|(i, row)| {
            row.with_context(|| format!("{}: row {} is malformed", path.display(), i + 2))
        })
        .collect()
}

/// Whether `name` is a ladder or `limits` (so `cargo xtask run` comes here).
pub fn handles(paths: &Paths, name: &str) -> bool {
    name == LIMITS
        || crate::ladder::is_ladder_file(&paths.experiments().join(format!("{name}.toml")))
}

/// `run.toml` of a ladder run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LadderRunRecord {
    pub run: RunInfo,
    pub ladders: Vec<LadderInfo>,
    pub git: GitInfo,
    pub versions: Versions,
    /// The SQLite library the sqlite target runs (rusqlite's bundled one).
    pub sqlite: String,
    pub machine: Machine,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub totals: Option<Totals>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LadderInfo {
    pub name: String,
    pub file: String,
    pub sha256: String,
    pub description: String,
}

/// Totals over a run's rungs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Totals {
    pub rungs: usize,
    pub reconciled: usize,
    pub refused: usize,
    pub errors: usize,
}

impl Totals {
    fn add(&mut self, row: &RungRow) {
        self.rungs += 1;
        self.reconciled += usize::from(row.reconciled);
        self.refused += usize::from(row.outcome == Outcome::Refused.name());
        self.errors += usize::from(row.outcome == Outcome::Error.name());
    }
    pub fn all_reconciled(&self) -> bool {
        self.reconciled == self.rungs
    }
}

impl LadderRunRecord {
    fn write(&self, path: &Path) -> Result<()> {
        let text = toml::to_string_pretty(self).context("cannot serialize run.toml")?;
        std::fs::write(
            path,
            format!("# d1bench ladder run record: what was climbed, where, with what, and how it ended.\n{text}"),
        )
        .with_context(|| format!("cannot write {}", path.display()))
    }
}

/// A ladder loaded for a run, with the profile it runs.
struct Planned {
    ladder: Ladder,
    profile: String,
    climbs: Vec<Climb>,
}

impl flags::Run {
    /// Runs a ladder, or every ladder when the name is `limits`.
    pub fn run_ladders(&self, sh: &Shell, paths: &Paths) -> Result<()> {
        if self.target == TargetKind::Remote {
            bail!("{REMOTE_NOT_YET}");
        }
        let dir = paths.experiments();
        let names = if self.experiment == LIMITS {
            crate::ladder::names(&dir)?
        } else {
            vec![self.experiment.clone()]
        };
        let mut planned = Vec::new();
        for name in names {
            let ladder = Ladder::load(&dir, &name)?;
            let kind = ladder.file.ladder;
            if self.target == TargetKind::Sqlite && !kind.runs_on_sqlite() {
                if self.experiment == LIMITS {
                    continue;
                }
                bail!(
                    "{kind} climbs a limit of the Workers runtime and D1's service, which in-process SQLite does not have; run it with --target local"
                );
            }
            let (profile, spec) = ladder.profile(self.profile.as_deref())?;
            let climbs = ladder.climbs(spec);
            let profile = profile.to_owned();
            planned.push(Planned {
                ladder,
                profile,
                climbs,
            });
        }

        let tools = match self.target {
            TargetKind::Local => {
                let tools = toolchain::ensure(sh, paths)?;
                tools.build_worker(sh, paths)?;
                Some(tools)
            }
            TargetKind::Sqlite => None,
            TargetKind::Remote => bail!("{REMOTE_NOT_YET}"),
        };
        let out = self
            .out
            .clone()
            .unwrap_or_else(|| paths.reports().join(&self.experiment));
        let run_dir = crate::run::create_run_dir(&out, self.target)?;
        let dir_path = run_dir.path.clone();
        let mut profiles: Vec<&str> = planned.iter().map(|p| p.profile.as_str()).collect();
        profiles.dedup();
        let mut record = LadderRunRecord {
            run: RunInfo {
                id: dir_path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                experiment: self.experiment.clone(),
                profile: profiles.first().copied().unwrap_or_default().to_owned(),
                target: self.target.name().to_owned(),
                baseline: None,
                debug_corrupt: None,
                status: "running".into(),
                started: provenance::utc_now().0,
                ended: None,
                error: None,
            },
            ladders: planned
                .iter()
                .map(|p| LadderInfo {
                    name: p.ladder.name.clone(),
                    file: p
                        .ladder
                        .path
                        .strip_prefix(&paths.root)
                        .unwrap_or(&p.ladder.path)
                        .display()
                        .to_string(),
                    sha256: toolchain::hash_bytes(p.ladder.source.as_bytes()),
                    description: p.ladder.file.description.clone(),
                })
                .collect(),
            git: provenance::git(sh),
            versions: crate::run::versions(sh, paths, self.target),
            sqlite: rusqlite::version().to_owned(),
            machine: provenance::machine(),
            totals: None,
        };
        let record_path = dir_path.join("run.toml");
        record.write(&record_path)?;
        eprintln!("run directory: {}", dir_path.display());

        let measured = match self.target {
            TargetKind::Local => {
                let tools = tools
                    .as_ref()
                    .expect("the local target installed its tools");
                eprintln!("starting wrangler dev (workerd with a local D1)");
                let worker = LocalWorker::start(paths, tools, STEP_TIMEOUT)?;
                record.versions.worker =
                    format!("{} {}", worker.health.name, worker.health.version);
                record.write(&record_path)?;
                let measured = climb_all(
                    &mut WorkerRungs(&worker.client),
                    self.target,
                    &planned,
                    &dir_path,
                );
                worker.stop();
                measured
            }
            TargetKind::Sqlite => {
                let mut target = SqliteRungs::new(crate::sqlite::open_d1_like()?);
                climb_all(&mut target, self.target, &planned, &dir_path)
            }
            TargetKind::Remote => Err(anyhow::anyhow!(REMOTE_NOT_YET)),
        };
        record
            .run
            .end(measured.as_ref().map(|(totals, _)| totals.all_reconciled()));
        if let Ok((totals, _)) = &measured {
            record.totals = Some(totals.clone());
        }
        record.write(&record_path)?;
        let (totals, findings) = measured?;

        let rows = parity::rows(&findings);
        parity::write_csv(&dir_path.join("parity.csv"), &rows)?;
        let title = format!(
            "{} ({}, {})",
            self.experiment,
            self.target.name(),
            profiles.join("/")
        );
        let summary = summary(&title, &planned, &findings, &rows);
        std::fs::write(dir_path.join("summary.md"), &summary)
            .with_context(|| format!("cannot write {}", dir_path.join("summary.md").display()))?;
        let charts = ladder_chart::param_ceiling(&dir_path, &findings, &title)?;
        print!("{}", parity::markdown(&rows));
        for chart in charts {
            println!("chart: {}", chart.display());
        }
        println!("summary: {}", dir_path.join("summary.md").display());
        println!(
            "{} rungs ({} refused, {} errors); {} reconciled",
            totals.rungs, totals.refused, totals.errors, totals.reconciled
        );
        if !totals.all_reconciled() {
            bail!(
                "the run is invalid: {} rungs did not reconcile (see `reconcile_note` in {})",
                totals.rungs - totals.reconciled,
                dir_path.join("results.csv").display()
            );
        }
        Ok(())
    }
}

/// Climbs every climb of every ladder in order; rows and findings are on disk as they land.
fn climb_all(
    target: &mut dyn RungTarget,
    kind: TargetKind,
    planned: &[Planned],
    dir: &Path,
) -> Result<(Totals, Vec<Finding>)> {
    let mut results = CsvAppender::create(&dir.join("results.csv"))?;
    let mut findings_csv = CsvAppender::create(&dir.join("findings.csv"))?;
    let mut totals = Totals::default();
    let mut findings = Vec::new();
    let mut next_id = 1u64;
    let mut index = 0;
    for p in planned {
        for climb in &p.climbs {
            let finding = climb_one(target, kind, climb, index, &mut next_id, &mut |row| {
                totals.add(row);
                eprintln!(
                    "[{} {}] {} {} {}: {}{}{}",
                    climb.ladder,
                    row.held,
                    row.role,
                    row.value,
                    row.unit,
                    row.outcome,
                    if row.refusal.is_empty() {
                        String::new()
                    } else {
                        format!(" ({})", row.refusal)
                    },
                    if row.reconciled {
                        String::new()
                    } else {
                        format!("  NOT RECONCILED: {}", row.reconcile_note)
                    },
                );
                results.append(row)
            })?;
            findings_csv.append(&finding)?;
            findings.push(finding);
            index += 1;
        }
    }
    Ok((totals, findings))
}

/// One climb: calibration (query-duration), then rungs until the climber is done, the time
/// budget is spent, or the harness fails.
fn climb_one(
    target: &mut dyn RungTarget,
    kind: TargetKind,
    climb: &Climb,
    index: usize,
    next_id: &mut u64,
    emit: &mut dyn FnMut(&RungRow) -> Result<()>,
) -> Result<Finding> {
    let mut climb = climb.clone();
    let mut rows: Vec<RungRow> = Vec::new();
    let mut stopped = None;
    let mut take =
        |climb: &Climb, value: usize, role: Role, target: &mut dyn RungTarget| -> Result<RungRow> {
            if procs::interrupted() {
                bail!("interrupted");
            }
            let rung = climb.rung(*next_id, value);
            *next_id += 1;
            let row = run_rung(target, kind, &rung, role, index);
            emit(&row)?;
            Ok(row)
        };
    if let Some(steps) = climb.calibrate_steps {
        let mut calibration = climb.clone();
        calibration.held.steps_per_ms = Some(steps);
        let row = take(&calibration, 1, Role::Calibrate, target)?;
        let ms = if row.d1_ms > 0.0 {
            row.d1_ms
        } else {
            row.inside_ms
        };
        if row.failed() || ms <= 0.0 {
            stopped = Some(format!("the calibration rung failed: {}", row.error));
        } else {
            let rate = (steps as f64 / ms)
                .round()
                .clamp(1.0, MAX_STEPS_PER_MS as f64) as u64;
            climb.held.steps_per_ms = Some(rate);
        }
        rows.push(row);
    }
    let mut climber = Climber::new(&climb.rungs, climb.confirm);
    let started = Instant::now();
    while stopped.is_none() {
        let Some((value, role)) = climber.next() else {
            break;
        };
        if let Some(budget) = climb.max_seconds
            && started.elapsed() > Duration::from_secs(budget)
        {
            stopped = Some(format!("time budget of {budget} s spent"));
            break;
        }
        let row = take(&climb, value, role, target)?;
        climber.record(value, row.failed());
        // A query's cost per step drifts with its length: each success re-sizes the next.
        if let Some(rate) = climb.held.steps_per_ms
            && !row.failed()
        {
            let ms = if row.d1_ms > 0.0 {
                row.d1_ms
            } else {
                row.inside_ms
            };
            if ms >= 100.0 {
                let steps = value as f64 * rate as f64;
                climb.held.steps_per_ms =
                    Some((steps / ms).round().clamp(1.0, MAX_STEPS_PER_MS as f64) as u64);
            }
        }
        if row.harness_failure() {
            stopped = Some(format!("harness failure: {}", row.error));
        }
        rows.push(row);
    }
    let verdict = climber.verdict();
    let climbed: Vec<&RungRow> = rows
        .iter()
        .filter(|r| r.role != Role::Calibrate.name())
        .collect();
    let at = |v: Option<usize>| v.and_then(|v| climbed.iter().find(|r| r.value == v).copied());
    let ok = at(verdict.last_ok);
    let failed = at(verdict.first_failed);
    let stopped = stopped.unwrap_or_else(|| match (failed, verdict.max_tried) {
        (Some(_), _) => "refused".into(),
        (None, Some(max)) if max >= climb.rungs.max() => {
            format!("no refusal up to the cap ({max})")
        }
        (None, _) => "no refusal".into(),
    });
    Ok(Finding {
        ladder: climb.ladder,
        target: kind.name().to_owned(),
        climb: index,
        held: climb.held.label(),
        columns: climb.held.columns,
        unit: climb.ladder.unit().to_owned(),
        last_ok: verdict.last_ok,
        first_failed: verdict.first_failed,
        max_tried: verdict.max_tried,
        outcome: failed.map(|r| r.outcome.clone()).unwrap_or_default(),
        refusal: failed.map(|r| r.refusal.clone()).unwrap_or_default(),
        error: failed.map(|r| r.error.clone()).unwrap_or_default(),
        statements_completed: failed.map(|r| r.statements_completed),
        confirmed: match verdict.confirmed {
            Some(true) => "yes".into(),
            Some(false) => "no".into(),
            None => String::new(),
        },
        stopped,
        ok_outside_ms: ok.map(|r| r.outside_ms),
        ok_inside_ms: ok.map(|r| r.inside_ms),
        ok_d1_ms: ok.map(|r| r.d1_ms),
        rungs: rows.len(),
        reconciled: rows.iter().all(|r| r.reconciled),
    })
}

/// Prepare, climb and finish one rung (three invocations on the Worker), then reconcile it.
fn run_rung(
    target: &mut dyn RungTarget,
    kind: TargetKind,
    rung: &RungRequest,
    role: Role,
    climb: usize,
) -> RungRow {
    let plan = ladder::plan(rung);
    let mut row = RungRow {
        ladder: rung.ladder,
        target: kind.name().to_owned(),
        climb,
        held: rung.held.label(),
        rung_id: rung.rung_id,
        role: role.name().to_owned(),
        value: rung.value,
        unit: rung.ladder.unit().to_owned(),
        outcome: Outcome::Ok.name().to_owned(),
        refusal: String::new(),
        error: String::new(),
        failed_step: String::new(),
        calls_planned: plan.calls.len(),
        calls_completed: 0,
        statements_planned: plan.statements(),
        statements_completed: 0,
        rows_acknowledged: 0,
        rows_present: 0,
        table_exists: false,
        max_statement_bytes: plan.max_statement_bytes(),
        max_statement_chars: plan.max_statement_chars(),
        outside_ms: 0.0,
        inside_ms: 0.0,
        d1_ms: 0.0,
        reconciled: false,
        reconcile_note: String::new(),
    };
    let fail = |row: &mut RungRow, step: &str, text: String, answered: bool| {
        let (outcome, refusal) = ladder::classify(Some(&text));
        row.outcome = outcome.name().to_owned();
        // A harness failure (no answer) has no refusal kind: it says nothing about D1.
        row.refusal = if answered {
            refusal
                .map(RefusalKind::name)
                .unwrap_or_default()
                .to_owned()
        } else {
            String::new()
        };
        row.error = text.replace('\n', " ");
        row.failed_step = step.to_owned();
    };
    match target.prepare(rung) {
        Err(e) => {
            fail(&mut row, "prepare", e, false);
            row.reconcile_note = "the prepare request failed: nothing to reconcile".into();
            let _ = target.finish(rung);
            return row;
        }
        Ok(p) if p.error.is_some() => {
            fail(&mut row, "prepare", p.error.unwrap_or_default(), true);
        }
        Ok(_) => {
            let (outside_ms, climbed) = target.climb(rung);
            row.outside_ms = outside_ms;
            match climbed {
                Err(e) => {
                    fail(&mut row, "climb", e, false);
                    row.reconcile_note = "the climb request failed: nothing to reconcile".into();
                    let _ = target.finish(rung);
                    return row;
                }
                Ok(result) => {
                    row.calls_completed = result.calls_completed;
                    row.statements_completed = result.statements_completed;
                    row.rows_acknowledged = result.rows_acknowledged;
                    row.inside_ms = result.inside_ms;
                    row.d1_ms = result.d1_ms;
                    if let Some(text) = &result.error {
                        fail(&mut row, "climb", text.clone(), true);
                    }
                    if let Err(note) = check_plan(&plan, &result) {
                        row.reconcile_note = note;
                    }
                }
            }
        }
    }
    match target.finish(rung) {
        Err(e) => {
            row.reconcile_note = join_notes(
                &row.reconcile_note,
                &format!("the finish request failed: {e}"),
            );
        }
        Ok(finish) => {
            row.table_exists = finish.table_exists;
            row.rows_present = finish.rows_present;
            let mut problems = Vec::new();
            if let Some(e) = finish.error {
                problems.push(format!("counting the rows failed: {e}"));
            }
            if finish.rows_present != row.rows_acknowledged {
                problems.push(format!(
                    "rows present: expected the {} acknowledged, found {}",
                    row.rows_acknowledged, finish.rows_present
                ));
            }
            let note = join_notes(&row.reconcile_note, &problems.join("; "));
            row.reconciled = note.is_empty();
            row.reconcile_note = note;
        }
    }
    row
}

fn join_notes(a: &str, b: &str) -> String {
    match (a.is_empty(), b.is_empty()) {
        (true, _) => b.to_owned(),
        (_, true) => a.to_owned(),
        _ => format!("{a}; {b}"),
    }
}

/// The target's answer checked against the host's plan of the same rung.
pub fn check_plan(plan: &RungPlan, result: &ladder::RungResult) -> Result<(), String> {
    let mut problems = Vec::new();
    let mut expect = |what: &str, wanted: usize, got: usize| {
        if wanted != got {
            problems.push(format!(
                "{what}: expected {wanted}, the target reported {got}"
            ));
        }
    };
    expect("calls planned", plan.calls.len(), result.calls_planned);
    expect(
        "statements planned",
        plan.statements(),
        result.statements_planned,
    );
    expect(
        "longest statement (bytes)",
        plan.max_statement_bytes(),
        result.max_statement_bytes,
    );
    let completed = result.calls_completed.min(plan.calls.len());
    if result.outcome == Outcome::Ok {
        expect("calls completed", plan.calls.len(), result.calls_completed);
    }
    // A failed call acknowledges nothing: a refused batch is rolled back whole.
    let (statements, rows) = plan.completed(completed);
    expect(
        "statements completed",
        statements,
        result.statements_completed,
    );
    expect("rows acknowledged", rows, result.rows_acknowledged);
    if result.calls_completed > plan.calls.len() {
        problems.push(format!(
            "calls completed: {} of only {} planned",
            result.calls_completed,
            plan.calls.len()
        ));
    }
    if result.outcome != Outcome::Ok && completed == plan.calls.len() {
        problems.push(format!(
            "every call completed yet the outcome is {}",
            result.outcome.name()
        ));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("; "))
    }
}

/// `summary.md`: the parity table, then every climb's finding.
fn summary(
    title: &str,
    planned: &[Planned],
    findings: &[Finding],
    parity_rows: &[parity::ParityRow],
) -> String {
    let mut out = format!("# {title}\n\n## Limits: documented and found\n\n");
    out.push_str(&parity::markdown(parity_rows));
    for p in planned {
        let kind = p.ladder.file.ladder;
        let mine: Vec<&Finding> = findings.iter().filter(|f| f.ladder == kind).collect();
        if mine.is_empty() {
            continue;
        }
        writeln!(
            out,
            "\n## {} ({}, profile `{}`)\n\n{}\n",
            p.ladder.name,
            kind.unit(),
            p.profile,
            p.ladder.file.description
        )
        .unwrap();
        let ceiling = kind == LadderKind::ParamCeiling;
        out.push_str("| held | last ok | first failed | refusal | completed before it | confirmed | stopped | last ok took (outside / inside / D1 ms) |");
        out.push_str(if ceiling {
            " floor(100/C) | matches |\n"
        } else {
            "\n"
        });
        out.push_str("| --- | --- | --- | --- | --- | --- | --- | --- |");
        out.push_str(if ceiling { " --- | --- |\n" } else { "\n" });
        for f in &mine {
            let num = |v: Option<usize>| v.map_or("-".to_owned(), crate::summary::thousands);
            let ms = |v: Option<f64>| v.map_or("-".to_owned(), |v| format!("{v:.1}"));
            write!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} | {} / {} / {} |",
                if f.held.is_empty() { "-" } else { &f.held },
                num(f.last_ok),
                num(f.first_failed),
                if f.refusal.is_empty() {
                    "-"
                } else {
                    &f.refusal
                },
                f.statements_completed
                    .map_or("-".to_owned(), |s| format!("{s} statements")),
                if f.confirmed.is_empty() {
                    "-"
                } else {
                    &f.confirmed
                },
                f.stopped,
                ms(f.ok_outside_ms),
                ms(f.ok_inside_ms),
                ms(f.ok_d1_ms),
            )
            .unwrap();
            if ceiling {
                let expected =
                    d1bench_core::limits::bound_rows_per_statement(f.columns.unwrap_or(1));
                write!(
                    out,
                    " {expected} | {} |",
                    if f.last_ok == Some(expected) {
                        "yes"
                    } else {
                        "NO"
                    }
                )
                .unwrap();
            }
            out.push('\n');
        }
        let texts: std::collections::BTreeSet<&str> = mine
            .iter()
            .map(|f| f.error.as_str())
            .filter(|e| !e.is_empty())
            .collect();
        if !texts.is_empty() {
            out.push_str("\nError texts, verbatim:\n\n");
            for t in texts {
                writeln!(out, "- `{t}`").unwrap();
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ladder::Rungs;
    use d1bench_core::ladder::{CallMode, Held};

    fn climb(kind: LadderKind, rungs: Rungs, held: Held) -> Climb {
        Climb {
            ladder: kind,
            rungs,
            confirm: 1,
            held,
            max_seconds: None,
            calibrate_steps: None,
        }
    }

    fn run(c: &Climb) -> (Vec<RungRow>, Finding) {
        let mut target = SqliteRungs::new(crate::sqlite::open_d1_like().unwrap());
        let mut rows = Vec::new();
        let mut id = 1;
        let finding = climb_one(&mut target, TargetKind::Sqlite, c, 0, &mut id, &mut |r| {
            rows.push(r.clone());
            Ok(())
        })
        .unwrap();
        (rows, finding)
    }

    #[test]
    fn param_ceiling_on_sqlite_finds_floor_100_over_c_and_reconciles() {
        for columns in [1, 3, 7, 51, 100] {
            let c = climb(
                LadderKind::ParamCeiling,
                Rungs::Grow {
                    start: 1,
                    factor: 2.0,
                    max: 256,
                    resolution: 1,
                },
                Held {
                    columns: Some(columns),
                    ..Held::default()
                },
            );
            let (rows, finding) = run(&c);
            assert_eq!(finding.last_ok, Some(100 / columns), "C={columns}");
            assert_eq!(finding.first_failed, Some(100 / columns + 1));
            assert_eq!(finding.refusal, "too-many-variables");
            assert_eq!(finding.confirmed, "yes");
            assert!(
                finding.error.contains("too many SQL variables"),
                "{}",
                finding.error
            );
            assert!(rows.iter().all(|r| r.reconciled), "{rows:?}");
        }
    }

    #[test]
    fn a_refusal_at_the_create_table_is_data_and_leaves_no_table() {
        let c = climb(
            LadderKind::Columns,
            Rungs::List(vec![100, 101, 200]),
            Held::default(),
        );
        let (rows, finding) = run(&c);
        assert_eq!(rows.len(), 3);
        assert_eq!(
            (finding.last_ok, finding.first_failed),
            (Some(100), Some(101))
        );
        assert_eq!(finding.statements_completed, Some(0));
        assert!(!rows[1].table_exists);
        assert!(rows.iter().all(|r| r.reconciled));
    }

    #[test]
    fn a_climb_without_a_limit_says_how_far_it_went() {
        let c = climb(
            LadderKind::BatchAccounting,
            Rungs::List(vec![10, 20]),
            Held {
                mode: Some(CallMode::OneAtATime),
                ..Held::default()
            },
        );
        let (rows, finding) = run(&c);
        assert_eq!(
            rows.iter().map(|r| r.rows_present).collect::<Vec<_>>(),
            [10, 20]
        );
        assert_eq!(finding.first_failed, None);
        assert_eq!(finding.stopped, "no refusal up to the cap (20)");
    }

    #[test]
    fn a_dishonest_answer_does_not_reconcile() {
        let rung = RungRequest {
            rung_id: 1,
            ladder: LadderKind::BatchAccounting,
            value: 10,
            held: Held {
                mode: Some(CallMode::Batches),
                batches: Some(2),
                ..Held::default()
            },
        };
        let plan = ladder::plan(&rung);
        let mut tally = ladder::Tally::default();
        tally.succeeded(0.0);
        tally.failed("D1_ERROR: Too many API requests by single Worker invocation.".into());
        let mut result = tally.into_result(1, &plan, 1.0);
        assert_eq!(check_plan(&plan, &result), Ok(()));
        // A refused second batch that claims its rows: the atomicity check catches it.
        result.rows_acknowledged = 10;
        let err = check_plan(&plan, &result).unwrap_err();
        assert!(err.contains("rows acknowledged: expected 5"), "{err}");
        result.rows_acknowledged = 5;
        result.statements_planned = 9;
        assert!(
            check_plan(&plan, &result)
                .unwrap_err()
                .contains("statements planned")
        );
    }
}
