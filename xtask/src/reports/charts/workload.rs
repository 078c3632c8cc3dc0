//! The latency chart of a workload run: for each operation, the p50 (solid, with its 95%
//! interval as error bars) and the p99 (dashed, same colour) against the rate, on a log latency
//! axis; one chart per table size, index and preparation of the run's own target, when it swept
//! two rates or more. PNG, SVG and PDF in the style of every chart (`style`).

use std::path::Path;

use anyhow::Result;
use d1bench_core::workload::{Operation, SessionMode};
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;

use super::style::{
    Axes, CAP_PT, DASH_PT, Figure, LINE_PT, Pen, Sample, Scale, Shape, THIN_PT, draw_frame,
    drawing_error, extent, marker, padded, px, range_for, scale_for, stroke, write,
};
use super::{Drawn, measured_on};
use crate::reports::load_stats::OpStats;
use crate::stats::CONFIDENCE;
use crate::studies::workload::RetryKind;

/// Each operation's colour (Okabe–Ito) and marker.
fn look(op: Operation) -> (RGBColor, Shape) {
    match op {
        Operation::PointRead => (RGBColor(0x00, 0x72, 0xb2), Shape::Circle),
        Operation::RangeScan => (RGBColor(0xd5, 0x5e, 0x00), Shape::Square),
        Operation::Aggregate => (RGBColor(0x00, 0x9e, 0x73), Shape::Triangle),
        Operation::Write => (RGBColor(0xcc, 0x79, 0xa7), Shape::Circle),
        Operation::BatchWrite => (RGBColor(0xe6, 0x9f, 0x00), Shape::Square),
        Operation::CachedRead => (RGBColor(0x56, 0xb4, 0xe9), Shape::Triangle),
        Operation::Update => (RGBColor(0x00, 0x00, 0x00), Shape::Triangle),
    }
}

/// One point of a line: (rate, p50, the p50's interval, p99).
type Point = (f64, f64, Option<(f64, f64)>, Option<f64>);

/// One operation's points.
struct Line {
    op: Operation,
    points: Vec<Point>,
}

struct LatencyChart {
    title: Option<String>,
    lines: Vec<Line>,
}

/// Draws `latency-vs-rate-<rows>-<index>-<preparation>.{png,svg,pdf}` into `dir` for each
/// series of `stats` on the run's target that swept two rates or more.
pub fn render(dir: &Path, stats: &[OpStats], titles: bool) -> Result<Vec<Drawn>> {
    let Some(target) = stats.first().map(|s| s.key.target) else {
        return Ok(Vec::new());
    };
    let mine: Vec<&OpStats> = stats.iter().filter(|s| s.key.target == target).collect();
    let mut series: Vec<_> = mine
        .iter()
        .map(|s| {
            (
                s.key.table_rows,
                s.key.index,
                s.key.preparation,
                s.key.session,
                s.key.retry,
                s.key.ttl_s.map(f64::to_bits),
            )
        })
        .collect();
    series.sort();
    series.dedup();
    let mut drawn = Vec::new();
    for (rows, index, preparation, session, retry, ttl) in series {
        let of: Vec<&&OpStats> = mine
            .iter()
            .filter(|s| {
                (
                    s.key.table_rows,
                    s.key.index,
                    s.key.preparation,
                    s.key.session,
                    s.key.retry,
                    s.key.ttl_s.map(f64::to_bits),
                ) == (rows, index, preparation, session, retry, ttl)
            })
            .collect();
        let mut lines: Vec<Line> = Vec::new();
        for s in &of {
            let (Some(p50), p99) = (
                s.latencies.percentile(0.5, CONFIDENCE),
                s.latencies.percentile(0.99, CONFIDENCE),
            ) else {
                continue;
            };
            let point = (
                s.key.rate,
                p50.ms,
                p50.ci.map(|c| (c.low, c.high)),
                p99.map(|p| p.ms),
            );
            match lines.iter_mut().find(|l| l.op == s.key.op) {
                Some(l) => l.points.push(point),
                None => lines.push(Line {
                    op: s.key.op,
                    points: vec![point],
                }),
            }
        }
        if lines.iter().all(|l| l.points.len() < 2) {
            continue;
        }
        for l in &mut lines {
            l.points.sort_by(|a, b| a.0.total_cmp(&b.0));
        }
        let retried = match retry {
            RetryKind::None => String::new(),
            retry => format!(", retry {retry}"),
        };
        let (in_session, session_suffix) = match session {
            SessionMode::None => (String::new(), String::new()),
            session => (
                format!(", session {session}"),
                format!("-session-{session}"),
            ),
        };
        let title = format!(
            "Latency against rate, {} ({rows} rows, {index} index, statements {preparation}{in_session}{retried})",
            measured_on(target)
        );
        let chart = LatencyChart {
            title: titles.then(|| title.clone()),
            lines,
        };
        let name = match retry {
            RetryKind::None => {
                format!("latency-vs-rate-{rows}-{index}-{preparation}{session_suffix}")
            }
            retry => format!(
                "latency-vs-rate-{rows}-{index}-{preparation}{session_suffix}-retry-{retry}"
            ),
        };
        let name = match ttl.map(f64::from_bits) {
            Some(ttl) => format!("{name}-ttl-{ttl}s"),
            None => name,
        };
        let files = write(&chart, |extension| dir.join(format!("{name}.{extension}")))?;
        drawn.push(Drawn {
            name,
            caption: format!(
                "{title}. Each operation's median latency from when the request was due (solid, \
                 with its 95% order-statistic interval) and its 99th percentile (dashed), \
                 against the requests per second scheduled; log latency axis."
            ),
            files,
        });
    }
    Ok(drawn)
}

