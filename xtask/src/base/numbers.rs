//! Numbers as the reports and messages print them: counts grouped by thousands, times in ms to
//! three significant figures.

/// `1234567` as `1,234,567`.
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A value to three significant figures, as the histograms hold times in ms: `123`, `12.3`,
/// `1.23` (ms, or a ratio).
pub fn num(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_groups_digits_by_three() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(thousands(25_000_000_000), "25,000,000,000");
    }

    #[test]
    fn num_keeps_three_significant_figures() {
        assert_eq!(num(123.4), "123");
        assert_eq!(num(12.34), "12.3");
        assert_eq!(num(1.234), "1.23");
    }
}

/// `x` with the noise of its last bits taken off when it is a number of at most 6 decimals but
/// for them (`109.99999999999999`, 220 ÷ 2 summed back: 110); any other number as it is.
pub fn without_float_noise(x: f64) -> f64 {
    let short = (x * 1e6).round() / 1e6;
    match (x - short).abs() <= 1e-9 * x.abs().max(1.0) {
        true => short,
        false => x,
    }
}

#[cfg(test)]
mod noise_tests {
    use super::without_float_noise;

    #[test]
    fn float_noise_goes_and_real_digits_stay() {
        assert_eq!(without_float_noise(109.99999999999999).to_string(), "110");
        assert_eq!(without_float_noise(220.00000000000003).to_string(), "220");
        assert_eq!(without_float_noise(12.5).to_string(), "12.5");
        assert_eq!(
            without_float_noise(19.595835884874464).to_string(),
            "19.595835884874464"
        );
    }
}
