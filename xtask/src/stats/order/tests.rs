//! Tests of the order statistics: medians, quantiles and their intervals against textbook
//! values, exact sums and simulated coverage.

use super::*;

#[test]
fn median_of_odd_even_and_empty() {
    assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
    assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
    assert_eq!(median(&[7.0]), Some(7.0));
    assert_eq!(median(&[]), None);
}

fn quantile(values: &[f64], q: f64) -> Option<f64> {
    quantile_of_sorted(&sorted(values), q)
}

#[test]
fn quantiles_interpolate_like_r_and_numpy() {
    let values = [10.0, 20.0, 30.0, 40.0, 50.0];
    assert_eq!(quantile(&values, 0.0), Some(10.0));
    assert_eq!(quantile(&values, 1.0), Some(50.0));
    assert_eq!(quantile(&values, 0.25), Some(20.0));
    // numpy.percentile([10, 20, 30, 40, 50], 95) == 48.0
    assert_eq!(quantile(&values, 0.95), Some(48.0));
    // numpy.percentile([1, 2], 95) == 1.95
    assert!((quantile(&[2.0, 1.0], 0.95).unwrap() - 1.95).abs() < 1e-12);
    assert_eq!(quantile(&[], 0.5), None);
}

/// `1 − 2·Σ_{i<j} C(n, i) / 2^n`, summed in integers (n ≤ 120).
fn exact_coverage(n: u32, j: u32) -> f64 {
    let mut choose = 1u128;
    let mut below = 0u128;
    for i in 0..j as u128 {
        below += choose;
        choose = choose * (n as u128 - i) / (i + 1);
    }
    1.0 - (2 * below) as f64 / 2f64.powi(n as i32)
}

#[test]
fn coverages_are_the_exact_binomial_sums() {
    assert_eq!(order_statistic_coverage(5, 1), 0.9375);
    assert_eq!(order_statistic_coverage(10, 2), 0.978515625);
    for n in 2..=120u32 {
        for j in 1..=n / 2 {
            let (ours, exact) = (
                order_statistic_coverage(n as usize, j as usize),
                exact_coverage(n, j),
            );
            if n <= 50 {
                assert_eq!(ours, exact, "n={n} j={j}");
            }
            assert!(
                (ours - exact).abs() < 1e-13,
                "n={n} j={j}: {ours} vs {exact}"
            );
        }
    }
    // At the cap, the normal approximation's rank: 500 − 1.96·√1000 / 2 ≈ 469.
    let values: Vec<f64> = (0..MAX_N).map(|i| i as f64).collect();
    let ci = median_interval(&values, CONFIDENCE).unwrap();
    assert!((0.95..0.955).contains(&ci.coverage), "{}", ci.coverage);
    assert_eq!(ci.low, 468.0, "the 469th value");
}

#[test]
fn the_interval_is_the_textbook_pair_of_order_statistics() {
    let ranks = |n: usize| {
        let values: Vec<f64> = (1..=n).map(|i| i as f64).collect();
        let ci = median_interval(&values, CONFIDENCE).unwrap();
        (ci.low as usize, ci.high as usize)
    };
    // The sign-test intervals of the median at 95% found in tables: (1, 6) at n = 6,
    // (2, 9) at n = 10, (6, 15) at n = 20, (10, 21) at n = 30.
    assert_eq!(ranks(6), (1, 6));
    assert_eq!(ranks(10), (2, 9));
    assert_eq!(ranks(20), (6, 15));
    assert_eq!(ranks(30), (10, 21));
    for n in 6..=200 {
        let ci = median_interval(&vec![1.0; n], CONFIDENCE).unwrap();
        assert!(ci.coverage >= CONFIDENCE, "n={n}: {}", ci.coverage);
    }
}

#[test]
fn below_six_repeats_the_interval_is_min_to_max_and_says_what_it_covers() {
    let ci = median_interval(&[5.0, 1.0, 4.0, 2.0, 3.0], CONFIDENCE).unwrap();
    assert_eq!((ci.low, ci.high, ci.coverage), (1.0, 5.0, 0.9375));
    assert!(!ci.reaches_confidence());
    for (n, coverage) in [(2, 0.5), (3, 0.75), (4, 0.875)] {
        let values: Vec<f64> = (0..n).map(f64::from).collect();
        assert_eq!(
            median_interval(&values, CONFIDENCE).unwrap().coverage,
            coverage
        );
    }
    assert_eq!(median_interval(&[1.0], CONFIDENCE), None);
    assert_eq!(median_interval(&[], CONFIDENCE), None);
    assert!(
        median_interval(&[1.0; 6], CONFIDENCE)
            .unwrap()
            .reaches_confidence()
    );
}

