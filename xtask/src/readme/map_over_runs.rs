//! The decision map's section of `docs/findings-over-runs.md`: per map (the local D1, bare
//! SQLite, the Durable Object) how its cells decide over the runs of its replicate set, the runs
//! an undecided cell would need, the share of each cell's variance that lies between runs, the
//! map's A/A test (its runs in two halves balanced in time, each cell's runner-up ÷ fastest
//! judged between them, [`halves_test`]), where each strategy is the fastest, and the cells
//! where two maps name different strategies.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use anyhow::Result;
use d1bench_core::Strategy;

use super::answer;
use crate::stats::CONFIDENCE;
use crate::stats::halves::halves_test;
use crate::stats::order::median;
use crate::stats::runs::over_runs;
use crate::studies::sweep::report::decision::Cell;
use crate::studies::sweep::report::decision_table::Map;
use crate::studies::sweep::report::points::Measure;
use crate::studies::sweep::report::verdict::Verdict;
use crate::studies::sweep::row::ProbeRow;

/// One cell's runner-up ÷ fastest in each run: per run, per session, the median of the
/// sessions' paired repeats' ratios (the map's own measure), sessions in the order they ran.
fn sessions_by_run(runs: &[Vec<ProbeRow>], map: &Map, cell: &Cell) -> Option<Vec<Vec<f64>>> {
    let (fastest, runner_up) = (cell.fastest()?, cell.runner_up()?);
    let here = |r: &&ProbeRow, s: Strategy| {
        r.target == map.target
            && r.strategy == s
            && r.columns as f64 == cell.x
            && r.row_bytes as f64 == cell.y
            && r.counts()
            && r.orm.is_none()
    };
    let mut out = Vec::new();
    for rows in runs {
        let times = |s: Strategy| -> BTreeMap<(usize, usize), f64> {
            rows.iter()
                .filter(|r| here(r, s))
                .filter_map(|r| Some(((r.session, r.repeat), Measure::MsPer1000Rows.value(r)?)))
                .collect()
        };
        let (a, b) = (times(runner_up), times(fastest));
        let mut by_session: BTreeMap<usize, Vec<f64>> = BTreeMap::new();
        for (key, value) in &a {
            if let Some(d) = b.get(key).filter(|d| **d > 0.0) {
                by_session.entry(key.0).or_default().push(value / d);
            }
        }
        let sessions: Vec<f64> = by_session.values().filter_map(|v| median(v)).collect();
        if !sessions.is_empty() {
            out.push(sessions);
        }
    }
    (out.len() >= 2).then_some(out)
}

/// `median (low–high)` of `values`, `-` when empty.
fn spread(values: &mut [f64], format: impl Fn(f64) -> String) -> String {
    values.sort_by(f64::total_cmp);
    match (median(values), values.first(), values.last()) {
        (Some(m), Some(lo), Some(hi)) => format!("{} ({}–{})", format(m), format(*lo), format(*hi)),
        _ => "-".into(),
    }
}

/// A factor in two significant figures or as a whole number: `×1.4`, `×72`.
fn factor(f: f64) -> String {
    if f >= 10.0 {
        format!("×{f:.0}")
    } else {
        format!("×{f:.2}")
    }
}

/// What the A/A could have caught: past ×100 (two runs a half: Welch's t on about one degree of
/// freedom, ×414,013 with decision-map-postgres's four runs) the factor says nothing a reader can
/// use, so it says why instead.
fn detectable(f: f64) -> String {
    if f > 100.0 {
        "none below ×100: too few runs a half".into()
    } else {
        factor(f)
    }
}

fn percent(share: f64) -> String {
    format!("{:.0}%", share * 100.0)
}

