//! One definition of what a d1bench probe is, shared by the Worker, the xtask and the tests.
//!
//! - [`limits`]: D1's documented limits, the numbers the planner plans against;
//! - [`probe`]: the probe request the xtask sends and the result the Worker answers;
//! - [`generate`]: the deterministic row generator both sides can replay;
//! - [`sql`]: literal escaping and the SQL plan of each [`probe::Strategy`];
//! - [`handover`]: a probe's INSERTs as either Worker hands them to D1's binding;
//! - [`checksum`]: the content checksum of a table, in SQL and on the host;
//! - [`refusal`]: the classification of D1 error texts into refusal kinds;
//! - [`workload`]: workload experiments' table, operations, SQL, requests and answers;
//! - [`ladder`]: the rungs of the limit ladders, the SQL each rung runs, and what it answers.
//!
//! Nothing here does I/O, so every piece is tested natively on the host.

pub mod checksum;
pub mod generate;
pub mod handover;
pub mod ladder;
pub mod limits;
pub mod probe;
pub mod refusal;
pub mod sql;
pub mod workload;

pub use checksum::Checksum;
pub use generate::{RowGenerator, TextMix, Value};
pub use probe::{
    CallShape, Corruption, Outcome, ProbeError, ProbeRequest, ProbeResult, ServedBy, SetupResult,
    Strategy, VerifyResult,
};
pub use refusal::{D1Advice, RefusalKind};
pub use sql::{Plan, Statement};
