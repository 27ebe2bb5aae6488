//! Runs the official JSON-Schema-Test-Suite (draft 2020-12, required and optional files) against
//! `toolwire_core::schema::Validator`.
//!
//! The suite is never copied into the repository. It is looked for under `$TOOLWIRE_SHARED_DATA`,
//! `shared/data` next to the checkout, then `.test-data/` (where `python scripts/fetch_test_data.py`
//! puts it, from the `jsonschema` sdist on PyPI); without it the test says so and passes, unless
//! `TOOLWIRE_REQUIRE_DATA=1` (as `.ci/run` sets). Every case runs unless the skip lists below name
//! it, each entry with its reason. The test fails when a case that is not skipped fails, or when a
//! skip entry no longer matches anything (in the fetched copy, an older suite, that is only
//! printed). Run with `--nocapture` to see
//! the per-file summary, which also counts skipped cases that happen to pass.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;
use toolwire_core::schema::Validator;

const SUITE_UNDER_SHARED_DATA: &str = "json-schema-test-suite/tests/draft2020-12";

/// The first of `$TOOLWIRE_SHARED_DATA`, `shared/data` next to the checkout and `.test-data/` in
/// it that holds the suite; `Err` lists where it was looked for.
fn suite_dir() -> Result<PathBuf, String> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let repo = repo.canonicalize().unwrap_or(repo);
    let candidates: Vec<PathBuf> = std::env::var_os("TOOLWIRE_SHARED_DATA")
        .map(PathBuf::from)
        .into_iter()
        .chain([repo.join("../shared/data"), repo.join(".test-data")])
        .map(|shared| shared.join(SUITE_UNDER_SHARED_DATA))
        .collect();
    candidates
        .iter()
        .find(|dir| dir.is_dir())
        .cloned()
        .ok_or_else(|| {
            let looked: Vec<String> = candidates.iter().map(|d| d.display().to_string()).collect();
            format!(
                "JSON-Schema-Test-Suite not found (looked in {}); run `python scripts/fetch_test_data.py` \
                 or set TOOLWIRE_SHARED_DATA",
                looked.join(", ")
            )
        })
}

/// Whole files, relative to the draft directory.
const SKIPPED_FILES: &[(&str, &str)] = &[
    ("anchor.json", "$anchor is not supported"),
    (
        "dynamicRef.json",
        "$dynamicRef and $dynamicAnchor are not supported",
    ),
    ("refRemote.json", "$ref to other documents is not supported"),
    ("unevaluatedItems.json", "unevaluatedItems is not supported"),
    (
        "unevaluatedProperties.json",
        "unevaluatedProperties is not supported",
    ),
    (
        "vocabulary.json",
        "$vocabulary and custom metaschemas are not supported",
    ),
    (
        "defs.json",
        "validates against the remote 2020-12 metaschema ($ref to another document)",
    ),
    ("optional/anchor.json", "$anchor is not supported"),
    ("optional/dynamicRef.json", "$dynamicRef is not supported"),
    (
        "optional/cross-draft.json",
        "$ref to other documents is not supported",
    ),
    ("optional/id.json", "$id on nested schemas is not supported"),
    (
        "optional/unknownKeyword.json",
        "$id on nested schemas is not supported",
    ),
    (
        "optional/format/idn-hostname.json",
        "idn-hostname needs IDNA2008 tables; the format is ignored",
    ),
];

/// Whole test groups: (file, group description, reason).
const SKIPPED_GROUPS: &[(&str, &str, &str)] = &[
    (
        "ref.json",
        "remote ref, containing refs itself",
        "$ref to the remote 2020-12 metaschema",
    ),
    (
        "ref.json",
        "Recursive references between schemas",
        "$id on nested schemas",
    ),
    (
        "ref.json",
        "ref creates new scope when adjacent to keywords",
        "unevaluatedProperties",
    ),
    (
        "ref.json",
        "refs with relative uris and defs",
        "$id on nested schemas",
    ),
    (
        "ref.json",
        "relative refs with absolute uris and defs",
        "$id on nested schemas",
    ),
    (
        "ref.json",
        "$id must be resolved against nearest parent, not just immediate parent",
        "$id on nested schemas",
    ),
    (
        "ref.json",
        "order of evaluation: $id and $ref",
        "$id on nested schemas",
    ),
    (
        "ref.json",
        "order of evaluation: $id and $anchor and $ref",
        "$anchor",
    ),
    (
        "ref.json",
        "order of evaluation: $id and $ref on nested schema",
        "$id on nested schemas",
    ),
    (
        "ref.json",
        "URN base URI with URN and anchor ref",
        "$anchor",
    ),
    (
        "ref.json",
        "URN ref with nested pointer ref",
        "$id on nested schemas",
    ),
    ("ref.json", "ref to if", "$id on nested schemas"),
    ("ref.json", "ref to then", "$id on nested schemas"),
    ("ref.json", "ref to else", "$id on nested schemas"),
    (
        "ref.json",
        "ref with absolute-path-reference",
        "$id on nested schemas",
    ),
    (
        "optional/format/hostname.json",
        "validation of A-label (punycode) host names",
        "IDNA2008 checks of A-labels (punycode decoding, contextual rules) are not implemented",
    ),
];

