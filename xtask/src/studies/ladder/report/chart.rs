//! The param-ceiling chart: rows per bound statement found at each column count, against the
//! floor(100 / C) the documented 100-parameter limit predicts (floor(65,535 / C) on Postgres); PNG, SVG and PDF in the style of
//! every chart (`style`).

use std::path::Path;

use super::parity;
use anyhow::Result;
use d1bench_core::Strategy;
use d1bench_core::ladder::LadderKind;

use crate::base::TargetKind;
use crate::charts::line::{Line, LineChart, Point, Stroke};
use crate::charts::style::{
    Scale, extent, padded, range_for, scale_for, strategy_color, strategy_shape, write,
};
use crate::reports::charts::{Drawn, measured_on};
use crate::studies::ladder::row::ClimbFinding;

/// Draws `param-ceiling.{png,svg,pdf}` into `dir` when `findings` hold param-ceiling climbs, run
/// on `target`; with `titles`, the chart carries its title too.
pub fn param_ceiling(
    dir: &Path,
    findings: &[ClimbFinding],
    target: TargetKind,
    titles: bool,
) -> Result<Option<Drawn>> {
    let title = format!("Rows per bound statement, {}", measured_on(target));
    let Some(chart) = Ceiling::of(findings, titles.then(|| title.clone())) else {
        return Ok(None);
    };
    let name = "param-ceiling";
    let files = write(&chart.figure(), |extension| {
        dir.join(format!("{name}.{extension}"))
    })?;
    Ok(Some(Drawn {
        name: name.to_owned(),
        caption: format!(
            "{title}. The most rows one bound statement carried at each column count, against \
             {}.",
            chart.allowed.formula().replace('/', " / ")
        ),
        files,
    }))
}

/// The chart: each climb's column count and the most rows that ran (none when none did), in
/// increasing columns.
struct Ceiling {
    /// Drawn above the chart when set.
    title: Option<String>,
    points: Vec<(usize, Option<usize>)>,
    /// The target's floor(P / C), the reference.
    allowed: parity::Ceiling,
}

impl Ceiling {
    /// The chart of the param-ceiling climbs among `findings`, if there are any.
    fn of(findings: &[ClimbFinding], title: Option<String>) -> Option<Ceiling> {
        let climbs = findings
            .iter()
            .filter(|f| f.ladder == LadderKind::ParamCeiling);
        let allowed = climbs
            .clone()
            .next()
            .map_or(parity::Ceiling::D1, parity::Ceiling::of);
        let mut points: Vec<(usize, Option<usize>)> = climbs
            .filter_map(|f| Some((f.columns?, f.last_ok)))
            .collect();
        points.sort();
        (!points.is_empty()).then_some(Ceiling {
            title,
            points,
            allowed,
        })
    }

    /// The rows found, where a statement ran: the data.
    fn found(&self) -> Vec<(f64, f64)> {
        let ran = self.points.iter().filter_map(|&(c, rows)| Some((c, rows?)));
        ran.filter(|&(_, rows)| rows > 0)
            .map(|(c, rows)| (c as f64, rows as f64))
            .collect()
    }

    /// The target's floor(P / C) at each column count climbed: the reference.
    fn expected(&self) -> Vec<(f64, f64)> {
        let mut columns: Vec<usize> = self.points.iter().map(|&(c, _)| c).collect();
        columns.dedup();
        columns
            .into_iter()
            .map(|c| (c as f64, self.allowed.rows(c) as f64))
            .collect()
    }
}

/// The statements of a param-ceiling climb bind parameters: their marks are the bound strategy's.
const STRATEGY: Strategy = Strategy::Bound;

