//! The limits parity table: for each documented D1 limit, the value a ladder found on a target,
//! whether the target enforces it, and the error text it answered with; and the table of
//! `docs/limits.md`, generated from committed parity tables of real runs.
//!
//! `cargo xtask parity-readme --local <run-dir> [--sqlite <run-dir>]` copies the runs'
//! `parity.csv` into `reports/parity-<target>.csv` ([`committed`]) and rewrites the generated
//! sections ([`crate::readme`], which also checks that docs/limits.md's table is
//! [`expected_section`]).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::Result;
use d1bench_core::ladder::LadderKind;
use d1bench_core::limits::bound_rows_per_statement;
use d1bench_core::{Outcome, RefusalKind};
use serde::{Deserialize, Serialize};

use crate::base::numbers::thousands;
use crate::base::text::serde_as_text;
use crate::paths::Paths;
use crate::records::csv::read as read_csv;
use crate::records::run_record::Revision;
use crate::studies::ladder::row::{ClimbFinding, Stop};

/// One limit on one target: a row of `parity.csv`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParityRow {
    /// The limit, as Cloudflare's documentation names it.
    pub limit: String,
    /// The ladder that climbed it.
    pub ladder: LadderKind,
    pub documented: String,
    /// What the climbs found on this target.
    pub found: String,
    /// Whether the target enforced the limit, and where.
    pub enforced: Enforced,
    /// The refusal kind of the first refusal, or empty.
    pub refusal: Option<RefusalKind>,
    /// The first refusal's error text, verbatim, or empty.
    pub error: String,
    /// Where the row came from: the run's id, its commit, and the versions it ran on (each
    /// empty in tables written before they were kept).
    #[serde(default)]
    pub run: String,
    #[serde(default)]
    pub commit: Option<Revision>,
    #[serde(default)]
    pub versions: String,
}

/// Whether a target enforced a documented limit, as the parity table says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Enforced {
    /// `yes`: refused just past the documented value.
    Yes,
    /// `yes, at N`: refused, with N the largest value that succeeded.
    At(usize),
    /// `yes, already at the first rung (N)`: the first value tried, N, was refused.
    AtFirstRung(usize),
    /// `no`: no climb was refused.
    No,
    /// `stopped by ..., not by this limit`: another refusal, or an error (`None`), came first.
    StoppedBy(Option<RefusalKind>),
}

impl Enforced {
    const AT: &str = "yes, at ";
    const FIRST_RUNG: (&str, &str) = ("yes, already at the first rung (", ")");
    const STOPPED_BY: (&str, &str) = ("stopped by ", ", not by this limit");
    /// What `StoppedBy(None)` names.
    const AN_ERROR: &str = "an error";
}

impl std::fmt::Display for Enforced {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (first, stopped) = (Enforced::FIRST_RUNG, Enforced::STOPPED_BY);
        match self {
            Enforced::Yes => f.write_str("yes"),
            Enforced::At(v) => write!(f, "{}{}", Enforced::AT, thousands(*v)),
            Enforced::AtFirstRung(v) => write!(f, "{}{}{}", first.0, thousands(*v), first.1),
            Enforced::No => f.write_str("no"),
            Enforced::StoppedBy(None) => {
                write!(f, "{}{}{}", stopped.0, Enforced::AN_ERROR, stopped.1)
            }
            Enforced::StoppedBy(Some(kind)) => write!(f, "{}{kind}{}", stopped.0, stopped.1),
        }
    }
}

