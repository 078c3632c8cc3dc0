//! The one line chart every kind of study draws: lines of points against one x axis, each point
//! with its interval as an error bar; points of different lines that would overlap moved apart
//! sideways ([`style::dodge`]); a thin dashed companion beside a line (a p99 beside its p50);
//! secondary lines (a baseline) thin, grey and under the others; refused points as crosses, at
//! their value or in a band above the data; and a dashed grey reference curve (a documented
//! limit). A chart module says what to plot in a [`LineChart`]; this draws it in the house
//! style.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;

use super::style::{
    self, Axes, CAP_PT, DASH_PT, DODGE_PT, Figure, LINE_PT, MARKER_PT, MUTED, Mark, Pen, Plot,
    REFERENCE_SAMPLE, Sample, Scale, Shape, Span, THIN_PT, TickText, draw_frame, draw_reference,
    drawing_error, extent, fraction, marker, padded, px, range_for, small_marker, stroke, value_at,
};

/// One point of a line: its value at `x`, and the interval drawn as its error bar.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    pub x: f64,
    pub y: f64,
    /// `(low, high)`; no bar where there is none or it has no width.
    pub bar: Option<Span>,
}

/// How a line joins its points.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stroke {
    Solid,
    Dashed,
    /// Markers alone, not joined.
    Markers,
}

/// One line of a chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    /// Its legend entry.
    pub label: String,
    pub color: RGBColor,
    pub shape: Shape,
    pub stroke: Stroke,
    /// A secondary line (a baseline): thin, with smaller markers, drawn under the main lines,
    /// never dodged, listed in the legend under [`LineChart::secondary_heading`].
    pub secondary: bool,
    /// Points in increasing x.
    pub points: Vec<Point>,
    /// A thin dashed line in the same colour beside this one, without markers or bars (the
    /// p99 beside a p50).
    pub companion: Option<Vec<(f64, f64)>>,
    /// xs where every repeat was refused: a cross in the line's colour instead of its marker,
    /// in the refusal band when the chart has one, else at the point.
    pub refused: Vec<f64>,
}

impl Line {
    /// A solid main line of `points` with nothing else.
    pub fn solid(label: String, color: RGBColor, shape: Shape, points: Vec<Point>) -> Line {
        Line {
            label,
            color,
            shape,
            stroke: Stroke::Solid,
            secondary: false,
            points,
            companion: None,
            refused: Vec::new(),
        }
    }

    /// The line's legend sample.
    fn sample(&self) -> Sample {
        if self.stroke == Stroke::Markers {
            return Sample::Marker {
                color: self.color,
                shape: self.shape,
            };
        }
        Sample::Line {
            color: self.color,
            points: self.width(),
            dashed: self.stroke == Stroke::Dashed,
            marker: Some(self.shape),
            small_marker: self.secondary,
        }
    }

    fn width(&self) -> f64 {
        if self.secondary { THIN_PT } else { LINE_PT }
    }
}

/// Everything a line chart shows.
#[derive(Debug, Clone, PartialEq)]
pub struct LineChart {
    /// Drawn above the chart when set (a paper figure has its title in its caption).
    pub title: Option<String>,
    pub x_label: String,
    pub y_label: String,
    pub x_scale: Scale,
    pub x_range: Span,
    /// What the x ticks say: their values, or the percentiles they stand for.
    pub x_text: TickText,
    pub y_scale: Scale,
    /// The whole y axis, the refusal band included.
    pub y_range: Span,
    /// Where refused points are drawn, above the data; `None`: at their point's value.
    pub refusal_band: Option<Span>,
    pub lines: Vec<Line>,
    /// The legend's heading over the secondary lines (`bare SQLite (n=5):`); without one they
    /// are not listed.
    pub secondary_heading: Option<String>,
    /// A grey dashed reference curve and its legend entry.
    pub reference: Option<(Vec<(f64, f64)>, String)>,
    /// Whether the main lines' points that would overlap are moved apart.
    pub dodge: bool,
}

/// Every value `lines` draw on the y axis: points, error bars and companions.
fn ys(lines: &[Line]) -> impl Iterator<Item = f64> + '_ {
    lines.iter().flat_map(|l| {
        let points = l.points.iter().flat_map(|p| {
            [Some(p.y), p.bar.map(|b| b.0), p.bar.map(|b| b.1)]
                .into_iter()
                .flatten()
        });
        points.chain(l.companion.iter().flatten().map(|p| p.1))
    })
}

