"""The checkpoint library: ``bdi-rl qtable list`` and the viewer's ``/api/library`` list every
checkpoint under ``runs/`` with its env, lineage, evaluation, plays and integrity; a damaged
or hostile file is an entry saying why, read within bounds, and never stalls the viewer."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest

from bdi_rl.readers.library import Library
from bdi_rl.readers.viewer import SECURITY_HEADERS, create_app
from bdi_rl.rl.checkpoint import MAX_FILE_BYTES, load_checkpoint, save_checkpoint
from tests.checkpoints import DAMAGED, fingerprint, trained_run
from tests.conftest import run_main


@pytest.fixture(scope="module")
def library_runs(tmp_path_factory) -> Path:
    """A trained run, a run warm-started from it, a play of it, a policy cache, and a run of
    another state space (8x8)."""
    runs = tmp_path_factory.mktemp("library") / "runs"
    first = trained_run(runs, name="first")
    table = load_checkpoint(first / "qtables" / "learner.npz")
    second = trained_run(runs, name="second", episodes=20)  # then its table as a warm start from first's leaves it
    save_checkpoint(
        second / "qtables" / "learner.npz",
        table.q,
        {
            **{k: v for k, v in table.meta.items() if k not in ("format", "shape", "dtype", "checksum", "created")},
            "run": second.name,
            "episodes": 20,
            "total_episodes": 320,
            "warm_start": table.as_warm_start(),
        },
    )
    (second / "policies").mkdir()
    (second / "policies" / "learner.json").write_text(
        json.dumps(
            {
                "format": 1,
                "agent": "learner",
                "env": table.meta["env"],
                "policies": [{"goal": [3, 3], "actions": "1,1,2,2,1,2", "confidence": 1.0}],
            }
        )
    )
    played = run_main("play", str(first), "--policy-only", "--episodes", "40", "--runs", str(runs), "--no-progress")
    assert played.returncode == 0, played.stderr
    trained_run(runs, name="eight", episodes=10, map_name="8x8")
    return runs


def _entries(runs: Path) -> dict[str, dict]:
    return {e["key"].split("__")[1] + "/" + e["agent"]: e for e in Library(runs).scan()["entries"]}


def test_every_checkpoint_with_what_it_is_chosen_by(library_runs):
    entries = _entries(library_runs)
    assert sorted(entries) == ["eight/learner", "first/learner", "second/learner"]  # a play has no table
    first = entries["first/learner"]
    assert first["verified"] and first["integrity"].startswith("verified (sha256:")
    assert first["group"] == "FrozenLake-v1 · grid 4x4 · 16 states x 4 actions"
    assert first["signature"] == {"env_id": "FrozenLake-v1", "n_states": 16, "n_actions": 4, "kwargs": {"grid": "4x4"}}
    assert first["env_kwargs"] == {"map_name": "4x4", "is_slippery": False}
    assert (first["episodes"], first["total_episodes"], first["epsilon"]) == (300, 300, 0.05)
    assert first["evaluation"]["episodes"] == 50 and first["evaluation"]["success_rate"] == 1.0
    assert first["run_state"] == "finished" and time.time() - first["created"] < 3600
    (play,) = first["plays"]
    assert play["episodes"] == 40 and play["success_rate"] == 1.0 and play["policy_only"] is True
    assert play["success_ci95"][1] == 1.0 and play["run"].split("__")[1] == "first-play"
    second = entries["second/learner"]
    lineage = second["lineage"]
    assert lineage["key"] == first["key"] and lineage["episodes"] == 300 and lineage["status"] == "in the library"
    assert second["policies"] == {"goals": [[3, 3]], "problem": None}
    assert second["total_episodes"] == 320 and second["episodes"] == 20
    assert entries["eight/learner"]["group"] == "FrozenLake-v1 · grid 8x8 · 64 states x 4 actions"


def test_qtable_list_prints_them_by_env(library_runs):
    listed = run_main("qtable", "list", str(library_runs))
    assert listed.returncode == 0, listed.stderr
    out = listed.stdout
    assert out.index("grid 4x4 · 16 states x 4 actions") < out.index("__first__") < out.index("grid 8x8")
    assert "verified (sha256:" in out and "policy cache of 1 goal(s)" in out and "in the library" in out
    assert "success 1.000 [0.912, 1.000]" in out  # the play of first, with its interval
    missing = run_main("qtable", "list", str(library_runs.parent / "nowhere"))
    assert missing.returncode == 2 and "no such directory" in missing.stderr


@pytest.mark.parametrize("case", DAMAGED)
def test_a_damaged_checkpoint_is_listed_with_why(library_runs, tmp_path, case):
    damage, expected = DAMAGED[case]
    runs = tmp_path / "runs"
    shutil.copytree(library_runs, runs)
    victim = next(runs.glob("*__second__*")) / "qtables" / "learner.npz"
    damage(victim)
    before = fingerprint(runs)
    entries = _entries(runs)
    broken = entries["second/learner"]
    assert not broken["verified"] and broken["group"] == "unreadable"
    assert expected.removeprefix("learner.npz: ") in broken["integrity"] and "\n" not in broken["integrity"]
    assert entries["first/learner"]["verified"]  # the others are listed as ever
    listed = run_main("qtable", "list", str(runs))
    assert listed.returncode == 0 and "NOT USABLE: " in listed.stdout, listed.stderr
    assert fingerprint(runs) == before


def _zip_bomb(path: Path) -> None:
    """A file of 256 KB whose table is a 256 MiB array of zeros: every byte must be read to
    verify it (the largest a checkpoint may hold)."""
    rows = ((256 << 20) - 128) // 32  # the largest table a checkpoint may hold, its .npy header included
    header = {"descr": "<f8", "fortran_order": False, "shape": (rows, 4)}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        with archive.open("q.npy", "w", force_zip64=True) as member:
            np.lib.format.write_array_header_1_0(member, header)
            left = rows * 32
            while left:
                member.write(bytes(min(left, 1 << 20)))
                left -= min(left, 1 << 20)
        meta = {"format": 2, "shape": [rows, 4], "episodes": 1}
        archive.writestr("meta.npy", _npy(json.dumps(meta).encode()))


def _npy(data: bytes) -> bytes:
    import io

    buffer = io.BytesIO()
    np.save(buffer, np.frombuffer(data, dtype=np.uint8))
    return buffer.getvalue()


async def test_a_huge_or_hostile_file_does_not_stall_the_viewer(library_runs, tmp_path, aiohttp_client):
    runs = tmp_path / "runs"
    shutil.copytree(library_runs, runs)
    hostile = next(runs.glob("*__eight__*")) / "qtables"
    with open(hostile / "huge.npz", "wb") as f:  # sparse: 2 GB on paper
        f.truncate(2 << 30)
    _zip_bomb(hostile / "bomb.npz")
    with zipfile.ZipFile(hostile / "members.npz", "w") as archive:
        for i in range(70_000):
            archive.writestr(f"m{i}", b"")
    client = await aiohttp_client(create_app(runs))
    started = time.monotonic()
    response = await client.get("/api/library")
    assert response.status == 200 and time.monotonic() - started < 5
    assert response.headers["Content-Security-Policy"] == SECURITY_HEADERS["Content-Security-Policy"]
    started = time.monotonic()
    assert (await client.get("/api/runs")).status == 200 and time.monotonic() - started < 2  # not held up
    deadline = time.monotonic() + 60
    while True:
        listing = await (await client.get("/api/library")).json()
        if not listing["pending"]:
            break
        assert time.monotonic() < deadline, listing["pending"]
        await asyncio.sleep(0.2)
    entries = {e["agent"]: e for e in listing["entries"] if e["run"].split("__")[1] == "eight"}
    assert (
        entries["huge"]["integrity"]
        == f"{2 << 30} bytes: larger than any checkpoint (at most {MAX_FILE_BYTES}); not read"
    )
    assert "an archive of 70000 members" in entries["members"]["integrity"]
    assert not entries["bomb"]["verified"] and "metadata field" in entries["bomb"]["integrity"]
    assert entries["learner"]["verified"]


async def test_the_library_page_and_its_reading_api(library_runs, aiohttp_client):
    client = await aiohttp_client(create_app(library_runs))
    page = await client.get("/library")
    assert page.status == 200 and "library.js" in await page.text()
    for name in ("library.js", "token.js"):
        assert (await client.get(f"/static/{name}")).status == 200
    listing = await (await client.get("/api/library")).json()
    assert listing["pending"] == 0 and len(listing["entries"]) == 3
    for method in ("POST", "PUT", "DELETE"):
        assert (await client.request(method, "/api/library")).status in (403, 405)


def test_an_agent_named_like_html_is_listed_as_text(library_runs, tmp_path):
    runs = tmp_path / "runs"
    shutil.copytree(library_runs, runs)
    folder = next(runs.glob("*__first__*")) / "qtables"
    os.link(folder / "learner.npz", folder / "<img src=x onerror=alert(1)>.npz")
    entries = Library(runs).scan()["entries"]
    assert any(e["agent"] == "<img src=x onerror=alert(1)>" and e["verified"] for e in entries)


def test_a_table_that_names_no_env_is_listed_apart(library_runs, tmp_path):
    from tests.checkpoints import BAD_CHECKPOINTS

    runs = tmp_path / "runs"
    shutil.copytree(library_runs, runs)
    BAD_CHECKPOINTS["no env"][0](next(runs.glob("*__second__*")) / "qtables" / "learner.npz")
    entry = _entries(runs)["second/learner"]
    assert entry["verified"] and entry["group"] == "no env recorded · 16 states x 4 actions"
    assert entry["integrity"].endswith("it does not say which env it is for: no warm start or play can check it")
