//! A chart's three files, all from one drawing: the PNG, drawn in memory and encoded once with
//! its print resolution; the SVG, drawn by plotters and rewritten by usvg with its text as
//! outlines of the embedded DejaVu Sans, so it looks the same in every viewer without carrying
//! a font; and the PDF, converted from the same SVG by svg2pdf with the font embedded (subset)
//! and its text selectable, for papers.

use std::fmt;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use anyhow::{Context, Result, anyhow};
use plotters::coord::Shift;
use plotters::prelude::*;

use super::*;

/// What a chart is drawn on: a bitmap for the PNG, or SVG, from which the SVG and PDF files
/// are made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Format {
    Png,
    Svg,
}

/// A chart that can draw itself on any plotters backend, its text set with `pen`.
pub trait Figure {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>, pen: &Pen) -> Result<()>;

    /// Its size in pixels: [`FIGURE`] unless it holds several panels side by side.
    fn size(&self) -> (u32, u32) {
        FIGURE
    }
}

/// Writes `figure` as PNG, SVG and PDF, each to the path `path` gives for its extension; returns
/// the paths written.
pub fn write(figure: &impl Figure, path: impl Fn(&str) -> PathBuf) -> Result<Vec<PathBuf>> {
    let save = |extension: &str, bytes: &dyn Fn() -> Result<Vec<u8>>| -> Result<PathBuf> {
        let path = path(extension);
        let bytes = bytes().with_context(|| format!("cannot draw {}", path.display()))?;
        std::fs::write(&path, bytes).with_context(|| format!("cannot write {}", path.display()))?;
        Ok(path)
    };
    let fonts = fonts()?;
    // The SVG and the PDF are one drawing, read once, so the two cannot differ.
    let tree = drawn_svg(figure)
        .and_then(|svg| usvg_tree(&svg))
        .with_context(|| format!("cannot draw {}", path("svg").display()))?;
    Ok(vec![
        save("png", &|| {
            draw_png(
                figure,
                &Pen {
                    format: Format::Png,
                    fonts,
                },
            )
        })?,
        save("svg", &|| Ok(outlined(&tree)))?,
        save("pdf", &|| pdf(&tree))?,
    ])
}

/// `figure` as a PNG file's bytes.
fn draw_png(figure: &impl Figure, pen: &Pen) -> Result<Vec<u8>> {
    let size = figure.size();
    let (width, height) = size;
    let mut rgb = vec![0; width as usize * height as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, size).into_drawing_area();
        figure.draw(&root, pen)?;
        root.present().map_err(drawing_error)?;
    }
    encode_png(&rgb, size, DPI)
}

/// `figure` as plotters draws it in SVG: text as `<text>` naming [`FONT`], which the files made
/// from it ([`outlined`], [`pdf`]) take from the embedded font. What the chart says, for tests.
pub fn drawn_svg(figure: &impl Figure) -> Result<String> {
    let pen = Pen {
        format: Format::Svg,
        fonts: fonts()?,
    };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, figure.size()).into_drawing_area();
        figure.draw(&root, &pen)?;
        root.present().map_err(drawing_error)?;
    }
    Ok(svg)
}

/// `svg` read by usvg, its text shaped with DejaVu Sans from the `dejavu` crate's bytes (the only
/// font it sees, so no machine's fonts change the chart).
fn usvg_tree(svg: &str) -> Result<usvg::Tree> {
    static FONTS: OnceLock<Arc<usvg::fontdb::Database>> = OnceLock::new();
    let fontdb = FONTS.get_or_init(|| {
        let mut database = usvg::fontdb::Database::new();
        database.load_font_data(dejavu::sans::regular().to_vec());
        database.load_font_data(dejavu::sans::bold().to_vec());
        Arc::new(database)
    });
    let options = usvg::Options {
        font_family: FONT.to_owned(),
        fontdb: Arc::clone(fontdb),
        ..usvg::Options::default()
    };
    usvg::Tree::from_str(svg, &options).context("usvg cannot read the chart's SVG")
}

/// The SVG file: `tree` written back by usvg, its text as outlines (paths), coordinates to a
/// hundredth of a pixel, with a `viewBox` so it scales wherever it is placed. Some 50 to 100 KB,
/// against 1 to 2 MB for plotters' SVG carrying the font it names.
fn outlined(tree: &usvg::Tree) -> Vec<u8> {
    let options = usvg::WriteOptions {
        coordinates_precision: 2,
        transforms_precision: 2,
        indent: usvg::Indent::None,
        ..usvg::WriteOptions::default()
    };
    let svg = tree.to_string(&options);
    let size = tree.size();
    let view_box = format!(r#"<svg viewBox="0 0 {} {}""#, size.width(), size.height());
    svg.replacen("<svg", &view_box, 1).into_bytes()
}

/// The PDF file: `tree` on one page of the figure's printed size ([`FIGURE`] at [`DPI`]), lines as
/// vectors, text set in DejaVu Sans embedded as a subset (selectable, searchable).
fn pdf(tree: &usvg::Tree) -> Result<Vec<u8>> {
    let page = svg2pdf::PageOptions { dpi: DPI as f32 };
    svg2pdf::to_pdf(tree, svg2pdf::ConversionOptions::default(), page)
        .map_err(|e| anyhow!("svg2pdf cannot convert the chart's SVG: {e}"))
}

/// plotters' errors carry the backend's error type, which anyhow cannot always hold.
pub fn drawing_error(error: impl fmt::Display) -> anyhow::Error {
    anyhow!("drawing failed: {error}")
}

/// `rgb` (8-bit RGB, rows top to bottom) as a PNG of `size` pixels, its resolution `dpi`
/// recorded (`pHYs`) so that LaTeX and word processors place it at its printed size.
pub(super) fn encode_png(rgb: &[u8], (width, height): (u32, u32), dpi: f64) -> Result<Vec<u8>> {
    let mut png = Vec::new();
    let mut encoder = png::Encoder::new(&mut png, width, height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    // Paeth predicts flat colour and antialiased edges best, and the encoder's default level
    // (its own default is its fastest): these charts come out at half of what the png crate's
    // defaults or plotters' encoder wrote.
    encoder.set_filter(png::FilterType::Paeth);
    encoder.set_compression(png::Compression::Default);
    let per_metre = (dpi / 0.0254).round() as u32;
    encoder.set_pixel_dims(Some(png::PixelDimensions {
        xppu: per_metre,
        yppu: per_metre,
        unit: png::Unit::Meter,
    }));
    let mut writer = encoder.write_header().context("cannot encode the PNG")?;
    writer
        .write_image_data(rgb)
        .context("cannot encode the PNG")?;
    writer.finish().context("cannot encode the PNG")?;
    Ok(png)
}
