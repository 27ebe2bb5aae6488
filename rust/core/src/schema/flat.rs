//! A quick "valid" for the commonest tool schema: an object whose properties are scalars.
//!
//! Most `parameters` schemas are `{"type": "object", "properties": {...}, "required": [...]}`
//! with each property a `type` (perhaps with an `enum`), and most arguments a model writes fit
//! them. For such a call the general path (the instance tree, then the evaluator walking node by
//! node) costs several times what reading the text once does. [`FlatObject`] is built from the
//! compiled nodes, so the schema is still described once, and [`FlatObject::accepts`] only ever
//! says "valid, nothing to report": whatever it is unsure of (escapes, nested values, duplicate
//! keys, numbers for an `enum`, any misfit) it leaves to the general path, which decides and
//! words the violations. It accepts no text that serde_json or the general path would refuse.

use super::instance::{number_end, whitespace_end};
use super::node::{same_text, CompiledSchema, Keyword, Node, NodeId, TypeSet};
use super::number;
use crate::json::plain_run;

/// Properties are tracked in one `u64`.
const MAX_PROPERTIES: usize = 64;

/// What a property's value may be, as far as the quick check goes.
#[derive(Debug)]
enum Rule {
    /// A scalar of one of `types`; a string must also be one of `strings` when they are listed
    /// (then a value of another kind is left to the general path).
    Scalar {
        types: TypeSet,
        strings: Option<Box<[Box<str>]>>,
    },
    /// Anything the quick check does not evaluate: left to the general path when present.
    General,
}

const ANY_SCALAR: Rule = Rule::Scalar {
    types: TypeSet::ANY,
    strings: None,
};

#[derive(Debug)]
pub(crate) struct FlatObject {
    names: Box<[Box<str>]>,
    rules: Box<[Rule]>,
    /// Bit `i` set: `names[i]` is required.
    required: u64,
    /// What a key not named may hold (`General` when `additionalProperties` constrains it).
    others: Rule,
}

impl FlatObject {
    /// The plan for `schema` when its root is such an object schema.
    pub(crate) fn plan(schema: &CompiledSchema) -> Option<FlatObject> {
        let Some(Node::Checks { keywords, .. }) = schema.nodes.get(schema.root) else {
            return None;
        };
        let mut plan = FlatObject {
            names: Box::default(),
            rules: Box::default(),
            required: 0,
            others: ANY_SCALAR,
        };
        let (mut names, mut rules, mut required) = (Vec::new(), Vec::new(), Vec::new());
        for keyword in keywords.iter() {
            match keyword {
                Keyword::Type(types) if types.contains(TypeSet::OBJECT) => {}
                Keyword::Properties(properties) if properties.patterns.is_empty() => {
                    for (name, node) in properties.named.iter() {
                        names.push(name.clone());
                        rules.push(rule(schema, *node));
                    }
                    if let Some(node) = properties.additional {
                        if !matches!(schema.nodes.get(node), Some(Node::Any)) {
                            plan.others = Rule::General;
                        }
                    }
                }
                Keyword::Required(listed) => required.extend(listed.iter()),
                _ => return None,
            }
        }
        for name in required {
            let index = match names.iter().position(|known| known == name) {
                Some(index) => index,
                None => {
                    names.push(name.clone());
                    rules.push(match plan.others {
                        Rule::General => Rule::General,
                        _ => ANY_SCALAR,
                    });
                    names.len() - 1
                }
            };
            if index >= MAX_PROPERTIES {
                return None;
            }
            plan.required |= 1 << index;
        }
        if names.len() > MAX_PROPERTIES {
            return None;
        }
        plan.names = names.into();
        plan.rules = rules.into();
        Some(plan)
    }

    /// True when `text` is a JSON object that certainly satisfies the schema; false when the
    /// general path must decide.
    pub(crate) fn accepts(&self, text: &str) -> bool {
        self.read(text).is_some()
    }

