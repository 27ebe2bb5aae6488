//! Lists the case files in `tests/cases/` (each a `pub fn matrix() -> Matrix` and a
//! `pub const DETECT_TEMPLATE: &str`) for the shared case matrix and the detection test, so a new
//! format's case file is found without being registered anywhere. The list, in file-name order, is
//! `$OUT_DIR/case_files.rs`, which `tests/cases/mod.rs` includes.

use std::fmt::Write;
use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=tests/cases");
    let dir = Path::new(&std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("tests/cases");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .filter_map(|entry| {
            let name = entry.ok()?.file_name().into_string().ok()?;
            let stem = name.strip_suffix(".rs")?;
            (stem != "mod").then(|| stem.to_owned())
        })
        .collect();
    names.sort();
    let mut out = String::new();
    for name in &names {
        let path = dir.join(format!("{name}.rs"));
        writeln!(
            out,
            "#[path = {:?}]\npub mod {name};",
            path.display().to_string()
        )
        .unwrap();
    }
    out.push_str("\n/// Every case file's matrix, in file-name order.\npub fn all() -> Vec<Matrix> {\n    vec![\n");
    for name in &names {
        writeln!(out, "        {name}::matrix(),").unwrap();
    }
    out.push_str("    ]\n}\n");
    out.push_str(
        "\n/// Every case file's detection template, with its format, in file-name order.\n",
    );
    out.push_str("pub fn detect_templates() -> Vec<(&'static str, &'static str)> {\n    vec![\n");
    for name in &names {
        writeln!(
            out,
            "        ({name}::matrix().format, {name}::DETECT_TEMPLATE),"
        )
        .unwrap();
    }
    out.push_str("    ]\n}\n");
    let target = Path::new(&std::env::var("OUT_DIR").unwrap()).join("case_files.rs");
    std::fs::write(target, out).unwrap();
}