impl Ceiling {
    /// What the line chart draws: the rows found as markers of the bound strategy, over the
    /// target's floor(P / C) reference, on a log axis of rows.
    fn figure(&self) -> LineChart {
        let (found, expected) = (self.found(), self.expected());
        let xs = expected.iter().map(|p| p.0);
        let x_scale = scale_for(xs.clone());
        let (x_lo, x_hi) = extent(xs).unwrap_or((1.0, 1.0));
        let ys = found.iter().chain(&expected).map(|p| p.1);
        let (y_lo, y_hi) = extent(ys).unwrap_or((1.0, 1.0));
        let found = Line {
            stroke: Stroke::Markers,
            ..Line::solid(
                "found: the most rows that ran".to_owned(),
                strategy_color(STRATEGY),
                strategy_shape(STRATEGY),
                (found.into_iter())
                    .map(|(x, y)| Point { x, y, bar: None })
                    .collect(),
            )
        };
        LineChart {
            title: self.title.clone(),
            x_label: "columns per row (C)".to_owned(),
            y_label: "rows per bound statement".to_owned(),
            x_scale,
            x_range: range_for(x_lo, x_hi, x_scale),
            x_text: Default::default(),
            y_scale: Scale::Log,
            y_range: padded(y_lo, y_hi, Scale::Log),
            refusal_band: None,
            lines: vec![found],
            secondary_heading: None,
            reference: Some((
                expected,
                format!(
                    "{}: {}",
                    self.allowed.formula().replace('/', " / "),
                    self.allowed.limit()
                ),
            )),
            dodge: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_a_png_an_svg_and_a_pdf_only_for_param_ceiling() {
        let dir = tempfile::tempdir().unwrap();
        let sqlite = crate::base::TargetKind::Sqlite;
        assert!(
            param_ceiling(dir.path(), &[], sqlite, true)
                .unwrap()
                .is_none()
        );
        let findings: Vec<ClimbFinding> = (1..=100)
            .map(|c| ClimbFinding {
                ladder: LadderKind::ParamCeiling,
                target: crate::base::TargetKind::Sqlite,
                climb: c,
                held: format!("columns={c}"),
                columns: Some(c),
                unit: "rows per statement".into(),
                last_ok: Some(100 / c),
                first_failed: Some(100 / c + 1),
                max_tried: Some(128),
                outcome: Some(d1bench_core::Outcome::Refused),
                refusal: Some(d1bench_core::RefusalKind::TooManyVariables),
                error: "too many SQL variables".into(),
                statements_completed: Some(0),
                confirmed: Some(true),
                stopped: crate::studies::ladder::row::Stop::Refused,
                ok_outside_ms: None,
                ok_inside_ms: None,
                ok_d1_ms: None,
                rungs: 9,
                reconciled: true,
            })
            .collect();
        let drawn = param_ceiling(dir.path(), &findings, sqlite, true)
            .unwrap()
            .unwrap();
        let title = "Rows per bound statement, bare SQLite with D1 limits";
        assert!(
            drawn.caption.starts_with(&format!("{title}. ")),
            "{}",
            drawn.caption
        );
        let files = drawn.files;
        assert_eq!(
            files,
            ["png", "svg", "pdf"].map(|ext| dir.path().join(format!("param-ceiling.{ext}")))
        );
        // The figure every chart is: a paper column at 300 dpi, recorded in the PNG.
        let png = std::fs::read(&files[0]).unwrap();
        let reader = png::Decoder::new(png.as_slice()).read_info().unwrap();
        assert_eq!(reader.info().size(), (1050, 780));
        let dims = reader.info().pixel_dims.expect("a pHYs chunk");
        assert_eq!(
            (dims.xppu, dims.yppu, dims.unit),
            (11_811, 11_811, png::Unit::Meter)
        );
        let svg = std::fs::read_to_string(&files[1]).unwrap();
        assert!(svg.starts_with("<svg viewBox=") && !svg.contains("<text"));
        assert!(std::fs::read(&files[2]).unwrap().starts_with(b"%PDF-"));
        // What it says, in the drawing the files are made of.
        let chart = Ceiling::of(&findings, Some(title.to_owned())).unwrap();
        let svg = crate::charts::style::drawn_svg(&chart.figure()).unwrap();
        for text in [
            title,
            "floor(100 / C): the documented 100 parameters",
            "found: the most rows that ran",
            "columns per row (C)",
            "rows per bound statement",
        ] {
            assert!(svg.contains(text), "{text} not in the SVG");
        }
    }
}
