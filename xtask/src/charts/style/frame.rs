//! The frame every chart shares: title, legend above the plot, axes, ticks, grid and labels
//! around a chart's data, and the markers and samples the legend and the data use.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::*;

/// A marker's shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Circle,
    Square,
    Triangle,
    /// A square turned 45°.
    Diamond,
    /// A triangle pointing down.
    TriangleDown,
    Pentagon,
    /// A refused point.
    Cross,
}

/// The outline of a `shape` marker centred `offset` pixels from its point, as a polygon so
/// every shape is one element type. All shapes have about the same area, so no strategy looks
/// heavier than another.
pub fn marker(shape: Shape, (dx, dy): (i32, i32)) -> Vec<(i32, i32)> {
    let r = f64::from(px(MARKER_PT));
    let at = |x: f64, y: f64| (dx + x.round() as i32, dy + y.round() as i32);
    let turn = |i: usize, n: usize| i as f64 * std::f64::consts::TAU / n as f64;
    match shape {
        Shape::Circle => (0..32)
            .map(|i| at(r * turn(i, 32).cos(), r * turn(i, 32).sin()))
            .collect(),
        Shape::Square => {
            let s = r * 0.886;
            vec![at(-s, -s), at(s, -s), at(s, s), at(-s, s)]
        }
        Shape::Triangle => {
            // Equilateral, pointing up, centred on its centroid.
            let radius = r * 1.555;
            (0..3)
                .map(|i| {
                    let a = turn(i, 3) - std::f64::consts::FRAC_PI_2;
                    at(radius * a.cos(), radius * a.sin())
                })
                .collect()
        }
        Shape::Diamond => {
            let d = r * 1.253;
            vec![at(0.0, -d), at(d, 0.0), at(0.0, d), at(-d, 0.0)]
        }
        Shape::TriangleDown => {
            let radius = r * 1.555;
            (0..3)
                .map(|i| {
                    let a = turn(i, 3) + std::f64::consts::FRAC_PI_2;
                    at(radius * a.cos(), radius * a.sin())
                })
                .collect()
        }
        Shape::Pentagon => {
            let radius = r * 1.095;
            (0..5)
                .map(|i| {
                    let a = turn(i, 5) - std::f64::consts::FRAC_PI_2;
                    at(radius * a.cos(), radius * a.sin())
                })
                .collect()
        }
        Shape::Cross => {
            // A plus with arms `l` long and `t` half thick, turned 45°.
            let l = f64::from(px(CROSS_PT)) * 1.3;
            let t = f64::from(px(LINE_PT)) / 2.0 + 0.5;
            let plus = [
                (t, l),
                (t, t),
                (l, t),
                (l, -t),
                (t, -t),
                (t, -l),
                (-t, -l),
                (-t, -t),
                (-l, -t),
                (-l, t),
                (-t, t),
                (-t, l),
            ];
            let c = std::f64::consts::FRAC_1_SQRT_2;
            plus.iter()
                .map(|&(x, y)| at(c * (x - y), c * (x + y)))
                .collect()
        }
    }
}

/// How big a secondary line's markers (the baseline's) are, against the main lines': drawn
/// under them, not competing with them.
pub const SMALL_MARKER: f64 = 0.7;

/// [`marker`] at [`SMALL_MARKER`] of its size.
pub fn small_marker(shape: Shape, (dx, dy): (i32, i32)) -> Vec<(i32, i32)> {
    let scale = |v: i32| (f64::from(v) * SMALL_MARKER).round() as i32;
    marker(shape, (0, 0))
        .into_iter()
        .map(|(x, y)| (dx + scale(x), dy + scale(y)))
        .collect()
}

/// The title and its font: shrunk down to [`TITLE_MIN_PT`], then shortened, until it fits.
pub(super) fn fitted_title(pen: &Pen, title: &str, width: f64) -> (String, Font) {
    let mut font = TITLE_FONT;
    while pen.width(title, font) > width && font.points > TITLE_MIN_PT {
        font.points -= 0.5;
    }
    let mut text = title.to_owned();
    let mut keep = title.chars().count();
    while pen.width(&text, font) > width && keep > 0 {
        keep -= 1;
        let kept: String = title.chars().take(keep).collect();
        text = format!("{}…", kept.trim_end());
    }
    (text, font)
}

/// What a legend entry shows before its label.
#[derive(Debug, Clone, PartialEq)]
pub enum Sample {
    /// A line `points` wide, solid or dashed, with a marker at its middle or none.
    Line {
        color: RGBColor,
        points: f64,
        dashed: bool,
        marker: Option<Shape>,
        /// The marker at [`SMALL_MARKER`] of its size, as a secondary line draws it.
        small_marker: bool,
    },
    /// A marker alone.
    Marker { color: RGBColor, shape: Shape },
    /// Nothing: the label heads the entries after it, starting a new row (`bare SQLite (n=5):
    /// ● bound ■ literal`), so a group of lines reads as one.
    Heading,
}

