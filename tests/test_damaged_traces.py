"""Readers never show a number from a damaged trace (issue 26).

A trace edited in its middle (a line written twice, one lost, garbage, a field of the wrong
type, a line of another run or agent, a step record out of turn, NUL bytes ...) goes through
every reader command, by the CLI's own error boundary: each refuses it in one line naming
``trace.jsonl:LINE`` and what is wrong, exit status 2, writes nothing and leaves the run as it
was; with ``--skip-damaged`` each reads around the damaged lines and says so on stderr, and
what it shows holds no number the sound trace does not. The check is the one ``run --resume``
applies (``trace.check.TraceChecker``), made where the trace is indexed (``readers.runindex``).
The viewer's side (the run marked damaged, the others served) is in tests/test_viewer_damage.py.
"""

from __future__ import annotations

import csv
import shutil
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from bdi_rl.trace.reading import MAX_LINE_BYTES
from tests.conftest import run_main, run_named

Lines = list[bytes]


def _event(line: bytes, **fields: object) -> bytes:
    """``line`` with ``fields`` replaced, as a writer would write it (orjson, one line)."""
    return orjson.dumps({**orjson.loads(line), **fields}) + b"\n"


def _record(line: bytes, change: Callable[[dict], None]) -> bytes:
    event = orjson.loads(line)
    change(event["data"])
    return orjson.dumps(event) + b"\n"


