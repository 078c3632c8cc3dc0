//! A chart's two files: the PNG, drawn in memory and encoded once with its print resolution,
//! and the SVG, carrying its font so it renders the same in every viewer.

use std::fmt;
use std::path::PathBuf;

use anyhow::{Context, Result, anyhow};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::*;

/// A file format every chart is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Format {
    Png,
    Svg,
}

impl Format {
    pub(super) fn extension(self) -> &'static str {
        match self {
            Format::Png => "png",
            Format::Svg => "svg",
        }
    }
}

/// A chart that can draw itself on any plotters backend, its text set with `pen`.
pub trait Figure {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>, pen: &Pen) -> Result<()>;
}

/// Writes `figure` as PNG and as SVG, each to the path `path` gives for its extension; returns
/// the paths written.
pub fn write(figure: &impl Figure, path: impl Fn(&str) -> PathBuf) -> Result<Vec<PathBuf>> {
    let fonts = fonts()?;
    [Format::Png, Format::Svg]
        .into_iter()
        .map(|format| {
            let path = path(format.extension());
            let pen = Pen { format, fonts };
            let bytes =
                render(figure, &pen).with_context(|| format!("cannot draw {}", path.display()))?;
            std::fs::write(&path, bytes)
                .with_context(|| format!("cannot write {}", path.display()))?;
            Ok(path)
        })
        .collect()
}

/// The bytes of `figure`'s file in `pen`'s format.
pub(super) fn render(figure: &impl Figure, pen: &Pen) -> Result<Vec<u8>> {
    match pen.format {
        Format::Png => {
            let (width, height) = FIGURE;
            let mut rgb = vec![0; width as usize * height as usize * 3];
            {
                let root = BitMapBackend::with_buffer(&mut rgb, FIGURE).into_drawing_area();
                figure.draw(&root, pen)?;
                root.present().map_err(drawing_error)?;
            }
            encode_png(&rgb, FIGURE, DPI)
        }
        Format::Svg => {
            let mut svg = String::new();
            {
                let root = SVGBackend::with_string(&mut svg, FIGURE).into_drawing_area();
                figure.draw(&root, pen)?;
                root.present().map_err(drawing_error)?;
            }
            Ok(embed_fonts(&svg)?.into_bytes())
        }
    }
}

/// `svg` with the faces of [`FONT`] it uses embedded, as `@font-face` rules in a `<style>` right
/// after its opening tag, so every viewer sets its text in DejaVu Sans as the PNG is, instead of
/// whatever font it has. plotters' SVG backend only names a family, and no crate adds fonts to
/// an SVG, hence this.
pub(super) fn embed_fonts(svg: &str) -> Result<String> {
    let open = svg
        .find("<svg")
        .and_then(|start| Some(start + svg[start..].find('>')? + 1))
        .context("plotters wrote an SVG without an <svg> tag")?;
    let mut faces = vec![("normal", dejavu::sans::regular())];
    if svg.contains(r#"font-weight="bold""#) {
        faces.push(("bold", dejavu::sans::bold()));
    }
    let mut style = String::from("\n<defs><style>");
    for (weight, font) in faces {
        style.push_str(&format!(
            "@font-face{{font-family:\"{FONT}\";font-weight:{weight};\
             src:url(data:font/ttf;base64,{}) format(\"truetype\");}}",
            BASE64.encode(font)
        ));
    }
    style.push_str("</style></defs>");
    Ok(format!("{}{style}{}", &svg[..open], &svg[open..]))
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
