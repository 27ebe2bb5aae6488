//! Cases derived for every registered format from its spec and its matrix samples: what real
//! model output adds around a well-formed sample (stop texts, reasoning blocks, call-like text
//! in reasoning, lost wrapper tokens). A new format is covered as soon as it has a matrix.

use toolwire_core::formats;
use toolwire_core::message::Message;
use toolwire_core::spec::{Role, Syntax};
use toolwire_core::stream::{parse, ParserConfig};

use super::{config, shape, stream_chunks};
use crate::cases::{self, Case, Matrix};

fn syntax(matrix: &Matrix) -> &'static Syntax {
    &formats::lookup(matrix.format).unwrap().syntax
}

/// The samples of the common cases that read without issues.
fn clean_samples(matrix: &Matrix) -> Vec<(&'static str, &'static str)> {
    [
        ("plain_content", &matrix.plain_content),
        ("one_call", &matrix.one_call),
        ("parallel_calls", &matrix.parallel_calls),
        (
            "text_before_between_after",
            &matrix.text_before_between_after,
        ),
    ]
    .into_iter()
    .filter_map(|(name, case)| match case {
        Case::Sample { input, expect } if expect.issues.is_empty() => Some((name, *input)),
        _ => None,
    })
    .collect()
}

/// One-shot and char-by-char parses of `input`, which must agree.
fn parse_both(ctx: &str, config: &ParserConfig, input: &str) -> Message {
    let whole = parse(config, input);
    let chars: Vec<String> = input.chars().map(String::from).collect();
    let refs: Vec<&str> = chars.iter().map(String::as_str).collect();
    let (streamed, _) = stream_chunks(config, &refs);
    assert_eq!(shape(&streamed), shape(&whole), "{ctx}: char by char");
    whole
}

#[test]
fn stop_texts_at_the_end_of_the_output_are_dropped() {
    let mut checked = 0;
    for matrix in cases::all() {
        let config = config(&matrix);
        for stop in syntax(&matrix).stops {
            for (name, input) in clean_samples(&matrix) {
                let ctx = format!("{}/{name} + {stop:?}", matrix.format);
                let plain = parse(&config, input);
                for tail in ["", "\n", stop] {
                    let ended = parse_both(&ctx, &config, &format!("{input}{stop}{tail}"));
                    assert_eq!(shape(&ended), shape(&plain), "{ctx}{tail:?}");
                }
                checked += 1;
            }
        }
    }
    assert!(checked >= 100, "only {checked} stop cases");
}

#[test]
fn a_stop_text_before_more_output_is_content() {
    let mut checked = 0;
    for matrix in cases::all() {
        let config = config(&matrix);
        for stop in syntax(&matrix).stops {
            let ctx = format!("{}/{stop:?}", matrix.format);
            let input = format!("It is done.{stop} Then more text.");
            let message = parse_both(&ctx, &config, &input);
            assert_eq!(message.content, input, "{ctx}");
            assert!(message.issues.is_empty(), "{ctx}: {:?}", message.issues);
            checked += 1;
        }
    }
    assert!(checked >= 30, "only {checked} formats with stop texts");
}

/// With token-id input a stop text is the stop token, matched by id: the same characters typed
/// in ordinary tokens are content.
#[test]
fn a_stop_token_is_matched_by_id() {
    use std::sync::Arc;
    use toolwire_core::stream::StreamParser;
    use toolwire_core::vocab::Vocab;
    for matrix in cases::all() {
        let config = config(&matrix);
        let stops = syntax(&matrix).stops;
        let mut pieces: Vec<(u32, Vec<u8>, bool)> =
            (0..=255u32).map(|b| (b, vec![b as u8], false)).collect();
        pieces.extend(
            stops
                .iter()
                .zip(256u32..)
                .map(|(s, id)| (id, s.as_bytes().to_vec(), true)),
        );
        let vocab = Arc::new(Vocab::from_pieces(pieces).unwrap());
        for (stop, id) in stops.iter().zip(256u32..) {
            let ctx = format!("{}/{stop:?}", matrix.format);
            let bytes = |s: &str| s.bytes().map(u32::from).collect::<Vec<u32>>();
            let mut as_token = StreamParser::new(config.clone());
            as_token.feed_tokens(&vocab, &bytes("Done.")).unwrap();
            as_token.feed_tokens(&vocab, &[id]).unwrap();
            as_token.finish(None).unwrap();
            assert_eq!(as_token.message().content, "Done.", "{ctx}: token");
            let mut as_text = StreamParser::new(config.clone());
            as_text
                .feed_tokens(&vocab, &bytes(&format!("Done.{stop}")))
                .unwrap();
            as_text.finish(None).unwrap();
            assert_eq!(
                as_text.message().content,
                format!("Done.{stop}"),
                "{ctx}: text"
            );
        }
    }
}

