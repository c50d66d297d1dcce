"""The incident evaluation: arithmetic on a scripted analyzer, thresholds, one real run."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from langgraph.types import Interrupt
from tests.fakes import StaticRetriever

from app.cli import main
from app.core.errors import ConfigurationError
from app.evaluation.cases import Analysis, IncidentCase, hypothesis_codes, load_cases
from app.evaluation.grounding import evaluate_with_grounding
from app.evaluation.incidents import (
    DenseFloorAnalyzer,
    evaluate_incidents,
    format_report,
    unmet_thresholds,
)
from app.evaluation.product import analysis_from_state
from app.evaluation.scoring import ABSTAINED
from app.rag.retrieve import RankedDoc


def hypothesis(
    code: str, cites: tuple[str, ...] = (), flags: tuple[str, ...] = ()
) -> dict[str, Any]:
    claim = {"text": "t", "evidence": [{"id": i} for i in ("error-doc-x", *cites)]}
    return {"error_code": code, "claims": [claim], "flags": list(flags)}


def analysis(
    answer: list[str],
    abstained: bool = False,
    *,
    retrieval: list[str] | None = None,
    gated: bool | None = None,
    band: str = "medium",
    cites: tuple[str, ...] = (),
    diagnosis: dict[str, Any] | None = None,
) -> Analysis:
    """The product answers ``answer``; retrieval ranked ``retrieval`` (the same by default)."""
    hypotheses = [hypothesis(c, cites if i == 0 else ()) for i, c in enumerate(answer)]
    ranked = answer if retrieval is None else retrieval
    return Analysis(
        answer=answer,
        abstained=abstained,
        rca={"hypotheses": hypotheses, "confidence": band},
        retrieval=[(c, 0.9 - 0.1 * i) for i, c in enumerate(ranked)],
        retrieval_abstained=abstained if gated is None else gated,
        diagnosis=diagnosis,
    )


SCRIPT: dict[str, Analysis] = {
    # expected A, answered A first (retrieval had B first): the product is right.
    "m1": analysis(["A", "B", "C"], retrieval=["B", "A"], band="high", cites=("incident:log:2",)),
    "m2": analysis(["A", "B", "C"], band="high"),  # expected B: rank 2, wrong and banded high
    "m3": analysis(["A", "B", "D", "E", "C"]),  # expected C: rank 5
    # expected D but abstained (retrieval's gate let it through with D first)
    "m4": analysis(["D", "A"], True, gated=False, band="insufficient"),
    "m5": analysis(["A"], True, band="insufficient"),  # out of domain, abstained: right
    "m6": analysis(["A"], False, band="low"),  # out of domain, answered: wrong
    "m7": analysis([], False, band="low"),  # expected A, no hypothesis
}
CASES = [
    IncidentCase("c1", {"message": "m1"}, "A", "exact", "incident:log:2"),
    IncidentCase("c2", {"message": "m2"}, "B", "exact", "incident:log:1"),
    IncidentCase("c3", {"message": "m3"}, "C", "typo", "incident:stack:4"),
    IncidentCase("c4", {"message": "m4"}, "D", "typo", "incident:log:3"),
    IncidentCase("c5", {"message": "m5"}, None, "out_of_domain"),
    IncidentCase("c6", {"message": "m6"}, None, "out_of_domain", "incident:log:1"),
    IncidentCase("c7", {"message": "m7"}, "A", "typo"),
]


def scripted(incident: Mapping[str, Any]) -> Analysis:
    return SCRIPT[incident["message"]]


def test_top_level_figures_score_the_products_answer() -> None:
    report = evaluate_incidents(CASES, scripted)
    # In domain: c1 c2 c3 c4 c7. Answer ranks 1, 2, 5, abstained, none.
    assert report["hit@1"] == pytest.approx(1 / 5)
    assert report["hit@3"] == pytest.approx(2 / 5)
    assert report["hit@5"] == pytest.approx(3 / 5)
    assert report["mrr"] == pytest.approx((1 + 1 / 2 + 1 / 5) / 5)
    # Abstaining is positive: TP c5, FP c4, FN c6.
    assert report["abstain_precision"] == pytest.approx(0.5)
    assert report["abstain_recall"] == pytest.approx(0.5)
    assert report["abstain_f1"] == pytest.approx(0.5)
    assert report["counts"] == {"n": 7, "in_domain": 5, "out_of_domain": 2}
    first = report["cases"][0]
    assert first["got"] == "A" and first["rank"] == 1 and first["retrieval"]["rank"] == 2
    assert report["cases"][3]["got"] == ABSTAINED and report["cases"][3]["abstained"] is True


def test_retrieval_figures_sit_under_retrieval() -> None:
    retrieval = evaluate_incidents(CASES, scripted)["retrieval"]
    # Retrieval ranks: c1 2, c2 2, c3 5, c4 1 (not gated), c7 none.
    assert retrieval["hit@1"] == pytest.approx(1 / 5)
    assert retrieval["hit@3"] == pytest.approx(3 / 5)
    assert retrieval["mrr"] == pytest.approx((1 / 2 + 1 / 2 + 1 / 5 + 1) / 5)
    # The gate abstained on c5 only: TP c5, FN c6, no FP.
    assert retrieval["abstain_precision"] == 1.0 and retrieval["abstain_recall"] == 0.5
    assert retrieval["ignoring_abstain"]["hit@1"] == pytest.approx(1 / 5)
    assert "ignoring_abstain" not in evaluate_incidents(CASES, scripted)


def test_log_citation_counts_answered_cases_citing_their_decisive_line() -> None:
    report = evaluate_incidents(CASES, scripted)
    # Decisive log lines in domain: c1 (cited), c2 (not cited), c4 (abstained). c6 is out of
    # domain and does not count.
    assert report["log_citation_rate"] == pytest.approx(1 / 3)
    assert report["stack_citation_rate"] == 0.0  # c3 cites no stack line
    cited = {c["id"]: c["cited_decisive"] for c in report["cases"]}
    assert cited == {
        "c1": True,
        "c2": False,
        "c3": False,
        "c4": False,
        "c5": None,
        "c6": None,
        "c7": None,
    }


def test_band_per_outcome_table() -> None:
    bands = evaluate_incidents(CASES, scripted)["band_by_outcome"]
    assert bands == {
        "correct": {"high": 1, "medium": 0, "low": 0, "insufficient": 0},
        "wrong": {"high": 1, "medium": 1, "low": 2, "insufficient": 0},
        "abstained": {"high": 0, "medium": 0, "low": 0, "insufficient": 2},
    }


def test_false_confidence_counts_every_high_band_that_is_not_a_correct_answer() -> None:
    wrong_ood = dict(SCRIPT, m6=analysis(["A"], False, band="high"))
    report = evaluate_with_grounding(CASES, lambda incident: wrong_ood[incident["message"]])
    # c2 (wrong family) and c6 (answered out of domain), both high, of 7 cases.
    assert report["false_confidence_rate"] == pytest.approx(2 / 7)
    assert report["high_band_coverage"] == 1.0  # c1, the only correct answer, is high
    assert report["by_category"]["out_of_domain"]["false_confident"] == 1


def test_contradiction_flags_and_a_missing_diagnosis() -> None:
    assert evaluate_incidents(CASES, scripted)["contradictions"] == {
        "flags": 0,
        "cases_flagged": 0,
        "first_hypothesis_flagged": 0,
        "by_kind": {},
        "diagnosed_cases": 0,
        "contradicted_candidates": 0,
    }
    flagged = analysis(
        ["A", "B"],
        diagnosis={
            "candidates": [
                {"error_code": "A", "contradicted": []},
                {
                    "error_code": "B",
                    "contradicted": [{"signal": "service", "evidence": "incident:service"}],
                },
            ]
        },
    )
    flagged.rca["flags"] = [{"kind": "no_incident_evidence"}]
    flagged.rca["hypotheses"][1]["flags"] = ["contradicted_by_diagnosis"]
    counts = evaluate_incidents(CASES[:1], lambda _: flagged)["contradictions"]
    assert counts["flags"] == 2 and counts["cases_flagged"] == 1
    assert counts["first_hypothesis_flagged"] == 0
    assert counts["by_kind"] == {"contradicted_by_diagnosis": 1, "no_incident_evidence": 1}
    assert counts["diagnosed_cases"] == 1 and counts["contradicted_candidates"] == 1


def test_by_category_and_undefined_metrics() -> None:
    by = evaluate_incidents(CASES, scripted)["by_category"]
    assert set(by) == {"exact", "typo", "out_of_domain"}
    assert by["exact"]["hit@1"] == 0.5 and by["exact"]["mrr"] == 0.75
    assert by["exact"]["retrieval_hit@1"] == 0.0 and by["exact"]["log_citation_rate"] == 0.5
    # Nothing abstained and nothing should: precision, recall and F1 are undefined.
    assert by["exact"]["abstain_precision"] is None
    assert by["exact"]["abstain_recall"] is None
    assert by["exact"]["abstain_f1"] is None
    assert by["typo"]["hit@3"] == 0.0 and by["typo"]["hit@5"] == pytest.approx(1 / 3)
    assert by["typo"]["mrr"] == pytest.approx(0.2 / 3)
    assert by["typo"]["abstain_precision"] == 0.0 and by["typo"]["abstain_f1"] == 0.0
    assert by["out_of_domain"]["hit@1"] is None and by["out_of_domain"]["mrr"] is None
    assert by["out_of_domain"]["log_citation_rate"] is None
    assert by["out_of_domain"]["abstain_precision"] == 1.0
    assert by["out_of_domain"]["abstain_recall"] == 0.5
    assert by["out_of_domain"]["abstain_f1"] == pytest.approx(2 / 3)


def test_misses_list_every_wrong_case_with_its_answer_and_retrieval() -> None:
    report = evaluate_incidents(CASES, scripted)
    misses = {m["id"]: m for m in report["misses"]}
    assert set(misses) == {"c2", "c3", "c4", "c6", "c7"}
    assert misses["c3"]["got"] == "A" and misses["c3"]["hypotheses"] == ["A", "B", "D"]
    assert [code for code, _ in misses["c3"]["top3"]] == ["A", "B", "D"]
    assert misses["c4"]["got"] == ABSTAINED and misses["c4"]["band"] == "insufficient"
    assert misses["c6"]["expected"] is None and misses["c6"]["got"] == "A"
    assert misses["c7"]["got"] is None and misses["c7"]["top3"] == []
    assert [c["id"] for c in report["cases"]] == [c.id for c in CASES]
    text = format_report(report)
    assert "misses: 5" in text and "c4" in text and "out_of_domain" in text
    assert "band per outcome" in text and "retrieval alone" in text


def test_thresholds() -> None:
    report = evaluate_incidents(CASES, scripted)
    assert unmet_thresholds(report) == []
    assert unmet_thresholds(report, min_hit1=0.2, min_mrr=0.339, min_abstain_f1=0.5) == []
    failures = unmet_thresholds(report, min_hit1=0.21, min_mrr=0.35, min_abstain_f1=0.5)
    assert [f.split()[0] for f in failures] == ["hit@1", "mrr"]
    assert unmet_thresholds(report, min_log_citation=0.34) == ["log_citation_rate 0.333 < 0.340"]
    confident = {**report, "false_confidence_rate": 0.03}
    assert unmet_thresholds(confident, max_false_confidence=0.03) == []
    assert unmet_thresholds(confident, max_false_confidence=0.02) == [
        "false_confidence_rate 0.030 > 0.020"
    ]
    undefined = {**report, "abstain_f1": None}
    assert unmet_thresholds(undefined, min_abstain_f1=0.0) == ["abstain_f1 undefined < 0.000"]
    with pytest.raises(TypeError, match="min_hit5"):
        unmet_thresholds(report, min_hit5=0.1)


def review_state(**extra: Any) -> dict[str, Any]:
    rca = {
        "outcome": "analysis",
        "confidence": "medium",
        "hypotheses": [
            hypothesis("PAY-408"),
            {"error_code": None},
            hypothesis("PAY-408"),
            hypothesis("CO-500"),
        ],
    }
    docs = [
        {"metadata": {"error_code": "CO-500"}, "similarity": 0.7},
        {"metadata": {"error_code": "PAY-408"}, "similarity": 0.6},
        {"metadata": {"error_code": "CO-500"}, "similarity": 0.5},
    ]
    payload = {"rca": rca, "similar_error_docs": docs, "dropped_evidence_ids": ["x"]}
    return {"low_confidence": False, "__interrupt__": (Interrupt(value=payload),), **extra}


def test_the_product_answer_is_read_from_the_state_not_the_retrieval_rank() -> None:
    got = analysis_from_state(review_state(), retrieval_abstained=False)
    assert list(got.answer) == ["PAY-408", "CO-500"]
    assert list(got.retrieval) == [("CO-500", 0.7), ("PAY-408", 0.6)]
    assert not got.abstained and got.diagnosis is None
    assert got.rca["dropped_evidence_ids"] == ["x"]
    # The final decision is the state's (e.g. the diagnosis overruling the retrieval gate).
    overruled = analysis_from_state(
        review_state(low_confidence=True, diagnosis={"candidates": []}), retrieval_abstained=False
    )
    assert overruled.abstained and not overruled.retrieval_abstained
    assert overruled.diagnosis == {"candidates": []}
    state = review_state()
    state["__interrupt__"][0].value["rca"]["outcome"] = "insufficient_evidence"
    assert analysis_from_state(state, retrieval_abstained=False).abstained
    assert hypothesis_codes({}) == []


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
    got = DenseFloorAnalyzer(retriever, floor=0.6)(incident)
    assert list(got.retrieval) == [("PAY-408", 0.62), ("CO-500", 0.50)]
    assert list(got.answer) == ["PAY-408", "CO-500"]
    assert not got.abstained and not got.retrieval_abstained
    assert retriever.queries == ["PAY-408 payment_timeout slow"]
    assert got.rca["doc_ids"] == ["x1", "x2", "x3"]
    assert DenseFloorAnalyzer(retriever, floor=0.7)(incident).abstained
    empty = DenseFloorAnalyzer(StaticRetriever([]))(incident)
    assert empty.abstained and list(empty.answer) == [] and empty.rca["top_similarity"] == 0.0


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
        (
            {
                "id": "a",
                "incident": {"message": "m", "logs": ["x"]},
                "expected_error_code": "A",
                "decisive_evidence": "log:1",
            },
            "decisive_evidence",
        ),
        (
            {
                "id": "a",
                "incident": {"message": "m", "logs": ["x"]},
                "expected_error_code": "A",
                "decisive_evidence": "incident:log:2",
            },
            "past the incident",
        ),
        (
            {
                "id": "a",
                "incident": {"message": "m"},
                "expected_error_code": "A",
                "decisive_evidence": "incident:stack:0",
            },
            "1-based",
        ),
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
    decisive = {**row, "id": "b", "incident": {"message": "m", "stack_trace": "a\nb"}}
    cases = load_cases(
        write_cases(
            tmp_path / "f.jsonl", [row, decisive | {"decisive_evidence": "incident:stack:2"}]
        )
    )
    assert cases[0].category == "uncategorised" and cases[0].decisive_evidence is None
    assert cases[1].decisive_evidence == "incident:stack:2"


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
        "incident": {
            "message": "payments failing",
            "logs": [
                "checkout INFO GET /healthz 200",
                "payment-client ERROR ReadTimeout: provider did not answer within 10s, HTTP 408",
            ],
        },
        "expected_error_code": "PAY-408",
        "category": "logs_decide",
        "decisive_evidence": "incident:log:2",
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
    expected_keys |= {"abstain_f1", "false_confidence_rate", "log_citation_rate", "retrieval"}
    assert expected_keys | {"band_by_outcome", "contradictions", "cases", "by_category"} <= set(
        report
    )
    assert {"hit@1", "mrr", "abstain_f1", "ignoring_abstain"} <= set(report["retrieval"])
    first = report["cases"][0]
    assert first["id"] == "case-901" and first["got"] == "CO-500" and first["rank"] == 1
    assert first["hypotheses"][0] == "CO-500" and first["band"] in {"high", "medium", "low"}
    assert report["cases"][1]["decisive_evidence"] == "incident:log:2"
    assert isinstance(report["cases"][1]["cited_decisive"], bool)
    assert report["counts"] == {"n": 3, "in_domain": 2, "out_of_domain": 1}
    assert "ALL" in capsys.readouterr().out

    dense = ["eval", "incidents", str(cases), "--analyzer", "dense", "--json", str(out)]
    assert main([*dense, "--min-hit1", "1.01"]) == 1
    assert "FAIL: hit@1" in capsys.readouterr().err
    baseline = json.loads(out.read_text())
    assert baseline["analyzer"]["name"] == "dense+floor"
    assert baseline["cases"][0]["got"] == "CO-500"
