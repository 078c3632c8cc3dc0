//! What of a target's error text a record keeps: one line, and at most [`KEPT_CHARS`] characters
//! of it, so a refused `exec` (whose error quotes its whole script, ~100 KB) cannot swell
//! `results.csv`. The one place every record's `error` cell is made.

use std::fmt::Write as _;

/// Characters of an error text a record keeps: its head and its tail, where D1 puts its
/// message after a statement it quotes (`D1_EXEC_ERROR: Error in line 1: <SQL>: <message>`).
pub const KEPT_CHARS: usize = 500;
/// Of [`KEPT_CHARS`], the characters kept from the end.
const TAIL_CHARS: usize = 200;

/// `text` on one line (line breaks as spaces), cut to its first 300 and last 200 characters
/// when longer than [`KEPT_CHARS`], with a note of what was left out and the whole length.
pub fn recorded(text: &str) -> String {
    let line = text.replace(['\n', '\r'], " ");
    let chars = line.chars().count();
    if chars <= KEPT_CHARS {
        return line;
    }
    let head_end = line
        .char_indices()
        .nth(KEPT_CHARS - TAIL_CHARS)
        .map_or(line.len(), |(i, _)| i);
    let tail_start = line
        .char_indices()
        .nth(chars - TAIL_CHARS)
        .map_or(line.len(), |(i, _)| i);
    let mut out = String::with_capacity(KEPT_CHARS + 80);
    out.push_str(&line[..head_end]);
    write!(
        out,
        " [… {} of the error text's {} bytes left out …] ",
        crate::base::numbers::thousands(tail_start - head_end),
        crate::base::numbers::thousands(line.len())
    )
    .unwrap();
    out.push_str(&line[tail_start..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use d1bench_core::RefusalKind;

    #[test]
    fn a_short_text_is_kept_whole_on_one_line() {
        assert_eq!(
            recorded("D1_ERROR: too many SQL variables\nat offset 3"),
            "D1_ERROR: too many SQL variables at offset 3"
        );
        let exactly = "é".repeat(KEPT_CHARS);
        assert_eq!(recorded(&exactly), exactly);
    }

    /// A refused `exec` quotes its whole script: the record keeps the head, the message at
    /// the end, and says how long the text was; it still classifies as the same refusal.
    #[test]
    fn a_refused_exec_script_is_cut_to_its_head_and_its_message() {
        let mut script = String::new();
        while script.len() < 100_000 {
            script.push_str("INSERT INTO p_1 (c0) VALUES ('日本 x'), ('y');\n");
        }
        let text =
            format!("D1_EXEC_ERROR: Error in line 1: {script}: statement too long: SQLITE_TOOBIG");
        let kept = recorded(&text);
        assert!(
            kept.chars().count() < KEPT_CHARS + 80,
            "{} chars",
            kept.chars().count()
        );
        assert!(
            kept.starts_with("D1_EXEC_ERROR: Error in line 1: INSERT INTO p_1"),
            "{kept}"
        );
        assert!(
            kept.ends_with(": statement too long: SQLITE_TOOBIG"),
            "{kept}"
        );
        let total = crate::base::numbers::thousands(text.len());
        assert!(
            kept.contains(&format!("error text's {total} bytes left out")),
            "{kept}"
        );
        assert!(!kept.contains('\n'));
        assert_eq!(
            RefusalKind::classify(&kept),
            RefusalKind::classify(&text),
            "{kept}"
        );
        assert_eq!(RefusalKind::classify(&kept), RefusalKind::StatementTooLong);
    }
}
