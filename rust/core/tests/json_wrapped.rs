//! Reasoning and wrapper markers of the JSON-bodied formats added with harmony: Cohere's
//! thinking block and response wrappers, Hunyuan-A13B's `<think>` / `<answer>`, LongCat's
//! `<longcat_think>`.

use serde_json::{json, Value};
use toolwire_core::stream::{parse, ParserConfig};
use toolwire_core::tools::ToolSet;

fn config(format: &str, reasoning: Option<&str>) -> ParserConfig {
    ParserConfig::new(format, ToolSet::empty(), reasoning).unwrap()
}

fn args(arguments: &str) -> Value {
    serde_json::from_str(arguments).unwrap()
}

#[test]
fn cohere_plan_is_reasoning_with_native_reasoning() {
    // The cohere-melody "tool use" fixture.
    let text = "<|START_THINKING|>I will use the add tool to calculate the sum of 6 and 7.<|END_THINKING|><|START_ACTION|>[{\"tool_call_id\": \"0\", \"tool_name\": \"add\", \"parameters\": {\"a\": 6, \"b\": 7}}]<|END_ACTION|>";
    let message = parse(&config("cohere_command4", Some("native")), text);
    assert_eq!(
        message.reasoning,
        "I will use the add tool to calculate the sum of 6 and 7."
    );
    assert_eq!(message.content, "");
    assert_eq!(message.tool_calls[0].name, "add");
    assert_eq!(
        args(&message.tool_calls[0].arguments),
        json!({"a": 6, "b": 7})
    );
}

#[test]
fn cohere_prompt_opened_thinking_and_text_wrapper() {
    // Ollama's Cohere parser test: thinking opened by the prompt, Command 4 text wrapper.
    let text = "think<|END_THINKING|><|START_TEXT|>answer<|END_TEXT|>";
    let message = parse(&config("command_a", Some("closing_only")), text);
    assert_eq!(message.reasoning, "think");
    assert_eq!(message.content, "answer");
    assert!(message.issues.is_empty());
}

#[test]
fn hunyuan_think_then_answer() {
    let text = "<think>\nThe user wants the weather.\n</think>\n<answer>\n<tool_calls>[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Boston\"}}]</tool_calls>\n</answer>";
    let message = parse(&config("hunyuan_a13b", Some("native")), text);
    assert_eq!(message.reasoning, "\nThe user wants the weather.\n");
    assert_eq!(message.content_or_none(), None);
    assert_eq!(message.tool_calls.len(), 1);
    assert_eq!(
        args(&message.tool_calls[0].arguments),
        json!({"city": "Boston"})
    );
}

#[test]
fn longcat_think_block() {
    let text = "<longcat_think>Need weather.</longcat_think>\n<longcat_tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Beijing\"}}\n</longcat_tool_call>";
    let message = parse(&config("longcat", Some("native")), text);
    assert_eq!(message.reasoning, "Need weather.");
    assert_eq!(message.tool_calls.len(), 1);
}
