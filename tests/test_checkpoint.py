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

from bdi_rl.rl.checkpoint import (
    CheckpointError,
    check_env,
    find_checkpoint,
    load_checkpoint,
    save_checkpoint,
    state_space_of,
    table_checksum,
    task_change,
)
from bdi_rl.rl.envs import make_env

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
    assert checkpoint.episodes == 7 and state_space_of(checkpoint) == FROZEN_4X4
    header = checkpoint.header  # the same metadata, typed
    assert (header.agent, header.episodes, header.epsilon, header.shape) == ("learner", 7, 0.05, [16, 4])
    assert time.time() - meta["created"] < 60
    check_env(checkpoint, FROZEN_4X4)  # the same env: accepted


def _meta(path):
    with np.load(path) as data:
        return json.loads(data["meta"].tobytes())


@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda p: p.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 2]), "not a readable checkpoint"),
        (lambda p: p.write_bytes(b"\x89PNG\r\n" + bytes(500)), "not a readable checkpoint"),
        (lambda p: p.write_text("q,meta\n1,2\n"), "not a readable checkpoint"),
        (
            lambda p: _rewrite(p, meta={**_meta(p), "format": 99}),
            "checkpoint format 99; this bdi-rl reads formats 1, 2",
        ),
        (lambda p: _rewrite(p, drop=("meta",)), "not a bdi-rl Q-table checkpoint"),
        (lambda p: _rewrite(p, meta=[1, 2]), "corrupt metadata (not a JSON object)"),
        (lambda p: _rewrite(p, q=np.zeros((16, 4))), "corrupt table (checksum mismatch)"),
        (lambda p: _rewrite(p, q=np.zeros((8, 4))), "the table is 8x4 but its metadata says 16x4"),
        (lambda p: _rewrite(p, q=np.zeros(64)), "not a 2-D numeric array"),
        (
            lambda p: _rewrite(
                p, q=np.full((16, 4), np.nan), meta={**_meta(p), "checksum": table_checksum(np.full((16, 4), np.nan))}
            ),
            "NaN or infinite",
        ),
        (lambda p: _rewrite(p, meta={**_meta(p), "env": {**FROZEN_4X4, "n_states": 64}}), "its env has 64 states"),
    ],
)
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


@pytest.mark.parametrize(
    "env_id, kwargs, differs",
    [
        ("FrozenLake-v1", {"map_name": "8x8"}, ["table 16x4 vs 64x4", 'grid "4x4" vs "8x8"']),
        ("Taxi-v4", {}, ["env FrozenLake-v1 vs Taxi-v4", "table 16x4 vs 500x6"]),
    ],
)
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
    legacy = {
        "env_id": "FrozenLake-v1",
        "kwargs": {"desc": ["SFFF", "FHFH", "FFFH", "HFFG"]},
        "n_states": 16,
        "n_actions": 4,
    }
    _save(path, env=legacy)
    checkpoint = load_checkpoint(path)
    check_env(checkpoint, FROZEN_4X4)
    with pytest.raises(CheckpointError, match='grid "4x4" vs "8x8"'):
        check_env(checkpoint, make_env("FrozenLake-v1", {"map_name": "8x8"}).state_space_signature())


def test_dynamics_kwargs_do_not_block_a_warm_start(tmp_path):
    """is_slippery changes the dynamics, not the states: a table carries over."""
    path = tmp_path / "learner.npz"
    _save(path)
    check_env(
        load_checkpoint(path),
        make_env("FrozenLake-v1", {"map_name": "4x4", "is_slippery": False}).state_space_signature(),
    )


WRITER = """
import sys, numpy as np
from pathlib import Path
from bdi_rl.rl.checkpoint import save_checkpoint
from bdi_rl.rl.envs import make_env
signature = make_env("FrozenLake-v1", {"map_name": "8x8"}).state_space_signature()
path = Path(sys.argv[1])
for n in range(10**9):
    save_checkpoint(path, np.full((64, 4), float(n)), {"env": signature, "episodes": n})
    if n == 0:
        print("saved", flush=True)
"""


@pytest.mark.slow  # kills a process in a loop
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


# -- the metadata's one schema: a well-formed archive whose fields are wrong ---------------------


def _rewrite_text(path, text):
    """Replace the metadata by raw JSON text (what ``json.dumps`` cannot write, e.g. 10,000
    levels of nesting)."""
    with np.load(path) as data:
        q = data["q"]
    buffer = io.BytesIO()
    np.savez(buffer, q=q, meta=np.frombuffer(text.encode(), dtype=np.uint8))
    path.write_bytes(buffer.getvalue())


