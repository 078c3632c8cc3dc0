//! Draws a run's charts (time per 1,000 rows, rows per statement, clock overhead) as PNG and
//! SVG paper figures.
//!
//! Each chart plots one value per line (a strategy, in a labelled series or not) against the
//! experiment's swept axis, sized for one column of a paper: 3.5 in × 2.6 in, 300 dpi. Points are
//! medians over the repeats with their 95% bootstrap confidence interval as error bars; the bare
//! SQLite baseline, when the run has one, is drawn in dashed grey under the target's lines.
//!
//! Drawing happens in three steps, each testable on its own:
//!
//! 1. [`summarize`] turns the run's points ([`crate::points`], summarized by
//!    [`crate::stats`]) into per-line series and notes where every repeat was refused. It is pure.
//! 2. [`time_chart`], [`rows_per_statement_chart`] and [`overhead_chart`] decide what a chart
//!    shows: its series, axis scales and ranges, the refusal band, the reference curve. Also pure.
//! 3. [`draw_chart`] puts a [`Chart`] on a plotters backend; [`render_run`] writes the files.
//!
//! Everything that decides how the charts look lives in the style section below. Text is set
//! in DejaVu Sans embedded in the binary, so charts look the same on every machine.

use std::fmt;
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use anyhow::{Context, Result, anyhow, bail, ensure};
use d1bench_core::{Outcome, Strategy};
use plotters::coord::Shift;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::flags::TargetKind;
use crate::records::{ResultRow, RunDir};
use crate::reports::points::{Measure, points};
use crate::reports::stats::Summary;
use crate::studies::sweep::Axis;

// ---------------------------------------------------------------------------------------------
// Style: the one place that decides how every chart looks.
// ---------------------------------------------------------------------------------------------

/// Resolution of the PNG files, also written into them (`pHYs`) so that LaTeX and word
/// processors place them at their printed size.
const DPI: f64 = 300.0;

/// Figure size in pixels: 3.5 in × 2.6 in (one paper column) at [`DPI`]. The SVG files have the
/// same logical size, so both formats lay out identically.
const FIGURE: (u32, u32) = (1050, 780);

/// The family the embedded DejaVu Sans is registered under; no system font is ever looked up.
const FONT: &str = "sans-serif";

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
const LINE_PT: f64 = 1.0;
const THIN_PT: f64 = 0.6;
const GRID_PT: f64 = 0.4;
const MARKER_PT: f64 = 2.1;
const CROSS_PT: f64 = 2.0;
const CAP_PT: f64 = 1.6;
const TICK_PT: f64 = 2.5;
const DASH_PT: (f64, f64) = (2.5, 1.5);

/// Space around the figure and between its parts, in points.
const MARGIN_PT: f64 = 4.0;
const GAP_PT: f64 = 3.0;
/// Between a tick mark's end and its label.
const TICK_GAP_PT: f64 = 1.5;
/// Legend: the sample line, sample to label, item to item.
const LEGEND_SAMPLE_PT: f64 = 11.0;
const LEGEND_INNER_PT: f64 = 2.5;
const LEGEND_ITEM_PT: f64 = 7.0;

/// Share of the time chart's height given to the band of refused points above the data.
const REFUSAL_BAND: f64 = 0.15;

/// Share of an axis left empty beyond the data on each side (of the log span on log axes).
const PAD: f64 = 0.05;

/// The x axis becomes logarithmic when its values span more than this factor.
const LOG_X_ABOVE: f64 = 20.0;

/// The order strategies are listed in, in every legend.
const STRATEGIES: [Strategy; 3] = [Strategy::Bound, Strategy::Literal, Strategy::PerRow];

const TEXT: RGBColor = RGBColor(0x20, 0x20, 0x20);
const AXIS_LINE: RGBColor = RGBColor(0x40, 0x40, 0x40);
const GRID: RGBColor = RGBColor(0xdc, 0xdc, 0xdc);
const GRID_MINOR: RGBColor = RGBColor(0xef, 0xef, 0xef);
const BAND: RGBColor = RGBColor(0xf2, 0xf2, 0xf2);
const MUTED: RGBColor = RGBColor(0x60, 0x60, 0x60);
const REFERENCE: RGBColor = RGBColor(0x8c, 0x8c, 0x8c);
/// The bare SQLite baseline's lines: grey, apart from every strategy's colour.
const BASELINE: RGBColor = RGBColor(0x9a, 0x9a, 0x9a);

/// Each strategy's colour (Okabe–Ito, readable with colour-vision deficiencies), the same in
/// every chart.
fn strategy_color(strategy: Strategy) -> RGBColor {
    match strategy {
        Strategy::Bound => RGBColor(0x00, 0x72, 0xb2),
        Strategy::Literal => RGBColor(0xd5, 0x5e, 0x00),
        Strategy::PerRow => RGBColor(0x00, 0x9e, 0x73),
    }
}

/// Each strategy's marker, so the lines stay apart in greyscale print too.
fn strategy_shape(strategy: Strategy) -> Shape {
    match strategy {
        Strategy::Bound => Shape::Circle,
        Strategy::Literal => Shape::Square,
        Strategy::PerRow => Shape::Triangle,
    }
}

/// Points to pixels at [`DPI`].
fn px(points: f64) -> i32 {
    (points * DPI / 72.0).round() as i32
}

/// A line of `points` width.
fn stroke(color: RGBColor, points: f64) -> ShapeStyle {
    color.stroke_width(px(points).max(1) as u32)
}

// ---------------------------------------------------------------------------------------------
// The entry point.
// ---------------------------------------------------------------------------------------------

/// What the baseline is called in every legend: never D1.
const BASELINE_LABEL: &str = "bare SQLite (baseline)";

/// A chart written to disk.
#[derive(Debug, Clone, PartialEq)]
pub struct Drawn {
    /// File stem: `<name>.png` and `<name>.svg` in the run directory.
    pub name: String,
    /// One line saying what the chart shows.
    pub caption: String,
    pub files: Vec<PathBuf>,
}

/// Draws every chart of a run into its directory as PNG and SVG; returns what was written.
/// `target` is the run's target: rows of other targets (the sqlite baseline) are drawn as
/// reference lines on the time chart.
///
/// A chart with nothing to show (no probe succeeded, so there is no time to plot) is skipped
/// with a warning on stderr; it is an error when no chart at all can be drawn, or `rows` is
/// empty.
pub fn render_run(
    run: &RunDir,
    rows: &[ResultRow],
    axis: Axis,
    title: &str,
    target: TargetKind,
) -> Result<Vec<Drawn>> {
    ensure!(
        !rows.is_empty(),
        "no results to plot for {}: the run has no rows",
        run.path.display()
    );
    let fonts = fonts()?;
    let mut written = Vec::new();
    let mut skipped = Vec::new();
    for chart in [
        time_chart(rows, axis, title, target),
        rows_per_statement_chart(rows, axis, title, target),
        overhead_chart(rows, axis, title, target),
    ] {
        let chart = match chart {
            Ok(chart) => chart,
            Err(skip) => {
                eprintln!("warning: {skip}");
                skipped.push(skip.to_string());
                continue;
            }
        };
        let mut files = Vec::new();
        for format in [Target::Png, Target::Svg] {
            let path = run.chart(&chart.name, format.extension());
            let pen = Pen {
                target: format,
                fonts,
            };
            format
                .write(&path, &chart, &pen)
                .with_context(|| format!("cannot draw {}", path.display()))?;
            files.push(path);
        }
        written.push(Drawn {
            name: chart.name,
            caption: chart.caption,
            files,
        });
    }
    if written.is_empty() {
        bail!(
            "no chart could be drawn for {}: {}",
            run.path.display(),
            skipped.join("; ")
        );
    }
    Ok(written)
}

/// A file format charts are drawn in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    Png,
    Svg,
}

impl Target {
    fn extension(self) -> &'static str {
        match self {
            Target::Png => "png",
            Target::Svg => "svg",
        }
    }

    fn write(self, path: &Path, chart: &Chart, pen: &Pen) -> Result<()> {
        match self {
            Target::Png => {
                {
                    let root = BitMapBackend::new(path, FIGURE).into_drawing_area();
                    draw_chart(&root, chart, pen)?;
                    root.present().map_err(drawing_error)?;
                }
                set_png_dpi(path, DPI)
            }
            Target::Svg => {
                let mut svg = String::new();
                {
                    let root = SVGBackend::with_string(&mut svg, FIGURE).into_drawing_area();
                    draw_chart(&root, chart, pen)?;
                    root.present().map_err(drawing_error)?;
                }
                std::fs::write(path, svg).context("cannot write the file")
            }
        }
    }
}

/// plotters' errors carry the backend's error type, which anyhow cannot always hold.
fn drawing_error(error: impl fmt::Display) -> anyhow::Error {
    anyhow!("drawing failed: {error}")
}

// ---------------------------------------------------------------------------------------------
// Step 1: rows to points.
// ---------------------------------------------------------------------------------------------

/// One (line, x) point: its repeats summarized.
#[derive(Debug, Clone, PartialEq)]
struct Point {
    x: f64,
    median: f64,
    /// The 95% bootstrap confidence interval of the median: the error bar.
    low: f64,
    high: f64,
    /// Repeats that contributed.
    repeats: usize,
}

