//! What a cell of the decision map decides, one typed verdict: a winner told apart from the
//! runner-up, a set of strategies shown equivalent to the fastest within ±10% (two one-sided
//! tests), or undecided with the sessions (or runs) a decision would need. Every cell of a map
//! is judged at once, Benjamini–Hochberg holding the false discovery rate of the runner-up's
//! differences and of its equivalences (each family apart, one test per cell) to 5% over the
//! map's cells. The one judgement that the
//! summary, the page, the terminal and `cargo xtask advise` read.

use d1bench_core::Strategy;

use crate::stats::decide::{Evidence, Unit};
use crate::stats::power::Equivalence;
use crate::stats::runs::Schedules;
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

/// What one cell gives the judgement: its two fastest by the paired comparison, whether the
/// margin's interval excludes 1, and each other strategy ÷ the fastest with its tests (the
/// runner-up first).
#[derive(Debug, Clone, Copy)]
pub struct Judged<'c> {
    pub fastest: Option<Strategy>,
    pub runner_up: Option<Strategy>,
    pub margin_excludes_one: bool,
    pub evidence: &'c [(Strategy, Evidence)],
}

/// Judges every cell of one map at once: the p-values of the runner-up's difference from the
/// fastest, and of its equivalence to the fastest, each family (one test per cell) corrected over
/// the cells by Benjamini–Hochberg.
pub fn judge(cells: &[Judged]) -> Vec<Verdict> {
    let differ: Vec<Option<f64>> = cells
        .iter()
        .map(|c| c.evidence.first().and_then(|(_, e)| e.p_differ))
        .collect();
    let differs = benjamini_hochberg(&differ, FALSE_DISCOVERY_RATE);
    // The equivalences are one family of one test per cell, the runner-up's (the one a
    // verdict turns on); a third strategy joins the set when its own test passes at the
    // threshold the family's correction reached.
    let runner_up_p: Vec<Option<f64>> = cells
        .iter()
        .map(|c| c.evidence.first().and_then(|(_, e)| e.p_equivalent))
        .collect();
    let equivalent = benjamini_hochberg(&runner_up_p, FALSE_DISCOVERY_RATE);
    let threshold = runner_up_p
        .iter()
        .zip(&equivalent)
        .filter(|(_, called)| **called)
        .filter_map(|(p, _)| *p)
        .fold(f64::NEG_INFINITY, f64::max);
    cells
        .iter()
        .enumerate()
        .map(|(i, cell)| {
            let shown: Vec<(Strategy, Equivalence)> = if equivalent[i] {
                cell.evidence
                    .iter()
                    .filter(|(_, e)| e.p_equivalent.is_some_and(|p| p <= threshold))
                    .filter_map(|(strategy, e)| {
                        let within = Equivalence::of_interval(e.ci90?);
                        (within != Equivalence::NotShown).then_some((*strategy, within))
                    })
                    .collect()
            } else {
                Vec::new()
            };
            verdict(cell, differs[i], &shown)
        })
        .collect()
}

