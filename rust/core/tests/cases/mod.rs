//! The shared case matrix: every format answers every case, with a sample of real model output in
//! that format and what it means, or an explicit reason why the case does not apply.

use serde_json::Value;

pub mod apertus;
pub mod beam;
pub mod cohere;
pub mod deepseek_v3;
pub mod deepseek_v3_1;
pub mod deepseek_v3_2;
pub mod deepseek_v4;
pub mod deepseek_v4_1;
pub mod default;
pub mod dots;
pub mod ernie45;
pub mod functiongemma;
pub mod gemma4;
pub mod gigachat3;
pub mod glm45;
pub mod glm47;
pub mod granite;
pub mod granite_20b_fc;
pub mod harmony;
pub mod hermes;
pub mod hunyuan;
pub mod hunyuan_a13b;
pub mod inkling;
pub mod internlm;
pub mod iquest;
pub mod jamba;
pub mod k2_horizon;
pub mod kimi_k2;
pub mod kimi_k3;
pub mod lfm2;
pub mod llama3_json;
pub mod longcat;
pub mod minimax_m2;
pub mod minimax_m3;
pub mod mistral;
pub mod muse;
pub mod nemotron_deci;
pub mod phi4;
pub mod pythonic;
pub mod qwen3_coder;
pub mod seed_oss;
pub mod step3;
pub mod xlam;

pub struct Expect {
    pub content: Option<&'static str>,
    pub calls: Vec<(&'static str, Value)>,
    pub issues: Vec<&'static str>,
}

pub enum Case {
    Sample { input: &'static str, expect: Expect },
    NotApplicable(&'static str),
}

pub fn sample(
    input: &'static str,
    content: Option<&'static str>,
    calls: Vec<(&'static str, Value)>,
) -> Case {
    Case::Sample {
        input,
        expect: Expect {
            content,
            calls,
            issues: vec![],
        },
    }
}

pub fn broken(
    input: &'static str,
    content: Option<&'static str>,
    calls: Vec<(&'static str, Value)>,
    issues: Vec<&'static str>,
) -> Case {
    Case::Sample {
        input,
        expect: Expect {
            content,
            calls,
            issues,
        },
    }
}

/// Every field must be answered; adding a format means filling all of them.
pub struct Matrix {
    pub format: &'static str,
    pub tools: Value,
    pub plain_content: Case,
    pub one_call: Case,
    pub parallel_calls: Case,
    pub text_before_between_after: Case,
    pub nested_json: Case,
    pub unicode_and_escapes: Case,
    pub empty_arguments: Case,
    pub truncated: Case,
    pub malformed: Case,
    pub more: Vec<(&'static str, Case)>,
}

impl Matrix {
    pub fn cases(&self) -> Vec<(&'static str, &Case)> {
        let mut all = vec![
            ("plain_content", &self.plain_content),
            ("one_call", &self.one_call),
            ("parallel_calls", &self.parallel_calls),
            ("text_before_between_after", &self.text_before_between_after),
            ("nested_json", &self.nested_json),
            ("unicode_and_escapes", &self.unicode_and_escapes),
            ("empty_arguments", &self.empty_arguments),
            ("truncated", &self.truncated),
            ("malformed", &self.malformed),
        ];
        all.extend(self.more.iter().map(|(name, case)| (*name, case)));
        all
    }
}

pub fn all() -> Vec<Matrix> {
    vec![
        hermes::matrix(),
        llama3_json::matrix(),
        mistral::matrix(),
        harmony::matrix(),
        beam::matrix(),
        longcat::matrix(),
        hunyuan_a13b::matrix(),
        cohere::matrix(),
        qwen3_coder::matrix(),
        glm45::matrix(),
        glm47::matrix(),
        deepseek_v3_2::matrix(),
        deepseek_v4::matrix(),
        minimax_m2::matrix(),
        minimax_m3::matrix(),
        default::matrix(),
        deepseek_v3::matrix(),
        deepseek_v3_1::matrix(),
        kimi_k2::matrix(),
        gemma4::matrix(),
        pythonic::matrix(),
        phi4::matrix(),
        jamba::matrix(),
        nemotron_deci::matrix(),
        granite::matrix(),
        xlam::matrix(),
        internlm::matrix(),
        seed_oss::matrix(),
        step3::matrix(),
        functiongemma::matrix(),
        hunyuan::hy3(),
        hunyuan::hy4(),
        deepseek_v4_1::matrix(),
        apertus::matrix(),
        gigachat3::matrix(),
        lfm2::matrix(),
        dots::matrix(),
        iquest::matrix(),
        granite_20b_fc::matrix(),
        ernie45::matrix(),
        kimi_k3::matrix(),
        inkling::matrix(),
        muse::matrix(),
        k2_horizon::matrix(),
    ]
}

pub fn weather_tools() -> Value {
    serde_json::json!([
        {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {
            "location": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            "days": {"type": "integer"}}}}},
        {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object", "properties": {
            "timezone": {"type": "string"}}}}},
        {"type": "function", "function": {"name": "search", "parameters": {"type": "object", "properties": {
            "query": {"type": "string"}, "filters": {"type": "object"}, "tags": {"type": "array"}}}}},
        {"type": "function", "function": {"name": "ping", "parameters": {"type": "object", "properties": {}}}}
    ])
}

/// `weather_tools` plus the tools the conformance fixtures
/// (ai-dynamo toolcalling fixtures-batch-v1) call.
pub fn conformance_tools() -> Value {
    let mut tools = weather_tools();
    let extra = serde_json::json!([
        {"type": "function", "function": {"name": "run_query", "parameters": {"type": "object", "properties": {
            "sql": {"type": "string"}}}}},
        {"type": "function", "function": {"name": "book_flight", "parameters": {"type": "object", "properties": {
            "destination": {"type": "string"}, "passengers": {"type": "integer"}, "first_class": {"type": "boolean"}}}}},
        {"type": "function", "function": {"name": "set_temperature", "parameters": {"type": "object", "properties": {
            "celsius": {"type": "integer"}}}}},
        {"type": "function", "function": {"name": "process_data", "parameters": {"type": "object", "properties": {
            "items": {"type": "array"}, "config": {"type": "object"}, "payload": {"type": "object"}}}}}
    ]);
    if let (Some(list), Some(more)) = (tools.as_array_mut(), extra.as_array()) {
        list.extend(more.iter().cloned());
    }
    tools
}
