"""pytest plugin for the upstream suite: upstream toolnexus 0.21.0's own tests, run against
our binding, checked against a committed list of expected outcomes.

Loaded by run.sh with ``-p upstream_plugin`` (upstream's files are never edited). It installs
the stand-ins for names we lack (upstream_standins.py), then applies expectations.txt:

- a test listed ``pass`` must pass;
- a test listed ``xfail: <reason>`` runs as a strict xfail: failing is expected, passing fails
  the run (so the list can only shrink: the fix's author turns it into ``pass``);
- a test not in the file fails, and so does an entry no test answers (on a full run), so the
  file stays complete.

With ``UPSTREAM_SUITE_RECORD=<file>`` nothing is applied: each test's plain outcome and first
error line are written there (tab-separated), which is how the file is drafted.

A test still running after ``UPSTREAM_SUITE_TEST_TIMEOUT`` seconds (default 60) is stopped by
an exception raised in it, so a hang is a failure, not a stuck ``make test``.
"""
from __future__ import annotations

import ast
import faulthandler
import os
import re
import signal
import socketserver
from pathlib import Path
from typing import Any, Optional

import pytest

import upstream_standins

_LINE = re.compile(r"^(?P<id>\S.*?)\s{2,}(?P<verdict>pass|xfail: (?P<reason>\S.*))$")


class RanTooLong(Exception):
    """The test ran past UPSTREAM_SUITE_TEST_TIMEOUT."""


class FixtureNotShipped(Exception):
    """The test module reads a file that upstream's repository has and its sdist does not."""


def _test_names(path: Path) -> list[str]:
    """The tests a module defines, read from its source (module-level `test*` functions and
    `test*` methods of `Test*` classes), for when the module cannot be imported."""
    names = []
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            names.append(node.name)
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            names += [f"{node.name}::{m.name}" for m in node.body
                      if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.name.startswith("test")]
    return names


