//! A format's stop texts (end-of-turn tokens such as `<|im_end|>`) at the end of an output are
//! dropped, whole or in runs with whitespace, however the output is chunked; anywhere else, and
//! the start of one that never completes, they are the model's text and stay in the message.

use serde_json::json;
use toolwire_core::formats::REGISTRY;
use toolwire_core::ids::IdSource;
use toolwire_core::message::Message;
use toolwire_core::render::RenderCall;
use toolwire_core::stream::{ParserConfig, StreamParser};
use toolwire_core::tools::ToolSet;

/// Call ids that do not depend on the run, so messages compare equal.
struct Numbered(usize);

impl IdSource for Numbered {
    fn next_id(&mut self, _index: usize, _name: &str) -> String {
        self.0 += 1;
        format!("call_{}", self.0)
    }
}

fn parse(config: &ParserConfig, text: &str, chunk: usize) -> Message {
    let mut stream = StreamParser::with_ids(config.clone(), Box::new(Numbered(0)));
    let mut rest = text;
    while !rest.is_empty() {
        let mut n = chunk.min(rest.len());
        while !rest.is_char_boundary(n) {
            n += 1;
        }
        stream.feed(&rest[..n]).unwrap();
        rest = &rest[n..];
    }
    stream.finish(Some("stop")).unwrap();
    stream.message()
}

#[test]
fn stop_texts_are_dropped_at_the_end_only() {
    let tools = ToolSet::from_json(&json!([{"type": "function", "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]))
    .unwrap();
    let calls = [RenderCall {
        name: "get_weather".into(),
        arguments: json!({"city": "Oslo"}),
        id: Some("call_1".into()),
    }];
    let mut checked = 0;
    for format in REGISTRY.iter().filter(|f| !f.syntax.stops.is_empty()) {
        let name = format.syntax.name;
        let config = ParserConfig::new(name, tools.clone(), None).unwrap();
        for content in [None, Some("Let me check.")] {
            let text = format.render(&calls, content);
            let plain = parse(&config, &text, usize::MAX);
            for stop in format.syntax.stops {
                let first: String = stop.chars().take(1).collect();
                for ending in [
                    stop.to_string(),
                    format!("{stop}\n"),
                    format!("{stop} {stop}\n"),
                ] {
                    for chunk in [1, 3, usize::MAX] {
                        let ended = parse(&config, &format!("{text}{ending}"), chunk);
                        assert_eq!(
                            ended, plain,
                            "{name}: {text:?} + {ending:?} in {chunk}-byte chunks"
                        );
                    }
                }
                for kept in [format!("{stop}x"), format!("{stop}\n{first}")] {
                    let message = parse(&config, &format!("{text}{kept}"), usize::MAX);
                    assert_ne!(message, plain, "{name}: {text:?} + {kept:?} lost text");
                    assert!(
                        format!("{message:?}").contains(*stop),
                        "{name}: {stop:?} in {kept:?} is the model's text and must stay"
                    );
                }
                checked += 1;
            }
        }
    }
    assert!(checked >= 10, "only {checked} stop texts checked");
}
