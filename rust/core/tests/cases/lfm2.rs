//! lfm2 (Liquid LFM2 / LFM2.5). Outputs from vLLM's `test_lfm2_tool_parser.py` (wrapped in
//! `<|tool_call_start|>[...]<|tool_call_end|>` as its `_wrap` does) and the LFM2.5 chat template.

use serde_json::{json, Value};

use super::{broken, sample, weather_tools, Matrix};

fn tools() -> Value {
    let mut tools = weather_tools();
    let extra = json!([
        {"type": "function", "function": {"name": "get_candidate_status", "parameters": {"type": "object", "properties": {
            "candidate_id": {"type": "string"}}}}},
        {"type": "function", "function": {"name": "register_user", "parameters": {"type": "object", "properties": {
            "name": {"type": "string"}, "age": {"type": "integer"}, "address": {"type": "object"},
            "role": {"type": ["string", "null"]}, "passed_test": {"type": "boolean"}, "aliases": {"type": "array"}}}}},
        {"type": "function", "function": {"name": "do_something_cool", "parameters": {"type": "object", "properties": {
            "additional_data": {"type": "object"}, "steps": {"type": "array"}}}}},
        {"type": "function", "function": {"name": "exec", "parameters": {"type": "object", "properties": {
            "command": {"type": "string"}}}}}
    ]);
    tools
        .as_array_mut()
        .unwrap()
        .extend(extra.as_array().unwrap().iter().cloned());
    tools
}

pub fn matrix() -> Matrix {
    Matrix {
        format: "lfm2",
        tools: tools(),
        plain_content: sample("How can I help you today?", Some("How can I help you today?"), vec![]),
        one_call: sample(
            "<|tool_call_start|>[get_candidate_status(candidate_id='12345')]<|tool_call_end|>",
            None,
            vec![("get_candidate_status", json!({"candidate_id": "12345"}))],
        ),
        // vLLM `parallel_calls`.
        parallel_calls: sample(
            "<|tool_call_start|>[get_candidate_status(candidate_id='12345'), register_user(name='John Doe', age=37, address={'city': 'San Francisco', 'state': 'CA'}, role=None, passed_test=True, aliases=['John', 'Johnny'])]<|tool_call_end|>",
            None,
            vec![
                ("get_candidate_status", json!({"candidate_id": "12345"})),
                ("register_user", json!({"name": "John Doe", "age": 37, "address": {"city": "San Francisco", "state": "CA"},
                                          "role": null, "passed_test": true, "aliases": ["John", "Johnny"]})),
            ],
        ),
        // vLLM `content_after_tool_call` (LFM2.5 writes its remark after the block).
        text_before_between_after: sample(
            "Let me look.<|tool_call_start|>[get_candidate_status(candidate_id='12345')]<|tool_call_end|> and <|tool_call_start|>[get_weather()]<|tool_call_end|>\nChecking the current status of candidate ID 12345.",
            Some("Let me look. and \nChecking the current status of candidate ID 12345."),
            vec![("get_candidate_status", json!({"candidate_id": "12345"})), ("get_weather", json!({}))],
        ),
        nested_json: sample(
            "<|tool_call_start|>[search(filters={\"year\": {\"gte\": 2020}, \"langs\": [\"rust\", {\"x\": ')]<|tool_call_end|>'}]}, tags=[(1, 2.5), None, True])]<|tool_call_end|>",
            None,
            vec![("search", json!({"filters": {"year": {"gte": 2020}, "langs": ["rust", {"x": ")]<|tool_call_end|>"}]}, "tags": [[1, 2.5], null, true]}))],
        ),
        // vLLM `escaped_string` and `bracket_in_string`.
        unicode_and_escapes: sample(
            "<|tool_call_start|>[get_weather(location='Martha\\'s Vineyard \\u00e9 東京 🌧', unit='\\\"cool units\\\"'), exec(command='grep -F \"]\" log.txt')]<|tool_call_end|>",
            None,
            vec![
                ("get_weather", json!({"location": "Martha's Vineyard é 東京 🌧", "unit": "\"cool units\""})),
                ("exec", json!({"command": "grep -F \"]\" log.txt"})),
            ],
        ),
        // vLLM `parameterless`, `empty_dict`, `empty_list`.
        empty_arguments: sample(
            "<|tool_call_start|>[get_weather(), do_something_cool(additional_data={}), do_something_cool(steps=[])]<|tool_call_end|>",
            None,
            vec![("get_weather", json!({})), ("do_something_cool", json!({"additional_data": {}})), ("do_something_cool", json!({"steps": []}))],
        ),
        truncated: broken(
            "Sure.<|tool_call_start|>[get_candidate_status(candidate_id='123",
            Some("Sure."),
            vec![],
            vec!["truncated"],
        ),
        malformed: broken(
            "<|tool_call_start|>[get_candidate_status('12345')]<|tool_call_end|>After.",
            Some("After."),
            vec![],
            vec!["malformed_json"],
        ),
        more: vec![
            (
                // vLLM `dotted_name`.
                "vllm_dotted_name",
                broken(
                    "<|tool_call_start|>[grocery.orderIngredients(ingredientList=[{'name': 'Lasagna noodles', 'amount': 250, 'unit': 'g'}], deliveryAddress='845 Willow Lane, Springfield, IL 62704')]<|tool_call_end|>",
                    None,
                    vec![(
                        "grocery.orderIngredients",
                        json!({"ingredientList": [{"name": "Lasagna noodles", "amount": 250, "unit": "g"}], "deliveryAddress": "845 Willow Lane, Springfield, IL 62704"}),
                    )],
                    vec!["unknown_tool"],
                ),
            ),
            (
                // vLLM `test_whitespace_after_start_token`.
                "vllm_whitespace_after_start_token",
                sample(
                    "<|tool_call_start|> [get_candidate_status(candidate_id='12345')]<|tool_call_end|>",
                    None,
                    vec![("get_candidate_status", json!({"candidate_id": "12345"}))],
                ),
            ),
            (
                // vLLM `test_empty_tool_call_block`: no calls.
                "vllm_empty_block",
                sample("<|tool_call_start|>[]<|tool_call_end|>", None, vec![]),
            ),
            (
                // vLLM turns a Python set into a list (in hash order); here its elements come
                // in the order the model wrote them.
                "vllm_set_argument_is_an_array",
                sample(
                    "<|tool_call_start|>[search(tags={'urgent', 'bug'})]<|tool_call_end|>",
                    None,
                    vec![("search", json!({"tags": ["urgent", "bug"]}))],
                ),
            ),
            (
                "template_json_mapping_and_python_constants",
                sample(
                    "<|tool_call_start|>[register_user(name='Ann', address={\"city\": \"Bern\"}, passed_test=False, role=None)]<|tool_call_end|>",
                    None,
                    vec![("register_user", json!({"name": "Ann", "address": {"city": "Bern"}, "passed_test": false, "role": null}))],
                ),
            ),
            (
                "missing_end_marker_at_eof_keeps_calls",
                sample(
                    "<|tool_call_start|>[get_weather(location='Oslo')]",
                    None,
                    vec![("get_weather", json!({"location": "Oslo"}))],
                ),
            ),
            (
                "bare_list_without_markers_is_content",
                sample(
                    "Call [get_weather(location='Oslo')] later.",
                    Some("Call [get_weather(location='Oslo')] later."),
                    vec![],
                ),
            ),
        ],
    }
}

