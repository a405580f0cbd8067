"""Stand-ins for the names upstream toolnexus 0.21.0 has and our binding lacks.

Upstream's test files import dozens of names we do not have yet (agents, judge, MCP...). One
missing name would take a whole file down at import, hiding every test in it that we could
pass. So, in the test process only, the harness stands in wherever upstream has a name and our
package has none: a missing module becomes a stand-in module, and an existing module answers
its missing names through a module ``__getattr__``. Our package's files are never touched, and
a name our package does have is never replaced. Which names upstream has is read from its own
source (the extracted sdist) by parsing, never by importing it.

A stand-in can make a test fail, never pass:

- only an import statement (``from toolnexus import x``) gets the stand-in; any other read of
  a missing name (``hasattr``, ``getattr``, ``toolnexus.x``) raises, so probing finds nothing;
- using a stand-in (calling or instantiating it, reading its attributes, iterating it, testing
  its truth, arithmetic) raises ``MissingFeature``, naming the name and its feature area;
  while a test module is being imported such a use gives a poisoned value instead (so a
  module-level ``parametrize`` list does not take the file down), and any use of that raises;
- ``MissingFeature`` derives from ``BaseException``: no ``except Exception`` or
  ``pytest.raises(Exception)`` in a test can mistake it for the behaviour under test.
"""
from __future__ import annotations

import ast
import builtins
import contextlib
import dis
import importlib
import importlib.abc
import importlib.machinery
import sys
import types
from pathlib import Path
from typing import Any, Iterator, Optional

PACKAGE = "toolnexus"

# The feature area of each upstream module we do not have (the vocabulary).
MODULE_AREAS = {
    "toolnexus.a2a": "A2A",
    "toolnexus.serve": "A2A",
    "toolnexus.acp": "ACP",
    "toolnexus.agents": "agents",
    "toolnexus.builtin": "tool sources",
    "toolnexus.http": "tool sources",
    "toolnexus.mcp_source": "tool sources",
    "toolnexus.mcp_serve": "tool sources",
    "toolnexus.skill": "tool sources",
    "toolnexus.classifier": "judge",
    "toolnexus.judge": "judge",
    "toolnexus.judge_batteries": "judge",
    "toolnexus.content": "content parts",
    "toolnexus.translate": "translate",
}

# Names upstream's client.py defines itself, by area. Its other names, and any other name not
# placed here, belong to the loop itself ("loop"): a feature we have, so one missing is a bug.
CLIENT_AREAS = {
    "MetricsRegistry": "metrics", "_Hist": "metrics", "_DURATION_BUCKETS": "metrics",
    "_DURATION_BUCKET_LES": "metrics", "_fmt_num": "metrics", "_escape_label": "metrics",
    "_label_str": "metrics", "_with_le": "metrics",
    "Conversation": "memory", "InMemoryConversationStore": "memory",
    "InProcessTransport": "in-process client", "create_in_process_client": "in-process client",
    "_IN_PROCESS_BASE_URL": "in-process client",
    "AsyncGenerator": "streaming",
}

_BUILTIN_EXCEPTIONS = {n for n, v in vars(builtins).items()
                       if isinstance(v, type) and issubclass(v, BaseException)}


class MissingFeature(BaseException):
    """A test used a name that upstream toolnexus has and this binding does not (yet)."""


def _missing(name: str, area: str) -> MissingFeature:
    return MissingFeature(f"{name} is not in this binding ({area}); stand-in installed by tests/upstream/python")


class _Module:
    """What parsing one upstream module tells: its names and where each comes from."""

    def __init__(self, name: str, is_package: bool) -> None:
        self.name = name
        self.is_package = is_package
        self.names: dict[str, Optional[tuple[str, str]]] = {}  # name -> (module, name) it re-exports
        self.bases: dict[str, list[str]] = {}  # class name -> base names
        self.foreign: set[str] = set()  # names imported from outside the package


def _resolve(module: str, level: int, current: str, is_package: bool) -> str:
    if level == 0:
        return module
    parts = current.split(".")
    base = parts if is_package else parts[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def _parse(path: Path, name: str, is_package: bool) -> _Module:
    mod = _Module(name, is_package)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    # Module level and inside top-level if/try blocks (optional imports); never in functions.
    stack = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.If, ast.Try)):
            stack.extend(node.body + node.orelse + getattr(node, "finalbody", []))
            for h in getattr(node, "handlers", []):
                stack.extend(h.body)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            mod.names[node.name] = None
        elif isinstance(node, ast.ClassDef):
            mod.names[node.name] = None
            mod.bases[node.name] = [b.id if isinstance(b, ast.Name) else
                                    b.attr if isinstance(b, ast.Attribute) else "" for b in node.bases]
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for leaf in ast.walk(target):
                    if isinstance(leaf, ast.Name):
                        mod.names[leaf.id] = None
        elif isinstance(node, ast.ImportFrom):
            source = _resolve(node.module or "", node.level, name, is_package)
            for alias in node.names:
                if alias.name == "*":
                    continue
                local = alias.asname or alias.name
                if source == PACKAGE or source.startswith(PACKAGE + "."):
                    mod.names[local] = (source, alias.name)
                else:
                    mod.names[local] = None
                    mod.foreign.add(local)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                local = alias.asname or alias.name.split(".")[0]
                mod.names[local] = None
                mod.foreign.add(local)
    return mod


