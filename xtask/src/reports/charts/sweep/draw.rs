//! Step 3 of a sweep chart: a [`Chart`] drawn inside the frame every chart shares, its legend,
//! and its points dodged where their error bars would collide.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;

use super::{BASELINE_LEGEND, Chart, Series, repeats};
use crate::reports::charts::style::{
    Axes, BASELINE, CAP_PT, DASH_PT, DODGE_PT, Figure, LINE_PT, MARKER_PT, MUTED, Mark, Pen, Plot,
    REFERENCE_SAMPLE, Sample, Shape, THIN_PT, dodge, draw_frame, draw_reference, drawing_error,
    fraction, marker, px, small_marker, strategy_color, strategy_shape, stroke, value_at,
};

impl Figure for Chart {
    /// The title, the legend under it, the plot below them.
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>, pen: &Pen) -> Result<()> {
        let axes = Axes {
            x_label: self.x_label,
            y_label: self.y_label,
            x_scale: self.x_scale,
            x_range: self.x_range,
            y_scale: self.y_scale,
            y_range: self.y_range,
            // y ticks label the data only, not the refusal band above it.
            y_labelled: (
                self.y_range.0,
                self.refusal_band.map_or(self.y_range.1, |band| band.0),
            ),
            band: self.refusal_band,
        };
        let legend = legend_items(self);
        let title = self.draw_title.then_some(self.title.as_str());
        draw_frame(root, pen, title, legend, &axes, |plot| {
            draw_data(plot, self)
        })
    }
}

/// One entry per line: the target's, each with its repeats; then under a heading of their own
/// (`bare SQLite (n=5):`) the baseline's, each with its strategy's marker in grey; then the
/// refusal mark and the reference curve.
pub(super) fn legend_items(chart: &Chart) -> Vec<(Sample, String)> {
    let line = |s: &Series| Sample::Line {
        color: if s.baseline {
            BASELINE
        } else {
            strategy_color(s.strategy)
        },
        points: if s.baseline { THIN_PT } else { LINE_PT },
        dashed: s.baseline || !s.label.is_empty(),
        marker: Some(strategy_shape(s.strategy)),
        small_marker: s.baseline,
    };
    let (baseline, target): (Vec<&Series>, Vec<&Series>) =
        chart.series.iter().partition(|s| s.baseline);
    let mut items: Vec<_> = target.iter().map(|s| (line(s), s.legend())).collect();
    if let Some(n) = repeats(baseline.iter().copied()) {
        items.push((Sample::Heading, format!("{BASELINE_LEGEND} ({n}):")));
        items.extend(baseline.iter().map(|s| (line(s), s.name())));
    }
    if chart.series.iter().any(|s| !s.refused.is_empty()) {
        let sample = Sample::Marker {
            color: MUTED,
            shape: Shape::Cross,
        };
        items.push((sample, "refused".to_owned()));
    }
    if let Some((_, label)) = &chart.reference {
        items.push((REFERENCE_SAMPLE, (*label).to_owned()));
    }
    items
}

/// `chart` with each of the target's points moved across to where it is drawn: beside the
/// points whose error bars and markers it would overlap on a plot of `size` pixels ([`dodge`]),
/// or where it is. The baseline's grey lines stay where they are, under the target's: their
/// intervals are narrow, and spreading three lines that run together would move them far.
pub(super) fn dodged(chart: &Chart, (width, height): (i32, i32)) -> Chart {
    let (width, height) = (f64::from(width), f64::from(height));
    let reach = f64::from(px(MARKER_PT));
    let marks: Vec<Mark> = (chart.series.iter().enumerate())
        .filter(|(_, s)| !s.baseline)
        .flat_map(|(line, s)| s.points.iter().map(move |p| (line, p)))
        .map(|(line, p)| {
            let along = |y: f64| fraction(y, chart.y_range, chart.y_scale) * height;
            Mark {
                line,
                x: fraction(p.x, chart.x_range, chart.x_scale) * width,
                low: along(p.low).min(along(p.median) - reach),
                high: along(p.high).max(along(p.median) + reach),
            }
        })
        .collect();
    let mut offsets = dodge(&marks, f64::from(px(DODGE_PT))).into_iter();
    let mut chart = chart.clone();
    for series in chart.series.iter_mut().filter(|s| !s.baseline) {
        for point in &mut series.points {
            let dx = offsets.next().unwrap_or(0.0) / width;
            let x = value_at(
                fraction(point.x, chart.x_range, chart.x_scale) + dx,
                chart.x_range,
                chart.x_scale,
            );
            // A refusal drawn at its point moves with it.
            for refused in series.refused.iter_mut().filter(|r| **r == point.x) {
                *refused = x;
            }
            point.x = x;
        }
    }
    chart
}