def _with(**fields):
    return lambda p: _rewrite(p, meta={**_meta(p), **fields})


def _without(name):
    return lambda p: _rewrite(p, meta={k: v for k, v in _meta(p).items() if k != name})


def _nested(depth):
    return lambda p: _rewrite_text(
        p, json.dumps(_meta(p))[:-1] + ', "env_kwargs": {"x": ' + "[" * depth + "]" * depth + "}}"
    )


BAD_METADATA = {
    "episodes a word": (_with(episodes="ten"), "metadata field episodes: expected int, got str"),
    "episodes a fraction": (_with(episodes=7.5), "metadata field episodes: expected int, got float"),
    "episodes true": (_with(episodes=True), "metadata field episodes: expected int, got bool"),
    "episodes missing": (_without("episodes"), "metadata field episodes: missing"),
    "env a number": (_with(env=5), "metadata field env: expected object | null, got int"),
    "env without its id": (_with(env={"n_states": 16, "n_actions": 4}), "metadata field env.env_id: missing"),
    "env with no states": (_with(env={**FROZEN_4X4, "n_states": 0}), "metadata field env.n_states: expected int >= 1"),
    "shape a string": (_with(shape="16x4"), "metadata field shape: expected array, got str"),
    "shape of three": (_with(shape=[16, 4, 1]), "metadata field shape: expected array of length <= 2"),
    "epsilon null": (_with(epsilon=None), "metadata field epsilon: expected float, got null"),
    "epsilon NaN": (_with(epsilon=float("nan")), "metadata field epsilon: expected float >= 0.0"),
    "epsilon above 1": (_with(epsilon=1.5), "metadata field epsilon: expected float <= 1.0"),
    "alpha zero": (_with(alpha=0), "metadata field alpha: expected float > 0.0"),
    "env_kwargs a list": (_with(env_kwargs=[]), "metadata field env_kwargs: expected object, got array"),
    "total_episodes negative": (_with(total_episodes=-3), "metadata field total_episodes: expected int >= 0"),
    "total_episodes below episodes": (_with(total_episodes=2), "metadata field total_episodes: 2 is fewer"),
    "env_steps a string": (_with(env_steps="many"), "metadata field env_steps: expected int, got str"),
    "created infinite": (_with(created=float("inf")), "metadata field created: expected float <="),
    "task map of numbers": (_with(task={"desc": [1, 2]}), "metadata field task.desc[0]: expected str, got int"),
    "warm start's episodes a word": (
        _with(warm_start={"path": "a.npz", "episodes": "many"}),
        "metadata field warm_start.episodes: expected int, got str",
    ),
    "checksum not a SHA-256": (_with(checksum="md5:0"), "metadata field checksum: expected str matching"),
    "checksum missing": (_without("checksum"), "metadata field checksum: missing"),
    "format true": (_with(format=True), "checkpoint format True"),
    "format a string": (_with(format="2"), "checkpoint format '2'"),
    "a number too long to read": (
        lambda p: _rewrite_text(p, json.dumps(_meta(p))[:-1] + ', "run": ' + "9" * 5000 + "}"),
        "corrupt metadata (not JSON)",
    ),
    "nested 10,000 deep": (_nested(10_000), "corrupt metadata (not JSON)"),
    "nested 100 deep": (_nested(100), "corrupt metadata (nested deeper than 32 levels)"),
    "a lone surrogate": (
        lambda p: _rewrite_text(p, json.dumps(_meta(p))[:-1] + ', "agent": "\\ud800"}'),
        "corrupt metadata (text that is not valid Unicode)",
    ),
}


@pytest.mark.parametrize("name", sorted(BAD_METADATA))
def test_metadata_of_the_wrong_type_or_range_is_refused_naming_the_field(tmp_path, name):
    damage, message = BAD_METADATA[name]
    path = tmp_path / "learner.npz"
    _save(path, epsilon=0.05, alpha=0.1, env_steps=40)
    damage(path)
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    with pytest.raises(CheckpointError) as error:
        load_checkpoint(path)
    text = str(error.value)
    assert text.startswith(f"{path}: ") and message in text and "\n" not in text, text
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before


def test_unknown_fields_are_ignored_and_optional_ones_may_be_absent(tmp_path):
    """A later bdi-rl may add fields within a format; a checkpoint saved by a tool or a test
    may leave out what a run records."""
    path = tmp_path / "learner.npz"
    _save(path)
    _rewrite(path, meta={**_meta(path), "coming_later": {"anything": [1, None]}})
    checkpoint = load_checkpoint(path)
    assert checkpoint.header.env_steps == 0 and checkpoint.epsilon is None and checkpoint.alpha is None
    assert checkpoint.lineage is None and checkpoint.prior_episodes == 0 and checkpoint.meta["coming_later"]


