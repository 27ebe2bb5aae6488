//! Errors for API misuse. Malformed model output is never an error: it is reported as data
//! (`Issue`s on the parsed message), so a hostile completion cannot take down the caller.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    UnknownFormat(String),
    InvalidTools(String),
    InvalidArgument(String),
    StreamFinished,
    MixedInput,
    NoVocab,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::UnknownFormat(name) => write!(
                f,
                "unknown tool-call format {name:?}; call toolwire.formats() for the list of formats"
            ),
            Error::InvalidTools(why) => write!(f, "invalid tools: {why}"),
            Error::InvalidArgument(why) => write!(f, "{why}"),
            Error::StreamFinished => write!(
                f,
                "this stream is finished; start a new one with ToolParser.stream()"
            ),
            Error::MixedInput => write!(
                f,
                "a stream is fed either text (feed) or token ids (feed_tokens), not both"
            ),
            Error::NoVocab => write!(
                f,
                "feed_tokens needs a vocabulary: pass vocab= to ToolParser"
            ),
        }
    }
}

impl std::error::Error for Error {}

pub type Result<T, E = Error> = std::result::Result<T, E>;
