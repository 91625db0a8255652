"""The built AgentSpeak grammar kept between processes (bdi_rl/bdi/runtime/larkparse.py): the
same parses from the cache, a damaged cache rebuilt, and never a cache others can write (it
is a pickle)."""

from __future__ import annotations

import os

import pytest

from bdi_rl.bdi.runtime import larkparse
from tests.conftest import ASL


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("BDI_RL_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache" / "grammar"


def _parse_learner(built) -> str:
    tree = built.parse((ASL / "team-learner.asl").read_text())
    return tree.pretty()


def test_the_parser_loaded_from_the_cache_parses_as_the_one_built(cache):
    built = larkparse._parser.__wrapped__()  # builds and keeps it
    (kept,) = cache.iterdir()
    loaded = larkparse._parser.__wrapped__()  # loads it
    assert kept.stat().st_size > 0
    assert _parse_learner(loaded) == _parse_learner(built)
    assert oct(cache.stat().st_mode & 0o777) == oct(0o700)


def test_a_damaged_cache_is_rebuilt(cache):
    larkparse._parser.__wrapped__()
    (kept,) = cache.iterdir()
    good = kept.read_bytes()
    kept.write_bytes(good[: len(good) // 2])
    rebuilt = larkparse._parser.__wrapped__()
    assert _parse_learner(rebuilt) == _parse_learner(larkparse._parser.__wrapped__())
    assert kept.stat().st_size > len(good) // 2  # whole again (rebuilt and kept)


def test_a_cache_directory_others_can_write_is_not_used(cache):
    cache.mkdir(parents=True)
    os.chmod(cache, 0o777)
    assert larkparse._cached_parser_file("grammar") is None
    larkparse._parser.__wrapped__()
    assert list(cache.iterdir()) == []
