//! Structured text as token ids of a byte-level vocabulary whose special tokens are the
//! format's markers, with invalid UTF-8 mixed in.
//! The first bytes choose the format and options; the properties are in
//! `rust/core/tests/support/fuzzing.rs` (see FUZZING.md).

#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../rust/core/tests/support/fuzzing.rs"]
mod fuzzing;

fuzz_target!(|data: &[u8]| {
    let case = fuzzing::structured(data);
    if let Err(e) = fuzzing::check_tokens(&case, data) {
        panic!("{e}\n  format {} text {:?}", case.format.syntax.name, case.text);
    }
});
