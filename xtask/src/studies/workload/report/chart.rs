//! The latency chart of a workload run: for each operation, the p50 (solid, with its 95%
//! interval as error bars) and the p99 (dashed, same colour) against the rate, on a log latency
//! axis; one chart per table size, index and preparation of the run's own target, when it swept
//! two rates or more. PNG, SVG and PDF in the style of every chart (`style`).

use std::path::Path;

use anyhow::Result;
use d1bench_core::workload::{Operation, SessionMode};
use plotters::prelude::RGBColor;

use super::load_stats::OpStats;
use crate::charts::line::{self, LineChart, Point};
use crate::charts::style::{Scale, Shape, Span, scale_for, write};
use crate::reports::charts::{Drawn, measured_on};
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
type Rate = (f64, f64, Option<Span>, Option<f64>);

/// One operation's points.
struct Line {
    op: Operation,
    points: Vec<Rate>,
}

/// The chart of `lines`: each operation's p50 with its interval, solid, and its p99 dashed
/// beside it, against the rate; log latency axis.
fn latency_chart(title: Option<String>, lines: Vec<Line>) -> LineChart {
    let lines: Vec<line::Line> = lines
        .into_iter()
        .map(|l| {
            let (color, shape) = look(l.op);
            line::Line {
                companion: Some(l.points.iter().filter_map(|p| Some((p.0, p.3?))).collect()),
                ..line::Line::solid(
                    format!("{} p50 (dashed: p99)", l.op),
                    color,
                    shape,
                    (l.points.iter())
                        .map(|&(x, y, bar, _)| Point { x, y, bar })
                        .collect(),
                )
            }
        })
        .collect();
    let x_scale = scale_for(lines.iter().flat_map(|l| l.points.iter().map(|p| p.x)));
    LineChart {
        title,
        x_label: "requests per second scheduled".to_owned(),
        y_label: "latency from due time (ms)".to_owned(),
        x_scale,
        x_range: line::x_range_of(&lines, x_scale),
        x_text: Default::default(),
        y_scale: Scale::Log,
        y_range: line::y_range_of(&lines, Scale::Log),
        refusal_band: None,
        lines,
        secondary_heading: None,
        reference: None,
        dodge: false,
    }
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
        let chart = latency_chart(titles.then(|| title.clone()), lines);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::studies::workload::report::load_stats::stats;
    use crate::studies::workload::row::OpRow;

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
                        ..crate::studies::workload::row::tests_support::row()
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
        let chart = latency_chart(
            Some("t".into()),
            vec![Line {
                op: Operation::Write,
                points: vec![
                    (50.0, 2.0, Some((1.5, 2.5)), Some(9.0)),
                    (100.0, 3.0, None, None),
                ],
            }],
        );
        let svg = crate::charts::style::drawn_svg(&chart).unwrap();
        for text in ["write p50 (dashed: p99)", "requests per second scheduled"] {
            assert!(svg.contains(text), "{text}");
        }
    }
}
