//! One adapter per implementation: how it is set up for a request, fed chunks, finished, and
//! asked to parse a whole output, each returning the calls it found as (name, arguments text).

use std::sync::Arc;

use serde_json::Value;
use toolwire_core::stream::{parse, ParserConfig, StreamParser};
use toolwire_core::tools::ToolSet;

pub type Found = Vec<(String, String)>;

/// The tools in each implementation's own type, converted once (as a server does per request
/// before it builds a parser).
pub struct Tools {
    pub toolwire: Arc<ToolSet>,
    #[cfg(feature = "dynamo_v1")]
    pub dynamo_v1: Vec<dynamo_parsers::ToolDefinition>,
    #[cfg(feature = "dynamo_v2")]
    pub dynamo_v2: Vec<dynamo_parsers_v2::Tool>,
    #[cfg(feature = "smg")]
    pub smg: Vec<openai_protocol::common::Tool>,
}

impl Tools {
    pub fn new(json: Value) -> Self {
        let functions: Vec<&Value> = json
            .as_array()
            .unwrap()
            .iter()
            .map(|t| &t["function"])
            .collect();
        let _ = &functions;
        Self {
            toolwire: Arc::new(ToolSet::from_json(&json).expect("tools")),
            #[cfg(feature = "dynamo_v1")]
            dynamo_v1: functions
                .iter()
                .map(|f| dynamo_parsers::ToolDefinition {
                    name: f["name"].as_str().unwrap().to_owned(),
                    parameters: Some(f["parameters"].clone()),
                    strict: None,
                })
                .collect(),
            #[cfg(feature = "dynamo_v2")]
            dynamo_v2: functions
                .iter()
                .map(|f| dynamo_parsers_v2::Tool {
                    name: f["name"].as_str().unwrap().to_owned(),
                    description: f["description"].as_str().map(str::to_owned),
                    parameters: f["parameters"].clone(),
                    strict: None,
                })
                .collect(),
            #[cfg(feature = "smg")]
            smg: serde_json::from_value(json.clone()).expect("smg tools"),
        }
    }
}

