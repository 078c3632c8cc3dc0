//! The A/A test of a judgement over sessions, written once: each point's sessions (in the order
//! they ran) split into two halves balanced in time (of each four, the first and last against
//! the middle two: for sessions 0 to 7, {0, 3, 4, 7} against {1, 2, 5, 6}), the halves judged
//! against each other as the real comparison judges (Welch's t on the logs, Benjamini–Hochberg
//! over the points). Nothing differs between the halves by construction, so a working comparison
//! calls about none; but with half the sessions a side the test is weak, so it also states what
//! it could have caught ([`HalvesTest::detectable`]) and what it can check, calibration: judged
//! alone at 5%, about 5% of the points' halves should differ ([`HalvesTest::alone`]).

use super::power::{self, POWER};
use super::sessions::{self, FALSE_DISCOVERY_RATE};
use super::{CONFIDENCE, median};

/// What the A/A test of halves found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HalvesTest {
    /// Points whose halves differ after Benjamini–Hochberg at the run's false discovery rate.
    pub called: usize,
    /// Points judged (two sessions or more in each half).
    pub judged: usize,
    /// Points whose halves differ at 5% judged alone.
    pub alone: usize,
    /// The difference between halves caught at one point with 80% power among the points judged
    /// (median over them); `None` when none was judged.
    pub detectable: Option<f64>,
}

impl HalvesTest {
    /// About how many points judged alone would differ by chance: 5% of those judged.
    pub fn alone_by_chance(&self) -> f64 {
        (FALSE_DISCOVERY_RATE * self.judged as f64).round()
    }
}

/// The A/A test over `points`, each the values of one point's sessions in the order they ran
/// (one value a session, positive).
pub fn halves_test(points: &[Vec<f64>]) -> HalvesTest {
    let changes: Vec<sessions::Change> = points
        .iter()
        .filter_map(|values| {
            let (mut first, mut second) = (Vec::new(), Vec::new());
            for (k, v) in values.iter().enumerate() {
                if matches!(k % 4, 0 | 3) {
                    first.push(*v);
                } else {
                    second.push(*v);
                }
            }
            sessions::change_between(&first, &second, CONFIDENCE)
        })
        .collect();
    let p_values: Vec<Option<f64>> = changes.iter().map(|c| Some(c.p_value)).collect();
    let called = sessions::benjamini_hochberg(&p_values, FALSE_DISCOVERY_RATE)
        .into_iter()
        .filter(|c| *c)
        .count();
    let judged = changes.len();
    let mut detectable: Vec<f64> = changes
        .iter()
        .map(|c| power::detectable(c.se, c.df, FALSE_DISCOVERY_RATE / judged as f64, POWER))
        .collect();
    detectable.sort_by(f64::total_cmp);
    HalvesTest {
        called,
        judged,
        alone: changes
            .iter()
            .filter(|c| c.p_value < FALSE_DISCOVERY_RATE)
            .count(),
        detectable: median(&detectable),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_halves_are_balanced_in_time_and_need_two_sessions_each() {
        // A drift through the run: sessions 0..8 at 1, 2, ..., 8. Balanced halves {0, 3, 4, 7}
        // and {1, 2, 5, 6} have equal means, so no drift is called.
        let drift: Vec<f64> = (1..=8).map(|k| (0.1 * k as f64).exp()).collect();
        let test = halves_test(&[drift]);
        assert_eq!((test.called, test.judged, test.alone), (0, 1, 0));
        // Three sessions give a half of one: nothing judged.
        let test = halves_test(&[vec![1.0, 1.1, 1.2]]);
        assert_eq!((test.called, test.judged), (0, 0));
        assert_eq!(test.detectable, None);
    }

    #[test]
    fn by_chance_about_five_in_a_hundred_halves_differ_alone() {
        let mut rng = fastrand::Rng::with_seed(4);
        let normal = |rng: &mut fastrand::Rng| {
            let (u, v) = (rng.f64().max(f64::MIN_POSITIVE), rng.f64());
            (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
        };
        let points: Vec<Vec<f64>> = (0..2000)
            .map(|_| (0..8).map(|_| (0.12 * normal(&mut rng)).exp()).collect())
            .collect();
        let test = halves_test(&points);
        assert_eq!(test.judged, 2000);
        // Welch's t on 4 v 4 sessions holds its level: about 100 of 2000.
        assert!((60..=140).contains(&test.alone), "{}", test.alone);
        assert!(test.called <= 2, "{}", test.called);
        // 12% noise, 4 v 4, among 2000 points: only a large difference is caught.
        let detectable = test.detectable.unwrap();
        assert!(detectable > 1.5, "{detectable}");
    }
}
