//! Random markup for the DSML and MiniMax formats, built from their own tag fragments: no panic,
//! and any split of the input streams to the same message as one-shot parsing.

use proptest::prelude::*;
use serde_json::json;
use toolwire_core::message::Message;
use toolwire_core::stream::{parse, ParserConfig, StreamParser};
use toolwire_core::tools::ToolSet;

const D: &str = "｜DSML｜";
const NS: &str = "]<]minimax[>[";

fn fragments(format: &str) -> Vec<String> {
    let mut common: Vec<String> = [
        "\n",
        " ",
        "x",
        "NYC",
        "42",
        "{\"a\": [1]}",
        "\"",
        "'",
        ">",
        "/>",
        "<",
        "</",
        "東京",
        "<think>",
        "</think>",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let own: Vec<String> = match format {
        "minimax_m2" => [
            "<minimax:tool_call>",
            "</minimax:tool_call>",
            "<invoke name=\"get_weather\">",
            "<invoke name=",
            "</invoke>",
            "<parameter name=\"days\">",
            "<parameter name=\"location\">",
            "</parameter>",
            "<minimax:tool_c",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
        "minimax_m3" => [
            "<tool_call>",
            "</tool_call>",
            "<invoke name=\"search\">",
            "</invoke>",
            "<filters>",
            "</filters>",
            "<item>",
            "</item>",
            "<query>",
            "</query>",
            "<days>",
            "</days>",
            "",
            "<mm:think>",
            "</mm:think>",
        ]
        .iter()
        .map(|s| format!("{NS}{s}"))
        .chain(["]<]mini".to_string()])
        .collect(),
        _ => [
            "<{D}function_calls>",
            "</{D}function_calls>",
            "<{D}tool_calls>",
            "</{D}tool_calls>",
            "<{D}invoke name=\"get_weather\">",
            "<{D}invoke name=\"ping\"/>",
            "</{D}invoke>",
            "<{D}parameter name=\"location\" string=\"true\">",
            "<{D}parameter name=\"days\" string=\"false\">",
            "</{D}parameter>",
            "<{D}",
            "{D}",
        ]
        .iter()
        .map(|s| s.replace("{D}", D))
        .collect(),
    };
    common.extend(own);
    common
}

fn tools() -> ToolSet {
    ToolSet::from_json(&json!([
        {"name": "get_weather", "parameters": {"type": "object", "properties": {"location": {"type": "string"}, "days": {"type": "integer"}}}},
        {"name": "search", "parameters": {"type": "object", "properties": {"query": {"type": "string"}, "filters": {"type": "object"}, "days": {"type": "array"}}}},
        {"name": "ping", "parameters": {"type": "object", "properties": {}}}
    ]))
    .unwrap()
}

/// Content, reasoning, calls (name, arguments) and issues (kind, raw) of a message.
type Shape = (
    String,
    String,
    Vec<(String, String)>,
    Vec<(&'static str, String)>,
);

fn shape(m: &Message) -> Shape {
    (
        m.content.clone(),
        m.reasoning.clone(),
        m.tool_calls
            .iter()
            .map(|c| (c.name.clone(), c.arguments.clone()))
            .collect(),
        m.issues
            .iter()
            .map(|i| (i.kind.as_str(), i.raw.clone()))
            .collect(),
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]
    #[test]
    fn random_markup_streams_like_one_shot(
        which in 0usize..4,
        picks in proptest::collection::vec(any::<prop::sample::Index>(), 0..40),
        cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..8),
        reasoning in 0usize..2,
    ) {
        let format = ["deepseek_v3_2", "deepseek_v4", "minimax_m2", "minimax_m3"][which];
        let frags = fragments(format);
        let input: String = picks.iter().map(|p| frags[p.index(frags.len())].as_str()).collect();
        let config = ParserConfig::new(format, tools(), [None, Some("native")][reasoning]).unwrap();
        let whole = parse(&config, &input);
        for call in &whole.tool_calls {
            prop_assert!(serde_json::from_str::<serde_json::Value>(&call.arguments).is_ok());
        }
        if format == "minimax_m3" {
            prop_assert!(!whole.content.contains(NS) && !whole.reasoning.contains(NS), "{:?}", input);
        }
        let bounds: Vec<usize> = (0..=input.len()).filter(|&i| input.is_char_boundary(i)).collect();
        let mut points: Vec<usize> = cuts.iter().map(|c| bounds[c.index(bounds.len())]).collect();
        points.sort_unstable();
        points.dedup();
        let mut stream = StreamParser::new(config.clone());
        let mut last = 0;
        for p in points.into_iter().chain([input.len()]) {
            stream.feed(&input[last..p]).unwrap();
            last = p;
        }
        stream.finish(None).unwrap();
        prop_assert_eq!(shape(&stream.message()), shape(&whole), "{:?}", input);
    }
}