/// Single tests: (file, group description or "*" for any, test description, reason). A test
/// description starting with "*" matches by suffix.
const SKIPPED_TESTS: &[(&str, &str, &str, &str)] = &[
    (
        "format.json",
        "*",
        "*is only an annotation by default",
        "this validator asserts `format` (as tool-call checks need); the suite's default is annotation-only",
    ),
    (
        "not.json",
        "collect annotations inside a 'not', even if collection is disabled",
        "unevaluated property",
        "unevaluatedProperties",
    ),
];

fn text_matches(pattern: &str, text: &str) -> bool {
    match pattern.strip_prefix('*') {
        Some(suffix) => text.ends_with(suffix),
        None => pattern == text,
    }
}

#[derive(Default)]
struct Tally {
    passed: usize,
    failed: usize,
    skipped: usize,
    skipped_but_passing: usize,
}

struct SkipUse {
    files: Vec<bool>,
    groups: Vec<bool>,
    tests: Vec<bool>,
}

fn skip_reason(file: &str, group: &str, test: &str, used: &mut SkipUse) -> Option<&'static str> {
    if let Some(index) = SKIPPED_FILES.iter().position(|(name, _)| *name == file) {
        used.files[index] = true;
        return Some(SKIPPED_FILES[index].1);
    }
    if let Some(index) = SKIPPED_GROUPS
        .iter()
        .position(|(name, description, _)| *name == file && *description == group)
    {
        used.groups[index] = true;
        return Some(SKIPPED_GROUPS[index].2);
    }
    if let Some(index) = SKIPPED_TESTS
        .iter()
        .position(|(name, group_pattern, test_pattern, _)| {
            *name == file
                && (*group_pattern == "*" || *group_pattern == group)
                && text_matches(test_pattern, test)
        })
    {
        used.tests[index] = true;
        return Some(SKIPPED_TESTS[index].3);
    }
    None
}

fn collect_files(directory: &Path, files: &mut Vec<PathBuf>) {
    let entries = fs::read_dir(directory)
        .unwrap_or_else(|error| panic!("cannot read {}: {error}", directory.display()));
    for entry in entries {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            collect_files(&path, files);
        } else if path
            .extension()
            .is_some_and(|extension| extension == "json")
        {
            files.push(path);
        }
    }
}

