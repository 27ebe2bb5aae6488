#!/usr/bin/env bash
# The Rust-level race, end to end: build the race binary (peers included), run it, and write
# benches/report/rust_peers.md. Usage: benches/rust_peers/run.sh [ROUNDS]  (default 21).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"
rounds="${1:-21}"
python3 patch_harmony.py
python3 harmony_vocab.py target/encodings || echo "harmony vocabulary not available: harmony peers report not runnable"
export TIKTOKEN_ENCODINGS_BASE="$here/target/encodings"
CARGO_BUILD_JOBS="${CARGO_BUILD_JOBS:-1}" nice -n 19 cargo build --release ${RACE_FEATURES:+--no-default-features --features "$RACE_FEATURES"}
./target/release/rust-peers-race "$rounds" target/race.json
python3 report.py target/race.json ../report/rust_peers.md "benches/rust_peers/run.sh $rounds"
