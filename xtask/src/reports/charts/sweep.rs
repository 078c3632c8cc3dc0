//! Draws a run's charts (time per 1,000 rows, rows per statement, clock overhead) as PNG and
//! SVG paper figures.
//!
//! Each chart plots one value per line (a strategy, in a labelled series or not) against the
//! experiment's swept axis. Points are medians over the repeats with their 95% bootstrap
//! confidence interval as error bars; the bare SQLite baseline, when the run has one, is drawn in
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
//!    `chart_style` module, for every chart alike.

use std::fmt;
use std::path::PathBuf;

use anyhow::{Result, bail, ensure};
use d1bench_core::{Outcome, Strategy};
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;

use super::style::{
    Axes, BASELINE, CAP_PT, DASH_PT, Figure, LINE_PT, MUTED, Pen, Plot, REFERENCE_SAMPLE, Sample,
    Scale, Shape, Span, THIN_PT, chart_title, draw_frame, draw_reference, drawing_error, extent,
    marker, padded, px, strategy_color, strategy_shape, stroke, write, x_range, x_scale,
};
use crate::flags::TargetKind;
use crate::records::{ResultRow, RunDir};
use crate::reports::points::{Measure, points};
use crate::reports::stats::Summary;
use crate::studies::sweep::Axis;

/// Share of the time chart's height given to the band of refused points above the data.
const REFUSAL_BAND: f64 = 0.15;

/// The order strategies are listed in, in every legend.
const STRATEGIES: [Strategy; 3] = [Strategy::Bound, Strategy::Literal, Strategy::PerRow];

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
        let files = write(&chart, |extension| run.chart(&chart.name, extension))?;
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

/// The rows of one target.
fn of_target(rows: &[ResultRow], target: TargetKind) -> Vec<ResultRow> {
    rows.iter()
        .filter(|r| r.target == target)
        .cloned()
        .collect()
}

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
        "Median time per 1,000 rows written (outside clock less the target's preparation) \
         against {}, with 95% bootstrap confidence intervals",
        axis.label()
    );
    if refusal_band.is_some() {
        caption.push_str("; crosses in the top band mark points where every repeat was refused");
    }
    if series.iter().any(|s| s.baseline) {
        caption.push_str(&format!(
            "; dashed grey lines: the same probes on {BASELINE_LABEL}, timed around its writes \
             (no HTTP)"
        ));
    }
    caption.push('.');
    Ok(Chart {
        name,
        caption,
        title: chart_title(title, "time per 1,000 rows"),
        x_label: axis.label(),
        y_label: "ms per 1,000 rows (outside − prepare)",
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

/// Outside − inside − prepare against the axis, per strategy: what the request adds to the
/// target's own clocks. If it differs between strategies, a gap between them could be the
/// instrument's. Only the target's rows: the baseline has no request around its clocks. (The
/// file keeps the name it had when this was outside − inside.)
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
                "the {target} target's outside clock is its preparation and writes, so there \
                 is no overhead to plot"
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
            "Median outside − inside − prepare clock per probe against {}, with 95% bootstrap \
             confidence intervals: what the request adds to the target's preparation and \
             writes (HTTP, JSON, freeing what the probe built). Lines that differ mean the outside \
             clock adds different costs to different strategies.",
            axis.label()
        ),
        title: chart_title(title, "outside − inside − prepare"),
        x_label: axis.label(),
        y_label: "outside − inside − prepare (ms per probe)",
        x_scale,
        x_range,
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
            y_scale: Scale::Log,
            y_range: self.y_range,
            // y ticks label the data only, not the refusal band above it.
            y_labelled: (
                self.y_range.0,
                self.refusal_band.map_or(self.y_range.1, |band| band.0),
            ),
            band: self.refusal_band,
        };
        let legend = legend_items(self);
        draw_frame(root, pen, &self.title, legend, &axes, |plot| {
            draw_data(plot, self)
        })
    }
}

fn legend_items(chart: &Chart) -> Vec<(Sample, String)> {
    let mut items: Vec<_> = chart
        .series
        .iter()
        .filter(|s| !s.baseline)
        .map(|s| {
            let sample = Sample::Line {
                color: strategy_color(s.strategy),
                points: LINE_PT,
                dashed: !s.label.is_empty(),
                marker: Some(strategy_shape(s.strategy)),
            };
            (sample, s.name())
        })
        .collect();
    if chart.series.iter().any(|s| s.baseline) {
        let sample = Sample::Line {
            color: BASELINE,
            points: LINE_PT,
            dashed: true,
            marker: None,
        };
        items.push((sample, BASELINE_LABEL.to_owned()));
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

/// The data of `chart` on its plot: the reference curve, then the baseline's lines, the
/// target's over them, and the refusal marks on top of everything.
fn draw_data<DB: DrawingBackend>(plot: &mut Plot<'_, DB>, chart: &Chart) -> Result<()> {
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
        assert!(
            skip.reason
                .contains("outside clock is its preparation and writes"),
            "{skip}"
        );
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
                    let (size, dpi) = png_size_and_dpi(&bytes);
                    // A paper column: 3.5 in × 2.6 in at 300 dpi (11,811 pixels per metre).
                    assert_eq!(size, (1050, 780), "{}", path.display());
                    let (x, y) = dpi.unwrap_or_else(|| panic!("no pHYs in {}", path.display()));
                    assert!(
                        (x - 300.0).abs() < 0.01 && (y - 300.0).abs() < 0.01,
                        "{x} × {y} dpi"
                    );
                } else {
                    let svg = String::from_utf8(bytes).unwrap();
                    assert!(svg.contains("<svg"), "{}", path.display());
                    // Text in the font the SVG carries, and no other.
                    assert!(svg.contains(r#"@font-face{font-family:"DejaVu Sans""#));
                    assert_eq!(
                        svg.matches(r#"font-family="DejaVu Sans""#).count(),
                        svg.matches("font-family=").count()
                    );
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
