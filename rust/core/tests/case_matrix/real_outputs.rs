//! Cases derived for every registered format from its spec and its matrix samples: what real
//! model output adds around a well-formed sample (stop texts, reasoning blocks, call-like text
//! in reasoning, lost wrapper tokens). A new format is covered as soon as it has a matrix.

use toolwire_core::formats;
use toolwire_core::message::Message;
use toolwire_core::spec::Syntax;
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