impl Point {
    fn of(x: f64, summary: Summary) -> Point {
        Point {
            x,
            median: summary.median,
            low: summary.ci_low,
            high: summary.ci_high,
            repeats: summary.n,
        }
    }
}

/// One line of a chart.
#[derive(Debug, Clone, PartialEq)]
struct Series {
    strategy: Strategy,
    /// The experiment series' label; empty for the strategy's plain line.
    label: String,
    /// A line of the bare SQLite baseline, drawn in grey under the others.
    baseline: bool,
    /// Points in increasing x.
    points: Vec<Point>,
    /// x values where no repeat succeeded and at least one was refused: the strategy's wall.
    refused: Vec<f64>,
}

impl Series {
    /// The legend's name of the line (baseline lines share one legend entry).
    fn name(&self) -> String {
        if self.label.is_empty() {
            self.strategy.name().to_owned()
        } else {
            format!("{}, {}", self.strategy, self.label)
        }
    }
}

/// The series of `rows` for `measure`: one per line, the target's first (in legend order,
/// unlabelled before labelled), then the baseline's. A point's value is the summary of its
/// repeats' positive values (a log axis cannot show the others); rows with outcome `error` never
/// count, see [`Measure::value`] for the rest.
fn summarize(rows: &[ResultRow], axis: Axis, measure: Measure, target: TargetKind) -> Vec<Series> {
    let mut series: Vec<Series> = Vec::new();
    for point in points(rows, axis) {
        let baseline = point.line.target != target;
        let position = series.iter().position(|s| {
            s.strategy == point.line.strategy
                && s.label == point.line.label
                && s.baseline == baseline
        });
        let line = match position {
            Some(i) => &mut series[i],
            None => {
                series.push(Series {
                    strategy: point.line.strategy,
                    label: point.line.label.clone(),
                    baseline,
                    points: Vec::new(),
                    refused: Vec::new(),
                });
                series.last_mut().expect("just pushed")
            }
        };
        let positive: Vec<f64> = point
            .values(measure)
            .into_iter()
            .filter(|v| *v > 0.0)
            .collect();
        line.points
            .extend(Summary::of(&positive).map(|s| Point::of(point.x, s)));
        if point.refused_only() {
            line.refused.push(point.x);
        }
    }
    series.retain(|s| !s.points.is_empty() || !s.refused.is_empty());
    let order = |s: &Series| {
        let strategy = STRATEGIES.iter().position(|&st| st == s.strategy);
        (s.baseline, !s.label.is_empty(), s.label.clone(), strategy)
    };
    series.sort_by_key(order);
    series
}

// ---------------------------------------------------------------------------------------------
// Step 2: what each chart shows.
// ---------------------------------------------------------------------------------------------

/// How an axis maps values to positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scale {
    Linear,
    Log,
}

/// The x scale for values `xs`: logarithmic when they span more than [`LOG_X_ABOVE`] (the
/// geometric sweeps), linear otherwise.
fn x_scale(xs: impl IntoIterator<Item = f64>) -> Scale {
    let (lo, hi) = extent(xs).unwrap_or((1.0, 1.0));
    if lo > 0.0 && hi / lo > LOG_X_ABOVE {
        Scale::Log
    } else {
        Scale::Linear
    }
}

/// Smallest and largest of `values`, or `None` when there are none.
fn extent(values: impl IntoIterator<Item = f64>) -> Option<(f64, f64)> {
    values.into_iter().fold(None, |acc, v| match acc {
        None => Some((v, v)),
        Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
    })
}

/// `lo..=hi` widened by [`PAD`] on each side, so markers at the ends are not cut.
fn padded(lo: f64, hi: f64, scale: Scale) -> (f64, f64) {
    match scale {
        Scale::Log => {
            let (lo, hi) = (lo.log10(), hi.log10());
            let pad = if hi > lo { (hi - lo) * PAD } else { 0.3 };
            (10f64.powf(lo - pad), 10f64.powf(hi + pad))
        }
        Scale::Linear => {
            let pad = if hi > lo {
                (hi - lo) * PAD
            } else {
                (lo.abs() * 0.1).max(1.0)
            };
            (lo - pad, hi + pad)
        }
    }
}

/// The x axis for values from `lo` to `hi`: padded, and from 0 on a linear axis when the
/// values start near it, so the axis reads from its natural origin.
fn x_range(lo: f64, hi: f64, scale: Scale) -> (f64, f64) {
    let (padded_lo, padded_hi) = padded(lo, hi, scale);
    if scale == Scale::Linear && lo > 0.0 && lo <= hi * 0.25 {
        (0.0, padded_hi)
    } else {
        (padded_lo, padded_hi)
    }
}

/// Everything needed to draw one chart.
#[derive(Debug, Clone, PartialEq)]
struct Chart {
    /// File stem: the chart is written to `<name>.png` and `<name>.svg`.
    name: String,
    /// One line saying what the chart shows, for summary.md.
    caption: String,
    title: String,
    x_label: &'static str,
    y_label: &'static str,
    x_scale: Scale,
    x_range: (f64, f64),
    /// The whole y axis (log scale), band included.
    y_range: (f64, f64),
    /// Where refused points are drawn, above the data, when there is no value to draw them at.
    /// `None`: they are drawn at their point's value.
    refusal_band: Option<(f64, f64)>,
    series: Vec<Series>,
    /// A grey dashed reference curve and its legend label.
    reference: Option<(Vec<(f64, f64)>, &'static str)>,
}

/// Why a chart is not drawn.
#[derive(Debug, Clone, PartialEq)]
struct Skip {
    chart: String,
    reason: String,
}

impl fmt::Display for Skip {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "chart {} not drawn: {}", self.chart, self.reason)
    }
}

fn chart_title(title: &str, subject: &str) -> String {
    if title.trim().is_empty() {
        subject.to_owned()
    } else {
        format!("{title}: {subject}")
    }
}

/// The rows of one target.
fn of_target(rows: &[ResultRow], target: TargetKind) -> Vec<ResultRow> {
    rows.iter()
        .filter(|r| r.target == target)
        .cloned()
        .collect()
}

/// A range of an axis: `(from, to)`.
type Span = (f64, f64);

/// The y range of a log chart of `series`, from its error bars, with a band above for refusals
/// when any series has one: `(y_range, refusal_band)`.
fn y_range_with_band(series: &[Series]) -> Option<(Span, Option<Span>)> {
    let (y_lo, y_hi) = extent(
        series
            .iter()
            .flat_map(|s| &s.points)
            .flat_map(|p| [p.low, p.high]),
    )?;
    let (y_lo, y_hi) = padded(y_lo, y_hi, Scale::Log);
    Some(if series.iter().any(|s| !s.refused.is_empty()) {
        // Extend the axis upwards so the band takes REFUSAL_BAND of its height.
        let span = (y_hi / y_lo).log10();
        let top = y_hi * 10f64.powf(span * REFUSAL_BAND / (1.0 - REFUSAL_BAND));
        ((y_lo, top), Some((y_hi, top)))
    } else {
        ((y_lo, y_hi), None)
    })
}

/// The x scale and range of `series`, refusals included.
fn x_axis_of(series: &[Series]) -> (Scale, (f64, f64)) {
    let xs = series.iter().flat_map(|s| {
        s.points
            .iter()
            .map(|p| p.x)
            .chain(s.refused.iter().copied())
    });
    let scale = x_scale(xs.clone());
    let (lo, hi) = extent(xs).unwrap_or((0.0, 1.0));
    (scale, x_range(lo, hi, scale))
}

/// Why a time chart has nothing to show.
fn nothing_succeeded(rows: &[ResultRow]) -> String {
    let count = |outcome: Outcome| rows.iter().filter(|r| r.outcome == outcome).count();
    let (ok, refused) = (count(Outcome::Ok), count(Outcome::Refused));
    if ok == 0 {
        format!(
            "no probe succeeded ({refused} refused, {} failed), so there is no time to plot",
            rows.len() - refused,
        )
    } else {
        format!("none of the {ok} successful probes wrote rows in a measurable time")
    }
}

/// Milliseconds per 1,000 rows against the axis; refused points in a band above the data; the
/// baseline's lines in grey.
fn time_chart(
    rows: &[ResultRow],
    axis: Axis,
    title: &str,
    target: TargetKind,
) -> Result<Chart, Skip> {
    let name = format!("time-per-1000-rows-vs-{}", axis.name());
    let series = summarize(rows, axis, Measure::MsPer1000Rows, target);
    let Some((y_range, refusal_band)) = y_range_with_band(&series) else {
        return Err(Skip {
            chart: name,
            reason: nothing_succeeded(rows),
        });
    };
    let (x_scale, x_range) = x_axis_of(&series);
    let mut caption = format!(
        "Median time per 1,000 rows written (outside clock) against {}, with 95% bootstrap \
         confidence intervals",
        axis.label()
    );
    if refusal_band.is_some() {
        caption.push_str("; crosses in the top band mark points where every repeat was refused");
    }
    if series.iter().any(|s| s.baseline) {
        caption.push_str(&format!(
            "; dashed grey lines: the same probes on {BASELINE_LABEL}, timed around its writes"
        ));
    }
    caption.push('.');
    Ok(Chart {
        name,
        caption,
        title: chart_title(title, "time per 1,000 rows"),
        x_label: axis.label(),
        y_label: "ms per 1,000 rows (outside clock)",
        x_scale,
        x_range,
        y_range,
        refusal_band,
        series,
        reference: None,
    })
}

