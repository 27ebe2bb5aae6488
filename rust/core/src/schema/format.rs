//! String formats checked by the `format` keyword. Formats not listed here are annotations.

use super::ecma_regex::{self, RegexProblem, Strictness};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Format {
    DateTime,
    Date,
    Time,
    Duration,
    Email,
    IdnEmail,
    Hostname,
    Ipv4,
    Ipv6,
    Uri,
    UriReference,
    Iri,
    IriReference,
    UriTemplate,
    Uuid,
    JsonPointer,
    RelativeJsonPointer,
    Regex,
}

impl Format {
    pub(crate) fn from_name(name: &str) -> Option<Format> {
        Some(match name {
            "date-time" => Format::DateTime,
            "date" => Format::Date,
            "time" => Format::Time,
            "duration" => Format::Duration,
            "email" => Format::Email,
            "idn-email" => Format::IdnEmail,
            "hostname" => Format::Hostname,
            "ipv4" => Format::Ipv4,
            "ipv6" => Format::Ipv6,
            "uri" => Format::Uri,
            "uri-reference" => Format::UriReference,
            "iri" => Format::Iri,
            "iri-reference" => Format::IriReference,
            "uri-template" => Format::UriTemplate,
            "uuid" => Format::Uuid,
            "json-pointer" => Format::JsonPointer,
            "relative-json-pointer" => Format::RelativeJsonPointer,
            "regex" => Format::Regex,
            _ => return None,
        })
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Format::DateTime => "date-time",
            Format::Date => "date",
            Format::Time => "time",
            Format::Duration => "duration",
            Format::Email => "email",
            Format::IdnEmail => "idn-email",
            Format::Hostname => "hostname",
            Format::Ipv4 => "ipv4",
            Format::Ipv6 => "ipv6",
            Format::Uri => "uri",
            Format::UriReference => "uri-reference",
            Format::Iri => "iri",
            Format::IriReference => "iri-reference",
            Format::UriTemplate => "uri-template",
            Format::Uuid => "uuid",
            Format::JsonPointer => "json-pointer",
            Format::RelativeJsonPointer => "relative-json-pointer",
            Format::Regex => "regex",
        }
    }

    pub(crate) fn is_valid(self, text: &str) -> bool {
        match self {
            Format::DateTime => is_date_time(text),
            Format::Date => is_date(text.as_bytes()),
            Format::Time => is_time(text.as_bytes()),
            Format::Duration => is_duration(text.as_bytes()),
            Format::Email => is_email(text, false),
            Format::IdnEmail => is_email(text, true),
            Format::Hostname => is_hostname(text),
            Format::Ipv4 => is_ipv4(text),
            Format::Ipv6 => is_ipv6(text),
            Format::Uri => is_uri(text, UriKind::Absolute, false),
            Format::UriReference => is_uri(text, UriKind::Reference, false),
            Format::Iri => is_uri(text, UriKind::Absolute, true),
            Format::IriReference => is_uri(text, UriKind::Reference, true),
            Format::UriTemplate => is_uri_template(text),
            Format::Uuid => is_uuid(text.as_bytes()),
            Format::JsonPointer => is_json_pointer(text),
            Format::RelativeJsonPointer => is_relative_json_pointer(text),
            Format::Regex => !matches!(
                ecma_regex::translate(text, Strictness::UnicodeMode),
                Err(RegexProblem::Invalid(_))
            ),
        }
    }
}

fn two_digits(bytes: &[u8], at: usize) -> Option<u32> {
    let high = *bytes.get(at)?;
    let low = *bytes.get(at + 1)?;
    if high.is_ascii_digit() && low.is_ascii_digit() {
        Some(u32::from(high - b'0') * 10 + u32::from(low - b'0'))
    } else {
        None
    }
}

fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// RFC 3339 `full-date`.
fn is_date(bytes: &[u8]) -> bool {
    if bytes.len() != 10 || bytes[4] != b'-' || bytes[7] != b'-' {
        return false;
    }
    let (Some(century), Some(year_in_century), Some(month), Some(day)) = (
        two_digits(bytes, 0),
        two_digits(bytes, 2),
        two_digits(bytes, 5),
        two_digits(bytes, 8),
    ) else {
        return false;
    };
    let year = century * 100 + year_in_century;
    (1..=12).contains(&month) && day >= 1 && day <= days_in_month(year, month)
}

