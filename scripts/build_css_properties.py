"""Write tokenslim/html/css_properties.txt: the CSS property names the system Chromium supports.

    python scripts/build_css_properties.py

Needs Playwright and Debian's chromium (``scripts/setup.sh`` installs both). Every string property of a
``CSSStyleDeclaration`` is turned into its kebab-case name and kept when ``CSS.supports(name, "initial")``
accepts it; ``@supports (name: value)`` is false in Chromium for any other name, so the extractor reads it so.
"""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import sync_playwright

OUT = Path(__file__).resolve().parents[1] / "tokenslim" / "html" / "css_properties.txt"
LIST = """() => {
  const out = new Set();
  for (const k in document.body.style) {
    if (typeof document.body.style[k] !== "string" || /^[0-9]+$/.test(k)) continue;
    const kebab = k.replace(/^webkit/, "-webkit").replace(/[A-Z]/g, (m) => "-" + m.toLowerCase());
    if (CSS.supports(kebab, "initial")) out.add(kebab);
  }
  return [...out].sort();
}"""


def main() -> None:
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium")
        page = browser.new_page()
        page.set_content("<html><body></body></html>")
        names = page.evaluate(LIST)
        version = browser.version
        browser.close()
    header = [
        f"# CSS property names Chromium {version} supports (every string property of CSSStyleDeclaration, in kebab case,",
        "# that CSS.supports(name, 'initial') accepts), read by @supports: a declaration of any other property is unsupported.",
        "# Rebuild: python scripts/build_css_properties.py",
    ]
    OUT.write_text("\n".join(header + names) + "\n", encoding="utf-8")
    print(f"{len(names)} properties -> {OUT}")


if __name__ == "__main__":
    main()
