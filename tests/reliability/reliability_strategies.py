"""Hypothesis strategies and the fuzz harness shared by tests/reliability and benchmarks/fuzz.py.

Why one module: the CI fuzz tests and the 10,000-input benchmark must exercise the
same inputs and classify outcomes the same way; only the number of examples differs.

Outcomes of one fuzz call:

* ``"ok"`` - the target returned and the output invariants held;
* ``"typed"`` - it raised a :class:`tokenslim.errors.TokenSlimError` (an expected,
  documented failure: malformed input, budget too small, page too large);
* anything else escaping is *unexpected* and is reported with its traceback, as is
  a broken invariant (a chunk neither kept nor recorded as dropped, more tokens out
  than in, a dropped chunk id that never came in).
"""

from __future__ import annotations

import gzip
import json
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

import tokenslim
from tokenslim import Chunk, Result
from tokenslim.bench.datasets import data_dir
from tokenslim.errors import StageError, TokenSlimError

__all__ = [
    "TARGETS",
    "Outcome",
    "Tally",
    "run_target",
    "check_accounting",
    "hotpot_paragraphs",
    "register_profiles",
    "CI_SETTINGS",
]


def hotpot_paragraphs(limit: int = 400) -> list[str]:
    """Real Wikipedia paragraphs from ../shared/data/hotpotqa_distractor (first ``limit``)."""
    out: list[str] = []
    path = data_dir() / "hotpotqa_distractor" / "hotpotqa_dev_distractor.jsonl.gz"
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            for c in json.loads(line)["contexts"]:
                out.append(c["paragraph_text"])
            if len(out) >= limit:
                return out[:limit]
    return out


CI_SETTINGS = settings(
    max_examples=60,
    deadline=None,  # shared 2-core machine: timing varies, bounds are checked in benchmarks/
    database=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,  # CI determinism: the same inputs on every run
    print_blob=True,
)
"""Settings for the CI fuzz and property tests (applied per test, so other suites keep their own)."""


def register_profiles() -> None:
    """Register ``ci`` (:data:`CI_SETTINGS`) and ``bench`` (10,000 examples, otherwise the same)."""
    settings.register_profile("ci", CI_SETTINGS)
    settings.register_profile("bench", CI_SETTINGS, max_examples=10_000)


# -- text strategies -------------------------------------------------------------------

_PARAS = hotpot_paragraphs()

_SPECIAL = [
    "\x00", "\ud800", "\udfff", "\ud83d", "\u202e", "\u202d", "\u2066", "\u2069", "\u200b", "\u200d", "\ufeff",
    "\u00ad", "😀", "👨\u200d👩\u200d👧", "🇫🇷", "e\u0301", "ﷺ", "\u0627\u0644\u0639\u0631\u0628\u064a\u0629",
    "中文。", "\r\n", "\t", " ", "\n\n", ".", "?", "!", "...", "<", ">", "&", "&amp;", "&#0;", "&#xD800;",
    "```", "|", "{", "}", "[", "]", '"', "“", "[Excerpt from document]", "-----", "Dr.", "1.5", "\x0b", "\x1f",
]

any_unicode = st.characters(exclude_categories=())  # every code point, lone surrogates included

words = st.one_of(
    st.text(alphabet=any_unicode, max_size=12),
    st.sampled_from(_SPECIAL),
    st.sampled_from(_PARAS).map(lambda p: p.split(". ")[0]),
)

fuzzy_text = st.one_of(
    st.just(""),
    st.sampled_from(["  ", "\n", "\t\n \u3000", "\u200b\u200b"]),
    st.text(alphabet=any_unicode, max_size=200),
    st.lists(words, max_size=30).map(" ".join),
    st.sampled_from(_PARAS),
    st.tuples(st.sampled_from(_PARAS), st.sampled_from(_SPECIAL), st.integers(0, 400)).map(
        lambda t: t[0][: t[2]] + t[1] + t[0][t[2] :]
    ),
)

# -- HTML strategies -------------------------------------------------------------------

