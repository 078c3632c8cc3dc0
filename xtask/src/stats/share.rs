//! A proportion `k / n` with its 95% Wilson score interval: a cache's hit ratio, the share of
//! stale reads, of writes refused, of requests answered at a place.

/// A proportion `k / n` with its 95% Wilson score interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Share {
    pub k: usize,
    pub n: usize,
    pub low: f64,
    pub high: f64,
}

impl Share {
    /// `k` of `n`; `None` when `n` is 0.
    pub fn of(k: usize, n: usize) -> Option<Share> {
        if n == 0 {
            return None;
        }
        // The standard normal's 97.5th percentile: a two-sided 95% interval.
        let z = 1.959_963_984_540_054;
        let (nf, p) = (n as f64, k as f64 / n as f64);
        let denominator = 1.0 + z * z / nf;
        let centre = (p + z * z / (2.0 * nf)) / denominator;
        let half = z * (p * (1.0 - p) / nf + z * z / (4.0 * nf * nf)).sqrt() / denominator;
        Some(Share {
            k,
            n,
            low: if k == 0 {
                0.0
            } else {
                (centre - half).max(0.0)
            },
            high: if k == n {
                1.0
            } else {
                (centre + half).min(1.0)
            },
        })
    }

    pub fn ratio(&self) -> f64 {
        self.k as f64 / self.n as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_intervals_hold_the_share_and_stay_in_bounds() {
        let s = Share::of(8, 10).unwrap();
        assert!(s.low < 0.8 && 0.8 < s.high && s.high <= 1.0);
        assert!(
            (s.low - 0.490).abs() < 0.01 && (s.high - 0.943).abs() < 0.01,
            "{s:?}"
        );
        let all = Share::of(10, 10).unwrap();
        assert_eq!(all.high, 1.0);
        assert!(all.low > 0.6);
        assert_eq!(Share::of(0, 0), None);
    }
}
