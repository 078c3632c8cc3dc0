//! What a sweep run's intervals are taken over, said once for every report: between sessions
//! when the run has two or more (the unit that varies between runs), within one session
//! otherwise, which every report labels as such. The text of summary.md, the README's findings,
//! the decision map and the charts' captions comes from here, so they cannot disagree.

use crate::base::TargetKind;
use crate::studies::sweep::row::ProbeRow;

/// What the warm-up rule discarded, session by session and target by target, from `rows`
/// (results.csv: what every report leaves out); a paragraph of summary.md.
pub fn warmup_paragraph(rows: &[ProbeRow]) -> String {
    let mut targets: Vec<TargetKind> = rows.iter().map(|r| r.target).collect();
    targets.sort();
    targets.dedup();
    let warmup = "Warm-up: each session first ran its profile's unrecorded warm-up rounds; then \
         the warm-up rule (MSER-5 over the session's probes in the order they ran, each as the \
         log of its time over its point's median in that session; at most half the session, \
         never into its last round) discarded the measured probes that ran before the session's \
         times settled. They stay in results.csv (`warmup_discarded`) and are left out of every \
         figure here.";
    let mut parts = Vec::new();
    for target in targets {
        let mut sessions: Vec<(usize, usize, usize)> = Vec::new();
        for row in rows.iter().filter(|r| r.target == target) {
            match sessions.iter_mut().find(|s| s.0 == row.session) {
                Some(s) => {
                    s.1 += 1;
                    s.2 += usize::from(row.warmup_discarded);
                }
                None => sessions.push((row.session, 1, usize::from(row.warmup_discarded))),
            }
        }
        sessions.sort_unstable();
        let (all, discarded): (usize, usize) =
            sessions.iter().fold((0, 0), |(a, d), s| (a + s.1, d + s.2));
        let each: Vec<String> = sessions
            .iter()
            .map(|(session, n, d)| format!("{d} of {n} in session {session}"))
            .collect();
        parts.push(format!(
            "`{target}`: {discarded} of {all} ({})",
            each.join(", ")
        ));
    }
    format!("{warmup} Discarded: {}.\n\n", parts.join("; "))
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
            .filter(|r| r.target == target && !r.warmup_discarded)
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
