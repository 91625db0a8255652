"""The index cache and the background indexer: a run indexed once opens at once; a cache
that does not match its trace, or is not a cache at all, is never used; a request on a big
run answers at once with part of it and the background task indexes the rest."""

from __future__ import annotations

import asyncio
import logging
import shutil

import numpy as np
import pytest
from aiohttp.test_utils import TestClient, TestServer

from bdi_rl.readers.indexcache import cache_file, load_index, open_index, save_index
from bdi_rl.readers.indexer import Indexer
from bdi_rl.readers.runindex import DamagedTrace, RunIndex
from bdi_rl.readers.viewer import create_app
from tests.conftest import run_named
from tests.test_runindex import _same


@pytest.fixture
def team_run(runs, tmp_path):
    """A private copy of the session's team run (these tests append to and rewrite it)."""
    source = run_named(runs, "team")
    run_dir = tmp_path / "runs" / source.name
    shutil.copytree(source, run_dir)
    return run_dir


def _fresh(run_dir) -> RunIndex:
    index = RunIndex(run_dir)
    index.refresh()
    return index


def test_round_trip_then_only_the_appended_part_is_read(team_run, tmp_path):
    cache = tmp_path / "cache"
    trace = team_run / "trace.jsonl"
    whole = trace.read_bytes()
    trace.write_bytes(whole[: len(whole) * 2 // 3])  # the run so far, torn mid-line
    first = RunIndex(team_run)
    first.refresh()
    assert save_index(first, cache, min_bytes=0) == cache_file(cache, team_run)

    loaded = load_index(team_run, cache)
    assert loaded is not None and loaded.indexed_bytes == first.indexed_bytes
    _same(loaded, first)
    with open(trace, "ab") as f:  # the run went on
        f.write(whole[len(whole) * 2 // 3 :])
    loaded.refresh()
    _same(loaded, _fresh(team_run))
    agent = max(loaded.agents, key=lambda name: loaded.agents[name].events)
    assert loaded.mind_at(agent, 777)[0] == _fresh(team_run).mind_at(agent, 777)[0]


def test_small_runs_are_not_cached_and_open_index_saves_big_ones(team_run, tmp_path):
    cache = tmp_path / "cache"
    assert save_index(_fresh(team_run), cache) is None  # under MIN_CACHED_BYTES: cheap anyway
    assert not cache.exists()
    index = open_index(team_run, None)
    assert index.complete and not cache.exists()


@pytest.mark.parametrize("change", ["rewritten", "truncated"])
def test_a_cache_that_does_not_match_its_trace_is_not_used(team_run, tmp_path, change, caplog):
    cache = tmp_path / "cache"
    save_index(_fresh(team_run), cache, min_bytes=0)
    trace = team_run / "trace.jsonl"
    data = trace.read_bytes()
    if change == "rewritten":  # same length, different content: another run's trace copied in
        trace.write_bytes(data.replace(b'"episode":1,', b'"episode":7,'))
    else:
        trace.write_bytes(data[: len(data) // 2])
    with caplog.at_level(logging.WARNING, "bdi_rl.readers.indexcache"):
        assert load_index(team_run, cache) is None
    assert "not used" in caplog.text and team_run.name in caplog.text
    _same(open_index(team_run, cache), _fresh(team_run))  # indexed afresh, correctly


def test_a_cached_trace_edited_in_its_middle_is_checked_again(team_run, tmp_path):
    """The fingerprint sees the start of the trace and its indexed end: a trace edited in its
    middle since it was cached (its size kept, in place) is not read from the cache, so a
    reader finds the damage (it would have read the numbers the cache held)."""
    cache = tmp_path / "cache"
    save_index(_fresh(team_run), cache, min_bytes=0)
    trace = team_run / "trace.jsonl"
    lines = trace.read_bytes().splitlines(keepends=True)
    ends = [i for i, line in enumerate(lines) if b'"kind":"episode.end"' in line and b'"return":0.0' in line]
    k = ends[len(ends) // 2]
    assert 1 << 16 < sum(map(len, lines[:k])) < trace.stat().st_size - (1 << 16)  # outside the fingerprint
    size = trace.stat().st_size
    with open(trace, "r+b") as f:  # the same file, the same size
        f.seek(sum(map(len, lines[:k])))
        f.write(lines[k].replace(b'"return":0.0', b'"return":"x"', 1))
    assert trace.stat().st_size == size
    with pytest.raises(DamagedTrace, match=rf"trace.jsonl:{k + 1}: episode.end data: .* `data.return`"):
        open_index(team_run, cache)


def _corrupt(path, how):
    data = path.read_bytes()
    if how == "garbage":
        path.write_bytes(b"\x00not a zip at all" * 100)
    elif how == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif how == "pickle":  # an object array needs pickle to load: refused, never unpickled
        np.savez(path, meta=np.array([{"format": "bdi-rl.index/1"}], dtype=object))
    elif how == "wrong-format":
        with np.load(path) as npz:
            arrays = dict(npz)
        arrays["meta"] = np.frombuffer(b'{"format": "something-else/9"}', dtype=np.uint8)
        with open(path, "wb") as f:
            np.savez(f, **arrays)
    elif how == "offsets-past-trace":
        with np.load(path) as npz:
            arrays = dict(npz)
        arrays["offsets_1"] = arrays["offsets_1"] + 10**9
        with open(path, "wb") as f:
            np.savez(f, **arrays)


@pytest.mark.parametrize("how", ["garbage", "truncated", "pickle", "wrong-format", "offsets-past-trace"])
def test_a_corrupt_cache_is_ignored_with_a_warning(team_run, tmp_path, how, caplog):
    cache = tmp_path / "cache"
    path = save_index(_fresh(team_run), cache, min_bytes=0)
    _corrupt(path, how)
    trace_before = (team_run / "trace.jsonl").read_bytes()
    with caplog.at_level(logging.WARNING, "bdi_rl.readers.indexcache"):
        assert load_index(team_run, cache) is None
    assert "not used" in caplog.text
    _same(open_index(team_run, cache), _fresh(team_run))
    assert (team_run / "trace.jsonl").read_bytes() == trace_before  # the run is never touched


def test_an_unwritable_cache_is_logged_and_the_index_still_works(team_run, tmp_path, caplog):
    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory")
    with caplog.at_level(logging.WARNING, "bdi_rl.readers.indexcache"):
        assert save_index(_fresh(team_run), blocked, min_bytes=0) is None
    assert "could not write" in caplog.text


async def test_a_big_run_answers_at_once_and_the_background_indexes_the_rest(team_run, tmp_path):
    """With a request budget far below the trace size (as a 1M-event run is to the real
    one), the run page answers with part of the run and says so; the background task
    finishes it and saves it; a new viewer then opens it complete from the cache."""
    cache = tmp_path / "cache"
    size = (team_run / "trace.jsonl").stat().st_size
    small = {"request_budget": size // 20, "slice_bytes": size // 50, "min_cached_bytes": 0}
    full = _fresh(team_run)
    app = create_app(team_run.parent, live_poll=0.05, indexer=Indexer(team_run.parent, cache, **small))
    async with TestClient(TestServer(app)) as client:
        first = await (await client.get(f"/api/runs/{team_run.name}")).json()
        assert first["indexing"] is not None and 0 < first["indexing"] < 1
        assert first["events"] < sum(a.events for a in full.agents.values())
        listed = await (await client.get("/api/runs")).json()
        assert listed["runs"][0]["run"] == team_run.name
        for _ in range(400):
            body = await (await client.get(f"/api/runs/{team_run.name}")).json()
            if body["indexing"] is None:
                break
            await asyncio.sleep(0.05)
        assert body["indexing"] is None
        assert {jid: a["episodes"] for jid, a in body["agents"].items()} == {
            jid: a.episodes for jid, a in full.agents.items()
        }
    assert cache_file(cache, team_run).is_file()  # saved when it was complete

    again = create_app(team_run.parent, indexer=Indexer(team_run.parent, cache, **{**small, "request_budget": 0}))
    async with TestClient(TestServer(again)) as client:  # no budget: only the cache can answer
        body = await (await client.get(f"/api/runs/{team_run.name}")).json()
        assert body["indexing"] is None and body["events"] == sum(a.events for a in full.agents.values())
