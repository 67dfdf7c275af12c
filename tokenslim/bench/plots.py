"""PNG plots of a bench report: tokens, prefill time, quality and answer likelihood per stage, with CI error bars.

matplotlib is imported inside :func:`write_plots` with the non-interactive Agg
backend, so importing this module costs nothing and no display is needed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from tokenslim.bench.report import model_name
from tokenslim.errors import MissingDependency

__all__ = ["write_plots"]

_QUALITY = [("em", "EM"), ("f1", "token F1"), ("answer_in_context", "answer in context"), ("state_retention", "state kept")]


def _err(d: Mapping[str, Any]) -> tuple[float, float, float]:
    """(mean, distance down, distance up) of a CI dict; zeros where missing."""
    if d.get("mean") is None:
        return 0.0, 0.0, 0.0
    return d["mean"], d["mean"] - d["low"], d["high"] - d["mean"]


def write_plots(rep: Mapping[str, Any], out_dir: str | Path) -> list[Path]:
    """Write ``tokens.png``, ``prefill.png``, ``quality.png`` and (when scored) ``likelihood.png`` into ``out_dir``.

    Args:
        rep: ``BenchReport.as_dict()`` or a loaded JSON report.
        out_dir: Target folder (created if missing).

    Returns:
        The written paths.

    Raises:
        MissingDependency: matplotlib is not installed (``pip install tokenslim[bench]``).
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise MissingDependency("matplotlib", extra="bench", feature="benchmark plots") from exc

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    stages = rep["stages"]
    labels = [s["stage"] + ("" if s["changed"] or s["stage"] == "baseline" else " (=)") for s in stages]
    x = list(range(len(stages)))
    title = f"{rep['meta'].get('dataset', '?')} / {rep['meta'].get('backend', '?')} / {model_name(rep['meta'])}"
    paths: list[Path] = []

    def save(fig: Any, ax: Any, name: str, ylabel: str, heading: str, ticks: list[str]) -> None:
        ax.set_ylabel(ylabel)
        ax.set_xticks(range(len(ticks)), ticks, rotation=30, ha="right")
        ax.set_title(f"{heading}\n{title}", fontsize=9)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8)
        fig.tight_layout()
        paths.append(out / name)
        fig.savefig(paths[-1], dpi=110)
        plt.close(fig)

    fig, ax = plt.subplots(figsize=(8, 4))
    width = 0.4
    for off, key, name in [(-width / 2, "tokens_model", "model tokenizer"), (width / 2, "tokens_cl100k", "cl100k")]:
        vals = [_err(s[key]) for s in stages]
        ax.bar([i + off for i in x], [v[0] for v in vals], width, yerr=[[v[1] for v in vals], [v[2] for v in vals]],
               capsize=3, label=name)
    save(fig, ax, "tokens.png", "prompt tokens per request (mean, 95% CI)", "Prompt tokens per stage", labels)

    fig, ax = plt.subplots(figsize=(8, 4))
    key = "prefill_ms" if stages[0]["prefill_ms"]["p50"] is not None else "ttft_ms"
    vals = [_err(s[f"{key}_mean_ci"]) for s in stages]
    ax.bar(x, [v[0] for v in vals], 0.6, yerr=[[v[1] for v in vals], [v[2] for v in vals]], capsize=3,
           label="mean, 95% CI")
    ax.plot(x, [s[key]["p95"] or 0.0 for s in stages], "k_", markersize=18, label="p95")
    save(fig, ax, "prefill.png", f"{key.replace('_ms', '')} time per request (ms)",
         f"{'Prefill' if key == 'prefill_ms' else 'Time to first token'} per stage", labels)

    fig, ax = plt.subplots(figsize=(8, 4))
    present = [(k, n) for k, n in _QUALITY if any(s["quality"][k]["n"] for s in stages)]
    width = 0.8 / max(1, len(present))
    for j, (k, n) in enumerate(present):
        vals = [_err(s["quality"][k]) for s in stages]
        ax.bar([i - 0.4 + width * (j + 0.5) for i in x], [v[0] for v in vals], width,
               yerr=[[v[1] for v in vals], [v[2] for v in vals]], capsize=2, label=n)
    ax.set_ylim(0, 1.05)
    save(fig, ax, "quality.png", "score (mean; 95% CI, Wilson for rates)", "Answer quality per stage", labels)

    # The paired change vs the baseline (same questions): tighter than the absolute NLLs' intervals.
    nll = [(label, s.get("answer_nll_delta") or {}) for label, s in zip(labels[1:], stages[1:])]
    nll += [(f"control: {c['control'].replace('_', ' ')}", c.get("answer_nll_delta") or {})
            for c in rep.get("controls") or []]
    nll = [(label, d) for label, d in nll if d.get("mean") is not None]
    if nll:
        fig, ax = plt.subplots(figsize=(8, 4))
        vals = [_err(d) for _, d in nll]
        colors = ["tab:gray" if label.startswith("control") else "tab:blue" for label, _ in nll]
        ax.bar(range(len(nll)), [v[0] for v in vals], 0.6, yerr=[[v[1] for v in vals], [v[2] for v in vals]],
               capsize=3, color=colors)
        ax.axhline(0.0, color="k", lw=0.8)
        save(fig, ax, "likelihood.png", "answer NLL/token change (nats, 95% CI)",
             "Gold-answer NLL vs baseline, paired (below 0 = likelier); grey: controls", [label for label, _ in nll])
    return paths
