"""The smoke run: crash the sample app and push that incident through the whole loop.

ingest → crash the sample app → run the graph to the review point → print the RCA and its
evidence → approve through the same resume path the API uses → print the final state.
Exits non-zero on any unmet expectation.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path
from typing import Any

from app.core.config import Settings, get_settings
from app.runtime import open_runtime
from app.sample_app import crash_checkout
from app.schemas import DecisionCreate, IncidentCreate, IncidentPublic

EXPECTED_TOP_CODE = "CO-500"


def print_rca(rca: dict[str, Any]) -> None:
    """A readable rendering of an RCA draft."""
    print(f"RCA ({rca['outcome']}, confidence {rca['confidence']}):")
    print(f"  {rca['summary']}")
    for rank, hypothesis in enumerate(rca.get("hypotheses", []), start=1):
        print(f"  H{rank} [{hypothesis['confidence']}] {hypothesis['statement']}")
        for claim in hypothesis.get("claims", []):
            ids = ", ".join(c["id"] for c in claim.get("evidence", [])) or "no evidence"
            print(f"     - {claim['text']}  [{ids}]")
    for step in rca.get("remediation", []):
        print(f"  remediation: {step}")
    for step in rca.get("next_checks", []):
        print(f"  check: {step}")
    print(f"  provenance: {json.dumps(rca.get('provenance', {}))}")


def print_analysis(created: IncidentPublic) -> None:
    """The incident's ranked error docs and its RCA (``rca smoke`` and ``rca analyze``)."""
    for rank, doc in enumerate(created.similar_error_docs, start=1):
        code = doc.metadata.get("error_code")
        print(f"  {rank}. {code:<20} similarity={doc.similarity:.3f} {doc.id}")
    if created.rca:
        print_rca(created.rca)


async def smoke(settings: Settings) -> list[str]:
    """Run the loop; return the unmet expectations (empty when all is well)."""
    failures: list[str] = []
    async with open_runtime(settings) as runtime:
        print(runtime.knowledge.report.headline())
        incident = crash_checkout()
        print(f"incident: {incident['error_code']} {incident['event']}: {incident['message']}")
        created = await runtime.incidents.create(IncidentCreate(**incident))
        print(f"status: {created.status.value}")
        print_analysis(created)
        print(f"dropped evidence ids: {created.dropped_evidence_ids or 'none'}")
        top = (
            created.similar_error_docs[0].metadata.get("error_code")
            if created.similar_error_docs
            else None
        )
        if top != EXPECTED_TOP_CODE:
            failures.append(f"top doc is {top}, expected {EXPECTED_TOP_CODE}")
        if created.dropped_evidence_ids:
            failures.append(
                f"the extractive RCA cited unsupplied ids {created.dropped_evidence_ids}"
            )
        if created.status.value != "awaiting_review":
            failures.append(f"status after analysis is {created.status.value}")
        decided = await runtime.incidents.decide(
            created.id,
            DecisionCreate(action="approve", reviewer="smoke", comment="smoke run"),
            actor="smoke",
        )
        reviewer = (decided.decision or {}).get("reviewer")
        print(f"final status: {decided.status.value} (decided by {reviewer})")
        if decided.status.value != "approved":
            failures.append(f"final status is {decided.status.value}, expected approved")
    return failures


def run_smoke(state_dir: Path | None = None) -> int:
    """Entry point of ``rca smoke``; a private state dir unless one is given."""
    with tempfile.TemporaryDirectory(prefix="rca-smoke-") as tmp:
        settings = get_settings().model_copy(update={"state_dir": state_dir or Path(tmp)})
        failures = asyncio.run(smoke(settings))
    for failure in failures:
        print(f"FAIL: {failure}")
    if not failures:
        print(f"OK: top doc {EXPECTED_TOP_CODE}, no dropped ids, approved")
    return 1 if failures else 0
