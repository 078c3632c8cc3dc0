//! The cache workload's charts: hit ratio against TTL (with Wilson intervals) and staleness
//! against TTL (the stale share, and the stale reads' median and p95 staleness), and the
//! write-contention chart of the refusal share against rate, one line per retry policy. PNG,
//! SVG and PDF through the one line chart ([`crate::charts::line`]).

use std::path::Path;

use anyhow::Result;
use plotters::prelude::RGBColor;

use super::cache::TtlStats;
use super::load_stats::OpStats;
use crate::charts::line::{Line, LineChart, Point, x_range_of, y_range_of};
use crate::charts::style::{Scale, Shape, Span, scale_for, write};
use crate::reports::charts::{Drawn, measured_on};
use crate::stats::{CONFIDENCE, Share};
use crate::studies::workload::RetryKind;

const BLUE: RGBColor = RGBColor(0x00, 0x72, 0xb2);
const VERMILION: RGBColor = RGBColor(0xd5, 0x5e, 0x00);
const GREEN: RGBColor = RGBColor(0x00, 0x9e, 0x73);

fn share_point(x: f64, s: Share) -> Point {
    Point {
        x,
        y: s.ratio(),
        bar: Some((s.low, s.high)),
    }
}

/// What one of these charts plots: lines against x with their intervals, the y range fixed
/// (shares: 0 to 1) or from the data.
struct Lines {
    x_label: &'static str,
    y_label: &'static str,
    x_scale: Scale,
    y_scale: Scale,
    y_range: Option<Span>,
    lines: Vec<Line>,
}

fn chart(
    dir: &Path,
    name: &str,
    title: String,
    titles: bool,
    what: Lines,
    caption: &str,
) -> Result<Drawn> {
    let figure = LineChart {
        title: titles.then(|| title.clone()),
        x_label: what.x_label.to_owned(),
        y_label: what.y_label.to_owned(),
        x_scale: what.x_scale,
        x_range: x_range_of(&what.lines, what.x_scale),
        x_text: Default::default(),
        y_scale: what.y_scale,
        y_range: (what.y_range).unwrap_or_else(|| y_range_of(&what.lines, what.y_scale)),
        refusal_band: None,
        lines: what.lines,
        secondary_heading: None,
        reference: None,
        dodge: false,
    };
    let files = write(&figure, |extension| dir.join(format!("{name}.{extension}")))?;
    Ok(Drawn {
        name: name.to_owned(),
        caption: format!("{title}. {caption}"),
        files,
    })
}

/// `hit-ratio-vs-ttl` and `staleness-vs-ttl` of the run's own target, when it swept two TTLs
/// or more.
pub fn render(dir: &Path, stats: &[TtlStats], titles: bool) -> Result<Vec<Drawn>> {
    let Some(target) = stats.first().map(|s| s.target) else {
        return Ok(Vec::new());
    };
    let mine: Vec<&TtlStats> = stats.iter().filter(|s| s.target == target).collect();
    if mine.len() < 2 {
        return Ok(Vec::new());
    }
    let x_scale = scale_for(mine.iter().map(|s| s.ttl_s));
    let hits: Vec<_> = mine
        .iter()
        .filter_map(|s| Some(share_point(s.ttl_s, s.hit_ratio()?)))
        .collect();
    let stale: Vec<_> = mine
        .iter()
        .filter_map(|s| Some(share_point(s.ttl_s, s.stale_share()?)))
        .collect();
    let mut drawn = vec![chart(
        dir,
        "hit-ratio-vs-ttl",
        format!(
            "Cache hit ratio and stale share against TTL, {}",
            measured_on(target)
        ),
        titles,
        Lines {
            x_label: "TTL (s)",
            y_label: "share of cached reads",
            x_scale,
            y_scale: Scale::Linear,
            y_range: Some((0.0, 1.0)),
            lines: vec![
                Line::solid("hit ratio".into(), BLUE, Shape::Circle, hits),
                Line::solid("stale share".into(), VERMILION, Shape::Square, stale),
            ],
        },
        "The share of measured cached reads answered from KV, and the share that returned an \
         older version than an update acknowledged before they were sent; each with its 95% \
         Wilson interval.",
    )?];
    let quantile = |q: f64| -> Vec<Point> {
        mine.iter()
            .filter_map(|s| {
                let p = s.staleness.percentile(q, CONFIDENCE)?;
                Some(Point {
                    x: s.ttl_s,
                    y: p.ms,
                    bar: p.ci.map(|c| (c.low, c.high)),
                })
            })
            .collect()
    };
    let (p50, p95) = (quantile(0.5), quantile(0.95));
    if !p50.is_empty() {
        drawn.push(chart(
            dir,
            "staleness-vs-ttl",
            format!(
                "Staleness of stale reads against TTL, {}",
                measured_on(target)
            ),
            titles,
            Lines {
                x_label: "TTL (s)",
                y_label: "staleness (ms)",
                x_scale,
                y_scale: Scale::Log,
                y_range: None,
                lines: vec![
                    Line::solid("p50".into(), BLUE, Shape::Circle, p50),
                    Line::solid("p95".into(), GREEN, Shape::Triangle, p95),
                ],
            },
            "How long before a stale read its row's newer version had been acknowledged: the \
             median and 95th percentile of the stale reads, with order-statistic intervals; log \
             axis. TTLs without stale reads have no point.",
        )?);
    }
    Ok(drawn)
}

