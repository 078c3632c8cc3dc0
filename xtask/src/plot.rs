//! TEMPORARY stand-in until the chart module lands (not committed).
use crate::report::{Axis, ResultRow, RunDir};
pub fn render_run(
    _run: &RunDir,
    _rows: &[ResultRow],
    _axis: Axis,
    _title: &str,
) -> anyhow::Result<Vec<std::path::PathBuf>> {
    Ok(vec![])
}
