//! A sweep in a dry run: each line (a strategy and series label) with its points, probes and
//! rows; and the weight of its probes by the time each point took in an earlier run, which the
//! wall-time estimate scales by.

use std::collections::HashMap;
use std::fmt::Write;
use std::path::Path;

use d1bench_core::Strategy;

use super::Axis;
use super::schedule::SweepPlan;
use crate::base::TargetKind;
use crate::base::numbers::thousands;
use crate::records::csv;
use crate::studies::dry_run::{compact, count};
use crate::studies::sweep::row::ProbeRow;

/// The sweep's lines, its sessions, then the baseline's.
pub fn lines(out: &mut String, plan: &SweepPlan, axis: Axis, baseline: Option<TargetKind>) {
    sweep_lines(out, plan, axis);
    if let [first, second] = plan.workers[..] {
        writeln!(
            out,
            "each probe sent to the {first} and the {second} Worker, back to back in a shuffled \
             order, both running in every session (`--paired-workers`)"
        )
        .unwrap();
    }
    if plan.sessions > 1 {
        writeln!(
            out,
            "in {} sessions of {} probes, each a fresh target with its own warm-ups and shuffled \
             rounds{}",
            plan.sessions,
            plan.session_probes(0).len(),
            if baseline.is_some() {
                "; the baseline's sessions alternate with the target's (ABBA)"
            } else {
                ""
            }
        )
        .unwrap();
    }
    if let Some(baseline) = baseline {
        let what = match baseline {
            TargetKind::Do => "the Worker's Durable Object in the same wrangler dev",
            TargetKind::Hyperdrive => {
                "the Postgres Worker through its Hyperdrive binding, a private PostgreSQL cluster \
                 started for each session"
            }
            TargetKind::RemoteDo => {
                "the Worker's Durable Object on Cloudflare, deployed afresh each session"
            }
            TargetKind::RemoteHyperdrive => {
                "the Postgres Worker on Cloudflare through a Hyperdrive configuration of the \
                 server in D1BENCH_HYPERDRIVE_URL, both created afresh each session"
            }
            _ => "bare SQLite in-process",
        };
        writeln!(
            out,
            "and the same {} probes on the baseline, {baseline} ({what})",
            plan.probes().len()
        )
        .unwrap();
    }
}

/// D1's limit that sets a strategy's rows per statement, in words with its value; `None` where
/// one row per statement is the strategy itself, or D1 does not run it (COPY).
fn d1_limit(strategy: Strategy) -> Option<&'static str> {
    match strategy {
        Strategy::PerRow | Strategy::BatchedRows | Strategy::Copy => None,
        Strategy::Bound => Some("100 bound parameters"),
        Strategy::Literal | Strategy::Exec => Some("100,000-byte statements"),
        Strategy::Json => Some("2,000,000-byte strings"),
    }
}

/// For a run beside Postgres: each strategy's rows per statement at each point on D1 (and
/// bare SQLite, which plans with D1's limits) and on Postgres, and which limit sets it on
/// each engine, from each engine's own planner; "all" where the probe's rows fit one
/// statement, so no limit binds.
pub fn statement_limits(out: &mut String, plan: &SweepPlan) {
    writeln!(
        out,
        "rows per statement, on D1 | on Postgres (the limit that sets it; `all`: every row of \
         the probe in one statement, no limit reached):"
    )
    .unwrap();
    let mut seen = Vec::new();
    for point in &plan.points {
        for &strategy in &point.strategies {
            let probe = d1bench_core::ProbeRequest {
                strategy,
                ..point.request.clone()
            };
            let key = (strategy, probe.columns, probe.row_bytes, probe.rows);
            if seen.contains(&key) || strategy.one_row_per_statement() {
                continue;
            }
            seen.push(key);
            let engine = |rows_per: usize, limit: String| {
                if rows_per >= probe.rows {
                    format!("all {}", thousands(probe.rows))
                } else {
                    format!("{} ({limit})", thousands(rows_per))
                }
            };
            let d1 = match d1_limit(strategy) {
                Some(limit) => engine(
                    d1bench_core::sql::plan(&probe).rows_per_statement(),
                    limit.to_owned(),
                ),
                None => "no COPY".to_owned(),
            };
            let pg = engine(
                d1bench_core_pg::sql::plan(&probe).rows_per_statement(),
                d1bench_core_pg::sql::binding_limit(strategy, probe.columns).unwrap_or_default(),
            );
            writeln!(
                out,
                "  {:<12} {:>3} columns, {} B rows: {d1} | {pg}",
                strategy.name(),
                probe.columns,
                thousands(probe.row_bytes)
            )
            .unwrap();
        }
    }
}

