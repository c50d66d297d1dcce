"""Spelling repair: which words it repairs, and the many it must leave alone."""

from __future__ import annotations

import pytest

from app.evidence.distance import edit_distance
from app.rag.embedding import TOKENIZER_PATH
from app.rag.spelling import (
    Lexicon,
    closest_word,
    is_known_word,
    model_words,
    repair_spelling,
    word_counts,
)

KNOWN = Lexicon(
    word_counts(
        [
            "Inventory service unavailable: stock lookups failing with 503. The inventory service "
            "is healthy again after a restart. Card payment gateway returns 502 at the till.",
            "Sale lines empty or malformed; the sale is rejected. Check the gateway.",
        ]
    )
)


@pytest.fixture(scope="module")
def common() -> frozenset[str]:
    return model_words(TOKENIZER_PATH)


@pytest.mark.parametrize(
    ("a", "b", "limit", "expected"),
    [
        ("inventory", "inventory", 2, 0),
        ("invetnory", "inventory", 2, 1),  # neighbours swapped: one edit
        ("servce", "service", 1, 1),
        ("gatewya", "gateway", 2, 1),
        ("faling", "failing", 1, 1),
        ("config", "confirm", 1, 2),  # above the limit: limit + 1
        ("abc", "abcdef", 2, 3),
    ],
)
def test_edit_distance(a: str, b: str, limit: int, expected: int) -> None:
    assert edit_distance(a, b, limit) == expected


def test_model_words_are_whole_words_only(common: frozenset[str]) -> None:
    assert {"cart", "crawling", "healthy", "step"} <= common
    assert not any(word.startswith("#") for word in common)
    assert "invetnory" not in common


def test_typos_are_repaired_against_the_knowledge_words(common: frozenset[str]) -> None:
    repair = repair_spelling("invetnory servce unavalable 503, stok lookups faling.", KNOWN, common)
    assert repair is not None
    assert repair.text == "inventory service unavailable 503, stock lookups failing."
    assert repair.changes == [
        ("invetnory", "inventory"),
        ("servce", "service"),
        ("unavalable", "unavailable"),
        ("stok", "stock"),
        ("faling", "failing"),
    ]


def test_capitalised_words_are_repaired_too(common: frozenset[str]) -> None:
    repair = repair_spelling("Gatway down", KNOWN, common)
    assert repair is not None and repair.text == "gateway down"


@pytest.mark.parametrize(
    "query",
    [
        "inventory service unavailable",  # already knowledge-base words
        "cart crawling step",  # real words the knowledge base does not use
        "SaleLine rejected",  # CamelCase identifier
        "GATWAY down",  # all capitals: an acronym or a constant
        "https://cardgw.internal/v3/authorize failed",  # part of a host name
        "KeyError temperature_c",  # part of a snake_case name
        "api-gatway 502",  # glued to another word by a hyphen
        "unhealthy",  # 2 edits from 'healthy', but the first letter differs
        "tll eror",  # 'tll' has 3 letters: too short to judge
        "zzzzzz qqqq",  # nothing close
    ],
)
def test_words_that_must_stay_as_typed(query: str, common: frozenset[str]) -> None:
    repair = repair_spelling(query, KNOWN, common)
    assert repair is None or all(typed == "eror" for typed, _ in repair.changes), repair


def test_closest_word_prefers_fewer_edits_then_frequency() -> None:
    assert (
        closest_word("calcuation", Lexicon({"calculation": 1, "calculations": 9})) == "calculation"
    )
    assert closest_word("sale", Lexicon({"sales": 1, "scale": 9, "sole": 3})) == "scale"


def test_closest_word_keeps_the_first_letter() -> None:
    assert closest_word("unhealthy", Lexicon({"healthy": 1})) is None
    assert closest_word("nhealthy", Lexicon({"healthy": 1})) is None
    assert closest_word("healhty", Lexicon({"healthy": 1})) == "healthy"


def test_the_lexicon_reads_only_words_a_repair_could_become() -> None:
    lexicon = Lexicon({"gateway": 3, "gate": 1, "getaway": 2, "sale": 1})
    near = {word for word, _ in lexicon.near("gatway", 1)}
    assert near == {"gateway", "getaway"}  # same first letter, length 5 to 7; "gate" is 4
    assert "gate" in lexicon and len(lexicon) == 4 and lexicon["gateway"] == 3


FORMS = Lexicon(
    word_counts(["The bullies were seen at the till; sale lines hold a discount and a quantity."])
)


@pytest.mark.parametrize(
    "word",
    [
        "harming",  # the vocabulary's "harm" with an ending (not "having")
        "uncultured",  # a prefix in front of a vocabulary word (not "unruptured")
        "remolding",  # "re" + "molding"
        "bullied",  # the same stem as the knowledge base's "bullies"
        "executor",  # a known stem with a derivational suffix (not "execution")
        "handover",  # two vocabulary words run together (not "handler")
    ],
)
def test_other_forms_of_real_words_are_not_typos(word: str, common: frozenset[str]) -> None:
    assert is_known_word(word, FORMS, common)
    assert repair_spelling(f"{word} cells", FORMS, common) is None


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        ("tils", "till"),  # its stem "til" is a vocabulary word, but too short to trust
        ("lins", "lines"),
        ("discont", "discount"),  # the stem of "discontent", but no ending was removed
        ("quanity", "quantity"),  # "quan" + "ity": too little left to be a root
    ],
)
def test_typos_that_look_like_forms_are_still_repaired(
    typed: str, meant: str, common: frozenset[str]
) -> None:
    assert not is_known_word(typed, FORMS, common)
    repair = repair_spelling(f"{typed} wrong", FORMS, common)
    assert repair is not None and repair.changes == [(typed, meant)]
