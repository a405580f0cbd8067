"""The three Python seed examples (tests/seeds/python/, verbatim) run unchanged and print ok."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SEEDS = sorted((Path(__file__).resolve().parents[2] / "tests" / "seeds" / "python").glob("example*.py"))


def test_all_three_seeds_are_here() -> None:
    assert len(SEEDS) == 3


@pytest.mark.parametrize("path", SEEDS, ids=[p.stem for p in SEEDS])
def test_seed_example(path: Path) -> None:
    out = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("ok:"), out.stdout
