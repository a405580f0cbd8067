"""Fixtures shared by the test modules."""
from __future__ import annotations

from typing import Any, Iterator

import pytest

from .mock import MockModel


@pytest.fixture()
def mock() -> Iterator[MockModel]:
    """A fresh loopback model per test (test_conformance keeps one per module)."""
    m = MockModel()
    yield m
    m.close()