/// The data of `chart` on its plot: the reference curve, then the baseline's lines, the
/// target's over them, and the refusal marks on top of everything.
fn draw_data<DB: DrawingBackend>(plot: &mut Plot<'_, DB>, chart: &Chart) -> Result<()> {
    let (across, along) = plot.plotting_area().get_pixel_range();
    let size = (across.end - across.start, along.end - along.start);
    let chart = &dodged(chart, size);
    if let Some((curve, _)) = &chart.reference {
        draw_reference(plot, curve.clone())?;
    }

    let cap = px(CAP_PT);
    // The baseline first, so the target's lines are drawn over it.
    let drawing_order = chart
        .series
        .iter()
        .filter(|s| s.baseline)
        .chain(chart.series.iter().filter(|s| !s.baseline));
    for series in drawing_order {
        let color = if series.baseline {
            BASELINE
        } else {
            strategy_color(series.strategy)
        };
        let thin = stroke(color, THIN_PT);
        // The median's 95% confidence interval, where it has a width.
        let spread = series.points.iter().filter(|p| p.high > p.low);
        plot.draw_series(
            spread
                .clone()
                .map(|p| PathElement::new(vec![(p.x, p.low), (p.x, p.high)], thin)),
        )
        .map_err(drawing_error)?;
        plot.draw_series(spread.flat_map(|p| {
            [p.low, p.high].map(|y| {
                EmptyElement::at((p.x, y)) + PathElement::new(vec![(-cap, 0), (cap, 0)], thin)
            })
        }))
        .map_err(drawing_error)?;
        let line: Vec<(f64, f64)> = series.points.iter().map(|p| (p.x, p.median)).collect();
        let width = if series.baseline { THIN_PT } else { LINE_PT };
        if series.baseline || !series.label.is_empty() {
            plot.draw_series(std::iter::once(DashedPathElement::new(
                line,
                px(DASH_PT.0),
                px(DASH_PT.1),
                stroke(color, width),
            )))
        } else {
            plot.draw_series(LineSeries::new(line, stroke(color, width)))
        }
        .map_err(drawing_error)?;
        // A refused point gets the refusal mark instead of the strategy's marker; baseline
        // markers are smaller, in grey.
        let shape = if series.baseline {
            small_marker(strategy_shape(series.strategy), (0, 0))
        } else {
            marker(strategy_shape(series.strategy), (0, 0))
        };
        let kept = series
            .points
            .iter()
            .filter(|p| !series.refused.contains(&p.x));
        plot.draw_series(kept.map(|p| {
            EmptyElement::at((p.x, p.median)) + Polygon::new(shape.clone(), color.filled())
        }))
        .map_err(drawing_error)?;
    }

    // Refusal marks last, on top of everything.
    let band_height = chart.refusal_band.map_or(0.0, |(lo, hi)| {
        let (_, bottom) = plot.backend_coord(&(chart.x_range.0, lo));
        let (_, top) = plot.backend_coord(&(chart.x_range.0, hi));
        f64::from(bottom - top)
    });
    let count = chart.series.len() as f64;
    for (i, series) in chart.series.iter().enumerate() {
        let color = if series.baseline {
            BASELINE
        } else {
            strategy_color(series.strategy)
        };
        let marks = series
            .refused
            .iter()
            .filter_map(|&x| match chart.refusal_band {
                // In the band, one row per strategy so walls at the same x stay apart.
                Some((lo, hi)) => {
                    let row = (i as f64 + 1.0) / (count + 1.0) - 0.5;
                    Some((x, (lo * hi).sqrt(), (row * band_height).round() as i32))
                }
                None => series
                    .points
                    .iter()
                    .find(|p| p.x == x)
                    .map(|p| (x, p.median, 0)),
            });
        plot.draw_series(marks.map(|(x, y, dy)| {
            EmptyElement::at((x, y)) + Polygon::new(marker(Shape::Cross, (0, dy)), color.filled())
        }))
        .map_err(drawing_error)?;
    }
    Ok(())
}
