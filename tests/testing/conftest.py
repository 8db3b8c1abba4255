"""Fixtures for the fake provider tests: a started server and a plain httpx client."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from desktop.testing import FakeProvider


@pytest.fixture
def fp() -> Iterator[FakeProvider]:
    with FakeProvider() as provider:
        yield provider


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=10.0) as c:
        yield c
