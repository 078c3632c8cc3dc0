//! The decision map chart of a grid run: one cell per (x, y) of the grid naming what it decides
//! (the fastest strategy, its marker and its colour as a light tint; `a = b ±10%` for a set shown
//! equivalent; `a/b?` when undecided, with the sessions a decision would need), its margin over
//! the runner-up with the interval, and the strategies a limit stopped there with that limit;
//! one panel per target, the run's beside its baseline's. Every answer is written in the cell,
//! so it reads in greyscale.

use std::path::PathBuf;

use anyhow::{Result, ensure};
use plotters::coord::Shift;
use plotters::prelude::*;

use super::decision::{Cell, Stopped};
use super::decision_table::Map;
use super::verdict::Verdict;
use crate::charts::style::{
    CellLine, FIGURE, Figure, Grid, GridCell, Pen, Sample, draw_grid, drawing_error,
    strategy_color, strategy_shape, write,
};
use crate::reports::charts::{Drawn, measured_on};
use crate::studies::sweep::Axis;
use d1bench_core::Strategy;

/// File stem of the chart.
pub const NAME: &str = "decision-map";

/// One target's map as drawn.
struct Panel {
    title: String,
    x_label: &'static str,
    y_label: &'static str,
    columns: Vec<String>,
    rows: Vec<String>,
    cells: Vec<GridCell>,
    legend: Vec<(Sample, String)>,
}

/// The panels side by side, at most [`PANELS_A_ROW`] a row.
struct Chart {
    panels: Vec<Panel>,
    draw_title: bool,
}

/// Panels a row: a third target's map goes under the first two, so a map of 10 column counts
/// stays readable at the README's width instead of three panels 6,000 pixels wide.
const PANELS_A_ROW: usize = 2;

impl Chart {
    /// Rows and columns of panels.
    fn layout(&self) -> (usize, usize) {
        let n = self.panels.len().max(1);
        let columns = n.min(PANELS_A_ROW);
        (n.div_ceil(columns), columns)
    }
}

impl Figure for Chart {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>, pen: &Pen) -> Result<()> {
        let (rows, columns) = self.layout();
        if self.panels.len() < rows * columns {
            // An empty place (three panels two a row) shows the page there, not black.
            root.fill(&WHITE).map_err(drawing_error)?;
        }
        let areas = root.split_evenly((rows, columns));
        for (panel, area) in self.panels.iter().zip(&areas) {
            let grid = Grid {
                x_label: panel.x_label,
                y_label: panel.y_label,
                columns: panel.columns.clone(),
                rows: panel.rows.clone(),
            };
            // Side by side, each panel names its target whether or not titles are drawn.
            let title = (self.draw_title || self.panels.len() > 1).then_some(panel.title.as_str());
            draw_grid(area, pen, title, panel.legend.clone(), &grid, &panel.cells)?;
        }
        Ok(())
    }

    /// A panel of the figure's size holds 5 columns and 4 row sizes legibly; a larger grid
    /// widens (and heightens) its panels in proportion, so its cells keep their text's size.
    fn size(&self) -> (u32, u32) {
        let (width, height) = FIGURE;
        let most = |of: fn(&Panel) -> usize, fits: usize| {
            let n = self.panels.iter().map(of).max().unwrap_or(0);
            n.max(fits) as f64 / fits as f64
        };
        let (wide, tall) = (most(|p| p.columns.len(), 5), most(|p| p.rows.len(), 4));
        let (rows, columns) = self.layout();
        (
            (f64::from(width) * wide).round() as u32 * columns as u32,
            (f64::from(height) * tall).round() as u32 * rows as u32,
        )
    }
}

/// A strategy's name short enough for a cell.
fn short(strategy: Strategy) -> &'static str {
    match strategy {
        Strategy::BatchedRows => "batched",
        other => other.name(),
    }
}

/// `1,000` bytes as a row label: `1k`, `100k`, `2M`.
fn compact(axis: Axis, value: f64) -> String {
    match axis {
        Axis::RowBytes if value >= 1_000_000.0 && value % 1_000_000.0 == 0.0 => {
            format!("{}M", value / 1_000_000.0)
        }
        Axis::RowBytes if value >= 1_000.0 && value % 1_000.0 == 0.0 => {
            format!("{}k", value / 1_000.0)
        }
        _ => axis.format(value),
    }
}