    fn read(&self, text: &str) -> Option<()> {
        let bytes = text.as_bytes();
        u32::try_from(bytes.len()).ok()?;
        let mut at = whitespace_end(bytes, 0);
        expect(bytes, at, b'{')?;
        at = whitespace_end(bytes, at + 1);
        let mut seen = 0u64;
        if bytes.get(at) != Some(&b'}') {
            loop {
                expect(bytes, at, b'"')?;
                let (key, end) = plain_string(text, at)?;
                at = whitespace_end(bytes, end);
                expect(bytes, at, b':')?;
                at = whitespace_end(bytes, at + 1);
                let rule = match self.names.iter().position(|name| same_text(name, key)) {
                    Some(index) => {
                        let bit = 1 << index;
                        if seen & bit != 0 {
                            return None;
                        }
                        seen |= bit;
                        &self.rules[index]
                    }
                    None => &self.others,
                };
                at = whitespace_end(bytes, scalar(rule, text, at)?);
                match bytes.get(at)? {
                    b',' => at = whitespace_end(bytes, at + 1),
                    b'}' => break,
                    _ => return None,
                }
            }
        }
        let fits = whitespace_end(bytes, at + 1) == bytes.len() && self.required & !seen == 0;
        fits.then_some(())
    }
}

fn expect(bytes: &[u8], at: usize, byte: u8) -> Option<()> {
    (bytes.get(at) == Some(&byte)).then_some(())
}

/// The string opening at `at` when it has no escapes, and where it ends.
fn plain_string(text: &str, at: usize) -> Option<(&str, usize)> {
    let start = at + 1;
    let end = start + plain_run(&text.as_bytes()[start..])?;
    (text.as_bytes()[end] == b'"').then(|| (&text[start..end], end + 1))
}

/// Where the scalar at `at` ends, when it certainly satisfies `rule`.
fn scalar(rule: &Rule, text: &str, at: usize) -> Option<usize> {
    let Rule::Scalar { types, strings } = rule else {
        return None;
    };
    let bytes = text.as_bytes();
    let (end, fits) = match bytes.get(at)? {
        b'"' => {
            let (value, end) = plain_string(text, at)?;
            let listed = strings
                .as_ref()
                .is_none_or(|options| options.iter().any(|option| same_text(option, value)));
            (end, types.contains(TypeSet::STRING) && listed)
        }
        b'-' | b'0'..=b'9' => {
            let end = number_end(bytes, at)?;
            let integer = || number::is_integer(&text[at..end]);
            let kind =
                types.contains(TypeSet::NUMBER) || (types.contains(TypeSet::INTEGER) && integer());
            (end, kind && strings.is_none())
        }
        first => {
            let (word, bit): (&[u8], u8) = match first {
                b't' => (b"true", TypeSet::BOOLEAN),
                b'f' => (b"false", TypeSet::BOOLEAN),
                b'n' => (b"null", TypeSet::NULL),
                _ => return None,
            };
            let fits = bytes[at..].starts_with(word) && types.contains(bit);
            (at + word.len(), fits && strings.is_none())
        }
    };
    fits.then_some(end)
}

/// What the quick check makes of the subschema `node` of a property.
fn rule(schema: &CompiledSchema, node: NodeId) -> Rule {
    let keywords = match schema.nodes.get(node) {
        Some(Node::Any) => return ANY_SCALAR,
        Some(Node::Checks { keywords, .. }) => keywords,
        _ => return Rule::General,
    };
    let mut types = TypeSet::ANY;
    let mut strings = None;
    for keyword in keywords.iter() {
        let options: &[serde_json::Value] = match keyword {
            Keyword::Type(allowed) => {
                types = TypeSet(types.0 & allowed.0);
                continue;
            }
            Keyword::Enum(options) => options,
            Keyword::Const(value) => std::slice::from_ref(value),
            _ => return Rule::General,
        };
        if strings.is_some() {
            return Rule::General;
        }
        let listed = options.iter().filter_map(|option| option.as_str());
        strings = Some(listed.map(Box::from).collect());
    }
    Rule::Scalar { types, strings }
}

#[cfg(test)]
mod tests;
