"""Chromium as the judge of which text a reader sees (the browser oracle).

Why: the Python rules in :mod:`tokenslim.html._style` approximate a browser; this module asks
one. Chromium (driven through Playwright, using the system browser, never a downloaded one)
renders the page 1280 px wide with scripting enabled but every script blocked by a
``Content-Security-Policy`` (so ``<noscript>`` stays hidden as in a reader's browser, and no page
code runs), with every network request refused, then ``_probe.js`` reports for each text node
whether a reader sees it: ``checkVisibility`` (display, visibility, opacity 0,
content-visibility), the product of opacities and ``filter: opacity()``, a client rect of at least
2x2 px inside the document (the viewport for fixed boxes) after ``overflow`` clipping, a font size
of at least 3 px, a fill (or stroke) colour, hit-testing at the rect centre (``clip``,
``clip-path`` and opaque boxes painted on top) and contrast against what is painted below.

Used by the tests (tests/html/test_browser_oracle.py), the differential fuzzer and
``StripHTML(renderer="chromium")``. Playwright is imported here only, lazily.
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import threading
from dataclasses import dataclass
from importlib import resources
from typing import Any

from tokenslim.errors import InputError, MissingDependency
from tokenslim.html._hidden import INVISIBLE_CHARS

__all__ = ["Browser", "TextNode", "find_chromium", "thread_browser", "compact", "visible_stream", "unseen_sentences",
           "VIEWPORT"]

VIEWPORT = (1280, 800)
"""Width and height (CSS px) of the window the page is rendered in."""

_URL = "http://page.invalid/"
_CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
_PROBE_OPTIONS = {"minPx": 2, "minFontPx": 3.0, "minContrast": 1.25, "maxAlpha": 0.05}


@dataclass(frozen=True, slots=True)
class TextNode:
    """One non-blank text node of the rendered page.

    Attributes:
        text: The node's text as in the DOM (entities decoded, whitespace as written).
        reason: ``""`` when a reader sees it, else the first check that failed
            (``"checkVisibility"``, ``"masked"``, ``"backface"``, ``"opacity"``, ``"font_size"``,
            ``"text_security"``, ``"transparent"``, ``"geometry"``,
            ``"not_painted"``, ``"covered"``, ``"contrast"``).
    """

    text: str
    reason: str

    @property
    def visible(self) -> bool:
        """Whether a reader sees this text."""
        return not self.reason


def find_chromium() -> str | None:
    """The Chromium executable: ``$TOKENSLIM_CHROMIUM``, else the first of chromium, chromium-browser,
    google-chrome on ``PATH``; ``None`` when there is none."""
    env = os.environ.get("TOKENSLIM_CHROMIUM")
    if env:
        return env if os.path.isfile(env) else None
    for name in _CHROMIUM_NAMES:
        path = shutil.which(name)
        if path:
            return path
    return None


class Browser:
    """One headless Chromium, started on first use, rendering one page at a time.

    Not thread-safe (Playwright's sync API belongs to the thread that started it): use one
    ``Browser`` per thread. Use as a context manager, or call :meth:`close`.

    Args:
        executable: The Chromium executable; ``None`` finds it (:func:`find_chromium`).
        timeout_s: Longest wait for one page to load, in seconds.
    """

    def __init__(self, *, executable: str | None = None, timeout_s: float = 30.0) -> None:
        self.executable = executable
        self.timeout_s = timeout_s
        self._pw: Any = None
        self._browser: Any = None
        self._page: Any = None
        self._body: bytes = b""
        self._thread: int | None = None

    def _start(self) -> None:
        try:
            from playwright.sync_api import sync_playwright
        except ImportError as exc:
            raise MissingDependency("playwright", extra="browser", feature="The Chromium renderer") from exc
        exe = self.executable or find_chromium()
        if exe is None or not os.path.isfile(exe):
            raise MissingDependency(
                "chromium", extra="browser", feature="The Chromium renderer",
                install="apt-get install chromium (or bash scripts/setup.sh), or set TOKENSLIM_CHROMIUM",
            )
        self._pw = _driver(sync_playwright)
        try:
            self._browser = self._pw.chromium.launch(executable_path=exe, args=["--no-sandbox", "--disable-gpu"])
            context = self._browser.new_context(
                viewport={"width": VIEWPORT[0], "height": VIEWPORT[1]}, java_script_enabled=True,
                service_workers="block",
            )
            self._page = context.new_page()
            self._page.set_default_timeout(self.timeout_s * 1000)
            self._page.route("**/*", self._route)
        except Exception:
            self.close()
            raise
        self._thread = threading.get_ident()

    def _route(self, route: Any) -> None:
        if route.request.url == _URL and route.request.resource_type == "document":
            route.fulfill(status=200, body=self._body, headers={
                "content-type": "text/html", "content-security-policy": "script-src 'none'; object-src 'none'",
            })
        else:
            route.abort()

    def text_nodes(self, html: str | bytes) -> list[TextNode]:
        """Render ``html`` and report every non-blank text node (shadow roots included) in document order.

        Bytes are decoded by Chromium (BOM, ``<meta charset>``, else windows-1252); str is sent as UTF-8.

        Raises:
            InputError: ``html`` is neither str nor bytes.
            MissingDependency: Playwright or Chromium is not installed.
        """
        if not isinstance(html, (str, bytes, bytearray)):
            raise InputError(f"html must be str or bytes, got {type(html).__name__}: {html!r:.80}")
        if self._page is None:
            self._start()
        elif self._thread != threading.get_ident():
            raise RuntimeError("a Browser is used by the thread that started it only; create one per thread")
        if isinstance(html, str):
            # A <meta charset> inside the page must not re-decode UTF-8 text: a BOM wins over it.
            self._body = b"\xef\xbb\xbf" + html.encode("utf-8", "surrogatepass")
        else:
            self._body = bytes(html)
        self._page.goto(_URL, wait_until="load")
        self._settle()
        rows = self._page.evaluate(_probe(), _PROBE_OPTIONS)
        return [TextNode(text, reason) for text, reason in rows]

    def visible_html(self, html: str) -> tuple[str, int, int]:
        """Render ``html`` and return it as markup holding only the text a reader sees.

        Hidden text nodes are removed; style sheets, ``style``/``hidden``/``popover``/``bgcolor``/``color``
        attributes and ``<body text>`` are removed too (they have done their work), closed dialogs the browser showed are
        marked open, and declarative shadow roots are serialized in place.

        Returns:
            ``(markup, hidden text nodes removed, their characters)``.
        """
        if self._page is None:
            self._start()
        elif self._thread != threading.get_ident():
            raise RuntimeError("a Browser is used by the thread that started it only; create one per thread")
        self._body = b"\xef\xbb\xbf" + html.encode("utf-8", "surrogatepass")
        self._page.goto(_URL, wait_until="load")
        self._settle()
        got = self._page.evaluate(_probe(), {**_PROBE_OPTIONS, "serialize": True})
        return "<!DOCTYPE html><html>" + got["html"] + "</html>", got["hiddenNodes"], got["hiddenChars"]

    def _settle(self) -> None:
        """Wait two frames after ``load``: boxes of aborted images and frames can still change the
        layout for a frame or two, and a box that covers text for a moment is not what a reader sees."""
        self._page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")

    def close(self) -> None:
        """Stop Chromium (a later :meth:`text_nodes` starts it again)."""
        browser, pw = self._browser, self._pw
        self._browser = self._pw = self._page = None
        if browser is not None:
            browser.close()
        if pw is not None:
            _release(pw)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_LOCAL = threading.local()


def _driver(sync_playwright: Any) -> Any:
    """This thread's Playwright driver (one per thread: Playwright's sync API allows no second), counted."""
    pw = getattr(_LOCAL, "driver", None)
    if pw is None:
        pw = _LOCAL.driver = sync_playwright().start()
        _LOCAL.users = 0
    _LOCAL.users += 1
    return pw


def _release(pw: Any) -> None:
    """Stop this thread's driver when its last browser closes."""
    current: Any = getattr(_LOCAL, "driver", None)
    if current is None or current is not pw:
        return
    _LOCAL.users -= 1
    if _LOCAL.users <= 0:
        _LOCAL.driver = None
        current.stop()