/// The x range of `lines`' points on `scale`, padded; `(1, 1)` padded without points.
pub fn x_range_of(lines: &[Line], scale: Scale) -> Span {
    let xs = lines.iter().flat_map(|l| l.points.iter().map(|p| p.x));
    let (lo, hi) = extent(xs).unwrap_or((1.0, 1.0));
    range_for(lo, hi, scale)
}

/// The y range of `lines` on `scale` from their values, error bars and companions (only the
/// positive ones on a log axis): from 0 at most on a linear axis, at least half again as high
/// as its lowest value, padded.
pub fn y_range_of(lines: &[Line], scale: Scale) -> Span {
    let shown = ys(lines).filter(|y| scale == Scale::Linear || *y > 0.0);
    let (lo, hi) = extent(shown).unwrap_or((1.0, 1.0));
    let lo = if scale == Scale::Linear {
        lo.min(0.0)
    } else {
        lo
    };
    padded(lo, hi.max(lo * 1.5).max(lo + 1e-9), scale)
}

impl LineChart {
    /// One entry per main line; then the secondary lines under their heading; then the
    /// refusal mark and the reference curve.
    pub fn legend(&self) -> Vec<(Sample, String)> {
        let (secondary, main): (Vec<&Line>, Vec<&Line>) =
            self.lines.iter().partition(|l| l.secondary);
        let mut items: Vec<_> = main.iter().map(|l| (l.sample(), l.label.clone())).collect();
        if let Some(heading) = &self.secondary_heading {
            items.push((Sample::Heading, heading.clone()));
            items.extend(secondary.iter().map(|l| (l.sample(), l.label.clone())));
        }
        if self.lines.iter().any(|l| !l.refused.is_empty()) {
            let sample = Sample::Marker {
                color: MUTED,
                shape: Shape::Cross,
            };
            items.push((sample, "refused".to_owned()));
        }
        if let Some((_, label)) = &self.reference {
            items.push((REFERENCE_SAMPLE, label.clone()));
        }
        items
    }

    /// The chart with each main line's points moved across to where they are drawn on a plot
    /// of `size` pixels: beside the points whose error bars and markers they would overlap
    /// ([`style::dodge`]), or where they are. Secondary lines stay where they are, under the
    /// main ones: their intervals are narrow, and spreading lines that run together would move
    /// them far.
    pub fn dodged(&self, (width, height): (i32, i32)) -> LineChart {
        let (width, height) = (f64::from(width), f64::from(height));
        let reach = f64::from(px(MARKER_PT));
        let marks: Vec<Mark> = (self.lines.iter().enumerate())
            .filter(|(_, l)| !l.secondary)
            .flat_map(|(line, l)| l.points.iter().map(move |p| (line, p)))
            .map(|(line, p)| {
                let along = |y: f64| fraction(y, self.y_range, self.y_scale) * height;
                let (low, high) = p.bar.unwrap_or((p.y, p.y));
                Mark {
                    line,
                    x: fraction(p.x, self.x_range, self.x_scale) * width,
                    low: along(low).min(along(p.y) - reach),
                    high: along(high).max(along(p.y) + reach),
                }
            })
            .collect();
        let mut offsets = style::dodge(&marks, f64::from(px(DODGE_PT))).into_iter();
        let mut chart = self.clone();
        for line in chart.lines.iter_mut().filter(|l| !l.secondary) {
            for point in &mut line.points {
                let dx = offsets.next().unwrap_or(0.0) / width;
                let x = value_at(
                    fraction(point.x, chart.x_range, chart.x_scale) + dx,
                    chart.x_range,
                    chart.x_scale,
                );
                // A refusal drawn at its point moves with it.
                for refused in line.refused.iter_mut().filter(|r| **r == point.x) {
                    *refused = x;
                }
                point.x = x;
            }
        }
        chart
    }
}

impl Figure for LineChart {
    /// The title, the legend under it, the plot below them.
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>, pen: &Pen) -> Result<()> {
        let axes = Axes {
            x_label: &self.x_label,
            y_label: &self.y_label,
            x_scale: self.x_scale,
            x_range: self.x_range,
            x_text: self.x_text,
            y_scale: self.y_scale,
            y_range: self.y_range,
            // y ticks label the data only, not the refusal band above it.
            y_labelled: (
                self.y_range.0,
                self.refusal_band.map_or(self.y_range.1, |band| band.0),
            ),
            band: self.refusal_band,
        };
        draw_frame(
            root,
            pen,
            self.title.as_deref(),
            self.legend(),
            &axes,
            |plot| draw_data(plot, self),
        )
    }
}

