"""Fixtures of the search tests (helpers: ``search_helpers``).

``data_dir`` (autouse) points ``$CHATNODES_DATA_DIR`` at a temp folder, so no test can reach the
user's real index even through the defaults; ``index`` is an open index in a fresh folder.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop.core.search import DATA_DIR_ENV, SearchIndex


@pytest.fixture(autouse=True)
def data_dir(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The user data folder of the test (the index goes to ``<it>/search``)."""
    folder = tmp_path_factory.mktemp("data")
    monkeypatch.setenv(DATA_DIR_ENV, str(folder))
    return folder


@pytest.fixture
def index(tmp_path: Path) -> Iterator[SearchIndex]:
    """An open index in a fresh folder."""
    idx = SearchIndex(tmp_path / "index")
    idx.open()
    try:
        yield idx
    finally:
        idx.close()
