//! XML-parameter formats (qwen3_coder, glm45, glm47) beyond the shared matrix: string values
//! stream while they arrive, special-token input, native reasoning, aliases, hostile input.

use serde_json::{json, Value};
use toolwire_core::formats;
use toolwire_core::message::Delta;
use toolwire_core::stream::{parse, ParserConfig, StreamParser};
use toolwire_core::tools::ToolSet;

fn tools() -> ToolSet {
    ToolSet::from_json(&json!([
        {"type": "function", "function": {"name": "write_file", "parameters": {"type": "object", "properties": {
            "path": {"type": "string"}, "content": {"type": "string"}, "mode": {"type": "integer"},
            "data": {"type": "array"}}}}}
    ]))
    .unwrap()
}

fn args_of(deltas: &[Delta]) -> String {
    deltas
        .iter()
        .flat_map(|d| d.tool_calls.iter())
        .map(|c| c.arguments.as_str())
        .collect()
}

fn arguments(message: &toolwire_core::message::Message, k: usize) -> Value {
    serde_json::from_str(&message.tool_calls[k].arguments).unwrap()
}

#[test]
fn aliases_resolve() {
    for alias in [
        "qwen3_coder",
        "nemotron_nano",
        "qwen3_5",
        "qwen3.5",
        "qwen3_6",
        "Qwen3-Coder",
    ] {
        assert_eq!(
            formats::lookup(alias).unwrap().syntax.name,
            "qwen3_coder",
            "{alias}"
        );
    }
    for alias in ["glm45", "glm", "glm4_moe", "glm4.5", "glm4.6"] {
        assert_eq!(
            formats::lookup(alias).unwrap().syntax.name,
            "glm45",
            "{alias}"
        );
    }
    for alias in ["glm47", "glm5", "glm4.7"] {
        assert_eq!(
            formats::lookup(alias).unwrap().syntax.name,
            "glm47",
            "{alias}"
        );
    }
}

#[test]
fn qwen_string_values_stream_before_their_end_tag() {
    let config = ParserConfig::new("qwen3_coder", tools(), None).unwrap();
    let mut stream = StreamParser::new(config);
    let mut args = String::new();
    args += &args_of(
        &stream
            .feed("<tool_call>\n<function=write_file>\n<parameter=path>\n/tmp/a.py\n")
            .unwrap(),
    );
    // The value's last `\n` may precede `</parameter>`: held back, nothing else.
    assert_eq!(args, "{\"path\": \"/tmp/a.py");
    args += &args_of(
        &stream
            .feed("</parameter>\n<parameter=content>\nprint(\"hi\")\n")
            .unwrap(),
    );
    assert_eq!(
        args,
        "{\"path\": \"/tmp/a.py\", \"content\": \"print(\\\"hi\\\")"
    );
    args += &args_of(&stream.feed("x = 1\n</para").unwrap());
    assert_eq!(
        args,
        "{\"path\": \"/tmp/a.py\", \"content\": \"print(\\\"hi\\\")\\nx = 1"
    );
    args += &args_of(&stream.feed("meter>\n<parameter=mode>\n6").unwrap());
    // Typed values wait for their end.
    assert_eq!(
        args,
        "{\"path\": \"/tmp/a.py\", \"content\": \"print(\\\"hi\\\")\\nx = 1\", \"mode\": "
    );
    args += &args_of(
        &stream
            .feed("44\n</parameter>\n</function>\n</tool_call>")
            .unwrap(),
    );
    args += &args_of(&stream.finish(None).unwrap());
    let message = stream.message();
    assert_eq!(args, message.tool_calls[0].arguments);
    assert_eq!(
        arguments(&message, 0),
        json!({"path": "/tmp/a.py", "content": "print(\"hi\")\nx = 1", "mode": 644})
    );
}

#[test]
fn glm_string_values_stream_before_their_end_tag() {
    let config = ParserConfig::new("glm47", tools(), None).unwrap();
    let mut stream = StreamParser::new(config);
    let mut args = String::new();
    args += &args_of(
        &stream
            .feed("<tool_call>write_file<arg_key>content</arg_key><arg_value>line 1\n")
            .unwrap(),
    );
    assert_eq!(args, "{\"content\": \"line 1\\n");
    args += &args_of(&stream.feed("line 2</arg_val").unwrap());
    assert_eq!(args, "{\"content\": \"line 1\\nline 2");
    args += &args_of(&stream.feed("ue></tool_call>").unwrap());
    args += &args_of(&stream.finish(None).unwrap());
    assert_eq!(args, "{\"content\": \"line 1\\nline 2\"}");
}

