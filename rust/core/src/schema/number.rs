//! Exact decimal view of JSON number literals.
//!
//! serde_json keeps the literal text of every number (feature `arbitrary_precision`), so numbers
//! are compared as decimals: `1 == 1.0 == 1e0`, `0.0075` is a multiple of `0.0001`, and integers
//! far beyond `u64` still order correctly.

use std::cmp::Ordering;
use std::hash::{Hash, Hasher};

use serde_json::Number;

/// Exponents beyond this are clamped; every finite literal a person or model writes is far inside.
const EXPONENT_LIMIT: i64 = 1_000_000_000_000_000;

/// `value = sign * 0.DIGITS * 10^magnitude`, where DIGITS is `head` followed by `tail`, with
/// neither leading nor trailing zeros. Zero has no digits.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Decimal<'a> {
    negative: bool,
    head: &'a [u8],
    tail: &'a [u8],
    magnitude: i64,
}

/// A parsed schema-side number, kept so validation never re-parses the schema.
#[derive(Clone, Debug)]
pub(crate) struct OwnedDecimal {
    negative: bool,
    digits: Box<[u8]>,
    magnitude: i64,
    approximate: f64,
    literal: Box<str>,
    /// The value, when it is an integer that fits `i64` (the common bound: `minimum: 1`).
    small: Option<i64>,
}

/// The value of a plain integer literal (`-?[0-9]{1,18}`, no fraction or exponent), which is how
/// most instance numbers are written; such literals fit `i64` and compare exactly as integers.
pub(crate) fn small_integer(literal: &str) -> Option<i64> {
    let bytes = literal.as_bytes();
    let (negative, digits) = match bytes.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, bytes),
    };
    if digits.is_empty() || digits.len() > 18 {
        return None;
    }
    let mut value: i64 = 0;
    for &digit in digits {
        if !digit.is_ascii_digit() {
            return None;
        }
        value = value * 10 + i64::from(digit - b'0');
    }
    Some(if negative { -value } else { value })
}

fn digit_run(bytes: &[u8]) -> usize {
    bytes.iter().take_while(|b| b.is_ascii_digit()).count()
}

fn trim_leading_zeros(digits: &[u8]) -> &[u8] {
    let zeros = digits.iter().take_while(|&&b| b == b'0').count();
    &digits[zeros..]
}

fn trim_trailing_zeros(digits: &[u8]) -> &[u8] {
    let zeros = digits.iter().rev().take_while(|&&b| b == b'0').count();
    &digits[..digits.len() - zeros]
}

fn parse_exponent(digits: &[u8], negative: bool) -> i64 {
    let mut value: i64 = 0;
    for &digit in digits {
        value = value
            .saturating_mul(10)
            .saturating_add(i64::from(digit - b'0'));
        if value > EXPONENT_LIMIT {
            value = EXPONENT_LIMIT;
            break;
        }
    }
    if negative {
        -value
    } else {
        value
    }
}

