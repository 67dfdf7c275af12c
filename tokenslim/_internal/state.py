"""Deterministic, extractive conversation state: verbatim fragments of earlier turns.

:func:`extract_state` picks sentences from the turns to fold and renders them as
one short text, each line ``"- <speaker>: <verbatim sentences>"``, so nothing in
the state is paraphrased or invented. Sentences are classified with plain rules:

* **chit-chat** (never kept): greetings, thanks, acknowledgements, farewells and
  "anything else?" closers, i.e. a sentence with nothing left once those phrases
  and filler words are removed;
* **user content**: requests, constraints, preferences, numbers, dates, times and
  names (highest priority; the first user request ranks first of all);
* **answers**: a short user reply ("Yes, please.", "4 people") to an assistant
  question is kept together with that question, so the decision stays readable;
* **assistant decisions**: confirmations, bookings, and sentences carrying
  numbers, dates or names; other assistant statements rank lowest;
* **tool calls** are kept as ``called name(arguments)`` with the arguments verbatim;
  tool results are left out (the assistant turn after them states what matters).

Each unit (a sentence, or a question + its short answer) has a priority (4: the
first user request, 3: user requests/constraints/answers and carried-over state
lines, 2: other user sentences, assistant decisions and tool calls; assistant
small talk and tool results rank 1 and are not kept). Units are taken greedily by
value per token, ``(priority + facts) / tokens`` where *facts* counts numbers,
dates/times, names and request cues (ties: the more recent turn first), while they
fit the token budget, then printed in conversation order. Value per token, rather
than priority alone, is what keeps many short fact-bearing sentences instead of a
few long ones (on SGD with keep_last=4 it raised slot retention from 0.55 to 0.72
at the same size).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from tokenslim._internal.sentences import split_spans
from tokenslim._internal.turns import is_state_summary

__all__ = ["HEADER", "StateExtraction", "extract_state", "is_chit_chat"]

HEADER = "Earlier conversation (verbatim excerpts):"

_CHIT_CHAT = re.compile(
    r"\b(?:"
    r"hi|hello|hey|hiya|greetings|good (?:morning|afternoon|evening|night|day)|how are you(?: doing)?(?: today)?|"
    r"nice to (?:meet|talk to) you|"
    r"thanks?(?: you)?(?: (?:so|very) much)?(?: for (?:your|the|all (?:your|the)) (?:help|assistance|time))?|thx|cheers|"
    r"(?:much|greatly) appreciated|i appreciate (?:it|that|your help)|appreciate it|"
    r"you'?re welcome|no problem|my pleasure|glad (?:i could|to) help|happy to help|"
    r"ok(?:ay)?|alright|all right|sure|great|perfect|awesome|cool|wonderful|excellent|fine|good|nice|"
    r"got it|sounds (?:good|great|perfect)|that(?:'s| is) (?:great|perfect|fine|good|wonderful|all|it)|"
    r"that(?:'s| is) all(?: i (?:need|needed|wanted))?(?: for (?:now|today))?|"
    r"nothing (?:else|more)|not (?:right now|now|at (?:this|the moment|the time))|"
    r"bye|goodbye|good ?bye|see (?:you|ya)(?: soon| later)?|take care|"
    r"have a (?:great|good|nice|wonderful|lovely) (?:day|evening|night|one|weekend|trip|time)|enjoy(?: your (?:day|meal|stay|trip))?|"
    r"(?:is there|do you need|do you want|would you like) anything else(?: (?:i|that i) can (?:help|assist) you with| for (?:you|today))?|"
    r"(?:can|may|could) i help (?:you )?with anything else|what else (?:can|may) i (?:help|do for) you(?: with)?|"
    r"anything else(?: (?:you need|i can (?:do|help with)))?|how (?:can|may) i (?:help|assist) you(?: today)?|"
    r"let me know if (?:you need|there is) anything else"
    r")\b"
)
_VOCATIVE = re.compile(r",\s*[a-z]+\W*$")
_FILLER = frozenset(
    "no yes yeah yep nope please so very much again then it that thats this is for you your me i am all and "
    "well oh ah um just really now today too also there s a the to".split()
)
_AFFIRM = re.compile(r"^\W*(?:yes|yeah|yep|no|nope|sure|ok(?:ay)?|correct|right|that(?:'s| is) (?:correct|right|fine|good|great|perfect))\b")
_CUE = re.compile(
    r"\b(?:want|wanna|would like|i'd like|like to|need|prefer|looking for|look for|find|search|book|reserve|"
    r"reservation|schedule|order|buy|get me|budget|cheap|expensive|price|cost|under|at least|at most|only|must|should|"
    r"don'?t|do not|doesn'?t|never|without|instead|rather|change|cancel|make it|allerg\w*|vegetarian|vegan|"
    r"depart\w*|arriv\w*|leave|leaving|destination|pick ?up|drop ?off|stay|nights?|people|persons?|guests?)\b"
)
_DECISION = re.compile(
    r"\b(?:confirm\w*|booked|reserved|scheduled|reservation|reference|ref(?:erence)? (?:number|no)|has been|have been|"
    r"i have (?:found|booked|reserved|made)|i(?:'ve| have) (?:found|booked|reserved)|your \w+ (?:is|was|will)|"
    r"successful(?:ly)?|could not|couldn'?t|unable|failed|total|costs?|price|available|unavailable)\b"
)
_WHEN = re.compile(
    r"\b(?:today|tonight|tomorrow|yesterday|morning|afternoon|evening|noon|midnight|weekend|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|"
    r"january|february|march|april|may|june|july|august|september|october|november|december|"
    r"[ap]\.?m\.?|o'?clock|half past|quarter (?:past|to))\b"
)
_DIGIT = re.compile(r"\d")
_NAME = re.compile(r"(?<=[a-z,;:)] )[A-Z][\w'’&.-]*")
_WORD = re.compile(r"[a-z']+")


def is_chit_chat(sentence: str) -> bool:
    """True when the sentence is only greetings/thanks/acknowledgement/closing phrases."""
    low = sentence.lower().replace("’", "'")
    if _DIGIT.search(low):
        return False
    rest = _CHIT_CHAT.sub(" ", low)
    if rest != low:  # a polite phrase may end with whom it addresses: "Thank you for your help, doctor."
        rest = _VOCATIVE.sub("", rest)
    return all(w.strip("'") in _FILLER or not w.strip("'") for w in _WORD.findall(rest))


def _has_entity(sentence: str) -> bool:
    return bool(_DIGIT.search(sentence) or _WHEN.search(sentence.lower()) or _NAME.search(sentence))


def _facts(sentence: str) -> int:
    """How many fact-like items (numbers, dates/times, names, request cues) a sentence holds."""
    low = sentence.lower()
    return (
        len(re.findall(r"\d+", sentence))
        + len(_WHEN.findall(low))
        + len(_NAME.findall(sentence))
        + len(_CUE.findall(low))
    )


def _is_question(sentence: str) -> bool:
    s = sentence.rstrip(" \"'”)")
    return s.endswith("?") or sentence.lower().startswith(("please confirm", "confirm", "can you confirm"))


@dataclass(frozen=True)
class _Fragment:
    turn: int  # index into the folded turns
    start: int
    end: int


@dataclass(frozen=True)
class _Unit:
    priority: int
    turn: int
    fragments: tuple[_Fragment, ...]


@dataclass
class StateExtraction:
    """What :func:`extract_state` chose.

    Attributes:
        text: The state text (header + lines), or ``""`` when nothing was worth keeping.
        kept_sentences: Per folded turn, how many of its fragments appear in ``text``.
        chit_chat: Per folded turn, True when every sentence of it was chit-chat.
    """

    text: str
    kept_sentences: list[int]
    chit_chat: list[bool]


def _speaker(msg: Mapping[str, Any]) -> str:
    role = str(msg.get("role", "user"))
    if role in ("tool", "function"):
        name = msg.get("name")
        return f"tool {name}" if name else "tool"
    return str(msg.get("name") or role) if role not in ("user", "assistant") else role


def _call_text(msg: Mapping[str, Any]) -> str:
    """``called name(arguments)`` for each tool call of an assistant message (arguments verbatim)."""
    parts = []
    calls = msg.get("tool_calls") or []
    if msg.get("function_call"):
        calls = [{"function": msg["function_call"]}]
    for call in calls:
        fn = call.get("function", {}) if isinstance(call, Mapping) else {}
        args = fn.get("arguments", "")
        if not isinstance(args, str):
            args = json.dumps(args, ensure_ascii=False, sort_keys=True)
        parts.append(f"called {fn.get('name', '?')}({args})")
    return "; ".join(parts)


def _texts(turns: Sequence[Mapping[str, Any]]) -> list[str]:
    out = []
    for t in turns:
        text = str(t.get("content") or "")
        if t.get("role") == "assistant" and (t.get("tool_calls") or t.get("function_call")):
            call = _call_text(t)
            text = f"{text} {call}".strip() if text.strip() else call
        out.append(text)
    return out


def _line_spans(text: str) -> list[tuple[int, int]]:
    spans, pos = [], 0
    for line in text.split("\n"):
        if line.strip():
            spans.append((pos, pos + len(line)))
        pos += len(line) + 1
    return spans


def _units(turns: Sequence[Mapping[str, Any]], texts: list[str]) -> tuple[list[_Unit], list[bool]]:
    units: list[_Unit] = []
    chit: list[bool] = []
    first_user_done = False
    prev_question: _Fragment | None = None
    for ti, (msg, text) in enumerate(zip(turns, texts)):
        role = msg.get("role")
        if is_state_summary(msg):
            # an earlier state message: carry its lines over verbatim
            lines = [ln for ln in _line_spans(text) if text[ln[0] : ln[1]] != HEADER]
            units.extend(_Unit(3, ti, (_Fragment(ti, a, b),)) for a, b in lines)
            chit.append(not lines)
            prev_question = None
            continue
        spans = split_spans(text)
        all_chit = True
        question: _Fragment | None = None
        for si, (a, b) in enumerate(spans):
            sent = text[a:b]
            frag = _Fragment(ti, a, b)
            chatty = is_chit_chat(sent)
            if role == "user":
                short_answer = prev_question is not None and si == 0 and len(_WORD.findall(sent.lower())) <= 6
                if short_answer and (not chatty or _AFFIRM.match(sent.lower())):
                    units.append(_Unit(3, ti, (prev_question, frag)))  # type: ignore[arg-type]
                    all_chit = False
                    continue
                if chatty:
                    continue
                all_chit = False
                if not first_user_done:
                    prio, first_user_done = 4, True
                elif _CUE.search(sent.lower()) or _has_entity(sent) or _is_question(sent):
                    prio = 3
                else:
                    prio = 2
                units.append(_Unit(prio, ti, (frag,)))
            else:
                if chatty:
                    continue
                all_chit = False
                if role == "assistant" and _is_question(sent):
                    question = frag  # kept with the user's answer; alone only if it names something
                    if _DECISION.search(sent.lower()) or _has_entity(sent):
                        units.append(_Unit(2, ti, (frag,)))
                    continue
                is_call = sent.startswith("called ") and bool(msg.get("tool_calls") or msg.get("function_call"))
                if role == "assistant" and (is_call or _DECISION.search(sent.lower()) or _has_entity(sent)):
                    prio = 2
                else:
                    prio = 1
                units.append(_Unit(prio, ti, (frag,)))
        prev_question = question if role == "assistant" else None
        chit.append(all_chit)
    return units, chit


def _render(turns: Sequence[Mapping[str, Any]], texts: list[str], frags: list[_Fragment]) -> str:
    lines = [HEADER]
    by_turn: dict[int, list[_Fragment]] = {}
    for f in sorted(set(frags), key=lambda f: (f.turn, f.start)):
        by_turn.setdefault(f.turn, []).append(f)
    for ti in sorted(by_turn):
        text = texts[ti]
        if is_state_summary(turns[ti]):
            lines.extend(text[f.start : f.end] for f in by_turn[ti])
            continue
        body = " ".join(text[f.start : f.end] for f in by_turn[ti])
        lines.append(f"- {_speaker(turns[ti])}: {body}")
    return "\n".join(lines)


def extract_state(
    turns: Sequence[Mapping[str, Any]],
    count: Callable[[str], int],
    max_tokens: int,
) -> StateExtraction:
    """Pick verbatim fragments of ``turns`` worth keeping, within ``max_tokens``.

    Args:
        turns: The messages being folded, oldest first.
        count: Token counter (the result's tokenizer).
        max_tokens: Upper bound on the tokens of the returned text.

    Returns:
        A :class:`StateExtraction`; its text is ``""`` when nothing but chit-chat
        was found or not even one unit fits.
    """
    texts = _texts(turns)
    units, chit = _units(turns, texts)

    def frag_text(f: _Fragment) -> str:
        return texts[f.turn][f.start : f.end]

    def value(u: _Unit) -> tuple[float, int]:
        cost = sum(count(frag_text(f)) + 4 for f in u.fragments)
        facts = sum(_facts(frag_text(f)) for f in u.fragments)
        return (-(u.priority + facts) / cost, -u.turn)

    order = sorted((u for u in units if u.priority >= 2), key=value)
    chosen: list[_Fragment] = []
    seen: set[_Fragment] = set()
    used = count(HEADER)
    lines: set[int] = set()  # turns that already have a line: one more fragment costs its tokens + a space
    for unit in order:
        new = [f for f in unit.fragments if f not in seen]
        new_lines = {f.turn for f in new} - lines
        cost = sum(count(frag_text(f)) + 1 for f in new) + 4 * len(new_lines)
        if used + cost > max_tokens:
            continue
        chosen.extend(new)
        seen.update(new)
        lines |= new_lines
        used += cost
    text = _render(turns, texts, chosen) if chosen else ""
    while chosen and count(text) > max_tokens:  # the estimate above was short: drop the last-chosen
        chosen.pop()
        text = _render(turns, texts, chosen) if chosen else ""
    kept = [0] * len(turns)
    for f in chosen:
        kept[f.turn] += 1
    return StateExtraction(text=text, kept_sentences=kept, chit_chat=chit)