#[test]
fn the_interval_covers_the_true_median_as_often_as_it_says() {
    // 4,000 samples of 10 from a known distribution (uniform on 0..1, median ½): the
    // (2, 9) interval covers 97.85%, so it must hold ½ in 3,914 of them give or take the
    // binomial noise (sd ≈ 9), and not in all.
    let mut rng = fastrand::Rng::with_seed(99);
    let trials = 4_000;
    let held = (0..trials)
        .filter(|_| {
            let sample: Vec<f64> = (0..10).map(|_| rng.f64()).collect();
            let ci = median_interval(&sample, CONFIDENCE).unwrap();
            ci.low <= 0.5 && 0.5 <= ci.high
        })
        .count();
    assert!((3_870..3_960).contains(&held), "held in {held} of {trials}");
}

#[test]
fn a_summary_has_every_statistic_and_a_p95_only_from_20_values() {
    let s = Summary::of(&[5.0, 1.0, 4.0, 2.0, 3.0]).unwrap();
    assert_eq!(
        (s.n, s.median, s.min, s.max, s.p95),
        (5, 3.0, 1.0, 5.0, None)
    );
    assert_eq!(s.ci.map(|ci| (ci.low, ci.high)), Some((1.0, 5.0)));
    let twenty: Vec<f64> = (1..=20).map(f64::from).collect();
    // numpy.percentile(range(1, 21), 95) == 19.05
    assert!((Summary::of(&twenty).unwrap().p95.unwrap() - 19.05).abs() < 1e-12);
    assert_eq!(Summary::of(&twenty[..19]).unwrap().p95, None);
    assert_eq!(Summary::of(&[7.0]).unwrap().ci, None);
    assert_eq!(Summary::of(&[]), None);
}

#[test]
fn precision_needs_95_percent_and_a_narrow_enough_interval() {
    // 10 values from 98 to 102 around 100: the (2, 9) interval is [99, 101.5].
    let values = [
        98.0, 99.0, 99.5, 100.0, 100.0, 100.0, 100.5, 101.0, 101.5, 102.0,
    ];
    let s = Summary::of(&values).unwrap();
    assert_eq!(s.ci.map(|ci| (ci.low, ci.high)), Some((99.0, 101.5)));
    assert!(s.within(0.05) && s.within(0.015));
    assert!(!s.within(0.01), "101.5 is 1.5% above the median");
    // Five identical values: a zero-width interval, but only 93.75% of coverage.
    assert!(!Summary::of(&[100.0; 5]).unwrap().within(0.05));
    assert!(Summary::of(&[100.0; 6]).unwrap().within(0.05));
    assert!(!Summary::of(&[100.0]).unwrap().within(0.05));
}

#[test]
fn the_quantile_walk_at_one_half_is_the_sign_test_interval() {
    // At q = ½ the walk widens symmetrically, give or take the one rank where the level
    // is reached: it is the median's interval ([`median_ranks`]), or one rank narrower on one side.
    for n in [6, 10, 20, 51, 200, 999] {
        let r = rank_interval(n, 0.5, 0.95).unwrap();
        assert!(r.coverage >= 0.95, "n={n}: {r:?}");
        let symmetric = median_ranks(n, 0.95).unwrap();
        let (j, k) = (symmetric.low, symmetric.high);
        assert!(
            r.low >= j && r.high <= k && (r.high - r.low) + 1 >= k - j,
            "n={n}: {r:?} vs [{j}, {k}]"
        );
        if r.low + r.high == n + 1 {
            let exact = order_statistic_coverage(n, r.low);
            assert!((r.coverage - exact).abs() < 1e-9, "n={n}: {r:?} vs {exact}");
        }
    }
    assert_eq!(rank_interval(5, 0.5, 0.95), None);
}

/// The coverage claimed is the coverage had: 20,000 samples of 300 uniform values, the
/// p90's interval holds the true 0.9 in about as many as it claims (seeded, so the test
/// always sees the same draws).
#[test]
fn the_p90_interval_covers_what_it_says() {
    let (n, q) = (300, 0.9);
    let r = rank_interval(n, q, 0.95).unwrap();
    assert!(r.coverage >= 0.95 && r.coverage < 0.97, "{r:?}");
    let mut rng = fastrand::Rng::with_seed(7);
    let trials = 20_000;
    let mut held = 0;
    for _ in 0..trials {
        let mut v: Vec<f64> = (0..n).map(|_| rng.f64()).collect();
        v.sort_by(f64::total_cmp);
        held += usize::from(v[r.low - 1] <= q && q < v[r.high - 1]);
    }
    let seen = held as f64 / trials as f64;
    assert!((seen - r.coverage).abs() < 0.01, "{seen} vs {}", r.coverage);
}

#[test]
fn high_percentiles_need_enough_values() {
    assert_eq!(rank_interval(500, 0.999, 0.95), None);
    let r = rank_interval(5_000, 0.999, 0.95).unwrap();
    assert!(
        r.high <= 5_000 && r.low < 4_995 && r.coverage >= 0.95,
        "{r:?}"
    );
    assert_eq!(nearest_rank(1000, 0.999), 999);
    assert_eq!(nearest_rank(1, 0.5), 1);
}