impl Sample {
    /// Width of the sample drawn before the label: a line, or just the marker.
    pub(super) fn width(&self) -> i32 {
        match self {
            Sample::Line { .. } => px(LEGEND_SAMPLE_PT),
            Sample::Marker { .. } => px(CROSS_PT * 2.6),
            Sample::Heading => 0,
        }
    }

    /// From the entry's start to its label's: the sample and the space after it.
    pub(super) fn lead(&self) -> i32 {
        match self {
            Sample::Heading => 0,
            _ => self.width() + px(LEGEND_INNER_PT),
        }
    }

    /// Draws the sample from `x` along a row centred at `cy`.
    pub(super) fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        x: i32,
        cy: i32,
    ) -> Result<()> {
        let width = self.width();
        let mid = (x + width / 2, cy);
        let (color, line, shape, small) = match *self {
            Sample::Line {
                color,
                points,
                dashed,
                marker,
                small_marker,
            } => (color, Some((points, dashed)), marker, small_marker),
            Sample::Marker { color, shape } => (color, None, Some(shape), false),
            Sample::Heading => return Ok(()),
        };
        if let Some((points, dashed)) = line {
            draw_line(
                root,
                vec![(x, cy), (x + width, cy)],
                stroke(color, points),
                dashed,
            )?;
        }
        if let Some(shape) = shape {
            let outline = if small {
                small_marker(shape, (0, 0))
            } else {
                marker(shape, (0, 0))
            };
            root.draw(&(EmptyElement::at(mid) + Polygon::new(outline, color.filled())))
                .map_err(drawing_error)?;
        }
        Ok(())
    }
}

/// The legend sample of a reference curve: thin, dashed, grey.
pub const REFERENCE_SAMPLE: Sample = Sample::Line {
    color: REFERENCE,
    points: THIN_PT,
    dashed: true,
    marker: None,
    small_marker: false,
};

/// Draws a reference curve (a documented limit, say) through `points` on `plot`, under the data
/// drawn after it.
pub fn draw_reference<DB: DrawingBackend>(
    plot: &mut Plot<'_, DB>,
    points: Vec<(f64, f64)>,
) -> Result<()> {
    let style = stroke(REFERENCE, THIN_PT);
    plot.draw_series([DashedPathElement::new(
        points,
        px(DASH_PT.0),
        px(DASH_PT.1),
        style,
    )])
    .map_err(drawing_error)?;
    Ok(())
}

/// A legend in centred rows above the plot, where it can never cover data.
pub(super) struct Legend {
    /// Rows of (sample, label, width in pixels).
    pub(super) rows: Vec<Vec<(Sample, String, i32)>>,
    pub(super) row_height: i32,
}

impl Legend {
    /// Entries in rows as wide as `width` allows, a heading starting a new row.
    pub(super) fn layout(pen: &Pen, items: Vec<(Sample, String)>, width: i32) -> Legend {
        let gap = px(LEGEND_ITEM_PT);
        let mut rows: Vec<Vec<(Sample, String, i32)>> = Vec::new();
        for (sample, label) in items {
            let item_width = sample.lead() + pen.width(&label, LEGEND_FONT).ceil() as i32;
            let heading = sample == Sample::Heading;
            match rows.last_mut() {
                Some(row) if !heading && Legend::row_width(row) + gap + item_width <= width => {
                    row.push((sample, label, item_width))
                }
                _ => rows.push(vec![(sample, label, item_width)]),
            }
        }
        Legend {
            rows,
            row_height: (Pen::em(LEGEND_FONT) * 1.4).round() as i32,
        }
    }

    pub(super) fn row_width(row: &[(Sample, String, i32)]) -> i32 {
        let items: i32 = row.iter().map(|(_, _, w)| w).sum();
        items + px(LEGEND_ITEM_PT) * (row.len() as i32 - 1).max(0)
    }

    pub(super) fn height(&self) -> i32 {
        self.rows.len() as i32 * self.row_height
    }

    /// Draws the legend with its top at `top`, centred on a figure `width` wide.
    pub(super) fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        pen: &Pen,
        width: i32,
        top: i32,
    ) -> Result<()> {
        for (r, row) in self.rows.iter().enumerate() {
            let cy = top + r as i32 * self.row_height + self.row_height / 2;
            let mut x = (width - Legend::row_width(row)) / 2;
            for (sample, label, item_width) in row {
                sample.draw(root, x, cy)?;
                let at = (x + sample.lead(), cy);
                let anchor = (HPos::Left, VPos::Center);
                pen.draw(root, label, LEGEND_FONT, TEXT, anchor, Direction::Right, at)?;
                x += item_width + px(LEGEND_ITEM_PT);
            }
        }
        Ok(())
    }
}

