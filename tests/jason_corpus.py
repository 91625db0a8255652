"""The differential corpus against Jason 3.2.2: programs with Jason's recorded output.

``tests/jason/<category>/<name>.asl`` is a one-agent program (the agent is named after the
file, as ``run-jason`` names it); ``tests/jason/<category>/<name>/*.asl`` is a program of
several agents, one per file. ``<name>.out`` beside it holds exactly the lines Jason printed
(``[agent] text``, in Jason's order). A program Jason refuses has an ``.out`` whose first line
is ``#refused line N`` (the line of Jason's parse error), followed by Jason's message as
``#`` comments. Lines that do not start with ``[`` are comments.

This module is the instrument, not a test: it runs every program on bdi-rl's runtime
in-process and says, per program, whether it printed the same lines (``same``), other lines
(``different``, with a diff), was refused at load (``refused``: the error), was accepted
though Jason refuses it (``accepted``), or raised (``crashed``).

    python -m tests.jason_corpus [--cycle jason|fast] [--category C] [--show-diff] [NAME ...]
    python -m tests.jason_corpus --record --jason ../shared/jason/run-jason [NAME ...]

``--record`` runs the programs on the real Jason (each at least twice) and writes the
``.out`` files of those whose output is the same on every run; the others are reported as
unstable and not written. The tests never need Java: only recording does.

The in-process host gives the agents what Jason's local infrastructure gives them: messages
between the agents by name, a clock (virtual: when every agent waits, it jumps to the
earliest deadline, so ``.wait(500)`` costs nothing), and the MAS's actions (``.all_names``,
``.broadcast``, ``.stopMAS``: the run stops after that cycle, ``.create_agent`` from a file
beside the creator's, ``.kill_agent``). The agents take one reasoning cycle each in turn,
in the order of their names, an agent created in the order of creation. ``--cycle``
chooses the agents' reasoning cycle: ``jason`` (the default; the conformance that counts)
or ``fast``.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import os
import re
import signal
import subprocess
import sys
import tomllib
import traceback
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bdi_rl.bdi.runtime import Actions, Agent, Host, PlanFailure, load_agent
from bdi_rl.bdi.runtime.agent import CYCLE_NAMES
from bdi_rl.bdi.runtime.errors import AslSyntaxError
from bdi_rl.bdi.runtime.terms import term_str

CORPUS = Path(__file__).parent / "jason"
#: Reasoning cycles (all agents together) before a run is cut.
STEP_BUDGET = 200_000
#: Seconds of wall time a program may take on bdi-rl before it is reported as crashed.
WALL_LIMIT = 20
#: Seconds the recorder lets Jason run (a program Jason refuses makes it hang to this).
JASON_TIMEOUT = 10
REFUSED = re.compile(r"#refused line (\d+)")
CAUSES = CORPUS / "causes.toml"


@dataclass(frozen=True)
class Program:
    """One corpus program: its agents' files (name -> path) and its recorded output."""

    name: str  # "category/name"
    agents: tuple[tuple[str, Path], ...]
    expected_path: Path

    @property
    def category(self) -> str:
        return self.name.split("/", 1)[0]

    def expected(self) -> list[str]:
        return [line for line in self.expected_path.read_text().splitlines() if line.startswith("[")]

    def refused_line(self) -> int | None:
        """The line of Jason's parse error, when Jason refuses the program."""
        if not self.expected_path.exists():
            return None
        first = self.expected_path.read_text().split("\n", 1)[0]
        match = REFUSED.fullmatch(first.strip())
        return int(match.group(1)) if match else None


def discover(root: Path = CORPUS, category: str | None = None, names: list[str] | None = None) -> list[Program]:
    """Every program under ``root`` (recorded or not), sorted by name."""
    programs = []
    for cat in sorted(p for p in root.iterdir() if p.is_dir()):
        if category is not None and cat.name != category:
            continue
        for entry in sorted(cat.iterdir()):
            if entry.is_dir():
                files = sorted(entry.glob("*.asl"))
                agents = tuple((f.stem, f) for f in files)
            elif entry.suffix == ".asl":
                agents = ((entry.stem, entry),)
            else:
                continue
            name = f"{cat.name}/{entry.stem}"
            if names and not any(n == name or n == entry.stem or n == cat.name for n in names):
                continue
            programs.append(Program(name, agents, cat / f"{entry.stem}.out"))
    return programs


