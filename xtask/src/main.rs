//! cargo xtask: d1bench's task runner (work in progress).
mod report;
fn main() {}
