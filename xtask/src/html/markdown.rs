//! The markdown a kind's summary.md is written in, as HTML for a run's page. A page shows a
//! section the report already words (a workload's capacity, its cache, its retry policies) from
//! that one wording instead of a second copy in HTML. pulldown-cmark parses it (CommonMark and
//! pipe tables); its events are rewritten so headings sit one level below the page's sections,
//! tables scroll in a box, and raw HTML in a summary shows as text: nothing goes in unescaped.

use maud::{Markup, PreEscaped};
use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd, html};

/// The level every heading of a section gets: one below the page's own `h2` sections.
const LEVEL: HeadingLevel = HeadingLevel::H3;

/// `text` (a section of a summary.md) as HTML: headings as `h3`, tables in a scrolling box.
pub fn to_html(text: &str) -> Markup {
    let events = Parser::new_ext(text, Options::ENABLE_TABLES).flat_map(|event| match event {
        Event::Html(raw) | Event::InlineHtml(raw) => vec![Event::Text(raw)],
        Event::Start(Tag::Heading {
            id, classes, attrs, ..
        }) => vec![Event::Start(Tag::Heading {
            level: LEVEL,
            id,
            classes,
            attrs,
        })],
        Event::End(TagEnd::Heading(_)) => vec![Event::End(TagEnd::Heading(LEVEL))],
        Event::Start(Tag::Table(alignments)) => vec![
            Event::Html("<div class=\"wide\">".into()),
            Event::Start(Tag::Table(alignments)),
        ],
        Event::End(TagEnd::Table) => vec![Event::End(TagEnd::Table), Event::Html("</div>".into())],
        other => vec![other],
    });
    let mut out = String::new();
    html::push_html(&mut out, events);
    PreEscaped(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_summary_section_reads_as_headings_paragraphs_lists_and_tables() {
        let text = "## Capacity\n\nThe target served\nat most `40/s`.\n\n\
                    | rate | achieved |\n| --- | ---: |\n| 10 | **9.9** |\n| 20 | a \\| b |\n\n\
                    - one <b>\n- two\n";
        let page = to_html(text).into_string();
        for part in [
            "<h3>Capacity</h3>",
            "<p>The target served\nat most <code>40/s</code>.</p>",
            "<div class=\"wide\"><table><thead><tr><th>rate</th><th style=\"text-align: right\">achieved</th></tr></thead>",
            "<td style=\"text-align: right\"><strong>9.9</strong></td>",
            "<td style=\"text-align: right\">a | b</td>",
            "<li>one &lt;b&gt;</li>",
            "</table>\n</div>",
        ] {
            assert!(page.contains(part), "{part:?} not in {page}");
        }
        assert_eq!(to_html("").into_string(), "");
    }

    #[test]
    fn raw_html_in_a_summary_is_shown_as_text() {
        let page = to_html("<script>alert(1)</script>\n\nan <img src=x> inline").into_string();
        assert!(
            !page.contains("<script>") && !page.contains("<img"),
            "{page}"
        );
        assert!(
            page.contains("&lt;script&gt;") && page.contains("&lt;img src=x&gt;"),
            "{page}"
        );
    }
}
