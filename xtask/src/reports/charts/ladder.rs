//! The param-ceiling chart: rows per bound statement found at each column count, against the
//! floor(100 / C) the documented 100-parameter limit predicts; PNG (1050×780) and SVG.

use std::path::{Path, PathBuf};
use std::sync::Once;

use anyhow::{Result, anyhow};
use d1bench_core::ladder::LadderKind;
use d1bench_core::limits::bound_rows_per_statement;
use plotters::coord::Shift;
use plotters::prelude::*;

use crate::records::Finding;

const SIZE: (u32, u32) = (1050, 780);
const FONT: &str = "sans-serif";

fn register_fonts() {
    static FONTS: Once = Once::new();
    FONTS.call_once(|| {
        // The embedded DejaVu Sans is valid TrueType; a failure here would be a broken crate.
        let _ = plotters::style::register_font(FONT, FontStyle::Normal, dejavu::sans::regular());
    });
}

/// Draws `param-ceiling.{png,svg}` into `dir` when `findings` hold param-ceiling climbs.
pub fn param_ceiling(dir: &Path, findings: &[Finding], title: &str) -> Result<Vec<PathBuf>> {
    let points: Vec<(usize, Option<usize>)> = findings
        .iter()
        .filter(|f| f.ladder == LadderKind::ParamCeiling)
        .filter_map(|f| Some((f.columns?, f.last_ok)))
        .collect();
    if points.is_empty() {
        return Ok(Vec::new());
    }
    register_fonts();
    let png = dir.join("param-ceiling.png");
    let svg = dir.join("param-ceiling.svg");
    {
        let root = BitMapBackend::new(&png, SIZE).into_drawing_area();
        draw(&root, &points, title)?;
        root.present().map_err(drawing_error)?;
    }
    {
        let root = SVGBackend::new(&svg, SIZE).into_drawing_area();
        draw(&root, &points, title)?;
        root.present().map_err(drawing_error)?;
    }
    Ok(vec![png, svg])
}

fn drawing_error(e: impl std::fmt::Display) -> anyhow::Error {
    anyhow!("cannot draw the param-ceiling chart: {e}")
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    points: &[(usize, Option<usize>)],
    title: &str,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(drawing_error)?;
    let max_c = points.iter().map(|p| p.0).max().unwrap_or(1).max(2);
    let max_rows = points
        .iter()
        .filter_map(|p| p.1)
        .chain(points.iter().map(|p| bound_rows_per_statement(p.0)))
        .max()
        .unwrap_or(1)
        .max(2);
    let mut chart = ChartBuilder::on(root)
        .caption(format!("parameter ceiling: {title}"), (FONT, 26))
        .margin(24)
        .x_label_area_size(60)
        .y_label_area_size(80)
        .build_cartesian_2d(
            0.8f64..(max_c as f64 * 1.05),
            (0.8f64..(max_rows as f64 * 1.3)).log_scale(),
        )
        .map_err(drawing_error)?;
    chart
        .configure_mesh()
        .x_desc("columns per row (C)")
        .y_desc("rows per bound statement")
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| format!("{y:.0}"))
        .label_style((FONT, 20))
        .axis_desc_style((FONT, 22))
        .draw()
        .map_err(drawing_error)?;
    let blue = RGBColor(0, 114, 178);
    let orange = RGBColor(213, 94, 0);
    let mut expected: Vec<(f64, f64)> = points
        .iter()
        .map(|&(c, _)| (c as f64, bound_rows_per_statement(c) as f64))
        .collect();
    expected.sort_by(|a, b| a.0.total_cmp(&b.0));
    chart
        .draw_series(LineSeries::new(expected, blue.stroke_width(3)))
        .map_err(drawing_error)?
        .label("floor(100 / C): the documented 100 parameters")
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], blue.stroke_width(3)));
    chart
        .draw_series(points.iter().filter_map(|&(c, rows)| {
            Some(Circle::new((c as f64, rows? as f64), 5, orange.filled()))
        }))
        .map_err(drawing_error)?
        .label("found: the most rows that ran")
        .legend(move |(x, y)| Circle::new((x + 12, y), 5, orange.filled()));
    chart
        .configure_series_labels()
        .label_font((FONT, 20))
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(drawing_error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_a_png_and_an_svg_only_for_param_ceiling() {
        let dir = tempfile::tempdir().unwrap();
        assert!(param_ceiling(dir.path(), &[], "t").unwrap().is_empty());
        let findings: Vec<Finding> = (1..=100)
            .map(|c| Finding {
                ladder: LadderKind::ParamCeiling,
                target: crate::flags::TargetKind::Sqlite,
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
                stopped: "refused".into(),
                ok_outside_ms: None,
                ok_inside_ms: None,
                ok_d1_ms: None,
                rungs: 9,
                reconciled: true,
            })
            .collect();
        let files = param_ceiling(dir.path(), &findings, "test").unwrap();
        let png = std::fs::read(&files[0]).unwrap();
        assert!(png.starts_with(b"\x89PNG\r\n\x1a\n") && png.len() > 10_000);
        let svg = std::fs::read_to_string(&files[1]).unwrap();
        assert!(svg.contains("<svg") && svg.contains("floor(100 / C)"));
    }
}