/// In token-id mode the special-token markers arrive as sentinels; the same characters typed
/// as text inside a value are only text.
#[test]
fn special_token_markers_match_by_token_only() {
    for (format, special, text) in [
        (
            "qwen3_coder",
            vec!["<tool_call>", "</tool_call>"],
            "<tool_call>\n<function=write_file>\n<parameter=content>\nsee </tool_call> and <tool_call>\n</parameter>\n</function>\n</tool_call>",
        ),
        (
            "glm47",
            vec!["<tool_call>", "</tool_call>", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>"],
            "<tool_call>write_file<arg_key>content</arg_key><arg_value>see </tool_call> and <arg_key>x</arg_key></arg_value></tool_call>",
        ),
    ] {
        let config = ParserConfig::new(format, tools(), None).unwrap();
        let mut stream = StreamParser::new(config);
        let special: Vec<&'static str> = special.into_iter().collect();
        stream.use_special_markers(&special);
        // Replace the structural markers (not the ones inside the value) by their sentinels.
        let value_start = text.find("see ").unwrap();
        let stop = if format == "glm47" { "</arg_value>" } else { "\n</parameter>" };
        let value_end = value_start + text[value_start..].find(stop).unwrap();
        let mut encoded = String::new();
        for (segment, structural) in [
            (&text[..value_start], true),
            (&text[value_start..value_end], false),
            (&text[value_end..], true),
        ] {
            let mut s = segment.to_owned();
            if structural {
                let mut markers = special.clone();
                markers.sort_by_key(|m| std::cmp::Reverse(m.len()));
                for m in markers {
                    s = s.replace(m, stream.markers().sentinel_for(m).unwrap());
                }
            }
            encoded.push_str(&s);
        }
        for chunk in encoded.chars() {
            stream.feed(&chunk.to_string()).unwrap();
        }
        stream.finish(None).unwrap();
        let message = stream.message();
        assert!(message.issues.is_empty(), "{format}: {:?}", message.issues);
        let want = if format == "glm47" {
            "see </tool_call> and <arg_key>x</arg_key>"
        } else {
            "see </tool_call> and <tool_call>"
        };
        assert_eq!(arguments(&message, 0), json!({"content": want}), "{format}");
    }
}

#[test]
fn native_reasoning_comes_before_calls() {
    let glm = ParserConfig::new("glm47", tools(), Some("native")).unwrap();
    let message = parse(
        &glm,
        "\n<think>The user wants a file.</think>Writing it.<tool_call>write_file<arg_key>path</arg_key><arg_value>a</arg_value></tool_call>",
    );
    assert_eq!(message.reasoning, "The user wants a file.");
    assert_eq!(message.content, "Writing it.");
    assert_eq!(arguments(&message, 0), json!({"path": "a"}));

    let qwen = ParserConfig::new("qwen3_coder", tools(), Some("native")).unwrap();
    let message = parse(
        &qwen,
        "<think>\nplan\n</think>\n\n<tool_call>\n<function=write_file>\n<parameter=path>\na\n</parameter>\n</function>\n</tool_call>",
    );
    assert_eq!(message.reasoning, "\nplan\n");
    assert_eq!(arguments(&message, 0), json!({"path": "a"}));
}

#[test]
fn render_matches_the_chat_templates() {
    use toolwire_core::render::RenderCall;
    let calls = vec![
        RenderCall {
            name: "write_file".into(),
            arguments: json!({"path": "a.txt", "mode": 420, "data": [1, {"k": "v"}]}),
            id: None,
        },
        RenderCall {
            name: "ping".into(),
            arguments: json!({}),
            id: None,
        },
    ];
    let qwen = formats::lookup("qwen3_coder")
        .unwrap()
        .render(&calls, Some("Sure."));
    assert_eq!(
        qwen,
        "Sure.\n\n<tool_call>\n<function=write_file>\n<parameter=path>\na.txt\n</parameter>\n<parameter=mode>\n420\n</parameter>\n<parameter=data>\n[1, {\"k\": \"v\"}]\n</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=ping>\n</function>\n</tool_call>"
    );
    let glm45 = formats::lookup("glm45").unwrap().render(&calls, None);
    assert_eq!(
        glm45,
        "\n<tool_call>write_file\n<arg_key>path</arg_key>\n<arg_value>a.txt</arg_value>\n<arg_key>mode</arg_key>\n<arg_value>420</arg_value>\n<arg_key>data</arg_key>\n<arg_value>[1, {\"k\": \"v\"}]</arg_value>\n</tool_call>\n<tool_call>ping\n</tool_call>"
    );
    let glm47 = formats::lookup("glm47").unwrap().render(&calls, None);
    assert_eq!(
        glm47,
        "<tool_call>write_file<arg_key>path</arg_key><arg_value>a.txt</arg_value><arg_key>mode</arg_key><arg_value>420</arg_value><arg_key>data</arg_key><arg_value>[1, {\"k\": \"v\"}]</arg_value></tool_call><tool_call>ping</tool_call>"
    );
}

#[test]
fn hostile_input_is_linear_and_never_panics() {
    let long = "x\n".repeat(150_000);
    let deep = "[".repeat(50_000);
    for format in ["qwen3_coder", "glm45", "glm47"] {
        let config = ParserConfig::new(format, tools(), None).unwrap();
        let text = if format == "qwen3_coder" {
            format!("<tool_call>\n<function=write_file>\n<parameter=content>\n{long}\n</parameter>\n<parameter=data>\n{deep}\n</parameter>\n</function>\n</tool_call>")
        } else {
            format!("<tool_call>write_file<arg_key>content</arg_key><arg_value>{long}</arg_value><arg_key>data</arg_key><arg_value>{deep}</arg_value></tool_call>")
        };
        let start = std::time::Instant::now();
        let mut stream = StreamParser::new(config.clone());
        let bytes = text.as_bytes();
        let mut k = 0;
        while k < bytes.len() {
            let mut end = (k + 7).min(bytes.len());
            while !text.is_char_boundary(end) {
                end += 1;
            }
            stream.feed(&text[k..end]).unwrap();
            k = end;
        }
        stream.finish(None).unwrap();
        let message = stream.message();
        assert!(start.elapsed().as_secs() < 20, "{format}: too slow");
        let args = arguments(&message, 0);
        assert_eq!(args["content"].as_str().unwrap(), long);
        assert_eq!(args["data"].as_str().unwrap().len(), deep.len());
        // Garbage of every kind: no panic.
        for junk in [
            "<tool_call><function=",
            "<tool_call>\n<function=f>\n<parameter=",
            "<tool_call>f<arg_key>",
            "<tool_call>{",
            "<function=é>\n<parameter=ü>\n\u{10FF00}",
            "<tool_call>\u{10FF01}<arg_value>",
        ] {
            let _ = parse(&config, junk);
            let _ = parse(&config, &junk.repeat(50));
        }
    }
}

mod fuzz {
    use super::*;
    use proptest::prelude::*;

    const PIECES: &[&str] = &[
        "<tool_call>",
        "</tool_call>",
        "<function=",
        "write_file",
        "</function>",
        "<parameter=",
        "path",
        "mode",
        "data",
        ">",
        "</parameter>",
        "\n",
        " ",
        "x",
        "é",
        "42",
        "null",
        "[1,",
        "{'a': None}",
        "<arg_key>",
        "</arg_key>",
        "<arg_value>",
        "</arg_value>",
        "\\n",
        "<",
        "{",
        "\"name\": \"f\"",
        "<think>",
        "</think>",
        "</para",
        "<tool",
        "\u{10FF00}",
    ];

    fn message_shape(
        m: &toolwire_core::message::Message,
    ) -> (String, Vec<(String, String)>, Vec<String>) {
        (
            m.content.clone(),
            m.tool_calls
                .iter()
                .map(|c| (c.name.clone(), c.arguments.clone()))
                .collect(),
            m.issues
                .iter()
                .map(|i| format!("{}:{}", i.kind.as_str(), i.raw))
                .collect(),
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]
        #[test]
        fn random_marker_soup_streams_like_one_shot(
            picks in proptest::collection::vec(0..PIECES.len(), 0..40),
            cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..8),
        ) {
            let text: String = picks.iter().map(|&k| PIECES[k]).collect();
            let boundaries: Vec<usize> = (0..=text.len()).filter(|&i| text.is_char_boundary(i)).collect();
            let mut points: Vec<usize> = cuts.iter().map(|c| boundaries[c.index(boundaries.len())]).collect();
            points.sort_unstable();
            points.dedup();
            for format in ["qwen3_coder", "glm45", "glm47"] {
                let config = ParserConfig::new(format, tools(), None).unwrap();
                let whole = parse(&config, &text);
                for call in &whole.tool_calls {
                    prop_assert!(toolwire_core::json::is_valid(&call.arguments), "{}: {:?}", format, call.arguments);
                }
                let mut stream = StreamParser::new(config.clone());
                let mut deltas = Vec::new();
                let mut last = 0;
                for &p in &points {
                    deltas.extend(stream.feed(&text[last..p]).unwrap());
                    last = p;
                }
                deltas.extend(stream.feed(&text[last..]).unwrap());
                deltas.extend(stream.finish(None).unwrap());
                let streamed = stream.message();
                prop_assert_eq!(message_shape(&streamed), message_shape(&whole), "{} {:?}", format, text);
                let content: String = deltas.iter().filter_map(|d| d.content.as_deref()).collect();
                prop_assert_eq!(content, streamed.content.clone());
            }
        }
    }
}