/// Rows per INSERT statement against the axis, with floor(100 / C) for the column sweep. The
/// baseline plans the same statements, so only the target's rows are drawn.
fn rows_per_statement_chart(
    rows: &[ResultRow],
    axis: Axis,
    title: &str,
    target: TargetKind,
) -> Result<Chart, Skip> {
    let name = format!("rows-per-statement-vs-{}", axis.name());
    let series = summarize(
        &of_target(rows, target),
        axis,
        Measure::RowsPerStatement,
        target,
    );
    let xs = || series.iter().flat_map(|s| s.points.iter().map(|p| p.x));
    let Some((x_lo, x_hi)) = extent(xs()) else {
        return Err(Skip {
            chart: name,
            reason: "no probe reached D1 (every one failed), so no plan was measured".to_owned(),
        });
    };
    let x_scale = x_scale(xs());
    let reference = (axis == Axis::Columns)
        .then(|| {
            let first = (x_lo.ceil() as usize).max(1);
            let last = (x_hi.floor() as usize).min(100);
            let curve: Vec<_> = (first..=last)
                .map(|c| (c as f64, (100 / c) as f64))
                .collect();
            (!curve.is_empty()).then_some((curve, "floor(100 / C)"))
        })
        .flatten();
    let reference_ys = reference
        .iter()
        .flat_map(|(curve, _)| curve.iter().map(|p| p.1));
    let values = series.iter().flat_map(|s| &s.points).map(|p| p.high);
    let y_hi = extent(values.chain(reference_ys)).map_or(1.0, |(_, hi)| hi);
    let mut caption = format!(
        "Rows per INSERT statement as planned (refused probes included) against {}",
        axis.label()
    );
    if reference.is_some() {
        caption.push_str("; dashed grey: floor(100 / C), the bound-parameter limit");
    }
    caption.push_str("; crosses mark points where every repeat was refused.");
    Ok(Chart {
        name,
        caption,
        title: chart_title(title, "rows per statement"),
        x_label: axis.label(),
        y_label: "rows per INSERT statement",
        x_scale,
        x_range: x_range(x_lo, x_hi, x_scale),
        y_range: padded(1.0, y_hi.max(1.0), Scale::Log),
        refusal_band: None,
        series,
        reference,
    })
}

/// Outside − inside clock against the axis, per strategy: if it differs between strategies, a
/// gap between them could be the instrument's. Only the target's rows: the baseline has one
/// clock.
fn overhead_chart(
    rows: &[ResultRow],
    axis: Axis,
    title: &str,
    target: TargetKind,
) -> Result<Chart, Skip> {
    let name = format!("overhead-outside-minus-inside-ms-vs-{}", axis.name());
    let own = of_target(rows, target);
    let series = summarize(&own, axis, Measure::OverheadMs, target);
    let Some((y_range, _)) = y_range_with_band(&series) else {
        let reason = if own.iter().any(|r| r.outcome == Outcome::Ok) {
            format!(
                "the {target} target's two clocks are one (outside = inside), so there is no \
                 overhead to plot"
            )
        } else {
            nothing_succeeded(&own)
        };
        return Err(Skip {
            chart: name,
            reason,
        });
    };
    // Refusals are drawn on the time chart; here only the lines.
    let series: Vec<Series> = series
        .into_iter()
        .map(|s| Series {
            refused: Vec::new(),
            ..s
        })
        .collect();
    let (x_scale, x_range) = x_axis_of(&series);
    Ok(Chart {
        name,
        caption: format!(
            "Median outside − inside clock per probe against {}, with 95% bootstrap confidence \
             intervals: HTTP, JSON, planning and building the statements, creating the table and \
             counting. Lines that differ mean the outside clock adds different costs to \
             different strategies.",
            axis.label()
        ),
        title: chart_title(title, "outside − inside clock"),
        x_label: axis.label(),
        y_label: "outside − inside (ms per probe)",
        x_scale,
        x_range,
        y_range,
        refusal_band: None,
        series,
        reference: None,
    })
}

// ---------------------------------------------------------------------------------------------
// Ticks: which values an axis labels, and how.
// ---------------------------------------------------------------------------------------------

/// `v` as a tick label with `decimals` digits after the point and thousands separated by commas.
fn format_number(v: f64, decimals: usize) -> String {
    let text = format!("{:.*}", decimals, v.abs());
    let (int, frac) = text.split_once('.').unwrap_or((&text, ""));
    let mut grouped = String::new();
    for (i, digit) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    let sign = if v < 0.0 && text.bytes().any(|b| b.is_ascii_digit() && b != b'0') {
        "-"
    } else {
        ""
    };
    if frac.is_empty() {
        format!("{sign}{grouped}")
    } else {
        format!("{sign}{grouped}.{frac}")
    }
}

/// The fewest decimals that show `v` exactly (up to float noise).
fn decimals(v: f64) -> usize {
    (0..=9)
        .find(|&d| {
            let scale = 10f64.powi(d as i32);
            ((v * scale).round() / scale - v).abs() <= 1e-9 * v.abs().max(1e-12)
        })
        .unwrap_or(9)
}

/// Labels for `ticks`: each with its own decimals on a log axis (0.1, 1, 10), the same
/// decimals throughout on a linear one (0.5, 1.0, 1.5).
fn tick_labels(ticks: &[f64], scale: Scale) -> Vec<String> {
    let shared = ticks.iter().map(|&t| decimals(t)).max().unwrap_or(0);
    ticks
        .iter()
        .map(|&t| match scale {
            Scale::Log => format_number(t, decimals(t)),
            Scale::Linear => format_number(t, shared),
        })
        .collect()
}

/// `mantissa × 10^exponent`, exact for the decimal ticks (3 × 10⁻¹ is 0.3, not 0.30000000000000004).
fn times_ten_to(mantissa: f64, exponent: i32) -> f64 {
    if exponent >= 0 {
        mantissa * 10f64.powi(exponent)
    } else {
        mantissa / 10f64.powi(-exponent)
    }
}

/// Tick sets for `lo..=hi`, most preferred first.
fn tick_candidates(lo: f64, hi: f64, scale: Scale) -> Vec<Vec<f64>> {
    match scale {
        Scale::Linear => linear_tick_candidates(lo, hi),
        Scale::Log => {
            // Decades, then 1-2-5, then every other (third, fourth) decade for wide ranges.
            let mut candidates = vec![
                log_ticks(lo, hi, &[1.0], 1),
                log_ticks(lo, hi, &[1.0, 2.0, 5.0], 1),
            ];
            candidates.extend((2..=4).map(|stride| log_ticks(lo, hi, &[1.0], stride)));
            // About a decade or less: every 1..9 × 10^k, then evenly spaced values.
            candidates.push(log_ticks(lo, hi, &DIGITS, 1));
            candidates.extend(linear_tick_candidates(lo, hi));
            candidates
        }
    }
}

const DIGITS: [f64; 9] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0];

/// The values `m × 10^k` within `lo..=hi` for each of `mantissas`, every `stride`th decade.
fn log_ticks(lo: f64, hi: f64, mantissas: &[f64], stride: i32) -> Vec<f64> {
    let within = |v: &f64| *v >= lo * (1.0 - 1e-9) && *v <= hi * (1.0 + 1e-9);
    let (first, last) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    (first..=last)
        .filter(|k| k.rem_euclid(stride) == 0)
        .flat_map(|k| mantissas.iter().map(move |&m| times_ten_to(m, k)))
        .filter(within)
        .collect()
}

/// Evenly spaced ticks at steps of 1, 2 or 5 × 10^k, sparsest first.
fn linear_tick_candidates(lo: f64, hi: f64) -> Vec<Vec<f64>> {
    if hi.is_nan() || lo.is_nan() || hi <= lo {
        return Vec::new();
    }
    let top = (hi - lo).log10().floor() as i32;
    let mut candidates = Vec::new();
    for k in (top - 2..=top).rev() {
        for m in [5.0, 2.0, 1.0] {
            let step = times_ten_to(m, k);
            let (first, last) = ((lo / step).ceil() as i64, (hi / step).floor() as i64);
            if last - first <= 40 {
                candidates.push(
                    (first..=last)
                        .map(|i| times_ten_to(i as f64 * m, k))
                        .collect(),
                );
            }
        }
    }
    candidates
}

/// The first candidate with a count in `preferred` whose labels fit; failing that the first
/// that fits with at least two ticks; failing that the sparsest non-empty one.
fn choose_ticks(
    candidates: Vec<Vec<f64>>,
    preferred: RangeInclusive<usize>,
    fits: impl Fn(&[f64]) -> bool,
) -> Vec<f64> {
    let pick = candidates
        .iter()
        .position(|c| preferred.contains(&c.len()) && fits(c))
        .or_else(|| candidates.iter().position(|c| c.len() >= 2 && fits(c)))
        .or_else(|| {
            (0..candidates.len())
                .filter(|&i| !candidates[i].is_empty())
                .min_by_key(|&i| candidates[i].len())
        });
    pick.map(|i| candidates[i].clone()).unwrap_or_default()
}