def _middle(lines: Lines, kind: bytes) -> int:
    """The index of the line of ``kind`` nearest the middle of the trace."""
    found = [i for i, line in enumerate(lines) if b'"kind":"' + kind + b'"' in line]
    return found[len(found) // 2]


def _episode_end(lines: Lines) -> int:
    return _middle(lines, b"episode.end")


def _steps(lines: Lines) -> int:
    return _middle(lines, b"steps")


def _refs_beyond(data: dict) -> None:
    data["refs"][0] = 10**6


def _def0_ahead(data: dict) -> None:
    """The record renumbered as if five definitions had come before it that never did: sound
    in itself, out of turn in its agent's trace."""
    old, new = data["def0"], data["def0"] + 5
    data["def0"] = new
    data["refs"] = [
        r + 5 if r >= old and op not in (6, 7) else r for op, r in zip(data["ops"], data["refs"], strict=False)
    ]
    for refs in (data.get("keyframe") or {}).values():
        refs[:] = [r + 5 if r >= old else r for r in refs]


#: name -> (the damage: the trace's lines -> (damaged lines, 0-based index of the line named),
#: what the refusal says). Each is done to a run's trace as a person or a crash would.
DAMAGE: dict[str, tuple[Callable[[Lines], tuple[Lines, int]], str]] = {
    "an episode.end written twice": (
        lambda ls: (ls[: (e := _episode_end(ls)) + 1] + [ls[e]] + ls[e + 1 :], e + 1),
        "where the trace needs",
    ),
    "a line deleted": (lambda ls: (ls[: (e := _episode_end(ls))] + ls[e + 1 :], e), "where the trace needs"),
    "a garbage line": (lambda ls: (ls[: (e := _episode_end(ls))] + [b"hello world\n"] + ls[e:], e), "not JSON"),
    'a "return": "lots"': (
        lambda ls: (
            ls[: (e := _episode_end(ls))]
            + [_event(ls[e], data={**orjson.loads(ls[e])["data"], "return": "lots"})]
            + ls[e + 1 :],
            e,
        ),
        "episode.end data: Expected `float | null`, got `str` - at `data.return`",
    ),
    "two lines swapped": (
        lambda ls: (ls[: (e := _episode_end(ls))] + [ls[e + 1], ls[e]] + ls[e + 2 :], e),
        "where the trace needs",
    ),
    "a foreign agent's line": (
        lambda ls: (ls[: (e := _episode_end(ls))] + [_event(ls[e], agent="mallory@localhost")] + ls[e:], e),
        "of mallory@localhost where the trace needs 0",
    ),
    "a line from another run": (
        lambda ls: (ls[: (e := _episode_end(ls))] + [_event(ls[e], run="FrozenLake-v1__other__1__1")] + ls[e + 1 :], e),
        "an event of run 'FrozenLake-v1__other__1__1'",
    ),
    "a wrong schema": (
        lambda ls: (ls[: (e := _episode_end(ls))] + [_event(ls[e], schema="bdi-rl.trace/7")] + ls[e + 1 :], e),
        "event schema is not",
    ),
    "an unknown kind": (
        lambda ls: (ls[: (e := _episode_end(ls))] + [_event(ls[e], kind="episode.ended")] + ls[e + 1 :], e),
        "unknown event kind 'episode.ended'",
    ),
    "a seq that is no number": (
        lambda ls: (ls[: (e := _episode_end(ls))] + [_event(ls[e], seq="12")] + ls[e + 1 :], e),
        "Expected `int`, got `str` - at `$.seq`",
    ),
    "NaN": (
        lambda ls: (
            ls[: (e := _episode_end(ls))] + [ls[e].replace(b'"epsilon":', b'"epsilon":NaN,"x":', 1)] + ls[e + 1 :],
            e,
        ),
        "not JSON",
    ),
    "a truncated middle line": (
        lambda ls: (ls[: (s := _steps(ls))] + [ls[s][:150] + b"\n"] + ls[s + 1 :], s),
        "not JSON",
    ),
    "a steps record written twice": (
        lambda ls: (ls[: (s := _steps(ls)) + 1] + [ls[s]] + ls[s + 1 :], s + 1),
        "where the trace needs",
    ),
    "a step record referring to an unknown definition": (
        lambda ls: (ls[: (s := _steps(ls))] + [_record(ls[s], _refs_beyond)] + ls[s + 1 :], s),
        "refers to 1000000, which the record does not hold",
    ),
    "a step record numbering its definitions out of turn": (
        lambda ls: (ls[: (s := _steps(ls))] + [_record(ls[s], _def0_ahead)] + ls[s + 1 :], s),
        "steps data: def0",
    ),
    "a run of NUL bytes": (
        lambda ls: (ls[: (e := _episode_end(ls))] + [b"\x00" * 4096 + b"\n"] + ls[e + 1 :], e),
        "not JSON",
    ),
    "NUL bytes longer than any line": (
        lambda ls: (ls[: (e := _episode_end(ls))] + [b"\x00" * (MAX_LINE_BYTES + 7) + b"\n"] + ls[e:], e),
        f"longer than any trace line ({MAX_LINE_BYTES} bytes)",
    ),
    "a blank line": (lambda ls: (ls[: (e := _episode_end(ls))] + [b"\n"] + ls[e:], e), "not JSON"),
    "a tail of NUL bytes": (lambda ls: (ls + [b"\x00" * 300], len(ls)), "NUL bytes: not a line being written"),
}


#: Every reader command of one run, with the file or directory it would write ("" for none).
COMMANDS: list[tuple[str, ...]] = [
    ("export", "{run}", "--csv", "{out}/rows.csv"),
    ("export", "{run}", "--tensorboard", "{out}/tb"),
    ("inspect", "{run}", "--agent", "learner"),
    ("inspect", "{run}", "--agent", "learner", "--episode", "3"),
    ("plot", "{run}", "-o", "{out}/curves.png"),
    ("search", "{run}", "pos(X, Y)"),
    ("render", "{run}", "--agent", "learner", "--episode", "2", "-o", "{out}/episode.gif"),
]


@pytest.fixture(scope="module")
def source(runs) -> Path:
    """A finished step-level run (one learner, 20 episodes), written as a run writes it."""
    return run_named(runs, "tiny")


def _damaged_run(source: Path, into: Path, name: str) -> tuple[Path, int]:
    """A copy of ``source`` whose trace has the damage ``name``; (its directory, the
    damaged line's number from 1)."""
    run_dir = into / source.name
    shutil.copytree(source, run_dir)
    lines = (source / "trace.jsonl").read_bytes().splitlines(keepends=True)
    damaged, at = DAMAGE[name][0](lines)
    assert damaged != lines
    (run_dir / "trace.jsonl").write_bytes(b"".join(damaged))
    return run_dir, at + 1


def _snapshot(run_dir: Path) -> dict[str, tuple[bytes, int]]:
    """Every file of the run, byte for byte, with its modification time."""
    return {
        str(p.relative_to(run_dir)): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(run_dir.rglob("*"))
        if p.is_file()
    }


def _args(command: tuple[str, ...], run_dir: Path, out: Path) -> list[str]:
    return [part.format(run=run_dir, out=out) for part in command]


@pytest.mark.parametrize("name", DAMAGE)
def test_every_reader_refuses_a_damaged_trace_in_one_line(source, tmp_path, name):
    run_dir, line = _damaged_run(source, tmp_path / "runs", name)
    trace, reason = run_dir / "trace.jsonl", DAMAGE[name][1]
    before = _snapshot(run_dir)
    for command in COMMANDS:
        out = tmp_path / "out"
        out.mkdir()
        result = run_main(*_args(command, run_dir, out))
        said = result.stderr
        assert result.returncode == 2, (command, said)
        assert said.startswith(f"bdi-rl: error: {trace}:{line}: ") and said.count("\n") == 1, (command, said)
        assert reason in said and "--skip-damaged" in said, (command, said)
        assert result.stdout == "", command
        assert list(out.iterdir()) == [], command  # nothing written, not even a directory
        out.rmdir()
        assert _snapshot(run_dir) == before, command  # the run is only read


def _csv_rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _key(row: dict[str, str]) -> tuple[str, ...]:
    """A row without its run (a copy's name) and its cumulative env steps (after an episode
    read around they count the steps of the episodes read: the notice says some are not)."""
    return tuple(v for k, v in row.items() if k not in ("run", "global_step"))


@pytest.mark.parametrize("name", DAMAGE)
def test_export_reads_around_damaged_lines_only_when_told_and_says_so(source, tmp_path, name):
    """``--skip-damaged``: one warning line naming the first damaged line, the rows of the
    sound lines only: every row one of the sound trace's, none twice, none lost but the
    damaged lines' own."""
    sound = tmp_path / "sound.csv"
    assert run_main("export", str(source), "--csv", str(sound)).returncode == 0
    expected = [_key(row) for row in _csv_rows(sound)]
    run_dir, line = _damaged_run(source, tmp_path / "runs", name)
    before = _snapshot(run_dir)
    out = tmp_path / "rows.csv"
    result = run_main("export", str(run_dir), "--csv", str(out), "--skip-damaged")
    assert result.returncode == 0, result.stderr
    trace = run_dir / "trace.jsonl"
    assert result.stderr.startswith(f"bdi-rl: warning: {trace}:{line}: {''}") and result.stderr.count("\n") == 1
    assert DAMAGE[name][1] in result.stderr and "read around" in result.stderr
    assert "damaged trace" in result.stdout  # beside the count of rows, too
    got = [_key(row) for row in _csv_rows(out)]
    assert len(set(got)) == len(got) and set(got) <= set(expected)
    assert len(got) >= len(expected) - 2  # at most what the damaged lines held (two swapped: one)
    assert _snapshot(run_dir) == before


@pytest.mark.parametrize(
    "name",
    [
        "a line deleted",
        'a "return": "lots"',
        "a step record referring to an unknown definition",
        "NUL bytes longer than any line",
    ],
)
def test_every_reader_reads_around_when_told(source, tmp_path, name):
    run_dir, line = _damaged_run(source, tmp_path / "runs", name)
    for command in COMMANDS:
        out = tmp_path / "out"
        out.mkdir(exist_ok=True)
        result = run_main(*_args(command, run_dir, out), "--skip-damaged")
        assert result.returncode == 0, (command, result.stderr)
        warnings = result.stderr.splitlines()
        assert warnings and all(w.startswith(f"bdi-rl: warning: {run_dir / 'trace.jsonl'}:{line}: ") for w in warnings)
        assert len(warnings) == 1, (command, warnings)
    inspected = run_main("inspect", str(run_dir), "--agent", "learner", "--skip-damaged")
    assert "DAMAGED TRACE, read around" in inspected.stdout  # on screen as well


def test_a_torn_last_line_is_no_damage(source, tmp_path):
    """A run still writing its trace (or killed while it did) ends in a torn line: readers read
    the complete lines before it and say nothing of it."""
    run_dir = tmp_path / "runs" / source.name
    shutil.copytree(source, run_dir)
    lines = (source / "trace.jsonl").read_bytes().splitlines(keepends=True)
    (run_dir / "trace.jsonl").write_bytes(b"".join(lines[:-3]) + lines[-3][: len(lines[-3]) // 2])
    for command in COMMANDS:
        out = tmp_path / "out"
        out.mkdir(exist_ok=True)
        result = run_main(*_args(command, run_dir, out))
        assert result.returncode == 0 and result.stderr == "", (command, result.stderr)
