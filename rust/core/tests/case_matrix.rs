//! Runs the shared case matrix for every format: one-shot parsing, every two-way split and random
//! multi-way splits of each sample (the chunk-split property), and the streamed deltas' agreement
//! with the final message; and detection of every format from its case file's template.

mod cases;
#[path = "case_matrix/real_outputs.rs"]
mod real_outputs;

use proptest::prelude::*;
use serde_json::Value;
use toolwire_core::message::{Delta, Message};
use toolwire_core::stream::{ParserConfig, StreamParser};
use toolwire_core::tools::ToolSet;

use cases::{Case, Expect, Matrix};

fn config(matrix: &Matrix) -> ParserConfig {
    ParserConfig::new(
        matrix.format,
        ToolSet::from_json(&matrix.tools).unwrap(),
        None,
    )
    .unwrap()
}

fn stream_chunks(config: &ParserConfig, chunks: &[&str]) -> (Message, Vec<Delta>) {
    let mut stream = StreamParser::new(config.clone());
    let mut deltas = Vec::new();
    for chunk in chunks {
        deltas.extend(stream.feed(chunk).unwrap());
    }
    deltas.extend(stream.finish(None).unwrap());
    (stream.message(), deltas)
}

/// A message's content, reasoning, calls (index, name, arguments) and issues (index, kind, raw).
type Shape = (
    String,
    String,
    Vec<(usize, String, String)>,
    Vec<(Option<usize>, &'static str, String)>,
);

/// The message without its random ids, for comparing runs.
fn shape(message: &Message) -> Shape {
    (
        message.content.clone(),
        message.reasoning.clone(),
        message
            .tool_calls
            .iter()
            .map(|c| (c.index, c.name.clone(), c.arguments.clone()))
            .collect(),
        message
            .issues
            .iter()
            .map(|i| (i.index, i.kind.as_str(), i.raw.clone()))
            .collect(),
    )
}

fn check_expectation(format: &str, case: &str, message: &Message, expect: &Expect) {
    let ctx = format!("{format}/{case}");
    assert_eq!(message.content_or_none(), expect.content, "{ctx}: content");
    let calls: Vec<(String, Value)> = message
        .tool_calls
        .iter()
        .map(|c| {
            (
                c.name.clone(),
                serde_json::from_str(&c.arguments).unwrap_or_else(|e| panic!("{ctx}: {e}")),
            )
        })
        .collect();
    let expected: Vec<(String, Value)> = expect
        .calls
        .iter()
        .map(|(n, v)| (n.to_string(), v.clone()))
        .collect();
    assert_eq!(calls, expected, "{ctx}: calls");
    // The matrix is about reading the format; schema checks of the shared tools have their own
    // tests, so a schema violation is asserted only where a case expects one.
    let checks_schema = expect.issues.contains(&"schema_violation");
    let kinds: Vec<&str> = message
        .issues
        .iter()
        .map(|i| i.kind.as_str())
        .filter(|k| checks_schema || *k != "schema_violation")
        .collect();
    assert_eq!(kinds, expect.issues, "{ctx}: issues {:?}", message.issues);
    for call in &message.tool_calls {
        assert!(
            call.id.starts_with("call_") || !call.id.is_empty(),
            "{ctx}: id"
        );
    }
}

/// Deltas must add up to the message: content, reasoning, and each call's argument fragments.
fn check_deltas(ctx: &str, message: &Message, deltas: &[Delta]) {
    let content: String = deltas.iter().filter_map(|d| d.content.as_deref()).collect();
    assert_eq!(content, message.content, "{ctx}: content deltas");
    let reasoning: String = deltas
        .iter()
        .filter_map(|d| d.reasoning.as_deref())
        .collect();
    assert_eq!(reasoning, message.reasoning, "{ctx}: reasoning deltas");
    for call in &message.tool_calls {
        let parts: Vec<_> = deltas
            .iter()
            .flat_map(|d| d.tool_calls.iter())
            .filter(|c| c.index == call.index)
            .collect();
        let args: String = parts.iter().map(|c| c.arguments.as_str()).collect();
        assert_eq!(
            args, call.arguments,
            "{ctx}: argument fragments of call {}",
            call.index
        );
        assert_eq!(
            parts[0].name.as_deref(),
            Some(call.name.as_str()),
            "{ctx}: first delta names the call"
        );
        assert_eq!(
            parts[0].id.as_deref(),
            Some(call.id.as_str()),
            "{ctx}: first delta carries the id"
        );
    }
    let finish: Vec<_> = deltas
        .iter()
        .filter_map(|d| d.finish_reason.as_deref())
        .collect();
    let want = if message.tool_calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    assert_eq!(finish, vec![want], "{ctx}: finish reason");
}

fn samples() -> Vec<(String, &'static str, ParserConfig, &'static Expect)> {
    let matrices: &'static Vec<Matrix> = Box::leak(Box::new(cases::all()));
    let mut out = Vec::new();
    for matrix in matrices.iter() {
        let config = config(matrix);
        for (name, case) in matrix.cases() {
            if let Case::Sample { input, expect } = case {
                out.push((
                    format!("{}/{name}", matrix.format),
                    *input,
                    config.clone(),
                    expect,
                ));
            }
        }
    }
    out
}

#[test]
fn every_format_answers_the_matrix() {
    let mut checked = 0;
    for matrix in cases::all() {
        let config = config(&matrix);
        for (name, case) in matrix.cases() {
            match case {
                Case::Sample { input, expect } => {
                    let message = toolwire_core::stream::parse(&config, input);
                    check_expectation(matrix.format, name, &message, expect);
                    checked += 1;
                }
                Case::NotApplicable(reason) => assert!(!reason.is_empty()),
            }
        }
    }
    assert!(checked > 0);
}

#[test]
fn every_format_is_in_the_matrix() {
    let covered: Vec<&str> = cases::all().iter().map(|m| m.format).collect();
    for name in toolwire_core::formats::names() {
        assert!(covered.contains(&name), "format {name} has no case matrix");
    }
}

/// Detection names the case file's format, confidently, from its template alone, and the special
/// tokens its `expect:` line says; the reasoning mode, which the template's rendered generation
/// prompt decides, is checked by `tests/test_detect.py`.
#[test]
fn every_format_is_detected_from_its_template() {
    use toolwire_core::detect::{detect, Source, Status};
    let templates = cases::detect_templates();
    for (format, template) in &templates {
        let expect = template
            .lines()
            .next()
            .and_then(|line| line.strip_prefix("{#- expect: reasoning="))
            .and_then(|rest| rest.split_once(" special_tokens="))
            .and_then(|(_, tokens)| tokens.strip_suffix(" -#}"));
        let Some(special) = expect else {
            panic!("{format}: DETECT_TEMPLATE must start with {{#- expect: reasoning=R special_tokens=yes|no -#}}");
        };
        let source = Source {
            template,
            generation_prompt: None,
            vocabulary: None,
        };
        let detection = detect(&source);
        assert_eq!(
            (detection.status, detection.format),
            (Status::Confident, Some(*format)),
            "{format}: {:?}",
            detection.candidates.first()
        );
        assert_eq!(
            !detection.special_markers.is_empty(),
            special == "yes",
            "{format}"
        );
    }
    assert_eq!(templates.len(), cases::all().len());
}

#[test]
fn every_two_way_split_streams_to_the_same_message() {
    for (ctx, input, config, _) in samples() {
        let (whole, deltas) = stream_chunks(&config, &[input]);
        check_deltas(&ctx, &whole, &deltas);
        let boundaries: Vec<usize> = (0..=input.len())
            .filter(|&i| input.is_char_boundary(i))
            .collect();
        for &split in &boundaries {
            let (a, b) = input.split_at(split);
            let (message, deltas) = stream_chunks(&config, &[a, b]);
            assert_eq!(shape(&message), shape(&whole), "{ctx}: split at {split}");
            check_deltas(&ctx, &message, &deltas);
        }
    }
}

#[test]
fn char_by_char_streaming_matches() {
    for (ctx, input, config, _) in samples() {
        let (whole, _) = stream_chunks(&config, &[input]);
        let chars: Vec<String> = input.chars().map(String::from).collect();
        let refs: Vec<&str> = chars.iter().map(String::as_str).collect();
        let (message, deltas) = stream_chunks(&config, &refs);
        assert_eq!(shape(&message), shape(&whole), "{ctx}: char by char");
        check_deltas(&ctx, &message, &deltas);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]
    #[test]
    fn random_splits_stream_to_the_same_message(cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..12)) {
        for (ctx, input, config, _) in samples() {
            let boundaries: Vec<usize> = (0..=input.len()).filter(|&i| input.is_char_boundary(i)).collect();
            let mut points: Vec<usize> = cuts.iter().map(|c| boundaries[c.index(boundaries.len())]).collect();
            points.sort_unstable();
            points.dedup();
            let mut chunks = Vec::new();
            let mut last = 0;
            for p in points {
                chunks.push(&input[last..p]);
                last = p;
            }
            chunks.push(&input[last..]);
            let (whole, _) = stream_chunks(&config, &[input]);
            let (message, _) = stream_chunks(&config, &chunks);
            prop_assert_eq!(shape(&message), shape(&whole), "{}", ctx);
        }
    }
}
