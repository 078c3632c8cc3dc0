//! Draws a sweep run's charts (time per 1,000 rows, rows per statement, clock overhead) as PNG,
//! SVG and PDF paper figures.
//!
//! At about 635 lines before its tests (mostly doc and the three charts' captions) it stays one
//! file: the figure drawing is in `chart/figure.rs` and the line chart in `crate::charts`; what
//! remains is what each of the three charts plots and says, which reads best together. A
//! fourth chart goes in a file of its own.
//!
//! Each chart plots one value per line (a strategy, in a labelled series or not) against the
//! experiment's swept axis. Points are each point's estimate with its interval as error bars
//! (see [`super::intervals`]: over sessions when the run has several, the median's
//! order-statistic interval within one session otherwise; what it covers, and the repeats and
//! sessions behind each point, are in the caption); the bare SQLite baseline, when the run has
//! one, is drawn in dashed grey under the target's lines.
//!
//! Drawing happens in three steps, each testable on its own:
//!
//! 1. [`summarize`] turns the run's points ([`super::points`], summarized by
//!    [`crate::stats`]) into per-line series and notes where every repeat was refused. It is pure.
//! 2. [`time_chart`], [`rows_per_statement_chart`] and [`overhead_chart`] decide what a chart
//!    shows: its series, axis scales and ranges, the refusal band, the reference curve. Also pure.
//! 3. A [`Chart`] becomes the one line chart's [`crate::charts::line::LineChart`]
//!    (`sweep/figure.rs`: colours, dashes, the baseline's heading), which draws it inside the
//!    frame every chart shares, its points dodged where their error bars would collide;
//!    [`render_run`] writes the files. How charts look (size, fonts, colours, title, legend,
//!    axes) is decided in [`crate::charts::style`], for every chart alike.
//!
//! Charts are paper figures: no internal names (experiment, profile, target kind) on them, and
//! no title unless asked for (`--titles`); the caption, which summary.md prints under each
//! chart, starts with the title.
//!
//! Quantities that scale (times, rows per statement) are drawn on a log axis when they span more
//! than a factor of 20, so a line ten times another keeps its shape; the overhead, a difference
//! of two clocks that may be near zero or negative, is always drawn on a linear axis.
//!
//! Past 600 lines: the three charts share one frame and caption code; each chart becoming a module
//! of `charts/` is the split to make, not done yet.

use std::collections::BTreeSet;
use std::fmt;

use anyhow::{Result, bail, ensure};
use d1bench_core::{Outcome, Strategy};

use crate::charts::style::{Scale, Span, extent, format_number, range_for, scale_for, write};
use crate::reports::charts::{Drawn, measured_on};

mod figure;
use super::intervals::Basis;
use super::points::{Measure, points};
use crate::base::TargetKind;
use crate::records::RunDir;
use crate::stats::{CONFIDENCE, Summary};
use crate::studies::sweep::Axis;
use crate::studies::sweep::row::ProbeRow;

/// Share of the time chart's height given to the band of refused points above the data.
const REFUSAL_BAND: f64 = 0.15;

/// The order strategies are listed in, in every legend.
const STRATEGIES: &[Strategy] = Strategy::REPORT_ORDER;

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
    rows: &[ProbeRow],
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
        let files = write(&figure::figure(&chart), |extension| {
            run.chart(&chart.name, extension)
        })?;
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
    /// The median's confidence interval (see [`crate::stats`]): the error bar; the
    /// median itself when there is none (one repeat).
    low: f64,
    high: f64,
    /// What the interval covers; 0 without one.
    coverage: f64,
    /// Repeats that contributed.
    repeats: usize,
    /// Sessions they came from: from 2 on, the error bar is the interval between sessions.
    sessions: usize,
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
            sessions: summary.sessions,
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
fn summarize(rows: &[ProbeRow], axis: Axis, measure: Measure, target: TargetKind) -> Vec<Series> {
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
        let summary = point.summary_of(measure, |v| additive(measure) || v > 0.0);
        line.points.extend(summary.map(|s| Point::of(point.x, s)));
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
fn of_target(rows: &[ProbeRow], target: TargetKind) -> Vec<ProbeRow> {
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
fn nothing_succeeded(rows: &[ProbeRow]) -> String {
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
fn rows_written(rows: &[ProbeRow]) -> String {
    // Strategies that wrote the same numbers of rows, in legend order.
    let mut groups: Vec<(BTreeSet<usize>, Vec<&str>)> = Vec::new();
    for &strategy in STRATEGIES {
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
    if let Some((_, sessions)) = extent(points().map(|p| p.sessions as f64))
        && sessions >= 2.0
    {
        return format!(
            "{n} over {sessions} sessions; {}",
            Basis::BetweenSessions(sessions as usize).error_bars()
        );
    }
    let least = points()
        .filter(|p| p.repeats > 1)
        .map(|p| p.coverage)
        .reduce(f64::min);
    match least {
        None => format!("{n} in one session, so no error bars"),
        Some(c) if c >= CONFIDENCE => {
            format!(
                "{n}; error bars: the median's 95% order-statistic confidence interval within \
                 one session"
            )
        }
        Some(c) => format!(
            "{n}; error bars: the median's order-statistic confidence interval within one \
             session, which below 6 repeats is [min, max] and covers less than 95% (here as \
             little as {:.1}%)",
            c * 100.0
        ),
    }
}

/// Milliseconds per 1,000 rows against the axis; refused points in a band above the data; the
/// baseline's lines in grey.
fn time_chart(
    rows: &[ProbeRow],
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
        "Median time per 1,000 rows written (outside clock less the target's preparation) \
         against {}; {}",
        axis.label(),
        error_bars(&series)
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
    caption.push_str(&format!(" {}.", rows_written(rows)));
    Ok(Chart {
        name,
        caption,
        title: format!("Time per 1,000 rows written, {place}"),
        draw_title: false,
        x_label: axis.label(),
        y_label: "ms per 1,000 rows (outside − prepare)",
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
    rows: &[ProbeRow],
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

/// Outside − inside − prepare against the axis, per strategy: what the request adds to the
/// target's own clocks. If it differs between strategies, a gap between them could be the
/// instrument's. Only the target's rows: the baseline has no request around its clocks. (The
/// file keeps the name it had when this was outside − inside.)
fn overhead_chart(
    rows: &[ProbeRow],
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
    let (x_scale, x_range) = x_axis_of(&series);
    Ok(Chart {
        name,
        caption: format!(
            "Median outside − inside − prepare clock per probe against {}; {}: what the request \
             adds to the target's preparation and writes (HTTP, JSON, freeing what the probe \
             built). Lines that differ mean the outside clock adds different costs to different \
             strategies.",
            axis.label(),
            error_bars(&series)
        ),
        title: format!("Outside − inside − prepare clock, {place}"),
        draw_title: false,
        x_label: axis.label(),
        y_label: "outside − inside − prepare (ms per probe)",
        x_scale,
        x_range,
        y_scale,
        y_range,
        refusal_band: None,
        series,
        reference: None,
    })
}

#[cfg(test)]
mod tests;
