//! toolwire-core: incremental, streaming tool-call parsers for LLM output, in pure Rust.
//!
//! Models write tool calls in many wire formats. Each format is described once by a
//! [`spec::Syntax`] (bound to its parser and renderer by [`formats::Format`]); the
//! [`stream::StreamParser`] engine reads any of them from text deltas (or decoded token ids),
//! releases content as soon as it cannot be a marker, streams call names and argument fragments in
//! the OpenAI shape, and reports broken output as [`message::Issue`]s instead of failing.
//!
//! ```
//! use toolwire_core::{stream::{ParserConfig, StreamParser}, tools::ToolSet};
//! let config = ParserConfig::new("hermes", ToolSet::empty(), None).unwrap();
//! let mut stream = StreamParser::new(config);
//! stream.feed("Sure.<tool_call>\n{\"name\": \"f\", \"argu").unwrap();
//! stream.feed("ments\": {\"x\": 1}}\n</tool_call>").unwrap();
//! stream.finish(None).unwrap();
//! let message = stream.message();
//! assert_eq!(message.content, "Sure.");
//! assert_eq!(message.tool_calls[0].arguments, "{\"x\": 1}");
//! ```

pub mod bitmask;
pub mod detect;
pub mod error;
pub mod formats;
pub mod ids;
pub mod json;
pub mod message;
pub mod region;
pub mod render;
pub mod request;
pub mod spec;
pub mod stream;
pub mod text;
pub mod tools;
pub mod vocab;
pub mod xml_value;

pub use error::{Error, Result};
pub mod schema;
