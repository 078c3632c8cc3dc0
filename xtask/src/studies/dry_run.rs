//! What a dry run writes of every kind's plan alike: counts with their unit, and long lists of
//! values cut short.

use crate::base::numbers::thousands;

/// `1 probe`, `3 probes`.
pub fn count(n: usize, what: &str) -> String {
    format!("{} {what}{}", thousands(n), if n == 1 { "" } else { "s" })
}

/// Up to 12 values as they are; more as the first ones, `…` and the last.
pub fn compact(values: &[String]) -> String {
    let shown: Vec<&str> = values
        .iter()
        .map(|v| if v.is_empty() { "-" } else { v.as_str() })
        .collect();
    if shown.len() <= 12 {
        return shown.join(", ");
    }
    format!(
        "{}, …, {} ({} values)",
        shown[..10].join(", "),
        shown[shown.len() - 1],
        shown.len()
    )
}
