"""Regenerate the README's formats table from `toolwire.format_info` (run after adding a format)."""

from pathlib import Path

import toolwire

START, END = "<!-- formats:start -->", "<!-- formats:end -->"


def table() -> str:
    rows = [
        "| format | aliases | families | markers (special tokens in **bold**) | arguments |",
        "|---|---|---|---|---|",
    ]
    for name in toolwire.formats():
        info = toolwire.format_info(name)
        markers = ", ".join(
            ("**`%s`**" if m["special_token"] else "`%s`") % m["text"].replace("|", "\\|")
            for m in info["markers"]
            if not m["role"].startswith("reasoning")
        )
        families = ", ".join(info["families"]).replace("|", "\\|").replace("<", "&lt;")
        rows.append(
            f"| `{name}` | {', '.join(info['aliases'])} | {families} | {markers or '(none)'} | {info['argument_encoding']} |"
        )
    return "\n".join(rows)


def main() -> None:
    path = Path(__file__).resolve().parents[1] / "README.md"
    text = path.read_text(encoding="utf-8")
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    path.write_text(f"{head}{START}\n{table()}\n{END}{tail}", encoding="utf-8")


if __name__ == "__main__":
    main()
