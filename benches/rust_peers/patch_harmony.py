"""Writes target/patched/openai-harmony: openai-harmony 0.0.8 from the cargo registry, without
its network download (reqwest) and the image/CLI dependencies the parsers never call.

The race machine has no network and two shared cores: the download path can only fail there,
and its HTTP/TLS stack plus `image` are two thirds of the build. Nothing else changes: the
vocabulary still loads from `TIKTOKEN_ENCODINGS_BASE` with the sha256 openai-harmony pins.
"""

import pathlib
import re
import shutil
import sys

DROPPED = ("clap", "image", "reqwest")
NO_DOWNLOAD = (
    "fn load_remote_file(url: &str, destination: &Path) -> Result<String, RemoteVocabFileError> {\n"
    "    let _ = (url, destination);\n"
    "    Err(RemoteVocabFileError::FailedToDownloadOrLoadVocabFile(Box::new(\n"
    "        std::io::Error::other(\"no network in the race: set TIKTOKEN_ENCODINGS_BASE\"),\n"
    "    )))\n"
    "}\n"
)


def main() -> None:
    home = pathlib.Path.home() / ".cargo" / "registry" / "src"
    source = next(home.glob("*/openai-harmony-0.0.8"))
    dest = pathlib.Path(__file__).parent / "target" / "patched" / "openai-harmony"
    stamp = dest / ".patched-from"
    if stamp.exists() and stamp.read_text() == str(source):
        return  # already written: rewriting it would rebuild both Dynamo crates
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(source, dest, ignore=shutil.ignore_patterns("javascript", "demo", "python", "test-data"))
    (dest / "Cargo.lock").unlink(missing_ok=True)
    manifest = (dest / "Cargo.toml").read_text()
    for name in DROPPED:
        manifest, count = re.subn(rf"\[dependencies\.{name}\]\n(?:[^\[\n][^\n]*\n|\n)*", "", manifest)
        assert count == 1, name
    manifest = re.sub(r"\[\[bin\]\][^\[]*", "", manifest)
    manifest = re.sub(r"\[dev-dependencies[^\]]*\][^\[]*", "", manifest)
    (dest / "Cargo.toml").write_text(manifest)
    encodings = dest / "src" / "tiktoken_ext" / "public_encodings.rs"
    code = encodings.read_text()
    start = code.index("#[cfg(not(target_arch = \"wasm32\"))]\nfn load_remote_file(")
    end = code.index("\n}\n", start) + 3
    code = code[:start] + "#[cfg(not(target_arch = \"wasm32\"))]\n" + NO_DOWNLOAD + code[end:]
    encodings.write_text(code)
    stamp.write_text(str(source))
    print(dest, file=sys.stderr)


if __name__ == "__main__":
    main()