impl std::str::FromStr for Enforced {
    type Err = String;
    /// The text [`Enforced`]'s `Display` writes.
    fn from_str(s: &str) -> Result<Enforced, String> {
        let between = |(before, after): (&str, &str)| s.strip_prefix(before)?.strip_suffix(after);
        let number = |n: &str| n.replace(',', "").parse::<usize>().ok();
        let parsed = if s == "yes" {
            Some(Enforced::Yes)
        } else if s == "no" {
            Some(Enforced::No)
        } else if let Some(n) = between(Enforced::FIRST_RUNG) {
            number(n).map(Enforced::AtFirstRung)
        } else if let Some(n) = s.strip_prefix(Enforced::AT) {
            number(n).map(Enforced::At)
        } else if let Some(what) = between(Enforced::STOPPED_BY) {
            if what == Enforced::AN_ERROR {
                Some(Enforced::StoppedBy(None))
            } else {
                what.parse()
                    .ok()
                    .map(|kind| Enforced::StoppedBy(Some(kind)))
            }
        } else {
            None
        };
        parsed.ok_or_else(|| {
            format!(
                "`{s}` is not whether a limit was enforced: expected `yes`, `yes, at N`, \
                 `{}N{}`, `no` or `{}<refusal kind or {}>{}`",
                Enforced::FIRST_RUNG.0,
                Enforced::FIRST_RUNG.1,
                Enforced::STOPPED_BY.0,
                Enforced::AN_ERROR,
                Enforced::STOPPED_BY.1
            )
        })
    }
}

serde_as_text!(Enforced);

/// The run a parity table comes from, as its rows carry it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    pub run: String,
    /// The commit, and whether tracked files differed from it.
    pub commit: Option<Revision>,
    /// What the target ran on: d1bench, and wrangler, workerd and the worker crate for targets
    /// that run the Worker, or the bundled SQLite for the sqlite target.
    pub versions: String,
}

impl Source {
    pub fn of(record: &crate::records::RunRecord) -> Source {
        let v = &record.versions;
        let mut versions = vec![format!("d1bench {}", v.d1bench)];
        if record.run.target.runs_the_worker() {
            versions.push(format!("wrangler {}", v.wrangler));
            versions.push(format!("workerd {}", v.workerd));
            versions.push(format!("worker crate {}", v.worker_crate));
        } else {
            versions.push(format!("SQLite {}", v.sqlite));
        }
        if let Some(server) = record
            .run
            .target
            .is_postgres()
            .then(|| v.worker.split_once("PostgreSQL "))
            .flatten()
        {
            versions.push(format!("PostgreSQL {}", server.1));
        }
        versions.push(v.rustc.clone());
        Source {
            run: record.run.id.clone(),
            commit: Some(record.git.revision()),
            versions: versions.join("; "),
        }
    }

    /// The source every row of a committed table names, or `None` when a row names none or the
    /// rows disagree.
    fn of_rows(rows: &[ParityRow]) -> Option<Source> {
        let first = rows.first()?;
        let source = Source {
            run: first.run.clone(),
            commit: first.commit.clone(),
            versions: first.versions.clone(),
        };
        let named =
            !source.run.is_empty() && source.commit.is_some() && !source.versions.is_empty();
        let agree = rows.iter().all(|r| {
            r.run == source.run && r.commit == source.commit && r.versions == source.versions
        });
        (named && agree).then_some(source)
    }
}

/// A value in a ladder's unit, as a reader says it.
fn amount(kind: LadderKind, value: usize) -> String {
    let unit = match kind {
        LadderKind::StatementLength
        | LadderKind::RowSize
        | LadderKind::JsonPayload
        | LadderKind::LikePattern
        | LadderKind::ResultSize => "bytes",
        LadderKind::QueryDuration => return format!("{:.1} s", value as f64 / 1_000.0),
        _ => kind.unit(),
    };
    format!("{} {unit}", thousands(value))
}