class Upstream:
    """Upstream's modules and names, parsed from its source tree (``src/toolnexus``)."""

    def __init__(self, src: Path) -> None:
        self.modules: dict[str, _Module] = {}
        for path in sorted(src.rglob("*.py")):
            rel = path.relative_to(src.parent).with_suffix("")
            is_package = rel.name == "__init__"
            name = ".".join(rel.parts[:-1] if is_package else rel.parts)
            self.modules[name] = _parse(path, name, is_package)

    def children(self, package: str) -> set[str]:
        """The names of a package's submodules."""
        return {m[len(package) + 1:] for m in self.modules
                if m.startswith(package + ".") and "." not in m[len(package) + 1:]}

    def origin(self, module: str, name: str) -> tuple[str, str]:
        """Where a name is defined, following the package's own re-exports."""
        seen = set()
        while (module, name) not in seen:
            seen.add((module, name))
            mod = self.modules.get(module)
            if mod is None:
                return module, name
            if name not in mod.names:
                # `from . import x` / `from .pkg import sub`: a submodule.
                if f"{module}.{name}" in self.modules:
                    return f"{module}.{name}", ""
                return module, name
            nxt = mod.names[name]
            if nxt is None:
                return module, name
            module, name = nxt
        return module, name

    def area(self, module: str, name: str) -> str:
        origin, real = self.origin(module, name)
        if origin == f"{PACKAGE}.client":
            return CLIENT_AREAS.get(real, "loop")
        for prefix, area in MODULE_AREAS.items():
            if origin == prefix or origin.startswith(prefix + "."):
                return area
        return "loop"

    def is_exception(self, module: str, name: str) -> bool:
        """Whether upstream's class is an exception (so `except` / `pytest.raises` accept it)."""
        todo, seen = [self.origin(module, name)], set()
        while todo:
            mod_name, cls = todo.pop()
            if (mod_name, cls) in seen:
                continue
            seen.add((mod_name, cls))
            mod = self.modules.get(mod_name)
            if mod is None:
                continue
            for base in mod.bases.get(cls, []):
                if base in _BUILTIN_EXCEPTIONS or base.endswith(("Error", "Exception")):
                    return True
                if base in mod.names:
                    todo.append(self.origin(mod_name, base))
        return False


# Above zero while a test module is being imported (see the module doc).
_importing = [0]


@contextlib.contextmanager
def importing_test_module() -> Iterator[None]:
    _importing[0] += 1
    try:
        yield
    finally:
        _importing[0] -= 1


class _Poisoned:
    """What a stand-in gave at import time: any use of it raises MissingFeature."""

    __slots__ = ("_what",)

    def __init__(self, what: str) -> None:
        object.__setattr__(self, "_what", what)

    def _raise(self, *args: Any, **kwargs: Any) -> Any:
        raise MissingFeature(object.__getattribute__(self, "_what"))

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        self._raise()

    __call__ = __iter__ = __len__ = __contains__ = __getitem__ = __bool__ = _raise
    __eq__ = __lt__ = __le__ = __gt__ = __ge__ = __add__ = __setattr__ = _raise

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        return f"<poisoned value of {object.__getattribute__(self, '_what').split(' ', 1)[0]}>"


_IMPORT_OPS = {dis.opmap["IMPORT_FROM"], dis.opmap["IMPORT_NAME"]}


def _asked_by_import(frame: Any) -> bool:
    """Whether a module attribute is being read by an import statement: `from m import x`
    (IMPORT_FROM in the importing code, or importlib's own fromlist handling)."""
    code = frame.f_code
    if code.co_filename.startswith("<frozen importlib"):
        return True
    return code.co_code[frame.f_lasti] in _IMPORT_OPS