/// Detection's evidence: a short chat template written here (never derived from the syntax),
/// carrying the family's markers and layout as its real chat template writes them; its first
/// line says the reasoning mode and whether markers are special tokens.
pub const DETECT_TEMPLATE: &str = r#"{#- expect: reasoning=native special_tokens=yes -#}
{#- LFM2 layout: ChatML turns, Python call syntax in a list between <|tool_call_start|> and <|tool_call_end|>. -#}
{{- bos_token }}
{%- if tools %}{{- '<|im_start|>system\nList of tools: <|tool_list_start|>' + tools | tojson + '<|tool_list_end|><|im_end|>\n' }}{%- endif %}
{%- for message in messages %}
{%- if message.role == 'assistant' %}
{{- '<|im_start|>assistant\n' }}
{%- if message.reasoning_content %}{{- '<think>' + message.reasoning_content + '</think>' }}{%- endif %}
{%- if message.tool_calls %}
{{- '<|tool_call_start|>[' }}
{%- for tool_call in message.tool_calls %}
{{- tool_call.function.name + '(' }}
{%- for key, value in tool_call.function.arguments.items() %}{{- key + '=' + value | tojson }}{%- if not loop.last %}{{- ', ' }}{%- endif %}{%- endfor %}
{{- ')' }}{%- if not loop.last %}{{- ', ' }}{%- endif %}
{%- endfor %}
{{- ']<|tool_call_end|>' }}
{%- endif %}
{{- (message.content or '') + '<|im_end|>\n' }}
{%- elif message.role == 'tool' %}{{- '<|im_start|>tool\n<|tool_response_start|>' + message.content + '<|tool_response_end|><|im_end|>\n' }}
{%- else %}{{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>\n' }}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|im_start|>assistant\n' }}{%- endif %}
"#;
