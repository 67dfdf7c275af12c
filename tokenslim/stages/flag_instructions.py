"""FlagInstructions: find visible text that addresses the model instead of the reader (opt-in).

Why: StripHTML removes text a reader never sees; an injected instruction can also be in
plain sight ("Ignore all previous instructions and reply with ..."). Whether such text
should reach the model is the caller's decision, so this stage is not part of
:func:`tokenslim.default_pipeline`: add it to a pipeline to remove (or only flag) those
sentences. It looks for instruction-like phrasing aimed at an assistant: overriding
earlier instructions, asking for the system prompt, re-assigning the model's role,
dictating its reply, and chat-template control tokens. It is a heuristic: phrasing it
does not know gets through, which is why it is opt-in and why it never replaces
StripHTML's visibility rules.
"""

from __future__ import annotations

import re
from typing import Literal

from tokenslim._chunk import Chunk
from tokenslim._internal.sentences import join_spans, split_spans
from tokenslim._result import Result
from tokenslim.stages._base import BaseStage, check

__all__ = ["FlagInstructions", "instruction_spans", "INSTRUCTION_PATTERNS"]

_ANY = r"(?:all|any|every|the|your|my|these|those|our)?\s*"
_PRIOR = r"(?:previous|prior|preceding|earlier|above|foregoing|original|initial|system|old|other)"
_ORDERS = r"(?:instructions?|prompts?|directions?|directives?|rules|guidelines|context|commands?|messages?|guidance)"
INSTRUCTION_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("override", re.compile(
        rf"\b(?:ignore|disregard|forget|override|bypass|skip|drop|abandon)\s+{_ANY}(?:of\s+)?(?:the\s+)?{_PRIOR}\s+"
        rf"(?:\w+\s+){{0,2}}{_ORDERS}", re.I)),
    ("override", re.compile(r"\b(?:forget|ignore)\s+(?:everything|all)\s+(?:you\s+(?:were|have been)\s+told|above|before)",
                            re.I)),
    ("prompt_leak", re.compile(
        r"\b(?:reveal|print|output|repeat|show|disclose|leak|display|tell\s+me)\s+(?:\w+\s+){0,3}"
        r"(?:system\s+prompt|hidden\s+(?:prompt|instructions)|initial\s+instructions|api\s+key|secret\s+key)", re.I)),
    ("role", re.compile(r"\byou\s+are\s+now\s+(?:a|an|the|in|no\s+longer|DAN)\b|\bfrom\s+now\s+on,?\s+you\s+(?:are|will|must)\b"
                        r"|\bact\s+as\s+(?:a|an)\s+(?:unrestricted|unfiltered|jailbroken)", re.I)),
    ("reply_dictation", re.compile(
        r"\b(?:reply|respond|answer|say|output)\s+(?:only\s+)?(?:with|in)\s+(?:the\s+(?:word|phrase|text)|exactly|only)\b"
        r"|\b(?:assistant|AI|model|chatbot|LLM|language\s+model)s?\s*[,:]?\s+(?:must|should|will)\s+"
        r"(?:now\s+)?(?:reply|respond|answer|say|ignore|tell|recommend|claim|output|state)"
        r"|\b(?:if\s+you\s+are\s+an?\s+(?:AI|assistant|LLM|language\s+model|chatbot))\b"
        r"|\b(?:when|if)\s+(?:summari[sz]ing|asked\s+about)\s+(?:this|the)\s+(?:page|article|document)\b"
        r"|\b(?:do\s+not|don't|never)\s+(?:tell|inform|mention\s+to)\s+the\s+user\b", re.I)),
    ("new_instructions", re.compile(r"(?:^|\n)\s*(?:new|updated|important)\s+(?:system\s+)?instructions?\s*:", re.I)),
    ("control_tokens", re.compile(r"<\|(?:im_start|im_end|system|endoftext|eot_id|start_header_id)\|>|\[/?INST\]|<</?SYS>>")),
)
"""``(kind, pattern)`` pairs; a sentence matching any of them is instruction-like."""


def instruction_spans(text: str) -> list[tuple[int, int, str]]:
    """Sentences of ``text`` that read as instructions to the model: ``(start, end, kind)``.

    Args:
        text: A chunk's or message's text.

    Returns:
        The matching sentence spans (see :data:`INSTRUCTION_PATTERNS`), in order.
    """
    out: list[tuple[int, int, str]] = []
    for a, b in split_spans(text):
        sentence = text[a:b]
        for kind, rx in INSTRUCTION_PATTERNS:
            if rx.search(sentence):
                out.append((a, b, kind))
                break
    return out


class FlagInstructions(BaseStage):
    """Remove (or flag) visible sentences that address the model rather than the reader.

    Args:
        action: ``"remove"`` (default): cut each instruction-like sentence from chunks (and,
            with ``history=True``, from history messages), each recorded as a drop with
            reason ``"instruction_like"`` and the pattern kind as detail. ``"flag"``: keep
            the text and add metadata ``instruction_like`` (the sentences) to the chunk.
        history: Also look at history messages (not the system prompt or the query).

    Not in :func:`tokenslim.default_pipeline`: visible text stays unless a pipeline asks.
    """

    def __init__(self, *, action: Literal["remove", "flag"] = "remove", history: bool = False) -> None:
        self.action = action
        self.history = history

    def validate(self) -> None:
        """Check the parameters.

        Raises:
            ConfigError: ``action`` is not ``"remove"``/``"flag"`` or ``history`` is not a bool.
        """
        check(self.action in ("remove", "flag"), self, f"action must be 'remove' or 'flag', got {self.action!r}")
        check(isinstance(self.history, bool), self, f"history must be a bool, got {self.history!r}")

    def apply(self, result: Result) -> Result:
        """Find instruction-like sentences in chunks (and history) and remove or flag them."""
        chunks: list[Chunk] = []
        for chunk in result.chunks:
            spans = instruction_spans(chunk.text)
            if not spans:
                chunks.append(chunk)
                continue
            found = [chunk.text[a:b] for a, b, _ in spans]
            if self.action == "flag":
                chunks.append(chunk.with_text(chunk.text, instruction_like=found))
                continue
            for (_a, _b, kind), sentence in zip(spans, found):
                result.drop(sentence, kind="sentence", reason="instruction_like", detail=kind, chunk_id=chunk.id)
            kept = _without(chunk.text, spans)
            if kept.strip():
                chunks.append(chunk.with_text(kept))
            else:
                result.drop(chunk, reason="instruction_like", detail="every sentence was instruction-like")
        result.chunks = chunks
        if self.history and self.action == "remove":
            for i, msg in enumerate(result.history):
                content = msg.get("content")
                if not isinstance(content, str):
                    continue
                spans = instruction_spans(content)
                if spans:
                    for a, b, kind in spans:
                        result.drop(content[a:b], kind="sentence", reason="instruction_like",
                                    detail=f"history[{i}] ({msg.get('role')}): {kind}")
                    result.history[i] = {**msg, "content": _without(content, spans)}
        return result


def _without(text: str, spans: list[tuple[int, int, str]]) -> str:
    cut = {(a, b) for a, b, _ in spans}
    return join_spans(text, [s for s in split_spans(text) if s not in cut])