/// One map's line of the table.
fn map_line(out: &mut String, map: &Map, runs: &[Vec<ProbeRow>]) {
    let count = |f: fn(&Verdict) -> bool| map.cells.iter().filter(|c| f(&c.verdict)).count();
    let winners = count(|v| matches!(v, Verdict::Winner { .. }));
    let equivalent = count(|v| matches!(v, Verdict::Equivalent { .. }));
    let only = count(|v| matches!(v, Verdict::Only(_)));
    let undecided = count(|v| matches!(v, Verdict::Undecided { .. }));
    let mut needed: Vec<f64> = map
        .cells
        .iter()
        .filter_map(|c| match c.verdict {
            Verdict::Undecided {
                needed: Some((n, _)),
                ..
            } => Some(n as f64),
            _ => None,
        })
        .collect();
    let out_of_reach = undecided - needed.len();
    let per_cell: Vec<Vec<Vec<f64>>> = map
        .cells
        .iter()
        .filter_map(|c| sessions_by_run(runs, map, c))
        .collect();
    let mut shares: Vec<f64> = per_cell
        .iter()
        .filter_map(|r| over_runs(r, CONFIDENCE).map(|o| o.between_share()))
        .collect();
    let run_values: Vec<Vec<f64>> = per_cell
        .iter()
        .filter_map(|r| over_runs(r, CONFIDENCE).map(|o| o.per_run))
        .collect();
    let aa = halves_test(&run_values);
    let mut needed_text = spread(&mut needed, |n| format!("{n:.0}"));
    if out_of_reach > 0 {
        write!(needed_text, "; {out_of_reach} past reach").unwrap();
    }
    writeln!(
        out,
        "| {} | {} | {winners} | {equivalent} | {only} | {undecided} | {needed_text} | {} | {} of \
         {} ({} alone at 5%, ~{} by chance; could catch {}) |",
        map.target.prose(),
        map.cells.len(),
        spread(&mut shares, percent),
        aa.called,
        aa.judged,
        aa.alone,
        aa.alone_by_chance(),
        aa.detectable.map_or("-".into(), detectable),
    )
    .unwrap();
}

/// Where each strategy is the fastest on `map`: cells, of which decided.
fn where_fastest(out: &mut String, map: &Map) {
    let mut counts: Vec<(Strategy, usize, usize)> = Vec::new();
    for cell in &map.cells {
        let Some(s) = cell.verdict.fastest() else {
            continue;
        };
        match counts.iter_mut().find(|(x, ..)| *x == s) {
            Some((_, n, d)) => {
                *n += 1;
                *d += usize::from(cell.verdict.decides());
            }
            None => counts.push((s, 1, usize::from(cell.verdict.decides()))),
        }
    }
    counts.sort_by_key(|c| std::cmp::Reverse(c.1));
    let parts: Vec<String> = counts
        .iter()
        .map(|(s, n, d)| format!("{s} {n} ({d})"))
        .collect();
    writeln!(out, "- **{}:** {}.", map.target.prose(), parts.join(", ")).unwrap();
}

/// The strategies a decided cell names: the winner, the only one, or the equivalent set.
fn named(verdict: &Verdict) -> Option<Vec<Strategy>> {
    match verdict {
        Verdict::Winner { fastest, .. } | Verdict::Only(fastest) => Some(vec![*fastest]),
        Verdict::Equivalent { set, .. } => Some(set.clone()),
        _ => None,
    }
}

/// The cells where `a` and `b` both decide and name no strategy in common: shown apart.
fn apart(a: &Map, b: &Map) -> Vec<String> {
    a.cells
        .iter()
        .filter_map(|ca| {
            let cb = b.cells.iter().find(|c| c.x == ca.x && c.y == ca.y)?;
            let (na, nb) = (named(&ca.verdict)?, named(&cb.verdict)?);
            na.iter().all(|s| !nb.contains(s)).then(|| {
                format!(
                    "{:.0} column{} × {} B: {} against {}",
                    ca.x,
                    if ca.x == 1.0 { "" } else { "s" },
                    crate::base::numbers::thousands(ca.y as usize),
                    ca.answer(),
                    cb.answer()
                )
            })
        })
        .collect()
}

/// The command a set's runs share: the first run's, with the value of `--seed` and of
/// `--order-seed` written `N` where the runs' differ (each run its own, as `cargo xtask
/// reproduce --replicates` makes them), so the line does not name one run's seed for all.
fn shared_command(set: &crate::records::replicates::ReplicateSet) -> String {
    let runs: Vec<Vec<String>> = set
        .runs
        .iter()
        .map(|r| crate::reports::provenance::command_args(&r.record))
        .collect();
    // The value a run gives `flag`, found by the flag and not by its place in the line.
    let value = |args: &[String], flag: &str| {
        let at = args.iter().position(|a| a == flag)?;
        args.get(at + 1).cloned()
    };
    let first = &runs[0];
    let words: Vec<String> = first
        .iter()
        .enumerate()
        .map(|(i, word)| {
            let flag = i.checked_sub(1).map(|f| first[f].as_str());
            let varies = matches!(flag, Some("--seed" | "--order-seed"))
                && runs
                    .iter()
                    .any(|r| value(r, flag.unwrap()).as_ref() != Some(word));
            if varies {
                "N".to_owned()
            } else {
                crate::base::text::shell_word(word)
            }
        })
        .collect();
    format!("cargo xtask {}", words.join(" "))
}

