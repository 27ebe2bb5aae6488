//! Grammar state keys for the mask cache, derived from what toolwire knows about the output.
//!
//! xgrammar exposes no state id, so a cache of masks needs a key that is equal only when the
//! masks must be equal. A mask is a function of the *residual language*: the set of
//! continuations the grammar still accepts. For a grammar whose elements all work on text (no
//! token-level elements, no token budgets) the residual is a function of the accepted text, so
//! `(grammar, hash of the whole output)` is always sound; for token-level grammars the same holds
//! with the token ids. Such keys hit only on shared prefixes, so the keyer also finds *anchors*:
//! points where the grammar's state is canonical whatever came before. The key is then
//! `(grammar, anchor kind, calls so far capped at 1, hash of the text since the anchor)`; inside
//! a tag (from its trigger to its end) the call count is left out, as the rest of the output is
//! the same after a first or a later call.
//! Anchors it can defend:
//!
//! * the start of the output;
//! * in the free text of a `triggered_tags` format, every point where no suffix of the text is a
//!   proper prefix of a trigger or an excluded string and no UTF-8 character is half written
//!   (the free-text state is the Aho-Corasick state over those strings, here at its root);
//! * right after the end string of a call, in `triggered_tags` and `tags_with_separator` formats
//!   (also as the last element of a `sequence` whose earlier elements are constant strings,
//!   `any_text` tags with a string end such as a reasoning block, or a whitespace regex);
//! * inside a JSON string value whose schema is an unconstrained string (or any JSON): the
//!   residual does not depend on the characters already written unless an escape or a UTF-8
//!   character is half written, so those steps share the key of the opening quote, and after the
//!   closing quote the string's text is forgotten;
//! * in a section tag (a tag whose content is a `tags_with_separator` of calls: DeepSeek, Kimi
//!   K2, MiniMax M2, the JSON-array families), at the section's start and after each of its
//!   calls, keyed by the section's tag and whether a call came before (which decides whether a
//!   separator is due): the calls themselves are forgotten. Inside a call the anchors below
//!   apply as in a plain tag;
//! * inside JSON content, right after a member's value ends (a string's closing quote, an
//!   object's or array's close, the byte after a number or literal), when every container from
//!   the root down is a *product*: an object with only `properties`, `required` and
//!   `additionalProperties`, an array with only `items` and bounds, or any JSON. Each member's
//!   language then depends only on its key, and which members may follow only on the keys
//!   already written (objects, in any order xgrammar allows) or the item count (bounded
//!   arrays), so the rest of the output is a function of that position, keyed by the tag and,
//!   per container, its keys so far or its count. Where the plan says the grammar takes an
//!   object's members in `properties` order ([`KeyPlan::with_ordered_objects`], as xgrammar
//!   does: optional ones skipped, additional ones after them), the rest after a member depends
//!   only on that member's key, so an object is keyed by its last key (every `required` name
//!   must be declared). After the whole value only the tag matters;
//! * likewise right after an object's key (its closing quote) in such containers: the member's
//!   value and all after it depend only on the position, which then holds that key, so the
//!   value's states are shared by every member that came before it (without this anchor, each
//!   pair of a member and the one written before it made keys of its own for the whole value,
//!   and optional members in random combinations kept making keys new to the cache). Inside
//!   the key itself, in an ordered object that admits only its declared members
//!   (`additionalProperties: false`), the members the key may still name are known (those
//!   after the last key, up to the first `required` one, whose names start with the key's
//!   bytes), and each one's rest depends on it alone, so the state there is keyed by those
//!   members and the key's bytes;
//! * inside a plain JSON number (`{"type": "integer"}`, `{"type": "number"}`, or any JSON) in
//!   a product container: the digits written are replaced by the state of a DFA for xgrammar's
//!   number rule (`-?(0|[1-9][0-9]*)` then fraction and exponent). Two prefixes that end in one
//!   state of a DFA of a language have the same continuations, so `7` and `2045` share a key.
//!   The same holds for an XML value `[lead] number [trail]` with constant `lead`/`trail`
//!   (`\n7\n`), followed through the value and into its close.
//!
//! * in an XML call as the grammar builder writes it from a registered format's
//!   [`ParamTags`](crate::spec::ParamTags) (parameters in schema order, each `[ws] open value
//!   close [ws]` with the name filled into the spec's `open` and `close`, the whitespace where
//!   `between` says, optional ones wrapped in `optional`), at the start of a parameter's value
//!   and right after its close string, keyed by (tag, parameter). The residual there is the rest
//!   of that parameter, the later parameters in order, the call's end and what follows the call:
//!   it does not depend on which optional parameters came before or on their values. This needs
//!   the close to end the value at its first occurrence, so a parameter is followed only where
//!   the close is border-free (no proper prefix equal to a suffix, so an occurrence cannot
//!   straddle the value's end) and the value provably cannot hold it: raw text whose `excludes`
//!   has a substring of the close, or a value that can never hold the close's first byte
//!   (constants, their `or`/`sequence`/`optional`, scalar JSON schemas, JSON whose `excludes`
//!   holds that byte and whose schema has no `pattern`/`format`). Heads and the call's end
//!   (less its leading whitespace) are matched after the whitespace gap against the parameters
//!   still allowed (up to the next required one); a match must be unique and complete. Until
//!   it is, the state is keyed by the candidates the head's bytes still name and those bytes:
//!   each candidate's rest depends on that parameter (or the end) alone, not on the one before
//!   the gap;
//! * inside a raw-text XML value (bare `any_text`, no `max_chars`): wherever no suffix of the
//!   value is a proper prefix of its exclusions, its close or the call's end, and no UTF-8
//!   character is half written, the value's state is that of its start, so those steps share
//!   the start's key (as for JSON strings). Where such a suffix exists, the longest one is the
//!   state of the Aho-Corasick automaton over those strings, so the key is the start's and that
//!   suffix (`…Paris\n</par` and `…São Paulo\n</par` share one).
//!
//! Tag ends are found by scanning the call's content: JSON (`json_schema` in the `json` style,
//! an object or array), `any_text` (its end string is excluded from it), a constant string or
//! XML parameters as above. Wherever the keyer cannot follow the structure (`json_schema` in an
//! XML style, any-name XML parameters, a value that might hold its close, a begin that is a
//! prefix of another, whitespace before an end string, ...) it stops looking for anchors and keys
//! by the text since the last one: still sound, fewer hits.
//!
//! The hash is two SipHash-1-3 streams with process-random keys (128 bits), so output text
//! cannot be crafted to collide keys. The argument for each anchor is about the grammar's
//! language, not xgrammar's internals; `toolwire.masks.BatchMasker(verify=True)` checks every
//! cache hit against a freshly computed mask.
//!
//! Layout: `plan` reads a structural tag's JSON into a [`Plan`] (`xml` the XML calls in it),
//! `keyer` follows one output through the plan, `json` scans JSON content, `hash` makes digests.

mod hash;
mod json;
mod keyer;
mod plan;
mod xml;

pub use keyer::{family, Mode, StateKeyer};
pub use plan::{KeyPlan, Plan};

const WS: [u8; 4] = [b' ', b'\t', b'\n', b'\r'];

/// Bytes read without anchors after which [`StateKeyer::cacheable`] turns false.
pub const LOST_KEY_BYTES: usize = 128;

/// Bytes in a key from [`StateKeyer::key`]: grammar id, anchor kind, call count, digest.
pub const KEY_LEN: usize = 16 + 1 + 1 + 16;

fn is_ws(b: u8) -> bool {
    WS.contains(&b)
}

#[cfg(test)]
mod tests;
