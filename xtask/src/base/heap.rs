//! How a local run samples the Worker isolate's heap (`--isolate-heap`): during every measured
//! request, or during half of them (one of each pair of probe or rung ids), so that one run
//! measures what the sampling costs the timings beside the peaks it records.

use clap::ValueEnum;
use serde::{Deserialize, Serialize};

/// Which measured requests the isolate's heap is sampled during.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HeapSampling {
    /// Every probe and rung.
    Every,
    /// Half of the probes and rungs, interleaved with the others: of each pair of ids (0 and
    /// 1, 2 and 3, ...) one, which one drawn by a hash of the pair, so drift over the run hits
    /// both kinds alike.
    Alternate,
}

impl HeapSampling {
    /// Whether the request of probe or rung `id` is sampled.
    pub fn samples(self, id: u64) -> bool {
        match self {
            HeapSampling::Every => true,
            HeapSampling::Alternate => {
                // SplitMix64's finalizer over the pair: consecutive pairs draw
                // independent-looking bits.
                let mut z = (id / 2).wrapping_add(0x9E37_79B9_7F4A_7C15);
                z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
                ((z ^ (z >> 31)) & 1) != (id & 1)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alternate_samples_one_of_each_pair_of_ids_in_an_order_drawn_per_pair() {
        for pair in 0..500u64 {
            let (a, b) = (
                HeapSampling::Alternate.samples(2 * pair),
                HeapSampling::Alternate.samples(2 * pair + 1),
            );
            assert_ne!(a, b, "pair {pair}");
        }
        let first = (0..500u64)
            .filter(|&pair| HeapSampling::Alternate.samples(2 * pair))
            .count();
        assert!(
            (200..=300).contains(&first),
            "{first} of 500 pairs sample their first id"
        );
        assert!((1..=1000).all(|id| HeapSampling::Every.samples(id)));
    }
}