/// A polyline in pixels, solid or dashed.
pub(super) fn draw_line<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    points: Vec<(i32, i32)>,
    style: ShapeStyle,
    dashed: bool,
) -> Result<()> {
    if dashed {
        root.draw(&DashedPathElement::new(
            points,
            px(DASH_PT.0),
            px(DASH_PT.1),
            style,
        ))
    } else {
        root.draw(&PathElement::new(points, style))
    }
    .map_err(drawing_error)
}

/// A chart's two axes.
#[derive(Debug, Clone, PartialEq)]
pub struct Axes<'a> {
    pub x_label: &'a str,
    pub y_label: &'a str,
    pub x_scale: Scale,
    pub x_range: Span,
    /// What the x ticks say.
    pub x_text: TickText,
    pub y_scale: Scale,
    pub y_range: Span,
    /// The part of `y_range` whose values are labelled: all of it, or less when a band above
    /// the data holds marks of no value (refusals).
    pub y_labelled: Span,
    /// A grey band across the plot over this part of the y axis, under the grid.
    pub band: Option<Span>,
}

/// The plot a chart draws its data on, in the values of its axes.
pub type Plot<'a, DB> = ChartContext<'a, DB, Cartesian2d<PlotAxis, PlotAxis>>;

/// Draws everything of a chart but its data on `root`: the title (if any: a paper figure has its
/// title in its caption), the legend of `legend` under it, and below them the axes with their
/// ticks, grid and labels. Then `data` draws on the plot, over the grid.
pub fn draw_frame<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    pen: &Pen,
    title: Option<&str>,
    legend: Vec<(Sample, String)>,
    axes: &Axes,
    data: impl FnOnce(&mut Plot<'_, DB>) -> Result<()>,
) -> Result<()> {
    root.fill(&WHITE).map_err(drawing_error)?;
    let (width, _) = root.dim_in_pixel();
    let width = width as i32;
    let margin = px(MARGIN_PT);

    let mut top = margin;
    if let Some(title) = title {
        let (title, font) = fitted_title(pen, title, f64::from(width - 2 * margin));
        let anchor = (HPos::Center, VPos::Top);
        let at = (width / 2, margin);
        pen.draw(root, &title, font, TEXT, anchor, Direction::Right, at)?;
        top += px(font.points) + px(GAP_PT);
    }

    let legend = Legend::layout(pen, legend, width - 2 * margin);
    legend.draw(root, pen, width, top)?;
    top += legend.height() + px(GAP_PT);

    let (_, area) = root.split_vertically(top);
    let mut plot = draw_axes(root, &area, pen, axes)?;
    data(&mut plot)
}

