//! What a sweep run's intervals are taken over, said once for every report: between sessions
//! when the run has two or more (the unit that varies between runs), within one session
//! otherwise, which every report labels as such. The text of summary.md, the README's findings,
//! the decision map and the charts' captions comes from here, so they cannot disagree.

use std::collections::HashMap;

use super::points::Measure;
use crate::base::TargetKind;
use crate::base::numbers::num;
use crate::stats::sessions::{OverSessions, over_sessions};
use crate::stats::{CONFIDENCE, median};
use crate::studies::sweep::row::ProbeRow;

/// Measured probes of each session compared with their points, as the warm-up's check, when
/// a session sent no warm-up probes to count them by.
const FIRST_MEASURED: usize = 5;

/// The warm-up, as `rows` (results.csv) show it, target by target; a paragraph of summary.md:
/// the warm-up probes each session sent (recorded, left out of every figure) and how much
/// slower they, and the session's first measured probes, ran than the measured probes of the
/// same points in that session; then what the warm-up rule discarded, if anything. A first
/// measured probes' interval wholly above 1 says the warm-up was too short.
pub fn warmup_paragraph(rows: &[ProbeRow]) -> String {
    let mut targets: Vec<TargetKind> = rows.iter().map(|r| r.target).collect();
    targets.sort();
    targets.dedup();
    let mut measured = Vec::new();
    let mut discards = Vec::new();
    for &target in &targets {
        let ours: Vec<&ProbeRow> = rows.iter().filter(|r| r.target == target).collect();
        let warmups = ours.iter().filter(|r| r.warmup).count();
        let excess = warmup_excess(&ours);
        let ratio = |e: Option<OverSessions>| match e {
            Some(OverSessions {
                center,
                interval: Some(i),
                sessions,
                ..
            }) => format!(
                "{}× ({}–{}, {} sessions)",
                num(center),
                num(i.low),
                num(i.high),
                sessions
            ),
            Some(e) => format!("{}× (1 session)", num(e.center)),
            None => "no value".to_owned(),
        };
        let first = format!(
            "the first {} measured probes of each session, against their points over every \
             session, {}",
            excess.first_n,
            ratio(excess.first)
        );
        measured.push(if warmups == 0 {
            format!("`{target}`: no warm-up probe recorded; {first}")
        } else {
            format!(
                "`{target}`: {warmups} warm-up probes, {}; {first}",
                ratio(excess.warmups)
            )
        });
        let (all, discarded) = ours.iter().filter(|r| !r.warmup).fold((0, 0), |(a, d), r| {
            (a + 1, d + usize::from(r.warmup_discarded))
        });
        if discarded > 0 {
            let mut sessions: Vec<(usize, usize, usize)> = Vec::new();
            for row in ours.iter().filter(|r| !r.warmup) {
                match sessions.iter_mut().find(|s| s.0 == row.session) {
                    Some(s) => {
                        s.1 += 1;
                        s.2 += usize::from(row.warmup_discarded);
                    }
                    None => sessions.push((row.session, 1, usize::from(row.warmup_discarded))),
                }
            }
            sessions.sort_unstable();
            let each: Vec<String> = sessions
                .iter()
                .map(|(session, n, d)| format!("{d} of {n} in session {session}"))
                .collect();
            discards.push(format!(
                "`{target}`: {discarded} of {all} ({})",
                each.join(", ")
            ));
        }
    }
    let mut text = format!(
        "Warm-up: each session first sent its profile's warm-up probes, recorded in results.csv \
         (`warmup`) and left out of every figure. Against the measured probes of the same point \
         and strategy in the same session (ms per 1,000 rows on the outside clock; geometric mean \
         over sessions of each session's mean ratio, 95%): {}. An interval of the first measured \
         probes wholly above 1 says the warm-up was too short.",
        measured.join("; ")
    );
    if !discards.is_empty() {
        text.push_str(&format!(
            " Then the warm-up rule (MSER-5 over the session's measured probes in the order they \
             ran, each as the log of its time over its point's median in that session; at most \
             half the session, never into its last round; a cut kept only where the probes it \
             discards ran slower than their points' later probes, by a one-sided paired t test \
             at 5% over the cuts it could propose) discarded the measured probes that ran before \
             the session's times settled; they stay in results.csv (`warmup_discarded`) and are \
             left out of every figure: {}.",
            discards.join("; ")
        ));
    }
    text.push_str("\n\n");
    text
}