# -- running a program on bdi-rl -----------------------------------------------------------------
class CorpusHost(Host):
    """Jason's local infrastructure for a handful of in-process agents."""

    def __init__(self) -> None:
        self.agents: dict[str, Agent] = {}
        self.files: dict[str, Path] = {}
        """each agent's plan file (a created agent's source is beside its creator's)"""
        self.printed: list[str] = []
        self.clock = 0.0
        self.stopped = False
        self.sent = 0

    def print(self, agent: Agent, text: str) -> None:
        # a text of several lines (.printf's %n) is one log record in Jason: its first line
        # carries the agent's name, and the recording keeps only the lines that start so
        first, *_ = text.split("\n")
        self.printed.append(f"[{agent.name}] {first}")

    def now(self) -> float:
        return self.clock

    def send(
        self,
        agent: Agent,
        receiver: Any,
        performative: str,
        content: Any,
        *,
        msg_id: str | None = None,
        in_reply_to: str | None = None,
    ) -> None:
        name = receiver.functor if hasattr(receiver, "functor") else str(receiver)
        to = self.agents.get(name)
        if to is None:  # Jason's local infrastructure: the .send fails
            self.sent += 1
            raise PlanFailure(
                "receiver_not_found",
                f"Receiver '{name}' does not exist! Could not send "
                f"<mid{self.sent},{agent.name},{performative},{name},{term_str(content)}>",
            )
        to.deliver(agent.name_term, performative, content, msg_id, in_reply_to)

    def agent_names(self, agent: Agent) -> list[Any]:
        return [other.name_term for other in self.agents.values()]

    def stop_mas(self, agent: Agent) -> None:
        self.stopped = True

    def create_agent(self, agent: Agent, name: str, source: str | None) -> str:
        given, n = name, 1
        while given in self.agents:  # Jason: bob, bob_1, bob_2 ...
            given, n = f"{name}_{n}", n + 1
        if source is None:
            program = Path(os.devnull)
        else:
            program = self.files[agent.name].parent / source
        try:
            created = load_agent(program, given, corpus_actions(self), self, start=False, cycle=agent.CYCLE)
        except AslSyntaxError as exc:
            raise PlanFailure("internal_action", str(exc)) from None
        self.agents[given] = created
        self.files[given] = program
        created.start()
        return given

    def kill_agent(self, agent: Agent, name: str) -> bool:
        return self.agents.pop(name, None) is not None

    def run(self, budget: int = STEP_BUDGET) -> bool:
        """Round-robin cycles until ``.stopMAS``, nothing left to do, or the budget; True
        when the budget was spent."""
        spent = 0
        while not self.stopped:
            busy = False
            agents = list(self.agents.values())
            for agent in agents:
                if agent.name not in self.agents:  # killed during this round
                    continue
                if agent.cycle():
                    busy = True
                    spent += 1
                if self.stopped:
                    return False
            if spent >= budget:
                return True
            agents = list(self.agents.values())
            if busy or any(_can_go_on(a) for a in agents):
                continue
            deadlines = [d for d in (a.next_deadline() for a in agents) if d is not None]
            if not deadlines:
                return False
            self.clock = max(self.clock, min(deadlines))
        return False


def _can_go_on(agent: Agent) -> bool:
    """Whether the agent has messages or events it may take now (not while an atomic
    intention waits: then only the clock can help)."""
    blocked = agent.atomic is not None and agent.atomic not in agent.running
    return not blocked and bool(agent.inbox or agent.events or agent.tasks)


def corpus_actions(host: CorpusHost) -> Actions:
    return Actions()


@dataclass
class Outcome:
    program: Program
    status: str  # same | different | refused | accepted | crashed
    printed: list[str] = field(default_factory=list)
    detail: str = ""

    def diff(self) -> str:
        if self.status != "different" or self.program.refused_line() is not None:
            return self.detail
        return "\n".join(
            difflib.unified_diff(self.program.expected(), self.printed, "jason", "bdi-rl", lineterm="", n=2)
        )


