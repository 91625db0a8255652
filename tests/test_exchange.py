"""``bdi-rl qtable export`` and ``qtable import``: a run's tables as one file, into another
runs directory as a run of its own that plays and warm-starts like any; a bad file is one
line, exit status 2, and nothing is made."""

from __future__ import annotations

import hashlib
import json
import shutil
import zipfile
from pathlib import Path

import numpy as np
import pytest

from bdi_rl.rl.checkpoint import load_checkpoint, save_checkpoint
from bdi_rl.rl.envs import make_env
from tests.checkpoints import DAMAGED, fingerprint, trained_run
from tests.conftest import run_main


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> Path:
    """A trained run with a policy cache beside its table."""
    run_dir = trained_run(tmp_path_factory.mktemp("exchange") / "runs")
    table = load_checkpoint(run_dir / "qtables" / "learner.npz")
    (run_dir / "policies").mkdir()
    (run_dir / "policies" / "learner.json").write_text(
        json.dumps(
            {
                "format": 1,
                "agent": "learner",
                "env": table.meta["env"],
                "policies": [{"goal": [3, 3], "actions": "1,1,2,2,1,2", "confidence": 1.0}],
            }
        )
    )
    return run_dir


@pytest.fixture(scope="module")
def exported(trained, tmp_path_factory) -> Path:
    file = tmp_path_factory.mktemp("file") / "learner.zip"
    result = run_main("qtable", "export", str(trained), str(file))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"{file}: 1 table(s) (learner), 1 policy cache(s)"
    return file


def test_export_then_import_into_another_runs_directory(trained, exported, tmp_path):
    before = fingerprint(trained)
    with zipfile.ZipFile(exported) as archive:
        assert sorted(archive.namelist()) == ["manifest.json", "policies/learner.json", "qtables/learner.npz"]
        manifest = json.loads(archive.read("manifest.json"))
        assert archive.read("qtables/learner.npz") == (trained / "qtables" / "learner.npz").read_bytes()
    (table,) = manifest["tables"]
    assert manifest["format"] == "bdi-rl.qtables/1" and manifest["source_run"] == trained.name
    assert table["episodes"] == 300 and table["eval"]["success_rate"] == 1.0 and table["lineage"] is None
    other = tmp_path / "elsewhere" / "runs"
    result = run_main("qtable", "import", str(exported), "--runs", str(other))
    assert result.returncode == 0, result.stderr
    (landed,) = other.iterdir()
    assert landed.name.startswith("FrozenLake-v1__det-import__5__") and result.stdout.startswith(str(landed))
    assert (landed / "qtables" / "learner.npz").read_bytes() == (trained / "qtables" / "learner.npz").read_bytes()
    assert (landed / "policies" / "learner.json").read_bytes() == (trained / "policies" / "learner.json").read_bytes()
    summary = json.loads((landed / "summary.json").read_text())
    assert summary["imported"]["from_run"] == trained.name
    assert summary["imported"]["sha256"] == hashlib.sha256(exported.read_bytes()).hexdigest()
    assert summary["agents"]["learner"]["eval"]["success_rate"] == 1.0
    assert fingerprint(trained) == before

    listed = run_main("qtable", "list", str(other))  # the library shows it, imported, verified
    assert listed.returncode == 0 and f"{landed.name} (imported from {trained.name})" in listed.stdout
    played = run_main("play", str(landed), "--policy-only", "--episodes", "100", "--runs", str(other), "--no-progress")
    assert played.returncode == 0, played.stderr  # a colleague plays it: env from the table's metadata
    play_dir = Path(played.stdout.strip().splitlines()[-1])
    assert json.loads((play_dir / "summary.json").read_text())["evaluation"]["agents"]["learner"]["success_rate"] == 1.0

    bare = run_main("qtable", "import", str(trained / "qtables" / "learner.npz"), "--runs", str(other))
    assert bare.returncode == 0, bare.stderr  # a checkpoint alone imports too


def _manifest(file: Path) -> dict:
    with zipfile.ZipFile(file) as archive:
        return json.loads(archive.read("manifest.json"))


def _rebuilt(
    source: Path,
    target: Path,
    manifest: dict | None = None,
    members: dict[str, bytes] | None = None,
    drop: tuple[str, ...] = (),
) -> None:
    """``source``'s archive with its manifest or members replaced (a hostile or damaged export)."""
    with zipfile.ZipFile(source) as archive:
        contents = {name: archive.read(name) for name in archive.namelist() if name not in drop}
    if manifest is not None:
        contents["manifest.json"] = json.dumps(manifest).encode()
    contents.update(members or {})
    with zipfile.ZipFile(target, "w") as archive:
        for name, data in contents.items():
            archive.writestr(name, data)


def _entry_point_table(tmp_path: Path) -> bytes:
    env = make_env("FrozenLake-v1", {"map_name": "4x4"}).state_space_signature()
    path = tmp_path / "t.npz"
    save_checkpoint(path, np.zeros((16, 4)), {"agent": "learner", "episodes": 1, "env": {**env, "env_id": "os:system"}})
    return path.read_bytes()


def _lying_table(tmp_path: Path) -> bytes:
    """A 16-state table whose metadata says it was trained on the 8x8 map."""
    env = make_env("FrozenLake-v1", {"map_name": "4x4"}).state_space_signature()
    path = tmp_path / "t.npz"
    save_checkpoint(
        path, np.zeros((16, 4)), {"agent": "learner", "episodes": 1, "env": env, "env_kwargs": {"map_name": "8x8"}}
    )
    return path.read_bytes()


