//! The summary a run prints: median time per strategy at each point, and literal ÷ bound.

use std::collections::BTreeMap;
use std::fmt::Write;

use d1bench_core::Strategy;

use crate::report::{Axis, ResultRow};
use crate::stats::median;

/// A text table: one line per x value, the median outside time of each strategy (ms, `ok`
/// probes only; `refused` where every probe was refused), and literal ÷ bound where both ran.
pub fn table(rows: &[ResultRow], axis: Axis) -> String {
    let strategies: Vec<Strategy> = Strategy::ALL
        .into_iter()
        .filter(|s| rows.iter().any(|r| r.strategy == *s))
        .collect();
    let mut points: BTreeMap<usize, BTreeMap<Strategy, Vec<&ResultRow>>> = BTreeMap::new();
    for row in rows {
        points
            .entry(axis.value(row))
            .or_default()
            .entry(row.strategy)
            .or_default()
            .push(row);
    }
    let medians = |cell: Option<&Vec<&ResultRow>>| -> Option<Result<f64, &'static str>> {
        let cell = cell?;
        let ok: Vec<f64> = cell
            .iter()
            .filter(|r| r.outcome == "ok")
            .map(|r| r.outside_ms)
            .collect();
        Some(
            median(&ok).ok_or(if cell.iter().any(|r| r.outcome == "refused") {
                "refused"
            } else {
                "error"
            }),
        )
    };
    let mut out = format!("{:>12}", axis.name());
    for s in &strategies {
        write!(out, " {:>14}", format!("{s} ms")).unwrap();
    }
    out.push_str(" literal÷bound\n");
    for (x, cells) in &points {
        write!(out, "{x:>12}").unwrap();
        for s in &strategies {
            let text = match medians(cells.get(s)) {
                None => "-".to_owned(),
                Some(Ok(ms)) => format!("{ms:.1}"),
                Some(Err(why)) => why.to_owned(),
            };
            write!(out, " {text:>14}").unwrap();
        }
        let ratio = match (
            medians(cells.get(&Strategy::Literal)),
            medians(cells.get(&Strategy::Bound)),
        ) {
            (Some(Ok(l)), Some(Ok(b))) if b > 0.0 => format!("{:.2}", l / b),
            _ => "-".to_owned(),
        };
        writeln!(out, " {ratio:>13}").unwrap();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(strategy: Strategy, columns: usize, outcome: &str, outside_ms: f64) -> ResultRow {
        let mut row = crate::report::tests_support::row();
        row.strategy = strategy;
        row.columns = columns;
        row.outcome = outcome.into();
        row.outside_ms = outside_ms;
        row
    }

    #[test]
    fn medians_ratios_and_refusals() {
        let rows = [
            row(Strategy::Bound, 64, "ok", 500.0),
            row(Strategy::Bound, 64, "ok", 520.0),
            row(Strategy::Bound, 64, "ok", 900.0),
            row(Strategy::Literal, 64, "ok", 180.0),
            row(Strategy::Literal, 64, "ok", 190.0),
            row(Strategy::Literal, 64, "ok", 200.0),
            row(Strategy::Literal, 128, "refused", 3.0),
            row(Strategy::Bound, 128, "ok", 10.0),
        ];
        let text = table(&rows, Axis::Columns);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0].split_whitespace().collect::<Vec<_>>(),
            ["columns", "bound", "ms", "literal", "ms", "literal÷bound"]
        );
        assert_eq!(
            lines[1].split_whitespace().collect::<Vec<_>>(),
            ["64", "520.0", "190.0", "0.37"]
        );
        assert_eq!(
            lines[2].split_whitespace().collect::<Vec<_>>(),
            ["128", "10.0", "refused", "-"]
        );
    }
}
