//! How the reports write the statistics' numbers: times in ms to three significant figures, and
//! shares with their intervals.

use crate::stats::Share;

/// A time in ms with three significant figures (as the histograms hold them): `123`, `12.3`,
/// `1.23`.
pub fn num(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

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
