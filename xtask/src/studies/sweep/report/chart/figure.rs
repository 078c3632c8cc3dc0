//! Step 3 of a sweep chart: a [`Chart`] as the one line chart draws it ([`LineChart`]): the
//! target's lines in their strategies' colours, labelled series dashed, the baseline's thin and
//! grey under a heading of its own, points dodged where their error bars would collide.

use crate::charts::line::{Line, LineChart, Point, Stroke};
use crate::charts::style::{BASELINE, strategy_color, strategy_shape};

use super::{BASELINE_LEGEND, Chart, Series, repeats};

/// The line of `series`: its legend entry is the name and repeats of a target's line, the name
/// alone of a baseline's (its repeats are in the baseline's heading).
fn line(series: &Series) -> Line {
    Line {
        label: if series.baseline {
            series.name()
        } else {
            series.legend()
        },
        color: if series.baseline {
            BASELINE
        } else {
            strategy_color(series.strategy)
        },
        shape: strategy_shape(series.strategy),
        stroke: if series.baseline || !series.label.is_empty() {
            Stroke::Dashed
        } else {
            Stroke::Solid
        },
        secondary: series.baseline,
        points: (series.points.iter())
            .map(|p| Point {
                x: p.x,
                y: p.median,
                bar: Some((p.low, p.high)),
            })
            .collect(),
        companion: None,
        refused: series.refused.clone(),
    }
}

/// What the line chart draws of `chart`.
pub(super) fn figure(chart: &Chart) -> LineChart {
    let baseline = chart.series.iter().filter(|s| s.baseline);
    LineChart {
        title: chart.draw_title.then(|| chart.title.clone()),
        x_label: chart.x_label.to_owned(),
        y_label: chart.y_label.to_owned(),
        x_scale: chart.x_scale,
        x_range: chart.x_range,
        x_text: Default::default(),
        y_scale: chart.y_scale,
        y_range: chart.y_range,
        refusal_band: chart.refusal_band,
        lines: chart.series.iter().map(line).collect(),
        secondary_heading: repeats(baseline).map(|n| format!("{BASELINE_LEGEND} ({n}):")),
        reference: (chart.reference.as_ref())
            .map(|(curve, label)| (curve.clone(), (*label).to_owned())),
        dodge: true,
    }
}
