//! The HTML pages a person opens in a browser: every run's `index.html`, written by
//! [`run_pages`] by its kind (a sweep's [`run_page`], a ladder's [`ladder_page`], a workload's
//! [`workload_page`]), one page over many runs ([`runs_page`]) and two runs compared,
//! `compare.html` ([`compare_page`]); what a sweep's page says first is [`findings`], its small
//! figures (each point's sessions beside its interval, a ratio against its threshold) are drawn
//! by [`dots`], and a section a summary.md already words is shown from that markdown
//! ([`markdown`]).
//!
//! Each page is one self-contained file: its style inline, its figures inline SVG, no script,
//! no font, nothing fetched (a Content-Security-Policy of `default-src 'none'` says so to the
//! browser too), so it reads the same offline, from a CI artifact or committed under docs/. The
//! pages are maud templates, which escape every value they splice in; the one thing put in as it
//! is, a run's own chart SVG, is checked first ([`inline_svg`]). A page holds no time of its
//! writing and lists what it lists in a fixed order: the same files give the same bytes.

pub mod compare_page;
pub mod dots;
pub mod findings;
pub mod host;
pub mod ladder_page;
pub mod markdown;
pub mod run_page;
pub mod run_pages;
pub mod runs_page;
pub mod workload_page;

use std::path::Path;

use anyhow::{Context, Result};
use maud::{DOCTYPE, Markup, PreEscaped, html};

use crate::base::numbers::num;

/// The pages' one stylesheet, inlined into each.
const STYLE: &str = include_str!("style.css");

/// What the browser may load for a page: nothing but its own inline style (and `data:` images,
/// which it has none of today). Links still navigate: a policy governs fetches, not clicks.
const POLICY: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src data:";

/// The files a report writes into a directory of runs, which a run's page does not list as
/// the run's own: its page, the markdown index over runs and the HTML one.
pub const REPORT_FILES: [&str; 3] = ["index.html", "index.md", "runs.html"];

/// A whole page: `title` in the tab, `body` in the page.
pub fn page(title: &str, body: Markup) -> String {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta http-equiv="Content-Security-Policy" content=(POLICY);
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta name="generator" content="d1bench (cargo xtask)";
                title { (title) }
                style { (PreEscaped(STYLE)) }
            }
            body {
                main { (body) }
                footer {
                    "Written by " code { "cargo xtask" } " from the files beside this page; \
                     nothing on it is fetched from anywhere."
                }
            }
        }
    }
    .into_string()
}

/// Writes `text` to `path`, naming the path when it cannot.
pub fn write(path: &Path, text: &str) -> Result<()> {
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

/// A chart's SVG as it can go into a page unchanged: the file d1bench's charts write (an
/// `<svg>` element of paths and groups, text drawn as outlines), refused when it holds anything
/// that could run or fetch (a script, a link, a foreign object, an event handler, a style).
/// `None` for such a file: the page links it instead.
pub fn inline_svg(text: &str) -> Option<PreEscaped<String>> {
    let body = text.trim_start();
    let body = match body.strip_prefix("<?xml") {
        Some(rest) => rest.split_once("?>")?.1.trim_start(),
        None => body,
    };
    if !body.starts_with("<svg") || !body.trim_end().ends_with("</svg>") {
        return None;
    }
    let lower = body.to_ascii_lowercase();
    let unsafe_part = [
        "<script",
        "href",
        "<foreignobject",
        "<style",
        "javascript:",
        "url(",
    ]
    .iter()
    .any(|s| lower.contains(s));
    let handler = lower.match_indices(" on").any(|(at, _)| {
        let rest = &lower[at + 3..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphabetic())
            .collect();
        !name.is_empty() && rest[name.len()..].starts_with('=')
    });
    (!unsafe_part && !handler).then(|| PreEscaped(body.trim_end().to_owned()))
}

/// `33.3 (30.4–36.4)`: an estimate with its interval, to three significant figures; the
/// estimate alone without one.
pub fn with_interval(value: f64, interval: Option<(f64, f64)>) -> String {
    match interval {
        Some((low, high)) => format!("{} ({}–{})", num(value), num(low), num(high)),
        None => num(value),
    }
}

/// A ratio to two decimals with its interval: `0.40 (0.36–0.45)`.
pub fn ratio_with_interval(value: f64, interval: Option<(f64, f64)>) -> String {
    match interval {
        Some((low, high)) => format!("{value:.2} ({low:.2}–{high:.2})"),
        None => format!("{value:.2}"),
    }
}

/// A file's size for a listing: `812 B`, `42.1 KB`, `3.20 MB`.
pub fn size_text(bytes: u64) -> String {
    match bytes {
        b if b < 1000 => format!("{b} B"),
        b if b < 1_000_000 => format!("{} KB", num(b as f64 / 1000.0)),
        b => format!("{} MB", num(b as f64 / 1_000_000.0)),
    }
}

/// A relative path as a link's target: `/` between parts on every system.
pub fn href(path: &Path) -> String {
    path.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_a_page_shows_is_escaped() {
        let text = page(
            "<script>alert(1)</script>",
            html! { p title=("\"><b>") { ("a < b & c") } },
        );
        assert!(!text.contains("<script>alert"), "{text}");
        assert!(
            text.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
            "{text}"
        );
        assert!(text.contains("title=\"&quot;&gt;&lt;b&gt;\""), "{text}");
        assert!(text.contains("a &lt; b &amp; c"), "{text}");
        assert!(
            text.starts_with("<!DOCTYPE html><html lang=\"en\">"),
            "{text}"
        );
        assert!(text.contains(POLICY), "{text}");
    }

    #[test]
    fn only_a_chart_svg_with_nothing_active_goes_in_as_it_is() {
        let chart = "<svg viewBox=\"0 0 10 10\" xmlns=\"http://www.w3.org/2000/svg\"><defs/>\
                     <path d=\"M 0 0 L 1 1\"/></svg>\n";
        assert_eq!(
            inline_svg(chart).map(|m| m.0),
            Some(chart.trim_end().to_owned())
        );
        let declared = format!("<?xml version=\"1.0\"?>\n{chart}");
        assert!(inline_svg(&declared).is_some());
        for bad in [
            "<svg><script>alert(1)</script></svg>",
            "<svg><a href=\"https://example.com\"><path/></a></svg>",
            "<svg><image xlink:href=\"x.png\"/></svg>",
            "<svg onload=\"alert(1)\"></svg>",
            "<svg><path style=\"fill:url(https://x/y)\"/></svg>",
            "<svg><foreignObject></foreignObject></svg>",
            "<html></html>",
            "<svg>",
        ] {
            assert!(inline_svg(bad).is_none(), "{bad}");
        }
        // An attribute that merely contains "on" is not a handler.
        assert!(inline_svg("<svg><path stroke-linejoin=\"round\" d=\"M 0 0\"/></svg>").is_some());
    }

    #[test]
    fn numbers_read_as_the_markdown_reports_write_them() {
        assert_eq!(
            with_interval(33.31, Some((30.4, 36.44))),
            "33.3 (30.4–36.4)"
        );
        assert_eq!(with_interval(2909.2, None), "2909");
        assert_eq!(
            ratio_with_interval(0.4, Some((0.361, 0.449))),
            "0.40 (0.36–0.45)"
        );
        assert_eq!(size_text(812), "812 B");
        assert_eq!(size_text(42_100), "42.1 KB");
        assert_eq!(size_text(3_200_000), "3.20 MB");
        assert_eq!(href(Path::new("../a/b.svg")), "../a/b.svg");
    }
}