/// The data of `chart` on its plot: the reference curve, then the secondary lines, the main
/// ones over them, and the refusal marks on top of everything.
fn draw_data<DB: DrawingBackend>(plot: &mut Plot<'_, DB>, chart: &LineChart) -> Result<()> {
    let dodged;
    let chart = if chart.dodge {
        let (across, along) = plot.plotting_area().get_pixel_range();
        dodged = chart.dodged((across.end - across.start, along.end - along.start));
        &dodged
    } else {
        chart
    };
    if let Some((curve, _)) = &chart.reference {
        draw_reference(plot, curve.clone())?;
    }
    let drawing_order = (chart.lines.iter().filter(|l| l.secondary))
        .chain(chart.lines.iter().filter(|l| !l.secondary));
    for line in drawing_order {
        draw_line(plot, line)?;
    }
    draw_refusals(plot, chart)
}

/// One line: its error bars, the line, its companion, its markers.
fn draw_line<DB: DrawingBackend>(plot: &mut Plot<'_, DB>, line: &Line) -> Result<()> {
    let (color, cap) = (line.color, px(CAP_PT));
    let thin = stroke(color, THIN_PT);
    let bars: Vec<(f64, f64, f64)> = (line.points.iter())
        .filter_map(|p| p.bar.map(|(low, high)| (p.x, low, high)))
        .filter(|(_, low, high)| high > low)
        .collect();
    plot.draw_series(
        bars.iter()
            .map(|&(x, low, high)| PathElement::new(vec![(x, low), (x, high)], thin)),
    )
    .map_err(drawing_error)?;
    plot.draw_series(bars.iter().flat_map(|&(x, low, high)| {
        [low, high]
            .map(|y| EmptyElement::at((x, y)) + PathElement::new(vec![(-cap, 0), (cap, 0)], thin))
    }))
    .map_err(drawing_error)?;
    let joined: Vec<(f64, f64)> = line.points.iter().map(|p| (p.x, p.y)).collect();
    let style = stroke(color, line.width());
    match line.stroke {
        Stroke::Solid => plot.draw_series(LineSeries::new(joined, style)).map(drop),
        Stroke::Dashed => plot
            .draw_series(std::iter::once(dashed(joined, style)))
            .map(drop),
        Stroke::Markers => Ok(()),
    }
    .map_err(drawing_error)?;
    if let Some(companion) = &line.companion {
        plot.draw_series(std::iter::once(dashed(companion.clone(), thin)))
            .map_err(drawing_error)?;
    }
    // A refused point gets the refusal mark instead of the line's marker.
    let shape = if line.secondary {
        small_marker(line.shape, (0, 0))
    } else {
        marker(line.shape, (0, 0))
    };
    let kept = (line.points.iter()).filter(|p| !line.refused.contains(&p.x));
    plot.draw_series(
        kept.map(|p| EmptyElement::at((p.x, p.y)) + Polygon::new(shape.clone(), color.filled())),
    )
    .map_err(drawing_error)?;
    Ok(())
}

fn dashed(
    points: Vec<(f64, f64)>,
    style: ShapeStyle,
) -> DashedPathElement<std::vec::IntoIter<(f64, f64)>, i32> {
    DashedPathElement::new(points, px(DASH_PT.0), px(DASH_PT.1), style)
}

