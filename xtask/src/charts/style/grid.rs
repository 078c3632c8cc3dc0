//! The frame of a chart of cells (the decision map): a table of categories on two axes, each
//! cell a few lines of text under an optional tint and marker, in the house fonts, with the
//! legend above like every other chart. Text carries every cell's answer, so the chart reads
//! the same in greyscale.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::*;

/// Text in a cell, largest first.
const CELL_FONT: Font = Font {
    points: 6.0,
    bold: false,
};
const CELL_BOLD_FONT: Font = Font {
    points: 6.0,
    bold: true,
};
const CELL_SMALL_FONT: Font = Font {
    points: 5.0,
    bold: false,
};
/// How much of a strategy's colour tints the cell it wins: a light wash, under black text.
const TINT: f64 = 0.22;

/// A line of a cell's text.
#[derive(Debug, Clone, PartialEq)]
pub enum CellLine {
    /// The answer, bold, after the marker of its strategy.
    Head(String),
    Plain(String),
    /// A note in smaller grey text (what refused).
    Note(String),
}

/// One cell: where it sits, its tint and marker, its lines.
#[derive(Debug, Clone, PartialEq)]
pub struct GridCell {
    /// Index into [`Grid::columns`] and [`Grid::rows`].
    pub column: usize,
    pub row: usize,
    /// The winner's colour and marker, if the cell has a winner.
    pub mark: Option<(RGBColor, Shape)>,
    pub lines: Vec<CellLine>,
}

/// The two category axes.
#[derive(Debug, Clone, PartialEq)]
pub struct Grid<'a> {
    pub x_label: &'a str,
    pub y_label: &'a str,
    /// Labels of the columns, left to right.
    pub columns: Vec<String>,
    /// Labels of the rows, bottom to top (the smallest value lowest, as on a value axis).
    pub rows: Vec<String>,
}

/// `font`, made smaller when `text` would be wider than `room` pixels (never below 4 pt):
/// a cell's text stays inside its cell.
fn fitted(pen: &Pen, text: &str, font: Font, room: f64) -> Font {
    let width = pen.width(text, font);
    if width <= room || width <= 0.0 {
        return font;
    }
    Font {
        points: (font.points * room / width).max(4.0),
        ..font
    }
}

/// `color` washed towards white by `1 - share`.
fn tint(color: RGBColor, share: f64) -> RGBColor {
    let mix = |c: u8| (255.0 - (255.0 - f64::from(c)) * share).round() as u8;
    RGBColor(mix(color.0), mix(color.1), mix(color.2))
}

