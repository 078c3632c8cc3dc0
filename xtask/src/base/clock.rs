//! The wall clock as the records write it: UTC in RFC 3339, and a compact form for names; and
//! elapsed time in the unit every record uses, milliseconds.

use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// Milliseconds since `start`, as results.csv records every duration.
pub fn ms_since(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1000.0
}

/// Now on the wall clock, in ms since 1970 (UTC), to the microsecond: what a shard's clock is
/// lined up by.
pub fn unix_ms_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
}

/// `(2026-11-29T23:15:02Z, 20261129T231502Z)`: RFC 3339 and a compact form for directory names.
pub fn utc_now() -> (String, String) {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    utc(secs)
}

/// RFC 3339 and the compact form of a time given in seconds since 1970.
pub fn utc(unix_secs: u64) -> (String, String) {
    let days = (unix_secs / 86_400) as i64;
    let secs_of_day = unix_secs % 86_400;
    let (year, month, day) = civil_from_days(days);
    let (h, m, s) = (secs_of_day / 3600, secs_of_day / 60 % 60, secs_of_day % 60);
    (
        format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}Z"),
        format!("{year:04}{month:02}{day:02}T{h:02}{m:02}{s:02}Z"),
    )
}

/// Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_formats_known_instants() {
        assert_eq!(utc(0).0, "1970-01-01T00:00:00Z");
        assert_eq!(utc(951_782_400).0, "2000-02-29T00:00:00Z");
        assert_eq!(
            utc(1_795_996_502),
            ("2026-11-29T23:55:02Z".into(), "20261129T235502Z".into())
        );
    }
}
