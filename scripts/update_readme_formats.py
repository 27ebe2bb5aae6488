"""Regenerate the formats table in `docs/formats.md` from `toolwire.format_info` and the engine-name
table (`rust/core/src/formats/engine_names.rs`); run after adding a format or an engine name
(`tests/test_readme.py` checks that the page is what this writes)."""

from pathlib import Path

import toolwire
from toolwire import _core

START, END = "<!-- formats:start -->", "<!-- formats:end -->"

# Known limits, as found while building and testing each format (keep in step with the code).
LIMITS = {
    "hermes": "arguments written before the name are held until the name arrives",
    "llama3_json": "bare JSON counts as a call only at the start of the output",
    "mistral": "no v11+ vocabulary offline, so `[ARGS]`/`[CALL_ID]` special-token ids are untested",
    "harmony": "output with the special tokens stripped (`analysis...assistantfinal`) is not handled",
    "longcat": "JSON body only; the newer `<longcat_arg_key>` XML variant is not read",
    "hunyuan_a13b": "the `助手：` content prefix is kept",
    "cohere_command": "the model's per-turn ids (`0`, `1`) are not used as call ids",
    "qwen3_coder": "in text input a value containing `<parameter=` or `</function>` ends early",
    "glm45": "no XML entity decoding; special-token flags not verified offline",
    "glm47": "no XML entity decoding; special-token flags not verified offline",
    "deepseek_v3_2": "V4.1's leading-space tags are not accepted",
    "deepseek_v4": "V4.1's leading-space tags are not accepted",
    "minimax_m2": "a plain-text `</invoke>` in content is reported as `unexpected_text`",
    "minimax_m3": "a repeated top-level parameter streams as a duplicate key (Dynamo makes an array)",
    "default": "bare JSON counts as a call only at the start of the output",
    "deepseek_v3": "`<｜end▁of▁sentence｜>` left in by a server ends up as content",
    "deepseek_v3_1": "`<｜end▁of▁sentence｜>` left in by a server ends up as content",
    "kimi_k2": "a bare counter id (`0`) is `missing_name` (vLLM guesses the name from the tools)",
    "gemma4": "a thought block after content has begun is not read as reasoning",
    "pythonic": "no `\\N{...}` escapes or b-/f-strings; a positional-argument call after prose stays content",
    "phi4": "special-token flags taken from peers' code (no offline vocabulary)",
    "jamba": "special-token flags taken from peers' code (no offline vocabulary)",
    "nemotron_deci": "",
    "granite": "special-token flags taken from peers' code (no offline vocabulary)",
    "xlam": "the `</think>[...]` form needs reasoning parsing on",
    "internlm": "`<|interpreter|>` actions are content, not calls",
    "seed_oss": "",
    "step3": "`<｜tool_sep｜>` assumed to be a special token (not verified offline)",
    "functiongemma": "a missing comma between arguments is malformed; `<escape>42<escape>` stays a string",
    "hunyuan": "the `:opensource`-suffixed tokens of the shipping HY3 tokenizer are not read (see `hy_v4`)",
    "hy_v4": "",
    "deepseek_v4_1": "",
    "apertus": "",
    "gigachat3": "GigaChat 3.5's GCML is the `gigachat35` format",
    "lfm2": "a JSON list inside the block and Python sets are malformed; no quote/leading-zero repair",
    "dots": "",
    "iquest_q1": "",
    "granite_20b_fc": "",
    "ernie45": "",
    "poolside_v1": "special-token flags from a public Laguna renderer's token lookups (no offline vocabulary)",
    "minicpm5": "XML entities outside CDATA are not decoded (the engines' lxml path decodes them)",
    "gigachat35": "",
    "plamo3": "a request's tags must be back to back (whitespace between them is not read)",
    "solar_open2": "the Markdown-fence call opener (```` ```NAME ````) the engines tolerate is not read",
    "kimi_k3": "the whole-arguments `<|open|>json ...<|sep|>` body is not read; the keyer does not follow its calls; no offline vocabulary (token ids tested on a hand-built one)",
    "inkling": "`<|content_invoke_tool_text|>` invocations are `unexpected_text` issues; no offline vocabulary (token ids tested on a hand-built one)",
    "muse": "`X.X` names (a bare tool name doubled by the template) are not mapped back; the first message's header is read only at the start of the output",
    "k2_horizon": "only the `xml` tool-call format: `<ifm|arg_type>` (`xml_typed`) and JSON bodies (`json`) are issues; `<ifm|think_fast>`/`<ifm|think_faster>` not read; special-token flags unknown",
    "beam": "no offline Beam vocabulary (token ids tested on a hand-built one); a typed stop marker in a value ends it in text input",
}


def arguments(syntax: dict) -> str:
    """How a format writes arguments, from its ``ArgSyntax``: the kind, and an XML format's tag."""
    if syntax["kind"] == "xml_params":
        return "XML `%s`" % syntax["open"].replace("|", "\\|")
    return {"json": "JSON", "gemma": "Gemma literals", "python_kwargs": "Python kwargs"}[syntax["kind"]]


ENGINES = ("sglang", "vllm", "dynamo")


def names(items) -> str:
    return ", ".join(f"`{n}`" for n in items)


def table() -> str:
    rows = [
        "| format | SGLang | vLLM | Dynamo | other aliases | families | markers (special tokens in **bold**) "
        "| arguments | known limits |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name in toolwire.formats():
        info = toolwire.format_info(name)
        engine = info["engine_names"]
        said = {n for e in ENGINES for n in engine[e]}
        markers = ", ".join(
            ("**`%s`**" if m["special_token"] else "`%s`") % m["text"].replace("|", "\\|")
            for m in info["markers"]
            if not m["role"].startswith("reasoning")
        )
        families = ", ".join(info["families"]).replace("|", "\\|").replace("<", "&lt;")
        columns = " | ".join(names(engine[e]) for e in ENGINES)
        aliases = ", ".join(a for a in info["aliases"] if a not in said)
        rows.append(
            f"| `{name}` | {columns} | {aliases} | {families} | {markers or '(none)'} "
            f"| {arguments(info['arguments'])} | {LIMITS.get(name, '')} |"
        )
    return "\n".join(rows)


def not_supported() -> str:
    table = _core.engine_names()
    rows_by_format = {row["format"]: row for row in table["formats"]}
    rows = ["| name | SGLang | vLLM | Dynamo | why not yet |", "|---|---|---|---|---|"]
    for entry in table["not_supported"]:
        row = rows_by_format.get(entry["format"], dict.fromkeys(ENGINES, []))
        columns = " | ".join(names(row[e]) for e in ENGINES)
        reason = entry["reason"].replace("|", "\\|")
        rows.append(f"| `{entry['format']}` | {columns} | {reason} |")
    return "\n".join(rows)


def body() -> str:
    return f"{table()}\n\nNot supported yet:\n\n{not_supported()}"


def main() -> None:
    path = Path(__file__).resolve().parents[1] / "docs" / "formats.md"
    text = path.read_text(encoding="utf-8")
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    path.write_text(f"{head}{START}\n{body()}\n{END}{tail}", encoding="utf-8")


if __name__ == "__main__":
    main()
