//! The answer the README leads with: the decision map judged over its replicate sets
//! (`docs/runs/replicates/decision-map/`, the local D1's map beside bare SQLite's, then each of
//! [`BESIDE_SETS`]: `decision-map-do/`, the Durable Object's beside the local D1, and
//! `decision-map-postgres/`, Postgres through Hyperdrive's), drawn into the first set's folder (`decision-map.{png,svg,pdf}` and `decision-map.csv`, the same chart and table a
//! grid run writes, [`decision_table::maps_over_runs`]), and a rule of at most three lines
//! derived from the local map's cells: per class of row size, the column counts where each
//! strategy is the fastest, and how many cells decide.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context, Result};

use crate::base::TargetKind;
use crate::records::csv;
use crate::records::replicates::{REPLICATES_DIR, ReplicateSet};
use crate::studies::sweep::Axis;
use crate::studies::sweep::report::decision_map;
use crate::studies::sweep::report::decision_table::{self, Map};
use crate::studies::sweep::row::ProbeRow;

/// The replicate set the map is judged over.
pub const SET: &str = "decision-map";

/// The replicate sets that give another store's map, in the order the figure shows them after
/// the local D1's and bare SQLite's: each set's name and the store whose map it gives. The
/// Durable Object's is the decision map's command with it as the baseline (`--baseline do`; its
/// local D1 map is a second one, not shown); Postgres's is its own study alone on it
/// (`decision-map-postgres --target hyperdrive --no-baseline`), COPY among its strategies.
pub const BESIDE_SETS: [(&str, TargetKind); 2] = [
    ("decision-map-do", TargetKind::Do),
    ("decision-map-postgres", TargetKind::Hyperdrive),
];

/// Rows at least this long are "large": where literal's one row a statement and its wall are.
const LARGE_ROW_BYTES: f64 = 50_000.0;

/// A set's maps (its target's, then its baseline's) over its runs, and the set; `None` while
/// the set holds fewer than two runs.
fn set_maps(root: &Path, name: &str) -> Result<Option<(ReplicateSet, SetRows, Vec<Map>)>> {
    let Some(set) = ReplicateSet::find(root, name)? else {
        return Ok(None);
    };
    if set.runs.len() < 2 {
        return Ok(None);
    }
    let runs = read_runs(&set)?;
    let target = set.runs[0].record.run.target;
    let maps = decision_table::maps_over_runs(
        &runs,
        &set.schedules(),
        target,
        Axis::Columns,
        Axis::RowBytes,
    );
    Ok(Some((set, runs, maps)))
}

/// Each run's rows of `set`, in the set's order.
fn read_runs(set: &ReplicateSet) -> Result<SetRows> {
    set.runs
        .iter()
        .map(|r| csv::read(&r.dir.results_csv()))
        .collect()
}

/// The maps the README shows, each over its own set: the local D1's and bare SQLite's (from
/// [`SET`]), then the baseline's map of each of [`BESIDE_SETS`] committed; and the sets,
/// [`SET`]'s first. `None` while [`SET`] holds fewer than two runs.
pub fn maps(root: &Path) -> Result<Option<(Vec<ReplicateSet>, Vec<Map>)>> {
    Ok(maps_with_rows(root)?.map(|(sets, maps, _)| (sets, maps)))
}

/// [`maps`], with each set's runs' rows as read for them (in the sets' order), for what else is
/// judged over the same runs without reading them again.
pub fn maps_with_rows(root: &Path) -> Result<Option<MapsWithRows>> {
    let Some((set, rows, mut maps)) = set_maps(root, SET)? else {
        return Ok(None);
    };
    let (mut sets, mut all_rows) = (vec![set], vec![rows]);
    for (name, baseline) in BESIDE_SETS {
        if let Some((set, rows, beside)) = set_maps(root, name)? {
            maps.extend(beside.into_iter().filter(|m| m.target == baseline));
            sets.push(set);
            all_rows.push(rows);
        }
    }
    Ok(Some((sets, maps, all_rows)))
}

