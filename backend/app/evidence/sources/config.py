"""The sources file: per-service Prometheus query templates and log-file globs (YAML).

``RCA_SOURCES_FILE`` names it; without one, the shipped RED templates run for every incident
that names a service and no log file is read. Format (every key optional)::

    defaults:                 # for every service
      red: true               # run the shipped RED templates (default true)
      queries:                # extra templates
        - name: queue_depth
          title: queue depth
          query: max(queue_depth{service="$service"})
          unit: count          # ratio | seconds | count | value (default value)
          flat_below: 1        # a smaller change counts as flat (default per unit)
      logs: [/var/log/$service/*.log]
    services:
      checkout-service:
        red: true
        queries: [...]
        logs: [logs/checkout*.log]   # relative to this file's folder

A service's templates are the defaults' followed by its own (its own win on a shared ``name``);
its globs are the defaults' plus its own. ``$service`` in a glob is the incident's service.
"""

from __future__ import annotations

from pathlib import Path
from string import Template
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from app.core.errors import ConfigurationError
from app.evidence.sources.promql import RED_TEMPLATES, QueryTemplate, Unit


class _Query(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.-]+$")
    title: str = Field(default="", max_length=128)
    query: str = Field(min_length=1, max_length=4000)
    unit: Unit = Unit.VALUE
    flat_below: float | None = Field(default=None, ge=0)

    def template(self) -> QueryTemplate:
        return QueryTemplate(
            name=self.name,
            title=self.title or self.name.replace("_", " "),
            query=self.query,
            unit=self.unit,
            flat_below=self.flat_below,
        )


class _Service(BaseModel):
    model_config = ConfigDict(extra="forbid")

    red: bool | None = None
    queries: list[_Query] = Field(default_factory=list)
    logs: list[str] = Field(default_factory=list)


class _File(BaseModel):
    model_config = ConfigDict(extra="forbid")

    defaults: _Service = Field(default_factory=_Service)
    services: dict[str, _Service] = Field(default_factory=dict)


class SourcesConfig:
    """What to collect per service, read from the sources file (or the shipped defaults)."""

    def __init__(self, data: dict[str, Any] | None = None, base_dir: Path | None = None) -> None:
        """Validate ``data`` (the parsed YAML); relative globs resolve against ``base_dir``.

        Raises:
            ConfigurationError: The data does not have the documented shape.
        """
        try:
            self._file = _File.model_validate(data or {})
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "file"
            raise ConfigurationError(f"sources file: {where}: {first['msg']}") from exc
        self.base_dir = base_dir or Path.cwd()

    def _service(self, service: str | None) -> _Service | None:
        return self._file.services.get(service) if service else None

    def templates_for(self, service: str | None) -> list[QueryTemplate]:
        """The query templates to run for ``service`` (RED defaults unless turned off)."""
        own = self._service(service)
        red = own.red if own is not None and own.red is not None else self._file.defaults.red
        by_name: dict[str, QueryTemplate] = {}
        if red is not False:
            by_name.update({t.name: t for t in RED_TEMPLATES})
        for query in self._file.defaults.queries + (own.queries if own else []):
            by_name[query.name] = query.template()
        return list(by_name.values())

    def log_globs_for(self, service: str | None) -> list[str]:
        """Absolute globs of the log files to read for ``service``."""
        own = self._service(service)
        globs = self._file.defaults.logs + (own.logs if own else [])
        resolved: list[str] = []
        for pattern in globs:
            text = Template(pattern)
            if "service" in text.get_identifiers():
                if not service:
                    continue
                pattern = text.safe_substitute(service=service)
            path = Path(pattern).expanduser()
            resolved.append(str(path if path.is_absolute() else self.base_dir / path))
        return list(dict.fromkeys(resolved))

    @property
    def reads_logs(self) -> bool:
        """Whether any service (or the defaults) names log files."""
        return bool(self._file.defaults.logs) or any(s.logs for s in self._file.services.values())


def load_sources_config(path: Path | None) -> SourcesConfig:
    """The sources file at ``path``, or the shipped defaults when ``path`` is None.

    Args:
        path: The YAML file, if configured.

    Returns:
        The configuration.

    Raises:
        ConfigurationError: The file is missing, not YAML, or not of the documented shape.
    """
    if path is None:
        return SourcesConfig()
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigurationError(f"cannot read the sources file {path.name}") from exc
    except yaml.YAMLError as exc:
        raise ConfigurationError(f"the sources file {path.name} is not valid YAML") from exc
    if data is not None and not isinstance(data, dict):
        raise ConfigurationError(f"the sources file {path.name} must hold a mapping")
    return SourcesConfig(data, base_dir=path.resolve().parent)