_TAGS = [
    "div", "p", "span", "article", "main", "section", "nav", "footer", "aside", "header", "li", "ul", "ol", "table",
    "tr", "td", "th", "h1", "h2", "h3", "pre", "code", "a", "b", "i", "br", "script", "style", "template",
    "noscript", "svg", "iframe", "title", "form", "button", "blockquote", "img", "hr", "font", "x-custom",
]
_ATTRS = [
    "", ' hidden', ' aria-hidden="true"', ' aria-hidden=TRUE', ' style="display:none"', ' style="display: none !important"',
    ' style="visibility:hidden"', ' style="opacity:0"', ' style="font-size:0"', ' style="font-size:0px"',
    ' style="text-indent:-9999px"', ' style="position:absolute;left:-9999px"', ' style="color:#fff;background:#fff"',
    ' style="clip:rect(0 0 0 0);position:absolute"', ' style="width:0;height:0;overflow:hidden"', ' class="content"',
    ' class="sidebar"', ' id="main"', ' role="navigation"', ' href="javascript:alert(1)"', ' style="', " class='a",
    ' style="color:rgb(255,255,255)"', ' style="background-color:white"', " data-x=\"\ud800\"", ' style=";;;:"',
]


def _element(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.tuples(st.sampled_from(_TAGS), st.sampled_from(_ATTRS), st.lists(children, max_size=4), st.booleans()).map(
        lambda t: f"<{t[0]}{t[1]}>" + "".join(t[2]) + (f"</{t[0]}>" if t[3] else "")
    )


_html_leaf = st.one_of(
    fuzzy_text.map(lambda s: s[:120]),
    st.sampled_from(_PARAS),
    st.sampled_from(["<!-- c -->", "<!--", "-->", "<![CDATA[x]]>", "<?php ?>", "</div>", "</", "<", "&nbsp;", "<br/>"]),
)

html_fragment = st.recursive(_html_leaf, _element, max_leaves=25)

html_page = st.one_of(
    st.tuples(st.sampled_from(["", "<!DOCTYPE html>", "<?xml version='1.0'?>"]), html_fragment).map(
        lambda t: f"{t[0]}<html><head><title>t</title></head><body>{t[1]}</body></html>"
    ),
    html_fragment.map(lambda h: "<div>" + h),
    st.tuples(html_fragment, st.integers(0, 2000)).map(lambda t: ("<html><body>" + t[0])[: t[1]]),  # truncated
    st.integers(1, 3000).map(lambda n: "<div>" * n + "deep" + "</div>" * (n // 2)),
)

html_bytes = st.one_of(
    st.binary(max_size=400),  # invalid UTF-8 and control bytes
    html_page.map(lambda s: s.encode("utf-8", "surrogatepass")),
    st.tuples(html_page, st.sampled_from(["utf-16", "cp1252", "latin-1", "shift_jis"])).map(
        lambda t: t[0].encode(t[1], "replace")
    ),
    st.tuples(st.sampled_from([b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff", b""]), st.binary(max_size=200)).map(
        lambda t: t[0] + b"<meta charset=utf-8><p>" + t[1]
    ),
)

# -- structured strategies (tool output: JSON, tables, code, logs, YAML) ----------------------

_cell = st.one_of(
    st.sampled_from(["", "City7", "ord_00179f3a", "1,234", "-0", "1e308", "NaN", "a|b", 'x"y', "a,b", "\\|", "—", "2018–19"]),
    st.text(alphabet=any_unicode, max_size=10),
    st.integers(-(10**20), 10**20).map(str),
)
_json_value = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**30), 10**30) | st.floats(allow_nan=False) | _cell,
    lambda kids: st.lists(kids, max_size=14) | st.dictionaries(_cell, kids, max_size=30),
    max_leaves=120,
)


def _json_text(t: tuple[Any, int, bool, int]) -> str:
    value, indent, ascii_only, cut = t
    text = json.dumps(value, indent=indent or None, ensure_ascii=ascii_only)
    return text[:cut] if cut else text


def _markdown(head: list[str], cells: list[str], n: int) -> str:
    rows = ["| " + " | ".join(cells[(i + j) % len(cells)] for j in range(len(head) - i % 2)) + " |" for i in range(n)]
    return "| " + " | ".join(head) + " |\n|" + "---|" * len(head) + "\n" + "\n".join(rows)  # ragged rows


def _delimited(cells: list[str], n: int, sep: str) -> str:
    return "\n".join(sep.join(cells[(i * 3 + j) % len(cells)] for j in range(i % 5 + 1)) for i in range(n))


_table = st.one_of(
    st.builds(_markdown, st.lists(_cell, min_size=1, max_size=10), st.lists(_cell, min_size=1, max_size=30), st.integers(0, 60)),
    st.builds(_delimited, st.lists(_cell, min_size=1, max_size=20), st.integers(0, 80), st.sampled_from([",", "\t", ";", " | "])),
    st.builds(  # quoted CSV fields holding newlines and quotes
        lambda cells, n: "name,note\n" + "\n".join(f'r{i},"{cells[i % len(cells)]}\n""x"", y"' for i in range(n)),
        st.lists(_cell, min_size=1, max_size=10), st.integers(0, 40),
    ),
    st.builds(  # unclosed cells, a huge rowspan
        lambda cells, n: "<table><tr><th>a</th><th>b</th></tr>" + "".join(
            f"<tr><td>{cells[i % len(cells)]}</td><td rowspan=99>{i}" for i in range(n)),
        st.lists(_cell, min_size=1, max_size=10), st.integers(0, 40),
    ),
)
_CODE = [
    'import os\nimport sys\n\n\ndef parse_header(line):\n    """Split a header."""\n    return line.split(":", 1)\n',
    "class Cache:\n    def get(self, key):\n        return self.data[key]\n\n    def put(self, key, value):\n        self.data[key] = value\n",
    "def broken(:\n    return (\n", "@decorator(\n", "async def f():\n    await g()\n", "lambda: (" * 50, 'x = """unterminated\n',
    "function total(items) {\n  return items.reduce((a, b) => a + b, 0);\n}\n", "}}}}{{{{", "#include <stdio.h>\nint main(){return 0;}\n",
    "    def indented_first(self):\n        pass\n", "def f(\u00e9, \u0627):\n    return \u00e9\n", "\t\tmixed\n  tabs\n",
]
_code = st.builds(
    lambda parts, n, fence: (f"```{fence}\n" if fence is not None else "") + "\n".join(parts * n) + ("\n```" if fence else ""),
    st.lists(st.one_of(st.sampled_from(_CODE), st.text(alphabet=any_unicode, max_size=40)), min_size=1, max_size=8),
    st.integers(1, 12),
    st.sampled_from([None, "python", "py", "js", "", "c", "rust", "python3 extra", "```"]),
)
_LEVELS = ["INFO", "WARN", "ERROR", "DEBUG", "FATAL", "E", "[error]", "Traceback (most recent call last):", '  File "x.py", line 1', ""]
_logs = st.builds(
    lambda n, ws, levels: "\n".join(
        f"2024-01-0{i % 9 + 1} 12:{i % 60:02d}:00 {levels[i % len(levels)]} blk_{i % 7} {ws[i % len(ws)]}" for i in range(n)),
    st.integers(0, 400),
    st.lists(words, min_size=1, max_size=20),
    st.lists(st.sampled_from(_LEVELS), min_size=1, max_size=6),
)
_YAML = [
    "key: value", "- item", "- name: svc-007\n  port: 80", "anchor: &a [1, 2]", "alias: *a", "tag: !!python/object/apply:os.system ['x']",
    "---", "...", "multi: |\n  line\n  line", "  bad indent: [", "\tkey: tab", "? complex key\n: value", "k: {a: 1, b: [}",
    "lol: &l [*a, *a, *a, *a, *a, *a, *a, *a, *a]",
]
_yaml = st.builds(lambda parts, n: "\n".join(parts * n), st.lists(st.sampled_from(_YAML), min_size=1, max_size=10), st.integers(1, 30))

structured_text = st.one_of(
    st.tuples(_json_value, st.sampled_from([0, 0, 1, 2]), st.booleans(), st.sampled_from([0, 0, 0, 1, 7, 200])).map(_json_text),
    st.lists(st.tuples(_json_value, st.just(0), st.booleans(), st.just(0)).map(_json_text), max_size=40).map("\n".join),
    st.sampled_from(["[" * 5000 + "]" * 5000, '{"a":' * 3000 + "1" + "}" * 3000, '{"a": 1, "a": 2}', "\ufeff[1, 2]",
                     "[1, 2,]", '{"x": NaN, "y": Infinity}', '{"x": 1} {"y": 2}', "[1e999999]", '"just a string"']),
    _table,
    _code,
    _logs,
    _yaml,
    st.tuples(st.sampled_from(_PARAS), _table, _code).map(lambda t: f"{t[0]}\n\n{t[1]}\n\n{t[2]}\n\n{t[0]}"),  # a mixed document
)
"""Tool output as agents send it, well formed or not: JSON (truncated, NaN, duplicate keys, 5,000 deep), JSON
Lines, markdown/CSV/TSV/HTML tables with ragged rows and quoted newlines, code that does not parse, logs, YAML with
anchors and tags, and prose mixing a table and a code block."""


# -- request strategies ---------------------------------------------------------------

_bad_value = st.sampled_from([None, 0, 1.5, float("nan"), b"\xff\xfe", ["x"], {"a": 1}, object(), True])


def _rarely(good: st.SearchStrategy[Any], bad: st.SearchStrategy[Any], one_in: int) -> st.SearchStrategy[Any]:
    """``bad`` about once in ``one_in`` draws (Hypothesis favours small choices, so not index 0)."""
    return st.integers(0, one_in - 1).flatmap(lambda k: bad if k == one_in // 2 else good)


def _chunk_item(text: st.SearchStrategy[str]) -> st.SearchStrategy[Any]:
    score = st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True), st.integers(-10, 10))
    meta = st.one_of(
        st.just({}),
        st.fixed_dictionaries({"title": st.one_of(fuzzy_text, _bad_value)}),
        st.fixed_dictionaries({"url": st.sampled_from(["a", "b"]), "doc_id": st.one_of(st.integers(), st.text(max_size=3))}),
    )
    good = st.one_of(
        text,
        st.builds(lambda t, s, m: Chunk(text=t, score=s, metadata=m), text, score, meta),
        st.builds(lambda t, s, i: {"text": t, "score": s, "id": i}, text, score, st.one_of(st.none(), st.integers(0, 3), st.text(max_size=3))),
    )
    bad = st.one_of(
        _bad_value,
        st.builds(lambda v: {"text": v}, _bad_value),
        st.builds(lambda v: {"text": "ok", "score": v}, st.sampled_from(["high", [1], {}])),
        st.builds(lambda v: Chunk(text=v), _bad_value),  # type: ignore[arg-type]
        st.builds(lambda v: {"page_content": "ok", "metadata": v}, st.sampled_from(["m", 3, ["x"]])),
    )
    return _rarely(good, bad, 40)


def _messages() -> st.SearchStrategy[Any]:
    role = st.sampled_from(["user", "assistant", "system", "tool", "developer"])
    good = st.builds(lambda r, c: {"role": r, "content": c}, role, st.one_of(fuzzy_text, st.sampled_from(_PARAS)))
    with_tool = st.builds(
        lambda c: {"role": "assistant", "content": c, "tool_calls": [{"id": "t1", "type": "function"}]}, fuzzy_text
    )
    bad = st.one_of(
        _bad_value,
        st.builds(lambda r: {"role": r, "content": "x"}, st.sampled_from(["bot", None, 3])),
        st.builds(lambda c: {"role": "user", "content": c}, st.sampled_from([3, b"x", {"a": 1}])),
        st.just({"role": "user", "content": [{"type": "text", "text": "part"}, {"type": "image"}]}),
    )
    return _rarely(st.one_of(good, good, good, with_tool), bad, 40)


@st.composite
def requests(draw: Callable[..., Any], html: bool = False, structured: bool = False) -> dict[str, Any]:
    """One request: query, chunks (0 to 12, sometimes up to 1,000), history, system prompt; mostly valid, sometimes not.
    ``html``: chunks may be HTML pages; ``structured``: also tool output (:data:`structured_text`)."""
    text = st.one_of(fuzzy_text, html_page, *([structured_text] if structured else [])) if html else fuzzy_text
    n = draw(st.integers(0, 12))
    if draw(st.integers(0, 24)) == 11:  # now and then a huge chunk count
        n = draw(st.integers(41, 1000))
    if n > 40:  # huge chunk counts: real paragraphs picked by arithmetic, cheap to generate
        start, step = draw(st.integers(0, len(_PARAS) - 1)), draw(st.integers(0, 7))
        chunks: Any = [_PARAS[(start + i * step) % len(_PARAS)] if i % 17 else "" for i in range(n)]
    else:
        chunks = draw(st.lists(_chunk_item(text), min_size=n, max_size=n))
    dup = draw(st.booleans())
    if dup and isinstance(chunks, list) and chunks:
        chunks = chunks + chunks[: draw(st.integers(1, len(chunks)))]
    req = {
        "query": draw(fuzzy_text),
        "chunks": chunks,
        "history": draw(st.one_of(st.none(), st.lists(_messages(), max_size=14))),
        "system_prompt": draw(st.one_of(st.none(), fuzzy_text)),
    }
    if draw(st.integers(0, 11)) == 6:  # one malformed top-level field now and then
        field_name = draw(st.sampled_from(sorted(req)))
        bad = {
            "chunks": st.sampled_from([None, "single string", b"bytes", 42, Chunk(text="x")]),
            "history": st.sampled_from(["hi", {"role": "user"}, 3]),
        }.get(field_name, _bad_value)
        req[field_name] = draw(bad)
    return req


@st.composite
def structured_requests(draw: Callable[..., Any]) -> dict[str, Any]:
    """One request whose chunks and tool messages are :data:`structured_text`, with a question about them."""
    chunks = draw(st.lists(_chunk_item(structured_text), max_size=4))
    tool = st.builds(lambda c, r: {"role": r, "content": c}, structured_text, st.sampled_from(["tool", "function", "assistant"]))
    history = draw(st.one_of(st.none(), st.lists(st.one_of(tool, _messages()), max_size=5)))
    questions = ["What is the population of City7?", "status of ord_00179f3a", "What does parse_header return?",
                 "Which errors mention blk_3?", "How many rows are there?", "port of svc-007"]
    query = draw(_rarely(st.one_of(st.sampled_from(questions), fuzzy_text), _bad_value, 8))
    return {"query": query, "chunks": chunks, "history": history, "system_prompt": None}


def _stage_params(name: str) -> st.SearchStrategy[dict[str, Any]]:
    """Valid parameter variations per stage (the defaults most of the time)."""
    ints = st.integers
    options: dict[str, st.SearchStrategy[dict[str, Any]]] = {
        "strip_html": st.fixed_dictionaries({"keep_tables": st.booleans(), "max_bytes": st.sampled_from([50_000_000, 2_000])}),
        "dedupe": st.fixed_dictionaries(
            {"threshold": st.sampled_from([0.8, 0.5, 1.0, None]), "shingle_size": ints(1, 6), "min_overlap_chars": ints(1, 80)}
        ),
        "trim_top_k": st.fixed_dictionaries(
            {
                "k": st.one_of(st.none(), ints(1, 12)),
                "min_score": st.sampled_from([None, 0.0, 0.3]),
                "cliff": st.sampled_from([None, 0.5]),
                "max_tokens": st.one_of(st.none(), ints(1, 400)),
                "mmr_lambda": st.sampled_from([None, 0.5]),
            }
        ),
        "compress_documents": st.fixed_dictionaries(
            {"ratio": st.sampled_from([0.22, 0.05, 1.0]), "max_tokens": st.one_of(st.none(), ints(1, 300)), "min_tokens": ints(0, 150)}
        ),
        "summarize_conversation": st.fixed_dictionaries({"keep_last": ints(0, 6), "min_turns_to_fold": ints(1, 3)}),
        "budget": st.fixed_dictionaries({"max_tokens": ints(1, 3000), "reserve_output_tokens": st.just(0)}),
        "reorder": st.fixed_dictionaries({"order": st.sampled_from(["score", "original", "lost_in_the_middle", "stable_prefix"])}),
        "reduce_structured": st.fixed_dictionaries(
            {"min_tokens": st.sampled_from([0, 20, 200]), "min_items": ints(1, 8), "top_k": ints(1, 6), "max_keys": ints(1, 24),
             "max_columns": ints(1, 8)}
        ),
    }
    return st.one_of(st.just({}), options[name]) if name != "budget" else options[name]


_CLASSES = {
    "strip_html": "StripHTML",
    "dedupe": "Dedupe",
    "trim_top_k": "TrimTopK",
    "compress_documents": "CompressDocuments",
    "summarize_conversation": "SummarizeConversation",
    "budget": "Budget",
    "reorder": "Reorder",
    "reduce_structured": "ReduceStructured",
}

# -- invariants -------------------------------------------------------------------------


def check_accounting(result: Result, input_ids: list[str]) -> None:
    """Every input chunk is kept or recorded as dropped; nothing comes out that did not go in.

    Raises:
        AssertionError: naming the chunk ids that were lost or invented.
    """
    kept = [c.id for c in result.chunks]
    dropped = [d.chunk_id for d in result.drops if d.kind == "chunk"]
    assert len(kept) == len(set(kept)), f"a chunk id appears twice in the output: {kept}"
    lost = set(input_ids) - set(kept) - set(dropped)
    assert not lost, f"chunks neither kept nor recorded as dropped: {sorted(lost)}"
    invented = (set(kept) | set(dropped)) - set(input_ids)
    assert not invented, f"chunk ids that never came in: {sorted(invented)}"
    both = set(kept) & set(dropped)
    assert not both, f"chunks both kept and dropped: {sorted(both)}"


def _check_result(result: Result, before: Result, input_ids: list[str]) -> None:
    check_accounting(result, input_ids)
    assert result.tokens_after <= before.tokens_before, (
        f"output has more tokens than the input: {result.tokens_after} > {before.tokens_before}"
    )
    # a "turn" drop records a turn removed, or one kept shorter (StripHTML keeps an HTML or invisible-character
    # message with its visible text and records what went): every turn not carried needs one, none goes unrecorded
    turn_drops = sum(1 for d in result.drops if d.kind == "turn")
    carried = [m for m in result.history if m.get("tokenslim") != "state_summary" or m in before.history]
    assert len(carried) <= len(before.history) + sum(1 for m in result.history if m.get("tokenslim") == "state_summary")
    assert len(carried) + turn_drops >= len(before.history), (
        f"history turns lost without a drop record: {len(before.history)} in, {len(carried)} kept, {turn_drops} dropped"
    )


def _parses(text: str) -> bool:
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return False
    return True


def _check_json_chunks(result: Result, before: list[Chunk]) -> None:
    """A chunk whose text parsed as JSON and was changed still parses."""
    originals = {c.id: c.text for c in before}
    for c in result.chunks:
        if c.text != originals[c.id] and _parses(originals[c.id]):
            assert _parses(c.text), f"chunk {c.id}: JSON that parsed no longer does: {c.text[:300]!r}"


def _check_structured(result: Result, before: Result) -> None:
    """ReduceStructured's own promises: every shortened chunk or message has its drop record, and
    JSON that parsed still parses."""
    originals = {c.id: c.text for c in before.chunks}
    recorded = {d.chunk_id for d in result.drops if d.reason == "structured_reduced"}
    for c in result.chunks:
        if c.text != originals[c.id]:
            assert c.id in recorded, f"chunk {c.id} shortened without a drop record"
    _check_json_chunks(result, before.chunks)
    changed = sum(1 for a, b in zip(before.history, result.history) if a.get("content") != b.get("content"))
    texts = sum(1 for d in result.drops if d.reason == "structured_reduced" and d.chunk_id is None)
    assert changed == texts, f"{changed} history messages shortened, {texts} drop records"
    for a, b in zip(before.history, result.history):
        if a.get("content") != b.get("content") and isinstance(a.get("content"), str) and _parses(a["content"]):
            assert _parses(b["content"]), f"a {a.get('role')} message's JSON no longer parses: {b['content'][:300]!r}"


# -- targets ------------------------------------------------------------------------------

Outcome = str  # "ok" | "typed"


def _run_stage(name: str) -> Callable[[dict[str, Any]], Outcome]:
    def call(case: dict[str, Any]) -> Outcome:
        stage = getattr(tokenslim.stages, _CLASSES[name])(**case["params"])
        req = case["request"]
        stage.validate()
        result = Result.create(req["query"], req["chunks"], req["history"], req["system_prompt"])
        before = result.copy()
        input_ids = [c.id for c in result.chunks]
        out = stage(result)  # called directly: nothing wraps what escapes
        _check_result(out, before, input_ids)
        if name == "reduce_structured":
            _check_structured(out, before)
        return "ok"

    return call


def _run_pipeline(case: dict[str, Any]) -> Outcome:
    req = case["request"]
    pipe = tokenslim.default_pipeline(token_budget=case["budget"])
    try:
        result = pipe.run(req["query"], req["chunks"], req["history"], req["system_prompt"])
    except StageError as exc:
        if isinstance(exc.__cause__, Exception) and not isinstance(exc.__cause__, TokenSlimError):
            raise exc.__cause__ from exc  # the pipeline wrapped a non-typed exception: unexpected
        raise
    before = Result.create("", req["chunks"]).chunks
    check_accounting(result, [c.id for c in before])
    assert result.tokens_after <= result.tokens_before, f"{result.tokens_after} > {result.tokens_before} tokens"
    _check_json_chunks(result, before)
    return "ok"


def _run_extract(case: dict[str, Any]) -> Outcome:
    from tokenslim.html import extract

    ex = extract(case["html"], max_bytes=case["max_bytes"])
    assert isinstance(ex.text, str)
    assert "\x00" not in ex.text, "NUL byte in extracted text"
    assert not any(ch in ex.text for ch in "\u200b\u202e\u2066\ufeff"), "invisible character in extracted text"
    return "ok"


@dataclass(frozen=True)
class Target:
    """A fuzz target: how to draw one case and how to run it."""

    name: str
    cases: st.SearchStrategy[dict[str, Any]]
    run: Callable[[dict[str, Any]], Outcome]


def _stage_target(name: str) -> Target:
    request = structured_requests() if name == "reduce_structured" else requests(html=name == "strip_html")
    return Target(name, st.fixed_dictionaries({"params": _stage_params(name), "request": request}), _run_stage(name))


TARGETS: dict[str, Target] = {
    **{n: _stage_target(n) for n in _CLASSES},
    "extract_main_text": Target(
        "extract_main_text",
        st.fixed_dictionaries(
            {
                "html": st.one_of(html_page, html_bytes, fuzzy_text, _bad_value),
                "max_bytes": st.sampled_from([50_000_000, 50_000_000, 500]),
            }
        ),
        _run_extract,
    ),
    "default_pipeline": Target(
        "default_pipeline",
        st.fixed_dictionaries({"request": requests(html=True, structured=True), "budget": st.one_of(st.none(), st.integers(1, 3000))}),
        _run_pipeline,
    ),
}


@dataclass
class Tally:
    """Counts for one target over a fuzz run."""

    tried: int = 0
    typed: int = 0
    unexpected: int = 0
    max_ms: float = 0.0
    failures: list[str] = field(default_factory=list)
    kinds: dict[str, int] = field(default_factory=dict)


def run_target(target: Target, case: dict[str, Any], tally: Tally) -> None:
    """Run one case, classify the outcome into ``tally`` (never raises)."""
    t0 = time.perf_counter()
    try:
        outcome = target.run(case)
    except TokenSlimError as exc:
        outcome = "typed"
        tally.kinds[type(exc).__name__] = tally.kinds.get(type(exc).__name__, 0) + 1
    except Exception:  # noqa: BLE001 - the point: count whatever escapes
        tally.unexpected += 1
        if len(tally.failures) < 5:
            tally.failures.append(f"input: {case!r:.600}\n{traceback.format_exc()}")
        outcome = "unexpected"
    ms = (time.perf_counter() - t0) * 1000
    tally.tried += 1
    tally.max_ms = max(tally.max_ms, ms)
    if outcome == "typed":
        tally.typed += 1
