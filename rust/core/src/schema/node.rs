//! The compiled schema: a flat tree of nodes, each a list of keyword checks on child node ids.

use regex::Regex;
use serde_json::Value;

use super::flat::FlatObject;
use super::format::Format;
use super::number::OwnedDecimal;

pub(crate) type NodeId = usize;

pub(crate) type NameList = Box<[Box<str>]>;
#[derive(Debug)]
pub(crate) struct CompiledSchema {
    pub(crate) nodes: Vec<Node>,
    pub(crate) root: NodeId,
    pub(crate) unsupported: Vec<String>,
    /// The quick check for the commonest shape of tool schema, where the root has that shape.
    pub(crate) flat: Option<FlatObject>,
}

#[derive(Debug)]
pub(crate) enum Node {
    Any,
    Never {
        location: Box<str>,
    },
    Checks {
        location: Box<str>,
        keywords: Box<[Keyword]>,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TypeSet(pub(super) u8);

impl TypeSet {
    pub(crate) const NULL: u8 = 1;
    pub(crate) const BOOLEAN: u8 = 2;
    pub(crate) const OBJECT: u8 = 4;
    pub(crate) const ARRAY: u8 = 8;
    pub(crate) const NUMBER: u8 = 16;
    pub(crate) const STRING: u8 = 32;
    pub(crate) const INTEGER: u8 = 64;
    /// Every type: what a subschema without `type` allows.
    pub(crate) const ANY: TypeSet = TypeSet(0x7f);
    const NAMES: [(u8, &'static str); 7] = [
        (Self::NULL, "null"),
        (Self::BOOLEAN, "boolean"),
        (Self::OBJECT, "object"),
        (Self::ARRAY, "array"),
        (Self::NUMBER, "number"),
        (Self::STRING, "string"),
        (Self::INTEGER, "integer"),
    ];

    pub(super) fn from_name(name: &str) -> Option<u8> {
        Self::NAMES
            .iter()
            .find(|(_, candidate)| *candidate == name)
            .map(|(bit, _)| *bit)
    }

    pub(crate) fn contains(self, bit: u8) -> bool {
        self.0 & bit != 0
    }

    pub(crate) fn names(self) -> impl Iterator<Item = &'static str> {
        Self::NAMES
            .into_iter()
            .filter(move |(bit, _)| self.0 & bit != 0)
            .map(|(_, name)| name)
    }
}

#[derive(Debug)]
pub(crate) struct Pattern {
    pub(crate) regex: Regex,
    pub(crate) source: Box<str>,
}

#[derive(Debug)]
pub(crate) struct PropertyRules {
    /// Sorted by name for binary search.
    pub(crate) named: Box<[(Box<str>, NodeId)]>,
    pub(crate) patterns: Box<[(Pattern, NodeId)]>,
    pub(crate) additional: Option<NodeId>,
}

/// Up to this many named properties are looked up by a linear scan (most keys differ in length,
/// so most comparisons stop there); more are binary-searched.
const LINEAR_PROPERTY_LIMIT: usize = 12;

impl PropertyRules {
    pub(crate) fn lookup(&self, key: &str) -> Option<NodeId> {
        if self.named.len() <= LINEAR_PROPERTY_LIMIT {
            return self
                .named
                .iter()
                .find(|(name, _)| same_text(name, key))
                .map(|(_, schema)| *schema);
        }
        self.named
            .binary_search_by(|(name, _)| name.as_ref().cmp(key))
            .ok()
            .map(|position| self.named[position].1)
    }
}

/// String equality without a library call for the short strings keys and enum values are.
#[inline]
pub(crate) fn same_text(left: &str, right: &str) -> bool {
    let (left, right) = (left.as_bytes(), right.as_bytes());
    if left.len() != right.len() {
        return false;
    }
    if left.len() > 32 {
        return left == right;
    }
    left.iter().zip(right).all(|(a, b)| a == b)
}

#[derive(Debug)]
pub(crate) struct ItemRules {
    pub(crate) prefix: Box<[NodeId]>,
    pub(crate) rest: Option<NodeId>,
    /// `prefixItems`/`items`, or the pre-2020 `items`/`additionalItems` when `items` is an array.
    pub(crate) prefix_keyword: &'static str,
    pub(crate) rest_keyword: &'static str,
}

#[derive(Debug)]
pub(crate) enum Keyword {
    Type(TypeSet),
    Const(Value),
    Enum(Box<[Value]>),
    Ref(NodeId),
    AllOf(Box<[NodeId]>),
    AnyOf(Box<[NodeId]>),
    OneOf(Box<[NodeId]>),
    Not(NodeId),
    Conditional {
        condition: NodeId,
        then_branch: Option<NodeId>,
        else_branch: Option<NodeId>,
    },
    Minimum(OwnedDecimal),
    Maximum(OwnedDecimal),
    ExclusiveMinimum(OwnedDecimal),
    ExclusiveMaximum(OwnedDecimal),
    MultipleOf(OwnedDecimal),
    MinLength(u64),
    MaxLength(u64),
    Pattern(Box<Pattern>),
    Format(Format),
    Items(Box<ItemRules>),
    Contains {
        schema: NodeId,
        min: u64,
        max: Option<u64>,
    },
    MinItems(u64),
    MaxItems(u64),
    UniqueItems,
    Properties(Box<PropertyRules>),
    Required(NameList),
    MinProperties(u64),
    MaxProperties(u64),
    PropertyNames(NodeId),
    DependentRequired(Box<[(Box<str>, NameList)]>),
    DependentSchemas(Box<[(Box<str>, NodeId)]>),
}

impl Keyword {
    /// Cheap, decisive checks run first so invalid instances fail fast.
    pub(super) fn cost(&self) -> u8 {
        match self {
            Keyword::Type(_) => 0,
            Keyword::Const(_) | Keyword::Enum(_) => 1,
            Keyword::Minimum(_)
            | Keyword::Maximum(_)
            | Keyword::ExclusiveMinimum(_)
            | Keyword::ExclusiveMaximum(_)
            | Keyword::MultipleOf(_)
            | Keyword::MinLength(_)
            | Keyword::MaxLength(_)
            | Keyword::MinItems(_)
            | Keyword::MaxItems(_)
            | Keyword::MinProperties(_)
            | Keyword::MaxProperties(_) => 2,
            Keyword::Required(_) | Keyword::DependentRequired(_) => 3,
            Keyword::Format(_) | Keyword::Pattern(_) => 4,
            Keyword::Properties(_) | Keyword::Items(_) => 5,
            Keyword::Contains { .. }
            | Keyword::UniqueItems
            | Keyword::PropertyNames(_)
            | Keyword::DependentSchemas(_) => 6,
            Keyword::Ref(_)
            | Keyword::AllOf(_)
            | Keyword::AnyOf(_)
            | Keyword::OneOf(_)
            | Keyword::Not(_)
            | Keyword::Conditional { .. } => 7,
        }
    }

    pub(crate) fn applies_subschemas(&self) -> bool {
        matches!(
            self,
            Keyword::Ref(_)
                | Keyword::AllOf(_)
                | Keyword::AnyOf(_)
                | Keyword::OneOf(_)
                | Keyword::Not(_)
                | Keyword::Conditional { .. }
                | Keyword::Items(_)
                | Keyword::Contains { .. }
                | Keyword::Properties(_)
                | Keyword::PropertyNames(_)
                | Keyword::DependentSchemas(_)
        )
    }

    /// Subschemas applied to the same instance location (the edges an endless loop would use).
    pub(super) fn same_instance_children(&self) -> Vec<NodeId> {
        match self {
            Keyword::Ref(target) | Keyword::Not(target) => vec![*target],
            Keyword::AllOf(targets) | Keyword::AnyOf(targets) | Keyword::OneOf(targets) => {
                targets.to_vec()
            }
            Keyword::Conditional {
                condition,
                then_branch,
                else_branch,
            } => std::iter::once(*condition)
                .chain(*then_branch)
                .chain(*else_branch)
                .collect(),
            Keyword::DependentSchemas(entries) => {
                entries.iter().map(|(_, target)| *target).collect()
            }
            _ => Vec::new(),
        }
    }
}