impl<'a> Decimal<'a> {
    /// Parses a JSON number literal; `None` if the text is not one.
    pub(crate) fn parse(literal: &'a str) -> Option<Decimal<'a>> {
        let bytes = literal.as_bytes();
        let (negative, rest) = match bytes.split_first() {
            Some((b'-', rest)) => (true, rest),
            _ => (false, bytes),
        };
        let int_len = digit_run(rest);
        if int_len == 0 {
            return None;
        }
        let (integer, mut rest) = rest.split_at(int_len);
        let mut fraction: &[u8] = &[];
        if let Some((b'.', after)) = rest.split_first() {
            let frac_len = digit_run(after);
            if frac_len == 0 {
                return None;
            }
            let (digits, after_digits) = after.split_at(frac_len);
            fraction = digits;
            rest = after_digits;
        }
        let mut exponent = 0;
        if let Some((b'e' | b'E', after)) = rest.split_first() {
            let (exp_negative, after) = match after.split_first() {
                Some((b'-', after)) => (true, after),
                Some((b'+', after)) => (false, after),
                _ => (false, after),
            };
            let exp_len = digit_run(after);
            if exp_len == 0 || exp_len != after.len() {
                return None;
            }
            exponent = parse_exponent(after, exp_negative);
            rest = &[];
        }
        if !rest.is_empty() {
            return None;
        }

        let integer = trim_leading_zeros(integer);
        let (head, tail, magnitude) = if integer.is_empty() {
            let significant = trim_leading_zeros(fraction);
            let skipped = (fraction.len() - significant.len()) as i64;
            (
                trim_trailing_zeros(significant),
                &[][..],
                exponent - skipped,
            )
        } else {
            let tail = trim_trailing_zeros(fraction);
            let head = if tail.is_empty() {
                trim_trailing_zeros(integer)
            } else {
                integer
            };
            (head, tail, exponent + integer.len() as i64)
        };
        Some(Decimal {
            negative,
            head,
            tail,
            magnitude,
        })
    }

    pub(crate) fn from_number(number: &'a Number) -> Option<Decimal<'a>> {
        Decimal::parse(number.as_str())
    }

    fn digit_count(&self) -> usize {
        self.head.len() + self.tail.len()
    }

    fn digits(&self) -> impl Iterator<Item = u8> + 'a {
        self.head
            .iter()
            .chain(self.tail.iter())
            .map(|digit| digit - b'0')
    }

    pub(crate) fn is_zero(&self) -> bool {
        self.digit_count() == 0
    }

    fn signum(&self) -> i8 {
        if self.is_zero() {
            0
        } else if self.negative {
            -1
        } else {
            1
        }
    }

    pub(crate) fn is_integer(&self) -> bool {
        self.is_zero() || self.digit_count() as i64 <= self.magnitude
    }

    fn compare_absolute(&self, other: &Decimal<'_>) -> Ordering {
        self.magnitude
            .cmp(&other.magnitude)
            .then_with(|| self.digits().cmp(other.digits()))
    }

    pub(crate) fn compare(&self, other: &Decimal<'_>) -> Ordering {
        let (left_sign, right_sign) = (self.signum(), other.signum());
        if left_sign != right_sign || left_sign == 0 {
            return left_sign.cmp(&right_sign);
        }
        let absolute = self.compare_absolute(other);
        if self.negative {
            absolute.reverse()
        } else {
            absolute
        }
    }

    /// Saturating conversion of a non-negative integer; `None` for negatives and fractions.
    pub(crate) fn to_u64(self) -> Option<u64> {
        if self.is_zero() {
            return Some(0);
        }
        if self.negative || !self.is_integer() {
            return None;
        }
        if self.magnitude > 20 {
            return Some(u64::MAX);
        }
        let mut value: u64 = 0;
        for digit in self.digits() {
            value = value.saturating_mul(10).saturating_add(u64::from(digit));
        }
        for _ in self.digit_count() as i64..self.magnitude {
            value = value.saturating_mul(10);
        }
        Some(value)
    }

    /// The value as `i64`, when it is an integer that fits.
    fn to_i64(self) -> Option<i64> {
        if !self.is_integer() || self.magnitude > 18 {
            return None;
        }
        let mut value: i64 = 0;
        for digit in self.digits() {
            value = value * 10 + i64::from(digit);
        }
        for _ in self.digit_count() as i64..self.magnitude {
            value *= 10;
        }
        Some(if self.negative { -value } else { value })
    }

    /// Exact `self / divisor` is an integer; `None` when the divisor has too many significant
    /// digits to decide exactly (more than 19).
    pub(crate) fn is_multiple_of(&self, divisor: &Decimal<'_>) -> Option<bool> {
        if self.is_zero() {
            return Some(true);
        }
        if divisor.is_zero() || divisor.digit_count() > 19 {
            return None;
        }
        let mut modulus: u64 = 0;
        for digit in divisor.digits() {
            modulus = modulus * 10 + u64::from(digit);
        }
        // value = X * 10^(magnitude - digit_count); both X and the divisor's digits end in a
        // non-zero digit, so X is not divisible by 10 and a negative shift can never divide.
        let lowest = self.magnitude - self.digit_count() as i64;
        let divisor_lowest = divisor.magnitude - divisor.digit_count() as i64;
        let shift = lowest.saturating_sub(divisor_lowest);
        if shift < 0 {
            return Some(false);
        }
        if modulus == 1 {
            return Some(true);
        }
        let modulus = u128::from(modulus);
        let mut remainder: u128 = 0;
        for digit in self.digits() {
            remainder = (remainder * 10 + u128::from(digit)) % modulus;
        }
        let scaled = remainder * power_mod(10, shift as u64, modulus) % modulus;
        Some(scaled == 0)
    }
}

fn power_mod(base: u128, mut exponent: u64, modulus: u128) -> u128 {
    let mut result = 1 % modulus;
    let mut base = base % modulus;
    while exponent > 0 {
        if exponent & 1 == 1 {
            result = result * base % modulus;
        }
        base = base * base % modulus;
        exponent >>= 1;
    }
    result
}

impl OwnedDecimal {
    pub(crate) fn from_number(number: &Number) -> Option<OwnedDecimal> {
        let view = Decimal::from_number(number)?;
        let digits: Vec<u8> = view.head.iter().chain(view.tail.iter()).copied().collect();
        Some(OwnedDecimal {
            negative: view.negative,
            digits: digits.into_boxed_slice(),
            magnitude: view.magnitude,
            approximate: number.as_f64().unwrap_or(f64::NAN),
            literal: number.as_str().into(),
            small: view.to_i64(),
        })
    }

