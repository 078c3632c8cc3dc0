//! The end-to-end tests, for real, through the xtask binary: the sweeps (`sweeps`) and ladders
//! (`ladders`) on wrangler dev and SQLite, the faults injected into a local run (`faults`), the remote target
//! through the stand-in wrangler (`remote`), writes through D1's REST API and the stand-in API
//! (`rest_path`), the workloads (`workloads`), and compare, calibrate and export on real SQLite
//! runs (`compare`), the local D1 beside a Durable Object (`durable`), `advise --measure`
//! (`advise`), the libraries beside the strategies in the ORM Worker (`orms`), a workload
//! sharded over processes on SQLite and merged (`shards`), and Postgres through a Hyperdrive
//! binding (`hyperdrive`).
//!
//! One binary with its own harness (`harness.rs`), so that these tests run side by side: each
//! of their runs mostly waits (on wrangler dev starting, on a schedule's clock, on a recovery
//! timer) and starts its own wrangler dev on a free port with its own state, so more of them
//! share the two cores of the machines this runs on than cargo's harness would run. Before its
//! first run each test waits for `cargo xtask setup` (once), so no two runs install or build the
//! Worker at once. A test that must run alone says so and runs first: the one that checks what
//! the next run says about a run it killed (every run looks for dead runs under
//! `target/d1bench/` and marks them, so no other run may start meanwhile), and compare's A/A
//! test, whose only load beside its second run must be the one it makes. The longest tests
//! start next.

/// `module::function` for each function named: tests that may run beside the others.
macro_rules! tests {
    ($module:ident: $($test:ident),* $(,)?) => {
        vec![$(crate::beside_others(
            concat!(stringify!($module), "::", stringify!($test)),
            crate::$module::$test,
        )),*]
    };
}

#[path = "../support/mod.rs"]
mod support;

mod advise;
mod compare;
mod durable;
mod faults;
mod harness;
mod hyperdrive;
mod ladders;
mod orms;
mod remote;
mod remote_pg;
mod rest_path;
mod shards;
mod stand_in_api;
mod sweeps;
mod workloads;

use harness::Trial;

/// A test that may run beside the others.
fn beside_others(name: &'static str, test: fn()) -> Trial {
    Trial {
        name,
        alone: false,
        run: Box::new(move || {
            support::worker_ready();
            test();
        }),
    }
}

/// A test that may run beside the others and starts no Worker (it runs on in-process SQLite
/// alone), so it does not wait for `cargo xtask setup`.
fn without_worker(name: &'static str, test: fn()) -> Trial {
    Trial {
        name,
        alone: false,
        run: Box::new(test),
    }
}

/// A test that runs while no other test does (the harness runs these first).
fn alone(name: &'static str, test: fn()) -> Trial {
    Trial {
        name,
        alone: true,
        run: Box::new(move || {
            support::worker_ready();
            test();
        }),
    }
}

fn main() {
    let mut trials = vec![
        alone(
            "faults::a_run_killed_with_9_leaves_nothing_running_and_the_next_run_marks_it_abandoned",
            faults::a_run_killed_with_9_leaves_nothing_running_and_the_next_run_marks_it_abandoned,
        ),
        // An A/A test whose load is its own: beside the other tests, whatever ran beside one
        // run and not the other is an effect it would rightly report.
        alone(
            "compare::compare_catches_a_fourfold_slowdown_and_stays_quiet_between_two_normal_runs",
            compare::compare_catches_a_fourfold_slowdown_and_stays_quiet_between_two_normal_runs,
        ),
    ];
    // Each module lists its tests longest first; taking one of each in turn starts the longest
    // early and leaves the short ones to fill the end.
    let mut modules = [
        workloads::tests(),
        shards::tests(),
        faults::tests(),
        compare::tests(),
        remote::tests(),
        remote_pg::tests(),
        rest_path::tests(),
        sweeps::tests(),
        advise::tests(),
        durable::tests(),
        hyperdrive::tests(),
        ladders::tests(),
        orms::tests(),
    ]
    .map(Vec::into_iter);
    loop {
        let next: Vec<Trial> = modules.iter_mut().filter_map(Iterator::next).collect();
        if next.is_empty() {
            break;
        }
        trials.extend(next);
    }
    harness::run(trials);
}
