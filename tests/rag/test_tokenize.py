import pytest

from app.rag.tokenize import canonical_code, find_codes, tokenize


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("POS-503-PLU", "pos-503-plu"),
        ("pos-503-plu in stores 12 and 19", "pos-503-plu"),
        ("POS503PLU", "pos-503-plu"),
        ("pos_422_lines after client release", "pos-422-lines"),
        ("POS422QTY rejects from till 7", "pos-422-qty"),
        ("PAY-408", "pay-408"),
        ("PAY408 alerts from checkout", "pay-408"),
        ("co500 spike after the promo launch", "co-500"),
        ("CH 502 paging again", "ch-502"),
    ],
)
def test_codes_typed_differently_yield_the_canonical_token(text: str, code: str) -> None:
    assert code in find_codes(text)
    assert code in tokenize(text)


@pytest.mark.parametrize(("text", "code"), [("pos 503 plu", "pos-503-plu"), ("pay 408", "pay-408")])
def test_prose_like_codes_are_found_for_lookup_but_tokenised_as_words(text: str, code: str) -> None:
    assert code in find_codes(text)
    tokens = tokenize(text)
    assert code not in tokens and set(code.split("-")) <= set(tokens)


@pytest.mark.parametrize(
    "text", ["since 1979", "patients taking 400 mg daily", "pid-28601 exited", "ca-98-d-5-u-0"]
)
def test_prose_and_log_values_make_no_code_tokens(text: str) -> None:
    assert find_codes(text, strict=True) == []
    assert not any("-" in token for token in tokenize(text))


def test_hex_values_and_ids_stay_whole_and_single_characters_go() -> None:
    tokens = tokenize("mask 0x14000000 for blk_38865049064139660 on node 7")
    assert "0x14000000" in tokens and "14000000" not in tokens
    assert "38865049064139660" in tokens and "7" not in tokens
    assert "TDP-43".lower() in tokenize("TDP-43 aggregates")


def test_code_is_kept_whole_and_in_parts() -> None:
    tokens = tokenize("POS-503-PLU")
    assert tokens[:2] == ["pos-503-plu", "pos-503"]
    assert {"pos", "503", "plu"} <= set(tokens)


def test_canonical_code_of_metadata() -> None:
    assert canonical_code("POS-503-PLU") == "pos-503-plu"
    assert canonical_code("PAY408") == "pay-408"
    assert canonical_code("pos_422_qty") == "pos-422-qty"


def test_words_are_stemmed_and_stop_words_dropped() -> None:
    tokens = tokenize("The payments are timing out for the stores")
    assert "the" not in tokens and "are" not in tokens
    assert {"payment", "store"} <= set(tokens)


def test_identifiers_are_kept_whole_and_split() -> None:
    tokens = tokenize("ZeroDivisionError in apply_discount; PluLookupException")
    assert {"zerodivisionerror", "zero", "apply_discount", "discount"} <= set(tokens)
    assert {"plulookupexception", "plu", "lookup"} <= set(tokens)


def test_plain_prose_has_no_codes() -> None:
    assert find_codes("LDAP bind failures on the VPN concentrator") == []
    assert tokenize("") == []