fn with_reasoning(matrix: &Matrix, mode: &str) -> ParserConfig {
    let tools = toolwire_core::tools::ToolSet::from_json(&matrix.tools).unwrap();
    ParserConfig::new(matrix.format, tools, Some(mode)).unwrap()
}

/// Content, calls and issues: the message less its reasoning.
fn outside_reasoning(message: &Message) -> impl PartialEq + std::fmt::Debug + Clone {
    let (content, _, calls, issues) = shape(message);
    (content, calls, issues)
}

/// The formats with a native reasoning block, and its delimiters. Harmony and Beam reason in
/// their own analysis-channel messages, which their region parsers read (their own tests).
fn reasoning_formats() -> Vec<(Matrix, &'static str, &'static str)> {
    cases::all()
        .into_iter()
        .filter(|m| !["harmony", "beam"].contains(&m.format))
        .filter_map(|m| syntax(&m).reasoning.map(|(open, close)| (m, open, close)))
        .collect()
}

fn no_failures(failures: &[String]) {
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Records a mismatch instead of stopping at the first, so one run lists every format's.
fn expect<A: PartialEq<B> + std::fmt::Debug, B: std::fmt::Debug>(
    failures: &mut Vec<String>,
    ctx: String,
    got: A,
    want: B,
) {
    if got != want {
        failures.push(format!("{ctx}:\n  got  {got:?}\n  want {want:?}"));
    }
}

#[test]
fn reasoning_is_separated_however_the_block_was_opened() {
    let mut failures = Vec::new();
    let formats = reasoning_formats();
    assert!(formats.len() >= 20, "{} formats", formats.len());
    for (matrix, open, close) in formats {
        let plain = config(&matrix);
        let native = with_reasoning(&matrix, "native");
        let prompt_opened = with_reasoning(&matrix, "closing_only");
        for (name, input) in clean_samples(&matrix) {
            let ctx = format!("{}/{name}", matrix.format);
            let want = outside_reasoning(&parse(&plain, input));
            let cases = [
                (
                    "output opens",
                    &native,
                    format!("{open}Let me think.{close}{input}"),
                ),
                (
                    "prompt opened",
                    &prompt_opened,
                    format!("Let me think.{close}{input}"),
                ),
                (
                    "opened again",
                    &prompt_opened,
                    format!("{open}Let me think.{close}{input}"),
                ),
            ];
            for (how, config, text) in cases {
                let message = parse_both(&ctx, config, &text);
                expect(
                    &mut failures,
                    format!("{ctx}: {how}"),
                    &message.reasoning,
                    "Let me think.",
                );
                expect(
                    &mut failures,
                    format!("{ctx}: {how}"),
                    outside_reasoning(&message),
                    want.clone(),
                );
            }
        }
    }
    no_failures(&failures);
}

#[test]
fn reasoning_blocks_interleave_with_content_and_calls() {
    let mut failures = Vec::new();
    for (matrix, open, close) in reasoning_formats() {
        let plain = config(&matrix);
        let native = with_reasoning(&matrix, "native");
        let ctx = format!("{}/content", matrix.format);
        let message = parse_both(&ctx, &native, &format!("{open}a{close}Text.{open}b{close}"));
        expect(
            &mut failures,
            ctx.clone(),
            shape(&message),
            ("Text.".into(), "ab".into(), vec![], vec![]),
        );
        for (name, input) in clean_samples(&matrix) {
            let ctx = format!("{}/{name}", matrix.format);
            let mut want = shape(&parse(&plain, input));
            want.1 = "ab".into();
            let text = format!("{open}a{close}{input}{open}b{close}");
            expect(
                &mut failures,
                ctx.clone(),
                shape(&parse_both(&ctx, &native, &text)),
                want,
            );
        }
    }
    no_failures(&failures);
}

/// Except where the family goes from thinking straight into a call (a `reasoning_exit` marker:
/// MiniMax M2 opens its calls without closing its reasoning), which its own cases test.
#[test]
fn a_call_inside_reasoning_stays_reasoning() {
    let mut failures = Vec::new();
    let formats = reasoning_formats().into_iter();
    for (matrix, open, close) in
        formats.filter(|(m, ..)| syntax(m).marker(Role::ReasoningExit).is_none())
    {
        let native = with_reasoning(&matrix, "native");
        let prompt_opened = with_reasoning(&matrix, "closing_only");
        let samples = clean_samples(&matrix).into_iter();
        for (name, input) in samples.filter(|(_, s)| !s.contains(close)) {
            let ctx = format!("{}/{name}", matrix.format);
            for (how, config, text) in [
                (
                    "output opens",
                    &native,
                    format!("{open}{input}{close}Done."),
                ),
                (
                    "prompt opened",
                    &prompt_opened,
                    format!("{input}{close}Done."),
                ),
            ] {
                let message = parse_both(&ctx, config, &text);
                expect(
                    &mut failures,
                    format!("{ctx}: {how}"),
                    &message.reasoning,
                    input,
                );
                expect(
                    &mut failures,
                    format!("{ctx}: {how}"),
                    &message.content,
                    "Done.",
                );
                expect(
                    &mut failures,
                    format!("{ctx}: {how}: calls"),
                    message.tool_calls.len(),
                    0,
                );
                expect(
                    &mut failures,
                    format!("{ctx}: {how}"),
                    shape(&message).3,
                    vec![],
                );
            }
        }
    }
    no_failures(&failures);
}

/// Formats whose values are untyped text (XML parameters typed by the schema): Python spellings
/// (`None`, `True`, tuples, sets), a number written as a JSON string where the schema allows no
/// string, and whitespace around a number are typed by the schema. (Gemma's `<|"|>` strings are
/// typed by the format: a delimited `20` stays a string, as every engine keeps it.)
#[test]
fn untyped_values_are_typed_by_the_schema() {
    use serde_json::json;
    use toolwire_core::render::RenderCall;
    use toolwire_core::spec::{ArgSyntax, Typing};
    let tools = json!([{"type": "function", "function": {"name": "typed", "parameters": {
        "type": "object", "properties": {
            "n": {"type": ["integer", "null"]}, "flag": {"type": "boolean"}, "x": {"type": "number"},
            "tags": {"type": "array"}, "pair": {"type": "array"}, "opt": {"type": ["string", "null"]},
            "k": {"type": "integer"}, "q": {"type": "number"}}}}}]);
    let written = json!({"n": "None", "flag": "True", "x": "3.5", "tags": "{'a', 'b'}",
        "pair": "(1, 'b')", "opt": "null", "k": "\n7\n", "q": "\"2.5\""});
    let want = json!({"n": null, "flag": true, "x": 3.5, "tags": ["a", "b"], "pair": [1, "b"],
        "opt": null, "k": 7, "q": 2.5});
    let mut failures = Vec::new();
    let mut checked = 0;
    for format in formats::REGISTRY {
        let ArgSyntax::XmlParams(tags) = format.syntax.arguments else {
            continue;
        };
        if tags.typing != Typing::Schema {
            continue;
        }
        let name = format.syntax.name;
        let call = RenderCall {
            name: "typed".into(),
            arguments: written.clone(),
            id: None,
        };
        let text = format.render(&[call], None);
        let tool_set = toolwire_core::tools::ToolSet::from_json(&tools).unwrap();
        let config = ParserConfig::new(name, tool_set, None).unwrap();
        let message = parse_both(name, &config, &text);
        let got: Vec<serde_json::Value> = message
            .tool_calls
            .iter()
            .map(|c| serde_json::from_str(&c.arguments).unwrap())
            .collect();
        expect(
            &mut failures,
            format!("{name}: {text:?}"),
            got,
            vec![want.clone()],
        );
        checked += 1;
    }
    assert!(checked >= 12, "{checked} formats");
    no_failures(&failures);
}

/// What an engine decoding with `skip_special_tokens=True` leaves of a format whose calls open
/// with a special token: bare JSON at the output start. The calls come back, each reported as
/// `missing_markers`.
#[test]
fn calls_whose_special_token_wrapper_was_stripped_come_back_reported() {
    use toolwire_core::formats::json_calls::stripped_opener;
    let mut failures = Vec::new();
    let mut formats_checked = Vec::new();
    for matrix in cases::all() {
        let syntax = syntax(&matrix);
        if stripped_opener(syntax).is_none() {
            continue;
        }
        let config = config(&matrix);
        for (name, input) in clean_samples(&matrix) {
            let stripped = syntax
                .markers()
                .filter(|m| m.special_token)
                .fold(input.to_owned(), |text, m| text.replace(m.text, ""));
            let whole = parse(&config, input);
            let bare = stripped.trim_start().starts_with(['[', '{']);
            if stripped == input || !bare || whole.tool_calls.is_empty() {
                continue;
            }
            let ctx = format!("{}/{name}: {stripped:?}", matrix.format);
            let message = parse_both(&ctx, &config, &stripped);
            let calls = |m: &Message| shape(m).2;
            expect(&mut failures, ctx.clone(), calls(&message), calls(&whole));
            let kinds: Vec<_> = message
                .issues
                .iter()
                .map(|i| (i.index, i.kind.as_str()))
                .collect();
            let want: Vec<_> = (0..whole.tool_calls.len())
                .map(|i| (Some(i), "missing_markers"))
                .collect();
            expect(&mut failures, ctx, kinds, want);
            formats_checked.push(matrix.format);
        }
    }
    formats_checked.dedup();
    assert!(formats_checked.len() >= 3, "{formats_checked:?}");
    no_failures(&failures);
}

/// The recovery policy (docs/parsing.md), held for every format:
/// a call whose payload is complete but whose closing markup is missing is returned.
#[test]
fn a_complete_call_without_its_closing_markup_is_returned() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for matrix in cases::all() {
        let syntax = syntax(&matrix);
        let closers: Vec<&str> = syntax
            .markers()
            .filter(|m| {
                matches!(
                    m.role,
                    Role::SectionEnd | Role::CallEnd | Role::CallWrapperEnd | Role::FunctionEnd
                )
            })
            .map(|m| m.text)
            .filter(|t| !t.is_empty())
            .collect();
        let Case::Sample {
            input,
            expect: want,
        } = &matrix.one_call
        else {
            continue;
        };
        let mut cut = input.trim_end();
        while let Some(rest) = closers.iter().find_map(|c| cut.strip_suffix(c)) {
            cut = rest.trim_end();
        }
        if cut.len() == input.trim_end().len() || !want.issues.is_empty() {
            continue;
        }
        let config = config(&matrix);
        let ctx = format!(
            "{}/one_call without {:?}",
            matrix.format,
            &input[cut.len()..]
        );
        let message = parse_both(&ctx, &config, cut);
        let whole = parse(&config, input);
        expect(
            &mut failures,
            ctx.clone(),
            shape(&message).2,
            shape(&whole).2,
        );
        expect(&mut failures, ctx, shape(&message).3, vec![]);
        checked += 1;
    }
    assert!(checked >= 30, "{checked} formats");
    no_failures(&failures);
}