class MissingFixtureItem(pytest.Item):
    """Stands for a test of a module that could not be imported for want of a fixture file.
    Its id is the test's name without parameters: those come from the missing file."""

    def __init__(self, *, fixture: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.fixture = fixture

    def runtest(self) -> None:
        raise FixtureNotShipped(f"upstream's sdist does not ship {self.fixture}, which this test module reads at import")

    def reportinfo(self) -> tuple[Any, Optional[int], str]:
        return self.path, None, self.name

    def repr_failure(self, excinfo: Any, style: Any = None) -> str:
        return str(excinfo.value)


class UpstreamModule(pytest.Module):
    """A test module imported with the stand-ins in their import-time mode; one that reads a
    file missing from the sdist (upstream's `examples/`) yields MissingFixtureItems instead."""

    def collect(self) -> Any:
        try:
            with upstream_standins.importing_test_module():
                self.obj
        except FileNotFoundError as e:
            root = Path(self.config.rootpath).parent
            missing = Path(str(e.filename))
            if not missing.is_relative_to(root):
                raise
            return [MissingFixtureItem.from_parent(self, name=name, fixture=str(missing.relative_to(root)))
                    for name in _test_names(self.path)]
        return super().collect()


def load_expectations(path: Path) -> dict[str, Optional[str]]:
    """nodeid -> None (pass) or the xfail reason."""
    expected: dict[str, Optional[str]] = {}
    for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.rstrip()
        if not line or line.startswith("#"):
            continue
        m = _LINE.match(line)
        if m is None:
            raise pytest.UsageError(f"{path}:{n}: not `<nodeid>  pass` or `<nodeid>  xfail: <reason>`: {line}")
        if m["id"] in expected:
            raise pytest.UsageError(f"{path}:{n}: {m['id']} is listed twice")
        expected[m["id"]] = m["reason"]
    return expected


def _first_line(report: Any) -> str:
    crash = getattr(report.longrepr, "reprcrash", None)
    text = crash.message if crash is not None else str(report.longrepr or "")
    return (text.strip().splitlines() or [""])[0][:300]


class UpstreamSuite:
    """The plugin's state: the expectations, and each test's outcome as reported."""

    def __init__(self, config: pytest.Config) -> None:
        self.record = os.environ.get("UPSTREAM_SUITE_RECORD")
        self.full = os.environ.get("UPSTREAM_SUITE_FULL") == "1"
        self.timeout = float(os.environ.get("UPSTREAM_SUITE_TEST_TIMEOUT", "60"))
        path = os.environ.get("UPSTREAM_SUITE_EXPECTATIONS")
        self.expected = load_expectations(Path(path)) if path and not self.record else {}
        self.stand_ins = upstream_standins.install(Path(config.rootpath) / "src" / "toolnexus")
        self.unknown: set[str] = set()
        self.outcome: dict[str, str] = {}  # nodeid -> passed / failed / xfailed / skipped
        self.message: dict[str, str] = {}
        self.collected: set[str] = set()

    # --- collection: every module collectable, each test marked as its expectation says ---

    def pytest_pycollect_makemodule(self, module_path: Path, parent: Any) -> Any:
        if module_path.name == "__init__.py":
            return None
        return UpstreamModule.from_parent(parent, path=module_path)

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        for item in items:
            self.collected.add(item.nodeid)
            if self.record:
                continue
            if item.nodeid not in self.expected:
                self.unknown.add(item.nodeid)
            elif self.expected[item.nodeid] is not None:
                item.add_marker(pytest.mark.xfail(reason=self.expected[item.nodeid], strict=True))

    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        if item.nodeid in self.unknown:
            pytest.fail(f"{item.nodeid} is not in tests/upstream/python/expectations.txt: add it "
                        "as `pass` or `xfail: <reason>`", pytrace=False)

    # --- running: a hang becomes a failure ---------------------------------------------------

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Any:
        def expired(signum: int, frame: Any) -> None:
            raise RanTooLong(f"{item.nodeid} still running after {self.timeout:g} s")

        previous = signal.signal(signal.SIGALRM, expired)
        signal.setitimer(signal.ITIMER_REAL, self.timeout)
        # If even the exception cannot stop it (stuck outside Python), dump stacks and exit.
        faulthandler.dump_traceback_later(self.timeout * 2 + 10, exit=True)
        try:
            return (yield)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
            faulthandler.cancel_dump_traceback_later()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        nodeid, now = report.nodeid, self.outcome.get(report.nodeid)
        if hasattr(report, "wasxfail") and report.skipped:
            outcome = "xfailed"
        elif report.failed:
            outcome = "failed"
        elif report.skipped:
            outcome = "skipped"
        elif report.when == "call":
            outcome = "passed"
        else:
            return
        if now in ("failed", "xfailed") and outcome == "passed":
            return
        if now != "failed":
            self.outcome[nodeid] = outcome
            if outcome in ("failed", "xfailed", "skipped"):
                self.message[nodeid] = _first_line(report)

    # --- the end: mismatches, the summary line, the exit status ------------------------------

    def mismatches(self) -> list[str]:
        if self.record:
            return []
        out = []
        for nodeid, outcome in sorted(self.outcome.items()):
            reason = self.expected.get(nodeid)
            if nodeid in self.unknown:
                out.append(f"{nodeid}: not in expectations.txt (it {outcome})")
            elif outcome == "failed" and reason is None:
                out.append(f"{nodeid}: expected pass, failed: {self.message.get(nodeid, '')}")
            elif outcome == "failed" and self.message.get(nodeid, "").startswith("[XPASS(strict)]"):
                out.append(f"{nodeid}: passes now: make its line `pass` (it was xfail: {reason})")
            elif outcome == "failed":
                out.append(f"{nodeid}: expected xfail ({reason}), failed outside the test: "
                           f"{self.message.get(nodeid, '')}")
            elif outcome == "skipped":
                out.append(f"{nodeid}: skipped, expected {'pass' if reason is None else 'xfail'}")
        if self.full:
            for nodeid in sorted(set(self.expected) - self.collected):
                out.append(f"{nodeid}: in expectations.txt but not collected")
        return out

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.record:
            with open(self.record, "w", encoding="utf-8") as f:
                for nodeid in sorted(self.collected | set(self.outcome)):
                    f.write(f"{nodeid}\t{self.outcome.get(nodeid, 'not-run')}\t{self.message.get(nodeid, '')}\n")
                for (module, name), stand_in in sorted(self.stand_ins.made.items()):
                    f.write(f"#stand-in\t{module}.{name}\t{stand_in._area}\n")
        elif self.mismatches() and session.exitstatus == 0:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        bad = self.mismatches()
        if bad:
            terminalreporter.section("upstream suite: mismatches with tests/upstream/python/expectations.txt")
            for line in bad:
                terminalreporter.write_line(line)

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        # After pytest's own closing line: this one is the suite's last word.
        values, bad = list(self.outcome.values()), self.mismatches()
        tail = f", {len(bad)} mismatched" if bad else ""
        if self.record:
            tail = f", {values.count('failed')} failed (recorded to {self.record})"
        print(f"upstream python: {values.count('passed')} passed, {values.count('xfailed')} xfail{tail}", flush=True)


def pytest_configure(config: pytest.Config) -> None:
    # Upstream's loopback test servers stop through serve_forever's shutdown poll, 0.5 s by
    # default, which was most of the suite's time; 0.05 s changes nothing else.
    socketserver.BaseServer.serve_forever.__defaults__ = (0.05,)
    config.pluginmanager.register(UpstreamSuite(config), "upstream-suite")
