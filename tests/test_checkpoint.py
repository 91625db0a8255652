"""Q-table checkpoints: round trip, every kind of bad file refused in one line without
touching anything, env mismatches explained, and no torn file after a SIGKILL mid-save."""

from __future__ import annotations

import hashlib
import io
import json
import signal
import subprocess
import sys
import time
import zipfile

import numpy as np
import pytest

from bdi_rl.checkpoint import (
    CheckpointError,
    check_env,
    find_checkpoint,
    load_checkpoint,
    save_checkpoint,
    table_checksum,
    task_change,
)
from bdi_rl.envs import make_env

FROZEN_4X4 = make_env("FrozenLake-v1", {"map_name": "4x4"}).state_space_signature()


def _save(path, q=None, **meta):
    q = np.arange(64, dtype=np.float64).reshape(16, 4) / 100 if q is None else q
    save_checkpoint(path, q, {"agent": "learner", "env": FROZEN_4X4, "episodes": 7, **meta})
    return q


def _rewrite(path, q=None, meta=None, drop=()):
    """Rewrite a checkpoint's arrays by hand (what a buggy or hostile writer could do)."""
    with np.load(path) as data:
        arrays = {k: data[k] for k in data.files if k not in drop}
    if q is not None:
        arrays["q"] = q
    if meta is not None:
        arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    path.write_bytes(buffer.getvalue())


def test_round_trip_keeps_table_and_metadata(tmp_path):
    path = tmp_path / "learner.npz"
    q = _save(path, epsilon=0.05)
    checkpoint = load_checkpoint(path)
    assert np.array_equal(checkpoint.q, q) and checkpoint.q.dtype == np.float64
    meta = checkpoint.meta
    assert meta["format"] == 2 and meta["shape"] == [16, 4] and meta["checksum"] == table_checksum(q)
    assert (meta["agent"], meta["episodes"], meta["epsilon"]) == ("learner", 7, 0.05)
    assert checkpoint.episodes == 7 and checkpoint.env == FROZEN_4X4
    assert time.time() - meta["created"] < 60
    check_env(checkpoint, FROZEN_4X4)  # the same env: accepted


def _meta(path):
    with np.load(path) as data:
        return json.loads(data["meta"].tobytes())


@pytest.mark.parametrize("damage, message", [
    (lambda p: p.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 2]), "not a readable checkpoint"),
    (lambda p: p.write_bytes(b"\x89PNG\r\n" + bytes(500)), "not a readable checkpoint"),
    (lambda p: p.write_text("q,meta\n1,2\n"), "not a readable checkpoint"),
    (lambda p: _rewrite(p, meta={**_meta(p), "format": 99}), "checkpoint format 99; this bdi-rl reads formats 1, 2"),
    (lambda p: _rewrite(p, drop=("meta",)), "not a bdi-rl Q-table checkpoint"),
    (lambda p: _rewrite(p, meta=[1, 2]), "corrupt metadata (not a JSON object)"),
    (lambda p: _rewrite(p, q=np.zeros((16, 4))), "corrupt table (checksum mismatch)"),
    (lambda p: _rewrite(p, q=np.zeros((8, 4))), "the table is 8x4 but its metadata says 16x4"),
    (lambda p: _rewrite(p, q=np.zeros(64)), "not a 2-D numeric array"),
    (lambda p: _rewrite(p, q=np.full((16, 4), np.nan),
                        meta={**_meta(p), "checksum": table_checksum(np.full((16, 4), np.nan))}),
     "NaN or infinite"),
    (lambda p: _rewrite(p, meta={**_meta(p), "env": {**FROZEN_4X4, "n_states": 64}}),
     "its env has 64 states"),
])
def test_bad_files_are_refused_in_one_line_and_left_alone(tmp_path, damage, message):
    path = tmp_path / "learner.npz"
    _save(path)
    damage(path)
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    with pytest.raises(CheckpointError) as error:
        load_checkpoint(path)
    text = str(error.value)
    assert message in text and str(path) in text and "\n" not in text
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before


def test_a_flipped_byte_in_the_table_is_caught(tmp_path):
    path = tmp_path / "learner.npz"
    _save(path)
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as archive:  # where the table's bytes sit in the archive
        info = archive.getinfo("q.npy")
    data[info.header_offset + 30 + len(info.filename) + info.file_size - 9] ^= 0x40
    path.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match="not a readable checkpoint|checksum mismatch"):
        load_checkpoint(path)


