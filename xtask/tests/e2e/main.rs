//! The end-to-end tests, for real, through the xtask binary: the sweeps and ladders on wrangler
//! dev and SQLite (`sweeps`), the faults injected into a local run (`faults`), the remote target
//! through the stand-in wrangler (`remote`), and the workloads (`workloads`).
//!
//! One binary with its own harness (`harness.rs`), so that these tests run side by side: each
//! of their runs mostly waits (on wrangler dev starting, on a schedule's clock, on a recovery
//! timer) and starts its own wrangler dev on a free port with its own state, so more of them
//! share the two cores of the machines this runs on than cargo's harness would run. Before its
//! first run each test waits for `cargo xtask setup` (once), so no two runs install or build the
//! Worker at once; a test that must be the only one starting runs (one that checks what the next
//! run says about a run it killed) says so, and runs first, alone. The longest tests start next.

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

mod faults;
mod harness;
mod remote;
mod sweeps;
mod workloads;

use harness::Trial;

/// A test that may run beside the others.
fn beside_others(name: &'static str, test: fn()) -> Trial {
    Trial {
        name,
        run: Box::new(move || {
            support::worker_ready();
            let _beside = support::beside_others();
            test();
        }),
    }
}

/// A test during which no other test starts a run.
fn alone(name: &'static str, test: fn()) -> Trial {
    Trial {
        name,
        run: Box::new(move || {
            support::worker_ready();
            let _alone = support::alone();
            test();
        }),
    }
}

fn main() {
    // First, while nothing else runs: it would wait for every running test to end.
    let mut trials = vec![alone(
        "faults::a_run_killed_with_9_leaves_nothing_running_and_the_next_run_marks_it_abandoned",
        faults::a_run_killed_with_9_leaves_nothing_running_and_the_next_run_marks_it_abandoned,
    )];
    // Each module lists its tests longest first; taking one of each in turn starts the longest
    // early and leaves the short ones to fill the end.
    let mut modules = [
        workloads::tests(),
        faults::tests(),
        remote::tests(),
        sweeps::tests(),
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
