//! Kubernetes resource quantities (`2`, `500m`, `20Gi`, `1.5k`, `1e3`) as exact integers in
//! thousandths, so that property comparisons and sorting never touch floating point.

/// A quantity in thousandths of its unit (`"2"` → 2000, `"500m"` → 500, `"1Ki"` → 1024000).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Quantity(pub i128);

const BINARY: [(&str, u32); 6] = [
    ("Ki", 1),
    ("Mi", 2),
    ("Gi", 3),
    ("Ti", 4),
    ("Pi", 5),
    ("Ei", 6),
];
const DECIMAL: [(&str, u32); 6] = [("k", 1), ("M", 2), ("G", 3), ("T", 4), ("P", 5), ("E", 6)];

impl Quantity {
    /// Parses the Kubernetes quantity syntax.
    ///
    /// # Errors
    /// A message naming the text when it is not a quantity.
    pub fn parse(text: &str) -> Result<Self, String> {
        let bad = || format!("{text:?} is not a Kubernetes quantity");
        let text = text.trim();
        let (number, multiplier_milli, exponent) = split_suffix(text).ok_or_else(bad)?;
        let (negative, digits) = match number.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, number.strip_prefix('+').unwrap_or(number)),
        };
        let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
        if whole.is_empty() && fraction.is_empty() {
            return Err(bad());
        }
        let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if !all_digits(whole) || !all_digits(fraction) || whole.len() + fraction.len() > 30 {
            return Err(bad());
        }
        // value = (whole.fraction) × 10^exponent × multiplier, in thousandths.
        let mantissa: i128 = format!("{whole}{fraction}").parse().unwrap_or(0);
        let scale = i32::try_from(fraction.len()).map_err(|_| bad())?;
        let mut value = mantissa.checked_mul(multiplier_milli).ok_or_else(bad)?;
        let shift = exponent - scale;
        if shift >= 0 {
            let factor = 10_i128.checked_pow(shift.unsigned_abs()).ok_or_else(bad)?;
            value = value.checked_mul(factor).ok_or_else(bad)?;
        } else {
            // Kubernetes rounds quantities up to its smallest unit; thousandths are ours.
            let divisor = 10_i128.checked_pow(shift.unsigned_abs()).ok_or_else(bad)?;
            value = (value + divisor - 1) / divisor;
        }
        Ok(Quantity(if negative { -value } else { value }))
    }
}

/// Splits off the suffix: returns (number text, multiplier in thousandths, decimal exponent).
fn split_suffix(text: &str) -> Option<(&str, i128, i32)> {
    for (suffix, power) in BINARY {
        if let Some(number) = text.strip_suffix(suffix) {
            return Some((number, 1000 * 1024_i128.pow(power), 0));
        }
    }
    if let Some(number) = text.strip_suffix('m') {
        return Some((number, 1, 0));
    }
    for (suffix, power) in DECIMAL {
        if let Some(number) = text.strip_suffix(suffix) {
            return Some((number, 1000, 3 * i32::try_from(power).ok()?));
        }
    }
    if let Some((number, exponent)) = text.split_once(['e', 'E']) {
        return Some((number, 1000, exponent.parse().ok()?));
    }
    Some((text, 1000, 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_forms_kubernetes_writes() {
        assert_eq!(Quantity::parse("2"), Ok(Quantity(2000)));
        assert_eq!(Quantity::parse("500m"), Ok(Quantity(500)));
        assert_eq!(Quantity::parse("1Ki"), Ok(Quantity(1_024_000)));
        assert_eq!(
            Quantity::parse("20Gi"),
            Ok(Quantity(20 * 1024 * 1024 * 1024 * 1000))
        );
        assert_eq!(
            Quantity::parse("800Mi"),
            Ok(Quantity(800 * 1024 * 1024 * 1000))
        );
        assert_eq!(Quantity::parse("1.5k"), Ok(Quantity(1_500_000)));
        assert_eq!(Quantity::parse("1e3"), Ok(Quantity(1_000_000)));
        assert_eq!(Quantity::parse("0.1"), Ok(Quantity(100)));
        assert_eq!(Quantity::parse("-3"), Ok(Quantity(-3000)));
        assert!(Quantity::parse("3 cores").is_err());
        assert!(Quantity::parse("").is_err());
        assert!(Quantity::parse("Gi").is_err());
    }

    #[test]
    fn compares_across_units() {
        let parse = |t| Quantity::parse(t).expect("valid");
        assert!(parse("1Gi") > parse("1G"));
        assert!(parse("999m") < parse("1"));
        assert_eq!(parse("1000m"), parse("1"));
    }
}