impl Figure for LatencyChart {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>, pen: &Pen) -> Result<()> {
        let xs = self.lines.iter().flat_map(|l| l.points.iter().map(|p| p.0));
        let x_scale = scale_for(xs.clone());
        let (x_lo, x_hi) = extent(xs).unwrap_or((1.0, 1.0));
        let ys = self.lines.iter().flat_map(|l| {
            l.points.iter().flat_map(|p| {
                [Some(p.1), p.2.map(|c| c.0), p.2.map(|c| c.1), p.3]
                    .into_iter()
                    .flatten()
            })
        });
        let (y_lo, y_hi) = extent(ys.filter(|y| *y > 0.0)).unwrap_or((1.0, 1.0));
        let y_range = padded(y_lo, y_hi.max(y_lo * 1.5), Scale::Log);
        let axes = Axes {
            x_label: "requests per second scheduled",
            y_label: "latency from due time (ms)",
            x_scale,
            x_range: range_for(x_lo, x_hi, x_scale),
            y_scale: Scale::Log,
            y_range,
            y_labelled: y_range,
            band: None,
        };
        let legend = self
            .lines
            .iter()
            .map(|l| {
                let (color, shape) = look(l.op);
                (
                    Sample::Line {
                        color,
                        points: LINE_PT,
                        dashed: false,
                        marker: Some(shape),
                        small_marker: false,
                    },
                    format!("{} p50 (dashed: p99)", l.op),
                )
            })
            .collect();
        draw_frame(root, pen, self.title.as_deref(), legend, &axes, |plot| {
            let cap = px(CAP_PT);
            for l in &self.lines {
                let (color, shape) = look(l.op);
                let thin = stroke(color, THIN_PT);
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
                let p50: Vec<(f64, f64)> = l.points.iter().map(|p| (p.0, p.1)).collect();
                plot.draw_series(LineSeries::new(p50.clone(), stroke(color, LINE_PT)))
                    .map_err(drawing_error)?;
                let p99: Vec<(f64, f64)> =
                    l.points.iter().filter_map(|p| Some((p.0, p.3?))).collect();
                plot.draw_series(std::iter::once(DashedPathElement::new(
                    p99,
                    px(DASH_PT.0),
                    px(DASH_PT.1),
                    stroke(color, THIN_PT),
                )))
                .map_err(drawing_error)?;
                let mark = marker(shape, (0, 0));
                plot.draw_series(
                    p50.into_iter()
                        .map(|p| EmptyElement::at(p) + Polygon::new(mark.clone(), color.filled())),
                )
                .map_err(drawing_error)?;
            }
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::workload_row::OpRow;
    use crate::reports::load_stats::stats;

    fn rows(rates: &[f64]) -> Vec<OpRow> {
        let mut rows = Vec::new();
        for (point, &rate) in rates.iter().enumerate() {
            for seq in 0..100u64 {
                for op in [Operation::PointRead, Operation::Write] {
                    rows.push(OpRow {
                        point: point + 1,
                        rate,
                        op,
                        seq,
                        scheduled_ms: seq as f64 * 1000.0 / rate,
                        latency_ms: 1.0 + seq as f64 / 10.0 + rate / 10.0,
                        inside_ms: Some(0.5),
                        d1_ms: Some(0.1),
                        rows_read: Some(1),
                        rows_written: Some(0),
                        ..crate::records::workload_row::tests_support::row()
                    });
                }
            }
        }
        rows
    }

    #[test]
    fn a_chart_per_series_that_swept_two_rates_or_more() {
        let dir = tempfile::tempdir().unwrap();
        assert!(
            render(dir.path(), &stats(&rows(&[50.0])), false)
                .unwrap()
                .is_empty()
        );
        let drawn = render(dir.path(), &stats(&rows(&[50.0, 100.0, 400.0])), true).unwrap();
        assert_eq!(drawn.len(), 1);
        assert_eq!(drawn[0].name, "latency-vs-rate-1000-key-reuse");
        assert_eq!(drawn[0].files.len(), 3);
        let svg = std::fs::read_to_string(&drawn[0].files[1]).unwrap();
        assert!(svg.starts_with("<svg"));
        let chart = LatencyChart {
            title: Some("t".into()),
            lines: vec![Line {
                op: Operation::Write,
                points: vec![
                    (50.0, 2.0, Some((1.5, 2.5)), Some(9.0)),
                    (100.0, 3.0, None, None),
                ],
            }],
        };
        let svg = crate::reports::charts::style::drawn_svg(&chart).unwrap();
        for text in ["write p50 (dashed: p99)", "requests per second scheduled"] {
            assert!(svg.contains(text), "{text}");
        }
    }
}
