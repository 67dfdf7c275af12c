"""Titles from wherever loaders put them (tokenslim._internal.titles) and their use by the stages."""

from __future__ import annotations

import pytest

import tokenslim
from tokenslim import Chunk, Pipeline
from tokenslim._internal.relevance import ChunkRelevance, chunk_relevance
from tokenslim._internal.titles import chunk_title, lead_aliases, lead_subject, lowercase_words, text_title, title_end
from tokenslim.errors import ConfigError
from tokenslim.stages import CompressDocuments, TrimTopK


def _untitled(q: str, texts: list[str], **kw: object) -> tuple[list[str], ChunkRelevance]:
    """No titles anywhere: each text's lead subject, and chunk relevance linking through those subjects."""
    common = lowercase_words(texts)
    subjects = [lead_subject(t, common=common) for t in texts]
    return subjects, chunk_relevance(q, texts, subjects, common=common, subjects=[True] * len(texts), **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "metadata, title",
    [
        ({"title": "Shirley Temple"}, "Shirley Temple"),
        ({"document_title": "Shirley Temple"}, "Shirley Temple"),  # LlamaIndex
        ({"html_title": "Shirley Temple"}, "Shirley Temple"),  # StripHTML
        ({"file_name": "docs/shirley_temple.pdf"}, "shirley temple"),  # SimpleDirectoryReader
        ({"source": "https://en.wikipedia.org/wiki/Shirley_Temple"}, "Shirley Temple"),  # LangChain loaders
        ({"meta": {"title": "Shirley Temple"}}, "Shirley Temple"),  # a nested Haystack meta
        ({"title": "", "document_title": "Shirley Temple"}, "Shirley Temple"),  # empty values are skipped
        ({"title": 3}, ""),
    ],
)
def test_title_from_metadata_keys(metadata: dict, title: str) -> None:
    assert chunk_title("she was an actress.", metadata) == title


def test_title_keys_choose_and_order_the_keys() -> None:
    meta = {"title": "A", "heading": "B"}
    assert chunk_title("x", meta, ["heading", "title"]) == "B"
    assert chunk_title("x", meta, []) == ""
    assert CompressDocuments().title_keys == TrimTopK().title_keys == tokenslim.TITLE_KEYS
    assert tokenslim.TITLE_KEYS[0] == "title"


@pytest.mark.parametrize(
    "text, title",
    [
        ("Title: Annual report 2023\nRevenue grew.", "Annual report 2023"),
        ("# Setup guide\nRun pip install.", "Setup guide"),
        ("Introduction\nThis paper studies X.", "Introduction"),
        ("Shirley Temple: Shirley Temple Black was an actress.", "Shirley Temple"),
        ("Ken St. Andre: Kenneth St. Andre is an author.", "Ken St. Andre"),
        ("2003 WNBA season: The 2003 season was the seventh.", "2003 WNBA season"),
        ("Young adult fiction: Young adult fiction is written for readers aged 12 to 18.", "Young adult fiction"),
        # not titles: a sentence before a colon, wrapped prose, speaker labels of a transcript
        ("The answer is: yes, it was.", ""),
        ("we wrap lines here\nand continue", ""),
        ("Grad A: hello there.\nGrad B: yes indeed.", ""),
        ("Shirley Temple Black was an actress.", ""),
    ],
)
def test_title_from_the_text(text: str, title: str) -> None:
    assert text_title(text) == title
    assert chunk_title(text, {}) == title


def test_title_end_cuts_a_label_not_a_subject() -> None:
    assert title_end("Q3 report: Revenue grew.", "Q3 report") == len("Q3 report: ")
    assert title_end("# Q3 report\nRevenue grew.", "Q3 report") == len("# Q3 report\n")
    assert title_end("Q3 report is out.", "Q3 report") == 0
    assert title_end("About the Q3 report: x", "Q3 report") == 0