/// RFC 3339 `full-time`, including the rule that a leap second falls on 23:59:60 UTC.
fn is_time(bytes: &[u8]) -> bool {
    if bytes.len() < 9 || bytes[2] != b':' || bytes[5] != b':' {
        return false;
    }
    let (Some(hour), Some(minute), Some(second)) = (
        two_digits(bytes, 0),
        two_digits(bytes, 3),
        two_digits(bytes, 6),
    ) else {
        return false;
    };
    if hour > 23 || minute > 59 || second > 60 {
        return false;
    }
    let mut rest = &bytes[8..];
    if let Some((b'.', fraction)) = rest.split_first() {
        let digits = fraction.iter().take_while(|b| b.is_ascii_digit()).count();
        if digits == 0 {
            return false;
        }
        rest = &fraction[digits..];
    }
    let offset_minutes: i32 = match rest {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), _, _, b':', _, _] => {
            let (Some(offset_hour), Some(offset_minute)) =
                (two_digits(rest, 1), two_digits(rest, 4))
            else {
                return false;
            };
            if offset_hour > 23 || offset_minute > 59 {
                return false;
            }
            let minutes = (offset_hour * 60 + offset_minute) as i32;
            if *sign == b'-' {
                -minutes
            } else {
                minutes
            }
        }
        _ => return false,
    };
    if second == 60 {
        let utc_minutes = ((hour * 60 + minute) as i32 - offset_minutes).rem_euclid(24 * 60);
        return utc_minutes == 23 * 60 + 59;
    }
    true
}

fn is_date_time(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.len() > 11
        && matches!(bytes[10], b'T' | b't')
        && is_date(&bytes[..10])
        && is_time(&bytes[11..])
}

/// RFC 3339 appendix A `duration`: `P` followed by weeks alone, or by contiguous runs of the
/// date units Y M D and (after `T`) the time units H M S.
fn is_duration(bytes: &[u8]) -> bool {
    let Some((b'P', body)) = bytes.split_first() else {
        return false;
    };
    let (date_part, time_part) = match body.iter().position(|&b| b == b'T') {
        Some(split) => (&body[..split], Some(&body[split + 1..])),
        None => (body, None),
    };
    if time_part.is_none() && is_weeks(date_part) {
        return true;
    }
    let Some(date_units) = contiguous_units(date_part, b"YMD") else {
        return false;
    };
    match time_part {
        None => date_units > 0,
        Some(time_part) => contiguous_units(time_part, b"HMS").is_some_and(|count| count > 0),
    }
}

fn is_weeks(bytes: &[u8]) -> bool {
    match bytes.split_last() {
        Some((b'W', digits)) => !digits.is_empty() && digits.iter().all(u8::is_ascii_digit),
        _ => false,
    }
}

/// Counts `digits unit` elements whose units are consecutive entries of `order`; `None` if the
/// text is anything else.
fn contiguous_units(mut bytes: &[u8], order: &[u8]) -> Option<usize> {
    let mut previous: Option<usize> = None;
    let mut count = 0;
    while !bytes.is_empty() {
        let digits = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
        if digits == 0 {
            return None;
        }
        let unit = *bytes.get(digits)?;
        let index = order.iter().position(|&candidate| candidate == unit)?;
        if previous.is_some_and(|previous| index != previous + 1) {
            return None;
        }
        previous = Some(index);
        count += 1;
        bytes = &bytes[digits + 1..];
    }
    Some(count)
}

fn is_atext(character: char, international: bool) -> bool {
    character.is_ascii_alphanumeric()
        || "!#$%&'*+-/=?^_`{|}~".contains(character)
        || (international && !character.is_ascii())
}

/// RFC 5321 `Mailbox`: a dot-atom or quoted local part, then a host name or address literal.
/// `international` (idn-email, RFC 6531) also admits non-ASCII characters.
fn is_email(text: &str, international: bool) -> bool {
    let Some(at) = text.rfind('@') else {
        return false;
    };
    let (local, domain) = (&text[..at], &text[at + 1..]);
    let local_ok = if let Some(quoted) = local
        .strip_prefix('"')
        .and_then(|rest| rest.strip_suffix('"'))
    {
        is_quoted_content(quoted, international)
    } else {
        !local.is_empty()
            && local
                .split('.')
                .all(|atom| !atom.is_empty() && atom.chars().all(|c| is_atext(c, international)))
    };
    if !local_ok {
        return false;
    }
    if let Some(literal) = domain
        .strip_prefix('[')
        .and_then(|rest| rest.strip_suffix(']'))
    {
        return match literal.strip_prefix("IPv6:") {
            Some(address) => is_ipv6(address),
            None => is_ipv4(literal),
        };
    }
    if international {
        is_international_hostname(domain)
    } else {
        is_hostname(domain)
    }
}

