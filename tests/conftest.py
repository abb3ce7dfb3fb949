"""Shared fixtures: where the real test clips live."""
from __future__ import annotations

from pathlib import Path

import pytest

from shared_media import find_media_dir


@pytest.fixture(scope="session")
def media_dir() -> Path:
    return find_media_dir()
