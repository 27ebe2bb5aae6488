//! Arbitrary bytes as (lossy UTF-8) text.
//! The first bytes choose the format and options; the properties are in
//! `rust/core/tests/support/fuzzing.rs` (see FUZZING.md).

#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../rust/core/tests/support/fuzzing.rs"]
mod fuzzing;

fuzz_target!(|data: &[u8]| {
    let case = fuzzing::raw(data);
    if let Err(e) = fuzzing::check(&case) {
        panic!("{e}\n  format {} text {:?}", case.format.syntax.name, case.text);
    }
});
