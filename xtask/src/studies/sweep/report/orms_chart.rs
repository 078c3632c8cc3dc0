//! The libraries' figure of an ORM run: each library ÷ the fastest strategy beside it against the
//! swept axis, one line per library and idiom (documented solid, json-each dashed), each point
//! with its interval over sessions ([`super::orms::library_points`]); a dashed grey line at 1 (as
//! fast as the fastest strategy); a cross in a band above the data where no probe of the library
//! wrote the rows (Prisma's own 98 bound values refuse 99 and 100 columns). Drawn by the one line
//! chart ([`crate::charts::line`]) into the run's directory as PNG, SVG and PDF.

use anyhow::Result;

use super::orms::{LibraryPoint, library_points};
use crate::base::orm::{Idiom, OrmWrite};
use crate::charts::line::{Line, LineChart, Point, Stroke, x_range_of};
use crate::charts::style::{Scale, library_style, scale_for, write};
use crate::records::RunDir;
use crate::reports::charts::Drawn;
use crate::studies::sweep::Axis;
use crate::studies::sweep::row::ProbeRow;

/// Share of the y axis given to the band of refused points above the data.
const REFUSAL_BAND: f64 = 0.15;

/// The figure's file stem along `axis`: `orm-vs-best-vs-columns`.
pub fn name(axis: Axis) -> String {
    format!("orm-vs-best-vs-{}", axis.name())
}

/// The line of one library and idiom (and series label) over its points.
fn line(write: OrmWrite, label: &str, points: &[&LibraryPoint]) -> Line {
    let (color, shape) = library_style(write.orm);
    let mut line = Line::solid(
        if label.is_empty() {
            write.to_string()
        } else {
            format!("{write}, {label}")
        },
        color,
        shape,
        (points.iter())
            .filter_map(|p| {
                let ratio = p.ratio?;
                Some(Point {
                    x: p.x,
                    y: ratio.median,
                    bar: ratio.ci.map(|ci| (ci.low, ci.high)),
                })
            })
            .collect(),
    );
    if write.idiom != Idiom::Documented {
        line.stroke = Stroke::Dashed;
    }
    line.refused = (points.iter())
        .filter(|p| p.rows_per_statement.is_none())
        .map(|p| p.x)
        .collect();
    line
}

/// What the line chart draws of `points`; `None` when no library has a ratio.
pub fn chart(points: &[LibraryPoint], axis: Axis, title: bool) -> Option<LineChart> {
    let mut lines = Vec::new();
    let mut keys: Vec<(OrmWrite, &str)> = Vec::new();
    for p in points {
        if !keys.contains(&(p.write, p.label.as_str())) {
            keys.push((p.write, p.label.as_str()));
        }
    }
    for (write, label) in keys {
        let own: Vec<&LibraryPoint> = (points.iter())
            .filter(|p| p.write == write && p.label == label)
            .collect();
        lines.push(line(write, label, &own));
    }
    let ys: Vec<f64> = (lines.iter())
        .flat_map(|l| &l.points)
        .flat_map(|p| [Some(p.y), p.bar.map(|b| b.0), p.bar.map(|b| b.1)])
        .flatten()
        .chain([1.0])
        .filter(|y| y.is_finite() && *y > 0.0)
        .collect();
    if lines.iter().all(|l| l.points.is_empty()) {
        return None;
    }
    let y_scale = scale_for(ys.iter().copied());
    let (lo, hi) = crate::charts::style::extent(ys.iter().copied())?;
    let (y_lo, y_hi) = crate::charts::style::range_for(lo, hi, y_scale);
    let refused = lines.iter().any(|l| !l.refused.is_empty());
    let share = REFUSAL_BAND / (1.0 - REFUSAL_BAND);
    let top = match (refused, y_scale) {
        (false, _) => y_hi,
        (true, Scale::Log) => y_hi * (y_hi / y_lo).powf(share),
        (true, Scale::Linear) => y_hi + (y_hi - y_lo) * share,
    };
    let x_scale = scale_for(points.iter().map(|p| p.x));
    let mut x_range = x_range_of(&lines, x_scale);
    for x in lines.iter().flat_map(|l| &l.refused) {
        x_range = (x_range.0.min(*x), x_range.1.max(*x));
    }
    Some(LineChart {
        title: title.then(|| title_of(axis)),
        x_label: axis.label().to_owned(),
        y_label: "library ÷ fastest strategy".to_owned(),
        x_scale,
        x_range,
        x_text: Default::default(),
        y_scale,
        y_range: (y_lo, top),
        refusal_band: refused.then_some((y_hi, top)),
        lines,
        secondary_heading: None,
        reference: Some((
            vec![(x_range.0, 1.0), (x_range.1, 1.0)],
            "as fast as the fastest strategy".to_owned(),
        )),
        dodge: true,
    })
}

fn title_of(axis: Axis) -> String {
    format!("Library ÷ fastest strategy against {}", axis.label())
}

/// Draws the figure of the run's libraries into its directory; `None` when it measured none.
pub fn render(run: &RunDir, rows: &[ProbeRow], axis: Axis, titles: bool) -> Result<Option<Drawn>> {
    let Some(chart) = chart(&library_points(rows, axis), axis, titles) else {
        return Ok(None);
    };
    let name = name(axis);
    let files = write(&chart, |extension| run.chart(&name, extension))?;
    Ok(Some(Drawn {
        caption: format!(
            "{}. Each library's ms per 1,000 rows ÷ the fastest of the six strategies at the \
             same point, paired repeat by repeat; the geometric mean over sessions with its 95% \
             interval (Student's t over sessions). Solid: the library's documented bulk insert; \
             dashed: its json-each idiom; dashed grey: 1, as fast as the fastest strategy; \
             crosses: no probe of the library wrote the rows.",
            title_of(axis)
        ),
        name,
        files,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::studies::sweep::report::orms::tests::smoke_rows;

    #[test]
    fn one_line_per_library_and_idiom_with_prismas_refusal_in_the_band() {
        let rows = smoke_rows();
        let chart = chart(&library_points(&rows, Axis::Columns), Axis::Columns, false).unwrap();
        let labels: Vec<&str> = chart.lines.iter().map(|l| l.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "drizzle",
                "drizzle json-each",
                "prisma",
                "prisma json-each",
                "kysely",
                "kysely json-each"
            ]
        );
        let dashed = |l: &Line| l.stroke == Stroke::Dashed;
        assert!(chart.lines.iter().step_by(2).all(|l| !dashed(l)));
        assert!(chart.lines.iter().skip(1).step_by(2).all(dashed));
        assert_eq!(chart.lines[2].refused, [100.0]);
        assert_eq!(chart.lines[2].points.len(), 2);
        let band = chart.refusal_band.unwrap();
        assert!(chart.y_range.0 < 1.0 && band.0 > 1.0);
        assert_eq!(chart.title, None);
    }

    #[test]
    fn the_figure_is_written_into_the_run_and_a_run_without_libraries_has_none() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::new(dir.path().to_owned());
        let drawn = render(&run, &smoke_rows(), Axis::Columns, false)
            .unwrap()
            .unwrap();
        assert_eq!(drawn.name, "orm-vs-best-vs-columns");
        for extension in ["png", "svg", "pdf"] {
            assert!(run.chart(&drawn.name, extension).is_file(), "{extension}");
        }
        let strategies: Vec<ProbeRow> = (smoke_rows().into_iter())
            .filter(|r| r.orm.is_none())
            .collect();
        assert!(
            render(&run, &strategies, Axis::Columns, false)
                .unwrap()
                .is_none()
        );
    }
}