/// The lines of one cell: the answer, its margin, what stopped others.
fn lines(cell: &Cell) -> Vec<CellLine> {
    let mut lines = Vec::new();
    match (cell.fastest(), cell.runner_up(), cell.margin) {
        (None, _, _) => lines.push(CellLine::Plain("nothing ran".into())),
        (Some(a), Some(b), Some(m)) => {
            lines.push(CellLine::Head(match &cell.verdict {
                Verdict::Equivalent { set, .. } => {
                    let names: Vec<&str> = set.iter().map(|s| short(*s)).collect();
                    names.join(" = ")
                }
                Verdict::Undecided { .. } => format!("{}/{}?", short(a), short(b)),
                _ => short(a).into(),
            }));
            lines.push(CellLine::Plain(format!("×{:.2} vs {}", m.median, short(b))));
            match m.ci {
                Some(ci) => lines.push(CellLine::Plain(format!("{:.2}–{:.2}", ci.low, ci.high))),
                None => lines.push(CellLine::Note("n=1, no interval".into())),
            }
            match &cell.verdict {
                Verdict::Equivalent { .. } => lines.push(CellLine::Note(
                    cell.verdict.note().trim_start_matches(": ").into(),
                )),
                Verdict::Undecided {
                    needed: Some((n, unit)),
                    ..
                } => lines.push(CellLine::Note(format!("needs ~{n} {}", unit.plural()))),
                _ => {}
            }
        }
        (Some(a), _, _) => lines.push(CellLine::Head(short(a).into())),
    }
    // Stopped strategies grouped by limit: `✕ literal, exec` then `statement length`.
    let mut by_limit: Vec<(&'static str, Vec<&'static str>)> = Vec::new();
    for (strategy, stopped) in &cell.stopped {
        let limit = stopped.limit();
        let name = short(*strategy);
        match by_limit.iter_mut().find(|(l, _)| *l == limit) {
            Some((_, names)) => names.push(name),
            None => by_limit.push((limit, vec![name])),
        }
    }
    for (limit, names) in by_limit {
        lines.push(CellLine::Note(format!("✕ {}", names.join(", "))));
        lines.push(CellLine::Note(format!("({limit})")));
    }
    lines
}

/// One target's panel.
fn panel(map: &Map, x_axis: Axis, y_axis: Axis) -> Panel {
    let cells = &map.cells;
    let mut xs: Vec<f64> = cells.iter().map(|c| c.x).collect();
    let mut ys: Vec<f64> = cells.iter().map(|c| c.y).collect();
    for values in [&mut xs, &mut ys] {
        values.sort_by(f64::total_cmp);
        values.dedup();
    }
    let mut winners: Vec<Strategy> = cells.iter().filter_map(Cell::fastest).collect();
    winners.sort_by_key(|s| Strategy::REPORT_ORDER.iter().position(|o| o == s));
    winners.dedup();
    let legend = winners
        .iter()
        .map(|&s| {
            (
                Sample::Marker {
                    color: strategy_color(s),
                    shape: strategy_shape(s),
                },
                s.to_string(),
            )
        })
        .collect();
    let grid_cells = cells
        .iter()
        .map(|cell| GridCell {
            column: xs.iter().position(|x| *x == cell.x).unwrap_or(0),
            row: ys.iter().position(|y| *y == cell.y).unwrap_or(0),
            mark: cell
                .fastest()
                .map(|s| (strategy_color(s), strategy_shape(s))),
            lines: lines(cell),
        })
        .collect();
    let (decided, all) = map.decided();
    Panel {
        title: format!(
            "{}: {decided} of {all} cells decided",
            measured_on(map.target)
        ),
        x_label: x_axis.label(),
        y_label: y_axis.label(),
        columns: xs.iter().map(|x| compact(x_axis, *x)).collect(),
        rows: ys.iter().map(|y| compact(y_axis, *y)).collect(),
        cells: grid_cells,
        legend,
    }
}