@pytest.mark.parametrize(
    "text, subject",
    [
        ("Shirley Temple Black (April 23, 1928 – February 10, 2014) was an actress", "Shirley Temple Black"),
        ("Kiss and Tell is a 1945 American comedy film", "Kiss and Tell"),
        ('"The Shining" is a film', "The Shining"),
        ("Lord High Treasurer of England is an office", "Lord High Treasurer of England"),
        ('Roland "Champ" Bailey Jr. (born June 22, 1978) is', "Champ Bailey Jr"),
        ('Kristopher "Kris" Marshall (born 11 April 1973) is an English actor.', "Kris Marshall"),
        ("In 1990, the firm grew", ""),
        ("In 1998, the Charlotte Hornets won", "Charlotte Hornets"),
        ("In addition to comic books, Mutarelli has also created plays", "Mutarelli"),
        ("Originally, Acme Corp sold lamps", "Acme Corp"),
        ("As an adult, she was named ambassador", ""),
        ("In Bruges is a 2008 film", "In Bruges"),
        ("It was a film", ""),
        ("Will Smith is an actor", "Will Smith"),
        ("The 1992–93 NBA season was the fifth season", "1992–93 NBA season"),
        ("he is a man", ""),
        ('The Øresund/Öresund/Oresund Bridge (Danish: "Øresundsbroen") is a bridge', "The Øresund Bridge"),
        ("AC/DC are an Australian rock band", "AC DC"),
        ("the cat sat", ""),
        ("The company said", ""),
        # lower-case words up to the copula belong to the name they follow; no other words do
        ("Seminole music is the music of the Seminole people", "Seminole music"),
        ("The Falkland Islands official football team is a team", "The Falkland Islands official football team"),
        ("The Falkland Islands is represented at the Games", "The Falkland Islands"),
        ("Ellie Goulding worked with producers", "Ellie Goulding"),
        ("Acme Corp also was a maker", "Acme Corp"),
        ("Paris and the region were flooded", "Paris"),
        # a preposition never opens a defined term
        ("The following is a list of the 20 largest settlements", ""),
    ],
)
def test_lead_subject(text: str, subject: str) -> None:
    assert lead_subject(text) == subject


def test_a_definition_subject_is_its_first_name() -> None:
    """Without a capitalised name ("young" is written in lower case elsewhere), the defined term is the subject;
    of several names joined by "or", the first."""
    text = "Young adult fiction or young adult literature (YA) is fiction published for readers in their youth."
    assert lead_subject(text, common=lowercase_words([text])) == "Young adult fiction"


def test_title_keys_is_validated() -> None:
    with pytest.raises(ConfigError, match="title_keys"):
        Pipeline([CompressDocuments(title_keys="title")]).run("q", ["a b c."])
    with pytest.raises(ConfigError, match="title_keys"):
        Pipeline([TrimTopK(title_keys=[1])]).run("q", ["a b c."])


def test_a_title_under_any_key_ranks_the_chunk() -> None:
    """The question names the subject only through the title; any loader's key works the same."""
    q = "Which award did Zorblat Quenchwater win?"
    for key in ("title", "document_title", "file_name"):
        chunks = [
            Chunk("The prize was won in 1990 for her work on rivers.", metadata={key: "Zorblat Quenchwater"}),
            Chunk("Rivers flow into the sea; rivers carry silt.", metadata={key: "Rivers"}),
        ]
        r = Pipeline([TrimTopK(k=1)]).run(q, chunks)
        assert r.chunks[0].text.startswith("The prize"), key


