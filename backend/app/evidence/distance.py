"""How far apart two spellings are: one typo is one edit.

Used to read what a person meant: a query word the knowledge base spells otherwise
(``app.rag.spelling``) and a ``service`` field typed by hand (``app.evidence.services``).
"""

from __future__ import annotations


def edit_distance(a: str, b: str, limit: int) -> int:
    """Optimal string alignment distance of ``a`` and ``b``, or ``limit + 1`` once above it.

    Insertions, deletions, substitutions and swaps of two neighbouring letters cost one each.
    """
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    before: list[int] | None = None
    previous = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        current = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            current[j] = min(
                previous[j] + 1,
                current[j - 1] + 1,
                previous[j - 1] + (a[i - 1] != b[j - 1]),
            )
            if before is not None and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                current[j] = min(current[j], before[j - 2] + 1)
        if min(current) > limit:
            return limit + 1
        before, previous = previous, current
    return previous[-1]
