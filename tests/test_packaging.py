"""``pip install .`` (not only editable) ships the plans and specs and runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT

#: The module the wheel below compiles (all of setup.py's take minutes): it must ship, and run.
COMPILED = "bdi_rl.bdi.runtime.terms"


def test_wheel_ships_plans_and_specs_and_runs(tmp_path: Path):
    wheels, target = tmp_path / "wheels", tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-q", "-w", str(wheels)],
        check=True,
        capture_output=True,
        env={**os.environ, "BDI_RL_COMPILE": COMPILED},
    )
    (wheel,) = wheels.glob("bdi_rl-*.whl")
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(wheel)],
        check=True,
        capture_output=True,
    )
    assert (target / "bdi_rl" / "asl" / "learner.asl").is_file()
    shipped = {p.relative_to(ROOT / "asl") for p in (ROOT / "asl").rglob("*.asl")}
    assert {
        p.relative_to(target / "bdi_rl" / "asl") for p in (target / "bdi_rl" / "asl").rglob("*.asl")
    } == shipped  # lib/ too (included)
    assert (target / "bdi_rl" / "agents" / "frozenlake-4x4.toml").is_file()

    # every module and data file of the package (a sub-package missing from pyproject's list,
    # a grammar or a static file left out of package-data would fail here, not in a user's run)
    def files(root: Path) -> set[Path]:
        skip = {"__pycache__", "_compiled"}  # the checkout's builds: setup.py's own, checked below
        return {p.relative_to(root) for p in root.rglob("*") if p.is_file() and not skip & set(p.parts)}

    missing = files(ROOT / "bdi_rl") - files(target / "bdi_rl")
    assert not missing, sorted(map(str, missing))
    manifest = json.loads((target / "bdi_rl" / "_compiled" / "manifest.json").read_text())
    assert list(manifest["modules"]) == [COMPILED]

    env = {**os.environ, "PYTHONPATH": str(target)}
    where = subprocess.run(
        [sys.executable, "-c", f"import bdi_rl, {COMPILED} as m; print(bdi_rl.__file__); print(m.__file__)"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    package, terms = where.stdout.split()
    assert package.startswith(str(target))  # the installed copy, not the checkout
    assert terms.startswith(str(target / "bdi_rl" / "_compiled")), terms  # and its build of terms.py
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "bdi_rl",
            "run",
            "frozenlake-4x4",
            "--episodes",
            "3",
            "--runs",
            str(tmp_path / "runs"),
            "--no-progress",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    run_dir = Path(result.stdout.strip().splitlines()[-1])
    # the run names the shipped plan as shipped, and the installed copy finds it again
    assert 'asl = "learner.asl"' in (run_dir / "spec.toml").read_text()
    found = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from bdi_rl.spec import load_spec; print(load_spec(sys.argv[1]).agents[0].asl)",
            str(run_dir / "spec.toml"),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert found.stdout.strip() == str((target / "bdi_rl" / "asl" / "learner.asl").resolve())