def test_a_subject_read_from_the_text_carries_the_second_hop() -> None:
    """No titles anywhere: the chunk the top chunk names (by the subject its text opens with) gains relevance."""

    q = "Which country was the star of Moonfall Harbor later ambassador to?"
    texts = [
        "Moonfall Harbor is a 1951 drama film. It starred Zorblat Quenchwater as the lighthouse keeper.",
        "Zorblat Quenchwater (1920 – 2001) was an entertainer and diplomat, envoy to Ghana from 1974.",
        "Harbor seals rest on rocks; a later census counted them by country.",
        "Lighthouse keepers in Wales later retired to the country.",
    ]
    without = chunk_relevance(q, texts, [""] * 4).scores
    common = lowercase_words(texts)
    subjects = [lead_subject(t, common=common) for t in texts]
    assert subjects == ["Moonfall Harbor", "Zorblat Quenchwater", "Harbor", ""]  # "lighthouse" is a common noun here
    with_subjects = chunk_relevance(q, texts, subjects).scores
    assert without[1] < min(without[2], without[3])  # on words alone the bridge paragraph loses to both distractors
    assert with_subjects[1] > with_subjects[3] and with_subjects[1] > without[1] + 0.5


@pytest.mark.parametrize(
    "text",
    [
        'Strasbourg ( , ] ; Alsatian: "Strossburi"; German: "Straßburg" ] ) is the capital of Grand Est.',
        'The 122nd Hydroplane Liaison Squadron ("Serbo-Croatian: "122. eskadrila") was a unit.',
        "Crime and Punishment (Russian: Prestupleniye i nakazaniye) is a novel by Dostoyevsky.",
    ],
)
def test_a_gloss_with_an_open_bracket_or_quote_is_not_a_name_prefix(text: str) -> None:
    """``Name: text`` needs a whole name: "Strasbourg (Alsatian:" opens a gloss, it is not a label."""
    assert text_title(text) == ""


def test_a_shortened_name_in_the_top_chunk_links_to_the_full_name_a_chunk_opens_with() -> None:
    """No titles: the top chunk says "Bill Quenchwater", the other chunk opens with the full name;
    the head ("Quenchwater", a proper noun: never written in lower case) carries the second hop."""

    q = "Which office did the governor who hired Robert Zorblat hold before?"
    texts = [
        "Robert Zorblat was governor Bill Quenchwater's intelligence officer from 1997 to 1998.",
        "William Jefferson Quenchwater (born 1946) served as mayor of Riverton before the governorship.",
        "The intelligence officer of a governor prepares estimates.",
        "A mayor holds office for four years in most towns.",
    ]
    subjects, rel = _untitled(q, texts)
    assert subjects[1] == "William Jefferson Quenchwater"
    plain = chunk_relevance(q, texts, subjects).scores
    linked = rel.scores
    assert plain[1] < 0.5 < linked[1]
    assert linked[1] > max(linked[2], linked[3])
    # a real title ("Bill Quenchwater" as metadata) is the name texts use: no head match needed or made
    assert chunk_relevance(q, texts, subjects, common=lowercase_words(texts), subjects=[False] * 4).scores == plain


def _zorblat_novel_request() -> tuple[str, list[str]]:
    q = 'In what year was the novel that Quenchwater based the film "Moonfall" on first published?'
    texts = [
        "In addition to comic books, Quenchwater has also drawn the illustrations and animated sequences of the 2004"
        ' film "Moonfall", which was loosely based on the novel "Harbor of Salt". He lives in Porto.',
        "Harbor of Salt is a novel by the Danish author Ib Marrow, about a ferryman's debts."
        ' It was first published in the weekly "Copenhagen Courier" in monthly parts during 1866.'
        " A single-volume edition followed, and it was translated into nine languages.",
        "Moonfall Bay is a 1990 novel by Anna Lind, first published in Stockholm by Norstedts in the spring of 1990."
        " It was filmed in 1994.",
        "The Glass Orchard is a novel first published in 1936 by the German author Erich Vogt."
        " It was filmed in 1938 and again in 1977.",
        "Moonfall is a 2011 science-fiction film directed by Paul Hart, based on a 1974 story."
        " It was shot in Iceland and released in December 2011.",
        "Salt Harbor Rowing Club is a rowing club founded in 1866 on the Danish coast by four ferrymen.",
    ]
    return q, texts


