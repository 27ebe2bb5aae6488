//! What parsing produces: OpenAI-shaped tool calls, the streamed deltas, and issues.
//!
//! Issues are how broken model output is reported. A call that could not be read is not returned
//! as a call; its raw text lands in an issue instead, so nothing the model wrote is lost and an RL
//! trainer can turn the issue kind into a penalty.

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCall {
    pub index: usize,
    pub id: String,
    pub name: String,
    /// JSON text of the arguments, exactly the concatenation of the streamed fragments.
    pub arguments: String,
    /// For a call to a custom (freeform) tool: its raw text input.
    pub input: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IssueKind {
    /// The call body is not valid in the format (bad JSON, bad XML structure, bad literal).
    MalformedJson,
    /// The output ended inside a call.
    Truncated,
    /// The call names a tool the request did not declare (the call is still returned).
    UnknownTool,
    /// The call has no function name.
    MissingName,
    /// Text inside a call region that belongs to no call (kept here instead of being dropped).
    UnexpectedText,
    /// Arguments break the tool's JSON schema (the call is still returned).
    SchemaViolation,
    /// Two calls in one message carry the same id.
    DuplicateCallId,
    /// The call breaks the request's `tool_choice` or `parallel_tool_calls` (the call is still
    /// returned, flagged).
    NotAllowedByToolChoice,
    /// `tool_choice` required a call (or named one) and the output has none.
    MissingToolCall,
    /// The call ran past the parser's `max_call_bytes`: it was cut and dropped. The raw text is
    /// what the parser had kept of it; the detail says how many bytes after it were dropped.
    TooLarge,
    /// The tool's schema could not be compiled (a non-strict tool; a strict one is refused when
    /// the tools are built), so the call's arguments were not checked (the call is still returned).
    UncheckedArguments,
    /// The call was read without the format's opening marker, a special token (the engine
    /// decoded with `skip_special_tokens=True` and stripped it): a bare JSON call object or array
    /// at the output start. The call is still returned; serve with special tokens kept.
    MissingMarkers,
}

impl IssueKind {
    pub fn as_str(self) -> &'static str {
        match self {
            IssueKind::MalformedJson => "malformed_json",
            IssueKind::Truncated => "truncated",
            IssueKind::UnknownTool => "unknown_tool",
            IssueKind::MissingName => "missing_name",
            IssueKind::UnexpectedText => "unexpected_text",
            IssueKind::SchemaViolation => "schema_violation",
            IssueKind::DuplicateCallId => "duplicate_call_id",
            IssueKind::NotAllowedByToolChoice => "not_allowed_by_tool_choice",
            IssueKind::MissingToolCall => "missing_tool_call",
            IssueKind::TooLarge => "too_large",
            IssueKind::UncheckedArguments => "unchecked_arguments",
            IssueKind::MissingMarkers => "missing_markers",
        }
    }

    /// Whether a call carrying this issue is still returned in `tool_calls`.
    pub fn keeps_call(self) -> bool {
        matches!(
            self,
            IssueKind::UnknownTool
                | IssueKind::SchemaViolation
                | IssueKind::DuplicateCallId
                | IssueKind::NotAllowedByToolChoice
                | IssueKind::UncheckedArguments
                | IssueKind::MissingMarkers
        )
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Issue {
    /// Stream index of the call the issue belongs to, if a call had been started.
    pub index: Option<usize>,
    pub kind: IssueKind,
    pub detail: String,
    /// The model's text the issue is about (markers included).
    pub raw: String,
    /// For a schema violation: the JSON pointer into the arguments and the failing keyword.
    pub pointer: Option<String>,
    pub keyword: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Message {
    pub content: String,
    pub reasoning: String,
    pub tool_calls: Vec<ToolCall>,
    pub issues: Vec<Issue>,
    pub finish_reason: Option<String>,
}

impl Message {
    /// OpenAI leaves `content` null on a pure tool-call turn; whitespace around calls is formatting.
    pub fn content_or_none(&self) -> Option<&str> {
        if self.content.is_empty()
            || (!self.tool_calls.is_empty() && self.content.trim().is_empty())
        {
            None
        } else {
            Some(&self.content)
        }
    }

    pub fn reasoning_or_none(&self) -> Option<&str> {
        (!self.reasoning.is_empty()).then_some(self.reasoning.as_str())
    }

    pub fn is_valid(&self) -> bool {
        self.issues.is_empty()
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallDelta {
    pub index: usize,
    /// Present on the first delta of a call, with `name`.
    pub id: Option<String>,
    pub name: Option<String>,
    pub arguments: String,
    /// A custom tool's whole input, sent once the call is complete (never partially).
    pub input: Option<String>,
}

/// One streamed update, shaped like `choices[0].delta` of an OpenAI chat completion chunk.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Delta {
    pub reasoning: Option<String>,
    pub content: Option<String>,
    pub tool_calls: Vec<CallDelta>,
    pub finish_reason: Option<String>,
}

impl Delta {
    fn has_tool_calls(&self) -> bool {
        !self.tool_calls.is_empty()
    }
}

/// Accumulates deltas, merging adjacent updates of the same kind so a feed returns few objects.
#[derive(Debug, Default)]
pub struct DeltaBuffer {
    deltas: Vec<Delta>,
    /// One-shot parsing wants only the message: updates are dropped instead of copied.
    discard: bool,
}

impl DeltaBuffer {
    /// A buffer that keeps nothing (its `take` is always empty).
    pub fn discarding() -> Self {
        Self {
            deltas: Vec::new(),
            discard: true,
        }
    }

    pub fn reasoning(&mut self, text: &str) {
        if self.discard {
            return;
        }
        if text.is_empty() {
            return;
        }
        match self.deltas.last_mut() {
            Some(d) if d.content.is_none() && !d.has_tool_calls() && d.finish_reason.is_none() => {
                d.reasoning.get_or_insert_with(String::new).push_str(text)
            }
            _ => self.deltas.push(Delta {
                reasoning: Some(text.to_owned()),
                ..Delta::default()
            }),
        }
    }

    pub fn content(&mut self, text: &str) {
        if self.discard {
            return;
        }
        if text.is_empty() {
            return;
        }
        match self.deltas.last_mut() {
            Some(d) if !d.has_tool_calls() && d.finish_reason.is_none() => {
                d.content.get_or_insert_with(String::new).push_str(text)
            }
            _ => self.deltas.push(Delta {
                content: Some(text.to_owned()),
                ..Delta::default()
            }),
        }
    }

    pub fn call_start(&mut self, index: usize, id: &str, name: &str) {
        if self.discard {
            return;
        }
        let entry = CallDelta {
            index,
            id: Some(id.to_owned()),
            name: Some(name.to_owned()),
            arguments: String::new(),
            input: None,
        };
        match self.deltas.last_mut() {
            Some(d) if d.finish_reason.is_none() && (d.has_tool_calls() || d.content.is_none()) => {
                d.tool_calls.push(entry)
            }
            _ => self.deltas.push(Delta {
                tool_calls: vec![entry],
                ..Delta::default()
            }),
        }
    }

    pub fn call_args(&mut self, index: usize, fragment: &str) {
        if self.discard {
            return;
        }
        if fragment.is_empty() {
            return;
        }
        if let Some(d) = self.deltas.last_mut() {
            if d.finish_reason.is_none() {
                if let Some(last) = d.tool_calls.last_mut() {
                    if last.index == index {
                        last.arguments.push_str(fragment);
                        return;
                    }
                }
                if d.has_tool_calls() {
                    d.tool_calls.push(CallDelta {
                        index,
                        id: None,
                        name: None,
                        arguments: fragment.to_owned(),
                        input: None,
                    });
                    return;
                }
            }
        }
        let entry = CallDelta {
            index,
            id: None,
            name: None,
            arguments: fragment.to_owned(),
            input: None,
        };
        self.deltas.push(Delta {
            tool_calls: vec![entry],
            ..Delta::default()
        });
    }

    /// A complete custom-tool call, in one delta.
    pub fn custom_call(&mut self, index: usize, id: &str, name: &str, input: &str) {
        if self.discard {
            return;
        }
        self.call_start(index, id, name);
        if let Some(entry) = self.deltas.last_mut().and_then(|d| d.tool_calls.last_mut()) {
            entry.input = Some(input.to_owned());
        }
    }

    pub fn finish(&mut self, reason: &str) {
        if self.discard {
            return;
        }
        self.deltas.push(Delta {
            finish_reason: Some(reason.to_owned()),
            ..Delta::default()
        });
    }

    pub fn take(&mut self) -> Vec<Delta> {
        std::mem::take(&mut self.deltas)
    }

    pub fn clear(&mut self) {
        self.deltas.clear();
    }
}
