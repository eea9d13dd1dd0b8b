//! Ages as kubectl prints them (`45s`, `5m10s`, `3h`, `2d4h`), measured against the state's
//! event time, never the wall clock.
//!
//! The rounding follows apimachinery's `duration.HumanDuration`, so the same two timestamps give
//! the same text as kubectl would.

use chrono::{DateTime, Duration, Utc};

/// The age of something that happened at `then`, as seen at event time `now`; `<unknown>` (as
/// kubectl prints for a missing time) when no event has been folded yet.
pub(crate) fn age(now: Option<DateTime<Utc>>, then: DateTime<Utc>) -> String {
    match now {
        Some(now) => human_duration(now - then),
        None => "<unknown>".to_owned(),
    }
}

/// apimachinery's `HumanDuration`: about two significant figures.
pub fn human_duration(duration: Duration) -> String {
    let seconds = duration.num_seconds();
    if seconds < -1 {
        return "<invalid>".to_owned();
    }
    if seconds < 0 {
        return "0s".to_owned();
    }
    if seconds < 60 * 2 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        return with_remainder(minutes, "m", seconds % 60, "s");
    }
    if minutes < 60 * 3 {
        return format!("{minutes}m");
    }
    let hours = minutes / 60;
    if hours < 8 {
        return with_remainder(hours, "h", minutes % 60, "m");
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    let days = hours / 24;
    if hours < 24 * 8 {
        return with_remainder(days, "d", hours % 24, "h");
    }
    if hours < 24 * 365 * 2 {
        return format!("{days}d");
    }
    let years = days / 365;
    if hours < 24 * 365 * 8 {
        return with_remainder(years, "y", days % 365, "d");
    }
    format!("{years}y")
}

fn with_remainder(major: i64, major_unit: &str, minor: i64, minor_unit: &str) -> String {
    if minor == 0 {
        format!("{major}{major_unit}")
    } else {
        format!("{major}{major_unit}{minor}{minor_unit}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(seconds: i64) -> String {
        human_duration(Duration::seconds(seconds))
    }

    #[test]
    fn matches_kubectls_rounding() {
        assert_eq!(text(-5), "<invalid>");
        assert_eq!(text(0), "0s");
        assert_eq!(text(45), "45s");
        assert_eq!(text(119), "119s");
        assert_eq!(text(120), "2m");
        assert_eq!(text(310), "5m10s");
        assert_eq!(text(600), "10m");
        assert_eq!(text(3 * 3600 - 1), "179m");
        assert_eq!(text(3 * 3600), "3h");
        assert_eq!(text(3 * 3600 + 1800), "3h30m");
        assert_eq!(text(20 * 3600), "20h");
        assert_eq!(text(2 * 86400), "2d");
        assert_eq!(text(2 * 86400 + 4 * 3600), "2d4h");
        assert_eq!(text(30 * 86400), "30d");
        assert_eq!(text(3 * 365 * 86400 + 86400), "3y1d");
        assert_eq!(text(9 * 365 * 86400), "9y");
    }
}
