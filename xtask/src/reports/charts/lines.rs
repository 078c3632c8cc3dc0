//! A chart of lines with error bars against one x axis, in the house style: what the cache's
//! hit ratio and staleness against TTL and the refusal share against rate per retry policy draw
//! (one line per series, each point with its interval as error bars when it has one).

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::style::{
    Axes, CAP_PT, Figure, LINE_PT, Pen, Sample, Scale, Shape, THIN_PT, draw_frame, drawing_error,
    extent, marker, padded, px, range_for, stroke,
};

/// One point: x, y and y's interval.
pub type Point = (f64, f64, Option<(f64, f64)>);

/// One series.
pub struct Line {
    pub label: String,
    pub color: RGBColor,
    pub shape: Shape,
    pub points: Vec<Point>,
}

pub struct LinesChart {
    pub title: Option<String>,
    pub x_label: String,
    pub y_label: String,
    pub x_scale: Scale,
    pub y_scale: Scale,
    /// A fixed y range (shares: 0 to 1); otherwise from the data.
    pub y_range: Option<(f64, f64)>,
    pub lines: Vec<Line>,
}

impl Figure for LinesChart {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>, pen: &Pen) -> Result<()> {
        let xs = self.lines.iter().flat_map(|l| l.points.iter().map(|p| p.0));
        let (x_lo, x_hi) = extent(xs).unwrap_or((1.0, 1.0));
        let y_range = self.y_range.unwrap_or_else(|| {
            let ys = self.lines.iter().flat_map(|l| {
                l.points.iter().flat_map(|p| {
                    [Some(p.1), p.2.map(|c| c.0), p.2.map(|c| c.1)]
                        .into_iter()
                        .flatten()
                })
            });
            let positive = ys.filter(|y| self.y_scale == Scale::Linear || *y > 0.0);
            let (lo, hi) = extent(positive).unwrap_or((1.0, 1.0));
            let lo = if self.y_scale == Scale::Linear {
                lo.min(0.0)
            } else {
                lo
            };
            padded(lo, hi.max(lo * 1.5).max(lo + 1e-9), self.y_scale)
        });
        let axes = Axes {
            x_label: &self.x_label,
            y_label: &self.y_label,
            x_scale: self.x_scale,
            x_range: range_for(x_lo, x_hi, self.x_scale),
            y_scale: self.y_scale,
            y_range,
            y_labelled: y_range,
            band: None,
        };
        let legend = self
            .lines
            .iter()
            .map(|l| {
                (
                    Sample::Line {
                        color: l.color,
                        points: LINE_PT,
                        dashed: false,
                        marker: Some(l.shape),
                        small_marker: false,
                    },
                    l.label.clone(),
                )
            })
            .collect();
        draw_frame(root, pen, self.title.as_deref(), legend, &axes, |plot| {
            let cap = px(CAP_PT);
            for l in &self.lines {
                let thin = stroke(l.color, THIN_PT);
                let bars: Vec<(f64, f64, f64)> = l
                    .points
                    .iter()
                    .filter_map(|p| p.2.map(|(lo, hi)| (p.0, lo, hi)))
                    .filter(|(_, lo, hi)| hi > lo)
                    .collect();
                plot.draw_series(
                    bars.iter()
                        .map(|&(x, lo, hi)| PathElement::new(vec![(x, lo), (x, hi)], thin)),
                )
                .map_err(drawing_error)?;
                plot.draw_series(bars.iter().flat_map(|&(x, lo, hi)| {
                    [lo, hi].map(|y| {
                        EmptyElement::at((x, y)) + PathElement::new(vec![(-cap, 0), (cap, 0)], thin)
                    })
                }))
                .map_err(drawing_error)?;
                let line: Vec<(f64, f64)> = l.points.iter().map(|p| (p.0, p.1)).collect();
                plot.draw_series(LineSeries::new(line.clone(), stroke(l.color, LINE_PT)))
                    .map_err(drawing_error)?;
                let mark = marker(l.shape, (0, 0));
                plot.draw_series(
                    line.into_iter().map(|p| {
                        EmptyElement::at(p) + Polygon::new(mark.clone(), l.color.filled())
                    }),
                )
                .map_err(drawing_error)?;
            }
            Ok(())
        })
    }
}
