"""The store languages' words read in English, and only a foreign report loses its own words."""

from __future__ import annotations

import re

import pytest

from app.evidence.translation import in_english, is_foreign
from app.rag.query import retrieval_query


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("Die Kasse sagt bei jedem Artikel 'Preis nicht gefunden'", "till item price not found"),
        ("Kortbetalningar går inte igenom, kortterminalen visar fel 502", "card payment not"),
        ("La caisse refuse toutes les ventes : les lignes ne doivent pas être vides", "lines"),
        ("De kassa weigert: 'aantal moet groter dan 0 zijn'", "quantity must greater than 0"),
        ("los pagos con tarjeta no funcionan en ninguna caja", "card payment not working"),
        ("Il frigorifero del negozio non invia la temperatura", "chiller"),
        (
            "plus aucune température des meubles frigorifiques sur le tableau de bord",
            "temperature chiller dashboard",
        ),
        (
            "aplikacja pokazuje „stan nieznany” przy produktach, a rezerwacje są odrzucane",
            "stock unknown reservation",
        ),
        ("Fehlerseite, sobald ein Gutschein im Warenkorb ist", "error discount basket"),
        (
            "siden opdateringen i nat afviser systemet en del salg, og fejlen siger at "
            "varelinjerne mangler",
            "update rejected sale error lines missing",
        ),
        (
            "de retouren lukken niet meer, het aantal is ongeldig zoals bij een retour",
            "return not quantity invalid",
        ),
    ],
)
def test_a_store_language_reads_in_the_docs_words(text: str, words: str) -> None:
    english = in_english(text)
    assert is_foreign(text)
    found = re.findall(r"\w+", english.lower())
    position = 0
    for word in words.split():  # in order, gaps allowed
        assert word in found[position:], (word, english)
        position = found.index(word, position) + 1


@pytest.mark.parametrize(
    "text",
    [
        "the scanner beeps and the price box is empty at till 4",
        "card payments refused at every till since 09:12, terminal shows 502",
        "Kasse 3 down, PLU 503",
        "pos-api 422: lines must not be empty (order 1187, customer return)",
    ],
)
def test_an_english_report_keeps_every_word(text: str) -> None:
    assert not is_foreign(text)
    assert in_english(text).split() == [w if w.lower() != "kasse" else "till" for w in text.split()]


def test_the_retrieval_query_searches_a_foreign_report_in_english() -> None:
    query = retrieval_query(
        {"message": "Die Kasse sagt bei jedem Artikel 'Preis nicht gefunden', Filiale 214"}
    )
    assert "price not found" in query
    assert not {"sagt", "bei", "jedem"} & set(query.split())
