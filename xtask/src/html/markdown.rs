//! The markdown a kind's summary.md is written in, as HTML for a run's page: headings, paragraphs,
//! bullet lists, pipe tables and code spans, the only markdown the reports write. A page shows a
//! section the report already words (a workload's capacity, its cache, its retry policies) from
//! that one wording instead of a second copy in HTML; every value is escaped by maud, nothing
//! goes in as it is.

use maud::{Markup, html};

/// One block of a markdown section.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Block {
    /// `## title` (any level): a heading one level below the page's sections.
    Heading(String),
    Paragraph(String),
    List(Vec<String>),
    /// A pipe table: its header cells and its rows' cells.
    Table(Vec<String>, Vec<Vec<String>>),
}

/// The cells of a table line `| a | b |`, trimmed; `\\|` is a `|` inside a cell.
fn cells(line: &str) -> Vec<String> {
    let escaped = line.trim().replace("\\|", "\u{0}");
    let inner = escaped.trim_start_matches('|').trim_end_matches('|');
    inner
        .split('|')
        .map(|c| c.trim().replace('\u{0}', "|"))
        .collect()
}

/// Whether a table line is its header's rule, `| --- | --: |`.
fn is_rule(line: &str) -> bool {
    cells(line)
        .iter()
        .all(|c| !c.is_empty() && c.chars().all(|ch| matches!(ch, '-' | ':')))
}

/// The blocks of `text`, in order; lines of one paragraph are joined with spaces.
fn blocks(text: &str) -> Vec<Block> {
    let mut out: Vec<Block> = Vec::new();
    let mut paragraph: Vec<&str> = Vec::new();
    let flush = |paragraph: &mut Vec<&str>, out: &mut Vec<Block>| {
        if !paragraph.is_empty() {
            out.push(Block::Paragraph(paragraph.join(" ")));
            paragraph.clear();
        }
    };
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() {
            flush(&mut paragraph, &mut out);
        } else if trimmed.starts_with('#') {
            flush(&mut paragraph, &mut out);
            out.push(Block::Heading(
                trimmed.trim_start_matches('#').trim().to_owned(),
            ));
        } else if trimmed.starts_with('|') {
            flush(&mut paragraph, &mut out);
            match out.last_mut() {
                Some(Block::Table(_, rows)) => {
                    if !is_rule(trimmed) {
                        rows.push(cells(trimmed));
                    }
                }
                _ => out.push(Block::Table(cells(trimmed), Vec::new())),
            }
        } else if let Some(item) = trimmed.strip_prefix("- ") {
            flush(&mut paragraph, &mut out);
            match out.last_mut() {
                Some(Block::List(items)) => items.push(item.to_owned()),
                _ => out.push(Block::List(vec![item.to_owned()])),
            }
        } else {
            paragraph.push(trimmed);
        }
    }
    flush(&mut paragraph, &mut out);
    out
}

/// Inline markdown: `code` spans as code, `**bold**` and `*emphasis*` as plain text (their
/// markers dropped), everything escaped.
fn inline(text: &str) -> Markup {
    let parts: Vec<&str> = text.split('`').collect();
    html! {
        @for (i, part) in parts.iter().enumerate() {
            @if i % 2 == 1 && i + 1 < parts.len() { code { (part) } }
            @else { (part.replace("**", "")) }
        }
    }
}

/// `text` (a section of a summary.md) as HTML: headings as `h3`, tables in a scrolling box.
pub fn to_html(text: &str) -> Markup {
    html! {
        @for block in blocks(text) {
            @match block {
                Block::Heading(title) => h3 { (inline(&title)) },
                Block::Paragraph(p) => p { (inline(&p)) },
                Block::List(items) => ul { @for item in &items { li { (inline(item)) } } },
                Block::Table(head, rows) => div.wide { table {
                    thead { tr { @for cell in &head { th { (inline(cell)) } } } }
                    tbody { @for row in &rows { tr { @for cell in row { td { (inline(cell)) } } } } }
                } },
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_summary_section_reads_as_headings_paragraphs_lists_and_tables() {
        let text = "## Capacity\n\nThe target served\nat most `40/s`.\n\n\
                    | rate | achieved |\n| --- | ---: |\n| 10 | **9.9** |\n| 20 | a \\| b |\n\n\
                    - one <b>\n- two\n";
        assert_eq!(
            to_html(text).into_string(),
            "<h3>Capacity</h3><p>The target served at most <code>40/s</code>.</p>\
             <div class=\"wide\"><table><thead><tr><th>rate</th><th>achieved</th></tr></thead>\
             <tbody><tr><td>10</td><td>9.9</td></tr><tr><td>20</td><td>a | b</td></tr></tbody>\
             </table></div><ul><li>one &lt;b&gt;</li><li>two</li></ul>"
        );
        assert_eq!(to_html("").into_string(), "");
    }
}
