"""The ten built-in tools (``bash``, ``read``, ``write``, ``edit``, ``grep``, ``glob``,
``webfetch``, ``question``, ``apply_patch``, ``todowrite``), run by the engine.

``cfg`` is upstream's ``BuiltinsConfig``: ``None`` or ``True`` (all on), ``False`` (none), or
a dict with ``enabled``, ``disabled``, ``tools`` (name → bool), ``shell`` (argv prefix),
``base_dir`` / ``confine_to_base_dir``, and this engine's ``root`` (confine every file tool
and bash's working directory to one folder). The engine reads it: an unknown key or a wrong
type is an :class:`~toolnexus.InvalidArgumentError` naming it.
"""
from __future__ import annotations

from typing import Optional, Union

from . import _native
from ._engine import engine_tool
from .errors import _warn
from .types import Tool

#: The ``builtins`` option: a bool or a dict (see the module doc).
BuiltinsConfig = Union[bool, dict]

#: The built-in tools' names, in their order.
BUILTIN_TOOL_NAMES: list[str] = list(_native.BUILTIN_TOOL_NAMES)


def create_builtin_tools(cfg: Optional[BuiltinsConfig] = None) -> list[Tool]:
    """All ten built-in tools, whatever the toggles in ``cfg`` say, with its paths and shell."""
    tools, warnings = _native.create_builtin_tools(cfg)
    _warn(warnings, stacklevel=2)
    return [engine_tool(t) for t in tools]


def select_builtins(cfg: Optional[BuiltinsConfig] = None) -> list[Tool]:
    """The built-in tools ``cfg`` selects: none when the source is off, else the ten less
    those its ``tools`` map turns off (``bash`` kept without a shell on the machine is a
    :class:`~toolnexus.ConfigError`)."""
    tools, warnings = _native.select_builtins(cfg)
    _warn(warnings, stacklevel=2)
    return [engine_tool(t) for t in tools]


def builtins_enabled(cfg: Optional[BuiltinsConfig] = None) -> bool:
    """Whether ``cfg`` leaves the built-in source on (``disabled: True`` wins, then
    ``enabled: False``)."""
    enabled, warnings = _native.builtins_enabled(cfg)
    _warn(warnings, stacklevel=2)
    return enabled


def builtin_shell(cfg: Optional[BuiltinsConfig] = None) -> list[str]:
    """The argv prefix ``bash`` runs commands with: ``cfg["shell"]`` verbatim, else
    ``/bin/sh -c``, else ``sh -c`` from ``PATH`` (none found: a ConfigError)."""
    return _native.builtin_shell(cfg)


__all__ = [
    "BUILTIN_TOOL_NAMES", "BuiltinsConfig", "builtin_shell", "builtins_enabled", "create_builtin_tools",
    "select_builtins",
]