fn retry_look(retry: RetryKind) -> (RGBColor, Shape) {
    match retry {
        RetryKind::None => (VERMILION, Shape::Circle),
        RetryKind::Fixed => (BLUE, Shape::Square),
        RetryKind::Exponential => (GREEN, Shape::Triangle),
    }
}

/// `refusals-vs-rate-<operation>`: the share of writes not acknowledged at their last attempt
/// against the rows per second offered, one line per retry policy, when a write operation was
/// measured at two rates or more under two policies or more.
pub fn render_refusals(dir: &Path, stats: &[OpStats], titles: bool) -> Result<Vec<Drawn>> {
    let Some(target) = stats.first().map(|s| s.key.target) else {
        return Ok(Vec::new());
    };
    let writes: Vec<&OpStats> = stats
        .iter()
        .filter(|s| s.key.target == target && s.key.op.inserts())
        .collect();
    let mut ops: Vec<_> = writes.iter().map(|s| s.key.op).collect();
    ops.sort();
    ops.dedup();
    let mut drawn = Vec::new();
    for op in ops {
        let of: Vec<&&OpStats> = writes.iter().filter(|s| s.key.op == op).collect();
        let mut retries: Vec<RetryKind> = of.iter().map(|s| s.key.retry).collect();
        retries.sort();
        retries.dedup();
        let lines: Vec<Line> = retries
            .iter()
            .map(|&retry| {
                let (color, shape) = retry_look(retry);
                let mut points: Vec<_> = of
                    .iter()
                    .filter(|s| s.key.retry == retry)
                    .filter_map(|s| {
                        let share = Share::of(s.n - s.ok, s.n)?;
                        Some(share_point(s.offered_rows_per_s, share))
                    })
                    .collect();
                points.sort_by(|a, b| a.x.total_cmp(&b.x));
                Line::solid(format!("retry {retry}"), color, shape, points)
            })
            .collect();
        if lines.len() < 2 || lines.iter().all(|l| l.points.len() < 2) {
            continue;
        }
        let x_scale = scale_for(lines.iter().flat_map(|l| l.points.iter().map(|p| p.x)));
        drawn.push(chart(
            dir,
            &format!("refusals-vs-rate-{op}"),
            format!(
                "Writes not acknowledged against rate, {op}, {}",
                measured_on(target)
            ),
            titles,
            Lines {
                x_label: "rows per second offered",
                y_label: "share not acknowledged",
                x_scale,
                y_scale: Scale::Linear,
                y_range: Some((0.0, 1.0)),
                lines,
            },
            "The share of measured writes whose last attempt was refused or unanswered, one line \
             per retry policy, each with its 95% Wilson interval.",
        )?);
    }
    Ok(drawn)
}
