"""The detection templates, read from the case files where they live: each
``rust/core/tests/cases/<name>.rs`` holds its format's ``format: "<name>"`` and a
``pub const DETECT_TEMPLATE: &str = r#"..."#;`` (a short chat template written by hand, never
derived from the syntax, its first line ``{#- expect: reasoning=R special_tokens=yes|no -#}``).
The Rust test ``every_format_is_detected_from_its_template`` reads the same constants."""

from __future__ import annotations

import functools
import re
from pathlib import Path

CASES = Path(__file__).resolve().parents[1] / "rust" / "core" / "tests" / "cases"
_FORMAT = re.compile(r'^\s*format: "([^"]+)",$', re.M)
_TEMPLATE = re.compile(r'^pub const DETECT_TEMPLATE: &str = r(#+)"(.*?)"\1;$', re.M | re.S)


@functools.cache
def detect_templates() -> dict[str, str]:
    """Every case file's template, by the format it answers for."""
    out = {}
    for path in sorted(CASES.glob("*.rs")):
        text = path.read_text(encoding="utf-8")
        fmt, template = _FORMAT.search(text), _TEMPLATE.search(text)
        if fmt and template:
            out[fmt[1]] = template[2]
    return out


def detect_template(fmt: str) -> str:
    return detect_templates()[fmt]
