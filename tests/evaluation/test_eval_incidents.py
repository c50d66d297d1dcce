"""The incident evaluation: arithmetic on a scripted analyzer, thresholds, one real run."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from tests.fakes import StaticRetriever

from app.cli import main
from app.core.errors import ConfigurationError
from app.evaluation.incidents import (
    ABSTAINED,
    Analysis,
    DenseFloorAnalyzer,
    IncidentCase,
    evaluate_incidents,
    format_report,
    load_cases,
    unmet_thresholds,
)
from app.rag.retrieve import RankedDoc

# message -> (ranked codes, abstained); scores fall with rank.
SCRIPT: dict[str, tuple[list[str], bool]] = {
    "m1": (["A", "B", "C"], False),  # expected A: rank 1
    "m2": (["A", "B", "C"], False),  # expected B: rank 2
    "m3": (["A", "B", "D", "E", "C"], False),  # expected C: rank 5
    "m4": (["D", "A"], True),  # expected D but abstained: a miss, and a wrong abstention
    "m5": (["A"], True),  # out of domain, abstained: right
    "m6": (["A"], False),  # out of domain, answered: wrong
    "m7": ([], False),  # expected A, nothing ranked
}
CASES = [
    IncidentCase("c1", {"message": "m1"}, "A", "exact"),
    IncidentCase("c2", {"message": "m2"}, "B", "exact"),
    IncidentCase("c3", {"message": "m3"}, "C", "typo"),
    IncidentCase("c4", {"message": "m4"}, "D", "typo"),
    IncidentCase("c5", {"message": "m5"}, None, "out_of_domain"),
    IncidentCase("c6", {"message": "m6"}, None, "out_of_domain"),
    IncidentCase("c7", {"message": "m7"}, "A", "typo"),
]


def scripted(incident: Mapping[str, Any]) -> tuple[list[tuple[str, float]], bool, dict[str, Any]]:
    codes, abstained = SCRIPT[incident["message"]]
    return [(c, 0.9 - 0.1 * i) for i, c in enumerate(codes)], abstained, {}


def test_overall_metrics_are_hand_computed() -> None:
    report = evaluate_incidents(CASES, scripted)
    # In domain: c1 c2 c3 c4 c7. Ranks 1, 2, 5, abstained, none.
    assert report["hit@1"] == pytest.approx(1 / 5)
    assert report["hit@3"] == pytest.approx(2 / 5)
    assert report["hit@5"] == pytest.approx(3 / 5)
    assert report["mrr"] == pytest.approx((1 + 1 / 2 + 1 / 5) / 5)
    # Abstaining is positive: TP c5, FP c4, FN c6.
    assert report["abstain_precision"] == pytest.approx(0.5)
    assert report["abstain_recall"] == pytest.approx(0.5)
    assert report["abstain_f1"] == pytest.approx(0.5)
    assert report["counts"] == {"n": 7, "in_domain": 5, "out_of_domain": 2}
    # The ranking alone: c4 ranked D first before abstaining.
    assert report["ignoring_abstain"] == pytest.approx(
        {"hit@1": 2 / 5, "hit@3": 3 / 5, "hit@5": 4 / 5, "mrr": (1 + 1 / 2 + 1 / 5 + 1) / 5}
    )


def test_by_category_and_undefined_metrics() -> None:
    by = evaluate_incidents(CASES, scripted)["by_category"]
    assert set(by) == {"exact", "typo", "out_of_domain"}
    assert by["exact"]["hit@1"] == 0.5 and by["exact"]["mrr"] == 0.75
    # Nothing abstained and nothing should: precision, recall and F1 are undefined.
    assert by["exact"]["abstain_precision"] is None
    assert by["exact"]["abstain_recall"] is None
    assert by["exact"]["abstain_f1"] is None
    assert by["typo"]["hit@3"] == 0.0 and by["typo"]["hit@5"] == pytest.approx(1 / 3)
    assert by["typo"]["mrr"] == pytest.approx(0.2 / 3)
    assert by["typo"]["abstain_precision"] == 0.0 and by["typo"]["abstain_f1"] == 0.0
    assert by["out_of_domain"]["hit@1"] is None and by["out_of_domain"]["mrr"] is None
    assert by["out_of_domain"]["abstain_precision"] == 1.0
    assert by["out_of_domain"]["abstain_recall"] == 0.5
    assert by["out_of_domain"]["abstain_f1"] == pytest.approx(2 / 3)


def test_misses_list_every_wrong_case_with_its_top_three() -> None:
    report = evaluate_incidents(CASES, scripted)
    misses = {m["id"]: m for m in report["misses"]}
    assert set(misses) == {"c2", "c3", "c4", "c6", "c7"}
    assert misses["c3"]["got"] == "A"
    assert [code for code, _ in misses["c3"]["top3"]] == ["A", "B", "D"]
    assert misses["c4"]["got"] == ABSTAINED
    assert misses["c6"]["expected"] is None and misses["c6"]["got"] == "A"
    assert misses["c7"]["got"] is None and misses["c7"]["top3"] == []
    assert [c["id"] for c in report["cases"]] == [c.id for c in CASES]
    text = format_report(report)
    assert "misses: 5" in text and "c4" in text and "out_of_domain" in text


def test_thresholds() -> None:
    report = evaluate_incidents(CASES, scripted)
    assert unmet_thresholds(report) == []
    assert unmet_thresholds(report, min_hit1=0.2, min_mrr=0.339, min_abstain_f1=0.5) == []
    failures = unmet_thresholds(report, min_hit1=0.21, min_mrr=0.35, min_abstain_f1=0.5)
    assert [f.split()[0] for f in failures] == ["hit@1", "mrr"]
    undefined = {**report, "abstain_f1": None}
    assert unmet_thresholds(undefined, min_abstain_f1=0.0) == ["abstain_f1 undefined < 0.000"]


def doc(doc_id: str, code: str, similarity: float) -> RankedDoc:
    return RankedDoc(doc_id, "text", {"error_code": code}, "kb", dense_score=similarity)


def test_dense_floor_analyzer_dedupes_families_and_abstains_below_the_floor() -> None:
    docs = [
        doc("x1", "PAY-408", 0.62),
        doc("x2", "PAY-408", 0.60),
        doc("x3", "CO-500", 0.50),
    ]
    retriever = StaticRetriever(docs)
    incident = {"error_code": "PAY-408", "event": "payment_timeout", "message": "slow", "logs": []}
    ranked, abstained, rca = DenseFloorAnalyzer(retriever, floor=0.6)(incident)
    assert ranked == [("PAY-408", 0.62), ("CO-500", 0.50)]
    assert not abstained
    assert retriever.queries == ["PAY-408 payment_timeout slow"]
    assert rca["doc_ids"] == ["x1", "x2", "x3"]
    assert DenseFloorAnalyzer(retriever, floor=0.7)(incident).abstained
    assert DenseFloorAnalyzer(StaticRetriever([]))(incident) == Analysis(
        [],
        True,
        rca | {"query": "PAY-408 payment_timeout slow", "top_similarity": 0.0, "doc_ids": []},
    )


def test_a_low_confidence_retrieval_abstains() -> None:
    docs = [doc("x1", "CO-500", 0.9)]
    analyzer = DenseFloorAnalyzer(StaticRetriever(docs, low_confidence=True), floor=0.1)
    assert analyzer({"message": "m"}).abstained


def write_cases(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("row", "error"),
    [
        ({"incident": {"message": "m"}, "expected_error_code": None}, "'id'"),
        ({"id": "a", "incident": {"message": " "}, "expected_error_code": None}, "'incident'"),
        ({"id": "a", "incident": {"message": "m"}}, "expected_error_code"),
        ({"id": "a", "incident": {"message": "m"}, "expected_error_code": 3}, "expected"),
    ],
)
def test_malformed_cases_name_the_line(tmp_path: Path, row: dict[str, Any], error: str) -> None:
    good = {"id": "ok", "incident": {"message": "m"}, "expected_error_code": "A"}
    path = write_cases(tmp_path / "c.jsonl", [good, row])
    with pytest.raises(ConfigurationError, match=rf"c\.jsonl:2: .*{error}"):
        load_cases(path)


def test_duplicate_ids_and_empty_files_are_refused(tmp_path: Path) -> None:
    row = {"id": "a", "incident": {"message": "m"}, "expected_error_code": None}
    with pytest.raises(ConfigurationError, match="duplicate"):
        load_cases(write_cases(tmp_path / "d.jsonl", [row, row]))
    with pytest.raises(ConfigurationError, match="no cases"):
        load_cases(write_cases(tmp_path / "e.jsonl", []))
    cases = load_cases(write_cases(tmp_path / "f.jsonl", [row]))
    assert cases[0].category == "uncategorised"


INLINE_CASES = [
    {
        "id": "case-901",
        "incident": {
            "error_code": "CO-500",
            "event": "checkout_failed",
            "message": "ZeroDivisionError: division by zero in apply_discount",
            "service": "checkout",
        },
        "expected_error_code": "CO-500",
        "category": "exact",
    },
    {
        "id": "case-902",
        "incident": {"message": "payment provider read timeout, HTTP 408 after retries"},
        "expected_error_code": "PAY-408",
        "category": "paraphrase",
    },
    {
        "id": "case-903",
        "incident": {"message": "Guest Wi-Fi captive portal does not load the splash page"},
        "expected_error_code": None,
        "category": "out_of_domain",
    },
]


def test_real_run_through_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", INLINE_CASES)
    out = tmp_path / "out" / "report.json"
    assert main(["eval", "incidents", str(cases), "--json", str(out), "--min-hit1", "0.5"]) == 0
    report = json.loads(out.read_text())
    expected_keys = {"hit@1", "hit@3", "hit@5", "mrr", "abstain_precision", "abstain_recall"}
    assert expected_keys | {"abstain_f1", "cases", "by_category", "misses"} <= set(report)
    first = report["cases"][0]
    assert first["id"] == "case-901" and first["got"] == "CO-500" and first["rank"] == 1
    assert report["counts"] == {"n": 3, "in_domain": 2, "out_of_domain": 1}
    assert "ALL" in capsys.readouterr().out

    dense = ["eval", "incidents", str(cases), "--analyzer", "dense", "--json", str(out)]
    assert main([*dense, "--min-hit1", "1.01"]) == 1
    assert "FAIL: hit@1" in capsys.readouterr().err
    baseline = json.loads(out.read_text())
    assert baseline["analyzer"]["name"] == "dense+floor"
    assert baseline["cases"][0]["got"] == "CO-500"