/// A call whose payload is cut or invalid is not returned; its markup is never content; it is an
/// issue with its raw text; the other calls still come back.
#[test]
fn a_broken_call_is_an_issue_and_the_other_calls_come_back() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for matrix in cases::all() {
        let syntax = syntax(&matrix);
        let config = config(&matrix);
        let openers: Vec<&str> = syntax
            .triggers
            .iter()
            .filter(|t| !t.soft)
            .map(|t| t.text)
            .collect();
        for (name, case) in [
            ("truncated", &matrix.truncated),
            ("malformed", &matrix.malformed),
        ] {
            let Case::Sample {
                input,
                expect: want,
            } = case
            else {
                continue;
            };
            let ctx = format!("{}/{name}", matrix.format);
            let message = parse(&config, input);
            for opener in &openers {
                if message.content.contains(opener) && !input.contains(&format!("`{opener}")) {
                    failures.push(format!(
                        "{ctx}: markup {opener:?} in content {:?}",
                        message.content
                    ));
                }
            }
            if want.issues.is_empty() {
                continue;
            }
            for issue in &message.issues {
                if issue.raw.trim().is_empty() && issue.kind.as_str() != "missing_tool_call" {
                    failures.push(format!(
                        "{ctx}: {} issue without raw text",
                        issue.kind.as_str()
                    ));
                }
            }
            checked += 1;
        }
        // A malformed call, then a good one: the good one comes back.
        let (
            Case::Sample {
                input: bad,
                expect: bad_want,
            },
            Case::Sample { input: good, .. },
        ) = (&matrix.malformed, &matrix.one_call)
        else {
            continue;
        };
        // Formats that read calls only at the output start (xlam's bare array) have no place
        // for a call after a broken one.
        let after_text = parse(&config, &format!("Text.\n{good}"));
        if bad_want.issues.is_empty() || after_text.tool_calls.is_empty() {
            continue;
        }
        let ctx = format!("{}/malformed then one_call", matrix.format);
        let both = format!("{bad}\n{good}");
        let message = parse_both(&ctx, &config, &both);
        let mut want_calls: Vec<String> = parse(&config, bad)
            .tool_calls
            .iter()
            .map(|c| c.name.clone())
            .collect();
        want_calls.extend(
            parse(&config, good)
                .tool_calls
                .iter()
                .map(|c| c.name.clone()),
        );
        let got_calls: Vec<String> = message.tool_calls.iter().map(|c| c.name.clone()).collect();
        expect(&mut failures, ctx.clone(), got_calls, want_calls);
        let kinds = |m: &Message| m.issues.iter().map(|i| i.kind.as_str()).collect::<Vec<_>>();
        expect(
            &mut failures,
            ctx,
            kinds(&message),
            kinds(&parse(&config, bad)),
        );
    }
    assert!(checked >= 60, "{checked} cases");
    no_failures(&failures);
}
