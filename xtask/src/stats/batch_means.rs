//! Intervals that hold when successive measurements are correlated: under load a queue carries
//! one request's delay into the next ones, and the target drifts, so requests a few
//! milliseconds apart are not independent evidence and an interval that treats them so is too
//! narrow. Batch means over time answers this: the measured span is cut into B blocks of equal
//! duration, each block gives one value per arm (a percentile of the arm's requests in it),
//! and the blocks, which are far enough apart to be nearly independent, are the unit of the
//! interval.
//!
//! For a ratio of two arms measured in the same blocks (interleaved at random, so a block's
//! drift hits both), each block's ratio is taken, then its logarithm; the estimate is the
//! geometric mean of the blocks' ratios and its interval Student's t over the logs with B − 1
//! degrees of freedom ([`super::sessions::over_sessions`], the same maths with the block as the
//! session), with the two-sided p-value of "no difference" for a multiplicity correction
//! ([`super::sessions::benjamini_hochberg`]). Checked by simulation below: coverage near
//! nominal under strongly autocorrelated latency, where the interval that counts every request
//! as independent covers far less.

use statrs::distribution::{ContinuousCDF, StudentsT};

use super::sessions::over_sessions;
use super::{Interval, Method};

/// Blocks a point's measured span is cut into.
pub const BLOCKS: usize = 10;

/// Fewest blocks with a value for both arms that give an interval.
pub const MIN_BLOCKS: usize = 4;

/// A ratio of two arms over blocks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BlockRatio {
    /// The geometric mean of the blocks' ratios.
    pub ratio: f64,
    pub interval: Interval,
    /// Two-sided p-value of "the ratio is 1" (t on the blocks' log ratios).
    pub p_value: f64,
    /// Blocks that gave a ratio.
    pub blocks: usize,
}

/// The ratio `a ÷ b` over blocks, from each block's pair of values (`None` where an arm had too
/// few requests in the block); `None` with fewer than [`MIN_BLOCKS`] pairs, or a value that is
/// not positive.
pub fn ratio_over_blocks(pairs: &[Option<(f64, f64)>], level: f64) -> Option<BlockRatio> {
    let ratios: Vec<f64> = pairs.iter().flatten().map(|(a, b)| a / b).collect();
    if ratios.len() < MIN_BLOCKS {
        return None;
    }
    let over = over_sessions(&ratios, level)?;
    let interval = over.interval?;
    let n = ratios.len() as f64;
    let se = over.log_sd / n.sqrt();
    let log_ratio = over.center.ln();
    let p_value = if se == 0.0 {
        if log_ratio == 0.0 { 1.0 } else { 0.0 }
    } else {
        let t = StudentsT::new(0.0, 1.0, n - 1.0).expect("positive degrees of freedom");
        2.0 * (1.0 - t.cdf((log_ratio / se).abs()))
    };
    Some(BlockRatio {
        ratio: over.center,
        interval: Interval {
            method: Method::BatchMeans,
            ..interval
        },
        p_value,
        blocks: ratios.len(),
    })
}

/// A sign test over blocks of two arms: blocks where the first arm's value is the larger, the
/// smaller (ties left out), and the two-sided exact p-value of "neither tends to be larger".
/// For counts that come in bursts (writes refused while a lock is held): a share with a
/// Wilson interval counts every write as independent, a block is one piece of evidence
/// whatever happened inside it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SignTest {
    pub larger: usize,
    pub smaller: usize,
    pub p_value: f64,
}

/// [`SignTest`] of the pairs `(a, b)`, block by block.
pub fn sign_test(pairs: &[(f64, f64)]) -> SignTest {
    let larger = pairs.iter().filter(|(a, b)| a > b).count();
    let smaller = pairs.iter().filter(|(a, b)| a < b).count();
    let n = larger + smaller;
    let p_value = if n == 0 {
        1.0
    } else {
        (2.0 * super::order::binomial_half_cdf(n, larger.min(smaller))).min(1.0)
    };
    SignTest {
        larger,
        smaller,
        p_value,
    }
}

