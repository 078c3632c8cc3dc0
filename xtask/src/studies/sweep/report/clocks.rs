//! Where a probe's time goes, clock by clock: the table of `summary.md` (and of the end of a
//! run) with, per point and strategy, n and the median of each clock with its order-statistic
//! interval, and what the outside clock adds to the target's own (outside − inside − prepare).
//! Pure: it returns text.

use std::fmt::Write;

use d1bench_core::Strategy;

use super::points::{Measure, Point, points};
use crate::base::TargetKind;
use crate::studies::sweep::Axis;
use crate::studies::sweep::row::ProbeRow;

/// The clocks of the table, in the order a probe runs them, with their column headers.
const CLOCKS: [(Measure, &str); 6] = [
    (Measure::OutsideMs, "outside"),
    (Measure::PrepareMs, "prepare"),
    (Measure::InsideMs, "inside"),
    (Measure::BindMs, "bind"),
    (Measure::D1Ms, "D1"),
    (Measure::OverheadMs, "outside − inside − prepare"),
];

/// The order strategies are listed in.
const STRATEGIES: &[Strategy] = Strategy::REPORT_ORDER;

/// A median in ms with one decimal and its interval (`†` when it covers less than 95%), or `–`
/// when the clock has no value there.
fn cell(point: &Point, measure: Measure) -> String {
    point
        .summary(measure)
        .map_or("–".to_owned(), |s| match s.ci {
            None => format!("{:.1}", s.median),
            Some(ci) => format!(
                "{:.1} ({:.1}–{:.1}){}",
                s.median,
                ci.low,
                ci.high,
                if ci.reaches_confidence() { "" } else { "†" }
            ),
        })
}

/// The medians of every clock of `target`'s probes that succeeded, one line per point and
/// strategy (ms per probe); `None` when no probe of `target` succeeded. Markdown.
pub fn table(rows: &[ProbeRow], axis: Axis, target: TargetKind) -> Option<String> {
    let mut lines: Vec<(String, u64, usize, Point)> = points(rows, axis)
        .into_iter()
        .filter(|p| p.line.target == target && p.ok() > 0)
        .map(|p| {
            let order = STRATEGIES.iter().position(|s| *s == p.line.strategy);
            (p.line.label.clone(), p.x.to_bits(), order.unwrap_or(0), p)
        })
        .collect();
    if lines.is_empty() {
        return None;
    }
    // By series, then x (total_cmp order for x ≥ 0 is the order of the bits), then strategy.
    lines.sort_by(|a, b| (&a.0, a.1, a.2).cmp(&(&b.0, b.1, b.2)));
    let labelled = lines.iter().any(|(label, ..)| !label.is_empty());
    let mut header = vec![axis.name()];
    if labelled {
        header.push("series");
    }
    header.push("strategy");
    header.push("n");
    header.extend(CLOCKS.iter().map(|(_, name)| *name));
    let mut out = format!("| {} |\n", header.join(" | "));
    writeln!(out, "|{}", " --- |".repeat(header.len())).unwrap();
    for (label, _, _, point) in &lines {
        let mut line = vec![axis.format(point.x)];
        if labelled {
            line.push(label.clone());
        }
        line.push(point.line.strategy.to_string());
        line.push(point.ok().to_string());
        line.extend(CLOCKS.iter().map(|(measure, _)| cell(point, *measure)));
        writeln!(out, "| {} |", line.join(" | ")).unwrap();
    }
    out.push_str(&match super::intervals::Basis::of(rows, target) {
        super::intervals::Basis::WithinOneSession => "\nEach cell: the median over the n repeats \
             that succeeded and, in parentheses, its order-statistic interval within one session \
             (95%; † where it covers less, for want of repeats).\n"
            .to_owned(),
        super::intervals::Basis::BetweenSessions(sessions) => format!(
            "\nEach cell: over the {sessions} sessions, the geometric mean of each session's \
             median over the n repeats that succeeded, and in parentheses its 95% interval \
             between sessions (the mean and its t interval on the values themselves where a \
             session's median is 0).\n"
        ),
    });
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::studies::sweep::row::tests_support;

    fn measured(strategy: Strategy, columns: usize, outside: f64, prepare: f64) -> ProbeRow {
        let mut row = tests_support::row();
        row.strategy = strategy;
        row.columns = columns;
        row.outside_ms = outside;
        row.prepare_ms = Some(prepare);
        row.inside_ms = 10.0;
        row.bind_ms = Some(1.0);
        row.d1_ms = Some(4.0);
        row.overhead_ms = Some(outside - (prepare + 10.0));
        row
    }

    fn cells(line: &str) -> Vec<&str> {
        line.trim_matches('|').split(" | ").map(str::trim).collect()
    }

    #[test]
    fn one_line_per_point_and_strategy_with_the_median_of_every_clock() {
        let mut rows = vec![
            measured(Strategy::Literal, 8, 40.0, 20.0),
            measured(Strategy::Bound, 64, 30.0, 15.0),
            measured(Strategy::Bound, 8, 20.0, 5.0),
            measured(Strategy::Bound, 8, 24.0, 5.0),
            measured(Strategy::Bound, 8, 100.0, 5.0),
        ];
        let mut sqlite = measured(Strategy::Bound, 8, 3.0, 1.0);
        sqlite.target = TargetKind::Sqlite;
        rows.push(sqlite);
        let mut refused = measured(Strategy::Literal, 64, 1.0, 1.0);
        refused.outcome = d1bench_core::Outcome::Refused;
        rows.push(refused);
        let text = table(&rows, Axis::Columns, TargetKind::Local).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            cells(lines[0]),
            [
                "columns",
                "strategy",
                "n",
                "outside",
                "prepare",
                "inside",
                "bind",
                "D1",
                "outside − inside − prepare"
            ]
        );
        // Medians: outside 24 of (20, 24, 100), and its overhead 9 of (5, 9, 85).
        assert_eq!(
            cells(lines[2]),
            [
                "8",
                "bound",
                "3",
                "24.0 (20.0–100.0)†",
                "5.0 (5.0–5.0)†",
                "10.0 (10.0–10.0)†",
                "1.0 (1.0–1.0)†",
                "4.0 (4.0–4.0)†",
                "9.0 (5.0–85.0)†"
            ]
        );
        assert_eq!(
            cells(lines[3]),
            [
                "8", "literal", "1", "40.0", "20.0", "10.0", "1.0", "4.0", "10.0"
            ]
        );
        // The refused literal at 64 columns has no line; the sqlite rows are not local's.
        assert_eq!(cells(lines[4])[..4], ["64", "bound", "1", "30.0"]);
        assert_eq!(lines.len(), 7, "{text}");
        assert!(lines[6].contains("order-statistic interval"), "{text}");
        assert_eq!(table(&rows, Axis::Columns, TargetKind::Remote), None);
    }

    #[test]
    fn clocks_a_target_does_not_have_are_dashes_and_series_get_a_column() {
        let mut old = measured(Strategy::Bound, 8, 20.0, 5.0);
        (old.prepare_ms, old.bind_ms, old.d1_ms) = (None, None, None);
        old.label = "all non-ASCII".into();
        let text = table(&[old], Axis::Columns, TargetKind::Local).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(cells(lines[0])[..3], ["columns", "series", "strategy"]);
        assert_eq!(
            cells(lines[2]),
            [
                "8",
                "all non-ASCII",
                "bound",
                "1",
                "20.0",
                "–",
                "10.0",
                "–",
                "–",
                "5.0"
            ]
        );
    }
}