_ALL: list[Browser] = []
_ALL_LOCK = threading.Lock()


def thread_browser() -> Browser:
    """This thread's shared :class:`Browser` (``renderer="chromium"``), started on first use, closed at exit."""
    b = getattr(_LOCAL, "browser", None)
    if b is None:
        b = _LOCAL.browser = Browser()
        with _ALL_LOCK:
            if not _ALL:
                atexit.register(_close_all)
            _ALL.append(b)
    return b


def _close_all() -> None:
    for b in _ALL:
        try:
            b.close()
        except Exception:  # noqa: BLE001 - best effort at interpreter exit (another thread's browser)
            pass


_SPACE = re.compile(r"\s+")
_SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+")
_LINE_MARK = re.compile(r"^(?:#{1,6} |- )")


def compact(text: str) -> str:
    """``text`` without whitespace or invisible code points, for comparing the browser's text with
    extracted text (which re-spaces inline elements and drops invisible characters)."""
    return _SPACE.sub("", INVISIBLE_CHARS.sub("", text))


def visible_stream(nodes: list[TextNode]) -> str:
    """The :func:`compact` text of every visible node, in document order."""
    return "".join(compact(n.text) for n in nodes if n.visible)


def unseen_sentences(text: str, nodes: list[TextNode], *, min_chars: int = 8) -> tuple[list[str], int]:
    """The sentences of extracted ``text`` that a reader does not see, and how many were checked.

    A sentence (lines split at ``" | "`` cells and sentence ends, heading and list marks removed)
    counts as seen when its :func:`compact` form occurs in the browser's :func:`visible_stream`:
    text that is in the page but hidden, or hidden in part (an invisible word inside it), is not.
    Sentences shorter than ``min_chars`` compact characters are not checked.
    """
    stream = visible_stream(nodes)
    unseen: list[str] = []
    checked = 0
    for line in text.splitlines():
        for cell in _LINE_MARK.sub("", line).split(" | "):
            for sentence in _SENTENCE_END.split(cell):
                key = compact(sentence)
                if len(key) < min_chars:
                    continue
                checked += 1
                if key not in stream:
                    unseen.append(sentence.strip())
    return unseen, checked


_PROBE: list[str] = []


def _probe() -> str:
    if not _PROBE:
        _PROBE.append(resources.files("tokenslim.html").joinpath("_probe.js").read_text(encoding="utf-8"))
    return _PROBE[0]
