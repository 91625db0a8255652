"""``bdi-rl sweep-worker``: many runs, one after another, in one process (issue 30, start-up
amortised). ``bdi-rl sweep`` starts N of them and hands each a run at a time on stdin, so a
short run costs its work, not an interpreter and its imports.

Each run is what ``bdi-rl run SPEC --seed S --set ...`` makes: its spec loaded and checked, a
new embedded server, new agents and a new run directory, the same ``run_experiment``; nothing
of one run is reused by the next but what is keyed by content (parsed plan files) or made
once per process (library patches, imports). The protocol, one JSON object per line:

- in: ``{"spec": PATH, "seed": S, "episodes": N, "trace": LEVEL, "settings": {PATH: VALUE},
  "runs": DIR}`` (``episodes`` and ``trace`` may be null: the spec's, as ``run`` without
  ``--episodes`` or ``--trace``), or ``{"resume": RUN_DIR}`` (what ``run --resume``
  continues: a run a stopped sweep left unfinished);
- out: ``bdi-rl run-dir: PATH`` as soon as the run directory exists (as ``run
  --announce-run-dir`` says it), then ``bdi-rl run-result: {"status": "finished" | "failed" |
  "stopped", "error": LINE, "exit_code": N, "retiring": BOOL}`` when it is over: the error
  line and exit status ``bdi-rl run`` would have had, and whether this worker ends now.

SIGINT or SIGTERM stop the run in hand as they stop ``bdi-rl run`` (tables and summary
saved), report it stopped, and end the worker. End of input ends it too, and so does its
:data:`RUNS_PER_WORKER`-th run, then the queue starts a fresh worker: a bound on what a
long-lived process may gather that no run holds (its memory stays flat once the heap is
frozen once per process, ``xmpp.runner.start_agents``; frozen at every run it grew ~2.8 MB
a climbing run), so start-up is still paid once per that many runs.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from bdi_rl.cli.errors import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK, is_user_error, say_user_error
from bdi_rl.cli.process import until_signalled
from bdi_rl.garbage import between_runs

#: Runs one worker process makes before it ends and a fresh one takes over
#: (``$BDI_RL_RUNS_PER_WORKER`` sets another).
RUNS_PER_WORKER = 200


def _runs_per_worker() -> int:
    try:
        return max(1, int(os.environ.get("BDI_RL_RUNS_PER_WORKER", RUNS_PER_WORKER)))
    except ValueError:
        return RUNS_PER_WORKER


def _say(status: str, error: str | None = None, retiring: bool = False, exit_code: int = EXIT_OK) -> None:
    """The run's result, with the exit status ``bdi-rl run`` would have had; ``retiring``:
    this worker takes no more runs (it ends now)."""
    from bdi_rl.control.workers import WORKER_RESULT

    said = {"status": status, "error": error, "retiring": retiring, "exit_code": exit_code}
    print(WORKER_RESULT + json.dumps(said), flush=True)


def _say_failed(exc: Exception, retiring: bool) -> None:
    """A run that raised, said as ``bdi-rl run`` says it on stderr: bad input (exit status
    2), or what failed (1)."""
    from bdi_rl.crashlog import one_line

    if is_user_error(exc):
        _say("failed", f"bdi-rl: error: {say_user_error(exc)}", retiring, EXIT_BAD_INPUT)
    else:
        _say("failed", f"bdi-rl: error: run failed: {one_line(exc)}", retiring, EXIT_FAILED)


def cmd_sweep_worker(_args: argparse.Namespace) -> int:
    from bdi_rl.control.jobs import EXIT_INTERRUPTED, announce_run_dir
    from bdi_rl.xmpp.runtime import event_loop

    loop = event_loop()
    done, last = 0, _runs_per_worker()
    for line in sys.stdin:
        if not line.strip():
            continue
        if done:
            between_runs()
        done += 1
        try:
            request = json.loads(line)
            work = _prepared(request)
        except Exception as exc:  # noqa: BLE001 - a bad request is this run's failure, not the worker's
            _say_failed(exc, done >= last)
            if done >= last:
                return EXIT_OK
            continue
        try:
            result = until_signalled(loop, work(announce_run_dir))
        except KeyboardInterrupt:
            _say("stopped", retiring=True, exit_code=EXIT_INTERRUPTED)
            return EXIT_INTERRUPTED
        except Exception as exc:  # noqa: BLE001 - the run failed; the next one starts afresh
            _say_failed(exc, done >= last)
            if done >= last:
                return EXIT_OK
            continue
        if result.summary.get("interrupted"):
            _say("stopped", retiring=True, exit_code=EXIT_INTERRUPTED)
            return EXIT_INTERRUPTED
        failures = dict(result.failures)
        said = "; ".join(f"{a}: {r}" for a, r in failures.items()) or None
        _say("failed" if failures else "finished", said, done >= last, EXIT_FAILED if failures else EXIT_OK)
        if done >= last:
            return EXIT_OK
    return EXIT_OK


def _prepared(request: dict[str, Any]) -> Any:
    """The run a request asks for, checked as ``bdi-rl run`` checks it; a callable taking the
    run-directory announcer and returning the run's coroutine."""
    from bdi_rl.cli.agents import resumable_run
    from bdi_rl.cli.checks import check_runs
    from bdi_rl.spec import load_spec
    from bdi_rl.xmpp.runner import run_experiment
    from bdi_rl.xmpp.setup import prepare_experiment

    if request.get("resume"):
        run_dir = Path(request["resume"])
        spec, writer = resumable_run(run_dir)
        try:
            resumed_setups = prepare_experiment(spec, resume=run_dir)
        except BaseException:
            writer.release()
            raise

        def resume(on_run_dir: Any) -> Any:
            return run_experiment(
                spec, run_dir.parent, resume=run_dir, writer=writer, setups=resumed_setups, on_run_dir=on_run_dir
            )

        return resume
    overrides = {key: request.get(key) for key in ("seed", "episodes", "trace")}  # as run's options
    spec = load_spec(Path(request["spec"]), overrides, request.get("settings") or {})
    runs = Path(request["runs"])
    check_runs(runs)
    setups = prepare_experiment(spec)
    runs.mkdir(parents=True, exist_ok=True)

    def start(on_run_dir: Any) -> Any:
        return run_experiment(spec, runs, setups=setups, on_run_dir=on_run_dir)

    return start