impl SignTest {
    /// Blocks that were not tied: the only ones the test counts.
    pub fn untied(&self) -> usize {
        self.larger + self.smaller
    }

    /// Whether these untied blocks could have given p < `alpha` at all, whatever they showed.
    pub fn could_reject(&self, alpha: f64) -> bool {
        self.untied() >= fewest_untied_for(alpha)
    }
}

/// The fewest untied blocks at which an exact two-sided sign test can reach p < `alpha`: all
/// on one side gives p = 2 · 0.5ⁿ, so 6 at 5% (3.1%; 5 give 6.3%).
pub fn fewest_untied_for(alpha: f64) -> usize {
    (1..64)
        .find(|&n| 2.0 * 0.5f64.powi(n as i32) < alpha)
        .unwrap_or(64)
}

/// The block (0 to `BLOCKS − 1`) a request due at `scheduled_ms` falls in, of a measured span
/// of `span_ms`.
pub fn block_of(scheduled_ms: f64, span_ms: f64) -> usize {
    if span_ms.is_nan() || span_ms <= 0.0 {
        return 0;
    }
    ((scheduled_ms / span_ms * BLOCKS as f64).floor().max(0.0) as usize).min(BLOCKS - 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::CONFIDENCE;

    /// The nearest-rank median of `values`.
    fn median(values: &mut [f64]) -> f64 {
        values.sort_by(f64::total_cmp);
        values[(values.len() - 1) / 2]
    }

    /// One simulated point: `n` requests interleaved at random between two arms of the same
    /// true latency, under a shared AR(1) drift in log latency (each request's log latency is
    /// 0.95 of the previous one's excursion plus noise, a queue that remembers), each arm's
    /// requests also with noise of their own. Returns the batch-means interval, and the
    /// interval of the design before it: the arms one after the other (the first half of the
    /// requests one arm, the second the other), every request counted as independent (normal
    /// approximation on the logs).
    fn simulate(rng: &mut fastrand::Rng, n: usize) -> (Option<BlockRatio>, (f64, f64)) {
        let normal = |rng: &mut fastrand::Rng| {
            // Box–Muller.
            let (u, v) = (rng.f64().max(1e-12), rng.f64());
            (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
        };
        let mut drift = 0.0;
        let mut arms: [Vec<Vec<f64>>; 2] = [vec![Vec::new(); BLOCKS], vec![Vec::new(); BLOCKS]];
        let mut apart: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
        for i in 0..n {
            drift = 0.95 * drift + 0.15 * normal(rng);
            let arm = usize::from(rng.bool());
            let log_latency = 2.0 + drift + 0.1 * normal(rng);
            let block = block_of(i as f64, n as f64);
            arms[arm][block].push(log_latency.exp());
            apart[usize::from(i >= n / 2)].push(log_latency);
        }
        let pairs: Vec<Option<(f64, f64)>> = (0..BLOCKS)
            .map(|b| {
                let (mut a, mut c) = (arms[0][b].clone(), arms[1][b].clone());
                (a.len() >= 5 && c.len() >= 5).then(|| (median(&mut a), median(&mut c)))
            })
            .collect();
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        let var = |v: &[f64]| {
            let m = mean(v);
            v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (v.len() - 1) as f64
        };
        let diff = mean(&apart[0]) - mean(&apart[1]);
        let se = (var(&apart[0]) / apart[0].len() as f64 + var(&apart[1]) / apart[1].len() as f64)
            .sqrt();
        (
            ratio_over_blocks(&pairs, CONFIDENCE),
            ((diff - 1.96 * se).exp(), (diff + 1.96 * se).exp()),
        )
    }

    /// Over 400 simulated points whose arms do not differ, the batch-means interval of the
    /// interleaved arms covers 1 about as often as it says (95%), while the arms run one after
    /// the other with every request counted as independent cover it far less often: the
    /// failure the committed runs showed.
    #[test]
    fn batch_means_cover_under_autocorrelation_where_arms_run_apart_do_not() {
        let mut rng = fastrand::Rng::with_seed(20);
        let (mut covered, mut naive_covered, mut runs) = (0, 0, 0);
        for _ in 0..400 {
            let (blocks, (low, high)) = simulate(&mut rng, 600);
            let blocks = blocks.expect("every block has requests of both arms");
            runs += 1;
            covered += usize::from(blocks.interval.low <= 1.0 && 1.0 <= blocks.interval.high);
            naive_covered += usize::from(low <= 1.0 && 1.0 <= high);
        }
        let coverage = covered as f64 / runs as f64;
        let naive = naive_covered as f64 / runs as f64;
        eprintln!("batch means cover {coverage}; arms apart, requests independent: {naive}");
        assert!(
            (0.91..=0.99).contains(&coverage),
            "batch means cover {coverage}"
        );
        assert!(naive < 0.85, "the naive interval covers {naive}");
    }

    /// A real difference is found: arm a 20% slower in every block.
    #[test]
    fn a_consistent_ratio_is_found_with_a_small_p_value() {
        let pairs: Vec<Option<(f64, f64)>> = (0..BLOCKS)
            .map(|b| Some((12.0 + b as f64 * 0.1, 10.0 + b as f64 * 0.08)))
            .collect();
        let r = ratio_over_blocks(&pairs, CONFIDENCE).unwrap();
        assert!((r.ratio - 1.2).abs() < 0.01, "{r:?}");
        assert!(r.p_value < 1e-6 && r.interval.low > 1.15, "{r:?}");
        assert_eq!(r.interval.method, Method::BatchMeans);
    }

    #[test]
    fn too_few_blocks_give_no_interval_and_blocks_cover_the_span() {
        let pairs = vec![Some((1.0, 1.0)), None, Some((1.0, 2.0)), Some((2.0, 1.0))];
        assert!(ratio_over_blocks(&pairs, CONFIDENCE).is_none());
        assert_eq!(block_of(0.0, 1000.0), 0);
        assert_eq!(block_of(999.9, 1000.0), BLOCKS - 1);
        assert_eq!(block_of(5000.0, 1000.0), BLOCKS - 1);
        assert_eq!(block_of(5.0, 0.0), 0);
    }

    /// Bursty refusals as the contention workload sees them (each block's lock held with
    /// probability 0.3, then each arm's writes refused with a share drawn per arm and block
    /// up to `ceiling[arm]`): the sign test's p-value block by block, and its untied blocks.
    fn bursty(rng: &mut fastrand::Rng, ceiling: [f64; 2]) -> SignTest {
        let writes = 60;
        let pairs: Vec<(f64, f64)> = (0..BLOCKS)
            .map(|_| {
                let burst = rng.f64() < 0.3;
                let share = |arm: usize, rng: &mut fastrand::Rng| {
                    let p = if burst { ceiling[arm] * rng.f64() } else { 0.0 };
                    (0..writes).filter(|_| rng.f64() < p).count() as f64 / writes as f64
                };
                (share(0, rng), share(1, rng))
            })
            .collect();
        sign_test(&pairs)
    }

    #[test]
    fn six_untied_blocks_are_the_fewest_that_can_reject_at_five_percent() {
        assert_eq!(fewest_untied_for(0.05), 6);
        let all_one_way = |n: usize| sign_test(&vec![(2.0, 1.0); n]);
        assert!(all_one_way(5).p_value > 0.05 && !all_one_way(5).could_reject(0.05));
        assert!(all_one_way(6).p_value < 0.05 && all_one_way(6).could_reject(0.05));
        // Ties do not count: 10 blocks, 4 of them tied, is 6 untied.
        let mut pairs = vec![(1.0, 1.0); 4];
        pairs.extend(vec![(1.0, 2.0); 6]);
        assert_eq!(sign_test(&pairs).untied(), 6);
    }

    /// What the sign test's A/A below could have told (issue 28's power check). An exact
    /// two-sided sign test needs 6 untied blocks or more to reach p < 0.05 at all
    /// (2 · 0.5⁶ = 0.031). Over the workloads' 10 blocks with a lock held in about 3 of them,
    /// the other blocks tie at no refusal, so that many untied blocks are rare, and an arm
    /// refused twice as often in the bursts is almost never caught. The A/A holding its level
    /// is therefore close to certain whatever the test, and the contention report's "no
    /// difference" between retry policies is no evidence of none. This fails, and should be
    /// rewritten as a power floor, once blocks or bursts make the test able to decide.
    #[test]
    fn over_ten_blocks_of_bursts_the_sign_test_can_hardly_reject_so_its_a_a_says_little() {
        let mut rng = fastrand::Rng::with_seed(11);
        let trials = 2000;
        let (mut enough, mut caught) = (0, 0);
        for _ in 0..trials {
            let same = bursty(&mut rng, [0.2, 0.2]);
            enough += usize::from(same.larger + same.smaller >= 6);
            caught += usize::from(bursty(&mut rng, [0.4, 0.2]).p_value < 0.05);
        }
        let share = |k: usize| k as f64 / trials as f64;
        // Measured: 6 untied blocks at 3.6% of points, twice the refusals caught at 0.7%.
        assert!(
            share(enough) < 0.10,
            "6 untied blocks or more at {}",
            share(enough)
        );
        assert!(
            share(caught) < 0.05,
            "twice the refusals caught at {}",
            share(caught)
        );
    }

    /// The sign test's A/A: two arms refused alike, in bursts (each block's lock held with
    /// probability 0.3, and then writes of both arms refused with a share drawn per arm and
    /// block), compared block by block as the retry policies are. Over 4,000 simulated points
    /// it calls a difference at 5% no more often than 5%, where a Wilson comparison of the two
    /// arms' pooled shares, which counts every write as independent, calls one far more often.
    #[test]
    fn the_sign_test_holds_its_level_on_bursty_refusals_where_pooled_shares_do_not() {
        let mut rng = fastrand::Rng::with_seed(7);
        let (trials, writes) = (4000, 60);
        let (mut by_block, mut pooled) = (0, 0);
        for _ in 0..trials {
            let mut pairs = Vec::new();
            let mut refused = [0usize; 2];
            for _ in 0..BLOCKS {
                let burst = rng.f64() < 0.3;
                let mut share = [0.0; 2];
                for (arm, s) in share.iter_mut().enumerate() {
                    let p = if burst { 0.2 * rng.f64() } else { 0.0 };
                    let k = (0..writes).filter(|_| rng.f64() < p).count();
                    refused[arm] += k;
                    *s = k as f64 / writes as f64;
                }
                pairs.push((share[0], share[1]));
            }
            by_block += usize::from(sign_test(&pairs).p_value < 0.05);
            let n = BLOCKS * writes;
            let (a, b) = (
                crate::stats::Share::of(refused[0], n).unwrap(),
                crate::stats::Share::of(refused[1], n).unwrap(),
            );
            pooled += usize::from(a.high < b.low || b.high < a.low);
        }
        let rate = |k: usize| k as f64 / trials as f64;
        assert!(rate(by_block) <= 0.05, "sign test: {}", rate(by_block));
        assert!(
            rate(pooled) > 2.0 * rate(by_block).max(0.01),
            "pooled Wilson: {}",
            rate(pooled)
        );
    }

    #[test]
    fn the_sign_test_counts_blocks_and_is_exact() {
        // 14 blocks larger, none smaller, 6 ties: p = 2 · 2^-14.
        let mut pairs = vec![(1.0, 0.0); 14];
        pairs.extend(vec![(0.0, 0.0); 6]);
        let t = sign_test(&pairs);
        assert_eq!((t.larger, t.smaller), (14, 0));
        assert_eq!(t.p_value, 2.0 / 16384.0);
        // Balanced: no evidence either way; nothing but ties: p = 1.
        let even = sign_test(&[(1.0, 0.0), (0.0, 1.0), (2.0, 1.0), (1.0, 2.0)]);
        assert_eq!(even.p_value, 1.0);
        assert_eq!(sign_test(&[(0.0, 0.0)]).p_value, 1.0);
    }
}
