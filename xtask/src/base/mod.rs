//! What every layer shares and none owns: the targets a run runs on, the harness's self-test,
//! the clock, the ORMs measured beside the strategies, how numbers are printed, and how a type is kept on disk as text. It imports nothing of the crate, so any module may
//! use it, and the command line (`flags`) takes its types from here.

pub mod clock;
pub mod corruption;
pub mod heap;
pub mod numbers;
pub mod orm;
pub mod target;
pub mod text;

pub use corruption::DebugCorruption;
pub use heap::HeapSampling;
pub use orm::{Idiom, Orm, OrmWrite};
pub use target::{AccountPlan, Location, PgWorker, TargetKind, WorkerKind};
