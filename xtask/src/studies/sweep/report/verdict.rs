//! What a cell of the decision map decides, one typed verdict: a winner told apart from the
//! runner-up, a set of strategies shown equivalent to the fastest within ±10% (two one-sided
//! tests), or undecided with the sessions (or runs) a decision would need. Every cell of a map
//! is judged at once, Benjamini–Hochberg holding the false discovery rate of the differences and
//! of the equivalences (each family apart) to 5% over the map's cells. The one judgement that the
//! summary, the page, the terminal and `cargo xtask advise` read.

use d1bench_core::Strategy;

use super::decision::Cell;
use crate::stats::decide::{Evidence, Unit};
use crate::stats::power::Equivalence;
use crate::stats::sessions::{FALSE_DISCOVERY_RATE, benjamini_hochberg};

/// The correction over cells, as the reports name it.
pub const CORRECTION: &str = "Benjamini–Hochberg at a 5% false discovery rate over the map's cells";

/// What one cell decides.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// No strategy succeeded here.
    NothingRan,
    /// One strategy alone could write these rows: the others were stopped.
    Only(Strategy),
    /// The fastest, told apart from the runner-up: the interval of runner-up ÷ fastest
    /// excludes 1, and the difference survives the correction.
    Winner {
        fastest: Strategy,
        runner_up: Strategy,
    },
    /// The fastest and every strategy shown equivalent to it (each ÷ the fastest within
    /// ±10% by two one-sided tests, surviving the correction), fastest first: an answer too.
    Equivalent {
        set: Vec<Strategy>,
        within: Equivalence,
    },
    /// Neither: the two fastest and the units a decision would need at the spread seen (`None`
    /// when no interval could be taken, or past what is worth running).
    Undecided {
        fastest: Strategy,
        runner_up: Strategy,
        needed: Option<(usize, Unit)>,
    },
}

impl Verdict {
    /// Whether the cell gives an answer (a winner, the only one, or an equivalent set).
    pub fn decides(&self) -> bool {
        matches!(
            self,
            Verdict::Only(_) | Verdict::Winner { .. } | Verdict::Equivalent { .. }
        )
    }

    /// The strategy to use, the fastest: also in an equivalent set and undecided cells.
    pub fn fastest(&self) -> Option<Strategy> {
        match self {
            Verdict::NothingRan => None,
            Verdict::Only(s) => Some(*s),
            Verdict::Winner { fastest, .. } | Verdict::Undecided { fastest, .. } => Some(*fastest),
            Verdict::Equivalent { set, .. } => set.first().copied(),
        }
    }

    /// The answer in words: `json`; `literal = exec, ±10%`; `json or bound` when undecided.
    pub fn text(&self) -> String {
        match self {
            Verdict::NothingRan => "nothing ran".into(),
            Verdict::Only(s) | Verdict::Winner { fastest: s, .. } => s.to_string(),
            Verdict::Equivalent { set, within } => {
                let names: Vec<String> = set.iter().map(|s| s.to_string()).collect();
                format!("{}, {}", names.join(" = "), within_text(*within))
            }
            Verdict::Undecided {
                fastest, runner_up, ..
            } => format!("{fastest} or {runner_up}"),
        }
    }

    /// What the margin column adds: `: within ±10%`, `: undecided, ~12 sessions would decide`.
    pub fn note(&self) -> String {
        match self {
            Verdict::Equivalent { within, .. } => format!(": equivalent {}", within_text(*within)),
            Verdict::Undecided { needed, .. } => format!(": undecided{}", needed_text(*needed)),
            _ => String::new(),
        }
    }

    /// The verdict's kind, for a CSV column.
    pub fn kind(&self) -> &'static str {
        match self {
            Verdict::NothingRan => "nothing-ran",
            Verdict::Only(_) => "only",
            Verdict::Winner { .. } => "winner",
            Verdict::Equivalent { .. } => "equivalent",
            Verdict::Undecided { .. } => "undecided",
        }
    }

    /// The units a decision would need, when undecided.
    pub fn needed(&self) -> Option<(usize, Unit)> {
        match self {
            Verdict::Undecided { needed, .. } => *needed,
            _ => None,
        }
    }
}

fn within_text(within: Equivalence) -> &'static str {
    match within {
        Equivalence::WithinFive => "±5%",
        _ => "±10%",
    }
}

