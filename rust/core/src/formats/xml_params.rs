//! Writing XML-encoded parameters as a streamed JSON arguments object, shared by the formats
//! whose calls carry one tag per parameter (qwen3_coder, GLM).
//!
//! The fragments are `{`, then per parameter `"KEY": ` (after `, ` from the second on) and the
//! value, then `}`, so they concatenate to the final arguments in the model's parameter order. A
//! string-typed value is streamed as escaped JSON string text while it arrives; any other value is
//! held until its end and typed by the tool's schema ([`crate::xml_value`]).

use serde_json::Value;

use crate::json::{escape_into, quote};
use crate::region::Sink;
use crate::tools::ToolSet;
use crate::xml_value::{typed_json_as, TypeSet};

#[derive(Debug, Default)]
pub struct ParamWriter {
    count: usize,
    types: TypeSet,
    streaming: bool,
    value: String,
}

impl ParamWriter {
    pub fn new() -> Self {
        Self::default()
    }

    /// Parameters begun so far in this call.
    pub fn count(&self) -> usize {
        self.count
    }

    pub fn open(&mut self, sink: &mut Sink) {
        self.count = 0;
        self.value.clear();
        sink.args("{");
    }

    /// Start a parameter's value; `schema` is the parameter's schema, if the tool declares it.
    pub fn begin(&mut self, key: &str, schema: Option<&Value>, sink: &mut Sink) {
        let mut fragment = String::with_capacity(key.len() + 6);
        if self.count > 0 {
            fragment.push_str(", ");
        }
        fragment.push_str(&quote(key));
        fragment.push_str(": ");
        self.types = TypeSet::of(schema);
        self.streaming = self.types.is_string_only();
        if self.streaming {
            fragment.push('"');
        }
        self.value.clear();
        self.count += 1;
        sink.args(&fragment);
    }

    /// More of the current value's raw text.
    pub fn text(&mut self, text: &str, sink: &mut Sink) {
        if text.is_empty() {
            return;
        }
        if self.streaming {
            let mut fragment = String::with_capacity(text.len() + 8);
            escape_into(&mut fragment, text);
            sink.args(&fragment);
        } else {
            self.value.push_str(text);
        }
    }

    /// The current value is complete.
    pub fn end(&mut self, sink: &mut Sink) {
        if self.streaming {
            sink.args("\"");
        } else {
            let typed = typed_json_as(&self.value, self.types);
            self.value.clear();
            sink.args(&typed);
        }
    }

    pub fn close(&mut self, sink: &mut Sink) {
        sink.args("}");
    }
}

/// The schema of `tool`'s parameter `param`, if both are declared.
pub fn param_schema<'a>(tools: &'a ToolSet, tool: &str, param: &str) -> Option<&'a Value> {
    tools.get(tool).and_then(|t| t.parameter_schema(param))
}

/// Reading a tag's name up to its closing `>` (`<function=NAME>`, `<parameter=KEY>`).
pub enum TagName {
    /// The name ended; this many bytes were read, the `>` included.
    Done(usize),
    /// All the input was read into the name; more is needed.
    More,
    /// A character that cannot be in the name, at this offset.
    Invalid(usize),
}

/// Longest tag name accepted (a hostile stream cannot grow it without bound).
pub const MAX_TAG_NAME: usize = 512;

/// Append `rest` to `name` up to `>`; a newline, `<`, or (when `strict`) any whitespace or quote
/// makes the name invalid.
pub fn read_tag_name(name: &mut String, rest: &str, strict: bool) -> TagName {
    for (pos, c) in rest.char_indices() {
        if c == '>' {
            name.push_str(&rest[..pos]);
            return TagName::Done(pos + 1);
        }
        let bad = c == '\n'
            || c == '<'
            || (strict && (c.is_whitespace() || c == '"' || c == '\''))
            || name.len() + pos >= MAX_TAG_NAME;
        if bad {
            name.push_str(&rest[..pos]);
            return TagName::Invalid(pos);
        }
    }
    name.push_str(rest);
    TagName::More
}
