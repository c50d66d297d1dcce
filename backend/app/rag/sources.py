"""Knowledge sources: which files feed the knowledge base, read into chunks.

A source is a folder or a single file:

* a folder (``RCA_KNOWLEDGE_DIR``, default ``data/knowledge/``) contributes every ``*.txt`` file
  as error docs (entries split on ``---``, see ``app.rag.ingest``) and every ``*.md`` file as a
  runbook (split by heading, see ``app.rag.markdown``), searched recursively in path order;
  hidden files and folders and other suffixes are ignored;
* a single file (``RCA_KNOWLEDGE_PATH`` when set explicitly, or ``rca ingest FILE``) contributes
  just itself, by the same suffix rule.

Precedence: an explicit path argument (``rca ingest PATH``), then ``RCA_KNOWLEDGE_PATH`` when it
is set (the backward-compatible single-file override), then ``RCA_KNOWLEDGE_DIR``.

A malformed error-docs entry stops the ingest with ``KnowledgeBaseError`` (the message names the
file, entry and line); an empty file, a duplicate chunk or an error code defined in two files is
a warning. Messages name files relative to the source, never absolute paths.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from app.core.config import Settings
from app.core.errors import KnowledgeBaseError
from app.rag.ingest import KnowledgeChunk, ParsedKnowledge, parse_error_docs
from app.rag.markdown import parse_runbook

logger = logging.getLogger(__name__)

ERROR_DOC_SUFFIX = ".txt"
RUNBOOK_SUFFIX = ".md"
SUFFIXES = (ERROR_DOC_SUFFIX, RUNBOOK_SUFFIX)
DEFAULT_MAX_TOKENS = 256


def approximate_tokens(text: str) -> int:
    """A rough token count (whitespace words x 1.3 + 2) for callers without a model."""
    return int(len(text.split()) * 1.3) + 2


@dataclass
class LoadedSources(ParsedKnowledge):
    """Chunks of every source file, the warnings, and the files read (relative names)."""

    files: list[str] = field(default_factory=list)


def configured_source(settings: Settings, override: Path | None = None) -> Path:
    """The folder or file to ingest, by precedence: ``override``, knowledge path, knowledge dir.

    ``RCA_KNOWLEDGE_PATH`` counts only when it was set explicitly (environment, ``.env`` or a
    constructor argument): its default never hides the folder.

    Args:
        settings: The service settings.
        override: A path given on the command line, if any (file or folder).

    Returns:
        The path to read.
    """
    if override is not None:
        return override
    if "knowledge_path" in settings.model_fields_set:
        if "knowledge_dir" in settings.model_fields_set:
            logger.warning(
                "both RCA_KNOWLEDGE_PATH and RCA_KNOWLEDGE_DIR are set: "
                "RCA_KNOWLEDGE_PATH (a single file) wins"
            )
        return settings.knowledge_path
    return settings.knowledge_dir


def source_files(root: Path) -> list[Path]:
    """The ``*.txt`` and ``*.md`` files under ``root`` (or ``root`` itself), in path order.

    Raises:
        KnowledgeBaseError: ``root`` does not exist, is a file of another kind, or a folder
            without any source file.
    """
    if root.is_file():
        if root.suffix.lower() not in SUFFIXES:
            raise KnowledgeBaseError(
                f"knowledge source '{root.name}' is neither error docs (*.txt) nor a runbook (*.md)"
            )
        return [root]
    if not root.is_dir():
        raise KnowledgeBaseError(f"knowledge source '{root.name}' does not exist")
    files = sorted(
        path
        for path in root.rglob("*")
        if path.is_file()
        and path.suffix.lower() in SUFFIXES
        and not any(part.startswith(".") for part in path.relative_to(root).parts)
    )
    if not files:
        raise KnowledgeBaseError(
            f"knowledge folder '{root.name}' has no *.txt or *.md file: "
            "refusing to start with an empty knowledge base"
        )
    return files


def relative_name(path: Path, root: Path) -> str:
    """The name recorded as ``source``: relative to a folder root, else the file name."""
    if root.is_dir():
        return path.relative_to(root).as_posix()
    return path.name


def load_file(
    path: Path, name: str, count_tokens: Callable[[str], int], max_tokens: int
) -> ParsedKnowledge:
    """Read and parse one source file by its suffix."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        raise KnowledgeBaseError(f"cannot read knowledge source '{name}': {reason}") from exc
    if path.suffix.lower() == RUNBOOK_SUFFIX:
        return parse_runbook(text, name, count_tokens, max_tokens)
    return parse_error_docs(text, source=name, count_tokens=count_tokens, max_tokens=max_tokens)


def load_sources(
    root: Path,
    count_tokens: Callable[[str], int] | None = None,
    max_tokens: int = DEFAULT_MAX_TOKENS,
) -> LoadedSources:
    """Read every source under ``root`` into chunks with unique ids.

    Args:
        root: A folder of sources or one source file.
        count_tokens: The embedding model's token counter (an approximation when omitted).
        max_tokens: The embedding window; longer error docs warn, longer runbook sections split.

    Returns:
        The chunks in file order, the warnings and the relative names of the files read.

    Raises:
        KnowledgeBaseError: A source is missing, unreadable or malformed, or nothing was found.
    """
    counter = count_tokens or approximate_tokens
    loaded = LoadedSources()
    seen: dict[str, str] = {}
    code_source: dict[str, str] = {}
    for path in source_files(root):
        name = relative_name(path, root)
        parsed = load_file(path, name, counter, max_tokens)
        loaded.files.append(name)
        loaded.warnings.extend(parsed.warnings)
        if not parsed.chunks:
            loaded.warnings.append(f"{name}: no entries")
        for chunk in parsed.chunks:
            if chunk.id in seen:
                loaded.warnings.append(
                    f"{name}: a chunk repeats one from {seen[chunk.id]} word for word; skipped"
                )
                continue
            seen[chunk.id] = name
            _note_code(chunk, name, code_source, loaded.warnings)
            loaded.chunks.append(chunk)
    if not loaded.chunks:
        raise KnowledgeBaseError(
            f"knowledge source '{root.name}' has no entries: "
            "refusing to start with an empty knowledge base"
        )
    return loaded


def _note_code(
    chunk: KnowledgeChunk, name: str, code_source: dict[str, str], warnings: list[str]
) -> None:
    """Warn when an error-docs code is defined in two files (runbooks may repeat codes)."""
    if chunk.metadata.get("kind") == "runbook" or "error_code" not in chunk.metadata:
        return
    code = str(chunk.metadata["error_code"])
    first = code_source.setdefault(code, name)
    if first != name:
        warnings.append(f"{name}: error code {code} is also defined in {first}")