fn is_quoted_content(quoted: &str, international: bool) -> bool {
    let mut characters = quoted.chars();
    while let Some(character) = characters.next() {
        match character {
            '\\' => match characters.next() {
                Some(escaped) if (' '..='~').contains(&escaped) => {}
                _ => return false,
            },
            '"' => return false,
            ' '..='~' => {}
            other if international && !other.is_ascii() => {}
            _ => return false,
        }
    }
    true
}

/// RFC 1123 host name: dot-separated labels of letters, digits and inner hyphens, at most 63
/// characters each and 253 in all.
fn is_hostname(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= 253
        && text.split('.').all(|label| {
            let bytes = label.as_bytes();
            !bytes.is_empty()
                && bytes.len() <= 63
                && bytes
                    .iter()
                    .all(|b| b.is_ascii_alphanumeric() || *b == b'-')
                && bytes.first() != Some(&b'-')
                && bytes.last() != Some(&b'-')
        })
}

/// A loose internationalised host name for idn-email: labels of letters, digits, hyphens and any
/// non-ASCII characters. Full IDNA2008 checks are out of scope.
fn is_international_hostname(text: &str) -> bool {
    !text.is_empty()
        && text.split('.').all(|label| {
            !label.is_empty()
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || !c.is_ascii())
        })
}

fn is_ipv4(text: &str) -> bool {
    let mut parts = 0;
    for part in text.split('.') {
        parts += 1;
        let bytes = part.as_bytes();
        if bytes.is_empty()
            || bytes.len() > 3
            || !bytes.iter().all(u8::is_ascii_digit)
            || (bytes.len() > 1 && bytes[0] == b'0')
        {
            return false;
        }
        let value = bytes
            .iter()
            .fold(0u32, |value, digit| value * 10 + u32::from(digit - b'0'));
        if value > 255 {
            return false;
        }
    }
    parts == 4
}

/// Counts the 16-bit groups in a colon-separated run; the last group may be an embedded IPv4
/// address (two groups) when `allow_ipv4_tail` is set.
fn ipv6_groups(text: &str, allow_ipv4_tail: bool) -> Option<usize> {
    if text.is_empty() {
        return Some(0);
    }
    let mut count = 0;
    let mut parts = text.split(':').peekable();
    while let Some(part) = parts.next() {
        let is_last = parts.peek().is_none();
        if is_last && allow_ipv4_tail && part.contains('.') {
            if !is_ipv4(part) {
                return None;
            }
            count += 2;
        } else if !part.is_empty() && part.len() <= 4 && part.bytes().all(|b| b.is_ascii_hexdigit())
        {
            count += 1;
        } else {
            return None;
        }
    }
    Some(count)
}

fn is_ipv6(text: &str) -> bool {
    match text.find("::") {
        Some(split) => {
            let (left, right) = (&text[..split], &text[split + 2..]);
            if right.contains("::") {
                return false;
            }
            let (Some(left_groups), Some(right_groups)) =
                (ipv6_groups(left, false), ipv6_groups(right, true))
            else {
                return false;
            };
            left_groups + right_groups <= 7
        }
        None => ipv6_groups(text, true) == Some(8),
    }
}

fn is_uuid(bytes: &[u8]) -> bool {
    bytes.len() == 36
        && bytes.iter().enumerate().all(|(index, byte)| match index {
            8 | 13 | 18 | 23 => *byte == b'-',
            _ => byte.is_ascii_hexdigit(),
        })
}

fn is_json_pointer(text: &str) -> bool {
    if text.is_empty() {
        return true;
    }
    if !text.starts_with('/') {
        return false;
    }
    let bytes = text.as_bytes();
    bytes
        .iter()
        .enumerate()
        .all(|(index, &byte)| byte != b'~' || matches!(bytes.get(index + 1), Some(b'0' | b'1')))
}

