//! The figure of a set of the local D1 beside another engine (the Durable Object, Postgres
//! through Hyperdrive): D1 ÷ the other engine on the inside clock against the column count, one
//! line per strategy, each point the geometric mean over the set's runs with its 95% interval
//! over runs (Student's t over the runs, [`replicates::to_baseline`]), on a log axis with a
//! dashed grey line at 1 (as fast on both). Drawn by the one line chart
//! ([`crate::charts::line`]) into the set's folder as PNG, SVG and PDF, beside its runs.

use std::path::{Path, PathBuf};

use anyhow::Result;
use d1bench_core::Strategy;

use crate::charts::line::{Line, LineChart, Point, x_range_of};
use crate::charts::style::{Scale, extent, range_for, strategy_color, strategy_shape, write};
use crate::readme::replicates::{self, PointOverRuns, SetSpec};
use crate::stats::CONFIDENCE;

/// The figure's file stem in the set's folder: `d1-over-postgres`.
pub fn name(short: &str) -> String {
    format!("d1-over-{}", short.to_lowercase())
}

/// What the line chart draws of `points`; `None` when there is no point.
pub fn chart(points: &[PointOverRuns], short: &str) -> Option<LineChart> {
    let lines: Vec<Line> = Strategy::ALL
        .into_iter()
        .map(|strategy| {
            let points = (points.iter())
                .filter(|p| p.at.strategy == strategy && p.over.center.is_finite())
                .map(|p| Point {
                    x: p.at.x,
                    y: p.over.center,
                    bar: p.over.interval.map(|i| (i.low, i.high)),
                })
                .collect();
            Line::solid(
                strategy.to_string(),
                strategy_color(strategy),
                strategy_shape(strategy),
                points,
            )
        })
        .filter(|l| !l.points.is_empty())
        .collect();
    if lines.is_empty() {
        return None;
    }
    let ys = (lines.iter())
        .flat_map(|l| &l.points)
        .flat_map(|p| [Some(p.y), p.bar.map(|b| b.0), p.bar.map(|b| b.1)])
        .flatten()
        .chain([1.0])
        .filter(|y| y.is_finite() && *y > 0.0);
    let (lo, hi) = extent(ys)?;
    let y_range = range_for(lo, hi, Scale::Log);
    let x_range = x_range_of(&lines, Scale::Log);
    Some(LineChart {
        title: None,
        x_label: "columns".to_owned(),
        y_label: format!("local D1 ÷ {short} (inside clock)"),
        x_scale: Scale::Log,
        x_range,
        x_text: Default::default(),
        y_scale: Scale::Log,
        y_range,
        refusal_band: None,
        lines,
        secondary_heading: None,
        reference: Some((
            vec![(x_range.0, 1.0), (x_range.1, 1.0)],
            format!("as fast on both; above: {short} faster"),
        )),
        dodge: true,
    })
}

/// Draws the figure of `spec`'s set (two runs or more) into its folder; the files written, none
/// while there is no such set.
pub fn render(root: &Path, spec: SetSpec, short: &str) -> Result<Vec<PathBuf>> {
    let Some(set) = super::stated(spec, root)? else {
        return Ok(Vec::new());
    };
    let Some((_, points)) = replicates::to_baseline(&set, CONFIDENCE)? else {
        return Ok(Vec::new());
    };
    let Some(chart) = chart(&points, short) else {
        return Ok(Vec::new());
    };
    let stem = name(short);
    write(&chart, |extension| {
        set.path.join(format!("{stem}.{extension}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::TargetKind;
    use crate::stats::runs::OverRuns;
    use crate::studies::sweep::report::session_values::RatioPoint;

    fn point(strategy: Strategy, x: f64, center: f64) -> PointOverRuns {
        PointOverRuns {
            at: RatioPoint {
                target: TargetKind::Local,
                label: String::new(),
                strategy,
                x,
            },
            over: OverRuns {
                center,
                interval: None,
                per_run: vec![center],
                per_run_interval: vec![None],
                within_sd: 0.0,
                between_sd: 0.0,
                schedule_sd: 0.0,
                log_se: 0.0,
                df: 0.0,
                own_schedule_run_sd: 0.0,
            },
        }
    }

    #[test]
    fn one_line_a_strategy_on_log_axes_that_hold_one() {
        let points = [
            point(Strategy::Bound, 1.0, 0.6),
            point(Strategy::Bound, 100.0, 1.5),
            point(Strategy::Literal, 100.0, 0.3),
        ];
        let chart = chart(&points, "Postgres").unwrap();
        let labels: Vec<&str> = chart.lines.iter().map(|l| l.label.as_str()).collect();
        assert_eq!(labels, ["bound", "literal"]);
        assert_eq!(chart.lines[0].points.len(), 2);
        assert!(
            chart.y_range.0 < 0.3 && chart.y_range.1 > 1.5,
            "{:?}",
            chart.y_range
        );
        assert_eq!(chart.y_label, "local D1 ÷ Postgres (inside clock)");
        assert_eq!(name("Postgres"), "d1-over-postgres");
        assert!(super::chart(&[], "DO").is_none());
    }
}