/// What one climb found, in words.
fn found(kind: LadderKind, f: &ClimbFinding) -> String {
    match (f.last_ok, f.first_failed) {
        (last_ok, Some(failed)) => {
            let verb = if f.outcome == Some(Outcome::Refused) {
                "refused"
            } else {
                "failed"
            };
            match last_ok {
                Some(ok) => format!("{} ok, {} {verb}", amount(kind, ok), thousands(failed)),
                None => format!("{verb} already at {}", amount(kind, failed)),
            }
        }
        (Some(ok), None) => {
            let took = match (kind, f.ok_ms()) {
                (LadderKind::QueryDuration, Some(ms)) => {
                    return format!("no refusal up to a query that ran {:.1} s", ms / 1_000.0);
                }
                (LadderKind::BatchCeiling | LadderKind::ConcurrentCalls, Some(_)) => f
                    .ok_outside_ms
                    .map(|ms| format!(" (it took {} ms)", thousands(ms.round() as usize)))
                    .unwrap_or_default(),
                _ => String::new(),
            };
            let why = if matches!(f.stopped, Stop::TimeBudget(_)) {
                ", where the time budget ended the climb"
            } else {
                ""
            };
            format!("no refusal up to {}{took}{why}", amount(kind, ok))
        }
        (None, None) => format!("not measured: {}", f.stopped),
    }
}

/// The parity rows of a run's findings, one per ladder, in [`LadderKind::ALL`] order.
pub fn rows(findings: &[ClimbFinding], source: &Source) -> Vec<ParityRow> {
    let mut by_ladder: BTreeMap<LadderKind, Vec<&ClimbFinding>> = BTreeMap::new();
    for f in findings {
        by_ladder.entry(f.ladder).or_default().push(f);
    }
    LadderKind::ALL
        .into_iter()
        .filter_map(|kind| by_ladder.get(&kind).map(|fs| row(kind, fs, source)))
        .collect()
}

fn row(kind: LadderKind, fs: &[&ClimbFinding], source: &Source) -> ParityRow {
    let documented = kind.documented();
    let failures: Vec<&&ClimbFinding> = fs.iter().filter(|f| f.first_failed.is_some()).collect();
    let first = failures.first();
    // Without a known text (result-size, concurrent-calls) any classified refusal is the limit's.
    let unexpected = |f: &ClimbFinding| match kind.expected_refusal() {
        Some(expected) => f.refusal != Some(expected),
        None => matches!(f.refusal, None | Some(RefusalKind::Other)),
    };
    let enforced = if failures.is_empty() {
        Enforced::No
    } else if let Some(other) = failures.iter().find(|f| unexpected(f)) {
        Enforced::StoppedBy(match other.refusal {
            None | Some(RefusalKind::Other) => None,
            Some(kind) => Some(kind),
        })
    } else {
        let wanted = |f: &ClimbFinding| match kind {
            LadderKind::ParamCeiling => Some(Ceiling::of(f).rows(f.columns.unwrap_or(1))),
            _ => documented.value,
        };
        let off = failures
            .iter()
            .find(|f| wanted(f).is_some_and(|w| f.last_ok != Some(w)));
        match off {
            None => Enforced::Yes,
            Some(f) => match f.last_ok {
                Some(v) => Enforced::At(v),
                None => Enforced::AtFirstRung(f.first_failed.unwrap_or(0)),
            },
        }
    };
    let found = if kind == LadderKind::ParamCeiling {
        param_ceiling_found(fs)
    } else if fs.len() == 1 {
        found(kind, fs[0])
    } else {
        fs.iter()
            .map(|f| format!("{}: {}", f.held, found(kind, f)))
            .collect::<Vec<_>>()
            .join("; ")
    };
    ParityRow {
        limit: kind.limit().to_owned(),
        ladder: kind,
        documented: documented.text.to_owned(),
        found,
        enforced,
        refusal: first.and_then(|f| f.refusal),
        error: first.map(|f| f.error.clone()).unwrap_or_default(),
        run: source.run.clone(),
        commit: source.commit.clone(),
        versions: source.versions.clone(),
    }
}

/// The rows per bound statement a target's parameter limit allows at C columns: D1's
/// floor(100 / C), or Postgres's floor(65,535 / C) on the hyperdrive targets; what the parity
/// row, the summary and the chart hold a param-ceiling climb against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ceiling {
    D1,
    Postgres,
}

impl Ceiling {
    pub fn of(f: &ClimbFinding) -> Ceiling {
        if f.target.is_postgres() {
            Ceiling::Postgres
        } else {
            Ceiling::D1
        }
    }