/// One implementation under test for one format.
pub enum Imp {
    /// toolwire without a tool set: no schema validation, no unknown-tool flagging.
    Toolwire(ParserConfig),
    /// toolwire with the request's tools: every call's arguments validated against its schema.
    ToolwireValidated(ParserConfig),
    #[cfg(feature = "dynamo_v1")]
    DynamoV1(&'static str),
    #[cfg(feature = "dynamo_v2")]
    DynamoV2(&'static str),
    #[cfg(feature = "smg")]
    Smg(&'static str, Box<dyn tool_parser::ToolParser>),
}

impl Imp {
    pub fn label(&self) -> &'static str {
        match self {
            Imp::Toolwire(_) => "toolwire",
            Imp::ToolwireValidated(_) => "toolwire+schema",
            #[cfg(feature = "dynamo_v1")]
            Imp::DynamoV1(_) => "dynamo v1",
            #[cfg(feature = "dynamo_v2")]
            Imp::DynamoV2(_) => "dynamo v2",
            #[cfg(feature = "smg")]
            Imp::Smg(..) => "smg",
        }
    }

    pub fn streams(&self) -> bool {
        #[cfg(feature = "dynamo_v1")]
        if matches!(self, Imp::DynamoV1(_)) {
            return false;
        }
        true
    }

    pub fn one_shot(&self, text: &str, tools: &Tools) -> Result<Found, String> {
        match self {
            Imp::Toolwire(config) | Imp::ToolwireValidated(config) => {
                let message = parse(config, text);
                Ok(message
                    .tool_calls
                    .into_iter()
                    .map(|c| (c.name, c.arguments))
                    .collect())
            }
            #[cfg(feature = "dynamo_v1")]
            Imp::DynamoV1(key) => {
                let parsed = futures::executor::block_on(
                    dynamo_parsers::tool_calling::parsers::detect_and_parse_tool_call_with_recovery(
                        text,
                        Some(key),
                        Some(&tools.dynamo_v1),
                    ),
                )
                .map_err(|e| e.to_string())?;
                Ok(parsed
                    .0
                    .into_iter()
                    .map(|c| (c.function.name, c.function.arguments))
                    .collect())
            }
            #[cfg(feature = "dynamo_v2")]
            Imp::DynamoV2(family) => {
                let mut parser =
                    dynamo_parsers_v2::create_tool_parser_for_family(family, &tools.dynamo_v2)
                        .map_err(|e| e.to_string())?;
                let result = parser.parse_complete(text).map_err(|e| e.to_string())?;
                Ok(result
                    .calls
                    .into_iter()
                    .map(|c| (c.name.unwrap_or_default(), c.arguments))
                    .collect())
            }
            #[cfg(feature = "smg")]
            Imp::Smg(_, parser) => {
                let (_, calls) =
                    futures::executor::block_on(parser.parse_complete_with_tools(text, &tools.smg))
                        .map_err(|e| e.to_string())?;
                Ok(calls
                    .into_iter()
                    .map(|c| (c.function.name, c.function.arguments))
                    .collect())
            }
        }
    }

    /// Builds the per-request parser and drops it: the setup a streamed request pays once.
    pub fn setup(&self, tools: &Tools) {
        match self {
            Imp::Toolwire(config) | Imp::ToolwireValidated(config) => {
                std::hint::black_box(StreamParser::new(config.clone()));
            }
            #[cfg(feature = "dynamo_v1")]
            Imp::DynamoV1(_) => {}
            #[cfg(feature = "dynamo_v2")]
            Imp::DynamoV2(family) => {
                let _ = std::hint::black_box(dynamo_parsers_v2::create_tool_parser_for_family(
                    family,
                    &tools.dynamo_v2,
                ));
            }
            #[cfg(feature = "smg")]
            Imp::Smg(key, _) => {
                std::hint::black_box(smg_factory().registry().create_parser(key));
            }
        }
        let _ = tools;
    }

    /// Streams `chunks` through a fresh parser. With `first_argument`, stops as soon as any
    /// argument text has come out (the calls returned are then partial).
    pub fn stream(
        &self,
        chunks: &[&str],
        tools: &Tools,
        first_argument: bool,
    ) -> Result<Found, String> {
        let mut found = Calls::default();
        match self {
            Imp::Toolwire(config) | Imp::ToolwireValidated(config) => {
                let mut parser = StreamParser::new(config.clone());
                for chunk in chunks {
                    for delta in parser.feed(chunk).map_err(|e| e.to_string())? {
                        for call in delta.tool_calls {
                            found.add(call.index, call.name, &call.arguments);
                        }
                    }
                    if first_argument && found.has_arguments() {
                        return Ok(found.0);
                    }
                }
                for delta in parser.finish(None).map_err(|e| e.to_string())? {
                    for call in delta.tool_calls {
                        found.add(call.index, call.name, &call.arguments);
                    }
                }
            }
            #[cfg(feature = "dynamo_v1")]
            Imp::DynamoV1(_) => return Err("no streaming entry point driven".into()),
            #[cfg(feature = "dynamo_v2")]
            Imp::DynamoV2(family) => {
                let mut parser =
                    dynamo_parsers_v2::create_tool_parser_for_family(family, &tools.dynamo_v2)
                        .map_err(|e| e.to_string())?;
                for chunk in chunks {
                    for call in parser.push(chunk).map_err(|e| e.to_string())?.calls {
                        found.add(call.tool_index, call.name, &call.arguments);
                    }
                    if first_argument && found.has_arguments() {
                        return Ok(found.0);
                    }
                }
                for call in parser.finish().map_err(|e| e.to_string())?.calls {
                    found.add(call.tool_index, call.name, &call.arguments);
                }
            }
            #[cfg(feature = "smg")]
            Imp::Smg(key, _) => {
                let mut parser = smg_factory()
                    .registry()
                    .create_parser(key)
                    .ok_or("no parser")?;
                for chunk in chunks {
                    let result =
                        futures::executor::block_on(parser.parse_incremental(chunk, &tools.smg))
                            .map_err(|e| e.to_string())?;
                    for call in result.calls {
                        found.add(call.tool_index, call.name, &call.parameters);
                    }
                    if first_argument && found.has_arguments() {
                        return Ok(found.0);
                    }
                }
                for call in parser.get_unstreamed_tool_args().unwrap_or_default() {
                    found.add(call.tool_index, call.name, &call.parameters);
                }
                std::hint::black_box(parser.take_unstreamed_normal_text());
            }
        }
        let _ = tools;
        Ok(found.0)
    }
}

#[cfg(feature = "smg")]
pub fn smg_factory() -> &'static tool_parser::ParserFactory {
    static FACTORY: std::sync::OnceLock<tool_parser::ParserFactory> = std::sync::OnceLock::new();
    FACTORY.get_or_init(tool_parser::ParserFactory::new)
}

/// Calls assembled from streamed fragments, by call index.
#[derive(Default)]
struct Calls(Found);

impl Calls {
    fn add(&mut self, index: usize, name: Option<String>, arguments: &str) {
        if self.0.len() <= index {
            self.0.resize(index + 1, (String::new(), String::new()));
        }
        let call = &mut self.0[index];
        if let Some(name) = name {
            call.0 = name;
        }
        call.1.push_str(arguments);
    }

    fn has_arguments(&self) -> bool {
        self.0.iter().any(|c| !c.1.is_empty())
    }
}
