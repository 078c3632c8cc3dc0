//! The README's sentence on COPY FROM STDIN, from Postgres's own decision map over its replicate
//! set (`decision-map-postgres/`, Postgres alone, COPY among the strategies): in how many cells
//! it is the fastest and with what verdict, and its time against the fastest of the others, cell
//! by cell; `None` while the set holds fewer than two runs.

use std::path::Path;

use anyhow::Result;
use d1bench_core::Strategy;

use crate::base::TargetKind;
use crate::readme::answer;
use crate::readme::replicates::DECISION_MAP_POSTGRES;
use crate::stats::median;
use crate::studies::sweep::report::decision::Cell;
use crate::studies::sweep::report::verdict::Verdict;

/// What COPY came to over the cells of Postgres's map.
#[derive(Debug, Default, PartialEq)]
struct Tally {
    cells: usize,
    /// The fastest, told apart from the runner-up.
    wins: usize,
    /// First of an equivalent set (within ±10% of the next).
    first_of_equivalent: usize,
    /// The fastest, not told apart.
    ahead_undecided: usize,
    /// The fastest of the other strategies ÷ COPY, on the cell's centres (ms per 1,000 rows):
    /// above 1 where COPY is faster.
    others_over_copy: Vec<f64>,
}

fn tally(cells: &[Cell]) -> Tally {
    let mut t = Tally::default();
    for cell in cells {
        let time = |s: Strategy| {
            cell.ranked
                .iter()
                .find(|(r, _)| *r == s)
                .map(|(_, m)| m.median)
        };
        let Some(copy) = time(Strategy::Copy) else {
            continue;
        };
        let others = cell.ranked.iter().filter(|(s, _)| *s != Strategy::Copy);
        let Some(best) = others.map(|(_, m)| m.median).reduce(f64::min) else {
            continue;
        };
        t.cells += 1;
        if copy > 0.0 {
            t.others_over_copy.push(best / copy);
        }
        match &cell.verdict {
            Verdict::Winner { fastest, .. } if *fastest == Strategy::Copy => t.wins += 1,
            Verdict::Equivalent { set, .. } if set.first() == Some(&Strategy::Copy) => {
                t.first_of_equivalent += 1
            }
            Verdict::Undecided { fastest, .. } if *fastest == Strategy::Copy => {
                t.ahead_undecided += 1
            }
            _ => {}
        }
    }
    t
}

/// The sentence, or `None` while Postgres's map has no set of two runs or more, or no COPY.
pub fn sentence(root: &Path) -> Result<Option<String>> {
    let Some((sets, maps)) = answer::maps(root)? else {
        return Ok(None);
    };
    let Some(map) = maps.iter().find(|m| m.target == TargetKind::Hyperdrive) else {
        return Ok(None);
    };
    let runs = sets[answer::set_of(&sets, map)].runs.len();
    let t = tally(&map.cells);
    let mut ratios = t.others_over_copy.clone();
    ratios.sort_by(f64::total_cmp);
    let (Some(mid), Some(lo), Some(hi)) = (median(&ratios), ratios.first(), ratios.last()) else {
        return Ok(None);
    };
    Ok(Some(format!(
        "**COPY FROM STDIN** ([`{name}`]({dir}/), {runs} runs, Postgres alone): the fastest \
         other strategy ÷ COPY over its {cells} cells, median (range) {mid:.2} ({lo:.2}–{hi:.2}); \
         COPY decided fastest in {wins}, first of a ±10% set in {eq}, ahead undecided in {ahead}.",
        name = DECISION_MAP_POSTGRES.name,
        dir = DECISION_MAP_POSTGRES.dir(),
        cells = t.cells,
        wins = t.wins,
        eq = t.first_of_equivalent,
        ahead = t.ahead_undecided,
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::order::Summary;

    fn cell(times: &[(Strategy, f64)], verdict: Verdict) -> Cell {
        let mut ranked: Vec<(Strategy, Summary)> = times
            .iter()
            .map(|&(s, ms)| (s, Summary::of(&[ms]).unwrap()))
            .collect();
        ranked.sort_by(|a, b| a.1.median.total_cmp(&b.1.median));
        Cell {
            x: 8.0,
            y: 300.0,
            ranked,
            margin: None,
            stopped: Vec::new(),
            evidence: Vec::new(),
            verdict,
        }
    }

    #[test]
    fn copy_is_counted_by_its_verdict_and_held_to_the_fastest_other() {
        let win = Verdict::Winner {
            fastest: Strategy::Copy,
            runner_up: Strategy::Bound,
        };
        let lose = Verdict::Winner {
            fastest: Strategy::Json,
            runner_up: Strategy::Copy,
        };
        let cells = [
            cell(
                &[
                    (Strategy::Copy, 10.0),
                    (Strategy::Bound, 30.0),
                    (Strategy::Json, 20.0),
                ],
                win,
            ),
            cell(&[(Strategy::Copy, 40.0), (Strategy::Json, 20.0)], lose),
            // No COPY here: not one of its cells.
            cell(&[(Strategy::Json, 20.0)], Verdict::Only(Strategy::Json)),
        ];
        let t = tally(&cells);
        assert_eq!(t.cells, 2);
        assert_eq!(
            (t.wins, t.first_of_equivalent, t.ahead_undecided),
            (1, 0, 0)
        );
        assert_eq!(t.others_over_copy, [2.0, 0.5]);
    }
}