/// Draws a grid chart on `root`: title and legend as [`draw_frame`] does, then the cells with
/// their axes' labels.
pub fn draw_grid<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    pen: &Pen,
    title: Option<&str>,
    legend: Vec<(Sample, String)>,
    grid: &Grid,
    cells: &[GridCell],
) -> Result<()> {
    root.fill(&WHITE).map_err(drawing_error)?;
    let (width, height) = root.dim_in_pixel();
    let (width, height) = (width as i32, height as i32);
    let margin = px(MARGIN_PT);
    let mut top = margin;
    if let Some(title) = title {
        let (title, font) = fitted_title(pen, title, f64::from(width - 2 * margin));
        pen.draw(
            root,
            &title,
            font,
            TEXT,
            (HPos::Center, VPos::Top),
            Direction::Right,
            (width / 2, margin),
        )?;
        top += px(font.points) + px(GAP_PT);
    }
    let legend = Legend::layout(pen, legend, width - 2 * margin);
    legend.draw(root, pen, width, top)?;
    top += legend.height() + px(GAP_PT);

    let tick_em = Pen::em(TICK_LABEL_FONT).ceil() as i32;
    let label_em = Pen::em(AXIS_LABEL_FONT).ceil() as i32;
    let row_label_width = grid
        .rows
        .iter()
        .map(|l| pen.width(l, TICK_LABEL_FONT))
        .fold(0.0, f64::max)
        .ceil() as i32;
    let left = margin + label_em + px(GAP_PT) + row_label_width + px(TICK_GAP_PT);
    let bottom = height - margin - label_em - px(GAP_PT) - tick_em - px(TICK_GAP_PT);
    let right = width - margin;
    let (n_columns, n_rows) = (
        grid.columns.len().max(1) as i32,
        grid.rows.len().max(1) as i32,
    );
    let cell_width = (right - left) / n_columns;
    let cell_height = (bottom - top) / n_rows;
    let cell_at = |column: usize, row: usize| {
        let x0 = left + column as i32 * cell_width;
        let y0 = bottom - (row as i32 + 1) * cell_height;
        (x0, y0)
    };

    for cell in cells {
        let (x0, y0) = cell_at(cell.column, cell.row);
        if let Some((color, _)) = cell.mark {
            root.draw(&Rectangle::new(
                [(x0, y0), (x0 + cell_width, y0 + cell_height)],
                tint(color, TINT).filled(),
            ))
            .map_err(drawing_error)?;
        }
        let line_height = |line: &CellLine| match line {
            CellLine::Note(_) => Pen::em(CELL_SMALL_FONT) * 1.15,
            _ => Pen::em(CELL_FONT) * 1.2,
        };
        let total: f64 = cell.lines.iter().map(line_height).sum();
        let mut y = f64::from(y0) + (f64::from(cell_height) - total) / 2.0;
        let cx = x0 + cell_width / 2;
        let room = f64::from(cell_width - 2 * px(GAP_PT));
        for line in &cell.lines {
            let (text, font, color) = match line {
                CellLine::Head(text) => (text, CELL_BOLD_FONT, TEXT),
                CellLine::Plain(text) => (text, CELL_FONT, TEXT),
                CellLine::Note(text) => (text, CELL_SMALL_FONT, MUTED),
            };
            let lead = match (line, cell.mark) {
                (CellLine::Head(_), Some(_)) => px(MARKER_PT * 2.0 + 1.5),
                _ => 0,
            };
            let font = fitted(pen, text, font, room - f64::from(lead));
            let mut x = cx;
            if let (CellLine::Head(_), Some((color, shape))) = (line, cell.mark) {
                // The marker before the name: its width and a little air, the pair centred.
                let text_width = pen.width(text, font) as i32;
                let start = cx - (lead + text_width) / 2;
                let centre = (start + px(MARKER_PT), (y + Pen::em(font) * 0.55) as i32);
                root.draw(
                    &(EmptyElement::at(centre)
                        + Polygon::new(marker(shape, (0, 0)), color.filled())),
                )
                .map_err(drawing_error)?;
                x = start + lead + text_width / 2;
            }
            pen.draw(
                root,
                text,
                font,
                color,
                (HPos::Center, VPos::Top),
                Direction::Right,
                (x, y.round() as i32),
            )?;
            y += line_height(line);
        }
    }

    // The cell borders, over the tints.
    let border = stroke(AXIS_LINE, THIN_PT);
    for column in 0..=n_columns {
        let x = left + column * cell_width;
        draw_line(
            root,
            vec![(x, top), (x, top + n_rows * cell_height)],
            border,
            false,
        )?;
    }
    for row in 0..=n_rows {
        let y = bottom - row * cell_height;
        draw_line(
            root,
            vec![(left, y), (left + n_columns * cell_width, y)],
            border,
            false,
        )?;
    }

    // Category labels, then the axis labels.
    for (column, label) in grid.columns.iter().enumerate() {
        let x = left + column as i32 * cell_width + cell_width / 2;
        pen.draw(
            root,
            label,
            TICK_LABEL_FONT,
            TEXT,
            (HPos::Center, VPos::Top),
            Direction::Right,
            (x, bottom + px(TICK_GAP_PT)),
        )?;
    }
    for (row, label) in grid.rows.iter().enumerate() {
        let y = bottom - row as i32 * cell_height - cell_height / 2;
        pen.draw(
            root,
            label,
            TICK_LABEL_FONT,
            TEXT,
            (HPos::Right, VPos::Center),
            Direction::Right,
            (left - px(TICK_GAP_PT), y),
        )?;
    }
    pen.draw(
        root,
        grid.x_label,
        AXIS_LABEL_FONT,
        TEXT,
        (HPos::Center, VPos::Bottom),
        Direction::Right,
        ((left + right) / 2, height - margin),
    )?;
    pen.draw(
        root,
        grid.y_label,
        AXIS_LABEL_FONT,
        TEXT,
        (HPos::Center, VPos::Top),
        Direction::Up,
        (margin, (top + bottom) / 2),
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tint_keeps_its_hue_and_lightens() {
        assert_eq!(tint(RGBColor(0, 0, 0), 0.0), RGBColor(255, 255, 255));
        assert_eq!(tint(RGBColor(0, 100, 200), 1.0), RGBColor(0, 100, 200));
        let light = tint(RGBColor(0x00, 0x72, 0xb2), TINT);
        assert!(light.0 > 190 && light.1 > 190 && light.2 > 190, "{light:?}");
    }
}
