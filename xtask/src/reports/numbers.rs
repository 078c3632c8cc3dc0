//! How the reports write a share with its interval (times and counts are `base::numbers`).

use crate::stats::Share;

/// A share with its interval and counts: `42.0% (38.1–45.9%, 120 of 286)`.
pub fn share_text(share: &Share) -> String {
    format!(
        "{:.1}% ({:.1}–{:.1}%, {} of {})",
        100.0 * share.ratio(),
        100.0 * share.low,
        100.0 * share.high,
        share.k,
        share.n
    )
}
