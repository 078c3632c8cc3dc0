//! Draws a run's charts (time per 1,000 rows, rows per statement, clock overhead) as PNG, SVG
//! and PDF paper figures.
//!
//! Each chart plots one value per line (a strategy, in a labelled series or not) against the
//! experiment's swept axis. Points are medians over the repeats with the median's
//! order-statistic confidence interval as error bars (what it covers, and the repeats behind
//! each point, are in the caption); the bare SQLite baseline, when the run has one, is drawn in
//! dashed grey under the target's lines.
//!
//! Drawing happens in three steps, each testable on its own:
//!
//! 1. [`summarize`] turns the run's points ([`crate::reports::points`], summarized by
//!    [`crate::reports::stats`]) into per-line series and notes where every repeat was refused. It is pure.
//! 2. [`time_chart`], [`rows_per_statement_chart`] and [`overhead_chart`] decide what a chart
//!    shows: its series, axis scales and ranges, the refusal band, the reference curve. Also pure.
//! 3. A [`Chart`] draws its data inside the frame every chart shares; [`render_run`] writes the
//!    files. How charts look (size, fonts, colours, title, legend, axes) is decided in the
//!    `style` module, for every chart alike.
//!
//! Charts are paper figures: no internal names (experiment, profile, target kind) on them, and
//! no title unless asked for (`--titles`); the caption, which summary.md prints under each
//! chart, starts with the title.
//!
//! Quantities that scale (times, rows per statement) are drawn on a log axis when they span more
//! than a factor of 20, so a line ten times another keeps its shape; the overhead, a difference
//! of two clocks that may be near zero or negative, is always drawn on a linear axis.

use std::collections::BTreeSet;
use std::fmt;

use anyhow::{Result, bail, ensure};
use d1bench_core::{Outcome, Strategy};
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;

use super::style::{
    Axes, BASELINE, CAP_PT, DASH_PT, DODGE_PT, Figure, LINE_PT, MARKER_PT, MUTED, Mark, Pen, Plot,
    REFERENCE_SAMPLE, Sample, Scale, Shape, Span, THIN_PT, dodge, draw_frame, draw_reference,
    drawing_error, extent, format_number, fraction, marker, px, range_for, scale_for, small_marker,
    strategy_color, strategy_shape, stroke, value_at, write,
};
use super::{Drawn, measured_on};
use crate::flags::TargetKind;
use crate::records::{ResultRow, RunDir};
use crate::reports::points::{Measure, points};
use crate::reports::stats::{CONFIDENCE, Summary};
use crate::studies::sweep::Axis;

/// Share of the time chart's height given to the band of refused points above the data.
const REFUSAL_BAND: f64 = 0.15;

/// The order strategies are listed in, in every legend.
const STRATEGIES: [Strategy; 3] = [Strategy::Bound, Strategy::Literal, Strategy::PerRow];

// ---------------------------------------------------------------------------------------------
// The entry point.
// ---------------------------------------------------------------------------------------------

/// What the baseline is called in every caption: never D1.
const BASELINE_LABEL: &str = "bare SQLite (baseline)";
/// What a baseline line's legend entry adds to its strategy.
const BASELINE_LEGEND: &str = "bare SQLite";