class _WallClock(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise _WallClock()


@contextlib.contextmanager
def _wall_limit(seconds: int) -> Iterator[None]:
    if seconds <= 0 or not hasattr(signal, "SIGALRM"):
        yield
        return
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def run_program(
    program: Program, budget: int = STEP_BUDGET, wall_limit: int = WALL_LIMIT, cycle: str = "jason"
) -> Outcome:
    """Load and run ``program`` on bdi-rl (its agents on the reasoning cycle ``cycle``) and
    compare with Jason's recorded lines.

    The agents' files are loaded from their directory by their bare names, as Jason's
    project names them (its ``code_src`` annotations read ``"file:alice.asl"``)."""
    host = CorpusHost()
    cwd = os.getcwd()
    os.chdir(program.agents[0][1].parent)
    try:
        with _wall_limit(wall_limit):
            return _run(program, host, budget, cycle)
    except _WallClock:
        return Outcome(program, "crashed", host.printed, f"still running after {wall_limit} s")
    finally:
        os.chdir(cwd)


def _run(program: Program, host: CorpusHost, budget: int, cycle: str) -> Outcome:
    refused_line = program.refused_line()
    try:
        for name, path in program.agents:
            host.agents[name] = load_agent(Path(path.name), name, corpus_actions(host), host, start=False, cycle=cycle)
            host.files[name] = Path(path.name)
    except AslSyntaxError as exc:
        message = str(exc)
        if refused_line is None:
            return Outcome(program, "refused", detail=message)
        if refused_line in error_lines(message):
            return Outcome(program, "same", detail=message)
        return Outcome(program, "different", detail=f"refused, but Jason names line {refused_line}: {message}")
    except _WallClock:
        raise
    except Exception:  # noqa: BLE001 (the runtime's crash is what the harness reports)
        return Outcome(program, "crashed", detail="at load: " + _last_frames())
    if refused_line is not None:
        return Outcome(program, "accepted", detail=f"Jason refuses it at line {refused_line}")
    try:
        for agent in host.agents.values():
            agent.start()
        spent = host.run(budget)
    except _WallClock:
        raise
    except Exception:  # noqa: BLE001 (the runtime's crash is what the harness reports)
        return Outcome(program, "crashed", host.printed, _last_frames())
    if host.printed == program.expected():
        return Outcome(program, "same", host.printed)
    note = f"step budget ({budget} cycles) spent" if spent else ""
    return Outcome(program, "different", host.printed, note)


def error_lines(message: str) -> set[int]:
    """The line numbers an AslSyntaxError's message names (``file:L:C:`` or ``line L``)."""
    found = {int(m) for m in re.findall(r"\.asl:(\d+)", message)}
    found |= {int(m) for m in re.findall(r"\bline (\d+)", message)}
    return found


def _last_frames() -> str:
    lines = traceback.format_exc().strip().splitlines()
    return "\n".join(lines[-5:])


def run_all(programs: list[Program], cycle: str = "jason") -> Iterator[Outcome]:
    for program in programs:
        if not program.expected_path.exists():
            continue
        yield run_program(program, cycle=cycle)


@dataclass(frozen=True)
class Cause:
    """A root cause of differences (``tests/jason/causes.toml``) and the programs it breaks."""

    id: str
    title: str
    jason: str
    programs: tuple[str, ...]


def load_causes(path: Path = CAUSES) -> list[Cause]:
    with path.open("rb") as f:
        entries = tomllib.load(f)["cause"]
    return [Cause(e["id"], e["title"], e.get("jason", ""), tuple(e["programs"])) for e in entries]


def cause_report(outcomes: list[Outcome], causes: list[Cause]) -> list[str]:
    """Per cause, the programs that still differ; then the failing programs no cause names
    and the names a cause lists that are not in the corpus."""
    failing = {o.program.name for o in outcomes if o.status != "same"}
    known = {o.program.name for o in outcomes}
    lines = []
    for cause in sorted(causes, key=lambda c: -len(failing.intersection(c.programs))):
        still = [name for name in cause.programs if name in failing]
        lines.append(f"{len(still):3}/{len(cause.programs):<3} {cause.id}: {cause.title}")
        lines += [f"          {name}" for name in still]
    named = {name for cause in causes for name in cause.programs}
    unclassified = sorted(failing - named)
    if unclassified:
        lines.append(f"{len(unclassified):3}     failing, in no cause:")
        lines += [f"          {name}" for name in unclassified]
    unknown = sorted(named - known)
    if unknown:
        lines.append("not in the corpus: " + ", ".join(unknown))
    return lines


# -- recording Jason's output --------------------------------------------------------------------
def jason_output(program: Program, jason: str, timeout: int = JASON_TIMEOUT) -> tuple[list[str], int]:
    """Runs the program on Jason (``run-jason --raw``): its lines and exit status."""
    env = dict(os.environ, JASON_TIMEOUT=str(timeout))
    paths = [str(path) for _, path in program.agents]
    done = subprocess.run([jason, "--raw", *paths], capture_output=True, text=True, env=env)
    return done.stdout.splitlines(), done.returncode


def recording(raw: list[str], status: int) -> tuple[list[str] | None, str]:
    """The ``.out`` text for one Jason run (None when it cannot be recorded) and a note."""
    prints = [line for line in raw if line.startswith("[")]
    parse_error = next((line for line in raw if "error parsing" in line), None)
    if parse_error is not None:
        text = "\n".join(raw[raw.index(parse_error) :])
        where = re.search(r"at line (\d+)", text) or re.search(r"\.asl:(\d+)\]", text)
        if where is None:
            return None, "parse error without a line: " + parse_error
        message = [f"#{line}" for line in raw[raw.index(parse_error) :][:2]]
        return [f"#refused line {where.group(1)}", *message], "refused"
    if status == 124:
        return None, "no .stopMAS (Jason timed out): " + " | ".join(prints[-3:])
    if status != 0:  # a lexical error ends Jason at once, on stderr, which run-jason does not show
        return None, f"Jason exited with status {status} (a lexical error? run it by hand)"
    return prints, "ok"


def verify(programs: list[Program], jason: str) -> int:
    """Runs each recorded program on Jason once more; returns how many printed otherwise."""
    failures = 0
    for program in programs:
        if not program.expected_path.exists():
            continue
        out, note = recording(*jason_output(program, jason))
        recorded = program.expected_path.read_text().splitlines()
        if out != recorded:
            failures += 1
            print(f"{program.name}: Jason now prints otherwise ({note}): {out}")
    return failures


def record(programs: list[Program], jason: str, runs: int = 2, force: bool = False) -> int:
    """Records each program's output when ``runs`` Jason runs agree; returns the failures."""
    failures = 0
    for program in programs:
        if program.expected_path.exists() and not force:
            continue
        outs: list[list[str]] = []
        for _ in range(runs):
            out, note = recording(*jason_output(program, jason))
            if out is None:
                print(f"{program.name}: NOT RECORDED: {note}")
                failures += 1
                break
            outs.append(out)
        else:
            if any(out != outs[0] for out in outs):
                print(f"{program.name}: UNSTABLE across {runs} runs, not recorded")
                for out in outs:
                    print("   ", out)
                failures += 1
            else:
                program.expected_path.write_text("".join(line + "\n" for line in outs[0]))
                print(f"{program.name}: {note} ({len(outs[0])} lines)")
    return failures


# -- script -----------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.jason_corpus", description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="programs (category/name, name or category)")
    parser.add_argument("--category", help="only this category")
    parser.add_argument("--cycle", choices=CYCLE_NAMES, default="jason", help="the agents' reasoning cycle")
    parser.add_argument("--show-diff", action="store_true", help="show each difference")
    parser.add_argument("--causes", action="store_true", help="the failing programs by root cause (causes.toml)")
    parser.add_argument("--quiet", action="store_true", help="only the summary and the failing programs")
    parser.add_argument("--record", action="store_true", help="record Jason's output (needs --jason)")
    parser.add_argument("--verify", action="store_true", help="run the recorded programs on Jason again and compare")
    parser.add_argument("--force", action="store_true", help="with --record: re-record existing .out files")
    parser.add_argument("--runs", type=int, default=2, help="with --record: Jason runs that must agree")
    parser.add_argument("--jason", default=os.environ.get("RUN_JASON", ""), help="the run-jason script")
    args = parser.parse_args(argv)
    programs = discover(category=args.category, names=args.names or None)
    if (args.record or args.verify) and not args.jason:
        parser.error("--record and --verify need --jason PATH (or RUN_JASON)")
    if args.verify:
        return 1 if verify(programs, args.jason) else 0
    if args.record:
        return 1 if record(programs, args.jason, args.runs, args.force) else 0
    counts: dict[str, int] = {}
    outcomes = list(run_all(programs, args.cycle))
    if args.causes:
        print("\n".join(cause_report(outcomes, load_causes())))
    for outcome in outcomes:
        counts[outcome.status] = counts.get(outcome.status, 0) + 1
        if args.causes or (args.quiet and outcome.status == "same"):
            continue
        print(
            f"{outcome.status:9} {outcome.program.name}"
            + (f"  ({outcome.detail.splitlines()[0]})" if outcome.detail and not args.show_diff else "")
        )
        if args.show_diff and outcome.status != "same":
            text = outcome.diff() if outcome.status == "different" else outcome.detail
            if outcome.status == "different" and outcome.detail:
                text += "\n" + outcome.detail
            print("    " + text.replace("\n", "\n    "))
    total = sum(counts.values())
    same = counts.get("same", 0)
    summary = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    print(f"{same}/{total} print Jason's lines ({100 * same / max(total, 1):.0f} %): {summary}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