/// The section's text, from the sets under `root`.
pub fn section(root: &Path) -> Result<String> {
    let mut out = String::from("\n## decision-map\n\n");
    let Some((sets, maps, rows)) = answer::maps_with_rows(root)? else {
        out.push_str(
            "No decision-map set of two runs or more is committed yet; `cargo xtask reproduce \
             --replicates 5 --only decision-map` makes one.\n",
        );
        return Ok(out);
    };
    for set in &sets {
        let ids: Vec<String> = set
            .runs
            .iter()
            .map(|r| format!("`{}`", r.record.run.id))
            .collect();
        writeln!(
            out,
            "- `{}`: {} runs of `{}` ({}); {}.",
            set.path.strip_prefix(root).unwrap_or(&set.path).display(),
            set.runs.len(),
            shared_command(set),
            ids.join(", "),
            super::replicates::host_speeds(set)
        )
        .unwrap();
    }
    out.push_str(
        "\nEach cell's verdict over runs (each run's value the geometric mean of its sessions', \
         each session's the median of its paired repeats' ratios of runner-up ÷ fastest; \
         Student's t over the runs, with the places' term where runs shared one order of probes \
         ([One order of probes](#one-order-of-probes)); two one-sided tests against ±10% for an \
         equivalent set; \
         Benjamini–Hochberg at 5% over each map's cells). The between-run share is the part of \
         a session's variance of runner-up ÷ fastest that lies between runs. The A/A test \
         splits each map's runs into two halves balanced in time and judges each cell's \
         runner-up ÷ fastest between them (Welch's t on the logs, Benjamini–Hochberg over the \
         cells): nothing differs by construction, though halves that replayed one order share \
         its places' effects, which makes them agree more easily.\n\n",
    );
    out.push_str(
        "| map | cells | winner | equivalent set | only one | undecided | runs a decision would \
         need (median, range) | between-run share (median, range) | A/A: cells called \
         different |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n",
    );
    let of = |map: &Map| -> &Vec<Vec<ProbeRow>> { &rows[answer::set_of(&sets, map)] };
    for map in &maps {
        map_line(&mut out, map, of(map));
    }
    out.push_str("\nWhere each strategy is the fastest (cells, of them decided in brackets):\n\n");
    for map in &maps {
        where_fastest(&mut out, map);
    }
    out.push_str(
        "\nWhere two maps are shown apart (both decide, and name no strategy in common):\n\n",
    );
    for other in &maps[1..] {
        let cells = apart(&maps[0], other);
        let list = if cells.is_empty() {
            "none".to_owned()
        } else {
            cells.join("; ")
        };
        writeln!(
            out,
            "- {} against {}, {} cell{}: {list}.",
            maps[0].target.prose(),
            other.target.prose(),
            cells.len(),
            if cells.len() == 1 { "" } else { "s" }
        )
        .unwrap();
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sets_command_writes_n_for_the_seeds_its_runs_do_not_share() {
        let runs = [
            "docs/runs/replicates/decision-map/20261207T151812Z-local",
            "docs/runs/replicates/decision-map/20261207T152954Z-local",
        ];
        let root = crate::readme::replicates::fixture("decision-map", &runs);
        let set = crate::readme::replicates::DECISION_MAP
            .read(root.path())
            .unwrap()
            .unwrap();
        let command = shared_command(&set);
        assert!(command.ends_with("--seed N --order-seed N"), "{command}");
        // One run: its own seeds, as they were.
        let root = crate::readme::replicates::fixture("decision-map", &runs[..1]);
        let set = crate::records::replicates::ReplicateSet::read(
            &root.path().join("docs/runs/replicates/decision-map"),
        )
        .unwrap();
        let command = shared_command(&set);
        assert!(command.ends_with("--seed 21 --order-seed 21"), "{command}");
    }

    #[test]
    fn without_a_set_the_section_says_how_to_make_one_and_with_one_it_has_a_line_per_map() {
        let empty = tempfile::tempdir().unwrap();
        let text = section(empty.path()).unwrap();
        assert!(text.contains("--only decision-map` makes one"), "{text}");
        let root = crate::paths::project_root();
        let text = section(&root).unwrap();
        let (_, maps) = answer::maps(&root).unwrap().unwrap();
        for map in &maps {
            let line = format!("| {} | {} |", map.target.prose(), map.cells.len());
            assert!(text.contains(&line), "{line} in {text}");
        }
        assert!(text.contains("A/A: cells called different"), "{text}");
    }

    #[test]
    fn factors_keep_two_decimals_below_ten() {
        assert_eq!(factor(1.456), "×1.46");
        assert_eq!(factor(71.55), "×72");
    }
}
