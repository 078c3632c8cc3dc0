//! The charts of a run: one module per kind of chart ([`sweep`] for sweeps' time, rows per
//! statement and overhead charts, [`ladder`] for the param-ceiling chart of ladder runs), all
//! drawn in the one style of [`style`].

pub mod ladder;
pub mod style;
pub mod sweep;
