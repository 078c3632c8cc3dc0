//! The chart machinery every chart of d1bench is drawn with, apart from what any study plots:
//! the one style ([`style`]: size, fonts, colours, frame, axes, files) and the one line chart
//! ([`line`]: lines with error bars, dodged where they would overlap, dashed companions,
//! refusals and a reference curve). The charts of each kind of study, which only say what to
//! plot, are in `reports/charts/`.

pub mod line;
pub mod style;
