//! When a series has settled: how many of its first observations to discard as warm-up, by
//! White's marginal standard error rule on batch means (MSER-5), bounded.
//!
//! The series is cut into batches of [`BATCH`] observations (a last partial batch is left out of
//! the rule's arithmetic), `z_1 … z_k` their means. For a truncation of `d` batches, MSER is
//! `Σ_{j>d} (z_j − z̄_d)² / (k − d)²`, `z̄_d` the mean of the batches kept: the squared standard
//! error of the kept mean, which a slow start inflates (its batches sit far from the rest) and
//! which grows again when too much is cut (fewer batches are left). The rule keeps the `d` that
//! minimizes it, the smallest on a tie, among those that leave at least two batches and cut no
//! more than the caller's bound, so it can never eat the series. A settled series mostly gets
//! `d = 0`, and whatever it cuts costs only data: the tests below measure both.
//!
//! MSER proposes; it does not test. On a session of two measured rounds the proposal is mostly
//! noise (in the simulations of `studies/sweep/settle.rs` it cut 48% of two-round sessions that
//! needed no warm-up), so a cut
//! stands only when [`slower_than_later`] finds the probes it would discard slower than their
//! own points' later probes: a one-sided paired t test at 5% divided by the number of cuts MSER
//! could have proposed (Bonferroni over its choices, so a settled session is cut in at most 5%
//! of sessions, whichever cut it proposes).
//!
//! References: K. P. White, "An effective truncation heuristic for bias reduction in
//! simulation output", Simulation 69(6), 1997; White, Cobb & Spratt, "A comparison of five
//! steady-state truncation heuristics for simulation", WSC 2000 (MSER-5).

/// Observations per batch: MSER-5's.
pub const BATCH: usize = 5;

/// How many of the first observations of `series` to discard: a multiple of [`BATCH`], at most
/// `most`, by MSER-5. A series of fewer than two batches is never cut.
pub fn mser_truncation(series: &[f64], most: usize) -> usize {
    let means: Vec<f64> = series
        .chunks_exact(BATCH)
        .map(|batch| batch.iter().sum::<f64>() / BATCH as f64)
        .collect();
    let k = means.len();
    let mut best = (0, f64::INFINITY);
    for d in 0..k.saturating_sub(1) {
        if d * BATCH > most {
            break;
        }
        let kept = &means[d..];
        let n = kept.len() as f64;
        let mean = kept.iter().sum::<f64>() / n;
        let mser = kept.iter().map(|z| (z - mean).powi(2)).sum::<f64>() / (n * n);
        if mser < best.1 {
            best = (d, mser);
        }
    }
    best.0 * BATCH
}

/// The share of settled sessions the warm-up rule may cut, over all the cuts it could propose.
pub const FALSE_CUT_RATE: f64 = 0.05;

/// How many cuts (of one batch or more) MSER-5 could propose for a series of `len` observations
/// bounded by `most`: the number the test of a proposal is divided among.
pub fn proposals(len: usize, most: usize) -> usize {
    (len / BATCH).saturating_sub(2).min(most / BATCH)
}

/// Whether the probes a cut would discard ran slower than their own points' later probes:
/// `differences` holds, for each discarded probe that has later ones, `ln(its value) − the mean
/// of ln(its point's later values)`. A one-sided paired t test at `alpha` (the differences are
/// of distinct points, so independent when nothing warmed up); fewer than three differences
/// never show a slow start.
pub fn slower_than_later(differences: &[f64], alpha: f64) -> bool {
    if differences.len() < 3 {
        return false;
    }
    // One-sided at `alpha` is two-sided at 2·alpha with the mean on the slow side; Student's t
    // on the logs is `p_value_of_one`'s, given the differences as factors.
    let factors: Vec<f64> = differences.iter().map(|d| d.exp()).collect();
    let mean = differences.iter().sum::<f64>() / differences.len() as f64;
    mean > 0.0 && super::sessions::p_value_of_one(&factors).is_some_and(|p| p < 2.0 * alpha)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A normal deviate from two uniforms (Box–Muller), seeded.
    fn normal(rng: &mut fastrand::Rng) -> f64 {
        let (u, v) = (rng.f64().max(f64::MIN_POSITIVE), rng.f64());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }

    /// Log residuals of `n` probes with noise `sd`, the first `slow` of them slower by a share
    /// that decays from `start` to nothing.
    fn series(rng: &mut fastrand::Rng, n: usize, sd: f64, slow: usize, start: f64) -> Vec<f64> {
        (0..n)
            .map(|i| {
                let warm = if i < slow {
                    start * (1.0 - i as f64 / slow as f64)
                } else {
                    0.0
                };
                (1.0 + warm).ln() + sd * normal(rng)
            })
            .collect()
    }

    #[test]
    fn a_slow_start_is_cut_and_what_stays_is_settled() {
        let mut rng = fastrand::Rng::with_seed(5);
        let trials = 500;
        let (n, slow) = (130, 30);
        let mut cut_total = 0;
        let mut missed = 0;
        for _ in 0..trials {
            // 23.5% slower at the start (the example run's first round), 5% noise.
            let s = series(&mut rng, n, 0.05, slow, 0.235);
            let cut = mser_truncation(&s, n / 2);
            assert!(cut <= n / 2 && cut.is_multiple_of(BATCH), "{cut}");
            cut_total += cut;
            // What is kept starts where the slowdown is below 5%: its first 79% is cut.
            missed += usize::from(cut < 15);
        }
        let mean_cut = cut_total as f64 / trials as f64;
        assert!(
            (15.0..=45.0).contains(&mean_cut),
            "mean cut {mean_cut} of a 30-probe slow start"
        );
        assert!(
            missed * 20 <= trials,
            "the slow start was kept in {missed} of {trials}"
        );
    }

    #[test]
    fn a_settled_series_is_rarely_cut_and_never_by_much() {
        let mut rng = fastrand::Rng::with_seed(9);
        let trials = 2000;
        let n = 130;
        let cuts: Vec<usize> = (0..trials)
            .map(|_| mser_truncation(&series(&mut rng, n, 0.05, 0, 0.0), n / 2))
            .collect();
        let cut_at_all = cuts.iter().filter(|c| **c > 0).count() as f64 / trials as f64;
        let mean_share = cuts.iter().sum::<usize>() as f64 / (trials * n) as f64;
        // Measured: what MSER-5 throws away of data that needed no warm-up.
        assert!(
            cut_at_all < 0.5,
            "cut at all in {cut_at_all} of settled series"
        );
        assert!(
            mean_share < 0.06,
            "{mean_share} of a settled series cut on average"
        );
    }

    #[test]
    fn the_bound_holds_and_short_series_are_never_cut() {
        let ramp: Vec<f64> = (0..100).map(|i| 100.0 - i as f64).collect();
        assert_eq!(
            mser_truncation(&ramp, 20),
            20,
            "a steady fall is cut to the bound"
        );
        assert_eq!(mser_truncation(&ramp, 0), 0);
        assert_eq!(
            mser_truncation(&[9.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0], 100),
            0
        );
        assert_eq!(mser_truncation(&[], 10), 0);
        // A step: the five high ones are cut, however far the bound allows.
        let mut step = vec![1.0; 5];
        step.extend(vec![0.0; 45]);
        assert_eq!(mser_truncation(&step, 25), 5);
        assert_eq!(
            mser_truncation(&vec![0.0; 50], 25),
            0,
            "ties keep everything"
        );
    }
}
