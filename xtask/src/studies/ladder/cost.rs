//! What ladder climbs may cost on Cloudflare, at most: every rung of their climbing sequences up
//! to the cap, the confirmation rungs, and the most rungs a bisection may take
//! ([`super::Rungs::most_bisections`]), each priced at the cap.

use super::Climb;
use crate::studies::cost::{Cost, Invocation};

/// The most `climbs` may cost (see the module's first line).
pub fn of(climbs: &[Climb]) -> Cost {
    let mut invocations = Vec::new();
    let mut id = 1;
    for climb in climbs {
        let values = climb.rungs.sequence();
        let bisections = climb.rungs.most_bisections() + climb.confirm;
        let cap = values.last().copied();
        for value in values
            .into_iter()
            .chain(cap.into_iter().cycle().take(bisections))
        {
            let plan = d1bench_core::ladder::plan(&climb.rung(id, value));
            id += 1;
            // Ladder tables have no secondary index.
            invocations.push(Invocation {
                queries: plan.calls.len(),
                rows_written: plan.rows(),
                reads: plan.rows_read(),
            });
        }
    }
    Cost::of_invocations(invocations)
}
