//! What every layer shares and none owns: the targets a run runs on, the harness's self-test,
//! the clock, and how numbers are printed. It imports nothing of the crate, so any module may
//! use it, and the command line (`flags`) takes its types from here.

pub mod clock;
pub mod corruption;
pub mod numbers;
pub mod target;

pub use corruption::DebugCorruption;
pub use target::{Location, Plan, TargetKind};
