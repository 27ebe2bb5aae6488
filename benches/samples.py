"""Hand-written model outputs for the parser benchmark.

Each format has a renderer that writes tool calls the way the model family emits them
(markers, separators and value encoding taken from the chat templates and recorded outputs
summarised in shared/research/formats.md and sglang_vllm.md). Nothing here depends on
toolwire or on SGLang, so the same text is fed to both sides.

`make_calls(n)` gives n deterministic calls over five realistic tools; their arguments are
60-120 characters of JSON each. `render_sample(fmt, calls)` gives the model output: a short
sentence of text, then the calls.
"""

from __future__ import annotations

import json
from typing import Callable

# --------------------------------------------------------------------------- tools

TOOLS: list[dict] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather and forecast for a city.",
            "parameters": {
                "type": "object",
                "properties": {
                    "location": {"type": "string", "description": "City and country"},
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                    "days": {"type": "integer", "description": "Forecast length"},
                },
                "required": ["location"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "search_web",
            "description": "Search the web and return the top results.",
            "parameters": {
                "type": "object",
                "properties": {
                    "query": {"type": "string"},
                    "max_results": {"type": "integer"},
                },
                "required": ["query"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a range of lines from a file in the workspace.",
            "parameters": {
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "start_line": {"type": "integer"},
                    "end_line": {"type": "integer"},
                },
                "required": ["path"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "send_email",
            "description": "Send an email on the user's behalf.",
            "parameters": {
                "type": "object",
                "properties": {
                    "to": {"type": "string"},
                    "subject": {"type": "string"},
                    "body": {"type": "string"},
                },
                "required": ["to", "subject", "body"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "create_event",
            "description": "Create a calendar event.",
            "parameters": {
                "type": "object",
                "properties": {
                    "title": {"type": "string"},
                    "start": {"type": "string", "description": "ISO 8601 date-time"},
                    "duration_minutes": {"type": "integer"},
                    "attendees": {"type": "array", "items": {"type": "string"}},
                },
                "required": ["title", "start"],
            },
        },
    },
]

_CITIES = ["Paris, Île-de-France, France", "San Francisco, California, USA", "Tokyo, Kantō, Japan",
           "São Paulo, Brazil", "Nairobi, Kenya", "Zürich, Switzerland", "Melbourne, Victoria, Australia",
           "Toronto, Ontario, Canada"]
_QUERIES = ["latest stable release of the Rust compiler and its changelog",
            "best practices for streaming JSON parsing in Python web servers",
            "how does speculative decoding change token streaming latency",
            "OpenAI chat completions tool_choice required semantics",
            "difference between SentencePiece and byte-level BPE tokenizers"]
_PATHS = ["src/server/handlers/chat_completions.rs", "python/toolwire/openai.py",
          "docs/architecture/streaming-parsers.md", "tests/fixtures/hermes/parallel_calls.yaml"]
_PEOPLE = ["alice@example.com", "bob@example.org", "carol@example.net", "dave.okafor@example.com"]
_SUBJECTS = ["Planning notes", "Re: parser benchmark", "Lunch on Thursday?", "Design review agenda"]
_BODIES = ["The numbers are in the shared folder.", "Thanks for the review! I pushed the fixes.",
           "Can we move the sync to 3pm?"]
_TITLES = ["Design review", "Infra 1:1", "Bench walkthrough", "Release planning"]


def make_calls(n: int) -> list[dict]:
    """n deterministic calls `{"name": str, "arguments": dict}` cycling through the tools."""
    calls = []
    for i in range(n):
        kind, j = i % 5, i // 5
        if kind == 0:
            args = {"location": _CITIES[j % len(_CITIES)], "unit": ("celsius", "fahrenheit")[j % 2],
                    "days": 3 + j % 5}
            name = "get_weather"
        elif kind == 1:
            args = {"query": _QUERIES[j % len(_QUERIES)], "max_results": 5 + j % 6}
            name = "search_web"
        elif kind == 2:
            start = 10 + 7 * i
            args = {"path": _PATHS[j % len(_PATHS)], "start_line": start, "end_line": start + 40}
            name = "read_file"
        elif kind == 3:
            args = {"to": _PEOPLE[j % len(_PEOPLE)], "subject": _SUBJECTS[j % len(_SUBJECTS)],
                    "body": _BODIES[j % len(_BODIES)]}
            name = "send_email"
        else:
            args = {"title": _TITLES[j % len(_TITLES)],
                    "start": f"2025-{1 + j % 12:02d}-{10 + j % 18}T{9 + j % 8:02d}:30:00",
                    "duration_minutes": 30 * (1 + j % 3),
                    "attendees": [_PEOPLE[j % 3]]}
            name = "create_event"
        calls.append({"name": name, "arguments": args})
    return calls


PREAMBLE = ("I'll gather the information you asked for. Let me call the tools I need "
            "and then summarize the results for you.")

# --------------------------------------------------------------------------- renderers


def _j(v) -> str:
    """JSON as most models write it: `", "` and `": "` separators, non-ASCII kept."""
    return json.dumps(v, ensure_ascii=False)


def _compact(v) -> str:
    """JSON without spaces, as gpt-oss writes tool arguments."""
    return json.dumps(v, ensure_ascii=False, separators=(",", ":"))


def _raw(v) -> str:
    """XML-style formats: strings raw, everything else JSON."""
    return v if isinstance(v, str) else _j(v)


def _hermes(calls):
    # Qwen2.5 / Qwen3 chat templates: each call is "\n<tool_call>\n{json}\n</tool_call>".
    return PREAMBLE + "".join(
        f'\n<tool_call>\n{_j({"name": c["name"], "arguments": c["arguments"]})}\n</tool_call>'
        for c in calls)


def _qwen3_coder(calls):
    blocks = []
    for c in calls:
        params = "".join(f"<parameter={k}>\n{_raw(v)}\n</parameter>\n" for k, v in c["arguments"].items())
        blocks.append(f"<tool_call>\n<function={c['name']}>\n{params}</function>\n</tool_call>")
    return PREAMBLE + "\n" + "\n".join(blocks)


def _llama3_json(calls):
    # Llama 3.1-3.3 JSON tool calls use "parameters"; several calls are joined by ";".
    body = ";".join(_j({"name": c["name"], "parameters": c["arguments"]}) for c in calls)
    return PREAMBLE + "<|python_tag|>" + body


def _mistral(calls):
    # v11+ tokenizers (Mistral Small 3.2, Magistral, Devstral): [TOOL_CALLS]NAME[ARGS]{json} per call.
    return PREAMBLE + "".join(
        f"[TOOL_CALLS]{c['name']}[ARGS]{_j(c['arguments'])}" for c in calls)


def _mistral_array(calls):
    # pre-v11 tokenizers (Mistral 7B v0.3, NeMo, Small 3.1): one JSON array after [TOOL_CALLS].
    return PREAMBLE + "[TOOL_CALLS] " + _j([{"name": c["name"], "arguments": c["arguments"]}
                                           for c in calls])


def _py(v) -> str:
    if isinstance(v, str):
        return _j(v)  # a double-quoted JSON string is a valid Python literal for this text
    if isinstance(v, bool):
        return "True" if v else "False"
    if v is None:
        return "None"
    if isinstance(v, list):
        return "[" + ", ".join(_py(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_py(k)}: {_py(x)}" for k, x in v.items()) + "}"
    return repr(v)


def _pythonic(calls):
    inner = ", ".join(c["name"] + "(" + ", ".join(f"{k}={_py(v)}" for k, v in c["arguments"].items()) + ")"
                      for c in calls)
    return PREAMBLE + "\n[" + inner + "]"


def _deepseek_v3(calls):
    items = [f"<｜tool▁call▁begin｜>function<｜tool▁sep｜>{c['name']}\n```json\n{_j(c['arguments'])}\n```"
             f"<｜tool▁call▁end｜>" for c in calls]
    return PREAMBLE + "<｜tool▁calls▁begin｜>" + "\n".join(items) + "<｜tool▁calls▁end｜>"


def _deepseek_v3_1(calls):
    items = [f"<｜tool▁call▁begin｜>{c['name']}<｜tool▁sep｜>{_j(c['arguments'])}<｜tool▁call▁end｜>"
             for c in calls]
    return PREAMBLE + "<｜tool▁calls▁begin｜>" + "".join(items) + "<｜tool▁calls▁end｜>"


def _dsml(block: str):
    def render(calls):
        out = [PREAMBLE, f"\n\n<｜DSML｜{block}>\n"]
        for c in calls:
            out.append(f'<｜DSML｜invoke name="{c["name"]}">\n')
            for k, v in c["arguments"].items():
                s = "true" if isinstance(v, str) else "false"
                out.append(f'<｜DSML｜parameter name="{k}" string="{s}">{_raw(v)}</｜DSML｜parameter>\n')
            out.append("</｜DSML｜invoke>\n")
        out.append(f"</｜DSML｜{block}>")
        return "".join(out)
    return render


def _kimi_k2(calls):
    items = [f"<|tool_call_begin|>functions.{c['name']}:{i}<|tool_call_argument_begin|>"
             f"{_j(c['arguments'])}<|tool_call_end|>" for i, c in enumerate(calls)]
    return PREAMBLE + "<|tool_calls_section_begin|>" + "".join(items) + "<|tool_calls_section_end|>"


def _glm45(calls):
    blocks = []
    for c in calls:
        args = "".join(f"<arg_key>{k}</arg_key>\n<arg_value>{_raw(v)}</arg_value>\n"
                       for k, v in c["arguments"].items())
        blocks.append(f"<tool_call>{c['name']}\n{args}</tool_call>")
    return PREAMBLE + "\n" + "\n".join(blocks)


def _glm47(calls):
    blocks = []
    for c in calls:
        args = "".join(f"<arg_key>{k}</arg_key><arg_value>{_raw(v)}</arg_value>"
                       for k, v in c["arguments"].items())
        blocks.append(f"<tool_call>{c['name']}{args}</tool_call>")
    return PREAMBLE + "".join(blocks)


def _minimax_m2(calls):
    out = [PREAMBLE, "\n<minimax:tool_call>\n"]
    for c in calls:
        out.append(f'<invoke name="{c["name"]}">\n')
        for k, v in c["arguments"].items():
            out.append(f'<parameter name="{k}">{_raw(v)}</parameter>\n')
        out.append("</invoke>\n")
    out.append("</minimax:tool_call>")
    return "".join(out)


_MM = "]<]minimax[>["  # MiniMax-M3 namespace token, written before every tag


def _m3_value(v) -> str:
    if isinstance(v, list):
        return "".join(f"{_MM}<item>{_m3_value(x)}{_MM}</item>" for x in v)
    if isinstance(v, dict):
        return "".join(f"{_MM}<{k}>{_m3_value(x)}{_MM}</{k}>" for k, x in v.items())
    return _raw(v)


def _minimax_m3(calls):
    out = [PREAMBLE, f"\n{_MM}<tool_call>\n"]
    for c in calls:
        out.append(f'{_MM}<invoke name="{c["name"]}">\n')
        for k, v in c["arguments"].items():
            out.append(f"{_MM}<{k}>{_m3_value(v)}{_MM}</{k}>\n")
        out.append(f"{_MM}</invoke>\n")
    out.append(f"{_MM}</tool_call>")
    return "".join(out)


def _g4(v) -> str:
    if isinstance(v, str):
        return '<|"|>' + v + '<|"|>'
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "null"
    if isinstance(v, list):
        return "[" + ",".join(_g4(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ",".join(f"{k}:{_g4(x)}" for k, x in v.items()) + "}"
    return _j(v)


def _gemma4(calls):
    return PREAMBLE + "".join(f"<|tool_call>call:{c['name']}{_g4(c['arguments'])}<tool_call|>"
                              for c in calls)


def _harmony(calls):
    # A gpt-oss completion starts after "<|start|>assistant": reasoning on the analysis channel,
    # then one commentary message per call, each ending with <|call|>.
    out = [f"<|channel|>analysis<|message|>{PREAMBLE}<|end|>"]
    for c in calls:
        out.append(f"<|start|>assistant<|channel|>commentary to=functions.{c['name']} "
                   f"<|constrain|>json<|message|>{_compact(c['arguments'])}<|call|>")
    return "".join(out)


def _cohere_command(calls):
    # Command R7B / Command A: the tool plan on the thinking channel, then one JSON array of
    # {tool_call_id, tool_name, parameters}, one item per line.
    items = ",\n".join("    " + _j({"tool_call_id": str(i), "tool_name": c["name"],
                                      "parameters": c["arguments"]}) for i, c in enumerate(calls))
    return (f"<|START_THINKING|>{PREAMBLE}<|END_THINKING|>"
            f"<|START_ACTION|>[\n{items}\n]<|END_ACTION|>")


# ---- formats added with the second round of peers (SGLang 0.5.23 / vLLM 0.33.0 detectors)


def _beam(calls):
    # Beam: harmony framing, the recipient in the header, arguments as <rfl:parameter> XML.
    out = [f"<|channel|>analysis<|message|>{PREAMBLE}<|end|>"]
    for c in calls:
        params = "".join(f'<rfl:parameter name="{k}">{_raw(v)}</rfl:parameter>'
                         for k, v in c["arguments"].items())
        out.append(f"<|start|>assistant to={c['name']}<|channel|>analysis <|constrain|>xml<|message|>"
                   f"{params}<|call|>")
    return "".join(out)


def _tagged_json(open_tag: str, close_tag: str, key: str = "arguments", sep: str = "\n"):
    # One JSON object per call between a pair of tags (LongCat, ERNIE 4.5).
    def render(calls):
        return PREAMBLE + "".join(
            f"{sep}{open_tag}\n{_j({'name': c['name'], key: c['arguments']})}\n{close_tag}" for c in calls)
    return render


def _json_array(prefix: str, suffix: str = "", lead: str = ""):
    # One JSON array of {name, arguments} after a marker (Hunyuan-A13B, Jamba, Granite 3, Phi-4-mini).
    def render(calls):
        return (PREAMBLE + lead + prefix
                + _j([{"name": c["name"], "arguments": c["arguments"]} for c in calls]) + suffix)
    return render


def _internlm(calls):
    return PREAMBLE + "".join(
        f"<|action_start|><|plugin|>\n{_j({'name': c['name'], 'parameters': c['arguments']})}<|action_end|>"
        for c in calls)


def _seed_oss(calls):
    blocks = []
    for c in calls:
        params = "".join(f"<parameter={k}>{_raw(v)}</parameter>\n" for k, v in c["arguments"].items())
        blocks.append(f"<seed:tool_call>\n<function={c['name']}>\n{params}</function>\n</seed:tool_call>")
    return PREAMBLE + "\n" + "\n".join(blocks)


def _step3(calls):
    items = []
    for c in calls:
        params = "".join(f'<steptml:parameter name="{k}">{_raw(v)}</steptml:parameter>\n'
                         for k, v in c["arguments"].items())
        items.append(f'<｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="{c["name"]}">\n'
                     f"{params}</steptml:invoke><｜tool_call_end｜>")
    return PREAMBLE + "<｜tool_calls_begin｜>\n" + "\n".join(items) + "\n<｜tool_calls_end｜>"


def _fg(v) -> str:
    if isinstance(v, str):
        return "<escape>" + v + "<escape>"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        return "[" + ",".join(_fg(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ",".join(f"{k}:{_fg(x)}" for k, x in v.items()) + "}"
    return _j(v)


def _functiongemma(calls):
    return PREAMBLE + "".join(f"<start_function_call>call:{c['name']}{_fg(c['arguments'])}<end_function_call>"
                              for c in calls)


def _hunyuan(calls):
    # Hunyuan Hy3: <tool_calls> block, name then <tool_sep>, arg_key/arg_value pairs.
    blocks = []
    for c in calls:
        args = "".join(f"<arg_key>{k}</arg_key>\n<arg_value>{_raw(v)}</arg_value>\n"
                       for k, v in c["arguments"].items())
        blocks.append(f"<tool_call>{c['name']}<tool_sep>\n{args}</tool_call>")
    return PREAMBLE + "\n<tool_calls>\n" + "\n".join(blocks) + "\n</tool_calls>"


def _hy_v4(calls):
    o = ":opensource"
    blocks = []
    for c in calls:
        args = "".join(f"<arg_key{o}>{k}</arg_key{o}><arg_value{o}>{_raw(v)}</arg_value{o}>"
                       for k, v in c["arguments"].items())
        blocks.append(f"<tool_call{o}>{c['name']}{args}</tool_call{o}>")
    return PREAMBLE + f"<tool_calls{o}>" + "".join(blocks) + f"</tool_calls{o}>"


def _apertus(calls):
    return (PREAMBLE + "<|tools_prefix|>" + _j([{c["name"]: c["arguments"]} for c in calls])
            + "<|tools_suffix|>")


def _gigachat3(calls):
    return PREAMBLE + "".join(
        f"<|message_sep|>\n\nfunction call<|role_sep|>\n{_j({'name': c['name'], 'arguments': c['arguments']})}"
        for c in calls)


def _pysq(v) -> str:
    # Python literals with single-quoted strings, as LFM2 writes them.
    if isinstance(v, str):
        return repr(v)
    if isinstance(v, list):
        return "[" + ", ".join(_pysq(x) for x in v) + "]"
    return _py(v)


def _lfm2(calls):
    inner = ", ".join(c["name"] + "(" + ", ".join(f"{k}={_pysq(v)}" for k, v in c["arguments"].items()) + ")"
                      for c in calls)
    return PREAMBLE + "<|tool_call_start|>[" + inner + "]<|tool_call_end|>"


def _dots(calls):
    out = [PREAMBLE, "\n<dots_function_call>\n"]
    for c in calls:
        out.append(f'<invoke name="{c["name"]}">\n')
        out += [f'<parameter name="{k}">{_raw(v)}</parameter>\n' for k, v in c["arguments"].items()]
        out.append("</invoke>\n")
    out.append("</dots_function_call>")
    return "".join(out)


def _iquest_q1(calls):
    return PREAMBLE + "".join(
        f"<iquest_tool_call>{c['name']}"
        + "".join(f"<arg_key>{k}</arg_key><arg_value>{_raw(v)}</arg_value>" for k, v in c["arguments"].items())
        + "</iquest_tool_call>" for c in calls)


def _granite_20b_fc(calls):
    return PREAMBLE + "".join(f"\n<function_call> {_j({'name': c['name'], 'arguments': c['arguments']})}"
                              for c in calls)


def _xlam(calls):
    return _j([{"name": c["name"], "arguments": c["arguments"]} for c in calls])


def _deepseek_v4_1(calls):
    out = [PREAMBLE, "\n\n<｜DSML｜ calls>\n"]
    for c in calls:
        out.append(f'<｜DSML｜ invoke name="{c["name"]}">\n')
        for k, v in c["arguments"].items():
            s = "true" if isinstance(v, str) else "false"
            out.append(f'<｜DSML｜ parameter name="{k}" string="{s}">{_raw(v)}</｜DSML｜ parameter>\n')
        out.append("</｜DSML｜ invoke>\n")
    out.append("</｜DSML｜ calls>")
    return "".join(out)


RENDERERS: dict[str, Callable[[list[dict]], str]] = {
    "hermes": _hermes,
    "qwen3_coder": _qwen3_coder,
    "llama3_json": _llama3_json,
    "mistral": _mistral,
    "mistral_array": _mistral_array,
    "pythonic": _pythonic,
    "deepseek_v3": _deepseek_v3,
    "deepseek_v3_1": _deepseek_v3_1,
    "deepseek_v3_2": _dsml("function_calls"),
    "deepseek_v4": _dsml("tool_calls"),
    "kimi_k2": _kimi_k2,
    "glm45": _glm45,
    "glm47": _glm47,
    "minimax_m2": _minimax_m2,
    "minimax_m3": _minimax_m3,
    "gemma4": _gemma4,
    "harmony": _harmony,
    "cohere_command": _cohere_command,
    "deepseek_v4_1": _deepseek_v4_1,
    "beam": _beam,
    "longcat": _tagged_json("<longcat_tool_call>", "</longcat_tool_call>"),
    "hunyuan_a13b": _json_array("<tool_calls>", "</tool_calls>", "\n"),
    "phi4": _json_array("functools", "", " "),
    "jamba": _json_array("<tool_calls>", "</tool_calls>", "\n"),
    "granite": _json_array("<|tool_call|>"),
    "xlam": _xlam,
    "internlm": _internlm,
    "seed_oss": _seed_oss,
    "step3": _step3,
    "functiongemma": _functiongemma,
    "hunyuan": _hunyuan,
    "hy_v4": _hy_v4,
    "apertus": _apertus,
    "gigachat3": _gigachat3,
    "lfm2": _lfm2,
    "dots": _dots,
    "iquest_q1": _iquest_q1,
    "granite_20b_fc": _granite_20b_fc,
    "ernie45": _tagged_json("<tool_call>", "</tool_call>"),
}


def render_sample(fmt: str, calls: list[dict]) -> str:
    """Model output in format `fmt`: text, then `calls`. KeyError for an unknown format."""
    return RENDERERS[fmt](calls)


# Markers that are one special token in the family's vocabulary (formats.md). A detokenizer
# emits each of them whole in one delta, so the chunker keeps them whole by default.
_DS = ["<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>", "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>",
       "<｜tool▁sep｜>"]
_GLM = ["<tool_call>", "</tool_call>", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>"]
SPECIAL_TOKENS: dict[str, list[str]] = {
    "hermes": ["<tool_call>", "</tool_call>"],
    "qwen3_coder": ["<tool_call>", "</tool_call>"],
    "llama3_json": ["<|python_tag|>"],
    "mistral": ["[TOOL_CALLS]", "[ARGS]"],
    "mistral_array": ["[TOOL_CALLS]"],
    "pythonic": [],
    "deepseek_v3": _DS,
    "deepseek_v3_1": _DS,
    "deepseek_v3_2": ["｜DSML｜"],  # the DSML tags themselves are several tokens
    "deepseek_v4": ["｜DSML｜"],
    "kimi_k2": ["<|tool_calls_section_begin|>", "<|tool_calls_section_end|>", "<|tool_call_begin|>",
                "<|tool_call_end|>", "<|tool_call_argument_begin|>"],
    "glm45": _GLM,
    "glm47": _GLM,
    "minimax_m2": ["<minimax:tool_call>", "</minimax:tool_call>"],
    "minimax_m3": [_MM],
    "gemma4": ["<|tool_call>", "<tool_call|>", '<|"|>'],
    "harmony": ["<|start|>", "<|channel|>", "<|message|>", "<|constrain|>", "<|end|>", "<|call|>",
                "<|return|>"],
    "cohere_command": ["<|START_THINKING|>", "<|END_THINKING|>", "<|START_ACTION|>", "<|END_ACTION|>"],
    "deepseek_v4_1": ["｜DSML｜"],
    "beam": ["<|start|>", "<|channel|>", "<|message|>", "<|constrain|>", "<|end|>", "<|call|>"],
    "longcat": ["<longcat_tool_call>", "</longcat_tool_call>"],
    "hunyuan_a13b": ["<tool_calls>", "</tool_calls>"],
    "phi4": ["functools"],
    "jamba": ["<tool_calls>", "</tool_calls>"],
    "granite": ["<|tool_call|>"],
    "xlam": [],
    "internlm": ["<|action_start|>", "<|plugin|>", "<|action_end|>"],
    "seed_oss": ["<seed:tool_call>", "</seed:tool_call>"],
    "step3": ["<｜tool_calls_begin｜>", "<｜tool_calls_end｜>", "<｜tool_call_begin｜>", "<｜tool_call_end｜>",
              "<｜tool_sep｜>"],
    "functiongemma": ["<start_function_call>", "<end_function_call>", "<escape>"],
    "hunyuan": ["<tool_calls>", "</tool_calls>", "<tool_call>", "</tool_call>", "<tool_sep>"] + _GLM[2:],
    "hy_v4": [t.replace(">", ":opensource>") for t in
              ["<tool_calls>", "</tool_calls>", "<tool_call>", "</tool_call>"] + _GLM[2:]],
    "apertus": ["<|tools_prefix|>", "<|tools_suffix|>"],
    "gigachat3": ["<|message_sep|>", "<|role_sep|>"],
    "lfm2": ["<|tool_call_start|>", "<|tool_call_end|>"],
    "dots": ["<dots_function_call>", "</dots_function_call>"],
    "iquest_q1": ["<iquest_tool_call>", "</iquest_tool_call>"] + _GLM[2:],
    "granite_20b_fc": ["<function_call>"],
    "ernie45": ["<tool_call>", "</tool_call>"],
}


def chunk(text: str, size: int = 4, markers: list[str] | tuple[str, ...] = ()) -> list[str]:
    """Cut text into pieces of `size` characters, as a stand-in for detokenized deltas.

    Each string in `markers` (a special token) is its own piece and is never split; the
    count of `size` restarts after it. With no markers, plain fixed-size pieces.
    """
    if not markers:
        return [text[i:i + size] for i in range(0, len(text), size)]
    pieces: list[str] = []
    i, n = 0, len(text)
    ordered = sorted(markers, key=len, reverse=True)
    firsts = {m[0] for m in ordered}
    run_start = 0
    while i < n:
        if text[i] in firsts:
            hit = next((m for m in ordered if text.startswith(m, i)), None)
            if hit is not None:
                pieces.extend(text[j:min(j + size, i)] for j in range(run_start, i, size))
                pieces.append(hit)
                i += len(hit)
                run_start = i
                continue
        i += 1
    pieces.extend(text[j:min(j + size, n)] for j in range(run_start, n, size))
    return pieces
