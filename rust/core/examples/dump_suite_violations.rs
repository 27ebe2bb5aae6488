use std::fs;
use toolwire_core::schema::Validator;
fn main() {
    let root = std::env::args().nth(1).unwrap();
    let mut files: Vec<_> = walk(std::path::Path::new(&root));
    files.sort();
    for path in files {
        let groups: Vec<serde_json::Value> =
            serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
        for group in &groups {
            let Ok(validator) = Validator::compile(&group["schema"]) else {
                continue;
            };
            for case in group["tests"].as_array().unwrap() {
                for v in validator.validate(&case["data"]) {
                    println!("{} | {:?}", path.display(), v);
                }
            }
        }
    }
}
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else if p.extension().is_some_and(|x| x == "json") {
            out.push(p);
        }
    }
    out
}