def _with_table(exported: Path, target: Path, data: bytes) -> None:
    manifest = _manifest(exported)
    manifest["tables"][0]["sha256"] = hashlib.sha256(data).hexdigest()
    manifest["tables"][0]["checksum"] = None
    _rebuilt(exported, target, manifest, {"qtables/learner.npz": data})


BAD_EXPORTS = {
    "not a zip": (lambda e, t, tmp: t.write_bytes(b"PK nope"), "not a bdi-rl export or checkpoint (not a zip archive)"),
    "an empty zip": (lambda e, t, tmp: zipfile.ZipFile(t, "w").close(), "neither a bdi-rl export"),
    "manifest not JSON": (
        lambda e, t, tmp: _rebuilt(e, t, members={"manifest.json": b"{nope"}),
        "manifest.json is not JSON",
    ),
    "another format": (
        lambda e, t, tmp: _rebuilt(e, t, {**_manifest(e), "format": "x/9"}),
        "manifest.json field format",
    ),
    "no tables": (lambda e, t, tmp: _rebuilt(e, t, {**_manifest(e), "tables": []}), "manifest.json field tables"),
    "a path as agent": (
        lambda e, t, tmp: _rebuilt(
            e, t, {**_manifest(e), "tables": [{**_manifest(e)["tables"][0], "agent": "../../etc"}]}
        ),
        "manifest.json field tables[0].agent",
    ),
    "a path as file": (
        lambda e, t, tmp: _rebuilt(
            e, t, {**_manifest(e), "tables": [{**_manifest(e)["tables"][0], "file": "../learner.npz"}]}
        ),
        "not qtables/<agent>.npz",
    ),
    "a member not listed": (
        lambda e, t, tmp: _rebuilt(e, t, members={"../../evil.sh": b"rm -rf /"}),
        "'../../evil.sh' is in the archive but not in its manifest.json",
    ),
    "a listed member missing": (
        lambda e, t, tmp: _rebuilt(e, t, drop=("qtables/learner.npz",)),
        "qtables/learner.npz is named in the manifest but not in the archive",
    ),
    "changed since export": (
        lambda e, t, tmp: _rebuilt(e, t, members={"qtables/learner.npz": b"x" * 100}),
        "its SHA-256 is not the manifest's",
    ),
    "policy cache for nobody": (
        lambda e, t, tmp: _rebuilt(
            e, t, {**_manifest(e), "policies": [{**_manifest(e)["policies"][0], "agent": "someone"}]}
        ),
        "belongs to no table",
    ),
    "a bad policy cache": (
        lambda e, t, tmp: _rebuilt(
            e,
            t,
            {
                **_manifest(e),
                "policies": [{**_manifest(e)["policies"][0], "sha256": hashlib.sha256(b"{}").hexdigest()}],
            },
            {"policies/learner.json": b"{}"},
        ),
        "policies/learner.json: policy cache field",
    ),
    "an env entry point": (
        lambda e, t, tmp: _with_table(e, t, _entry_point_table(tmp)),
        "is for the env entry point 'os:system'",
    ),
    "a table that lies about its env": (
        lambda e, t, tmp: _with_table(e, t, _lying_table(tmp)),
        "table 16x4 vs 64x4 (states x actions)",
    ),
}


@pytest.mark.parametrize("case", [*BAD_EXPORTS, *(f"table: {name}" for name in DAMAGED)])
def test_a_bad_file_is_refused_in_one_line_and_nothing_is_made(exported, tmp_path, case):
    target = tmp_path / "bad.zip"
    if case.startswith("table: "):  # the export holds a damaged checkpoint (its SHA-256 made to match)
        damage, expected = DAMAGED[case.removeprefix("table: ")]
        table = tmp_path / "learner.npz"
        with zipfile.ZipFile(exported) as archive:
            table.write_bytes(archive.read("qtables/learner.npz"))
        damage(table)
        _with_table(exported, target, table.read_bytes())
        expected = expected.removeprefix("learner.npz: ")
    else:
        make, expected = BAD_EXPORTS[case]
        make(exported, target, tmp_path)
    runs = tmp_path / "runs"
    runs.mkdir()
    result = run_main("qtable", "import", str(target), "--runs", str(runs))
    assert result.returncode == 2, result.stdout
    assert result.stderr.startswith("bdi-rl: error: ") and len(result.stderr.splitlines()) == 1, result.stderr
    assert expected in result.stderr and str(target) in result.stderr
    assert list(runs.iterdir()) == []


@pytest.mark.parametrize("case", DAMAGED)
def test_a_damaged_table_is_not_exported(trained, tmp_path, case):
    damage, expected = DAMAGED[case]
    source = tmp_path / "source"
    shutil.copytree(trained, source)
    damage(source / "qtables" / "learner.npz")
    before = fingerprint(source)
    for what in (source, source / "qtables" / "learner.npz"):
        result = run_main("qtable", "export", str(what), str(tmp_path / "out.zip"))
        assert result.returncode == 2 and expected in result.stderr and len(result.stderr.splitlines()) == 1
    assert not (tmp_path / "out.zip").exists() and fingerprint(source) == before


def test_export_and_import_refuse_what_is_not_there(tmp_path):
    assert (
        "no such run directory or checkpoint file"
        in run_main("qtable", "export", str(tmp_path / "x"), str(tmp_path / "o.zip")).stderr
    )
    (tmp_path / "empty").mkdir()
    assert (
        "no Q-table checkpoint to export"
        in run_main("qtable", "export", str(tmp_path / "empty"), str(tmp_path / "o.zip")).stderr
    )
    assert "no such file" in run_main("qtable", "import", str(tmp_path / "x.zip"), "--runs", str(tmp_path / "r")).stderr
    assert not (tmp_path / "r").exists() and not (tmp_path / "o.zip").exists()
