//! A chat template reduced to the text it can write: what format detection searches.
//!
//! A Jinja chat template writes a format's markup as raw text between tags and as string literals
//! inside `{{ ... }}`, joined around expressions (`'<tool_call>' + tc.name + '\n'`). Detection does
//! not need to run the template, only to see those literal pieces in the order they would be
//! written: raw text is kept (with the whitespace control transformers renders chat templates
//! with: `trim_blocks`, `lstrip_blocks`, and `-` on either side of a tag), every string literal of
//! an output tag is kept unescaped, each other operand becomes one [`HOLE`] (something computed,
//! the name or the arguments), and statements and comments write nothing, so the markup on both
//! sides of an `{% endfor %}` joins as it does in the rendered text. Both branches of an `if` are
//! kept: the result is the union of what the template can write, not one rendering.

/// Stands for a value the template computes at that place.
pub const HOLE: char = '\u{1}';

#[derive(Clone, Copy, PartialEq)]
enum Tag {
    Output,
    Statement,
    Comment,
}

/// The literal text `template` can write, with [`HOLE`] where it writes an expression.
pub fn flatten(template: &str) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    let mut strip_next = false;
    let mut after_statement = false;
    while !rest.is_empty() {
        let (text, tag) = match find_tag(rest) {
            Some((at, tag)) => (&rest[..at], Some((tag, &rest[at..]))),
            None => (rest, None),
        };
        let mut text = text;
        if strip_next {
            text = text.trim_start();
        } else if after_statement {
            text = text.strip_prefix('\n').unwrap_or(text);
        }
        let Some((tag, from)) = tag else {
            out.push_str(text);
            break;
        };
        let trim_left = from[2..].starts_with('-');
        if trim_left {
            text = text.trim_end();
        } else if tag == Tag::Statement {
            text = lstrip_line(text);
        }
        out.push_str(text);
        let body_start = if trim_left { 3 } else { 2 };
        let close = match tag {
            Tag::Output => "}}",
            Tag::Statement => "%}",
            Tag::Comment => "#}",
        };
        let (body, after) = split_tag(&from[body_start..], close, tag != Tag::Comment);
        strip_next = body.ends_with('-');
        let body = body.strip_suffix('-').unwrap_or(body);
        if tag == Tag::Output {
            write_output(&mut out, body);
        }
        after_statement = tag != Tag::Output;
        rest = after;
    }
    out
}

fn find_tag(text: &str) -> Option<(usize, Tag)> {
    let mut search = 0;
    while let Some(at) = text[search..].find('{') {
        let at = search + at;
        match text.as_bytes().get(at + 1) {
            Some(b'{') => return Some((at, Tag::Output)),
            Some(b'%') => return Some((at, Tag::Statement)),
            Some(b'#') => return Some((at, Tag::Comment)),
            _ => search = at + 1,
        }
    }
    None
}

/// Whitespace from the start of the line up to a statement tag (`lstrip_blocks`).
fn lstrip_line(text: &str) -> &str {
    let line_start = text.rfind('\n').map_or(0, |i| i + 1);
    if text[line_start..].chars().all(|c| c == ' ' || c == '\t') {
        &text[..line_start]
    } else {
        text
    }
}

/// The tag's body (up to `close`, not inside a string literal when `strings`) and what follows.
fn split_tag<'a>(from: &'a str, close: &str, strings: bool) -> (&'a str, &'a str) {
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in from.char_indices() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
        } else if strings && (c == '\'' || c == '"') {
            quote = Some(c);
        } else if from[i..].starts_with(close) {
            return (&from[..i], &from[i + close.len()..]);
        }
    }
    (from, "")
}

/// An output tag's string literals, unescaped, with one [`HOLE`] for each run of other operands
/// (operators and grouping parentheses alone are not operands). A literal inside brackets or a
/// call's parentheses (`tool['type']`, `x.split('</think>')`) is part of an operand, not output.
fn write_output(out: &mut String, body: &str) {
    let mut chars = body.chars().peekable();
    let mut operand = false;
    // One entry per open bracket: whether literals inside it are output (grouping parentheses).
    let mut open: Vec<bool> = Vec::new();
    let mut last = ' ';
    while let Some(c) = chars.next() {
        let output = open.iter().all(|o| *o);
        if c == '\'' || c == '"' {
            let mut literal = String::new();
            while let Some(d) = chars.next() {
                match d {
                    '\\' => match chars.next() {
                        Some('n') => literal.push('\n'),
                        Some('t') => literal.push('\t'),
                        Some('r') => literal.push('\r'),
                        Some(e @ ('\\' | '\'' | '"')) => literal.push(e),
                        Some(e) => {
                            literal.push('\\');
                            literal.push(e);
                        }
                        None => {}
                    },
                    d if d == c => break,
                    d => literal.push(d),
                }
            }
            if output {
                if operand {
                    out.push(HOLE);
                    operand = false;
                }
                out.push_str(&literal);
            } else {
                operand = true;
            }
        } else if c == '(' || c == '[' {
            let call =
                c == '[' || last.is_alphanumeric() || last == '_' || last == ')' || last == ']';
            open.push(!call);
            operand |= call;
        } else if c == ')' || c == ']' {
            open.pop();
        } else if !(c.is_whitespace() || "+~".contains(c)) {
            operand = true;
        }
        if !c.is_whitespace() {
            last = c;
        }
    }
    if operand {
        out.push(HOLE);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_join_across_statements_and_expressions_become_holes() {
        let template = "{%- for tc in calls %}\n{{- '<tool_call>' + tc.name }}\n{% for k in a %}\n<arg_key>{{ k }}</arg_key>\n{% endfor %}</tool_call>{% endfor %}";
        assert_eq!(
            flatten(template),
            "<tool_call>\u{1}\n<arg_key>\u{1}</arg_key>\n</tool_call>"
        );
    }

    #[test]
    fn keys_and_call_arguments_are_not_output() {
        let template =
            "{{ '<a>' + tool['type'] + '<sep>' + (x if y else '') + c.split('</b>')[0] }}";
        assert_eq!(flatten(template), "<a>\u{1}<sep>\u{1}\u{1}");
    }

    #[test]
    fn escapes_comments_and_lstrip() {
        let template = "A\n  {% if x %}{# c '}} #}{{ \"\\\"q\\\"\\n\" }}B{{- ' }} ' -}}  C";
        assert_eq!(flatten(template), "A\n\"q\"\nB }} C");
    }
}
