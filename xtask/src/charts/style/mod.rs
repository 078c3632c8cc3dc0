//! The one style every d1bench chart is drawn in: a paper column's figure (3.5 in × 2.6 in at
//! 300 dpi) with DejaVu Sans at fixed point sizes and the same line widths, colours and margins;
//! the title, legend and axes every chart shares; and each chart's three files, a PNG that
//! records its print resolution, an SVG with its text as outlines, and a PDF with the font.
//!
//! A chart draws its data (every line chart through [`super::line`]; the decision map its cells,
//! in the frame of [`grid`]); [`draw_frame`] draws everything around the data (title, legend
//! above the plot, axes, ticks, grid, axis labels) and [`write`] writes the files. Text is laid out by [`Pen`] from the embedded font's own metrics,
//! so both formats place it identically on every machine.
//!
//! Its parts: [`files`] (the PNG, the SVG and the PDF), [`text`] (the font and [`Pen`]), [`axes`]
//! (scales and ticks), [`frame`] (title, legend, axes around the data), [`grid`] (the frame of a
//! chart of cells), [`dodge`] (points that would overlap, moved apart).

use d1bench_core::Strategy;
use plotters::prelude::*;

use crate::base::orm::Orm;

mod axes;
mod dodge;
mod files;
mod frame;
mod grid;
#[cfg(test)]
mod tests;
mod text;

pub use axes::*;
pub use dodge::*;
pub use files::*;
pub use frame::*;
pub use grid::*;
pub use text::*;

/// Resolution of the PNG files, also written into them (`pHYs`) so that LaTeX and word
/// processors place them at their printed size.
pub const DPI: f64 = 300.0;

/// Figure size in pixels: 3.5 in × 2.6 in (one paper column) at [`DPI`]. The SVG files have the
/// same logical size, so both formats lay out identically.
pub const FIGURE: (u32, u32) = (1050, 780);

/// The family the embedded DejaVu Sans is registered under with plotters, and the one the drawn
/// SVG's text names: usvg sets it in that font alone ([`write`]), so no system font is looked up.
const FONT: &str = "DejaVu Sans";

/// A size and weight of text; sizes in points as printed at 3.5 in wide.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Font {
    points: f64,
    bold: bool,
}

const TITLE_FONT: Font = Font {
    points: 8.0,
    bold: true,
};
const AXIS_LABEL_FONT: Font = Font {
    points: 7.5,
    bold: false,
};
const TICK_LABEL_FONT: Font = Font {
    points: 7.0,
    bold: false,
};
const LEGEND_FONT: Font = Font {
    points: 7.0,
    bold: false,
};
/// The smallest a title may shrink to before it is shortened.
const TITLE_MIN_PT: f64 = 6.0;

/// Line widths and marker sizes in points.
pub const LINE_PT: f64 = 1.0;
pub const THIN_PT: f64 = 0.6;
const GRID_PT: f64 = 0.4;
/// A marker's radius.
pub const MARKER_PT: f64 = 2.1;
const CROSS_PT: f64 = 2.0;
/// Half the width of an error bar's caps.
pub const CAP_PT: f64 = 1.6;
/// How far apart points that would overlap are drawn ([`dodge`]): an error bar's caps and a
/// little air.
pub const DODGE_PT: f64 = 2.0 * CAP_PT + 0.8;
const TICK_PT: f64 = 2.5;
/// Dashes and the gaps between them.
pub const DASH_PT: (f64, f64) = (2.5, 1.5);

/// Space around the figure and between its parts, in points.
const MARGIN_PT: f64 = 4.0;
const GAP_PT: f64 = 3.0;
/// Between a tick mark's end and its label.
const TICK_GAP_PT: f64 = 1.5;
/// Legend: the sample line, sample to label, item to item.
const LEGEND_SAMPLE_PT: f64 = 11.0;
const LEGEND_INNER_PT: f64 = 2.5;
const LEGEND_ITEM_PT: f64 = 7.0;

/// Share of an axis left empty beyond the data on each side (of the log span on log axes).
const PAD: f64 = 0.05;

/// An axis of values that scale becomes logarithmic when they span more than this factor.
const LOG_ABOVE: f64 = 20.0;

const TEXT: RGBColor = RGBColor(0x20, 0x20, 0x20);
const AXIS_LINE: RGBColor = RGBColor(0x40, 0x40, 0x40);
const GRID: RGBColor = RGBColor(0xdc, 0xdc, 0xdc);
const GRID_MINOR: RGBColor = RGBColor(0xef, 0xef, 0xef);
const BAND: RGBColor = RGBColor(0xf2, 0xf2, 0xf2);
/// Marks that belong to no line (a refusal).
pub const MUTED: RGBColor = RGBColor(0x60, 0x60, 0x60);
/// A reference curve drawn for comparison (a documented limit), dashed and thin.
const REFERENCE: RGBColor = RGBColor(0x8c, 0x8c, 0x8c);
/// The bare SQLite baseline's lines: grey, apart from every strategy's colour.
pub const BASELINE: RGBColor = RGBColor(0x9a, 0x9a, 0x9a);

/// Each strategy's colour (Okabe–Ito, readable with colour-vision deficiencies), the same in
/// every chart.
pub fn strategy_color(strategy: Strategy) -> RGBColor {
    match strategy {
        Strategy::Bound => RGBColor(0x00, 0x72, 0xb2),
        Strategy::Literal => RGBColor(0xd5, 0x5e, 0x00),
        Strategy::PerRow => RGBColor(0x00, 0x9e, 0x73),
        Strategy::Json => RGBColor(0xcc, 0x79, 0xa7),
        Strategy::BatchedRows => RGBColor(0xe6, 0x9f, 0x00),
        Strategy::Exec => RGBColor(0x56, 0xb4, 0xe9),
        // Okabe–Ito's black: its yellow, the one other left, is too faint for a line.
        Strategy::Copy => RGBColor(0x00, 0x00, 0x00),
    }
}

/// Each library's colour and marker (Okabe–Ito, as the strategies'), the same in every chart.
pub fn library_style(orm: Orm) -> (RGBColor, Shape) {
    match orm {
        Orm::Drizzle => (RGBColor(0x00, 0x72, 0xb2), Shape::Circle),
        Orm::Prisma => (RGBColor(0xd5, 0x5e, 0x00), Shape::Square),
        Orm::Kysely => (RGBColor(0x00, 0x9e, 0x73), Shape::Triangle),
    }
}

/// Each strategy's marker, so the lines stay apart in greyscale print too.
pub fn strategy_shape(strategy: Strategy) -> Shape {
    match strategy {
        Strategy::Bound => Shape::Circle,
        Strategy::Literal => Shape::Square,
        Strategy::PerRow => Shape::Triangle,
        Strategy::Json => Shape::Diamond,
        Strategy::BatchedRows => Shape::TriangleDown,
        Strategy::Exec => Shape::Pentagon,
        // Filled, as every marker: a refusal's cross is drawn as lines, so they stay apart.
        Strategy::Copy => Shape::Cross,
    }
}

/// Points to pixels at [`DPI`].
pub fn px(points: f64) -> i32 {
    (points * DPI / 72.0).round() as i32
}

/// A line of `points` width.
pub fn stroke(color: RGBColor, points: f64) -> ShapeStyle {
    color.stroke_width(px(points).max(1) as u32)
}