fn verdict(cell: &Judged, differs: bool, shown: &[(Strategy, Equivalence)]) -> Verdict {
    let (Some(fastest), runner_up) = (cell.fastest, cell.runner_up) else {
        return Verdict::NothingRan;
    };
    let Some(runner_up) = runner_up else {
        return Verdict::Only(fastest);
    };
    if differs && cell.margin_excludes_one {
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

/// Sessions of a replicate set's runs are numbered apart: run `r`'s session `s` is
/// `r × RUN_STRIDE + s`, so every pairing by session still pairs within one run.
pub const RUN_STRIDE: usize = 1_000_000;

/// The run (its index in the replicate set) a session belongs to; 0 for a single run's.
pub fn run_of(session: usize) -> usize {
    session / RUN_STRIDE
}

/// The evidence of `ratios` (one strategy ÷ the fastest, by session; sessions grouped by run
/// in a replicate set, [`run_of`], the runs' schedules in `schedules`): over runs when there are
/// two or more, over sessions when one run has two or more, over the repeats of a single session
/// otherwise.
pub fn evidence(
    by_session: &std::collections::BTreeMap<usize, Vec<f64>>,
    schedules: &Schedules,
) -> Option<Evidence> {
    use std::collections::BTreeMap;
    let medians: BTreeMap<usize, f64> = by_session
        .iter()
        .filter_map(|(s, v)| Some((*s, crate::stats::median(v)?)))
        .collect();
    // Each run's sessions by their index within it, every run up to the last in its place.
    let mut by_run: Vec<BTreeMap<usize, f64>> = Vec::new();
    for (session, m) in &medians {
        let run = run_of(*session);
        if by_run.len() <= run {
            by_run.resize_with(run + 1, BTreeMap::new);
        }
        by_run[run].insert(session % RUN_STRIDE, *m);
    }
    let runs = by_run.iter().filter(|r| !r.is_empty()).count();
    match (runs, medians.len()) {
        (0, _) => None,
        (r, _) if r >= 2 => Evidence::of_runs(&by_run, schedules),
        (_, s) if s >= 2 => {
            Evidence::of_values(&medians.into_values().collect::<Vec<_>>(), Unit::Sessions)
        }
        _ => Evidence::of_values(by_session.values().next()?, Unit::Repeats),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judged<'c>(evidence: &'c [(Strategy, Evidence)], excludes: bool) -> Judged<'c> {
        Judged {
            fastest: Some(Strategy::Literal),
            runner_up: Some(evidence[0].0),
            margin_excludes_one: excludes,
            evidence,
        }
    }

    #[test]
    fn a_cell_is_a_winner_an_equivalent_set_or_undecided_with_what_would_decide() {
        let sessions = |v: &[f64]| Evidence::of_values(v, Unit::Sessions).unwrap();
        let clear = [(Strategy::Bound, sessions(&[1.5, 1.6, 1.55, 1.52, 1.58]))];
        let tight = [
            (Strategy::Exec, sessions(&[1.01, 0.99, 1.02, 1.0, 1.03])),
            (Strategy::Json, sessions(&[1.6, 1.7, 1.65, 1.62, 1.68])),
        ];
        let wide = [(Strategy::Json, sessions(&[0.8, 1.4, 1.1, 0.9, 1.3]))];
        let verdicts = judge(&[
            judged(&clear, true),
            judged(&tight, false),
            judged(&wide, false),
        ]);
        assert_eq!(
            verdicts[0],
            Verdict::Winner {
                fastest: Strategy::Literal,
                runner_up: Strategy::Bound
            }
        );
        assert_eq!(verdicts[1].text(), "literal = exec, ±5%");
        assert!(verdicts[1].decides());
        let Verdict::Undecided { needed, .. } = &verdicts[2] else {
            panic!("{:?}", verdicts[2]);
        };
        let (n, unit) = needed.unwrap();
        assert!(n > 5 && unit == Unit::Sessions, "{n}");
        assert_eq!(verdicts[2].text(), "literal or json");
        assert!(verdicts[2].note().starts_with(": undecided, ~"));
    }

    #[test]
    fn sessions_of_a_replicate_set_are_grouped_by_run() {
        let mut by_session = std::collections::BTreeMap::new();
        for run in 0..3 {
            for session in 0..2 {
                let v = 1.2 + 0.01 * (run + session) as f64;
                by_session.insert(run * RUN_STRIDE + session, vec![v, v]);
            }
        }
        let e = evidence(&by_session, &Schedules::default()).unwrap();
        assert_eq!((e.unit, e.units), (Unit::Runs, 3));
        // Sharing a schedule whose second session is slower in every run widens the interval.
        let shared = evidence(&by_session, &Schedules::shared(3)).unwrap();
        let width = |e: &Evidence| e.ci95.map(|ci| ci.high / ci.low).unwrap();
        assert!(width(&shared) > width(&e), "{shared:?} against {e:?}");
    }
}