class _StandInMeta(type):
    """A stand-in is a class (so it can be subclassed, named in `except`, put in a type hint);
    using it for anything else raises MissingFeature."""

    def _missing(cls, what: str = "") -> MissingFeature:
        return _missing(cls._standin + what, cls._area)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        if _importing[0]:
            return _Poisoned(str(cls._missing("()")))
        raise cls._missing()

    def __getattr__(cls, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)  # introspection (pytest, inspect, typing) stays quiet
        if _importing[0]:
            return _Poisoned(str(cls._missing(f".{name}")))
        raise cls._missing(f".{name}")

    def __iter__(cls) -> Any:
        raise cls._missing()

    def __len__(cls) -> int:
        raise cls._missing()

    def __contains__(cls, item: Any) -> bool:
        raise cls._missing()

    def __getitem__(cls, item: Any) -> Any:
        raise cls._missing()

    def __bool__(cls) -> bool:
        raise cls._missing()

    def _operator(cls, *args: Any) -> Any:
        raise cls._missing()

    # Arithmetic and ordering (a constant such as MAX_ERROR_BODY * 3); `==` and hashing stay
    # the default identity, which typing and pytest rely on.
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _operator
    __truediv__ = __floordiv__ = __mod__ = __lt__ = __le__ = __gt__ = __ge__ = _operator

    def __repr__(cls) -> str:
        return f"<stand-in {cls._standin} ({cls._area})>"


class StandIns:
    """Makes and keeps one stand-in per (module, name); records which were used."""

    def __init__(self, upstream: Upstream) -> None:
        self.upstream = upstream
        self.made: dict[tuple[str, str], type] = {}

    def get(self, module: str, name: str) -> Any:
        key = (module, name)
        if key not in self.made:
            sub = f"{module}.{name}"
            if sub in self.upstream.modules:
                return importlib.import_module(sub)
            base = Exception if self.upstream.is_exception(module, name) else object
            self.made[key] = _StandInMeta(name, (base,), {
                "__module__": module, "__qualname__": name, "_standin": f"{module}.{name}",
                "_area": self.upstream.area(module, name)})
        return self.made[key]

    def answer(self, module: str, name: str) -> Any:
        """A missing name asked for: its stand-in when an import statement asks (so the file
        imports), MissingFeature for any other access (`hasattr`, `getattr`, `mod.name`):
        probing for a name must not find one we do not have."""
        if _asked_by_import(sys._getframe(2)):
            return self.get(module, name)
        raise _missing(f"{module}.{name}", self.upstream.area(module, name))

    def missing_in(self, module: types.ModuleType) -> set[str]:
        """Upstream's names in this module that ours lacks (its own imports of outside
        modules excepted: they are upstream's implementation, not its API)."""
        up = self.upstream.modules.get(module.__name__)
        if up is None:
            return set()
        have = set(vars(module))
        return {n for n in up.names if n not in have and n not in up.foreign}

    def patch(self, module: types.ModuleType) -> None:
        """Lets an existing module of ours answer upstream's names it lacks."""
        missing = self.missing_in(module)
        own = vars(module).get("__getattr__")
        subs = self.upstream.children(module.__name__)
        stand_ins = self

        def __getattr__(name: str) -> Any:
            if own is not None:
                try:
                    return own(name)
                except AttributeError:
                    pass
            if name in subs:
                return importlib.import_module(f"{module.__name__}.{name}")
            if name in missing:
                return stand_ins.answer(module.__name__, name)
            raise AttributeError(f"module {module.__name__!r} has no attribute {name!r}")

        module.__getattr__ = __getattr__  # type: ignore[attr-defined]

    def module(self, name: str) -> types.ModuleType:
        """A stand-in for a whole upstream module we do not have."""
        up = self.upstream.modules[name]
        mod = types.ModuleType(name, f"Stand-in for upstream's {name} ({MODULE_AREAS.get(name, '')}).")
        if up.is_package:
            mod.__path__ = []  # type: ignore[attr-defined]
        stand_ins = self
        subs = self.upstream.children(name)

        def __getattr__(attr: str) -> Any:
            if attr in subs:
                return importlib.import_module(f"{name}.{attr}")
            if attr in up.names and not attr.startswith("__"):
                return stand_ins.answer(name, attr)
            raise AttributeError(f"module {name!r} has no attribute {attr!r}")

        mod.__getattr__ = __getattr__  # type: ignore[attr-defined]
        return mod


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Last on sys.meta_path: answers only for upstream modules no real finder found."""

    def __init__(self, stand_ins: StandIns) -> None:
        self.stand_ins = stand_ins

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname in self.stand_ins.upstream.modules:
            up = self.stand_ins.upstream.modules[fullname]
            return importlib.machinery.ModuleSpec(fullname, self, is_package=up.is_package)
        return None

    def create_module(self, spec: Any) -> types.ModuleType:
        return self.stand_ins.module(spec.name)

    def exec_module(self, module: types.ModuleType) -> None:
        pass


def install(upstream_src: Path) -> StandIns:
    """Installs the stand-ins for the test process; returns them (for the report)."""
    stand_ins = StandIns(Upstream(upstream_src))
    sys.meta_path.append(_Finder(stand_ins))
    for name in stand_ins.upstream.modules:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        if not isinstance(module.__spec__.loader, _Finder):
            stand_ins.patch(module)
    return stand_ins
