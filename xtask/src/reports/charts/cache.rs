//! The cache workload's charts: hit ratio against TTL (with Wilson intervals) and staleness
//! against TTL (the stale share, and the stale reads' median and p95 staleness), and the
//! write-contention chart of the refusal share against rate, one line per retry policy. PNG,
//! SVG and PDF through [`super::lines`].

use std::path::Path;

use anyhow::Result;
use plotters::prelude::RGBColor;

use super::lines::{Line, LinesChart, Point};
use super::style::{Scale, Shape, scale_for, write};
use super::{Drawn, measured_on};
use crate::reports::cache::TtlStats;
use crate::reports::load_stats::OpStats;
use crate::stats::{CONFIDENCE, Share};
use crate::studies::workload::RetryKind;

const BLUE: RGBColor = RGBColor(0x00, 0x72, 0xb2);
const VERMILION: RGBColor = RGBColor(0xd5, 0x5e, 0x00);
const GREEN: RGBColor = RGBColor(0x00, 0x9e, 0x73);

fn share_point(x: f64, s: Share) -> Point {
    (x, s.ratio(), Some((s.low, s.high)))
}

fn chart(
    dir: &Path,
    name: &str,
    title: String,
    titles: bool,
    figure: LinesChart,
    caption: &str,
) -> Result<Drawn> {
    let figure = LinesChart {
        title: titles.then(|| title.clone()),
        ..figure
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
        LinesChart {
            title: None,
            x_label: "TTL (s)".into(),
            y_label: "share of cached reads".into(),
            x_scale,
            y_scale: Scale::Linear,
            y_range: Some((0.0, 1.0)),
            lines: vec![
                Line {
                    label: "hit ratio".into(),
                    color: BLUE,
                    shape: Shape::Circle,
                    points: hits,
                },
                Line {
                    label: "stale share".into(),
                    color: VERMILION,
                    shape: Shape::Square,
                    points: stale,
                },
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
                Some((s.ttl_s, p.ms, p.ci.map(|c| (c.low, c.high))))
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
            LinesChart {
                title: None,
                x_label: "TTL (s)".into(),
                y_label: "staleness (ms)".into(),
                x_scale,
                y_scale: Scale::Log,
                y_range: None,
                lines: vec![
                    Line {
                        label: "p50".into(),
                        color: BLUE,
                        shape: Shape::Circle,
                        points: p50,
                    },
                    Line {
                        label: "p95".into(),
                        color: GREEN,
                        shape: Shape::Triangle,
                        points: p95,
                    },
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
                points.sort_by(|a, b| a.0.total_cmp(&b.0));
                Line {
                    label: format!("retry {retry}"),
                    color,
                    shape,
                    points,
                }
            })
            .collect();
        if lines.len() < 2 || lines.iter().all(|l| l.points.len() < 2) {
            continue;
        }
        let x_scale = scale_for(lines.iter().flat_map(|l| l.points.iter().map(|p| p.0)));
        drawn.push(chart(
            dir,
            &format!("refusals-vs-rate-{op}"),
            format!(
                "Writes not acknowledged against rate, {op}, {}",
                measured_on(target)
            ),
            titles,
            LinesChart {
                title: None,
                x_label: "rows per second offered".into(),
                y_label: "share not acknowledged".into(),
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
