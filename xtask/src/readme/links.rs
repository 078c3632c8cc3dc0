//! Every relative link of the README and of the files under `docs/` resolves: the file or
//! directory it names exists and, for a link into a markdown file with an anchor, that file has
//! a heading whose GitHub slug is the anchor. The docs are split over many files that link into
//! one another and that generated text links into, so a moved heading must fail a test, not a
//! reader. Test-only: nothing at run time reads the docs.

use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};

/// `text` without its fenced code blocks and inline code spans: what they hold is not a link.
/// A code span's text goes; the `](…)` of a link whose text is code stays.
fn prose(text: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            out.push('\n');
            continue;
        }
        if !fenced {
            out.push_str(line);
        }
        out.push('\n');
    }
    let mut bare = String::with_capacity(out.len());
    let mut in_code = false;
    for c in out.chars() {
        if c == '`' {
            in_code = !in_code;
        } else if !in_code || c == '\n' {
            bare.push(c);
        }
    }
    bare
}

/// The targets of the markdown links `[text](target)` in `text`, with the line each is on.
fn links(text: &str) -> Vec<(usize, String)> {
    let text = prose(text);
    let mut found = Vec::new();
    let mut rest = text.as_str();
    let mut line = 1;
    while let Some(at) = rest.find("](") {
        line += rest[..at].matches('\n').count();
        let after = &rest[at + 2..];
        let end = after.find([')', ' ', '\n']).unwrap_or(after.len());
        found.push((line, after[..end].to_owned()));
        rest = &after[end..];
    }
    found
}

/// GitHub's anchor for a heading's text: lower case, markup and punctuation dropped (letters,
/// digits, `-` and `_` kept), each space a `-`.
fn slug(heading: &str) -> String {
    // `[text](url)` reads as its text.
    let mut text = String::new();
    let mut rest = heading;
    while let Some(open) = rest.find('[') {
        let Some(close) = rest[open..].find("](").map(|c| open + c) else {
            break;
        };
        let Some(end) = rest[close..].find(')').map(|e| close + e) else {
            break;
        };
        text.push_str(&rest[..open]);
        text.push_str(&rest[open + 1..close]);
        rest = &rest[end + 1..];
    }
    text.push_str(rest);
    text.trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of `text`'s headings, a repeated one numbered as GitHub numbers it (`-1`, `-2`).
fn anchors(text: &str) -> HashSet<String> {
    let mut found = HashSet::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        let hashes = line.chars().take_while(|&c| c == '#').count();
        if fenced || !(1..=6).contains(&hashes) || !line[hashes..].starts_with(' ') {
            continue;
        }
        let base = slug(&line[hashes..]);
        let mut anchor = base.clone();
        let mut n = 0;
        while found.contains(&anchor) {
            n += 1;
            anchor = format!("{base}-{n}");
        }
        found.insert(anchor);
    }
    found
}

/// `path` with its `.` and `..` resolved, without touching the file system.
fn normal(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Every link of the markdown file `file` (relative to `root`) that does not resolve, as
/// `file:line: target (why)`.
fn broken(root: &Path, file: &str) -> Vec<String> {
    let path = root.join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{file}: {e}"));
    let dir = path.parent().expect("a file has a directory");
    let mut out = Vec::new();
    for (line, target) in links(&text) {
        if target.contains("://") || target.starts_with("mailto:") {
            continue;
        }
        let (file_part, anchor) = match target.split_once('#') {
            Some((f, a)) => (f, Some(a)),
            None => (target.as_str(), None),
        };
        let linked = if file_part.is_empty() {
            path.clone()
        } else {
            normal(&dir.join(file_part))
        };
        if !linked.starts_with(root) || !linked.exists() {
            out.push(format!("{file}:{line}: {target} (no such file)"));
            continue;
        }
        let Some(anchor) = anchor else { continue };
        if linked.extension().is_none_or(|e| e != "md") {
            continue;
        }
        let linked_text = std::fs::read_to_string(&linked).unwrap();
        if !anchors(&linked_text).contains(anchor) {
            out.push(format!(
                "{file}:{line}: {target} (no heading with that anchor)"
            ));
        }
    }
    out
}

/// The files whose links are checked: the README, the CHANGELOG and every markdown file
/// directly under `docs/` (the committed runs' own summaries are checked byte for byte by
/// `tests/committed_runs.rs`).
fn documents(root: &Path) -> Vec<String> {
    let mut files = vec!["README.md".to_owned(), "CHANGELOG.md".to_owned()];
    let mut docs: Vec<String> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "md"))
        .map(|p| format!("docs/{}", p.file_name().unwrap().to_str().unwrap()))
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paths::project_root;

    #[test]
    fn headings_get_githubs_anchors() {
        assert_eq!(
            slug(" What is measured, and how"),
            "what-is-measured-and-how"
        );
        assert_eq!(slug(" The isolate's memory"), "the-isolates-memory");
        assert_eq!(
            slug(" Two Workers: `--worker rust|js`"),
            "two-workers---worker-rustjs"
        );
        assert_eq!(slug(" See [Intervals](a.md#x)"), "see-intervals");
        let text = "# A\n## A\n```sh\n# not a heading\n```\n#no\n";
        let found = anchors(text);
        assert_eq!(found, HashSet::from(["a".to_owned(), "a-1".to_owned()]));
    }

    #[test]
    fn links_in_code_are_not_links() {
        let text = "[a](x.md) `[b](y.md)`\n```\n[c](z.md)\n```\n[`d`](w/)\n";
        let found: Vec<String> = links(text).into_iter().map(|(_, t)| t).collect();
        assert_eq!(found, ["x.md", "w/"]);
        assert_eq!(links("one\n\n[a](x.md)")[0].0, 3);
        assert_eq!(links("`one\ntwo` [a](x.md)")[0].0, 2);
    }

    /// The check fails on a missing file, a missing anchor and a missing heading of the same
    /// file, and passes what resolves.
    #[test]
    fn a_link_that_does_not_resolve_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join("docs")).unwrap();
        std::fs::write(root.join("docs/b.md"), "# B\n\n## Two words\n").unwrap();
        std::fs::write(
            root.join("README.md"),
            "[ok](docs/b.md) [ok](docs/b.md#two-words) [ok](docs/) [ok](#top) [ok](https://x/y)\n\
             # Top\n\
             [gone](docs/c.md) [gone](docs/b.md#three) [gone](#nowhere) [gone](../outside.md)\n",
        )
        .unwrap();
        let found = broken(root, "README.md");
        assert_eq!(found.len(), 4, "{found:?}");
        assert!(found[0].contains("docs/c.md (no such file)"), "{found:?}");
        assert!(
            found[1].contains("docs/b.md#three (no heading"),
            "{found:?}"
        );
        assert!(found[2].contains("#nowhere (no heading"), "{found:?}");
        assert!(
            found[3].contains("../outside.md (no such file)"),
            "{found:?}"
        );
        assert!(broken(root, "docs/b.md").is_empty());
    }

    #[test]
    fn every_link_of_the_readme_and_the_docs_resolves() {
        let root = project_root();
        let files = documents(&root);
        assert!(files.contains(&"docs/README.md".to_owned()), "{files:?}");
        let found: Vec<String> = files.iter().flat_map(|f| broken(&root, f)).collect();
        assert!(
            found.is_empty(),
            "links that do not resolve:\n{}",
            found.join("\n")
        );
    }
}