def test_a_format_1_checkpoint_still_loads(tmp_path):
    """What the first bdi-rl wrote: no checksum, dtype, alpha or lineage."""
    path = tmp_path / "learner.npz"
    _save(path)
    legacy = {
        "format": 1,
        "agent": "learner",
        "env": FROZEN_4X4,
        "learning": {"alpha": 0.1},
        "episodes": 5,
        "env_steps": 30,
        "epsilon": 0.5,
        "shape": [16, 4],
        "created": 1.7e9,
    }
    _rewrite(path, meta=legacy)
    checkpoint = load_checkpoint(path)
    assert checkpoint.checksum is None and checkpoint.header.episodes == 5 and checkpoint.epsilon == 0.5


def test_a_file_named_like_a_checkpoint_but_not_an_archive_of_arrays(tmp_path):
    path = tmp_path / "learner.npz"
    np.save(path, np.zeros((16, 4)))  # a bare .npy array, not an archive
    (tmp_path / "learner.npz.npy").rename(path)
    with pytest.raises(CheckpointError, match="not a readable checkpoint"):
        load_checkpoint(path)
    with zipfile.ZipFile(path, "w") as archive:  # members that are not .npy arrays
        archive.writestr("q", b"1,2,3")
        archive.writestr("meta", b"{}")
    with pytest.raises(CheckpointError, match=r"not a bdi-rl Q-table checkpoint \(arrays \['meta', 'q'\]"):
        load_checkpoint(path)


def test_an_archive_that_expands_beyond_any_table_is_not_read(tmp_path):
    """A real zip bomb: a q member of 300 MiB of zeros (~0.3 MiB on disk) beside good
    metadata; refused from the archive's directory, before a byte of it is inflated."""
    from bdi_rl.rl.checkpoint import MAX_TABLE_BYTES

    path = tmp_path / "learner.npz"
    _save(path)
    with zipfile.ZipFile(path) as good:
        meta = good.read("meta.npy")
    rows = (300 << 20) // (4 * 8)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as bomb:
        bomb.writestr("meta.npy", meta)
        with bomb.open("q.npy", "w", force_zip64=True) as member:
            np.lib.format.write_array_header_1_0(member, {"descr": "<f8", "fortran_order": False, "shape": (rows, 4)})
            zeros = bytes(1 << 20)
            for _ in range(300):
                member.write(zeros)
    assert path.stat().st_size < 2 << 20
    with pytest.raises(
        CheckpointError,
        match=rf"array q is \d+ bytes uncompressed; a checkpoint holds at most "
        rf"{MAX_TABLE_BYTES}",
    ):
        load_checkpoint(path)


# -- every reader, through the CLI, on a checkpoint a real run wrote ---------------------------


@pytest.fixture(scope="module")
def killed_run(tmp_path_factory):
    """A real (tiny) run's directory, as a killed run leaves it: no summary yet."""
    from tests.conftest import MINIMAL_SPEC, run_cli

    base = tmp_path_factory.mktemp("written")
    (base / "spec.toml").write_text(MINIMAL_SPEC.replace("episodes = 20", "episodes = 3"))
    result = run_cli("run", str(base / "spec.toml"), "--runs", str(base / "runs"), "--no-progress")
    assert result.returncode == 0, result.stderr
    run_dir = next((base / "runs").iterdir())
    (run_dir / "summary.json").unlink()
    return run_dir


def test_what_a_run_writes_is_read_back_typed(killed_run, capsys):
    from bdi_rl.cli import main

    checkpoint = load_checkpoint(killed_run / "qtables" / "learner.npz")
    header = checkpoint.header
    assert (header.format, header.agent, header.run, header.episodes, header.total_episodes) == (
        2,
        "learner",
        killed_run.name,
        3,
        3,
    )
    assert header.env is not None and header.env.env_id == "FrozenLake-v1" and header.env.kwargs == {"grid": "4x4"}
    assert header.env_kwargs == {"map_name": "4x4", "is_slippery": False} and header.task.desc[0] == "SFFF"
    assert header.warm_start is None and header.spec_hash.startswith("sha256:") and header.learning["gamma"] == 0.99
    assert 0 < header.env_steps and 0 <= checkpoint.epsilon <= 1 and 0 < checkpoint.alpha <= 1
    path = str(killed_run / "qtables" / "learner.npz")
    assert main(["qtable", "show", path]) == 0 and main(["qtable", "diff", path, path]) == 0
    out = capsys.readouterr().out
    assert "learner of run " + killed_run.name in out and "greedy policy" in out