/// Draws the decision maps of `maps` (the run's target, then its baseline's) into `dir`, side
/// by side.
pub fn render(
    dir: &std::path::Path,
    maps: &[Map],
    x_axis: Axis,
    y_axis: Axis,
    titles: bool,
) -> Result<Drawn> {
    ensure!(
        maps.iter().any(|m| !m.cells.is_empty()),
        "no cell to draw in {}",
        dir.display()
    );
    let chart = Chart {
        panels: maps
            .iter()
            .filter(|m| !m.cells.is_empty())
            .map(|m| panel(m, x_axis, y_axis))
            .collect(),
        draw_title: titles,
    };
    let path = |extension: &str| -> PathBuf { dir.join(format!("{NAME}.{extension}")) };
    let files = write(&chart, path)?;
    let cells: Vec<Cell> = maps.iter().flat_map(|m| m.cells.iter().cloned()).collect();
    let any =
        |kind: fn(&Stopped) -> bool| cells.iter().any(|c| c.stopped.iter().any(|(_, s)| kind(s)));
    let by_construction = any(|s| matches!(s, Stopped::ByConstruction(_)));
    let left_out = any(|s| matches!(s, Stopped::LeftOut));
    let on: Vec<&str> = maps.iter().map(|m| m.target.prose()).collect();
    let title = format!(
        "What each cell decides, on {}: the fastest, an equivalent set, or undecided",
        on.join(" and ")
    );
    let caption = format!(
        "{title}. Each cell names the fastest strategy by the paired comparison of repeats \
         (time per 1,000 rows, outside clock less the target's preparation) when its margin's \
         interval excludes 1; `a = b` when two one-sided tests show them within ±10%; `a/b?` \
         when neither, with the units a decision would need. Then ×r vs the runner-up: its time \
         over the fastest's, with its interval under it ({}; {}). ✕ lists the strategies that \
         were refused there{}, with the limit that stopped them{}.",
        super::decision::basis(&cells).named(),
        super::verdict::CORRECTION,
        if by_construction {
            " or that cannot run there by construction (one row is past a documented limit of \
             the target's engine, so the experiment leaves them out)"
        } else {
            ""
        },
        if left_out {
            "; `not in the grid` marks those the experiment left out where no limit of the \
             target's engine stops them"
        } else {
            ""
        }
    );
    Ok(Drawn {
        name: NAME.into(),
        caption,
        files,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::TargetKind;
    use crate::charts::style::drawn_svg;
    use crate::stats::Summary;
    use d1bench_core::RefusalKind;

    #[test]
    fn the_map_writes_each_answer_in_its_cell() {
        let summary = |v: &[f64]| Summary::of(v).unwrap();
        let cell = |x, y, ranked: Vec<(Strategy, Summary)>, margin, stopped| {
            let mut cell = Cell {
                x,
                y,
                ranked,
                margin,
                stopped,
                evidence: Vec::new(),
                verdict: Verdict::NothingRan,
            };
            cell.verdict = match cell.runner_up() {
                Some(r) => Verdict::Winner {
                    fastest: cell.fastest().unwrap(),
                    runner_up: r,
                },
                None => Verdict::Only(cell.fastest().unwrap()),
            };
            cell
        };
        let cells = vec![
            cell(
                8.0,
                1_000.0,
                vec![
                    (Strategy::Json, summary(&[10.0, 11.0, 12.0, 13.0, 14.0])),
                    (Strategy::Literal, summary(&[20.0, 21.0, 22.0, 23.0, 24.0])),
                ],
                Some(summary(&[1.8, 1.9, 2.0, 2.1, 2.2])),
                vec![],
            ),
            cell(
                8.0,
                200_000.0,
                vec![(Strategy::Bound, summary(&[50.0]))],
                None,
                vec![(
                    Strategy::Literal,
                    Stopped::Refused(RefusalKind::StatementTooLong),
                )],
            ),
        ];
        let dir = tempfile::tempdir().unwrap();
        let maps = [Map {
            target: TargetKind::Local,
            cells: cells.clone(),
            labels: Vec::new(),
        }];
        let drawn = render(dir.path(), &maps, Axis::Columns, Axis::RowBytes, false).unwrap();
        assert_eq!(drawn.files.len(), 3);
        for file in &drawn.files {
            assert!(std::fs::metadata(file).unwrap().len() > 1_000, "{file:?}");
        }
        let chart = Chart {
            panels: vec![Panel {
                title: String::new(),
                x_label: "columns per row",
                y_label: "row size (bytes)",
                columns: vec!["8".into()],
                rows: vec!["1k".into(), "200k".into()],
                cells: cells
                    .iter()
                    .enumerate()
                    .map(|(row, c)| GridCell {
                        column: 0,
                        row,
                        mark: c.fastest().map(|s| (strategy_color(s), strategy_shape(s))),
                        lines: lines(c),
                    })
                    .collect(),
                legend: vec![],
            }],
            draw_title: false,
        };
        let svg = drawn_svg(&chart).unwrap();
        for text in [
            "json",
            "×2.00 vs literal",
            "1.80–2.20",
            "bound",
            "✕ literal",
            "(statement length)",
            "200k",
        ] {
            assert!(svg.contains(text), "no `{text}` in the map");
        }
    }
}