    pub(crate) fn view(&self) -> Decimal<'_> {
        Decimal {
            negative: self.negative,
            head: &self.digits,
            tail: &[],
            magnitude: self.magnitude,
        }
    }

    pub(crate) fn is_positive(&self) -> bool {
        !self.negative && !self.digits.is_empty()
    }

    pub(crate) fn approximate(&self) -> f64 {
        self.approximate
    }

    pub(crate) fn literal(&self) -> &str {
        &self.literal
    }
}

fn approximate(literal: &str) -> Option<f64> {
    literal
        .parse::<f64>()
        .ok()
        .filter(|value| value.is_finite())
}

/// Orders an instance number literal against a schema number, exactly when the literal parses.
pub(crate) fn compare_to(instance: &str, bound: &OwnedDecimal) -> Option<Ordering> {
    if let (Some(value), Some(bound)) = (small_integer(instance), bound.small) {
        return Some(value.cmp(&bound));
    }
    match Decimal::parse(instance) {
        Some(value) => Some(value.compare(&bound.view())),
        None => approximate(instance)?.partial_cmp(&bound.approximate()),
    }
}

pub(crate) fn is_integer(literal: &str) -> bool {
    if !literal.contains(['.', 'e', 'E']) {
        return true;
    }
    match Decimal::parse(literal) {
        Some(value) => value.is_integer(),
        None => approximate(literal).is_some_and(|value| value.fract() == 0.0),
    }
}

pub(crate) fn numbers_equal(left: &str, right: &str) -> bool {
    if left == right {
        return true;
    }
    match (Decimal::parse(left), Decimal::parse(right)) {
        (Some(left), Some(right)) => left.compare(&right) == Ordering::Equal,
        _ => approximate(left).is_some() && approximate(left) == approximate(right),
    }
}

/// Hashes consistently with [`numbers_equal`]: equal values give equal hashes.
pub(crate) fn hash_number<H: Hasher>(literal: &str, state: &mut H) {
    match Decimal::parse(literal) {
        Some(value) => {
            value.signum().hash(state);
            for digit in value.digits() {
                state.write_u8(digit);
            }
            if !value.is_zero() {
                value.magnitude.hash(state);
            }
        }
        None => approximate(literal).map(f64::to_bits).hash(state),
    }
}

