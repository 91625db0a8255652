"""Start-up of the one-role-per-process commands (issue 33): ``bdi-rl telemetry`` until it is
ready for agents (its ``--ready-file``), and ``bdi-rl agent`` until its first env step, against
a private ejabberd on loopback (Debian's, configured by compose/ejabberd.yml, as the tests
start it).

Each round starts telemetry, waits for its ready file, then starts the learner of a one-episode
FrozenLake 4x4 spec traced at step level; the agent's first env step is the time stamp of its
first ``steps`` record in the trace telemetry wrote, less the moment the agent process started.

    python bench/bench_startup_roles.py --rounds 5 [--checkout NAME=PATH ...]

``--checkout`` adds another worktree of bdi-rl (e.g. the commit before a change), run in
turn with this one in every round (A B A B...), as bench_startup.py does.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench_startup import first_step, process_env  # noqa: E402

from tests.ejabberd import remove, start_ejabberd  # noqa: E402

SPEC = """name = "startup"
seed = 1
episodes = 1
eval_episodes = 1
trace = "step"

[env]
id = "FrozenLake-v1"
kwargs = { map_name = "4x4", is_slippery = true }

[learning]
alpha = 0.1

[[agents]]
name = "learner"
asl = "learner.asl"
mode = "step"
"""


def _round(checkout: Path, spec: Path, xmpp: str, folder: Path) -> tuple[float, float, float]:
    """Telemetry ready, agent's first env step, agent's whole process (s)."""
    env = {**process_env(checkout), "BDI_RL_XMPP_PASSWORD": "bench-startup-password"}
    runs, ready = folder / "runs", folder / "ready"
    command = [sys.executable, "-m", "bdi_rl"]
    began = time.perf_counter()
    telemetry = subprocess.Popen(
        [*command, "telemetry", str(spec), "--xmpp", xmpp, "--runs", str(runs), "--ready-file", str(ready)],
        cwd=checkout,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    while not ready.exists():
        if telemetry.poll() is not None:
            raise RuntimeError("telemetry exited before it was ready")
        time.sleep(0.002)
    telemetry_ready = time.perf_counter() - began
    started_epoch, began = time.time(), time.perf_counter()
    subprocess.run(
        [*command, "agent", str(spec), "--name", "learner", "--xmpp", xmpp, "--runs", str(runs)],
        cwd=checkout,
        env=env,
        check=True,
        capture_output=True,
    )
    whole = time.perf_counter() - began
    if telemetry.wait(timeout=60) != 0:
        raise RuntimeError("telemetry failed")
    first = first_step(runs, started_epoch)
    if first is None:
        raise RuntimeError(f"no steps record in {runs}")
    return telemetry_ready, first, whole


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--checkout", action="append", default=[], metavar="NAME=PATH")
    args = parser.parse_args()
    checkouts = {"this checkout": ROOT}
    for item in args.checkout:
        name, _, path = item.partition("=")
        checkouts[name] = Path(path).resolve()
    server = start_ejabberd()
    results: dict[str, list[tuple[float, float, float]]] = {name: [] for name in checkouts}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            spec = Path(tmp) / "startup.toml"
            spec.write_text(SPEC)
            for round_ in range(args.rounds):
                for index, (name, checkout) in enumerate(checkouts.items()):
                    folder = Path(tmp) / f"{round_}-{index}"
                    folder.mkdir()
                    results[name].append(_round(checkout, spec, f"localhost:{server.port}", folder))
                    shutil.rmtree(folder)
    finally:
        remove(server)
    print("| command | checkout | ready, s: median (min-max) |")
    print("|---|---|---:|")
    names = (
        "bdi-rl telemetry (ready file)",
        "bdi-rl agent (first env step)",
        "bdi-rl agent (whole process, 1 episode)",
    )
    for index, command in enumerate(names):
        for name, rounds in results.items():
            values = [result[index] for result in rounds]
            print(f"| {command} | {name} | {statistics.median(values):.3f} ({min(values):.3f}-{max(values):.3f}) |")


if __name__ == "__main__":
    main()
