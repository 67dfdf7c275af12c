"""Multi-turn conversations from the shared data, request by request, for prefix-cache benchmarks.

Each :class:`Dialogue` is a list of :class:`Turn`: what an application sends on that turn
(the user's message, the retrieved chunks) and what the assistant answered (the dataset's
own reply, appended to the history before the next turn). Three sources:

* :func:`sgd_dialogues` - SGD task dialogues (``sgd_dialogues``, dev shard). Each user turn
  brings a *fresh* retrieved context: the SGD schema (``dev_schema.json``: every service's,
  intent's and slot's description) as one chunk per service, intent and slot, ranked by
  BM25 against the user's message, the best ones up to ~400 tokens (cl100k), like a
  tool-using assistant that retrieves the API descriptions it may need. Gold: the final
  value of every slot.
* :func:`coqa_chats` - CoQA (``dialogstudio_samples/coqa``): real follow-up questions over
  one story; every turn retrieves the story's paragraphs, ranked by BM25 against the
  question. Gold per turn: the answer's span in the story.
* :func:`twowiki_chats` - 2WikiMultihopQA dev questions asked in turns over the question's
  ten paragraphs: "What do you know about <supporting title>?" for each supporting article
  (the assistant answers with that article's supporting sentences), then the question
  itself; every turn retrieves the ten paragraphs ranked by BM25. Gold per turn: a
  supporting sentence, then the answer. The lead-in questions are a template; the
  documents, replies, final question and answers are the dataset's.
"""

from __future__ import annotations

import gzip
import json
import re
from dataclasses import dataclass, field

from tokenslim._chunk import Chunk, Message
from tokenslim.bench.datasets import data_dir

__all__ = ["Turn", "Dialogue", "sgd_dialogues", "coqa_chats", "twowiki_chats", "CONVERSATION_SETS"]

_WORD = re.compile(r"\w+")


@dataclass
class Turn:
    """One request of a conversation.

    Attributes:
        query: The user's message.
        chunks: What the retriever returned for it.
        reply: The assistant's answer in the dataset (appended to the history afterwards).
        gold: Strings of which at least one should reach the model (empty: not scored).
    """

    query: str
    chunks: list[Chunk]
    reply: str
    gold: list[str] = field(default_factory=list)


@dataclass
class Dialogue:
    """A conversation: its turns in order, and dialogue-level gold (SGD slot values)."""

    id: str
    turns: list[Turn]
    slots: dict[str, list[str]] = field(default_factory=dict)

    def history(self, upto: int) -> list[Message]:
        """The history an application sends with turn ``upto`` (all earlier turns)."""
        out: list[Message] = []
        for t in self.turns[:upto]:
            out += [{"role": "user", "content": t.query}, {"role": "assistant", "content": t.reply}]
        return out