pub(crate) fn is_multiple_of(instance: &str, divisor: &OwnedDecimal) -> bool {
    if let (Some(value), Some(divisor)) = (small_integer(instance), divisor.small) {
        if divisor > 0 {
            return value % divisor == 0;
        }
    }
    if let Some(value) = Decimal::parse(instance) {
        if let Some(exact) = value.is_multiple_of(&divisor.view()) {
            return exact;
        }
    }
    let Some(value) = approximate(instance) else {
        return false;
    };
    let quotient = value / divisor.approximate();
    quotient.is_finite() && quotient.fract() == 0.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decimal(text: &str) -> Decimal<'_> {
        Decimal::parse(text).expect("valid literal")
    }

    #[test]
    fn compares_equal_spellings() {
        for (left, right) in [
            ("1", "1.0"),
            ("100", "1e2"),
            ("0.5", "5e-1"),
            ("-0", "0.000"),
            ("9007199254740992", "9007199254740992.0"),
            ("1.50", "15E-1"),
        ] {
            assert_eq!(
                decimal(left).compare(&decimal(right)),
                Ordering::Equal,
                "{left} {right}"
            );
        }
    }

    #[test]
    fn orders_big_and_small_numbers() {
        assert_eq!(
            decimal("18446744073709551600").compare(&decimal("18446744073709551615")),
            Ordering::Less
        );
        assert_eq!(
            decimal("-18446744073709551600").compare(&decimal("-18446744073709551615")),
            Ordering::Greater
        );
        assert_eq!(
            decimal("123456789012345678901234567890")
                .compare(&decimal("123456789012345678901234567889")),
            Ordering::Greater
        );
        assert_eq!(decimal("0.001").compare(&decimal("0.01")), Ordering::Less);
        assert_eq!(decimal("-1").compare(&decimal("0")), Ordering::Less);
        assert_eq!(decimal("1e-400").compare(&decimal("0")), Ordering::Greater);
    }

    #[test]
    fn recognises_integers() {
        for text in [
            "0",
            "1.0",
            "1e2",
            "1.5e1",
            "-12345678901234567890123",
            "0.0",
        ] {
            assert!(decimal(text).is_integer(), "{text}");
        }
        for text in ["0.5", "1.5", "1e-1", "123.000001"] {
            assert!(!decimal(text).is_integer(), "{text}");
        }
    }

    #[test]
    fn multiples_are_exact() {
        let cases = [
            ("0.0075", "0.0001", true),
            ("0.00751", "0.0001", false),
            ("4.5", "1.5", true),
            ("35", "1.5", false),
            ("1e308", "0.123456789", false),
            ("1e308", "0.5", true),
            ("12391239123", "1e-8", true),
            ("10", "3", false),
            ("-9", "3", true),
            ("0", "7", true),
        ];
        for (value, divisor, expected) in cases {
            assert_eq!(
                decimal(value).is_multiple_of(&decimal(divisor)),
                Some(expected),
                "{value} / {divisor}"
            );
        }
    }

    #[test]
    fn rejects_malformed_literals() {
        for text in ["", "-", "1.", ".5", "1e", "1e+", "01x", "1.2.3", "NaN"] {
            assert!(Decimal::parse(text).is_none(), "{text}");
        }
    }

    #[test]
    fn integer_fast_paths_agree_with_decimals() {
        let bounds = [
            "0",
            "1",
            "-1",
            "15",
            "1e3",
            "2.0",
            "-7.5",
            "0.5",
            "9223372036854775807",
        ];
        let values = [
            "0",
            "-0",
            "1",
            "-1",
            "14",
            "15",
            "30",
            "999999999999999999",
            "-999999999999999999",
            "1000",
        ];
        for bound in bounds {
            let owned =
                OwnedDecimal::from_number(&bound.parse().expect("number")).expect("decimal");
            for value in values {
                assert_eq!(
                    compare_to(value, &owned),
                    Some(decimal(value).compare(&decimal(bound))),
                    "{value} vs {bound}"
                );
                if owned.is_positive() {
                    assert_eq!(
                        is_multiple_of(value, &owned),
                        decimal(value)
                            .is_multiple_of(&decimal(bound))
                            .expect("exact"),
                        "{value} % {bound}"
                    );
                }
                assert!(is_integer(value));
            }
        }
        assert_eq!(small_integer("1234567890123456789"), None);
        assert_eq!(small_integer("-12"), Some(-12));
        assert_eq!(small_integer("1.0"), None);
        assert_eq!(small_integer("-"), None);
    }

    #[test]
    fn converts_counts() {
        assert_eq!(decimal("2.0").to_u64(), Some(2));
        assert_eq!(decimal("1e3").to_u64(), Some(1000));
        assert_eq!(decimal("1e40").to_u64(), Some(u64::MAX));
        assert_eq!(decimal("-1").to_u64(), None);
        assert_eq!(decimal("1.5").to_u64(), None);
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        fn scaled(mantissa: i64, exponent: i32) -> String {
            format!("{mantissa}e{exponent}")
        }

        proptest! {
            #[test]
            fn ordering_matches_integers(left in any::<i64>(), right in any::<i64>(), exponent in -30i32..30) {
                let (left_text, right_text) = (left.to_string(), right.to_string());
                prop_assert_eq!(decimal(&left_text).compare(&decimal(&right_text)), left.cmp(&right));
                let (left_scaled, right_scaled) = (scaled(left, exponent), scaled(right, exponent));
                prop_assert_eq!(decimal(&left_scaled).compare(&decimal(&right_scaled)), left.cmp(&right));
            }

            #[test]
            fn spelling_does_not_change_value(mantissa in any::<i32>(), exponent in -20i32..20) {
                let plain = scaled(i64::from(mantissa), exponent);
                let shifted = format!("{}e{}", i64::from(mantissa) * 1000, exponent - 3);
                let fraction = format!("{}.000e{}", mantissa, exponent);
                prop_assert_eq!(decimal(&plain).compare(&decimal(&shifted)), Ordering::Equal);
                prop_assert_eq!(decimal(&plain).compare(&decimal(&fraction)), Ordering::Equal);
            }

            #[test]
            fn multiples_match_integer_remainders(value in any::<i64>(), divisor in 1i64..1_000_000, places in 0i32..12) {
                let exact = value % divisor == 0;
                let (value_text, divisor_text) = (value.to_string(), divisor.to_string());
                prop_assert_eq!(decimal(&value_text).is_multiple_of(&decimal(&divisor_text)), Some(exact));
                let (value_scaled, divisor_scaled) = (scaled(value, -places), scaled(divisor, -places));
                prop_assert_eq!(decimal(&value_scaled).is_multiple_of(&decimal(&divisor_scaled)), Some(exact));
            }

            #[test]
            fn integers_are_recognised(mantissa in any::<i64>(), places in 0u32..6) {
                let text = scaled(mantissa, -(places as i32));
                prop_assert_eq!(decimal(&text).is_integer(), mantissa % 10i64.pow(places) == 0);
            }

            #[test]
            fn parsing_never_panics(text in "[-+0-9.eE]{0,12}|\\PC{0,12}") {
                let _ = Decimal::parse(&text).map(|value| (value.is_integer(), value.to_u64()));
            }
        }
    }
}