def test_missing_files_and_directories(tmp_path):
    with pytest.raises(CheckpointError, match="no such checkpoint file"):
        load_checkpoint(tmp_path / "absent.npz")
    with pytest.raises(CheckpointError, match="is a directory, not a checkpoint file"):
        load_checkpoint(tmp_path)
    run = tmp_path / "run"
    (run / "qtables").mkdir(parents=True)
    _save(run / "qtables" / "learner-1.npz")
    assert find_checkpoint(run, "learner-1") == run / "qtables" / "learner-1.npz"
    assert find_checkpoint(run / "qtables", "learner-1") == run / "qtables" / "learner-1.npz"
    with pytest.raises(CheckpointError, match=r"no checkpoint for learner-2 \(has: learner-1\)"):
        find_checkpoint(run, "learner-2")


@pytest.mark.parametrize("env_id, kwargs, differs", [
    ("FrozenLake-v1", {"map_name": "8x8"}, ["table 16x4 vs 64x4", "grid \"4x4\" vs \"8x8\""]),
    ("Taxi-v4", {}, ["env FrozenLake-v1 vs Taxi-v4", "table 16x4 vs 500x6"]),
])
def test_a_table_for_another_state_space_is_refused_saying_what_differs(tmp_path, env_id, kwargs, differs):
    path = tmp_path / "learner.npz"
    _save(path)
    signature = make_env(env_id, kwargs).state_space_signature()
    with pytest.raises(CheckpointError) as error:
        check_env(load_checkpoint(path), signature)
    for part in differs:
        assert part in str(error.value)


def test_the_same_grid_with_another_layout_is_a_new_task_not_a_new_state_space(tmp_path):
    """A goal or hole that moved keeps the cells: the table carries over, and the change is
    said (and traced by a warm start)."""
    path = tmp_path / "learner.npz"
    _save(path, task={"desc": ["SFFF", "FHFH", "FFFH", "HFFG"]})
    moved = make_env("FrozenLake-v1", {"desc": ["SFFF", "FHFH", "FFFG", "HFFF"]})
    checkpoint = load_checkpoint(path)
    check_env(checkpoint, moved.state_space_signature())
    assert task_change(checkpoint, moved.task_signature()) == "map cells changed: (3,2) H->G, (3,3) G->F"
    assert task_change(checkpoint, make_env("FrozenLake-v1", {"map_name": "4x4"}).task_signature()) is None


def test_checkpoints_from_before_the_task_split_still_load(tmp_path):
    """Earlier checkpoints recorded FrozenLake's whole map as the state space."""
    path = tmp_path / "learner.npz"
    legacy = {"env_id": "FrozenLake-v1", "kwargs": {"desc": ["SFFF", "FHFH", "FFFH", "HFFG"]},
              "n_states": 16, "n_actions": 4}
    _save(path, env=legacy)
    checkpoint = load_checkpoint(path)
    check_env(checkpoint, FROZEN_4X4)
    with pytest.raises(CheckpointError, match="grid \"4x4\" vs \"8x8\""):
        check_env(checkpoint, make_env("FrozenLake-v1", {"map_name": "8x8"}).state_space_signature())


def test_dynamics_kwargs_do_not_block_a_warm_start(tmp_path):
    """is_slippery changes the dynamics, not the states: a table carries over."""
    path = tmp_path / "learner.npz"
    _save(path)
    check_env(load_checkpoint(path), make_env("FrozenLake-v1", {"map_name": "4x4", "is_slippery": False})
              .state_space_signature())


WRITER = """
import sys, numpy as np
from pathlib import Path
from bdi_rl.checkpoint import save_checkpoint
from bdi_rl.envs import make_env
signature = make_env("FrozenLake-v1", {"map_name": "8x8"}).state_space_signature()
path = Path(sys.argv[1])
for n in range(10**9):
    save_checkpoint(path, np.full((64, 4), float(n)), {"env": signature, "episodes": n})
    if n == 0:
        print("saved", flush=True)
"""


def test_sigkill_while_checkpointing_never_leaves_an_unreadable_checkpoint(tmp_path):
    path = tmp_path / "learner.npz"
    rng = np.random.default_rng(0)
    seen = []
    for _ in range(12):
        writer = subprocess.Popen([sys.executable, "-c", WRITER, str(path)], stdout=subprocess.PIPE, text=True)
        assert writer.stdout.readline().strip() == "saved"
        time.sleep(float(rng.uniform(0.01, 0.25)))
        writer.send_signal(signal.SIGKILL)
        writer.wait()
        checkpoint = load_checkpoint(path)  # whatever instant it died at, the file is whole
        n = checkpoint.meta["episodes"]
        assert np.all(checkpoint.q == float(n))
        seen.append(n)
    assert len(set(seen)) > 1  # it really was killed at different points of its loop