/// How much slower than their points' measured probes (each session's mean of
/// `value ÷ its point's median in the session`, over sessions) a target's warm-up probes ran,
/// and its first measured ones.
struct WarmupExcess {
    warmups: Option<OverSessions>,
    first: Option<OverSessions>,
    /// How many measured probes of each session `first` counts: as many as the session's
    /// warm-ups, [`FIRST_MEASURED`] when it had none.
    first_n: usize,
}

fn warmup_excess(rows: &[&ProbeRow]) -> WarmupExcess {
    let mut sessions: Vec<usize> = rows.iter().map(|r| r.session).collect();
    sessions.sort_unstable();
    sessions.dedup();
    let warmups_per_session = rows.iter().filter(|r| r.warmup).count() / sessions.len().max(1);
    let first_n = if warmups_per_session == 0 {
        FIRST_MEASURED
    } else {
        warmups_per_session
    };
    // With one measured round a session, a point's median in the session is the probe itself:
    // the first measured probes are judged against their point's median over every session.
    let mut everywhere: HashMap<String, Vec<f64>> = HashMap::new();
    for r in rows.iter().filter(|r| r.counts()) {
        if let Some(v) = Measure::MsPer1000Rows.value(r).filter(|v| *v > 0.0) {
            everywhere.entry(r.point_key()).or_default().push(v);
        }
    }
    let overall: HashMap<String, f64> = everywhere
        .into_iter()
        .filter_map(|(k, vs)| median(&vs).map(|m| (k, m)))
        .collect();
    let (mut warm, mut first) = (Vec::new(), Vec::new());
    for session in sessions {
        let mut ours: Vec<(&ProbeRow, f64)> = rows
            .iter()
            .filter(|r| r.session == session)
            .filter_map(|r| Measure::MsPer1000Rows.value(r).map(|v| (*r, v)))
            .filter(|(_, v)| *v > 0.0)
            .collect();
        ours.sort_by_key(|(r, _)| r.probe_id);
        let mut by_point: HashMap<String, Vec<f64>> = HashMap::new();
        for (r, v) in ours.iter().filter(|(r, _)| r.counts()) {
            by_point.entry(r.point_key()).or_default().push(*v);
        }
        let medians: HashMap<String, f64> = by_point
            .into_iter()
            .filter_map(|(k, vs)| median(&vs).map(|m| (k, m)))
            .collect();
        let mean_ratio = |picked: Vec<&(&ProbeRow, f64)>, against: &HashMap<String, f64>| {
            let logs: Vec<f64> = picked
                .iter()
                .filter_map(|(r, v)| against.get(&r.point_key()).map(|m| (v / m).ln()))
                .collect();
            (!logs.is_empty()).then(|| (logs.iter().sum::<f64>() / logs.len() as f64).exp())
        };
        warm.extend(mean_ratio(
            ours.iter().filter(|(r, _)| r.warmup).collect(),
            &medians,
        ));
        first.extend(mean_ratio(
            ours.iter()
                .filter(|(r, _)| r.counts())
                .take(first_n)
                .collect(),
            &overall,
        ));
    }
    WarmupExcess {
        warmups: over_sessions(&warm, CONFIDENCE),
        first: over_sessions(&first, CONFIDENCE),
        first_n,
    }
}

/// What the intervals of a run's reports are taken over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Basis {
    /// Every value came from one session: order-statistic intervals over its repeats, which
    /// say nothing of what another session (another run) would measure.
    WithinOneSession,
    /// Values from this many sessions: Student's t over each session's value.
    BetweenSessions(usize),
}

impl Basis {
    /// The basis of `target`'s intervals in `rows` (the rows discarded as warm-up left out).
    pub fn of(rows: &[ProbeRow], target: TargetKind) -> Basis {
        let mut sessions: Vec<usize> = rows
            .iter()
            .filter(|r| r.target == target && r.counts())
            .map(|r| r.session)
            .collect();
        sessions.sort_unstable();
        sessions.dedup();
        match sessions.len() {
            0 | 1 => Basis::WithinOneSession,
            n => Basis::BetweenSessions(n),
        }
    }

    /// `95% interval over 5 sessions` or `interval within one session`: what a heading says.
    pub fn heading(self) -> String {
        match self {
            Basis::WithinOneSession => "interval within one session".to_owned(),
            Basis::BetweenSessions(n) => format!("95% interval over {n} sessions"),
        }
    }