    pub fn rows(self, columns: usize) -> usize {
        match self {
            Ceiling::D1 => bound_rows_per_statement(columns),
            Ceiling::Postgres => d1bench_core_pg::limits::bound_rows_per_statement(columns),
        }
    }

    pub fn formula(self) -> &'static str {
        match self {
            Ceiling::D1 => "floor(100/C)",
            Ceiling::Postgres => "floor(65,535/C)",
        }
    }

    /// The limit the formula comes from, as a chart's reference line names it.
    pub fn limit(self) -> &'static str {
        match self {
            Ceiling::D1 => "the documented 100 parameters",
            Ceiling::Postgres => "Postgres's 65,535 parameters",
        }
    }
}

/// param-ceiling: the most parameters that ran, and whether every column count's ceiling was
/// the target's floor(P / C) rows ([`Ceiling`]).
fn param_ceiling_found(fs: &[&ClimbFinding]) -> String {
    let ceiling = fs.first().map_or(Ceiling::D1, |f| Ceiling::of(f));
    let most = fs
        .iter()
        .filter_map(|f| Some(f.last_ok? * f.columns?))
        .max()
        .unwrap_or(0);
    let off: Vec<String> = fs
        .iter()
        .filter(|f| {
            f.last_ok != Some(ceiling.rows(f.columns.unwrap_or(1))) || f.first_failed.is_none()
        })
        .map(|f| {
            format!(
                "C={}: {} rows",
                f.columns.unwrap_or(0),
                f.last_ok.map_or("none".to_owned(), thousands)
            )
        })
        .collect();
    if off.is_empty() {
        format!(
            "{} parameters: the ceiling was {} rows at each of the {} column counts tried",
            thousands(most),
            ceiling.formula(),
            fs.len()
        )
    } else {
        format!(
            "{} parameters at most; not {} at {}",
            thousands(most),
            ceiling.formula(),
            off.join(", ")
        )
    }
}

fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

fn code(text: &str) -> String {
    if text.is_empty() {
        "-".to_owned()
    } else {
        format!("`{}`", cell(text))
    }
}

/// A run's parity table in Markdown.
pub fn markdown(rows: &[ParityRow]) -> String {
    let mut out = String::from(
        "| limit | documented | found here | enforced here? | error text |\n| --- | --- | --- | --- | --- |\n",
    );
    for r in rows {
        writeln!(
            out,
            "| {} | {} | {} | {} | {} |",
            cell(&r.limit),
            cell(&r.documented),
            cell(&r.found),
            cell(&r.enforced.to_string()),
            code(&r.error)
        )
        .unwrap();
    }
    out
}

/// What a target's committed parity table is called (`reports/parity-<name>.csv`): its name,
/// but `postgres` for the hyperdrive target (the column says what it measures, not the binding).
pub fn table_name(target: crate::base::TargetKind) -> &'static str {
    match target {
        crate::base::TargetKind::Hyperdrive => "postgres",
        other => other.name(),
    }
}

/// The committed parity tables docs/limits.md's table is generated from.
pub fn committed(paths: &Paths, target: &str) -> PathBuf {
    paths.reports().join(format!("parity-{target}.csv"))
}

/// The committed tables beside the local one: each `None` until its run's parity.csv is
/// committed.
#[derive(Debug, Clone, Copy, Default)]
pub struct Beside<'a> {
    /// `--target do`: the Durable Object's SQLite.
    pub durable: Option<&'a [ParityRow]>,
    /// `--target hyperdrive`: Postgres through the Hyperdrive binding.
    pub postgres: Option<&'a [ParityRow]>,
    /// `--target remote`: Cloudflare.
    pub remote: Option<&'a [ParityRow]>,
}

/// A cell of a column beside the local one: what its run found, with the error text it saw;
/// `absent` when its run has no row for the ladder.
fn beside_cell(rows: Option<&[ParityRow]>, ladder: LadderKind, absent: &str) -> String {
    match rows {
        None => "not yet measured".to_owned(),
        Some(rows) => rows.iter().find(|s| s.ladder == ladder).map_or_else(
            || absent.to_owned(),
            |s| match &s.error {
                e if e.is_empty() => cell(&s.found),
                e => format!("{} ({})", cell(&s.found), code(e)),
            },
        ),
    }
}