/// The axes on `area`, the part of `root` below the title and legend: ticks chosen so their
/// labels fit, the grid, the band, the axis lines, and the labels, set with `pen` on `root`.
pub(super) fn draw_axes<'a, DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    area: &'a DrawingArea<DB, Shift>,
    pen: &Pen,
    axes: &Axes,
) -> Result<Plot<'a, DB>> {
    let (width, height) = root.dim_in_pixel();
    let (width, height) = (width as i32, height as i32);
    let tick = px(TICK_PT);
    let label_offset = tick + px(TICK_GAP_PT);
    let tick_em = Pen::em(TICK_LABEL_FONT);
    let label_em = Pen::em(AXIS_LABEL_FONT);
    let margin = px(MARGIN_PT);
    // Room for the labels: a line of text takes about an em below its top.
    let x_area = label_offset + tick_em.ceil() as i32 + px(GAP_PT) + label_em.ceil() as i32;
    let plot_height = area.dim_in_pixel().1 as i32 - x_area - margin;

    // y ticks: labels at least 1.8 em apart.
    let (y_lo, y_hi) = axes.y_labelled;
    let y_ticks = ticks(y_lo, y_hi, axes.y_scale, |ticks| {
        ticks.windows(2).all(|pair| {
            let gap = fraction(pair[1], axes.y_range, axes.y_scale)
                - fraction(pair[0], axes.y_range, axes.y_scale);
            gap * f64::from(plot_height) >= tick_em * 1.8
        })
    });
    let y_labels = tick_labels(&y_ticks.major, axes.y_scale);
    let y_label_width = y_labels
        .iter()
        .map(|label| pen.width(label, TICK_LABEL_FONT))
        .fold(0.0, f64::max);
    let y_area = label_offset + y_label_width.ceil() as i32 + px(GAP_PT) + label_em.ceil() as i32;

    // x ticks: neighbouring labels at least an em apart, the last one inside the figure.
    let right = margin * 2;
    let plot_width = width - margin - y_area - right;
    let x_ticks = ticks(axes.x_range.0, axes.x_range.1, axes.x_scale, |ticks| {
        let widths: Vec<f64> = axes
            .x_text
            .labels(ticks, axes.x_scale)
            .iter()
            .map(|label| pen.width(label, TICK_LABEL_FONT))
            .collect();
        let centre = |t: f64| fraction(t, axes.x_range, axes.x_scale) * f64::from(plot_width);
        let apart = ticks
            .windows(2)
            .zip(widths.windows(2))
            .all(|(t, w)| centre(t[1]) - centre(t[0]) >= (w[0] + w[1]) / 2.0 + tick_em);
        let inside = ticks.last().zip(widths.last()).is_none_or(|(&t, &w)| {
            centre(t) + w / 2.0 <= f64::from(plot_width + right - margin / 2)
        });
        apart && inside
    });
    let x_labels = axes.x_text.labels(&x_ticks.major, axes.x_scale);
    let (x_major, y_major) = (x_ticks.major.clone(), y_ticks.major.clone());

    let mut plot = ChartBuilder::on(area)
        .margin_left(margin)
        .margin_right(right)
        .margin_bottom(margin)
        .x_label_area_size(x_area)
        .y_label_area_size(y_area)
        .build_cartesian_2d(
            PlotAxis {
                scale: axes.x_scale,
                range: axes.x_range,
                // No minor grid across: it would crowd the left of every decade of a sweep.
                ticks: Ticks {
                    minor: Vec::new(),
                    ..x_ticks
                },
            },
            PlotAxis {
                scale: axes.y_scale,
                range: axes.y_range,
                ticks: y_ticks,
            },
        )
        .map_err(drawing_error)?;

    // The band first, so the grid shows through it.
    if let Some((lo, hi)) = axes.band {
        plot.draw_series([Rectangle::new(
            [(axes.x_range.0, lo), (axes.x_range.1, hi)],
            BAND.filled(),
        )])
        .map_err(drawing_error)?;
    }
    // Grid, axis lines and tick marks; the labels are drawn below, with the pen.
    let no_label = |_: &f64| String::new();
    plot.configure_mesh()
        .x_label_formatter(&no_label)
        .y_label_formatter(&no_label)
        // Fully transparent text is skipped by both backends: no empty SVG elements.
        .label_style(pen.style(TICK_LABEL_FONT, TEXT).color(&TRANSPARENT))
        .bold_line_style(stroke(GRID, GRID_PT))
        .light_line_style(stroke(GRID_MINOR, GRID_PT))
        .axis_style(stroke(AXIS_LINE, THIN_PT))
        .set_all_tick_mark_size(tick)
        .draw()
        .map_err(drawing_error)?;

    let (x_pixels, y_pixels) = plot.plotting_area().get_pixel_range();
    let (axis_x, axis_y) = (x_pixels.start, y_pixels.end);
    let right_of = Direction::Right;
    for (&t, label) in x_major.iter().zip(&x_labels) {
        let (x, _) = plot.backend_coord(&(t, axes.y_range.0));
        let at = (x, axis_y + label_offset);
        let anchor = (HPos::Center, VPos::Top);
        pen.draw(root, label, TICK_LABEL_FONT, TEXT, anchor, right_of, at)?;
    }
    for (&t, label) in y_major.iter().zip(&y_labels) {
        let (_, y) = plot.backend_coord(&(axes.x_range.0, t));
        let at = (axis_x - label_offset, y);
        let anchor = (HPos::Right, VPos::Center);
        pen.draw(root, label, TICK_LABEL_FONT, TEXT, anchor, right_of, at)?;
    }
    let centre_x = (x_pixels.start + x_pixels.end) / 2;
    let anchor = (HPos::Center, VPos::Bottom);
    let at = (centre_x, height - margin);
    pen.draw(
        root,
        axes.x_label,
        AXIS_LABEL_FONT,
        TEXT,
        anchor,
        right_of,
        at,
    )?;
    let centre_y = (y_pixels.start + y_pixels.end) / 2;
    let anchor = (HPos::Center, VPos::Top);
    let at = (margin, centre_y);
    pen.draw(
        root,
        axes.y_label,
        AXIS_LABEL_FONT,
        TEXT,
        anchor,
        Direction::Up,
        at,
    )?;
    Ok(plot)
}