    /// How a figure's interval was taken, in a sentence's middle: `intervals between sessions
    /// (5 sessions)`, `order-statistic intervals within one session`.
    pub fn named(self) -> String {
        match self {
            Basis::WithinOneSession => "order-statistic intervals within one session".to_owned(),
            Basis::BetweenSessions(n) => format!("intervals between sessions ({n} sessions)"),
        }
    }

    /// The paragraph under the table of times: what each cell is.
    pub fn times_paragraph(self) -> String {
        match self {
            Basis::WithinOneSession => {
                "Each time: the median over the repeats that succeeded, in parentheses its \
                 confidence interval **within one session** (the distribution-free \
                 order-statistic interval of the median; † marks one that covers less than 95%, \
                 for want of repeats), and n, the repeats behind it. An interval within one \
                 session covers the spread of its repeats, not what changes from one session (a \
                 fresh target, another time) to the next, which is larger: another run may land \
                 outside it. literal ÷ bound: the two ran side by side in every repeat, so each \
                 repeat gives a ratio; the cell is the median of those ratios with the same kind \
                 of interval, and n the pairs where both succeeded.\n\n"
                    .to_owned()
            }
            Basis::BetweenSessions(sessions) => format!(
                "Each time: over the {sessions} sessions (each a fresh target with its own \
                 warm-up and shuffled rounds), the geometric mean of each session's median, in \
                 parentheses its 95% confidence interval between sessions (Student's t with \
                 {} degrees of freedom on the logarithms of the sessions' medians: it carries \
                 what changes from one session to the next, not only the spread of repeats), and \
                 n, the repeats behind it over every session. literal ÷ bound: the two ran side \
                 by side in every repeat, so each repeat gives a ratio; each session's value is \
                 the median of its ratios, and the cell their geometric mean with the same \
                 interval; n the pairs where both succeeded.\n\n",
                sessions - 1
            ),
        }
    }

    /// The paragraph under the table of the target ÷ its baseline.
    pub fn baseline_paragraph(self) -> String {
        match self {
            Basis::WithinOneSession => {
                "The baseline ran after the whole target, in one session each, so its repeats \
                 are not paired with the target's: each cell is the ratio of the two medians, \
                 and its interval divides each median's 97.5% interval by the other's. The two \
                 samples are independent, so both intervals hold together, and then the ratio \
                 lies in the interval, with probability at least the product of their coverages \
                 (95% from 7 repeats each). These intervals are within one session. n: the \
                 repeats of each.\n\n"
                    .to_owned()
            }
            Basis::BetweenSessions(sessions) => format!(
                "The baseline's sessions alternated with the target's (target then baseline, \
                 then baseline then target, ...), so each session of the target ran beside the \
                 same session of the baseline: each session gives the ratio of the two medians, \
                 and each cell is the geometric mean of those {sessions} ratios with its 95% \
                 interval between sessions (Student's t on their logarithms). n: the repeats of \
                 each.\n\n"
            ),
        }
    }

    /// What a chart's error bars are, for its caption.
    pub fn error_bars(self) -> String {
        match self {
            Basis::WithinOneSession => {
                "error bars: the median's order-statistic confidence interval within one session"
                    .to_owned()
            }
            Basis::BetweenSessions(n) => format!(
                "points: the geometric mean of {n} sessions' medians; error bars: its 95% \
                 interval between sessions"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::studies::sweep::row::tests_support::row;

    #[test]
    fn one_session_is_within_it_and_several_are_between_them() {
        let at = |session, warmup_discarded| ProbeRow {
            session,
            warmup_discarded,
            ..row()
        };
        assert_eq!(
            Basis::of(&[at(0, false), at(0, false)], TargetKind::Local),
            Basis::WithinOneSession
        );
        assert_eq!(Basis::of(&[], TargetKind::Local), Basis::WithinOneSession);
        let rows = [at(0, false), at(1, false), at(2, true)];
        assert_eq!(
            Basis::of(&rows, TargetKind::Local),
            Basis::BetweenSessions(2),
            "a session with only discarded rows gives no value"
        );
        assert_eq!(
            Basis::of(&rows, TargetKind::Sqlite),
            Basis::WithinOneSession
        );
        assert!(
            Basis::WithinOneSession
                .times_paragraph()
                .contains("**within one session**")
        );
        assert!(
            Basis::BetweenSessions(5)
                .times_paragraph()
                .contains("Student's t with 4 degrees of freedom")
        );
        assert_eq!(
            Basis::BetweenSessions(5).heading(),
            "95% interval over 5 sessions"
        );
    }
}