/// The ticks of an axis: labelled (bold grid) and unlabelled minor ones (light grid).
#[derive(Debug, Clone, PartialEq)]
struct Ticks {
    major: Vec<f64>,
    minor: Vec<f64>,
}

/// Chooses the ticks for `lo..=hi` whose labels fit, with the log axes' minor grid at the
/// remaining 1..9 × 10^k.
fn ticks(lo: f64, hi: f64, scale: Scale, fits: impl Fn(&[f64]) -> bool) -> Ticks {
    let preferred = match scale {
        Scale::Log => 3..=8,
        Scale::Linear => 4..=8,
    };
    let major = choose_ticks(tick_candidates(lo, hi, scale), preferred, fits);
    let minor = match scale {
        Scale::Log if (hi / lo).log10() <= 6.0 => log_ticks(lo, hi, &DIGITS, 1)
            .into_iter()
            .filter(|v| !major.iter().any(|m| (m - v).abs() <= 1e-9 * v))
            .collect(),
        _ => Vec::new(),
    };
    Ticks { major, minor }
}

/// Where `v` sits along `lo..=hi`, from 0 to 1.
fn fraction(v: f64, (lo, hi): (f64, f64), scale: Scale) -> f64 {
    match scale {
        Scale::Linear => (v - lo) / (hi - lo),
        Scale::Log => (v / lo).ln() / (hi / lo).ln(),
    }
}

// ---------------------------------------------------------------------------------------------
// Text.
// ---------------------------------------------------------------------------------------------

/// The embedded fonts: registered with plotters, and their metrics for laying text out.
struct Fonts {
    regular: Metrics,
    bold: Metrics,
}

/// Registers DejaVu Sans (regular and bold) with plotters once per process and reads its metrics.
fn fonts() -> Result<&'static Fonts> {
    static FONTS: OnceLock<Option<Fonts>> = OnceLock::new();
    FONTS
        .get_or_init(|| {
            let (regular, bold) = (dejavu::sans::regular(), dejavu::sans::bold());
            plotters::style::register_font(FONT, FontStyle::Normal, regular).ok()?;
            plotters::style::register_font(FONT, FontStyle::Bold, bold).ok()?;
            Some(Fonts {
                regular: Metrics::parse(regular)?,
                bold: Metrics::parse(bold)?,
            })
        })
        .as_ref()
        .context("the embedded DejaVu Sans font could not be loaded")
}

fn be16(data: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes(data.get(at..at + 2)?.try_into().ok()?))
}

fn be32(data: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(data.get(at..at + 4)?.try_into().ok()?))
}

/// Horizontal metrics of a TrueType font, read from its `head`, `hhea`, `hmtx`, `cmap` and
/// `kern` tables: just enough to place glyphs one by one as plotters' own layout would.
struct Metrics {
    data: &'static [u8],
    units_per_em: f64,
    /// Ascender minus descender, in font units: what a plotters text size measures.
    height: f64,
    h_metrics: u16,
    hmtx: usize,
    /// The format 4 (Unicode BMP) subtable of `cmap`.
    cmap: usize,
    /// The pairs of the horizontal format 0 subtable of `kern`, and how many; none without one.
    kern: Option<(usize, usize)>,
}

impl Metrics {
    fn parse(data: &'static [u8]) -> Option<Metrics> {
        let table = |tag: &[u8; 4]| -> Option<usize> {
            let record = (0..usize::from(be16(data, 4)?))
                .map(|i| 12 + 16 * i)
                .find(|&record| data.get(record..record + 4) == Some(tag))?;
            Some(be32(data, record + 8)? as usize)
        };
        let (head, hhea, cmap) = (table(b"head")?, table(b"hhea")?, table(b"cmap")?);
        let ascender = f64::from(be16(data, hhea + 4)? as i16);
        let descender = f64::from(be16(data, hhea + 6)? as i16);
        let cmap = (0..usize::from(be16(data, cmap + 2)?))
            .map(|i| cmap + 4 + 8 * i)
            .find_map(|record| {
                let (platform, encoding) = (be16(data, record)?, be16(data, record + 2)?);
                let subtable = cmap + be32(data, record + 4)? as usize;
                let unicode = platform == 0 || (platform, encoding) == (3, 1);
                (unicode && be16(data, subtable)? == 4).then_some(subtable)
            })?;
        // The first kern subtable, when it is format 0 and horizontal (coverage bit 0).
        let kern = table(b"kern").and_then(|kern| {
            let sub = kern + 4;
            let coverage = be16(data, sub + 4)?;
            (be16(data, kern + 2)? > 0 && coverage >> 8 == 0 && coverage & 1 == 1)
                .then_some((sub + 14, usize::from(be16(data, sub + 6)?)))
        });
        Some(Metrics {
            data,
            units_per_em: f64::from(be16(data, head + 18)?),
            height: ascender - descender,
            h_metrics: be16(data, hhea + 34)?.max(1),
            hmtx: table(b"hmtx")?,
            cmap,
            kern,
        })
    }

    /// The kerning between `left` and `right`, in font units.
    fn kerning(&self, left: char, right: char) -> f64 {
        let Some((pairs, count)) = self.kern else {
            return 0.0;
        };
        let key = (u32::from(self.glyph(left)) << 16) | u32::from(self.glyph(right));
        let (mut lo, mut hi) = (0, count);
        while lo < hi {
            let mid = (lo + hi) / 2;
            let Some(pair) = be32(self.data, pairs + 6 * mid) else {
                return 0.0;
            };
            match pair.cmp(&key) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => {
                    let value = be16(self.data, pairs + 6 * mid + 4).unwrap_or(0);
                    return f64::from(value as i16);
                }
            }
        }
        0.0
    }

    /// The width of `text` in font units: advances plus kerning.
    fn width(&self, text: &str) -> f64 {
        let advances: f64 = text.chars().map(|c| self.h_metrics(c).0).sum();
        let kerning: f64 = text
            .chars()
            .zip(text.chars().skip(1))
            .map(|(left, right)| self.kerning(left, right))
            .sum();
        advances + kerning
    }

    /// The glyph for `c`; 0 (the missing-glyph box) when the font has none.
    fn glyph(&self, c: char) -> u16 {
        self.lookup(c).unwrap_or(0)
    }

    fn lookup(&self, c: char) -> Option<u16> {
        let (data, table) = (self.data, self.cmap);
        let c = u16::try_from(u32::from(c)).ok()?;
        let segments = usize::from(be16(data, table + 6)? / 2);
        let ends = table + 14;
        let starts = ends + 2 * segments + 2;
        let deltas = starts + 2 * segments;
        let offsets = deltas + 2 * segments;
        let i = (0..segments).find(|&i| be16(data, ends + 2 * i).is_some_and(|end| end >= c))?;
        let start = be16(data, starts + 2 * i)?;
        if start > c {
            return None;
        }
        let delta = be16(data, deltas + 2 * i)?;
        let offset = usize::from(be16(data, offsets + 2 * i)?);
        if offset == 0 {
            return Some(c.wrapping_add(delta));
        }
        let glyph = be16(data, offsets + 2 * i + offset + 2 * usize::from(c - start))?;
        (glyph != 0).then(|| glyph.wrapping_add(delta))
    }

    /// Advance width and left side bearing of `c`, in font units.
    fn h_metrics(&self, c: char) -> (f64, f64) {
        let (data, glyph, long) = (self.data, self.glyph(c), self.h_metrics);
        let advance = be16(data, self.hmtx + 4 * usize::from(glyph.min(long - 1)));
        let lsb = if glyph < long {
            be16(data, self.hmtx + 4 * usize::from(glyph) + 2)
        } else {
            be16(
                data,
                self.hmtx + 4 * usize::from(long) + 2 * usize::from(glyph - long),
            )
        };
        (
            f64::from(advance.unwrap_or(0)),
            f64::from(lsb.unwrap_or(0) as i16),
        )
    }
}

/// Which way text runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Direction {
    Right,
    /// Bottom to top, as a y axis label.
    Up,
}

/// Where a text's baseline sits below its anchor, in em, for each vertical anchor: the cap
/// height of DejaVu Sans is 0.729 em, its descender 0.236 em.
fn baseline(v: VPos) -> f64 {
    match v {
        VPos::Top => 0.76,
        VPos::Center => 0.729 / 2.0,
        VPos::Bottom => -0.236,
    }
}

/// Measures and draws text identically in both formats.
///
/// plotters' bitmap text (ab_glyph) drops each glyph's left side bearing, which spaces letters
/// unevenly, and sits about 0.2 em higher than its SVG text. So PNG text is placed glyph by
/// glyph from the font's own metrics. SVG text stays whole (selectable, searchable), placed so
/// its baseline falls where the PNG's does.
struct Pen {
    target: Target,
    fonts: &'static Fonts,
}

impl Pen {
    fn metrics(&self, font: Font) -> &Metrics {
        if font.bold {
            &self.fonts.bold
        } else {
            &self.fonts.regular
        }
    }

    /// The em size of `font` in pixels.
    fn em(font: Font) -> f64 {
        font.points * DPI / 72.0
    }

    /// Width of `text` in pixels.
    fn width(&self, text: &str, font: Font) -> f64 {
        let metrics = self.metrics(font);
        metrics.width(text) * Self::em(font) / metrics.units_per_em
    }