def test_a_subject_after_an_opening_phrase_carries_the_second_hop() -> None:
    """No titles: the top chunk opens "In addition to ..., Quenchwater has ...". Its subject (named by the
    question) makes it the first hop, and the novel it names (the bridge paragraph) outranks every distractor."""

    q, texts = _zorblat_novel_request()
    subjects, rel = _untitled(q, texts)
    assert subjects[0] == "Quenchwater" and subjects[1] == "Harbor of Salt"
    assert rel.direct[0] == max(rel.direct)  # the question names the subject: the first hop
    assert rel.scores[1] > max(rel.scores[2:])  # the chunk the hub names outranks every distractor


def test_a_hub_naming_its_own_head_links_no_chunk_sharing_it() -> None:
    """No titles: "The 1991 Mr. Zorblat contest ..." says "Zorblat" about itself. Chunks whose subject ends in
    the same head ("The 2010 Ms. Zorblat") gain nothing from it; the hotel the hub names does."""

    q = "Who designed the hotel that held the bodybuilding contest in September 1991?"
    texts = [
        "The 1991 Mr. Zorblat contest was a bodybuilding contest held in September 1991 at the Quenchwater Dolphin Hotel.",
        "The Quenchwater Dolphin is a resort hotel designed by the architect Ada Renn, opened in 1990.",
        "The 2010 Ms. Zorblat was a bodybuilding contest held in Atlanta.",
        "The 1980 Ms. Zorblat contest was held in Philadelphia in October.",
        "The 1975 Mr. Zorblat contest was held in Pretoria in November.",
    ]
    _, rel = _untitled(q, texts)
    assert rel.scores[1] > max(rel.scores[2:])
    _, unlinked = _untitled(q, texts, head_link=0.0)
    assert rel.scores[2:] == unlinked.scores[2:]  # no head link lifts a contest the hub does not mean


@pytest.mark.parametrize(
    "text, aliases",
    [
        (
            "The Democracy Is Strengthened by Casting Light On Spending in Elections Act, commonly known as the"
            " DISCLOSE Act and also known as H.R. 5175, was a bill. It was known as a reform.",
            ["DISCLOSE Act", "H.R. 5175"],
        ),
        ("Onika Tanya Maraj (born December 8, 1982), known professionally as Nicki Minaj, is a rapper.", ["Nicki Minaj"]),
        ('Sergio Pérez (born 1990), also known as "Checo", is a racing driver.', ["Checo"]),
        ("He was known as a good man.", []),
        ("Acme Corp sells lamps. It was later known as Acme Lighting.", []),  # first sentence only
    ],
)
def test_lead_aliases(text: str, aliases: list[str]) -> None:
    assert lead_aliases(text) == aliases


def test_a_name_the_text_gives_after_known_as_is_a_name_the_question_may_use() -> None:
    """No titles: the question names the bill by the short name its paragraph gives after "commonly known as";
    with the alias, that paragraph is the first hop and passes relevance to the sponsor it names."""

    q = "What other position did the person who introduced the QUENCH Act hold?"
    texts = [
        "The Quiet Urban Environment and Noise Control Health Act, commonly known as the QUENCH Act, was a bill"
        " introduced in 2010 by Representative Zorblat Harrow.",
        "Zorblat Harrow (born 1959) is a senator from Maryland, and served as a representative from 2003 to 2017.",
        "The Noise Control Act of 1972 is a statute that established a national policy on noise; it was introduced"
        " by a person who held the position of senator.",
        "The Clean Air Act is a federal law; its 1990 amendments were introduced by a representative.",
    ]
    aliases = [lead_aliases(t) for t in texts]
    assert aliases[0] == ["QUENCH Act"]
    _, plain = _untitled(q, texts)
    _, named = _untitled(q, texts, aliases=aliases)
    assert named.direct[0] == max(named.direct) and plain.direct[0] < plain.direct[2]
    assert named.scores[1] > max(named.scores[2:])