/// The refusal marks of every line, in the band (one row per line, so walls at the same x stay
/// apart) or at their point.
fn draw_refusals<DB: DrawingBackend>(plot: &mut Plot<'_, DB>, chart: &LineChart) -> Result<()> {
    let band_height = chart.refusal_band.map_or(0.0, |(lo, hi)| {
        let (_, bottom) = plot.backend_coord(&(chart.x_range.0, lo));
        let (_, top) = plot.backend_coord(&(chart.x_range.0, hi));
        f64::from(bottom - top)
    });
    let count = chart.lines.len() as f64;
    for (i, line) in chart.lines.iter().enumerate() {
        let marks = line
            .refused
            .iter()
            .filter_map(|&x| match chart.refusal_band {
                Some((lo, hi)) => {
                    let row = (i as f64 + 1.0) / (count + 1.0) - 0.5;
                    Some((x, (lo * hi).sqrt(), (row * band_height).round() as i32))
                }
                None => line.points.iter().find(|p| p.x == x).map(|p| (x, p.y, 0)),
            });
        plot.draw_series(marks.map(|(x, y, dy)| {
            EmptyElement::at((x, y))
                + Polygon::new(marker(Shape::Cross, (0, dy)), line.color.filled())
        }))
        .map_err(drawing_error)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::charts::style::{BASELINE, drawn_svg};

    const BLUE: RGBColor = RGBColor(0x00, 0x72, 0xb2);

    fn point(x: f64, y: f64, bar: Option<Span>) -> Point {
        Point { x, y, bar }
    }

    fn chart(lines: Vec<Line>) -> LineChart {
        LineChart {
            title: None,
            x_label: "x".to_owned(),
            y_label: "y".to_owned(),
            x_scale: Scale::Linear,
            x_range: x_range_of(&lines, Scale::Linear),
            x_text: Default::default(),
            y_scale: Scale::Linear,
            y_range: y_range_of(&lines, Scale::Linear),
            refusal_band: None,
            lines,
            secondary_heading: None,
            reference: None,
            dodge: true,
        }
    }

    fn two_lines_at_one_x() -> Vec<Line> {
        let bars = vec![point(10.0, 5.0, Some((4.0, 6.0)))];
        let main = Line::solid("a".to_owned(), BLUE, Shape::Circle, bars.clone());
        let other = Line::solid("b".to_owned(), BLUE, Shape::Square, bars.clone());
        let baseline = Line {
            secondary: true,
            stroke: Stroke::Dashed,
            ..Line::solid("base".to_owned(), BASELINE, Shape::Circle, bars)
        };
        vec![main, other, baseline]
    }

    #[test]
    fn the_legend_lists_main_lines_then_the_secondary_under_their_heading() {
        let mut c = chart(two_lines_at_one_x());
        let labels = |c: &LineChart| -> Vec<String> {
            c.legend().into_iter().map(|(_, label)| label).collect()
        };
        assert_eq!(
            labels(&c),
            ["a", "b"],
            "no heading: the baseline is not listed"
        );
        c.secondary_heading = Some("baseline:".to_owned());
        c.lines[1].refused = vec![10.0];
        c.reference = Some((vec![(1.0, 1.0)], "limit".to_owned()));
        assert_eq!(
            labels(&c),
            ["a", "b", "baseline:", "base", "refused", "limit"]
        );
        let legend = c.legend();
        assert_eq!(legend[2].0, Sample::Heading);
        assert_eq!(
            legend[3].0,
            Sample::Line {
                color: BASELINE,
                points: THIN_PT,
                dashed: true,
                marker: Some(Shape::Circle),
                small_marker: true,
            }
        );
        c.lines[0].stroke = Stroke::Markers;
        assert_eq!(
            c.legend()[0].0,
            Sample::Marker {
                color: BLUE,
                shape: Shape::Circle
            }
        );
    }

    #[test]
    fn overlapping_main_lines_move_apart_with_their_refusals_and_the_secondary_stays() {
        let mut lines = two_lines_at_one_x();
        lines[0].refused = vec![10.0];
        let dodged = chart(lines).dodged((800, 600));
        let xs: Vec<f64> = dodged.lines.iter().map(|l| l.points[0].x).collect();
        assert!(xs[0] < 10.0 && xs[1] > 10.0, "{xs:?}");
        assert_eq!(xs[2], 10.0);
        assert_eq!(dodged.lines[0].refused, [xs[0]]);
    }

    #[test]
    fn the_y_range_holds_values_bars_and_companions() {
        let mut lines = two_lines_at_one_x();
        lines[0].companion = Some(vec![(10.0, 50.0)]);
        let (lo, hi) = y_range_of(&lines, Scale::Linear);
        assert!(
            lo <= 0.0 && hi >= 50.0,
            "linear from 0, up to the companion: {lo} {hi}"
        );
        lines[1].points.push(point(20.0, 0.0, None));
        let (lo, hi) = y_range_of(&lines, Scale::Log);
        assert!(
            lo > 0.0 && lo < 4.0 && hi > 50.0,
            "log: the zero left out: {lo} {hi}"
        );
    }

    #[test]
    fn a_chart_draws_its_legend_and_axes() {
        let mut c = chart(two_lines_at_one_x());
        c.x_label = "rows offered".to_owned();
        c.y_label = "latency measured".to_owned();
        c.secondary_heading = Some("under the heading:".to_owned());
        let svg = drawn_svg(&c).unwrap();
        for text in ["rows offered", "latency measured", "under the heading:"] {
            assert!(svg.contains(text), "{text} not in the SVG");
        }
    }
}