def _entry_points(case_dir, run_dir):
    table = str(case_dir / "learner.npz")
    return {
        "qtable show": ["qtable", "show", table],
        "qtable diff": ["qtable", "diff", str(run_dir / "qtables" / "learner.npz"), table],
        "run --warm-start": [
            "run",
            str(run_dir / "spec.toml"),
            "--warm-start",
            table,
            "--runs",
            str(case_dir / "runs"),
            "--no-progress",
        ],
        "run --resume": ["run", "--resume", str(case_dir / run_dir.name), "--no-progress"],
    }


@pytest.mark.parametrize("entry", ["qtable show", "qtable diff", "run --warm-start", "run --resume"])
@pytest.mark.parametrize(
    "name", ["episodes a word", "epsilon NaN", "env a number", "alpha zero", "total_episodes below episodes"]
)
def test_every_reader_refuses_bad_metadata_in_one_line(killed_run, tmp_path, capsys, entry, name):
    """``qtable show``/``diff``, a warm start and a resume all read through the one schema:
    exit status 2, one line naming the file and the field, nothing written."""
    import shutil

    from bdi_rl.cli import main

    damage, message = BAD_METADATA[name]
    run_copy = tmp_path / killed_run.name  # the directory's name is the run's
    shutil.copytree(killed_run, run_copy)
    table = run_copy / "qtables" / "learner.npz" if entry == "run --resume" else tmp_path / "learner.npz"
    shutil.copy(killed_run / "qtables" / "learner.npz", table)
    damage(table)
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    status = main(_entry_points(tmp_path, killed_run)[entry])
    lines = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(lines) == 1, lines
    assert str(table) in lines[0] and message in lines[0], lines[0]
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before
    assert not (tmp_path / "runs").exists()


# -- the policy cache that comes along with a warm start: the same rule --------------------------


def _policy_file(path, **changes):
    from bdi_rl.bdi.policycache import CachedPolicy, save_policies

    env = make_env("FrozenLake-v1", {"map_name": "4x4"})
    save_policies(path, "learner", env, {(3, 3): CachedPolicy((3, 3), "1,1,2,2,1,2", 0.9)})
    data = json.loads(path.read_text())
    entry = data["policies"][0]
    for key, value in changes.items():
        (entry if key in entry else data)[key] = value
    path.write_text(json.dumps(data))
    return env


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"confidence": float("nan")}, "not a readable policy cache (DecodeError)"),  # NaN is not JSON
        ({"confidence": 1.5}, "policy cache field policies[0].confidence: expected float <= 1.0"),
        ({"confidence": "high"}, "policy cache field policies[0].confidence: expected float, got str"),
        ({"goal": [9, 9]}, "malformed entry (goal (9, 9) is not a cell of the grid)"),
        ({"goal": [-1, 3]}, "policy cache field policies[0].goal[0]: expected int >= 0"),
        ({"actions": "1, 1"}, "malformed entry (not an action sequence: '1, 1')"),
        ({"actions": "1,4"}, "malformed entry (action out of range 0..3 in '1,4')"),
        ({"policies": {"a": 1}}, "policy cache field policies: expected array, got object"),
        ({"format": 2}, "policy cache field format: invalid enum value 2"),
        ({"env": {"env_id": "Taxi-v4"}}, "made for {'env_id': 'Taxi-v4'}"),
    ],
)
def test_a_bad_policy_cache_file_is_refused_in_one_line(tmp_path, changes, message):
    from bdi_rl.bdi.policycache import PolicyFileError, load_policies

    path = tmp_path / "learner.json"
    env = _policy_file(path, **changes)
    with pytest.raises(PolicyFileError) as error:
        load_policies(path, env)
    assert str(error.value).startswith(f"{path}: ") and message in str(error.value) and "\n" not in str(error.value)


def test_a_policy_cache_that_is_not_json_or_nested_too_deeply(tmp_path):
    from bdi_rl.bdi.policycache import PolicyFileError, load_policies

    path = tmp_path / "learner.json"
    env = _policy_file(path)
    assert load_policies(path, env)[(3, 3)].actions == "1,1,2,2,1,2"  # the file as written loads
    for text in (
        "{",
        "[" * 100_000 + "]" * 100_000,
        '{"format": 1, "env": {"a": ' + "[" * 100_000 + "]" * 100_000 + "}}",
    ):
        path.write_text(text)
        with pytest.raises(PolicyFileError, match="policy cache"):
            load_policies(path, env)