/// The docs/limits.md section: the local table, with the SQLite baseline, the Durable Object,
/// Postgres through Hyperdrive and Cloudflare beside it.
pub fn readme_section(local: &[ParityRow], sqlite: &[ParityRow], beside: Beside<'_>) -> String {
    let Beside {
        durable,
        postgres,
        remote,
    } = beside;
    let mut out = String::from(
        "| limit | documented | local (wrangler dev) | enforced locally? | in-process SQLite, D1's limits applied | a Durable Object's SQLite (wrangler dev) | Postgres through Hyperdrive (wrangler dev) | Cloudflare (remote) | error text seen locally |\n\
         | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n",
    );
    for r in local {
        let baseline = sqlite.iter().find(|s| s.ladder == r.ladder).map_or_else(
            || "n/a (not an SQLite limit)".to_owned(),
            |s| cell(&s.found),
        );
        let on_do = beside_cell(durable, r.ladder, "not measured in that run");
        let on_postgres = beside_cell(
            postgres,
            r.ladder,
            if d1bench_core_pg_ladder::runs_on_postgres(r.ladder) {
                "not measured in that run"
            } else {
                "n/a (no such limit on Postgres)"
            },
        );
        let production = match remote {
            None => "not yet measured".to_owned(),
            Some(rows) => rows.iter().find(|s| s.ladder == r.ladder).map_or_else(
                || "not measured in that run".to_owned(),
                |s| {
                    format!(
                        "{} (enforced: {})",
                        cell(&s.found),
                        cell(&s.enforced.to_string())
                    )
                },
            ),
        };
        writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            cell(&r.limit),
            cell(&r.documented),
            cell(&r.found),
            cell(&r.enforced.to_string()),
            baseline,
            on_do,
            on_postgres,
            production,
            code(&r.error)
        )
        .unwrap();
    }
    out.push_str("\nMeasured by ");
    let mut sources = vec![("local", local), ("SQLite", sqlite)];
    if let Some(durable) = durable {
        sources.push(("Durable Object", durable));
    }
    if let Some(postgres) = postgres {
        sources.push(("Postgres", postgres));
    }
    if let Some(remote) = remote {
        sources.push(("Cloudflare", remote));
    }
    let described: Vec<String> = sources
        .into_iter()
        .filter(|(_, rows)| !rows.is_empty())
        .map(|(target, rows)| match Source::of_rows(rows) {
            Some(s) => format!(
                "{target}: run `{}` at commit `{}` ({})",
                s.run,
                s.commit.as_ref().map_or("", |c| c.commit.short(7)),
                s.versions
            ),
            None => format!("{target}: a run its table does not name"),
        })
        .collect();
    out.push_str(&described.join("; "));
    out.push_str(".\n");
    out
}

/// The docs/limits.md section as the committed tables say it should read.
pub fn expected_section(paths: &Paths) -> Result<String> {
    let local: Vec<ParityRow> = read_csv(&committed(paths, "local"))?;
    let sqlite_path = committed(paths, "sqlite");
    let sqlite: Vec<ParityRow> = if sqlite_path.exists() {
        read_csv(&sqlite_path)?
    } else {
        Vec::new()
    };
    let optional = |target: &str| -> Result<Option<Vec<ParityRow>>> {
        let path = committed(paths, target);
        Ok(if path.exists() {
            Some(read_csv(&path)?)
        } else {
            None
        })
    };
    let (durable, postgres, remote) = (optional("do")?, optional("postgres")?, optional("remote")?);
    Ok(readme_section(
        &local,
        &sqlite,
        Beside {
            durable: durable.as_deref(),
            postgres: postgres.as_deref(),
            remote: remote.as_deref(),
        },
    ))
}

#[cfg(test)]
mod tests;
