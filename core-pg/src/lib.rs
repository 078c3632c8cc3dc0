//! What a d1bench probe is on PostgreSQL, reached from the Worker through a Hyperdrive binding:
//! shared by that Worker (`worker-pg/`) and the xtask, which plans the same statements to check
//! what the Worker answers.
//!
//! - [`limits`]: Postgres's limits, the numbers its planner plans against;
//! - [`sql`]: the probe's table, its verification and the INSERT plan of each strategy in
//!   Postgres's dialect (`$n` parameters, `bigint` integers, `json_array_elements`);
//! - [`checksum`]: the content checksum of `d1bench_core::checksum`, computed by Postgres;
//! - [`refusal`]: Postgres's errors (by SQLSTATE) sorted into the core's refusal kinds;
//! - [`wall`]: the limit that stops a probe before it starts, as the core's `sql::wall` for D1.
//!
//! Why a crate beside `core/` and not a module in it: `core/src` is one of the inputs of the D1
//! Worker's build hash (`worker_build::sources_hash`), which every quoted run is checked against;
//! a Postgres module there would make every committed run "measured by another Worker build".
//! The types stay the core's (a probe, a plan, a checksum, a refusal kind): nothing here defines
//! a second meaning of them. Nothing here does I/O.

pub mod checksum;
pub mod limits;
pub mod refusal;
pub mod sql;
pub mod wall;

#[cfg(test)]
mod testing;