/// Which of `sets` (as [`maps_with_rows`] gives them) `map` was judged over: the first whose
/// target or baseline it is (the local D1's map is the first set's target, Postgres's its own
/// set's target), else the first.
pub fn set_of(sets: &[ReplicateSet], map: &Map) -> usize {
    sets.iter()
        .position(|s| {
            let run = &s.runs[0].record.run;
            run.target == map.target || run.baseline == Some(map.target)
        })
        .unwrap_or(0)
}

/// Each run's rows of one set, in the set's order.
pub type SetRows = Vec<Vec<ProbeRow>>;

/// The sets, their maps, and each set's runs' rows.
pub type MapsWithRows = (Vec<ReplicateSet>, Vec<Map>, Vec<SetRows>);

/// Draws the set's map and writes its table into the set's folder (what the README's figure
/// links to); nothing while there is no set.
pub fn write_figure(root: &Path) -> Result<()> {
    let Some((sets, maps)) = maps(root)? else {
        return Ok(());
    };
    let set = &sets[0];
    let csv_path = set.path.join("decision-map.csv");
    std::fs::write(
        &csv_path,
        decision_table::csv(&maps, Axis::Columns, Axis::RowBytes)?,
    )
    .with_context(|| format!("cannot write {}", csv_path.display()))?;
    decision_map::render(&set.path, &maps, Axis::Columns, Axis::RowBytes, false)?;
    Ok(())
}

/// Consecutive column counts with the same label, as `1–8 columns: json`.
fn segments(labels: &[(f64, String)]) -> Vec<String> {
    let mut out: Vec<(f64, f64, String)> = Vec::new();
    for (x, label) in labels {
        match out.last_mut() {
            Some((_, last, l)) if l == label => *last = *x,
            _ => out.push((*x, *x, label.clone())),
        }
    }
    out.into_iter()
        .map(|(first, last, label)| {
            let columns = if first == last {
                format!("{first:.0}")
            } else {
                format!("{first:.0}–{last:.0}")
            };
            let noun = if last == 1.0 { "column" } else { "columns" };
            format!("{columns} {noun} **{label}**")
        })
        .collect()
}

/// One line of the rule: over the cells of `map` whose row size is in `bytes`, per column
/// count the strategy that is the fastest in most of them (`a?` when it decides in none).
fn rule_line(map: &Map, large: bool) -> Option<String> {
    let cells: Vec<_> = map
        .cells
        .iter()
        .filter(|c| (c.y >= LARGE_ROW_BYTES) == large)
        .collect();
    if cells.is_empty() {
        return None;
    }
    let mut xs: Vec<f64> = cells.iter().map(|c| c.x).collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    let labels: Vec<(f64, String)> = xs
        .iter()
        .map(|&x| {
            let at: Vec<_> = cells.iter().filter(|c| c.x == x).collect();
            let mut counts: Vec<(String, usize, usize)> = Vec::new();
            for c in &at {
                let Some(s) = c.verdict.fastest() else {
                    continue;
                };
                let name = s.to_string();
                match counts.iter_mut().find(|(n, ..)| *n == name) {
                    Some((_, n, d)) => {
                        *n += 1;
                        *d += usize::from(c.verdict.decides());
                    }
                    None => counts.push((name, 1, usize::from(c.verdict.decides()))),
                }
            }
            counts.sort_by(|a, b| b.1.cmp(&a.1).then(b.2.cmp(&a.2)));
            let label = counts.first().map_or("nothing".to_owned(), |(n, _, d)| {
                if *d == 0 { format!("{n}?") } else { n.clone() }
            });
            (x, label)
        })
        .collect();
    let mut sizes: Vec<f64> = cells.iter().map(|c| c.y).collect();
    sizes.sort_by(f64::total_cmp);
    sizes.dedup();
    let range = match (sizes.first(), sizes.last()) {
        (Some(a), Some(b)) if a == b => format!("rows of {}", bytes(*a)),
        (Some(a), Some(b)) => format!("rows of {} to {}", bytes(*a), bytes(*b)),
        _ => return None,
    };
    Some(format!("- {range}: {}.", segments(&labels).join("; ")))
}

