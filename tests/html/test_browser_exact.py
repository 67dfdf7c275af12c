"""StripHTML(renderer="chromium"): Chromium decides which text is kept (exact mode)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import tokenslim
from tokenslim.errors import ConfigError, MissingDependency
from tokenslim.html import extract
from tokenslim.html._browser import Browser
from tokenslim.stages import StripHTML

CORPUS = Path(__file__).parents[1] / "reliability" / "injection_corpus"
MANIFEST = json.loads((CORPUS / "manifest.json").read_text(encoding="utf-8"))["pages"]


def _norm(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.browser
def test_exact_mode_on_the_corpus(browser):
    for page in MANIFEST:
        ex = extract((CORPUS / page["file"]).read_bytes(), renderer="chromium")
        text = _norm(ex.text)
        for hidden in page["hidden"]:
            assert _norm(hidden)[:60] not in text, f"{page['file']}: hidden text kept"
        for visible in page["visible"]:
            assert _norm(visible) in text, f"{page['file']}: visible text lost"


@pytest.mark.browser
def test_exact_mode_records_what_the_browser_hid(browser):
    html = ("<html><body><article><p>A paragraph a reader sees on the page.</p>"
            "<p style='position:fixed;bottom:-9999px'>Hidden canary text</p></article></body></html>")
    r = tokenslim.Pipeline([StripHTML(renderer="chromium")]).run("q", [html])
    assert r.chunks[0].text == "A paragraph a reader sees on the page."
    assert r.chunks[0].metadata["html_removed"]["browser_hidden"] == {"count": 1, "chars": len("Hidden canary text")}


def test_renderer_round_trips_and_is_validated():
    p = tokenslim.Pipeline([StripHTML(renderer="chromium")])
    q = tokenslim.Pipeline.from_config(json.loads(json.dumps(p.to_config())))
    assert q.to_config() == p.to_config()
    assert q["strip_html"].renderer == "chromium"
    with pytest.raises(ConfigError, match="renderer"):
        tokenslim.Pipeline([StripHTML(renderer="firefox")]).run("q", ["<p>x</p>"])
    with pytest.raises(ConfigError, match="renderer"):
        extract("<p>x</p>", renderer="webkit")


def test_missing_chromium_is_a_typed_error(tmp_path):
    with pytest.raises(MissingDependency, match="Chromium|chromium|playwright"):
        Browser(executable=str(tmp_path / "no-chromium")).text_nodes("<p>x</p>")


def test_import_stays_light():
    code = "import sys, tokenslim; tokenslim.default_pipeline(); print('playwright' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "False"
