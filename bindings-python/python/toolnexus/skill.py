"""Skills (SPEC §3): ``**/SKILL.md`` files found under directories, skills supplied as data
(:class:`SkillDef`), or computed by a host's ``skill_provider``; exposed to the model as one
``skill`` tool and a system-prompt catalog. Discovery, the front matter, the filter, the
catalog and the tool's text are the engine's."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Literal, Optional, Union

from . import _native
from ._engine import engine_tool
from .errors import _warn
from .types import Tool

#: The ``skill`` tool's description.
SKILL_TOOL_DESCRIPTION: str = _native.SKILL_TOOL_DESCRIPTION
#: The first lines of a catalog that lists at least one skill.
SKILLS_PROMPT_PREAMBLE: str = _native.SKILLS_PROMPT_PREAMBLE


@dataclass
class SkillInfo:
    """A discovered skill. ``location`` is its SKILL.md path (``origin="fs"``) or its logical
    base (``origin="logical"``, a data skill, which also has ``resources`` and ``base``)."""

    name: str
    location: str
    content: str
    description: Optional[str] = None
    origin: Literal["fs", "logical"] = "fs"
    resources: Optional[list[str]] = None
    base: Optional[str] = None


@dataclass
class SkillDef:
    """A skill supplied as data, never touching the file system (its base is
    ``skill://<name>/`` unless given)."""

    name: str
    content: str
    description: Optional[str] = None
    resources: Optional[list[str]] = None
    base: Optional[str] = None


#: Why a candidate did not become a skill.
SkillSkipReason = Literal["missing-name", "malformed-frontmatter", "duplicate-name", "unreadable"]


@dataclass
class SkillSkip:
    """A candidate refused: where, the cross-port ``reason`` code, and the parser's own
    message (``detail``; the engine's wording: show it, never match on it)."""

    location: str
    reason: SkillSkipReason
    detail: str = ""


@dataclass
class SkillInventory:
    """Every skill the sources hold and every refusal, unfiltered."""

    skills: list[SkillInfo]
    skipped: list[SkillSkip]


#: A lazy source of data skills (sync or async), called when the toolkit is built.
SkillProvider = Callable[[], Union[list[SkillDef], Awaitable[list[SkillDef]]]]


@dataclass
class SkillSource:
    """Loaded skills: the exposed ``skills`` by name, the ``skill`` tool, and the refusals."""

    skills: dict[str, SkillInfo]
    tool: Tool
    skipped: list[SkillSkip] = field(default_factory=list)
    _prompt: str = field(default="", repr=False)

    def prompt(self) -> str:
        """The catalog for the system prompt (skills with a description, by name in code
        point order)."""
        return self._prompt


def skill_def_to_wire(d: Any) -> Any:
    """A :class:`SkillDef` as the engine reads it (anything else is left to the engine)."""
    if isinstance(d, SkillDef):
        out = {"name": d.name, "content": d.content, "description": d.description, "resources": d.resources,
               "base": d.base}
        return {k: v for k, v in out.items() if v is not None}
    return d


def _dirs(dirs: Any) -> Any:
    if isinstance(dirs, (list, tuple)):
        return [os.fspath(d) if isinstance(d, os.PathLike) else d for d in dirs]
    return os.fspath(dirs) if isinstance(dirs, os.PathLike) else dirs


def _load_options(dirs: Any, skills: Any, filter: Any = None, sample_limit: Any = None) -> dict[str, Any]:  # noqa: A002
    """The ``load_skills`` / ``list_skills`` arguments under upstream's names, for the engine."""
    out = {"dirs": _dirs(dirs), "skills": _wire_skills(skills), "filter": filter, "sample_limit": sample_limit}
    return {k: v for k, v in out.items() if v is not None}


def _wire_skills(skills: Any) -> Any:
    return [skill_def_to_wire(d) for d in skills] if isinstance(skills, (list, tuple)) else skills


def skills_options(
    dirs: Any = None,
    skills: Optional[list[Any]] = None,
    filter: Optional[dict[str, bool]] = None,  # noqa: A002 (upstream's name)
    sample_limit: Optional[int] = None,
    disable: Optional[list[str]] = None,
) -> dict[str, Any]:
    """The engine's skill option keys for these arguments (``None`` ones left out)."""
    out = {
        "skills_dir": _dirs(dirs),
        "skills": _wire_skills(skills),
        "skills_filter": filter,
        "skill_sample_limit": sample_limit,
        "disable_skills": disable,
    }
    return {k: v for k, v in out.items() if v is not None}


def _info(d: dict[str, Any]) -> SkillInfo:
    return SkillInfo(**d)


def _skips(items: list[dict[str, Any]]) -> list[SkillSkip]:
    return [SkillSkip(**s) for s in items]


def list_skills(dirs: Optional[Union[str, list[str]]] = None, *, skills: Optional[list[SkillDef]] = None) -> SkillInventory:
    """Discovers and validates the skills of ``dirs`` and ``skills`` without exposing them:
    the inventory is unfiltered, to author a filter from."""
    found, skipped, warnings = _native.list_skills(_load_options(dirs, skills))
    _warn(warnings, stacklevel=2)
    return SkillInventory(skills=[_info(s) for s in found], skipped=_skips(skipped))


def load_skills(
    dirs: Optional[Union[str, list[str]]] = None,
    *,
    skills: Optional[list[SkillDef]] = None,
    filter: Optional[dict[str, bool]] = None,  # noqa: A002 (upstream's name)
    sample_limit: Optional[int] = None,
) -> SkillSource:
    """Loads the skills of ``dirs`` (a folder or a list) and ``skills`` (first name wins) and
    builds the ``skill`` tool. ``filter``: any ``True`` is an allowlist, only ``False``s a
    droplist. ``sample_limit``: files listed per skill (``0`` the default 10, ``-1`` none)."""
    found, skipped, prompt, tool, warnings = _native.load_skills(_load_options(dirs, skills, filter, sample_limit))
    _warn(warnings, stacklevel=2)
    infos = [_info(s) for s in found]
    assert tool is not None  # a configured source always has its tool
    return SkillSource(skills={s.name: s for s in infos}, tool=engine_tool(tool), skipped=_skips(skipped),
                       _prompt=prompt)


__all__ = [
    "SKILLS_PROMPT_PREAMBLE", "SKILL_TOOL_DESCRIPTION", "SkillDef", "SkillInfo", "SkillInventory", "SkillProvider",
    "SkillSkip", "SkillSkipReason", "SkillSource", "list_skills", "load_skills",
]