/// `, ~12 sessions would decide`, or `` when not known.
pub fn needed_text(needed: Option<(usize, Unit)>) -> String {
    match needed {
        Some((n, unit)) => format!(", ~{n} {} would decide", unit.plural()),
        None => String::new(),
    }
}

/// Judges every cell of one map at once: the p-values of the runner-up's difference from the
/// fastest, and of each other strategy's equivalence to it, each family corrected over the
/// cells by Benjamini–Hochberg.
pub fn judge(cells: &mut [Cell]) {
    let differ: Vec<Option<f64>> = cells
        .iter()
        .map(|c| c.evidence.first().and_then(|(_, e)| e.p_differ))
        .collect();
    let differs = benjamini_hochberg(&differ, FALSE_DISCOVERY_RATE);
    // Every (cell, strategy) pair's equivalence, flattened.
    let pairs: Vec<(usize, usize)> = cells
        .iter()
        .enumerate()
        .flat_map(|(i, c)| (0..c.evidence.len()).map(move |j| (i, j)))
        .collect();
    let equivalent_p: Vec<Option<f64>> = pairs
        .iter()
        .map(|&(i, j)| cells[i].evidence[j].1.p_equivalent)
        .collect();
    let equivalent = benjamini_hochberg(&equivalent_p, FALSE_DISCOVERY_RATE);
    for (i, cell) in cells.iter_mut().enumerate() {
        let shown: Vec<(Strategy, Equivalence)> = pairs
            .iter()
            .zip(&equivalent)
            .filter(|((c, _), called)| *c == i && **called)
            .filter_map(|((_, j), _)| {
                let (strategy, evidence) = &cell.evidence[*j];
                let within = Equivalence::of_interval(evidence.ci90?);
                (within != Equivalence::NotShown).then_some((*strategy, within))
            })
            .collect();
        cell.verdict = verdict(cell, differs[i], &shown);
    }
}

fn verdict(cell: &Cell, differs: bool, shown: &[(Strategy, Equivalence)]) -> Verdict {
    let (Some(fastest), runner_up) = (cell.fastest(), cell.runner_up()) else {
        return Verdict::NothingRan;
    };
    let Some(runner_up) = runner_up else {
        return Verdict::Only(fastest);
    };
    let margin_excludes_one = cell
        .margin
        .and_then(|m| m.ci)
        .is_some_and(|ci| ci.low > 1.0 || ci.high < 1.0);
    if differs && margin_excludes_one {
        return Verdict::Winner { fastest, runner_up };
    }
    if shown.iter().any(|(s, _)| *s == runner_up) {
        let mut set = vec![fastest];
        set.extend(shown.iter().map(|(s, _)| *s));
        let within = shown
            .iter()
            .map(|(_, w)| *w)
            .max()
            .unwrap_or(Equivalence::WithinTen);
        return Verdict::Equivalent { set, within };
    }
    let needed = cell
        .evidence
        .first()
        .and_then(|(_, e)| e.needed().map(|n| (n, e.unit)));
    Verdict::Undecided {
        fastest,
        runner_up,
        needed,
    }
}

/// The evidence of `ratios` (one strategy ÷ the fastest, by session; sessions grouped by run
/// in a replicate set, [`super::decision::run_of`]): over runs when there are two or more, over
/// sessions when one run has two or more, over the repeats of a single session otherwise.
pub fn evidence(by_session: &std::collections::BTreeMap<usize, Vec<f64>>) -> Option<Evidence> {
    use std::collections::BTreeMap;
    let medians: BTreeMap<usize, f64> = by_session
        .iter()
        .filter_map(|(s, v)| Some((*s, crate::stats::median(v)?)))
        .collect();
    let mut by_run: BTreeMap<usize, Vec<f64>> = BTreeMap::new();
    for (session, m) in &medians {
        by_run
            .entry(super::decision::run_of(*session))
            .or_default()
            .push(*m);
    }
    match (by_run.len(), medians.len()) {
        (0, _) => None,
        (r, _) if r >= 2 => Evidence::of_runs(&by_run.into_values().collect::<Vec<_>>()),
        (_, s) if s >= 2 => {
            Evidence::of_values(&medians.into_values().collect::<Vec<_>>(), Unit::Sessions)
        }
        _ => Evidence::of_values(by_session.values().next()?, Unit::Repeats),
    }
}