/// Each line of the sweep: its points (the x values), probes with their warm-ups, rows.
/// What the dry run counts of one line (strategy and label).
#[derive(Debug, Default)]
struct LineTally {
    name: String,
    /// The x values, in order.
    xs: Vec<String>,
    probes: usize,
    warmups: usize,
    rows: usize,
    /// The plan's points the line is drawn at: a grid has several at one x.
    points: Vec<usize>,
}

fn sweep_lines(out: &mut String, plan: &SweepPlan, axis: Axis) {
    // The probes by point, in the experiment file's order, and by strategy as the point lists
    // them (the plan runs them shuffled).
    let mut probes = plan.probes();
    probes.sort_by_key(|p| {
        let strategies = &plan.points[p.point].strategies;
        let strategy = strategies.iter().position(|s| *s == p.request.strategy);
        (p.point, strategy)
    });
    // Lines in the order of the file.
    let mut lines: Vec<LineTally> = Vec::new();
    for p in &probes {
        let name = if p.label.is_empty() {
            p.request.strategy.name().to_owned()
        } else {
            format!("{} ({})", p.request.strategy, p.label)
        };
        let index = match lines.iter().position(|l| l.name == name) {
            Some(i) => i,
            None => {
                lines.push(LineTally {
                    name,
                    ..LineTally::default()
                });
                lines.len() - 1
            }
        };
        let line = &mut lines[index];
        let x = axis.format(axis.of_probe(&p.request));
        if !line.xs.contains(&x) {
            line.xs.push(x);
        }
        if !line.points.contains(&p.point) {
            line.points.push(p.point);
        }
        line.probes += 1;
        line.warmups += usize::from(p.warmup);
        line.rows += p.request.rows;
    }
    let points: usize = lines.iter().map(|l| l.points.len()).sum();
    let warmups: usize = lines.iter().map(|l| l.warmups).sum();
    let rows: usize = lines.iter().map(|l| l.rows).sum();
    writeln!(
        out,
        "{} probes ({} measured, {warmups} warm-ups) at {points} points, {} rows:",
        probes.len(),
        probes.len() - warmups,
        thousands(rows)
    )
    .unwrap();
    let width = lines.iter().map(|l| l.name.len()).max().unwrap_or(0);
    for LineTally {
        name,
        xs,
        probes: n,
        warmups: w,
        rows,
        points,
    } in &lines
    {
        writeln!(
            out,
            "  {name:width$}  {:>10}  {:>11}  {:>13}  {:>15}  {} {}",
            count(points.len(), "point"),
            count(*n, "probe"),
            format!("({})", count(*w, "warm-up")),
            format!("{} rows", thousands(*rows)),
            axis.name(),
            compact(xs)
        )
        .unwrap();
    }
}

/// The plan's probes on `targets`, each weighed by the mean time its point took in the earlier
/// run whose results.csv is `earlier` (inside the target's calls, or on the outside clock in
/// older results); `None` when that run lacks a point of the plan.
pub fn weight(plan: &SweepPlan, earlier: &Path, targets: &[TargetKind]) -> Option<f64> {
    let rows: Vec<ProbeRow> = csv::read(earlier).ok()?;
    // The time inside a probe's calls where results.csv has it (setup and verify included),
    // else its write's time on the outside clock.
    let timed = rows.iter().all(|r| r.calls_ms.is_some());
    let mut times: HashMap<String, (f64, usize)> = HashMap::new();
    for row in &rows {
        let key = point(
            row.target,
            row.strategy,
            &row.label,
            [row.columns, row.row_bytes, row.rows, row.indexes],
            [row.escape_share, row.non_ascii_share],
        );
        let time = times.entry(key).or_default();
        time.0 += match row.calls_ms {
            Some(ms) if timed => ms,
            _ => row.outside_ms,
        };
        time.1 += 1;
    }
    let probes = plan.probes();
    let mut sum = 0.0;
    for &target in targets {
        for p in &probes {
            let r = &p.request;
            let key = point(
                target,
                r.strategy,
                &p.label,
                [r.columns, r.row_bytes, r.rows, r.indexes],
                [r.text.escape_share, r.text.non_ascii_share],
            );
            let (total, n) = times.get(&key)?;
            sum += total / *n as f64;
        }
    }
    Some(sum)
}

/// A point of a sweep on a target: what its probes share.
fn point(
    target: TargetKind,
    strategy: Strategy,
    label: &str,
    counts: [usize; 4],
    shares: [f64; 2],
) -> String {
    format!("{target}|{strategy}|{label}|{counts:?}|{shares:?}")
}
