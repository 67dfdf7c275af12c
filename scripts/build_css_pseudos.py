"""Write tokenslim/html/css_pseudos.txt: the pseudo-classes and pseudo-elements the system Chromium accepts.

    python scripts/build_css_pseudos.py

Needs Playwright and Debian's chromium (``scripts/setup.sh`` installs both). Each candidate below (the names of
the CSS Selectors, Pseudo-Elements, Scoping, Shadow Parts, Scrollbars and View Transitions specifications, and the
vendor-prefixed names real style sheets carry) is written into a style sheet as ``.p<form>, .q{}``: Chromium keeps
the rule only when it accepts the form, and drops the whole rule, ``.q`` included, when it does not. That is why
the extractor needs the list: a browser ignores a selector list with one selector it does not know, so a rule
such as ``.x:-moz-focusring, .x {display: block}`` shows nothing there (``tokenslim.html._css.rejected_selector``).
A functional form is written with the first argument that Chromium accepts among a few kinds.
"""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import sync_playwright

OUT = Path(__file__).resolve().parents[1] / "tokenslim" / "html" / "css_pseudos.txt"
NAMES = """
active any-link autofill blank buffering checked closed current default defined dir disabled empty enabled first
first-child first-of-type focus focus-visible focus-within fullscreen future has has-slotted heading host host-context
hover in-range indeterminate interest-source interest-target invalid is lang last-child last-of-type left link
local-link matches modal muted not nth-child nth-col nth-last-child nth-last-col nth-last-of-type nth-of-type only-child
only-of-type open optional out-of-range past paused picture-in-picture placeholder-shown playing popover-open read-only
read-write required right root scope seeking stalled state target target-after target-before target-current
target-within unresolved user-invalid user-valid valid visited volume-locked where xr-overlay
active-view-transition active-view-transition-type
corner-present decrement double-button end horizontal increment no-button single-button start vertical window-inactive
after backdrop before checkmark column cue cue-region details-content file-selector-button first-letter first-line
grammar-error highlight marker part picker picker-icon placeholder scroll-button scroll-marker scroll-marker-group
search-text selection slotted spelling-error target-text view-transition view-transition-group
view-transition-image-pair view-transition-new view-transition-old
-webkit-any -webkit-any-link -webkit-autofill -webkit-autofill-and-obscured -webkit-autofill-previewed
-webkit-autofill-strong-password -webkit-autofill-strong-password-viewable -webkit-drag -webkit-full-page-media
-webkit-full-screen -webkit-full-screen-ancestor -webkit-full-screen-controls-hidden -webkit-full-screen-document
-webkit-input-placeholder -webkit-placeholder-shown -webkit-scrollbar -webkit-selection
-internal-autofill-previewed -internal-autofill-selected -internal-list-box -internal-multi-select-focus
-moz-any -moz-any-link -moz-focus-inner -moz-focusring -moz-full-screen -moz-input-placeholder -moz-loading
-moz-only-whitespace -moz-placeholder -moz-placeholder-shown -moz-range-thumb -moz-read-only -moz-read-write
-moz-selection -moz-ui-invalid -ms-backdrop -ms-clear -ms-expand -ms-fullscreen -ms-input-placeholder -ms-reveal
""".split()
ARGUMENTS = (".a", "2n+1", "x", "en", "ltr", "select", "up")
PROBE = """(forms) => {
  const style = document.createElement("style");
  document.head.appendChild(style);
  const out = [];
  for (const form of forms) {
    style.textContent = ".p" + form + ", .q{color:red}";
    if (style.sheet.cssRules.length === 1) out.push(form);
  }
  return out;
}"""


def candidates() -> list[str]:
    """Every form tried: ``:name``, ``::name`` and each with each argument kind."""
    out = []
    for name in NAMES:
        for colons in (":", "::"):
            out.append(colons + name)
            out.extend(f"{colons}{name}({arg})" for arg in ARGUMENTS)
    return out


def main() -> None:
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium")
        page = browser.new_page()
        page.set_content("<html><head></head><body></body></html>")
        accepted = page.evaluate(PROBE, candidates())
        # Chromium takes any ::-webkit- pseudo-element it does not know (its own form controls' parts).
        wildcard = page.evaluate(PROBE, ["::-webkit-tokenslim-unknown-part"])
        version = browser.version
        browser.close()
    forms: dict[str, str] = {}
    for form in accepted:  # the first accepted argument of a functional form is the one kept
        if wildcard and form.startswith("::-webkit-") and "(" not in form:
            continue  # the wildcard line covers it
        forms.setdefault(form.split("(")[0] + ("(" if "(" in form else ""), form)
    header = [
        f"# Pseudo-classes and pseudo-elements Chromium {version} accepts in a style sheet, one accepted form each",
        "# (a functional one with an argument it takes). A selector list holding any other one is dropped whole.",
        "# Rebuild: python scripts/build_css_pseudos.py",
    ]
    if wildcard:
        header.append("::-webkit-*")
    OUT.write_text("\n".join(header + sorted(forms.values())) + "\n", encoding="utf-8")
    print(f"{len(forms)} forms{' and ::-webkit-*' if wildcard else ''} -> {OUT}")


if __name__ == "__main__":
    main()