/// Draws every chart of a run into its directory as PNG, SVG and PDF; returns what was written.
/// `target` is the run's target: rows of other targets (the sqlite baseline) are drawn as
/// reference lines on the time chart. With `titles`, each chart carries its title too.
///
/// A chart with nothing to show (no probe succeeded, so there is no time to plot) is skipped
/// with a warning on stderr; it is an error when no chart at all can be drawn, or `rows` is
/// empty.
pub fn render_run(
    run: &RunDir,
    rows: &[ResultRow],
    axis: Axis,
    target: TargetKind,
    titles: bool,
) -> Result<Vec<Drawn>> {
    ensure!(
        !rows.is_empty(),
        "no results to plot for {}: the run has no rows",
        run.path.display()
    );
    let place = measured_on(target);
    let mut written = Vec::new();
    let mut skipped = Vec::new();
    for chart in [
        time_chart(rows, axis, place, target),
        rows_per_statement_chart(rows, axis, place, target),
        overhead_chart(rows, axis, place, target),
    ] {
        let mut chart = match chart {
            Ok(chart) => chart,
            Err(skip) => {
                eprintln!("warning: {skip}");
                skipped.push(skip.to_string());
                continue;
            }
        };
        chart.draw_title = titles;
        let files = write(&chart, |extension| run.chart(&chart.name, extension))?;
        written.push(Drawn {
            caption: format!("{}. {}", chart.title, chart.caption),
            name: chart.name,
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

// ---------------------------------------------------------------------------------------------
// Step 1: rows to points.
// ---------------------------------------------------------------------------------------------

/// One (line, x) point: its repeats summarized.
#[derive(Debug, Clone, PartialEq)]
struct Point {
    x: f64,
    median: f64,
    /// The median's confidence interval (see [`crate::reports::stats`]): the error bar; the
    /// median itself when there is none (one repeat).
    low: f64,
    high: f64,
    /// What the interval covers; 0 without one.
    coverage: f64,
    /// Repeats that contributed.
    repeats: usize,
}

impl Point {
    fn of(x: f64, summary: Summary) -> Point {
        Point {
            x,
            median: summary.median,
            low: summary.ci.map_or(summary.median, |ci| ci.low),
            high: summary.ci.map_or(summary.median, |ci| ci.high),
            coverage: summary.ci.map_or(0.0, |ci| ci.coverage),
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
    /// The legend's name of the line: the strategy and its series' label (a baseline line's
    /// entry is under the baseline's heading).
    fn name(&self) -> String {
        if self.label.is_empty() {
            self.strategy.name().to_owned()
        } else {
            format!("{}, {}", self.strategy, self.label)
        }
    }

    /// The legend's entry: the name and the repeats behind the line's points, `bound (n=5)` or
    /// `bound (n=6–30)` when they differ from point to point.
    fn legend(&self) -> String {
        match repeats([self]) {
            Some(n) => format!("{} ({n})", self.name()),
            None => self.name(),
        }
    }
}

/// The repeats behind the points of `series`: `n=5`, or `n=6–30` when they differ from point to
/// point; `None` without points.
fn repeats<'a>(series: impl IntoIterator<Item = &'a Series>) -> Option<String> {
    let n: Vec<usize> = series
        .into_iter()
        .flat_map(|s| &s.points)
        .map(|p| p.repeats)
        .collect();
    match (n.iter().min(), n.iter().max()) {
        (Some(fewest), Some(most)) if fewest < most => Some(format!("n={fewest}–{most}")),
        (Some(n), _) => Some(format!("n={n}")),
        _ => None,
    }
}

/// The series of `rows` for `measure`: one per line, the target's first (in legend order,
/// unlabelled before labelled), then the baseline's. A point's value is the summary of its
/// repeats' values, only the positive ones unless the measure is [`additive`] (a log axis cannot
/// show the others, and a time of zero is no time); rows with outcome `error` never count, see
/// [`Measure::value`] for the rest.
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
            .filter(|v| additive(measure) || *v > 0.0)
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

/// Everything needed to draw one chart.
#[derive(Debug, Clone, PartialEq)]
struct Chart {
    /// File stem: the chart is written to `<name>.png`, `<name>.svg` and `<name>.pdf`.
    name: String,
    /// What the chart shows, for summary.md, after the title.
    caption: String,
    /// What the chart is, in words for readers (no experiment, profile or target names): drawn
    /// above it with `draw_title`, and always the caption's first sentence.
    title: String,
    draw_title: bool,
    x_label: &'static str,
    y_label: &'static str,
    x_scale: Scale,
    x_range: (f64, f64),
    y_scale: Scale,
    /// The whole y axis, band included.
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

/// The rows of one target.
fn of_target(rows: &[ResultRow], target: TargetKind) -> Vec<ResultRow> {
    rows.iter()
        .filter(|r| r.target == target)
        .cloned()
        .collect()
}

/// Whether a measure adds up (a difference of clocks, which may be zero or negative) rather than
/// scales: it is drawn on a linear axis, with every value, whatever their span.
fn additive(measure: Measure) -> bool {
    measure == Measure::OverheadMs
}

/// The y axis of a chart of `measure` over `series`, from its error bars: linear for an additive
/// measure, else logarithmic when the values span more than a factor of 20; with a band above
/// for refusals when any series has one. `(scale, y_range, refusal_band)`.
fn y_axis_of(series: &[Series], measure: Measure) -> Option<(Scale, Span, Option<Span>)> {
    let (lo, hi) = extent(
        series
            .iter()
            .flat_map(|s| &s.points)
            .flat_map(|p| [p.low, p.high]),
    )?;
    let scale = if additive(measure) {
        Scale::Linear
    } else {
        scale_for([lo, hi])
    };
    let (y_lo, y_hi) = range_for(lo, hi, scale);
    if series.iter().all(|s| s.refused.is_empty()) {
        return Some((scale, (y_lo, y_hi), None));
    }
    // Extend the axis upwards so the band takes REFUSAL_BAND of its height.
    let share = REFUSAL_BAND / (1.0 - REFUSAL_BAND);
    let top = match scale {
        Scale::Log => y_hi * (y_hi / y_lo).powf(share),
        Scale::Linear => y_hi + (y_hi - y_lo) * share,
    };
    Some((scale, (y_lo, top), Some((y_hi, top))))
}

/// The x scale and range of `series`, refusals included.
fn x_axis_of(series: &[Series]) -> (Scale, (f64, f64)) {
    let xs = series.iter().flat_map(|s| {
        s.points
            .iter()
            .map(|p| p.x)
            .chain(s.refused.iter().copied())
    });
    let scale = scale_for(xs.clone());
    let (lo, hi) = extent(xs).unwrap_or((0.0, 1.0));
    (scale, range_for(lo, hi, scale))
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

/// How many rows the probes of `rows` wrote, by strategy, and that their times are scaled to
/// 1,000 rows: a sentence for the time chart's caption, since probes of different strategies
/// write different numbers of rows (per-row, one call per row, writes few).
fn rows_written(rows: &[ResultRow]) -> String {
    // Strategies that wrote the same numbers of rows, in legend order.
    let mut groups: Vec<(BTreeSet<usize>, Vec<&str>)> = Vec::new();
    for strategy in STRATEGIES {
        let counts: BTreeSet<usize> = rows
            .iter()
            .filter(|r| r.strategy == strategy)
            .map(|r| r.rows)
            .collect();
        match groups.iter_mut().find(|(c, _)| *c == counts) {
            _ if counts.is_empty() => {}
            Some((_, names)) => names.push(strategy.name()),
            None => groups.push((counts, vec![strategy.name()])),
        }
    }
    let counts = |counts: &BTreeSet<usize>| {
        let each: Vec<String> = counts
            .iter()
            .rev()
            .map(|&n| format_number(n as f64, 0))
            .collect();
        match each.split_last() {
            Some((last, [])) => last.clone(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
            None => String::new(),
        }
    };
    let written = match &groups[..] {
        [(only, _)] => format!("{} rows", counts(only)),
        _ => groups
            .iter()
            .map(|(c, names)| format!("{} rows ({})", counts(c), names.join(", ")))
            .collect::<Vec<_>>()
            .join(" or "),
    };
    format!("Each probe writes {written}; its time is scaled to 1,000 rows")
}

/// The repeats behind the points of `series` and what their error bars are, for a caption:
/// `n = 5 repeats per point; error bars: …`, saying what the bars cover when it is below 95%.
fn error_bars(series: &[Series]) -> String {
    let points = || series.iter().flat_map(|s| &s.points);
    let Some((fewest, most)) = extent(points().map(|p| p.repeats as f64)) else {
        return "no point to draw".to_owned();
    };
    let n = if fewest == most {
        let plural = if fewest == 1.0 { "" } else { "s" };
        format!("n = {fewest} repeat{plural} per point")
    } else {
        format!("n = {fewest} to {most} repeats per point")
    };
    let least = points()
        .filter(|p| p.repeats > 1)
        .map(|p| p.coverage)
        .reduce(f64::min);
    match least {
        None => format!("{n}, so no error bars"),
        Some(c) if c >= CONFIDENCE => {
            format!("{n}; error bars: the median's 95% order-statistic confidence interval")
        }
        Some(c) => format!(
            "{n}; error bars: the median's order-statistic confidence interval, which below 6 \
             repeats is [min, max] and covers less than 95% (here as little as {:.1}%)",
            c * 100.0
        ),
    }
}

/// Milliseconds per 1,000 rows against the axis; refused points in a band above the data; the
/// baseline's lines in grey.
fn time_chart(
    rows: &[ResultRow],
    axis: Axis,
    place: &str,
    target: TargetKind,
) -> Result<Chart, Skip> {
    let name = format!("time-per-1000-rows-vs-{}", axis.name());
    let series = summarize(rows, axis, Measure::MsPer1000Rows, target);
    let Some((y_scale, y_range, refusal_band)) = y_axis_of(&series, Measure::MsPer1000Rows) else {
        return Err(Skip {
            chart: name,
            reason: nothing_succeeded(rows),
        });
    };
    let (x_scale, x_range) = x_axis_of(&series);
    let mut caption = format!(
        "Median time per 1,000 rows written (outside clock) against {}; {}",
        axis.label(),
        error_bars(&series)
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
    caption.push_str(&format!(" {}.", rows_written(rows)));
    Ok(Chart {
        name,
        caption,
        title: format!("Time per 1,000 rows written, {place}"),
        draw_title: false,
        x_label: axis.label(),
        y_label: "ms per 1,000 rows (outside clock)",
        x_scale,
        x_range,
        y_scale,
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
    place: &str,
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
    let x_scale = scale_for(xs());
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
    let values = series
        .iter()
        .flat_map(|s| &s.points)
        .flat_map(|p| [p.low, p.high]);
    let (y_lo, y_hi) = extent(values.chain(reference_ys)).unwrap_or((1.0, 1.0));
    let y_scale = scale_for([y_lo, y_hi]);
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
        title: format!("Rows per INSERT statement, {place}"),
        draw_title: false,
        x_label: axis.label(),
        y_label: "rows per INSERT statement",
        x_scale,
        x_range: range_for(x_lo, x_hi, x_scale),
        y_scale,
        y_range: range_for(y_lo, y_hi, y_scale),
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
    place: &str,
    target: TargetKind,
) -> Result<Chart, Skip> {
    let name = format!("overhead-outside-minus-inside-ms-vs-{}", axis.name());
    let own = of_target(rows, target);
    // Refusals are drawn on the time chart; here only the lines.
    let series: Vec<Series> = summarize(&own, axis, Measure::OverheadMs, target)
        .into_iter()
        .map(|s| Series {
            refused: Vec::new(),
            ..s
        })
        .filter(|s| !s.points.is_empty())
        .collect();
    let one_clock = series
        .iter()
        .flat_map(|s| &s.points)
        .all(|p| p.low == 0.0 && p.high == 0.0);
    let y_axis = y_axis_of(&series, Measure::OverheadMs).filter(|_| !one_clock);
    let Some((y_scale, y_range, _)) = y_axis else {
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
    let (x_scale, x_range) = x_axis_of(&series);
    Ok(Chart {
        name,
        caption: format!(
            "Median outside − inside clock per probe against {} (HTTP, JSON, planning and \
             building the statements, creating the table and counting); {}. Lines that differ \
             mean the outside clock adds different costs to different strategies.",
            axis.label(),
            error_bars(&series)
        ),
        title: format!("Outside − inside clock, {place}"),
        draw_title: false,
        x_label: axis.label(),
        y_label: "outside − inside (ms per probe)",
        x_scale,
        x_range,
        y_scale,
        y_range,
        refusal_band: None,
        series,
        reference: None,
    })
}

// ---------------------------------------------------------------------------------------------
// Step 3: drawing.
// ---------------------------------------------------------------------------------------------

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
fn legend_items(chart: &Chart) -> Vec<(Sample, String)> {
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
fn dodged(chart: &Chart, (width, height): (i32, i32)) -> Chart {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reports::charts::style::drawn_svg;

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
    fn points_are_the_median_and_its_order_statistic_interval_over_repeats() {
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
        // median's interval from stats.rs: [min, max] at 3 and 2 repeats.
        let at_4 = Summary::of(&[20.0, 60.0, 40.0]).unwrap();
        let at_8 = Summary::of(&[100.0, 80.0]).unwrap();
        assert_eq!(
            series[0].points,
            vec![Point::of(4.0, at_4), Point::of(8.0, at_8)]
        );
        assert_eq!(series[0].points[0].median, 40.0);
        assert_eq!(series[0].points[0].repeats, 3);
        let p = &series[0].points[0];
        assert_eq!((p.low, p.high, p.coverage), (20.0, 60.0, 0.75));
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
    fn captions_give_the_repeats_and_what_the_error_bars_cover() {
        let at = |repeats: usize, columns: usize| {
            (0..repeats).map(move |r| row(Strategy::Bound, columns, r, "ok", 10.0 + r as f64))
        };
        let caption = |rows: Vec<ResultRow>| {
            time_chart(&rows, Axis::Columns, "t", LOCAL)
                .unwrap()
                .caption
        };
        let five = caption(at(5, 4).chain(at(5, 8)).collect());
        assert!(
            five.contains(
                "n = 5 repeats per point; error bars: the median's order-statistic confidence \
                 interval, which below 6 repeats is [min, max] and covers less than 95% (here as \
                 little as 93.8%)"
            ),
            "{five}"
        );
        let mixed = caption(at(6, 4).chain(at(30, 8)).collect());
        assert!(
            mixed.contains(
                "n = 6 to 30 repeats per point; error bars: the median's 95% order-statistic \
                 confidence interval."
            ),
            "{mixed}"
        );
        let chart = time_chart(
            &at(6, 4).chain(at(30, 8)).collect::<Vec<_>>(),
            Axis::Columns,
            "t",
            LOCAL,
        )
        .unwrap();
        let legend: Vec<_> = legend_items(&chart).into_iter().map(|(_, l)| l).collect();
        assert_eq!(legend, ["bound (n=6–30)"]);
        let one = caption(at(1, 4).collect());
        assert!(
            one.contains("n = 1 repeat per point, so no error bars."),
            "{one}"
        );
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
        let legend = legend_items(&chart);
        let labels: Vec<_> = legend.iter().map(|(_, l)| l.as_str()).collect();
        assert_eq!(
            labels,
            [
                "bound (n=1)",
                "literal (n=1)",
                "bound, all non-ASCII (n=1)",
                "bare SQLite (n=1):",
                "bound",
                "literal",
            ]
        );
        // The baseline's lines under their heading, each its own entry in the baseline's grey,
        // told apart by its strategy's marker.
        assert_eq!(legend[3].0, Sample::Heading);
        let baseline_samples: Vec<_> = legend[4..].iter().map(|(s, _)| s.clone()).collect();
        assert_eq!(
            baseline_samples,
            [Strategy::Bound, Strategy::Literal].map(|strategy| Sample::Line {
                color: BASELINE,
                points: THIN_PT,
                dashed: true,
                marker: Some(strategy_shape(strategy)),
                small_marker: true,
            })
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
        let err = render_run(&run, &failed, Axis::Columns, LOCAL, false).unwrap_err();
        assert!(
            format!("{err:#}").contains("no chart could be drawn"),
            "{err:#}"
        );
        let err = render_run(&run, &[], Axis::Columns, LOCAL, false).unwrap_err();
        assert!(
            format!("{err:#}").contains("the run has no rows"),
            "{err:#}"
        );
    }

    #[test]
    fn overlapping_points_of_the_target_are_dodged_and_the_baseline_stays() {
        let mut rows = Vec::new();
        for repeat in 0..3 {
            let spread = 1.0 + 0.2 * repeat as f64;
            rows.push(row(Strategy::Bound, 50, repeat, "ok", 100.0 * spread));
            rows.push(row(Strategy::Literal, 50, repeat, "ok", 110.0 * spread));
            let mut baseline = row(Strategy::Bound, 50, repeat, "ok", 100.0 * spread);
            baseline.target = TargetKind::Sqlite;
            rows.push(baseline);
        }
        let chart = time_chart(&rows, Axis::Columns, "t", LOCAL).unwrap();
        let size = (800, 600);
        let xs =
            |chart: &Chart| -> Vec<f64> { chart.series.iter().map(|s| s.points[0].x).collect() };
        assert_eq!(xs(&chart), [50.0, 50.0, 50.0]);
        let drawn = dodged(&chart, size);
        let [bound, literal, baseline] = xs(&drawn)[..] else {
            panic!("three lines: {drawn:?}")
        };
        assert!(bound < 50.0 && literal > 50.0, "{bound} {literal}");
        assert_eq!(baseline, 50.0);
        // Apart by the dodge's width on the plot.
        let pixels = |x: f64| fraction(x, chart.x_range, chart.x_scale) * 800.0;
        let apart = pixels(literal) - pixels(bound);
        assert!((apart - f64::from(px(DODGE_PT))).abs() < 0.01, "{apart}");
        // Lines far apart in y are not moved.
        let far: Vec<_> = rows
            .iter()
            .cloned()
            .map(|mut r| {
                if r.strategy == Strategy::Literal {
                    r.outside_ms *= 100.0;
                }
                r
            })
            .collect();
        let chart = time_chart(&far, Axis::Columns, "t", LOCAL).unwrap();
        assert_eq!(xs(&dodged(&chart, size)), [50.0, 50.0, 50.0]);
    }

    #[test]
    fn the_time_caption_says_how_many_rows_each_strategy_wrote() {
        let written = |counts: &[(Strategy, usize)]| {
            let rows: Vec<ResultRow> = counts
                .iter()
                .map(|&(strategy, rows)| ResultRow {
                    rows,
                    ..row(strategy, 4, 0, "ok", 10.0)
                })
                .collect();
            time_chart(&rows, Axis::Columns, "t", LOCAL)
                .unwrap()
                .caption
        };
        let column_sweep = written(&[
            (Strategy::PerRow, 200),
            (Strategy::Bound, 10_000),
            (Strategy::Literal, 10_000),
        ]);
        assert!(
            column_sweep.ends_with(
                ". Each probe writes 10,000 rows (bound, literal) or 200 rows (per-row); its \
                 time is scaled to 1,000 rows."
            ),
            "{column_sweep}"
        );
        let one_count = written(&[(Strategy::Bound, 500), (Strategy::Literal, 500)]);
        assert!(
            one_count.ends_with(". Each probe writes 500 rows; its time is scaled to 1,000 rows."),
            "{one_count}"
        );
        let row_sizes = written(&[(Strategy::Bound, 50), (Strategy::Bound, 5000)]);
        assert!(
            row_sizes.contains("Each probe writes 5,000 or 50 rows;"),
            "{row_sizes}"
        );
    }

    #[test]
    fn overhead_is_on_a_linear_axis_with_its_zero_and_negative_values() {
        let mut rows = Vec::new();
        for (columns, overhead) in [(1, -3.0), (2, 0.0), (4, 0.5), (8, 400.0)] {
            let mut r = row(Strategy::Bound, columns, 0, "ok", 10.0);
            r.overhead_ms = Some(overhead);
            rows.push(r);
        }
        let chart = overhead_chart(&rows, Axis::Columns, "t", LOCAL).unwrap();
        let medians: Vec<_> = chart.series[0].points.iter().map(|p| p.median).collect();
        assert_eq!(medians, [-3.0, 0.0, 0.5, 400.0], "no value dropped");
        assert_eq!(
            chart.y_scale,
            Scale::Linear,
            "a span of 133 is still additive"
        );
        let (lo, hi) = chart.y_range;
        assert!(lo < -3.0 && hi > 400.0, "{lo}..{hi}");
    }

    #[test]
    fn times_are_on_a_log_axis_only_when_they_span_more_than_a_factor_of_20() {
        let times = |bound_ms: f64| {
            time_chart(
                &[
                    row(Strategy::Literal, 4, 0, "ok", 10.0),
                    row(Strategy::Bound, 4, 0, "ok", bound_ms),
                ],
                Axis::Columns,
                "t",
                LOCAL,
            )
            .unwrap()
        };
        let narrow = times(150.0);
        assert_eq!(narrow.y_scale, Scale::Linear);
        assert_eq!(narrow.y_range.0, 0.0, "a linear time axis starts at 0");
        assert_eq!(times(250.0).y_scale, Scale::Log);
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

    /// A PNG file's size in pixels and its resolution in dots per inch, read back by the
    /// `png` crate's decoder.
    fn png_size_and_dpi(bytes: &[u8]) -> ((u32, u32), Option<(f64, f64)>) {
        let reader = png::Decoder::new(bytes).read_info().unwrap();
        let info = reader.info();
        let dpi = info.pixel_dims.map(|d| {
            assert_eq!(d.unit, png::Unit::Meter);
            let dpi = |per_metre: u32| f64::from(per_metre) * 0.0254;
            (dpi(d.xppu), dpi(d.yppu))
        });
        (info.size(), dpi)
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
    fn render_writes_png_svg_and_pdf_of_every_chart_for_both_axes() {
        let dir = tempfile::tempdir().unwrap();
        for axis in [Axis::Columns, Axis::RowBytes] {
            let run = RunDir::new(dir.path().join(axis.name()));
            std::fs::create_dir_all(&run.path).unwrap();
            // Titles on the column sweep's charts only: drawn when asked for, captioned always.
            let titles = axis == Axis::Columns;
            let rows = synthetic_run(axis);
            let drawn = render_run(&run, &rows, axis, LOCAL, titles).unwrap();
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
            let place = measured_on(LOCAL);
            let charts = [
                time_chart(&rows, axis, place, LOCAL),
                rows_per_statement_chart(&rows, axis, place, LOCAL),
                overhead_chart(&rows, axis, place, LOCAL),
            ];
            for (drawn, chart) in drawn.iter().zip(charts) {
                let chart = Chart {
                    draw_title: titles,
                    ..chart.unwrap()
                };
                assert!(drawn.caption.ends_with('.'), "{}", drawn.caption);
                assert!(
                    drawn.caption.starts_with(&format!("{}. ", chart.title)),
                    "{}",
                    drawn.caption
                );
                assert_eq!(
                    drawn.files,
                    ["png", "svg", "pdf"].map(|ext| run.chart(&drawn.name, ext))
                );
                let png = std::fs::read(&drawn.files[0]).unwrap();
                let (size, dpi) = png_size_and_dpi(&png);
                // A paper column: 3.5 in × 2.6 in at 300 dpi (11,811 pixels per metre).
                assert_eq!(size, (1050, 780), "{}", drawn.name);
                let (x, y) = dpi.unwrap_or_else(|| panic!("no pHYs in {}", drawn.name));
                assert!(
                    (x - 300.0).abs() < 0.01 && (y - 300.0).abs() < 0.01,
                    "{x} × {y} dpi"
                );
                // The SVG, its text as outlines, and the PDF, with its font.
                let svg = std::fs::read_to_string(&drawn.files[1]).unwrap();
                assert!(svg.starts_with("<svg viewBox=") && !svg.contains("<text"));
                let pdf = std::fs::read(&drawn.files[2]).unwrap();
                assert!(pdf.starts_with(b"%PDF-"), "{}", drawn.name);
                assert!(String::from_utf8_lossy(&pdf).contains("/FontFile2"));

                // What the chart says, in the drawing every file is made of.
                let svg = drawn_svg(&chart).unwrap();
                let texts = svg_texts(&svg);
                let name = &drawn.name;
                assert_eq!(texts.contains(&chart.title.as_str()), titles, "{name}");
                for label in [
                    "bound (n=3)",
                    "literal (n=3)",
                    "per-row (n=3)",
                    axis.label(),
                ] {
                    assert!(texts.contains(&label), "{label} not in {name}: {texts:?}");
                }
                let is_time = name.contains("time-per-1000-rows");
                assert_eq!(
                    ["bare SQLite (n=3):", "bound", "literal"]
                        .iter()
                        .all(|entry| texts.contains(entry)),
                    is_time,
                    "the baseline belongs on the time chart only: {name}"
                );
                // Only the column sweep has refusals (bound above 100 columns); the overhead
                // chart leaves them to the time chart.
                let refused = texts.contains(&"refused");
                let overhead = name.contains("overhead");
                assert_eq!(refused, axis == Axis::Columns && !overhead, "{name}");
                assert!(!texts.contains(&""), "empty text in {name}");
            }
        }
    }
}
