//! JSON equality as JSON Schema defines it, for `const`, `enum` and `uniqueItems`: numbers equal
//! by value (`1` equals `1.0`), objects equal whatever their key order. Duplicates among many
//! items are found through a hash consistent with that equality, so `uniqueItems` stays linear.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use serde_json::Value;

use super::instance::{Doc, Member, Span, Val};
use super::number;

/// Arrays up to this length are checked for duplicates pairwise, without allocating.
const PAIRWISE_UNIQUE_LIMIT: usize = 32;

/// An instance value equals a schema value (`const`, `enum`).
pub(crate) fn equals_schema_value(doc: &Doc<'_>, instance: Val, expected: &Value) -> bool {
    match (instance, expected) {
        (Val::Null, Value::Null) => true,
        (Val::Bool(left), Value::Bool(right)) => left == *right,
        (Val::Number(left), Value::Number(right)) => {
            number::numbers_equal(doc.number(left), right.as_str())
        }
        (Val::String(left), Value::String(right)) => doc.text(left) == right,
        (Val::Array(left), Value::Array(right)) => {
            let left = doc.items(left);
            left.len() == right.len()
                && left
                    .iter()
                    .zip(right)
                    .all(|(left, right)| equals_schema_value(doc, *left, right))
        }
        (Val::Object(left), Value::Object(right)) => {
            let left = doc.members(left);
            left.len() == right.len()
                && left.iter().all(|member| {
                    right
                        .get(doc.text(member.key))
                        .is_some_and(|other| equals_schema_value(doc, member.value, other))
                })
        }
        _ => false,
    }
}

/// Objects with more members than this are compared through a key index.
const LINEAR_LOOKUP_LIMIT: usize = 32;

fn instances_equal(doc: &Doc<'_>, left: Val, right: Val) -> bool {
    match (left, right) {
        (Val::Null, Val::Null) => true,
        (Val::Bool(left), Val::Bool(right)) => left == right,
        (Val::Number(left), Val::Number(right)) => {
            number::numbers_equal(doc.number(left), doc.number(right))
        }
        (Val::String(left), Val::String(right)) => doc.text(left) == doc.text(right),
        (Val::Array(left), Val::Array(right)) => {
            let (left, right) = (doc.items(left), doc.items(right));
            left.len() == right.len()
                && left
                    .iter()
                    .zip(right)
                    .all(|(left, right)| instances_equal(doc, *left, *right))
        }
        (Val::Object(left), Val::Object(right)) => objects_equal(doc, left, right),
        _ => false,
    }
}

fn objects_equal(doc: &Doc<'_>, left: Span, right: Span) -> bool {
    let (left_members, right_members) = (doc.members(left), doc.members(right));
    if left_members.len() != right_members.len() {
        return false;
    }
    let same_order = left_members
        .iter()
        .zip(right_members)
        .all(|(left, right)| doc.text(left.key) == doc.text(right.key));
    if same_order {
        return left_members
            .iter()
            .zip(right_members)
            .all(|(left, right)| instances_equal(doc, left.value, right.value));
    }
    let equal_member = |member: &Member, other: Option<Val>| {
        other.is_some_and(|other| instances_equal(doc, member.value, other))
    };
    if right_members.len() <= LINEAR_LOOKUP_LIMIT {
        return left_members
            .iter()
            .all(|member| equal_member(member, doc.get(right, doc.text(member.key))));
    }
    let index: std::collections::HashMap<&str, Val> = right_members
        .iter()
        .map(|member| (doc.text(member.key), member.value))
        .collect();
    left_members
        .iter()
        .all(|member| equal_member(member, index.get(doc.text(member.key)).copied()))
}

/// Hashes consistently with [`instances_equal`]: key order is ignored and `1` hashes like `1.0`.
fn hash_instance<H: Hasher>(doc: &Doc<'_>, value: Val, state: &mut H) {
    match value {
        Val::Null => state.write_u8(0),
        Val::Bool(flag) => {
            state.write_u8(1);
            flag.hash(state);
        }
        Val::Number(literal) => {
            state.write_u8(2);
            number::hash_number(doc.number(literal), state);
        }
        Val::String(text) => {
            state.write_u8(3);
            doc.text(text).hash(state);
        }
        Val::Array(span) => {
            state.write_u8(4);
            span.len().hash(state);
            for item in doc.items(span) {
                hash_instance(doc, *item, state);
            }
        }
        Val::Object(span) => {
            state.write_u8(5);
            span.len().hash(state);
            let combined = doc.members(span).iter().fold(0u64, |combined, member| {
                let mut entry = DefaultHasher::new();
                doc.text(member.key).hash(&mut entry);
                hash_instance(doc, member.value, &mut entry);
                combined.wrapping_add(entry.finish())
            });
            state.write_u64(combined);
        }
    }
}

/// Indexes of two equal items, if any.
pub(crate) fn find_duplicate(doc: &Doc<'_>, items: &[Val]) -> Option<(usize, usize)> {
    if items.len() <= PAIRWISE_UNIQUE_LIMIT {
        for (first, item) in items.iter().enumerate() {
            for (offset, other) in items[first + 1..].iter().enumerate() {
                if instances_equal(doc, *item, *other) {
                    return Some((first, first + 1 + offset));
                }
            }
        }
        return None;
    }
    let mut hashed: Vec<(u64, usize)> = items
        .iter()
        .enumerate()
        .map(|(index, item)| {
            let mut state = DefaultHasher::new();
            hash_instance(doc, *item, &mut state);
            (state.finish(), index)
        })
        .collect();
    hashed.sort_unstable();
    for (position, &(hash, index)) in hashed.iter().enumerate() {
        for &(other_hash, other_index) in &hashed[position + 1..] {
            if other_hash != hash {
                break;
            }
            if instances_equal(doc, items[index], items[other_index]) {
                return Some((index.min(other_index), index.max(other_index)));
            }
        }
    }
    None
}