fn bytes(b: f64) -> String {
    crate::base::numbers::thousands(b as usize) + " bytes"
}

/// What the runs of `set` that replayed one order of probes do to its intervals, when two or
/// more did: ", 15 of 15 replaying one order ([why](...))"; empty when each had its own.
fn one_order(set: &ReplicateSet) -> String {
    let schedules = set.schedules();
    let mut counts: std::collections::BTreeMap<u64, usize> = std::collections::BTreeMap::new();
    for seed in schedules.0.iter().flatten() {
        *counts.entry(*seed).or_default() += 1;
    }
    match counts.into_values().max() {
        Some(most) if most >= 2 => format!(
            ", {most} of {} on one order of probes \
             ([why](docs/findings-over-runs.md#one-order-of-probes))",
            set.runs.len()
        ),
        _ => String::new(),
    }
}

/// The README's answer section: the figure and the rule, from the set; a line saying the map
/// is still one run's while there is no set.
pub fn section(root: &Path) -> Result<String> {
    let Some((sets, maps)) = maps(root)? else {
        return Ok(format!(
            "The decision map over replicate runs is not committed yet (`{REPLICATES_DIR}/{SET}/`, \
             made by `cargo xtask reproduce --replicates 3 --only {SET}`): see the one run in \
             [`docs/runs/decision-map/`](docs/runs/decision-map/summary.md).\n"
        ));
    };
    let local = &maps[0];
    let dir = format!("{REPLICATES_DIR}/{SET}");
    // The commits of the runs the sentence is about: the local D1's set (the other maps' are in
    // findings-over-runs.md, beside their own runs).
    let mut commits: Vec<String> = Vec::new();
    for r in &sets[0].runs {
        let short: String = r.record.git.commit.to_string().chars().take(7).collect();
        if !commits.contains(&short) {
            commits.push(short);
        }
    }
    let on: Vec<&str> = maps.iter().map(|m| m.target.prose()).collect();
    let mut out = format!(
        "![Which strategy to use, per column count and row size, on {}]({dir}/{}.png)\n\n",
        and_list(&on),
        decision_map::NAME
    );
    writeln!(
        out,
        "**Which strategy to use** on {}, over {} ([`{dir}/`]({dir}/decision-map.csv), {} \
         `{}`; `a = b`: within ±10% by two one-sided tests; `?`: the runs cannot tell{}):\n",
        local.target.prose(),
        sets[0].made(),
        if commits.len() == 1 {
            "commit"
        } else {
            "commits"
        },
        commits.join("`, `"),
        one_order(&sets[0]),
    )
    .unwrap();
    for large in [false, true] {
        if let Some(line) = rule_line(local, large) {
            out.push_str(&line);
            out.push('\n');
        }
    }
    let counts: Vec<String> = maps
        .iter()
        .map(|m| {
            let (decided, cells) = m.decided();
            let runs = sets[set_of(&sets, m)].runs.len();
            format!("{} {decided}/{cells} ({runs} runs)", m.target.prose())
        })
        .collect();
    writeln!(
        out,
        "- cells deciding (a winner's interval over runs excludes 1, or a set within ±10%; \
         Benjamini–Hochberg per map): {}; `cargo xtask advise --columns C --row-bytes B` \
         answers for your table.",
        counts.join(", ")
    )
    .unwrap();
    Ok(out)
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consecutive_column_counts_with_one_answer_are_one_segment() {
        let labels: Vec<(f64, String)> = [
            (1.0, "json"),
            (2.0, "json"),
            (4.0, "bound"),
            (8.0, "literal"),
            (16.0, "literal"),
        ]
        .iter()
        .map(|(x, l)| (*x, l.to_string()))
        .collect();
        assert_eq!(
            segments(&labels),
            [
                "1–2 columns **json**",
                "4 columns **bound**",
                "8–16 columns **literal**"
            ]
        );
    }
}