    /// The plotters text style giving `font` its em size: plotters sizes bitmap text by the
    /// font's ascender-to-descender height, and writes SVG font sizes as the size / 1.24.
    fn style(&self, font: Font, color: RGBColor) -> TextStyle<'static> {
        let metrics = self.metrics(font);
        let size = match self.target {
            Target::Png => Self::em(font) * metrics.height / metrics.units_per_em,
            Target::Svg => Self::em(font) * 1.24,
        };
        let weight = if font.bold {
            FontStyle::Bold
        } else {
            FontStyle::Normal
        };
        FontDesc::new(FontFamily::Name(FONT), size, weight).color(&color)
    }

    /// Draws `text` anchored at `at` (pixels of `area`) by `anchor`, running in `direction`.
    #[allow(clippy::too_many_arguments)]
    fn draw<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        text: &str,
        font: Font,
        color: RGBColor,
        (h, v): (HPos, VPos),
        direction: Direction,
        at: (i32, i32),
    ) -> Result<()> {
        let em = Self::em(font);
        // Unit vectors along the text and down across it, and plotters' matching rotation.
        let ((ax, ay), (bx, by), transform) = match direction {
            Direction::Right => ((1.0, 0.0), (0.0, 1.0), FontTransform::None),
            Direction::Up => ((0.0, -1.0), (1.0, 0.0), FontTransform::Rotate270),
        };
        let place = |along: f64, across: f64| {
            (
                (f64::from(at.0) + ax * along + bx * across).round() as i32,
                (f64::from(at.1) + ay * along + by * across).round() as i32,
            )
        };
        let style = self.style(font, color).transform(transform);
        match self.target {
            Target::Svg => {
                // plotters' SVG puts the baseline 0.76 em below a top anchor.
                let style = style.pos(Pos::new(h, VPos::Top));
                area.draw_text(text, &style, place(0.0, (baseline(v) - 0.76) * em))
                    .map_err(drawing_error)
            }
            Target::Png => {
                let metrics = self.metrics(font);
                let scale = em / metrics.units_per_em;
                let width = self.width(text, font);
                let mut pen = match h {
                    HPos::Left => 0.0,
                    HPos::Center => -width / 2.0,
                    HPos::Right => -width,
                };
                // plotters draws a top-anchored glyph's baseline half its size below the anchor.
                let across = baseline(v) * em - metrics.height * scale / 2.0;
                let style = style.pos(Pos::new(HPos::Left, VPos::Top));
                let mut buffer = [0; 4];
                let mut previous = None;
                for c in text.chars() {
                    if let Some(left) = previous.replace(c) {
                        pen += metrics.kerning(left, c) * scale;
                    }
                    let (advance, lsb) = metrics.h_metrics(c);
                    if !c.is_whitespace() {
                        let glyph = c.encode_utf8(&mut buffer);
                        area.draw_text(glyph, &style, place(pen + lsb * scale, across))
                            .map_err(drawing_error)?;
                    }
                    pen += advance * scale;
                }
                Ok(())
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Step 3: drawing.
// ---------------------------------------------------------------------------------------------

/// A marker's shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Circle,
    Square,
    Triangle,
    /// A refused point.
    Cross,
}

/// The outline of a `shape` marker centred `offset` pixels from its point, as a polygon so
/// every shape is one element type. All shapes have about the same area, so no strategy looks
/// heavier than another.
fn marker(shape: Shape, (dx, dy): (i32, i32)) -> Vec<(i32, i32)> {
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

/// Draws `chart` on `root`: the title, the legend under it, the plot below them.
fn draw_chart<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &Chart,
    pen: &Pen,
) -> Result<()> {
    root.fill(&WHITE).map_err(drawing_error)?;
    let (width, _) = root.dim_in_pixel();
    let width = width as i32;
    let margin = px(MARGIN_PT);

    let (title, font) = fitted_title(pen, &chart.title, f64::from(width - 2 * margin));
    let anchor = (HPos::Center, VPos::Top);
    let at = (width / 2, margin);
    pen.draw(root, &title, font, TEXT, anchor, Direction::Right, at)?;
    let mut top = margin + px(font.points) + px(GAP_PT);

    let legend = Legend::layout(pen, legend_items(chart), width - 2 * margin);
    legend.draw(root, pen, width, top)?;
    top += legend.height() + px(GAP_PT);

    draw_plot(root, top, chart, pen)
}

/// The title and its font: shrunk down to [`TITLE_MIN_PT`], then shortened, until it fits.
fn fitted_title(pen: &Pen, title: &str, width: f64) -> (String, Font) {
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

/// One entry of a legend.
#[derive(Debug, Clone, PartialEq)]
enum LegendKey {
    /// A line of the target: the strategy's colour and marker, dashed for a labelled series.
    Line {
        strategy: Strategy,
        dashed: bool,
    },
    /// Every line of the bare SQLite baseline.
    Baseline,
    Refused,
    Reference,
}

impl LegendKey {
    /// Width of the sample drawn before the label: a line, or just the refusal mark.
    fn sample_width(&self) -> i32 {
        match self {
            LegendKey::Refused => px(CROSS_PT * 2.6),
            _ => px(LEGEND_SAMPLE_PT),
        }
    }
}

fn legend_items(chart: &Chart) -> Vec<(LegendKey, String)> {
    let mut items: Vec<_> = chart
        .series
        .iter()
        .filter(|s| !s.baseline)
        .map(|s| {
            let key = LegendKey::Line {
                strategy: s.strategy,
                dashed: !s.label.is_empty(),
            };
            (key, s.name())
        })
        .collect();
    if chart.series.iter().any(|s| s.baseline) {
        items.push((LegendKey::Baseline, BASELINE_LABEL.to_owned()));
    }
    if chart.series.iter().any(|s| !s.refused.is_empty()) {
        items.push((LegendKey::Refused, "refused".to_owned()));
    }
    if let Some((_, label)) = &chart.reference {
        items.push((LegendKey::Reference, (*label).to_owned()));
    }
    items
}

/// A legend in centred rows above the plot, where it can never cover data.
struct Legend {
    /// Rows of (key, label, width in pixels).
    rows: Vec<Vec<(LegendKey, String, i32)>>,
    row_height: i32,
}

impl Legend {
    fn layout(pen: &Pen, items: Vec<(LegendKey, String)>, width: i32) -> Legend {
        let gap = px(LEGEND_ITEM_PT);
        let mut rows: Vec<Vec<(LegendKey, String, i32)>> = Vec::new();
        for (key, label) in items {
            let item_width = key.sample_width()
                + px(LEGEND_INNER_PT)
                + pen.width(&label, LEGEND_FONT).ceil() as i32;
            match rows.last_mut() {
                Some(row) if Legend::row_width(row) + gap + item_width <= width => {
                    row.push((key, label, item_width))
                }
                _ => rows.push(vec![(key, label, item_width)]),
            }
        }
        Legend {
            rows,
            row_height: (Pen::em(LEGEND_FONT) * 1.4).round() as i32,
        }
    }

    fn row_width(row: &[(LegendKey, String, i32)]) -> i32 {
        let items: i32 = row.iter().map(|(_, _, w)| w).sum();
        items + px(LEGEND_ITEM_PT) * (row.len() as i32 - 1).max(0)
    }

    fn height(&self) -> i32 {
        self.rows.len() as i32 * self.row_height
    }

    /// Draws the legend with its top at `top`, centred on a figure `width` wide.
    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        pen: &Pen,
        width: i32,
        top: i32,
    ) -> Result<()> {
        for (r, row) in self.rows.iter().enumerate() {
            let cy = top + r as i32 * self.row_height + self.row_height / 2;
            let mut x = (width - Legend::row_width(row)) / 2;
            for (key, label, item_width) in row {
                let sample = key.sample_width();
                let line = vec![(x, cy), (x + sample, cy)];
                let mid = (x + sample / 2, cy);
                match key {
                    LegendKey::Line { strategy, dashed } => {
                        let color = strategy_color(*strategy);
                        draw_line(root, line, stroke(color, LINE_PT), *dashed)?;
                        let shape = marker(strategy_shape(*strategy), (0, 0));
                        root.draw(&(EmptyElement::at(mid) + Polygon::new(shape, color.filled())))
                            .map_err(drawing_error)?;
                    }
                    LegendKey::Baseline => {
                        draw_line(root, line, stroke(BASELINE, LINE_PT), true)?;
                    }
                    LegendKey::Refused => {
                        let shape = marker(Shape::Cross, (0, 0));
                        root.draw(&(EmptyElement::at(mid) + Polygon::new(shape, MUTED.filled())))
                            .map_err(drawing_error)?;
                    }
                    LegendKey::Reference => root
                        .draw(&DashedPathElement::new(
                            line,
                            px(DASH_PT.0),
                            px(DASH_PT.1),
                            stroke(REFERENCE, THIN_PT),
                        ))
                        .map_err(drawing_error)?,
                }
                let at = (x + sample + px(LEGEND_INNER_PT), cy);
                let anchor = (HPos::Left, VPos::Center);
                pen.draw(root, label, LEGEND_FONT, TEXT, anchor, Direction::Right, at)?;
                x += item_width + px(LEGEND_ITEM_PT);
            }
        }
        Ok(())
    }
}

/// A polyline in pixels, solid or dashed.
fn draw_line<DB: DrawingBackend>(
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

/// An axis for plotters with our own scale, range and ticks.
struct PlotAxis {
    scale: Scale,
    range: (f64, f64),
    ticks: Ticks,
}

impl Ranged for PlotAxis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, (from, to): (i32, i32)) -> i32 {
        let at = fraction(*value, self.range, self.scale);
        // Pins what a log axis cannot show (zero, negatives) to its start instead of overflowing.
        let at = if at.is_finite() {
            at.clamp(-1.0, 2.0)
        } else {
            0.0
        };
        from + (at * f64::from(to - from)).round() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            self.ticks.minor.clone()
        } else {
            self.ticks.major.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.range.0..self.range.1
    }
}

/// The plot below `top`: axes, tick labels, grid, refusal band, reference curve and series.
fn draw_plot<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    top: i32,
    chart: &Chart,
    pen: &Pen,
) -> Result<()> {
    let (width, height) = root.dim_in_pixel();
    let (width, height) = (width as i32, height as i32);
    let tick = px(TICK_PT);
    let label_offset = tick + px(TICK_GAP_PT);
    let tick_em = Pen::em(TICK_LABEL_FONT);
    let label_em = Pen::em(AXIS_LABEL_FONT);
    let margin = px(MARGIN_PT);
    // Room for the labels: a line of text takes about an em below its top.
    let x_area = label_offset + tick_em.ceil() as i32 + px(GAP_PT) + label_em.ceil() as i32;
    let plot_height = height - top - x_area - margin;

    // y ticks label the data only, not the refusal band above it.
    let y_data = (
        chart.y_range.0,
        chart.refusal_band.map_or(chart.y_range.1, |band| band.0),
    );
    let y_ticks = ticks(y_data.0, y_data.1, Scale::Log, |ticks| {
        ticks.windows(2).all(|pair| {
            let gap = fraction(pair[1], chart.y_range, Scale::Log)
                - fraction(pair[0], chart.y_range, Scale::Log);
            gap * f64::from(plot_height) >= tick_em * 1.8
        })
    });
    let y_labels = tick_labels(&y_ticks.major, Scale::Log);
    let y_label_width = y_labels
        .iter()
        .map(|label| pen.width(label, TICK_LABEL_FONT))
        .fold(0.0, f64::max);
    let y_area = label_offset + y_label_width.ceil() as i32 + px(GAP_PT) + label_em.ceil() as i32;

    // x ticks: neighbouring labels at least an em apart, the last one inside the figure.
    let right = margin * 2;
    let plot_width = width - margin - y_area - right;
    let x_ticks = ticks(chart.x_range.0, chart.x_range.1, chart.x_scale, |ticks| {
        let widths: Vec<f64> = tick_labels(ticks, chart.x_scale)
            .iter()
            .map(|label| pen.width(label, TICK_LABEL_FONT))
            .collect();
        let centre = |t: f64| fraction(t, chart.x_range, chart.x_scale) * f64::from(plot_width);
        let apart = ticks
            .windows(2)
            .zip(widths.windows(2))
            .all(|(t, w)| centre(t[1]) - centre(t[0]) >= (w[0] + w[1]) / 2.0 + tick_em);
        let inside = ticks.last().zip(widths.last()).is_none_or(|(&t, &w)| {
            centre(t) + w / 2.0 <= f64::from(plot_width + right - margin / 2)
        });
        apart && inside
    });
    let x_labels = tick_labels(&x_ticks.major, chart.x_scale);
    let (x_major, y_major) = (x_ticks.major.clone(), y_ticks.major.clone());

    let (_, area) = root.split_vertically(top);
    let mut plot = ChartBuilder::on(&area)
        .margin_left(margin)
        .margin_right(right)
        .margin_bottom(margin)
        .x_label_area_size(x_area)
        .y_label_area_size(y_area)
        .build_cartesian_2d(
            PlotAxis {
                scale: chart.x_scale,
                range: chart.x_range,
                // No minor grid across: it would crowd the left of every decade of a sweep.
                ticks: Ticks {
                    minor: Vec::new(),
                    ..x_ticks
                },
            },
            PlotAxis {
                scale: Scale::Log,
                range: chart.y_range,
                ticks: y_ticks,
            },
        )
        .map_err(drawing_error)?;

    // The band first, so the grid shows through it.
    if let Some((lo, hi)) = chart.refusal_band {
        plot.draw_series([Rectangle::new(
            [(chart.x_range.0, lo), (chart.x_range.1, hi)],
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
    for (&t, label) in x_major.iter().zip(&x_labels) {
        let (x, _) = plot.backend_coord(&(t, chart.y_range.0));
        let at = (x, axis_y + label_offset);
        let anchor = (HPos::Center, VPos::Top);
        pen.draw(
            root,
            label,
            TICK_LABEL_FONT,
            TEXT,
            anchor,
            Direction::Right,
            at,
        )?;
    }
    for (&t, label) in y_major.iter().zip(&y_labels) {
        let (_, y) = plot.backend_coord(&(chart.x_range.0, t));
        let at = (axis_x - label_offset, y);
        let anchor = (HPos::Right, VPos::Center);
        pen.draw(
            root,
            label,
            TICK_LABEL_FONT,
            TEXT,
            anchor,
            Direction::Right,
            at,
        )?;
    }
    let centre_x = (x_pixels.start + x_pixels.end) / 2;
    let anchor = (HPos::Center, VPos::Bottom);
    let at = (centre_x, height - margin);
    pen.draw(
        root,
        chart.x_label,
        AXIS_LABEL_FONT,
        TEXT,
        anchor,
        Direction::Right,
        at,
    )?;
    let centre_y = (y_pixels.start + y_pixels.end) / 2;
    let anchor = (HPos::Center, VPos::Top);
    let at = (margin, centre_y);
    pen.draw(
        root,
        chart.y_label,
        AXIS_LABEL_FONT,
        TEXT,
        anchor,
        Direction::Up,
        at,
    )?;

    if let Some((curve, _)) = &chart.reference {
        plot.draw_series(std::iter::once(DashedPathElement::new(
            curve.clone(),
            px(DASH_PT.0),
            px(DASH_PT.1),
            stroke(REFERENCE, THIN_PT),
        )))
        .map_err(drawing_error)?;
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
        let mut shape = marker(strategy_shape(series.strategy), (0, 0));
        if series.baseline {
            shape = shape
                .into_iter()
                .map(|(x, y)| {
                    (
                        (x as f64 * 0.7).round() as i32,
                        (y as f64 * 0.7).round() as i32,
                    )
                })
                .collect();
        }
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

// ---------------------------------------------------------------------------------------------
// PNG resolution.
// ---------------------------------------------------------------------------------------------

const PNG_SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1a, b'\n'];

/// Records `dpi` in the PNG at `path` (a `pHYs` chunk after `IHDR`), unless it has one.
fn set_png_dpi(path: &Path, dpi: f64) -> Result<()> {
    let png = std::fs::read(path).context("cannot read back the PNG")?;
    ensure!(
        png.starts_with(&PNG_SIGNATURE) && png.get(12..16) == Some(b"IHDR"),
        "the file written is not a PNG"
    );
    // Walk the chunks up to the image data: is there a pHYs already?
    let mut at = 8;
    while let Some(header) = png.get(at..at + 8) {
        let length = u32::from_be_bytes([header[0], header[1], header[2], header[3]]) as usize;
        match &header[4..8] {
            b"pHYs" => return Ok(()),
            b"IDAT" | b"IEND" => break,
            _ => at += 12 + length,
        }
    }
    let per_metre = (dpi / 0.0254).round() as u32;
    let mut chunk = Vec::with_capacity(21);
    chunk.extend_from_slice(&9u32.to_be_bytes());
    chunk.extend_from_slice(b"pHYs");
    chunk.extend_from_slice(&per_metre.to_be_bytes());
    chunk.extend_from_slice(&per_metre.to_be_bytes());
    chunk.push(1); // unit: metre
    chunk.extend_from_slice(&crc32(&chunk[4..]).to_be_bytes());
    // IHDR is the first chunk and always 13 bytes: signature 8 + length 4 + type 4 + 13 + CRC 4.
    let ihdr_end = 33;
    let mut out = Vec::with_capacity(png.len() + chunk.len());
    out.extend_from_slice(&png[..ihdr_end]);
    out.extend_from_slice(&chunk);
    out.extend_from_slice(&png[ihdr_end..]);
    std::fs::write(path, out).context("cannot write the PNG's resolution")
}

/// The CRC-32 PNG chunks carry (ISO 3309, as in zlib).
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in bytes {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xedb8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(
        strategy: Strategy,
        columns: usize,
        repeat: usize,
        outcome: &str,
        outside_ms: f64,
    ) -> ResultRow {
        ResultRow {
            experiment: "test".into(),
            target: TargetKind::Local,
            strategy,
            columns,
            row_bytes: columns * 10,
            rows: 500,
            rows_per_statement: match strategy {
                Strategy::Bound => (100 / columns).max(1),
                Strategy::Literal => 500,
                Strategy::PerRow => 1,
            },
            repeat,
            outcome: outcome.parse().unwrap(),
            refusal: (outcome == "refused").then_some(d1bench_core::RefusalKind::TooManyVariables),
            rows_expected: 500,
            rows_present: 500,
            inside_ms: outside_ms / 2.0,
            outside_ms,
            d1_ms: Some(outside_ms / 4.0),
            overhead_ms: Some(outside_ms / 2.0),
            reconciled: outcome == "ok",
            ..crate::records::probe_row::tests_support::row()
        }
    }

    const LOCAL: TargetKind = TargetKind::Local;

    #[test]
    fn points_are_the_median_and_its_bootstrap_interval_over_repeats() {
        let rows = vec![
            row(Strategy::Bound, 4, 0, "ok", 10.0),
            row(Strategy::Bound, 4, 1, "ok", 30.0),
            row(Strategy::Bound, 4, 2, "ok", 20.0),
            row(Strategy::Bound, 8, 0, "ok", 50.0),
            row(Strategy::Bound, 8, 1, "ok", 40.0),
            row(Strategy::PerRow, 4, 0, "ok", 500.0),
        ];
        let series = summarize(&rows, Axis::Columns, Measure::MsPer1000Rows, LOCAL);
        assert_eq!(series.len(), 2);
        assert_eq!(series[0].strategy, Strategy::Bound);
        // 500 rows per probe: ms per 1,000 rows is twice the probe's time; the error bar is the
        // median's bootstrap interval from stats.rs.
        let at_4 = Summary::of(&[20.0, 60.0, 40.0]).unwrap();
        let at_8 = Summary::of(&[100.0, 80.0]).unwrap();
        assert_eq!(
            series[0].points,
            vec![Point::of(4.0, at_4), Point::of(8.0, at_8)]
        );
        assert_eq!(series[0].points[0].median, 40.0);
        assert_eq!(series[0].points[0].repeats, 3);
        let p = &series[0].points[0];
        assert!(p.low <= p.median && p.median <= p.high && p.low >= 20.0 && p.high <= 60.0);
        assert_eq!(series[1].strategy, Strategy::PerRow);
        assert_eq!(series[1].points[0].median, 1000.0);
        assert_eq!(
            (series[1].points[0].low, series[1].points[0].high),
            (1000.0, 1000.0),
            "one repeat: no interval"
        );
        assert!(series.iter().all(|s| s.refused.is_empty() && !s.baseline));
    }

    #[test]
    fn the_baseline_and_labelled_series_are_lines_of_their_own() {
        let mut rows = vec![
            row(Strategy::Literal, 4, 0, "ok", 10.0),
            row(Strategy::Bound, 4, 0, "ok", 20.0),
        ];
        let mut labelled = row(Strategy::Bound, 4, 0, "ok", 30.0);
        labelled.label = "all non-ASCII".into();
        rows.push(labelled);
        for strategy in [Strategy::Bound, Strategy::Literal] {
            let mut baseline = row(strategy, 4, 0, "ok", 1.0);
            baseline.target = TargetKind::Sqlite;
            rows.push(baseline);
        }
        let series = summarize(&rows, Axis::Columns, Measure::MsPer1000Rows, LOCAL);
        let lines: Vec<_> = series.iter().map(|s| (s.name(), s.baseline)).collect();
        assert_eq!(
            lines,
            [
                ("bound".to_owned(), false),
                ("literal".to_owned(), false),
                ("bound, all non-ASCII".to_owned(), false),
                ("bound".to_owned(), true),
                ("literal".to_owned(), true),
            ]
        );
        let chart = time_chart(&rows, Axis::Columns, "t", LOCAL).unwrap();
        let legend: Vec<_> = legend_items(&chart).into_iter().map(|(_, l)| l).collect();
        assert_eq!(
            legend,
            [
                "bound",
                "literal",
                "bound, all non-ASCII",
                "bare SQLite (baseline)"
            ]
        );
        assert!(
            chart.caption.contains("bare SQLite (baseline)"),
            "{}",
            chart.caption
        );
        // The baseline plans the same statements and has one clock: only the time chart has it.
        let rows_chart = rows_per_statement_chart(&rows, Axis::Columns, "t", LOCAL).unwrap();
        assert!(rows_chart.series.iter().all(|s| !s.baseline));
        let overhead = overhead_chart(&rows, Axis::Columns, "t", LOCAL).unwrap();
        assert!(overhead.series.iter().all(|s| !s.baseline));
        // A run on the sqlite target itself draws its rows as the main lines.
        let sqlite_run = summarize(
            &rows,
            Axis::Columns,
            Measure::MsPer1000Rows,
            TargetKind::Sqlite,
        );
        assert!(
            sqlite_run
                .iter()
                .any(|s| !s.baseline && s.strategy == Strategy::Literal)
        );
    }

    #[test]
    fn refused_only_points_are_refusals_and_error_rows_are_ignored() {
        let rows = vec![
            row(Strategy::Literal, 4, 0, "ok", 10.0),
            // Mixed: the ok repeat is the point, no refusal mark.
            row(Strategy::Literal, 8, 0, "ok", 20.0),
            row(Strategy::Literal, 8, 1, "refused", 1.0),
            // Every repeat refused (an error alongside does not change that).
            row(Strategy::Literal, 16, 0, "refused", 1.0),
            row(Strategy::Literal, 16, 1, "error", 9999.0),
            // Errors only: neither a point nor a refusal.
            row(Strategy::Literal, 32, 0, "error", 9999.0),
            row(Strategy::Bound, 32, 0, "error", 9999.0),
        ];
        let series = summarize(&rows, Axis::Columns, Measure::MsPer1000Rows, LOCAL);
        assert_eq!(series.len(), 1, "bound had only errors: {series:?}");
        let literal = &series[0];
        let xs: Vec<_> = literal.points.iter().map(|p| p.x).collect();
        assert_eq!(xs, [4.0, 8.0]);
        assert_eq!(literal.points[1].median, 40.0);
        assert_eq!(literal.points[1].repeats, 1);
        assert_eq!(literal.refused, [16.0]);
    }

    #[test]
    fn rows_per_statement_counts_refused_probes_too() {
        let rows = vec![
            row(Strategy::Bound, 50, 0, "ok", 10.0),
            row(Strategy::Bound, 200, 0, "refused", 1.0),
            row(Strategy::Bound, 400, 0, "error", 1.0),
        ];
        let series = summarize(&rows, Axis::Columns, Measure::RowsPerStatement, LOCAL);
        let points: Vec<_> = series[0].points.iter().map(|p| (p.x, p.median)).collect();
        assert_eq!(points, [(50.0, 2.0), (200.0, 1.0)]);
        assert_eq!(series[0].refused, [200.0]);
    }

    #[test]
    fn x_axis_is_logarithmic_only_beyond_a_factor_of_20() {
        assert_eq!(x_scale([1.0, 2.0, 4.0, 8.0, 16.0]), Scale::Linear);
        assert_eq!(x_scale([5.0, 100.0]), Scale::Linear);
        assert_eq!(x_scale([5.0, 101.0]), Scale::Log);
        assert_eq!(x_scale([1.0, 10.0, 100.0, 1000.0]), Scale::Log);
        assert_eq!(x_scale([0.0, 1000.0]), Scale::Linear, "0 has no logarithm");
        assert_eq!(x_scale([]), Scale::Linear);
    }

    #[test]
    fn time_chart_puts_refusals_in_a_band_above_the_data() {
        let rows = vec![
            row(Strategy::Bound, 50, 0, "ok", 10.0),
            row(Strategy::Bound, 200, 0, "refused", 1.0),
        ];
        let chart = time_chart(&rows, Axis::Columns, "t", LOCAL).unwrap();
        let (lo, hi) = chart.refusal_band.unwrap();
        assert!(lo > 20.0 && hi == chart.y_range.1, "{chart:?}");
        assert_eq!(chart.x_scale, Scale::Linear);
    }

    #[test]
    fn charts_without_anything_to_plot_are_skipped_with_a_reason() {
        let refused = vec![row(Strategy::Bound, 200, 0, "refused", 1.0)];
        let skip = time_chart(&refused, Axis::Columns, "t", LOCAL).unwrap_err();
        assert!(
            skip.to_string()
                .contains("no probe succeeded (1 refused, 0 failed)")
        );
        assert!(rows_per_statement_chart(&refused, Axis::Columns, "t", LOCAL).is_ok());

        let failed = vec![row(Strategy::Bound, 200, 0, "error", 1.0)];
        assert!(rows_per_statement_chart(&failed, Axis::Columns, "t", LOCAL).is_err());
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::new(dir.path().to_path_buf());
        let err = render_run(&run, &failed, Axis::Columns, "t", LOCAL).unwrap_err();
        assert!(
            format!("{err:#}").contains("no chart could be drawn"),
            "{err:#}"
        );
        let err = render_run(&run, &[], Axis::Columns, "t", LOCAL).unwrap_err();
        assert!(
            format!("{err:#}").contains("the run has no rows"),
            "{err:#}"
        );
    }

    #[test]
    fn the_overhead_chart_is_skipped_with_a_reason_when_the_target_has_one_clock() {
        let mut rows = vec![row(Strategy::Bound, 8, 0, "ok", 10.0)];
        rows[0].target = TargetKind::Sqlite;
        rows[0].inside_ms = 10.0;
        rows[0].overhead_ms = Some(0.0);
        let skip = overhead_chart(&rows, Axis::Columns, "t", TargetKind::Sqlite).unwrap_err();
        assert!(skip.reason.contains("two clocks are one"), "{skip}");
        let local = vec![row(Strategy::Bound, 8, 0, "ok", 10.0)];
        let chart = overhead_chart(&local, Axis::Columns, "t", LOCAL).unwrap();
        assert_eq!(chart.series[0].points[0].median, 5.0);
        assert_eq!(chart.name, "overhead-outside-minus-inside-ms-vs-columns");
    }

    #[test]
    fn the_floor_reference_is_drawn_for_columns_only() {
        let rows = vec![
            row(Strategy::Bound, 1, 0, "ok", 10.0),
            row(Strategy::Bound, 200, 0, "refused", 1.0),
        ];
        let chart = rows_per_statement_chart(&rows, Axis::Columns, "t", LOCAL).unwrap();
        let (curve, label) = chart.reference.unwrap();
        assert_eq!(label, "floor(100 / C)");
        assert_eq!(curve.first(), Some(&(1.0, 100.0)));
        assert_eq!(curve.last(), Some(&(100.0, 1.0)));
        assert_eq!(curve[2], (3.0, 33.0));
        let chart = rows_per_statement_chart(&rows, Axis::RowBytes, "t", LOCAL).unwrap();
        assert!(chart.reference.is_none());
    }

    #[test]
    fn tick_labels_are_exact_and_grouped_by_thousands() {
        assert_eq!(
            tick_labels(&[0.1, 0.3, 1.0, 10.0, 1000.0, 1e6], Scale::Log),
            ["0.1", "0.3", "1", "10", "1,000", "1,000,000"]
        );
        assert_eq!(
            tick_labels(&[0.5, 1.0, 1.5], Scale::Linear),
            ["0.5", "1.0", "1.5"]
        );
        assert_eq!(format_number(-1234.5, 1), "-1,234.5");
    }

    #[test]
    fn log_ticks_prefer_decades_and_fall_back_to_finer_steps() {
        let fits = |_: &[f64]| true;
        assert_eq!(
            ticks(0.8, 1200.0, Scale::Log, fits).major,
            [1.0, 10.0, 100.0, 1000.0]
        );
        assert_eq!(
            ticks(4.0, 60.0, Scale::Log, fits).major,
            [5.0, 10.0, 20.0, 50.0]
        );
        assert_eq!(ticks(3.0, 5.5, Scale::Log, fits).major, [3.0, 4.0, 5.0]);
        // Too crowded: every other decade.
        let at_most_4 = |t: &[f64]| t.len() <= 4;
        assert_eq!(
            ticks(1.0, 1e6, Scale::Log, at_most_4).major,
            [1.0, 100.0, 1e4, 1e6]
        );
        assert_eq!(
            ticks(0.6, 8.4, Scale::Linear, fits).major,
            [2.0, 4.0, 6.0, 8.0]
        );
    }

    #[test]
    fn text_widths_agree_with_plotters_own_layout() {
        let pen = Pen {
            target: Target::Png,
            fonts: fonts().unwrap(),
        };
        for font in [TICK_LABEL_FONT, TITLE_FONT] {
            for text in [
                "ms per 1,000 rows (outside clock)",
                "10,000",
                "per-row",
                "AVATAR",
            ] {
                let (plotters, _) = pen.style(font, TEXT).font.box_size(text).unwrap();
                let ours = pen.width(text, font);
                assert!(
                    (f64::from(plotters) - ours).abs() <= 2.0,
                    "{text:?} at {font:?}: plotters {plotters}, ours {ours}"
                );
            }
        }
        // A character outside the font's map falls back to the missing-glyph box.
        assert_eq!(pen.fonts.regular.glyph('\u{10FFFF}'), 0);
        assert_ne!(pen.fonts.regular.glyph('×'), 0);
        assert!(pen.fonts.regular.kerning('A', 'V') < 0.0, "DejaVu kerns AV");
    }

    #[test]
    fn long_titles_shrink_then_end_in_an_ellipsis() {
        let pen = Pen {
            target: Target::Svg,
            fonts: fonts().unwrap(),
        };
        let (text, font) = fitted_title(&pen, "short", 900.0);
        assert_eq!((text.as_str(), font), ("short", TITLE_FONT));
        let long = "word ".repeat(60);
        let (text, font) = fitted_title(&pen, &long, 900.0);
        assert_eq!(font.points, TITLE_MIN_PT);
        assert!(
            text.ends_with("word…") && pen.width(&text, font) <= 900.0,
            "{text}"
        );
        assert_eq!(fitted_title(&pen, "x", 1.0).0, "…");
    }

    #[test]
    fn crc32_matches_the_png_reference() {
        assert_eq!(crc32(b"IEND"), 0xae42_6082);
    }

    /// A small run over both axes: each strategy, repeats, a wall of refusals, and the bare
    /// SQLite baseline of bound and literal.
    fn synthetic_run(axis: Axis) -> Vec<ResultRow> {
        let xs: &[usize] = match axis {
            Axis::Columns => &[1, 2, 4, 8, 16, 32, 64, 128, 256],
            _ => &[4, 6, 8, 10, 12],
        };
        let mut rows = Vec::new();
        for &x in xs {
            for repeat in 0..3 {
                let jitter = 1.0 + 0.1 * repeat as f64;
                for strategy in STRATEGIES {
                    let (outcome, ms) = match strategy {
                        Strategy::Bound if x > 100 => ("refused", 1.0),
                        Strategy::Bound => ("ok", 40.0 + x as f64 * 2.0),
                        Strategy::Literal if x > 200 => ("refused", 1.0),
                        Strategy::Literal => ("ok", 15.0 + x as f64),
                        Strategy::PerRow => ("ok", 2000.0 + x as f64 * 10.0),
                    };
                    let mut r = row(strategy, x, repeat, outcome, ms * jitter);
                    if axis == Axis::RowBytes {
                        r.columns = 4;
                        r.row_bytes = x * 100;
                    }
                    if strategy != Strategy::PerRow {
                        let mut baseline = r.clone();
                        baseline.target = TargetKind::Sqlite;
                        baseline.outside_ms /= 20.0;
                        baseline.inside_ms = baseline.outside_ms;
                        baseline.overhead_ms = Some(0.0);
                        baseline.d1_ms = None;
                        rows.push(baseline);
                    }
                    rows.push(r);
                }
            }
        }
        rows
    }

    /// The text of every `<text>` element of an SVG.
    fn svg_texts(svg: &str) -> Vec<&str> {
        svg.split("<text")
            .skip(1)
            .filter_map(|element| {
                let (_, rest) = element.split_once('>')?;
                Some(rest.split_once("</text>")?.0.trim())
            })
            .collect()
    }

    #[test]
    fn render_writes_png_and_svg_of_every_chart_for_both_axes() {
        let dir = tempfile::tempdir().unwrap();
        for axis in [Axis::Columns, Axis::RowBytes] {
            let run = RunDir::new(dir.path().join(axis.name()));
            std::fs::create_dir_all(&run.path).unwrap();
            let drawn = render_run(&run, &synthetic_run(axis), axis, "synthetic", LOCAL).unwrap();
            let names: Vec<_> = drawn.iter().map(|d| d.name.clone()).collect();
            assert_eq!(
                names,
                [
                    "time-per-1000-rows-vs",
                    "rows-per-statement-vs",
                    "overhead-outside-minus-inside-ms-vs"
                ]
                .map(|chart| format!("{chart}-{}", axis.name()))
            );
            for chart in &drawn {
                assert!(chart.caption.ends_with('.'), "{}", chart.caption);
                assert_eq!(
                    chart.files,
                    [run.chart(&chart.name, "png"), run.chart(&chart.name, "svg")]
                );
            }
            for path in drawn.iter().flat_map(|d| &d.files) {
                let bytes = std::fs::read(path).unwrap();
                if path.extension().unwrap() == "png" {
                    assert!(bytes.starts_with(&PNG_SIGNATURE), "{}", path.display());
                    assert_eq!(&bytes[12..16], b"IHDR");
                    let be = |at: usize| u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap());
                    assert_eq!((be(16), be(20)), FIGURE, "{}", path.display());
                    // pHYs right after IHDR: 11,811 pixels per metre is 300 dpi.
                    assert_eq!(&bytes[37..41], b"pHYs");
                    assert_eq!((be(41), be(45), bytes[49]), (11_811, 11_811, 1));
                } else {
                    let svg = String::from_utf8(bytes).unwrap();
                    assert!(svg.contains("<svg"), "{}", path.display());
                    let texts = svg_texts(&svg);
                    for name in ["bound", "literal", "per-row", axis.label()] {
                        assert!(
                            texts.contains(&name),
                            "{name} not in {}: {texts:?}",
                            path.display()
                        );
                    }
                    let is_time = path.to_string_lossy().contains("time-per-1000-rows");
                    assert_eq!(
                        texts.contains(&"bare SQLite (baseline)"),
                        is_time,
                        "the baseline belongs on the time chart only: {}",
                        path.display()
                    );
                    // Only the column sweep has refusals (bound above 100 columns); the overhead
                    // chart leaves them to the time chart.
                    let refused = texts.contains(&"refused");
                    let overhead = path.to_string_lossy().contains("overhead");
                    assert_eq!(
                        refused,
                        axis == Axis::Columns && !overhead,
                        "{}",
                        path.display()
                    );
                    assert!(!texts.contains(&""), "empty text in {}", path.display());
                }
            }
        }
    }
}