fn is_relative_json_pointer(text: &str) -> bool {
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || (digits > 1 && text.starts_with('0')) {
        return false;
    }
    let rest = &text[digits..];
    rest == "#" || is_json_pointer(rest)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum UriKind {
    Absolute,
    Reference,
}

fn is_unreserved(character: char, international: bool) -> bool {
    character.is_ascii_alphanumeric()
        || matches!(character, '-' | '.' | '_' | '~')
        || (international && !character.is_ascii() && !character.is_control())
}

fn is_sub_delim(character: char) -> bool {
    matches!(
        character,
        '!' | '$' | '&' | '\'' | '(' | ')' | '*' | '+' | ',' | ';' | '='
    )
}

/// Every character is allowed by `allowed` or starts a well-formed percent-encoding.
fn all_chars(text: &str, allowed: impl Fn(char) -> bool) -> bool {
    let mut characters = text.chars();
    while let Some(character) = characters.next() {
        if character == '%' {
            let (Some(high), Some(low)) = (characters.next(), characters.next()) else {
                return false;
            };
            if !high.is_ascii_hexdigit() || !low.is_ascii_hexdigit() {
                return false;
            }
        } else if !allowed(character) {
            return false;
        }
    }
    true
}

fn is_pchar(character: char, international: bool) -> bool {
    is_unreserved(character, international)
        || is_sub_delim(character)
        || matches!(character, ':' | '@')
}

fn is_scheme(text: &str) -> bool {
    let mut characters = text.chars();
    characters
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic())
        && characters.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

fn is_authority(authority: &str, international: bool) -> bool {
    let (userinfo, host_port) = match authority.find('@') {
        Some(at) => (Some(&authority[..at]), &authority[at + 1..]),
        None => (None, authority),
    };
    if let Some(userinfo) = userinfo {
        if !all_chars(userinfo, |c| {
            is_unreserved(c, international) || is_sub_delim(c) || c == ':'
        }) {
            return false;
        }
    }
    let (host, port) = if let Some(bracketed) = host_port.strip_prefix('[') {
        let Some(close) = bracketed.find(']') else {
            return false;
        };
        let literal = &bracketed[..close];
        let literal_ok = if literal.starts_with(['v', 'V']) {
            is_ip_future(literal)
        } else {
            is_ipv6(literal)
        };
        if !literal_ok {
            return false;
        }
        match &bracketed[close + 1..] {
            "" => ("", None),
            rest => match rest.strip_prefix(':') {
                Some(port) => ("", Some(port)),
                None => return false,
            },
        }
    } else {
        match host_port.rfind(':') {
            Some(colon) => (&host_port[..colon], Some(&host_port[colon + 1..])),
            None => (host_port, None),
        }
    };
    port.is_none_or(|port| port.bytes().all(|b| b.is_ascii_digit()))
        && all_chars(host, |c| is_unreserved(c, international) || is_sub_delim(c))
}

fn is_ip_future(literal: &str) -> bool {
    let Some(rest) = literal.get(1..) else {
        return false;
    };
    let Some(dot) = rest.find('.') else {
        return false;
    };
    let (version, address) = (&rest[..dot], &rest[dot + 1..]);
    !version.is_empty()
        && version.bytes().all(|b| b.is_ascii_hexdigit())
        && !address.is_empty()
        && address
            .chars()
            .all(|c| is_unreserved(c, false) || is_sub_delim(c) || c == ':')
}

/// RFC 3986 URI or URI-reference; with `international`, the RFC 3987 IRI forms.
fn is_uri(text: &str, kind: UriKind, international: bool) -> bool {
    let (rest, fragment) = match text.find('#') {
        Some(hash) => (&text[..hash], Some(&text[hash + 1..])),
        None => (text, None),
    };
    let query_char = |c: char| is_pchar(c, international) || c == '/' || c == '?';
    if fragment.is_some_and(|fragment| !all_chars(fragment, query_char)) {
        return false;
    }
    let (rest, query) = match rest.find('?') {
        Some(question) => (&rest[..question], Some(&rest[question + 1..])),
        None => (rest, None),
    };
    if query.is_some_and(|query| !all_chars(query, query_char)) {
        return false;
    }
    let first_segment_end = rest.find('/').unwrap_or(rest.len());
    let (has_scheme, hierarchy) = match rest[..first_segment_end].find(':') {
        Some(colon) => {
            if !is_scheme(&rest[..colon]) {
                return false;
            }
            (true, &rest[colon + 1..])
        }
        None => (false, rest),
    };
    if kind == UriKind::Absolute && !has_scheme {
        return false;
    }
    let path = match hierarchy.strip_prefix("//") {
        Some(after) => {
            let authority_end = after.find('/').unwrap_or(after.len());
            if !is_authority(&after[..authority_end], international) {
                return false;
            }
            &after[authority_end..]
        }
        None => hierarchy,
    };
    all_chars(path, |c| is_pchar(c, international) || c == '/')
}

/// RFC 6570 URI template: literals and `{operator varspec,...}` expressions.
fn is_uri_template(text: &str) -> bool {
    let mut rest = text;
    while !rest.is_empty() {
        match rest.find(['{', '}']) {
            Some(brace) if rest.as_bytes()[brace] == b'}' => return false,
            Some(open) => {
                if !is_template_literal(&rest[..open]) {
                    return false;
                }
                let after = &rest[open + 1..];
                let Some(close) = after.find('}') else {
                    return false;
                };
                if !is_template_expression(&after[..close]) {
                    return false;
                }
                rest = &after[close + 1..];
            }
            None => return is_template_literal(rest),
        }
    }
    true
}

fn is_template_literal(text: &str) -> bool {
    all_chars(text, |c| {
        !c.is_control()
            && !matches!(
                c,
                ' ' | '"' | '<' | '>' | '\\' | '^' | '`' | '{' | '|' | '}' | '%'
            )
    })
}

fn is_template_expression(expression: &str) -> bool {
    let body = expression
        .strip_prefix(['+', '#', '.', '/', ';', '?', '&'])
        .unwrap_or(expression);
    !body.is_empty() && body.split(',').all(is_template_varspec)
}

fn is_template_varspec(varspec: &str) -> bool {
    let (name, modifier) = match varspec.find([':', '*']) {
        Some(index) => (&varspec[..index], &varspec[index..]),
        None => (varspec, ""),
    };
    let name_ok = !name.is_empty()
        && name.split('.').all(|part| {
            !part.is_empty() && all_chars(part, |c| c.is_ascii_alphanumeric() || c == '_')
        });
    let modifier_ok = match modifier.strip_prefix(':') {
        None => modifier.is_empty() || modifier == "*",
        Some(length) => {
            (1..=4).contains(&length.len())
                && !length.starts_with('0')
                && length.bytes().all(|b| b.is_ascii_digit())
        }
    };
    name_ok && modifier_ok
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_times() {
        assert!(Format::DateTime.is_valid("1998-12-31T15:59:60.123-08:00"));
        assert!(!Format::DateTime.is_valid("1998-12-31T23:58:60Z"));
        assert!(Format::Time.is_valid("00:29:60-23:30"));
        assert!(!Format::Date.is_valid("2100-02-29"));
        assert!(Format::Date.is_valid("2000-02-29"));
        assert!(Format::Duration.is_valid("P1Y2M3DT4H5M6S"));
        assert!(!Format::Duration.is_valid("P1Y2D"));
        assert!(!Format::Duration.is_valid("PT"));
        assert!(Format::Duration.is_valid("P2W"));
    }

    #[test]
    fn network_formats() {
        assert!(Format::Ipv6.is_valid("1:2:3:4:5:6:7::"));
        assert!(!Format::Ipv6.is_valid("1:2:3:4:5:6:7:8::"));
        assert!(Format::Ipv6.is_valid("::ffff:192.168.0.1"));
        assert!(Format::Email.is_valid("\"joe@bloggs\"@example.com"));
        assert!(Format::Uri.is_valid("http://-.~_!$&'()*+,;=:%40:80%2f::::::@example.com"));
        assert!(!Format::Uri.is_valid("http://example.com/%6G"));
        assert!(Format::UriReference.is_valid("./this:that"));
        assert!(!Format::UriReference.is_valid("1:b"));
        assert!(Format::UriTemplate.is_valid("{v:1000}"));
        assert!(!Format::UriTemplate.is_valid("{v:01}"));
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        const ALL: [Format; 18] = [
            Format::DateTime,
            Format::Date,
            Format::Time,
            Format::Duration,
            Format::Email,
            Format::IdnEmail,
            Format::Hostname,
            Format::Ipv4,
            Format::Ipv6,
            Format::Uri,
            Format::UriReference,
            Format::Iri,
            Format::IriReference,
            Format::UriTemplate,
            Format::Uuid,
            Format::JsonPointer,
            Format::RelativeJsonPointer,
            Format::Regex,
        ];

        proptest! {
            #[test]
            fn formats_never_panic(text in "[0-9a-fA-FTtZzPWYMDHSv:.+/@%#?~{}\\[\\]\"\\\\ -]{0,40}|\\PC{0,20}|.{0,20}") {
                for format in ALL {
                    let _ = format.is_valid(&text);
                    prop_assert_eq!(Format::from_name(format.name()), Some(format));
                }
            }
        }
    }
}