def _tokens(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def _ranked(query: str, docs: list[str]) -> list[tuple[int, float]]:
    """(index, BM25 score) of ``docs`` against ``query``, best first (ties: original order)."""
    from rank_bm25 import BM25Okapi

    scores = BM25Okapi([_tokens(d) or ["_"] for d in docs]).get_scores(_tokens(query))
    return sorted(((i, float(s)) for i, s in enumerate(scores)), key=lambda x: (-x[1], x[0]))


def _schema_docs() -> list[str]:
    schema = json.loads((data_dir() / "sgd_dialogues" / "dev_schema.json").read_text(encoding="utf-8"))
    docs: list[str] = []
    for svc in schema:
        name = svc["service_name"]
        docs.append(f"Service {name}: {svc['description']}.")
        for it in svc["intents"]:
            req = ", ".join(it["required_slots"]) or "none"
            opt = ", ".join(it["optional_slots"]) or "none"
            docs.append(f"{name} intent {it['name']}: {it['description']}. Required slots: {req}. Optional slots: {opt}.")
        for sl in svc["slots"]:
            values = f" Possible values: {', '.join(sl['possible_values'])}." if sl["possible_values"] else ""
            docs.append(f"{name} slot {sl['name']}: {sl['description']}.{values}")
    return docs


def sgd_dialogues(limit: int | None = None, context_tokens: int = 400) -> list[Dialogue]:
    """SGD dialogues, one :class:`Turn` per user message, with a fresh schema context each turn."""
    from tokenslim.tokenizers import get_tokenizer

    tok = get_tokenizer()
    docs = _schema_docs()
    with gzip.open(data_dir() / "sgd_dialogues" / "dev_dialogues_001.json.gz", "rt", encoding="utf-8") as f:
        raw = json.load(f)
    out: list[Dialogue] = []
    for d in raw[:limit]:
        turns: list[Turn] = []
        slots: dict[str, list[str]] = {}
        utts = d["turns"]
        for i, t in enumerate(utts):
            for fr in t.get("frames", []):
                for k, v in (fr.get("state") or {}).get("slot_values", {}).items():
                    slots[f"{fr['service']}.{k}"] = v
            if t["speaker"] != "USER":
                continue
            reply = utts[i + 1]["utterance"] if i + 1 < len(utts) and utts[i + 1]["speaker"] != "USER" else ""
            chunks, used = [], 0
            for j, score in _ranked(t["utterance"], docs):
                n = tok.count(docs[j])
                if used + n > context_tokens:
                    break
                chunks.append(Chunk(text=docs[j], score=score, id=f"schema{j}"))
                used += n
            turns.append(Turn(t["utterance"], chunks, reply))
        out.append(Dialogue(d["dialogue_id"], turns, slots))
    return out


def coqa_chats(limit: int | None = None) -> list[Dialogue]:
    """CoQA stories with their real follow-up questions; each turn retrieves the story's paragraphs."""
    raw = json.loads((data_dir() / "dialogstudio_samples" / "coqa" / "original_examples.json").read_text(encoding="utf-8"))
    out: list[Dialogue] = []
    for ex in raw[:limit]:
        paras = [p.strip() for p in ex["story"].split("\n\n") if p.strip()]
        questions, answers = ex["questions"], ex["answers"]
        turns = []
        for q, a in zip(questions, answers):
            chunks = [Chunk(text=paras[j], score=s, id=f"p{j}") for j, s in _ranked(q["input_text"], paras)]
            span = a["span_text"].strip()
            turns.append(Turn(q["input_text"], chunks, a["input_text"], [span] if span and span != "unknown" else []))
        out.append(Dialogue(ex["id"], turns))
    return out


def twowiki_chats(limit: int | None = 50) -> list[Dialogue]:
    """2WikiMultihopQA questions asked in turns over their ten paragraphs (see the module docstring)."""
    from tokenslim.bench.datasets import twowiki

    out: list[Dialogue] = []
    for ex in twowiki():
        titles = [c.metadata["title"] for c in ex.chunks]
        texts = [c.text for c in ex.chunks]

        def retrieve(q: str) -> list[Chunk]:
            return [Chunk(text=texts[j], score=s, id=f"p{j}", metadata={"title": titles[j]}) for j, s in _ranked(q, texts)]

        turns = []
        for title in ex.gold["supporting"]:
            if title not in titles:
                continue
            facts = [f for f in ex.gold["facts"] if f in texts[titles.index(title)]]
            if facts:
                q = f"What do you know about {title}?"
                turns.append(Turn(q, retrieve(q), " ".join(facts), facts))
        if not turns:
            continue
        turns.append(Turn(ex.query, retrieve(ex.query), ex.answers[0], list(ex.answers)))
        out.append(Dialogue(ex.id, turns))
        if limit and len(out) >= limit:
            break
    return out


CONVERSATION_SETS = {"sgd": sgd_dialogues, "coqa": coqa_chats, "twowiki_chat": twowiki_chats}