fn text_of(value: &Value, key: &str) -> String {
    value
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

#[test]
fn json_schema_test_suite_draft2020_12() {
    let dir = match suite_dir() {
        Ok(dir) => dir,
        Err(why) if std::env::var_os("TOOLWIRE_REQUIRE_DATA").is_some_and(|v| v == "1") => {
            panic!("{why} (TOOLWIRE_REQUIRE_DATA=1)")
        }
        Err(why) => {
            eprintln!("skipped: {why}");
            return;
        }
    };
    let root = dir.as_path();
    let mut files = Vec::new();
    collect_files(root, &mut files);
    files.sort();
    assert!(!files.is_empty(), "no suite files under {}", root.display());

    let mut used = SkipUse {
        files: vec![false; SKIPPED_FILES.len()],
        groups: vec![false; SKIPPED_GROUPS.len()],
        tests: vec![false; SKIPPED_TESTS.len()],
    };
    let mut tallies: BTreeMap<String, Tally> = BTreeMap::new();
    let mut failures = Vec::new();

    for path in &files {
        let name = path
            .strip_prefix(root)
            .expect("file under the suite")
            .to_string_lossy()
            .replace('\\', "/");
        let text = fs::read_to_string(path).expect("readable suite file");
        let groups: Vec<Value> = serde_json::from_str(&text).expect("suite file is a JSON array");
        let tally = tallies.entry(name.clone()).or_default();
        for group in &groups {
            let group_description = text_of(group, "description");
            let compiled = Validator::compile(&group["schema"]);
            for case in group["tests"].as_array().expect("tests array") {
                let test_description = text_of(case, "description");
                let expected = case["valid"].as_bool().expect("valid flag");
                let outcome = match &compiled {
                    Err(error) => Err(format!("schema rejected: {error}")),
                    Ok(validator) => {
                        let quick = validator.is_valid(&case["data"]);
                        let violations = validator.validate(&case["data"]);
                        let text = case["data"].to_string();
                        let from_text = validator.validate_json(&text);
                        let quick_from_text = validator.is_valid_json(&text);
                        let reported: Option<Vec<(String, String, String, String)>> =
                            validator.report_json(&text).ok().map(|report| {
                                report
                                    .iter()
                                    .map(|found| {
                                        (
                                            found.pointer.to_string(),
                                            found.keyword.to_string(),
                                            found.message.to_string(),
                                            found.display.to_string(),
                                        )
                                    })
                                    .collect()
                            });
                        let expected_report: Vec<(String, String, String, String)> = violations
                            .iter()
                            .map(|found| {
                                (
                                    found.pointer.clone(),
                                    found.keyword.clone(),
                                    found.message.clone(),
                                    found.to_string(),
                                )
                            })
                            .collect();
                        if reported.as_ref() != Some(&expected_report) {
                            Err(format!(
                                "report_json() = {reported:?}, validate() = {expected_report:?}"
                            ))
                        } else if from_text.as_ref() != Ok(&violations)
                            || quick_from_text != Ok(quick)
                        {
                            Err(format!(
                                "from JSON text: is_valid_json() = {quick_from_text:?}, validate_json() = {from_text:?}; from the Value: {quick}, {violations:?}"
                            ))
                        } else if quick != violations.is_empty() {
                            Err(format!(
                                "is_valid() = {quick} but validate() found {violations:?}"
                            ))
                        } else if quick != expected {
                            Err(format!("expected valid = {expected}, got {quick}; violations: {violations:?}"))
                        } else {
                            Ok(())
                        }
                    }
                };
                match skip_reason(&name, &group_description, &test_description, &mut used) {
                    Some(_) => {
                        tally.skipped += 1;
                        if outcome.is_ok() {
                            tally.skipped_but_passing += 1;
                        }
                    }
                    None => match outcome {
                        Ok(()) => tally.passed += 1,
                        Err(problem) => {
                            tally.failed += 1;
                            failures.push(format!(
                                "{name} | {group_description} | {test_description}: {problem}"
                            ));
                        }
                    },
                }
            }
        }
    }

    println!(
        "{:<44} {:>6} {:>6} {:>7} {:>14}",
        "file", "passed", "failed", "skipped", "skipped+passes"
    );
    let mut total = Tally::default();
    for (name, tally) in &tallies {
        println!(
            "{name:<44} {:>6} {:>6} {:>7} {:>14}",
            tally.passed, tally.failed, tally.skipped, tally.skipped_but_passing
        );
        total.passed += tally.passed;
        total.failed += tally.failed;
        total.skipped += tally.skipped;
        total.skipped_but_passing += tally.skipped_but_passing;
    }
    println!(
        "{:<44} {:>6} {:>6} {:>7} {:>14}",
        "TOTAL", total.passed, total.failed, total.skipped, total.skipped_but_passing
    );

    let stale: Vec<String> = SKIPPED_FILES
        .iter()
        .zip(&used.files)
        .filter(|(_, used)| !**used)
        .map(|((file, _), _)| format!("file {file}"))
        .chain(
            SKIPPED_GROUPS
                .iter()
                .zip(&used.groups)
                .filter(|(_, used)| !**used)
                .map(|((file, group, _), _)| format!("group {file} | {group}")),
        )
        .chain(
            SKIPPED_TESTS
                .iter()
                .zip(&used.tests)
                .filter(|(_, used)| !**used)
                .map(|((file, group, test, _), _)| format!("test {file} | {group} | {test}")),
        )
        .collect();
    // The skip lists follow the suite commit in shared/data; the copy fetched from the jsonschema
    // sdist is older and lacks a few of the groups they name, which is no sign of a stale entry.
    let fetched_from = fs::read_to_string(root.join("../../FETCHED_FROM")).ok();
    match fetched_from {
        Some(source) if !stale.is_empty() => eprintln!(
            "skip entries that match nothing in this older copy of the suite ({}):\n{}",
            source.trim(),
            stale.join("\n")
        ),
        _ => assert!(
            stale.is_empty(),
            "skip entries that match nothing:\n{}",
            stale.join("\n")
        ),
    }
    assert!(
        failures.is_empty(),
        "{} suite cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
