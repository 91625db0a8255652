"""The bad-input corpus: malformed and hostile input of every kind bdi-rl takes, in one place,
each case through the entry point that really receives it.

- Files (plan files, specs, Q-tables) through ``bdi-rl`` itself: exit status 2 and one line
  ``bdi-rl: error: ...`` naming the file or the field; no run directory; no input file changed.
- BDI messages to a running agent and trace batches to a running telemetry agent, over a real
  XMPP server: each refused, counted and logged; the agent or telemetry goes on working, and
  the trace file holds only the good events.
- URLs and raw requests to the viewer, over a socket to a real listening one: refused with 4xx,
  the security headers and one line (aiohttp's own refusals too: a request line or header over
  8 KB, a malformed request); nothing served from outside the runs; no traceback logged;
  nothing on disk changed; the viewer keeps answering.

Unit-level checks of the same decoders (28 malformed batch bodies in ``test_trace.py``, more
bodies in ``test_wire.py``) and hypothesis fuzzing (``test_fuzz.py``) complement this corpus.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import numpy as np
import orjson
import pytest
import zstandard
from spade.agent import Agent
from spade.behaviour import OneShotBehaviour
from spade.message import Message
from spade.template import Template

from bdi_rl.cli import main as bdi_rl_main
from bdi_rl.readers.viewer import SECURITY_HEADERS
from bdi_rl.trace.batch import (
    ACK_METADATA,
    BATCH_METADATA,
    BATCH_SCHEMA,
    MAX_BODY_CHARS,
    MAX_PAYLOAD_BYTES,
    encode_batch,
)
from bdi_rl.trace.kinds import SCHEMA, TraceLevel
from bdi_rl.trace.reading import read_trace
from bdi_rl.trace.tracer import Tracer
from bdi_rl.xmpp.agent import TracedBdiAgent
from bdi_rl.xmpp.inbox import STRANGER_TELL_BYTES
from bdi_rl.xmpp.server import EmbeddedXmppServer, free_port
from bdi_rl.xmpp.telemetry import TelemetryAgent
from tests.conftest import MINIMAL_SPEC, run_cli
from tests.conftest import run_named as _run_named
from tests.test_agent import _run
from tests.test_checkpoint import _meta, _rewrite, _save

T = TypeVar("T")

# -- files: plan files, specs, Q-tables ---------------------------------------------------------

AGENT = '[[agents]]\nname = "learner"\n'
WITH_BAD_ASL = MINIMAL_SPEC.replace(AGENT, AGENT + 'asl = "bad.asl"\n')
#: A plan file whose only plan is in the file it includes.
_INCLUDES = '!start.\n{{ include("{}") }}\n+!start <- !go.\n'


def _spec(old: str, new: str) -> str:
    assert old in MINIMAL_SPEC
    return MINIMAL_SPEC.replace(old, new)


def _checkpoint(damage: Callable[[Path], None] | None = None) -> Callable[[Path], None]:
    """Writes a valid FrozenLake 4x4 checkpoint at ``path``, then ``damage`` to it."""

    def write(path: Path) -> None:
        _save(path)
        if damage is not None:
            damage(path)

    return write


@dataclass
class FileCase:
    files: dict[str, str | bytes | Callable[[Path], None]]
    argv: list[str]  # "{dir}" is the case's directory
    expected: str
    spec: str | None = MINIMAL_SPEC  # written as spec.toml unless None
    exit_status: int = 2
    add_runs: bool = True  # a ``run`` gets ``--runs <tmp>/runs`` (False: the case names its own)


_RUN = ["run", "{dir}/spec.toml"]
_SHOW = ["qtable", "show", "{dir}/learner.npz"]
_WARM = ["run", "{dir}/spec.toml", "--warm-start", "{dir}/learner.npz"]

FILE_CASES: dict[str, FileCase] = {
    # Plan files (AgentSpeak)
    "asl: syntax error": FileCase(
        {"bad.asl": "!start.\n+!start <- .rl_reset\n+!x <- true.\n"}, _RUN, "bad.asl:3:", WITH_BAD_ASL
    ),
    "asl: unterminated string": FileCase(
        {"bad.asl": '!start.\n+!start <- .print("abc.\n'}, _RUN, "bad.asl", WITH_BAD_ASL
    ),
    "asl: unbalanced parenthesis": FileCase(
        {"bad.asl": "!start.\n+!start <- .rl_choose(S, A.\n"}, _RUN, "bad.asl:2:", WITH_BAD_ASL
    ),
    "asl: unknown internal action": FileCase(
        {"bad.asl": "!start.\n+!start <- .rl_teleport(3).\n"}, _RUN, "unknown internal action", WITH_BAD_ASL
    ),
    "asl: internal action of the wrong arity": FileCase(
        {"bad.asl": "!start.\n+!start <- .rl_act(1, 2, 3).\n"}, _RUN, "rl_act", WITH_BAD_ASL
    ),
    "asl: a Jason action bdi-rl refuses": FileCase(
        {"bad.asl": "!start.\n+!start <- .df_search(s, L).\n"},
        _RUN,
        "bad.asl:2: .df_search is a Jason action bdi-rl does not implement: no directory facilitator",
        WITH_BAD_ASL,
    ),
    "asl: a misspelt action": FileCase(
        {"bad.asl": '!start.\n+!start <- .prnt("x").\n'},
        _RUN,
        "bad.asl:2: unknown internal action .prnt (did you mean .print?)",
        WITH_BAD_ASL,
    ),
    "asl: an agent created from a missing plan file": FileCase(
        {"bad.asl": '!start.\n+!start <- .create_agent(bob, "absent.asl").\n'},
        _RUN,
        "absent.asl: no such plan file (an agent is created from it in ",
        WITH_BAD_ASL,
    ),
    "asl: an agent created from a plan file that does not parse": FileCase(
        {"bad.asl": '!start.\n+!start <- .create_agent(bob, "lib/bob.asl").\n', "lib/bob.asl": "+!go <- .print(.\n"},
        _RUN,
        "lib/bob.asl:1:",
        WITH_BAD_ASL,
    ),
    "asl: initial goal without a plan": FileCase(
        {"bad.asl": "!start.\n+!other <- true.\n"}, _RUN, "no applicable plan for +!start", WITH_BAD_ASL
    ),
    "asl: empty file": FileCase({"bad.asl": ""}, _RUN, "bad.asl: no plans", WITH_BAD_ASL),
    "asl: no agent has an initial goal": FileCase(
        {"bad.asl": "+!other <- true.\n"}, _RUN, "no initial goal", WITH_BAD_ASL
    ),
    "asl: binary file": FileCase({"bad.asl": bytes(range(256)) * 4}, _RUN, "bad.asl: not a text file", WITH_BAD_ASL),
    "asl: missing file": FileCase(
        {}, _RUN, "agents[0].asl: no such plan file", MINIMAL_SPEC.replace(AGENT, AGENT + 'asl = "nowhere.asl"\n')
    ),
    # Plan files that include others ({ include("lib/x.asl") }, resolved beside the includer)
    "asl: missing include": FileCase(
        {"bad.asl": _INCLUDES.format("lib/absent.asl")},
        _RUN,
        "lib/absent.asl: no such plan file (included at ",
        WITH_BAD_ASL,
    ),
    "asl: include that does not parse": FileCase(
        {"bad.asl": _INCLUDES.format("lib/broken.asl"), "lib/broken.asl": "+!go <- .rl_reset\n+!x <- true.\n"},
        _RUN,
        "lib/broken.asl:2:",
        WITH_BAD_ASL,
    ),
    "asl: include with an illegal character": FileCase(
        {"bad.asl": _INCLUDES.format("lib/odd.asl"), "lib/odd.asl": "+!go <- .rl_finish. $\n"},
        _RUN,
        "lib/odd.asl:1:21: illegal character",
        WITH_BAD_ASL,
    ),
    "asl: include of a directory": FileCase(
        {"bad.asl": _INCLUDES.format("lib"), "lib/readme": "not a plan file"},
        _RUN,
        "lib: is a directory, not a plan file",
        WITH_BAD_ASL,
    ),
    "asl: include that includes itself": FileCase(
        {"bad.asl": _INCLUDES.format("lib/loop.asl"), "lib/loop.asl": '{ include("./loop.asl") }\n'},
        _RUN,
        "lib/./loop.asl: includes itself (included at ",
        WITH_BAD_ASL,
    ),
    # Specs
    "spec: not TOML": FileCase({}, _RUN, "spec.toml: not valid TOML", "name = [unclosed\n"),
    "spec: empty file": FileCase({}, _RUN, "name: missing required key", ""),
    "spec: binary file": FileCase({"spec.toml": b"\xd2\xff\x00\x9c" * 64}, _RUN, "spec.toml: not a text file", None),
    "spec: a directory": FileCase({"spec.toml/readme": "not a spec"}, _RUN, "is a directory", None),
    "spec: missing file": FileCase({}, ["run", "{dir}/absent.toml"], "absent.toml: no such spec file"),
    "spec: unknown key": FileCase({}, _RUN, "episodez: unknown key", "episodez = 4\n" + MINIMAL_SPEC),
    "spec: unknown env key": FileCase({}, _RUN, "env.nope: unknown key", MINIMAL_SPEC + "[env.nope]\nx = 1\n"),
    "spec: unknown agent key": FileCase(
        {}, _RUN, "agents[0].colour: unknown key", MINIMAL_SPEC.replace(AGENT, AGENT + "colour = 1\n")
    ),
    "spec: seed of the wrong type": FileCase(
        {}, _RUN, "seed: expected an integer", _spec("seed = 3", 'seed = "three"')
    ),
    "spec: fractional episodes": FileCase(
        {}, _RUN, "episodes: expected an integer", _spec("episodes = 20", "episodes = 1.5")
    ),
    "spec: zero episodes": FileCase(
        {}, _RUN, "episodes: expected an integer >= 1, got 0", _spec("episodes = 20", "episodes = 0")
    ),
    "spec: negative episodes": FileCase(
        {}, _RUN, "episodes: expected an integer >= 1, got -5", _spec("episodes = 20", "episodes = -5")
    ),
    "spec: gamma above 1": FileCase({}, _RUN, "learning.gamma", MINIMAL_SPEC + "[learning]\ngamma = 1.5\n"),
    "spec: alpha not a number": FileCase(
        {}, _RUN, "learning.alpha: expected a number", MINIMAL_SPEC + '[learning]\nalpha = "fast"\n'
    ),
    "spec: unknown trace level": FileCase({}, _RUN, "trace:", 'trace = "verbose"\n' + MINIMAL_SPEC),
    "spec: XMPP server without a port": FileCase(
        {}, _RUN, "xmpp.server", MINIMAL_SPEC + "[xmpp]\nserver = 'nowhere'\n"
    ),
    "spec: zero agents in a group": FileCase(
        {}, _RUN, "agents[0].count", MINIMAL_SPEC.replace(AGENT, AGENT + "count = 0\n")
    ),
    "spec: unknown mode": FileCase(
        {}, _RUN, "agents[0].mode: must be one of", MINIMAL_SPEC.replace(AGENT, AGENT + 'mode = "turbo"\n')
    ),
    "spec: agent name not a JID local part": FileCase(
        {}, _RUN, "agents[0].name", MINIMAL_SPEC.replace(AGENT, '[[agents]]\nname = "Learner"\n')
    ),
    "spec: the same agent twice": FileCase({}, _RUN, "used twice", MINIMAL_SPEC + AGENT),
    "spec: belief that is not a literal": FileCase(
        {},
        _RUN,
        "agents[0].beliefs[0]: not an AgentSpeak literal",
        MINIMAL_SPEC.replace(AGENT, AGENT + 'beliefs = ["share_every(5"]\n'),
    ),
    "spec: env id that does not exist": FileCase(
        {}, _RUN, "FrozenPond-v9", _spec('"FrozenLake-v1"', '"FrozenPond-v9"')
    ),
    "spec: env that is not Discrete": FileCase(
        {},
        _RUN,
        "Discrete",
        _spec('"FrozenLake-v1"', '"CartPole-v1"').replace('kwargs = { map_name = "4x4", is_slippery = false }', ""),
    ),
    "spec: env kwargs the env does not take": FileCase(
        {}, _RUN, "FrozenLake-v1", _spec("is_slippery = false", "slipperiness = 2")
    ),
    "spec: warm start from nowhere": FileCase(
        {}, _RUN, "agents[0].warm_start", MINIMAL_SPEC.replace(AGENT, AGENT + 'warm_start = "gone.npz"\n')
    ),
    # Q-table checkpoints, shown and warm-started from
    "qtable: random bytes": FileCase({"learner.npz": bytes(range(256)) * 8}, _SHOW, "not a readable checkpoint"),
    "qtable: empty file": FileCase({"learner.npz": b""}, _SHOW, "not a readable checkpoint"),
    "qtable: truncated": FileCase(
        {"learner.npz": _checkpoint(lambda p: p.write_bytes(p.read_bytes()[: p.stat().st_size // 2]))},
        _SHOW,
        "not a readable checkpoint",
    ),
    "qtable: a CSV file": FileCase({"learner.npz": "q,meta\n1,2\n"}, _SHOW, "not a readable checkpoint"),
    "qtable: pickled objects (never unpickled)": FileCase(
        {"learner.npz": _checkpoint(lambda p: _rewrite(p, q=np.array([{"a": 1}], dtype=object)))},
        _SHOW,
        "not a readable checkpoint",
    ),
    "qtable: a future format": FileCase(
        {"learner.npz": _checkpoint(lambda p: _rewrite(p, meta={**_meta(p), "format": 99}))},
        _SHOW,
        "checkpoint format 99",
    ),
    "qtable: no metadata": FileCase(
        {"learner.npz": _checkpoint(lambda p: _rewrite(p, drop=("meta",)))}, _SHOW, "not a bdi-rl Q-table checkpoint"
    ),
    "qtable: checksum mismatch": FileCase(
        {"learner.npz": _checkpoint(lambda p: _rewrite(p, q=np.zeros((16, 4))))}, _SHOW, "checksum mismatch"
    ),
    "qtable: shape against its metadata": FileCase(
        {"learner.npz": _checkpoint(lambda p: _rewrite(p, q=np.zeros((8, 4))))},
        _SHOW,
        "the table is 8x4 but its metadata says 16x4",
    ),
    "qtable: a directory": FileCase({"learner.npz/x": "x"}, _SHOW, "is a directory"),
    "qtable: warm start from a corrupt file": FileCase({"learner.npz": bytes(100)}, _WARM, "not a readable checkpoint"),
    "qtable: warm start across state spaces": FileCase(
        {"learner.npz": _checkpoint()}, _WARM, "table 16x4 vs 64x4", _spec('map_name = "4x4"', 'map_name = "8x8"')
    ),
}

_GROUP_LINE = 'name = "learner"\n'


def _group(extra: str) -> str:
    """MINIMAL_SPEC with ``extra`` lines in its agent group."""
    return MINIMAL_SPEC.replace(AGENT, AGENT + extra + "\n")


def _top(line: str) -> str:
    """MINIMAL_SPEC with a top-level ``line`` replacing the key it sets."""
    key = line.split("=")[0].strip()
    kept = [text for text in MINIMAL_SPEC.splitlines() if not text.startswith(key + " ")]
    return line + "\n" + "\n".join(kept) + "\n"


def _symlink_to_nowhere(path: Path) -> None:
    path.symlink_to(path.parent / "nowhere")


_ENV_MODULES = {
    "boom_ctor.py": "import gymnasium as gym\nclass Boom(gym.Env):\n"
    "    def __init__(self, **kw):\n        raise RuntimeError('needs a GPU')\n",
    "boom_import.py": "raise ZeroDivisionError('broken at import')\n",
    "boom_reset.py": "import gymnasium as gym\nclass Env(gym.Env):\n"
    "    observation_space = gym.spaces.Discrete(4)\n"
    "    action_space = gym.spaces.Discrete(2)\n"
    "    def reset(self, seed=None, options=None):\n        raise OSError('no map file')\n",
    "huge_env.py": "import gymnasium as gym\nclass Huge(gym.Env):\n"
    "    observation_space = gym.spaces.Discrete(10**9)\n"
    "    action_space = gym.spaces.Discrete(4)\n",
}

FILE_CASES.update(
    {
        # Usage errors: the top parser's and a sub-command's, each said once
        "usage: an option no command takes": FileCase(
            {}, ["qtable", "export", "{dir}/r", "{dir}/t.zip", "-o", "x"], "error: unrecognized arguments: -o x"
        ),
        "usage: a sub-command's bad value": FileCase(
            {},
            ["play", "{dir}/r", "--episodes", "many"],
            "error: bdi-rl play: argument --episodes: expected an integer",
        ),
        # Numbers out of range, NaN, counts that would eat the machine
        "spec: negative seed": FileCase({}, _RUN, "seed: expected an integer >= 0, got -1", _top("seed = -1")),
        "spec: seed beyond 32 bits": FileCase(
            {}, _RUN, "seed: expected an integer <= 4294967295", _top("seed = 1099511627776")
        ),
        "spec: NaN learning rate": FileCase(
            {}, _RUN, "learning.alpha: must be in (0, 1], got nan", MINIMAL_SPEC + "[learning]\nalpha = nan\n"
        ),
        "spec: infinite initial Q-value": FileCase(
            {}, _RUN, "learning.q_init: must be a finite number", MINIMAL_SPEC + "[learning]\nq_init = inf\n"
        ),
        "spec: NaN in a group's learning override": FileCase(
            {}, _RUN, "agents[0].learning.gamma", _group("learning = { gamma = nan }")
        ),
        "spec: NaN flush interval": FileCase(
            {}, _RUN, "telemetry.flush_seconds", MINIMAL_SPEC + "[telemetry]\nflush_seconds = nan\n"
        ),
        "spec: NaN warm epsilon": FileCase({}, _RUN, "agents[0].warm_epsilon", _group("warm_epsilon = nan")),
        "spec: a billion agents": FileCase(
            {}, _RUN, "agents[0].count: expected an integer <= 1000", _group("count = 1000000000")
        ),
        "spec: two groups over the agent limit": FileCase(
            {}, _RUN, "more than 1000 agents", _group("count = 999") + '[[agents]]\nname = "scout"\ncount = 999\n'
        ),
        "spec: a trillion episodes": FileCase(
            {}, _RUN, "episodes: expected an integer <= 1000000000", _top("episodes = 1000000000000")
        ),
        "spec: a billion evaluation episodes": FileCase(
            {}, _RUN, "eval_episodes: expected an integer <=", _top("eval_episodes = 1000000000")
        ),
        "spec: a step limit of zero": FileCase(
            {},
            _RUN,
            "env.max_episode_steps: expected an integer >= 1",
            _spec("[env]\n", "[env]\nmax_episode_steps = 0\n"),
        ),
        "spec: a date where a number goes": FileCase(
            {}, _RUN, "checkpoint_every: expected an integer, got date", _top("checkpoint_every = 1979-05-27")
        ),
        "spec: goal cells that are not pairs": FileCase(
            {}, _RUN, "env.goals[0]: expected a list of length <= 2", _spec("[env]\n", "[env]\ngoals = [[1, 2, 3]]\n")
        ),
        "spec: TOML nested too deeply": FileCase(
            {}, _RUN, "spec.toml:", "x = " + "[" * 5000 + "]" * 5000 + "\n" + MINIMAL_SPEC
        ),
        # Ports and servers
        "spec: XMPP port 0": FileCase(
            {}, _RUN, "xmpp.port: expected an integer >= 1, got 0", MINIMAL_SPEC + "[xmpp]\nport = 0\n"
        ),
        "spec: XMPP port 70000": FileCase(
            {}, _RUN, "xmpp.port: expected an integer <= 65535, got 70000", MINIMAL_SPEC + "[xmpp]\nport = 70000\n"
        ),
        "spec: viewer port 70000": FileCase(
            {}, _RUN, "viewer.port: expected an integer <= 65535", MINIMAL_SPEC + "[viewer]\nport = 70000\n"
        ),
        "spec: XMPP server port 99999": FileCase(
            {},
            _RUN,
            "xmpp.server: expected 'embedded' or 'host:port'",
            MINIMAL_SPEC + "[xmpp]\nserver = 'localhost:99999'\n",
        ),
        "spec: XMPP domain that does not resolve": FileCase(
            {},
            _RUN,
            "xmpp.domain: 'nowhere.invalid' does not resolve",
            MINIMAL_SPEC + "[xmpp]\ndomain = 'nowhere.invalid'\n",
        ),
        "spec: external server whose domain does not resolve": FileCase(
            {},
            _RUN,
            "xmpp.domain: 'nowhere.invalid' does not resolve",
            MINIMAL_SPEC + "[xmpp]\nserver = 'nowhere.invalid:5222'\ndomain = 'nowhere.invalid'\n",
        ),
        "spec: XMPP domain in capitals": FileCase(
            {},
            _RUN,
            "xmpp.domain: 'LocalHost' is not a lower-case host name",
            MINIMAL_SPEC + "[xmpp]\ndomain = 'LocalHost'\n",
        ),
        "spec: trusted client that is not a JID": FileCase(
            {}, _RUN, "xmpp.trust[0]: 'operator' is not a bare JID", MINIMAL_SPEC + "[xmpp]\ntrust = ['operator']\n"
        ),
        # Nobody but the run's agents can log in to the embedded server: whom would it trust?
        "spec: trusted client on the embedded server": FileCase(
            {},
            _RUN,
            "xmpp.trust: the embedded server has accounts for the run's agents only",
            MINIMAL_SPEC + "[xmpp]\ntrust = ['ops@localhost']\n",
        ),
        # Names the XMPP server would normalise, or the file system cannot hold
        "spec: agent name with an accent": FileCase(
            {},
            _RUN,
            "agents[0].name: 'léa' must be lower-case ASCII",
            MINIMAL_SPEC.replace(AGENT, '[[agents]]\nname = "léa"\n'),
        ),
        "spec: agent name that case-folds": FileCase(
            {}, _RUN, "agents[0].name: 'straße'", MINIMAL_SPEC.replace(AGENT, '[[agents]]\nname = "straße"\n')
        ),
        "spec: agent name starting with a dash": FileCase(
            {}, _RUN, "agents[0].name: '-x'", MINIMAL_SPEC.replace(AGENT, '[[agents]]\nname = "-x"\n')
        ),
        "spec: telemetry name with an accent": FileCase(
            {}, _RUN, "telemetry.name: must be lower-case ASCII", MINIMAL_SPEC + "[telemetry]\nname = 'télé'\n"
        ),
        "spec: agent name too long for a file": FileCase(
            {},
            _RUN,
            "agents[0].name: expected a string of length <= 64",
            MINIMAL_SPEC.replace(AGENT, f'[[agents]]\nname = "{"a" * 100}"\n'),
        ),
        "spec: experiment name too long for a file": FileCase(
            {}, _RUN, "name: expected a string of length <= 64", _top(f'name = "{"x" * 300}"')
        ),
        "spec: env id too long for a run directory": FileCase(
            {}, _RUN, "the run directory's name", _spec('"FrozenLake-v1"', '"' + "A" * 190 + '-v0"')
        ),
        "spec: plan path too long for the file system": FileCase(
            {}, _RUN, "agents[0].asl: cannot use", _group(f'asl = "{"a" * 300}.asl"')
        ),
        "spec: warm start path too long for the file system": FileCase(
            {}, _RUN, "agents[0].warm_start: cannot use", _group(f'warm_start = "{"a" * 300}"')
        ),
        "spec: spec path too long for the file system": FileCase(
            {}, ["run", "{dir}/" + "s" * 300 + ".toml"], "cannot use this path"
        ),
        # Shapes
        "spec: agents that are not tables": FileCase(
            {},
            _RUN,
            "agents: expected a list, got an integer",
            MINIMAL_SPEC.replace(AGENT, "").replace("seed = 3", "seed = 3\nagents = 5"),
        ),
        "spec: no agent groups": FileCase(
            {},
            _RUN,
            "agents: expected a list of length >= 1",
            MINIMAL_SPEC.replace(AGENT, "").replace("seed = 3", "seed = 3\nagents = []"),
        ),
        "spec: no env": FileCase(
            {},
            _RUN,
            "env: missing required key",
            MINIMAL_SPEC.replace(
                '[env]\nid = "FrozenLake-v1"\nkwargs = { map_name = "4x4", is_slippery = false }\n', ""
            ),
        ),
        "spec: learning that is not a table": FileCase({}, _RUN, "learning: expected a table", _top("learning = 5")),
        "spec: beliefs that are not a list": FileCase(
            {}, _RUN, "agents[0].beliefs: expected a list", _group('beliefs = "share_every(5)"')
        ),
        # Envs that raise anything at all
        "env: constructor raises RuntimeError": FileCase(
            dict(_ENV_MODULES),
            _RUN,
            'env "boom_ctor:Boom": cannot be made with kwargs {}: needs a GPU',
            _spec('"FrozenLake-v1"', '"boom_ctor:Boom"').replace(
                'kwargs = { map_name = "4x4", is_slippery = false }', ""
            ),
        ),
        "env: module raises at import": FileCase(
            dict(_ENV_MODULES),
            _RUN,
            'cannot import module "boom_import"',
            _spec('"FrozenLake-v1"', '"boom_import:Env"').replace(
                'kwargs = { map_name = "4x4", is_slippery = false }', ""
            ),
        ),
        "env: a state space no Q-table fits in memory": FileCase(
            dict(_ENV_MODULES),
            _RUN,
            "is more Q-table than one run holds",
            _spec('"FrozenLake-v1"', '"huge_env:Huge"').replace(
                'kwargs = { map_name = "4x4", is_slippery = false }', ""
            ),
        ),
        "env: reset raises": FileCase(
            dict(_ENV_MODULES),
            _RUN,
            'env "boom_reset:Env" with kwargs {} fails at the env\'s first reset: no map file',
            _spec('"FrozenLake-v1"', '"boom_reset:Env"').replace(
                'kwargs = { map_name = "4x4", is_slippery = false }', ""
            ),
        ),
        "env: a render mode that needs what is not installed": FileCase(
            {},
            _RUN,
            "env.kwargs.render_mode: 'human' fails at the env's first reset: pygame is not installed",
            _spec('map_name = "4x4"', 'map_name = "4x4", render_mode = "human"'),
        ),
        "env: kwargs that make the env raise IndexError": FileCase(
            {}, _RUN, 'env "FrozenLake-v1": cannot be made', _spec('map_name = "4x4"', "desc = []")
        ),
        "env: a date as a kwarg": FileCase(
            {}, _RUN, 'env "FrozenLake-v1": cannot be made', _spec('map_name = "4x4"', "map_name = 1979-05-27")
        ),
        # Command-line numbers, ports and paths
        "cli: --runs is a file": FileCase({}, _RUN + ["--runs", "{dir}/spec.toml"], "--runs", add_runs=False),
        "cli: --runs is a dangling symlink": FileCase(
            {"runs": _symlink_to_nowhere}, _RUN + ["--runs", "{dir}/runs"], "which does not exist", add_runs=False
        ),
        "cli: --runs under a file": FileCase(
            {}, _RUN + ["--runs", "{dir}/spec.toml/runs"], "cannot be created", add_runs=False
        ),
        "cli: --view-port 70000": FileCase(
            {}, _RUN + ["--view", "--view-port", "70000"], "--view-port: expected a value in [1, 65535], got 70000"
        ),
        "cli: --view-port 0": FileCase({}, _RUN + ["--view-port", "0"], "--view-port: expected a value in [1, 65535]"),
        "cli: --episodes 0": FileCase({}, _RUN + ["--episodes", "0"], "--episodes: expected a value >= 1, got 0"),
        "cli: --episodes not a number": FileCase({}, _RUN + ["--episodes", "many"], "--episodes: expected an integer"),
        "cli: --seed -1": FileCase({}, _RUN + ["--seed", "-1"], "--seed: expected a value >= 0, got -1"),
        "cli: --episodes beyond any run": FileCase(
            {}, _RUN + ["--episodes", "99999999999"], "episodes: expected an integer <= 1000000000"
        ),
        "cli: --warm-start path too long": FileCase(
            {}, _RUN + ["--warm-start", "{dir}/" + "w" * 300], "--warm-start: cannot use this path"
        ),
        "cli: run without a spec": FileCase({}, ["run"], "give a spec, or --resume RUN_DIR"),
        "cli: --runs the kernel will not create": FileCase(
            {}, _RUN + ["--runs", "/proc/bdi-rl-runs"], "/proc/bdi-rl-runs: No such file or directory", add_runs=False
        ),
        "cli: --resume path too long": FileCase({}, ["run", "--resume", "{dir}/" + "r" * 300], "File name too long"),
        "cli: inspect a run name too long": FileCase(
            {}, ["inspect", "i" * 300, "--agent", "learner"], "File name too long"
        ),
        "cli: qtable diff --top 0": FileCase(
            {}, ["qtable", "diff", "{dir}/a.npz", "{dir}/b.npz", "--top", "0"], "--top: expected a value >= 1"
        ),
        "cli: inspect --event -1": FileCase(
            {}, ["inspect", "x", "--agent", "learner", "--event", "-1"], "--event: expected a value >= 0"
        ),
        "cli: view --runs is a file": FileCase({}, ["view", "--runs", "{dir}/spec.toml"], "--runs", add_runs=False),
        "cli: view --port 99999": FileCase(
            {}, ["view", "--runs", "{dir}", "--port", "99999"], "--port: expected a value in [1, 65535]"
        ),
        "cli: agent --xmpp port 99999": FileCase(
            {},
            ["agent", "{dir}/spec.toml", "--name", "learner", "--xmpp", "localhost:99999"],
            "--xmpp: expected HOST:PORT",
        ),
        "cli: agent --join-timeout nan": FileCase(
            {},
            ["agent", "{dir}/spec.toml", "--name", "learner", "--xmpp", "localhost:5222", "--join-timeout", "nan"],
            "--join-timeout: expected a finite number",
        ),
        "cli: telemetry --view port 0": FileCase(
            {},
            ["telemetry", "{dir}/spec.toml", "--xmpp", "localhost:5222", "--view", "127.0.0.1:0"],
            "--view: expected HOST:PORT",
        ),
    }
)


def _write_case(case: FileCase, directory: Path) -> None:
    if case.spec is not None:
        (directory / "spec.toml").write_text(case.spec)
    for name, content in case.files.items():
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if callable(content):
            content(path)
        elif isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)


def _digests(directory: Path) -> dict[str, str]:
    """The user's files (not the bytecode Python may cache beside an env module it imported)."""
    return {
        str(p.relative_to(directory)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(directory.rglob("*"))
        if p.is_file() and "__pycache__" not in p.relative_to(directory).parts
    }


@pytest.mark.parametrize("name", sorted(FILE_CASES))
def test_bad_file_is_one_clear_line_and_changes_nothing(name, tmp_path, capsys, monkeypatch):
    case = FILE_CASES[name]
    inputs = tmp_path / "in"
    inputs.mkdir()
    _write_case(case, inputs)
    before = _digests(inputs)
    runs = tmp_path / "runs"
    argv = [arg.replace("{dir}", str(inputs)) for arg in case.argv]
    if argv[0] == "run":
        argv += ["--no-progress"] + (["--runs", str(runs)] if case.add_runs else [])
    monkeypatch.syspath_prepend(str(inputs))  # a case's own env module ("module:Class")
    try:
        status = bdi_rl_main(argv)
    except SystemExit as exc:  # a usage error, refused by the argument parser
        status = exc.code
    err = capsys.readouterr().err
    assert status == case.exit_status, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("bdi-rl: error: "), err
    assert not lines[0].startswith("bdi-rl: error: bdi-rl:"), err  # the program named once
    assert case.expected in lines[0]
    assert not runs.exists(), "a run directory was made for bad input"
    made = [p for p in inputs.rglob("*__*__*") if "__pycache__" not in p.relative_to(inputs).parts]
    assert not made, f"a run directory was made for bad input: {made}"
    assert _digests(inputs) == before, "an input file was changed"


def test_the_console_script_says_the_same_one_line(tmp_path):
    """As a separate process too: one line on stderr, no traceback, status 2."""
    result = run_cli("run", str(tmp_path / "absent.toml"), "--runs", str(tmp_path / "runs"))
    assert result.returncode == 2
    assert result.stderr.strip() == (
        f"bdi-rl: error: {tmp_path / 'absent.toml'}: no such spec file (shipped specs: "
        "cliffwalking, climbing, foraging, frozenlake-4x4, frozenlake-8x8, frozenlake-team, penalty, routes, "
        "taxi, taxi-hierarchy, taxi-routes, taxi-team)"
    )
    assert not (tmp_path / "runs").exists()


def test_endless_recursion_in_a_plan_fails_the_agent_in_one_line(tmp_path):
    """``+!g <- !g.`` used to grow the intention stack by ~50 MB a second until memory ran
    out; the run now fails that agent quickly, saying where and why."""
    (tmp_path / "bad.asl").write_text("!start.\n+!start <- !start.\n")
    (tmp_path / "spec.toml").write_text(WITH_BAD_ASL)
    result = run_cli("run", str(tmp_path / "spec.toml"), "--runs", str(tmp_path / "runs"), "--no-progress", timeout=120)
    assert result.returncode == 1, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "bad.asl:2:" in lines[0] and "endless recursion?" in lines[0], result.stderr
    trace = next((tmp_path / "runs").glob("*/trace.jsonl"))
    fails = [e for e in read_trace(trace) if e["kind"] == "intention.fail"]
    assert 1 <= len(fails) <= 20 and "endless recursion?" in fails[0]["data"]["error"]


# -- BDI messages to a running agent ------------------------------------------------------------

#: (ilf_type, body, sender, reason in the rejection)
BDI_CASES: dict[str, tuple[str, str, str, str]] = {
    "bdi: empty body": ("tell", "", "boss", "empty body"),
    "bdi: unparsable literal": ("tell", "hello(", "boss", "not an AgentSpeak literal"),
    "bdi: literal with a variable": ("tell", "p(X)", "boss", "ground"),
    "bdi: two literals": ("tell", "a. b", "boss", "exactly one literal"),
    "bdi: a plan as the body": ("tell", "+!x <- .rl_reset", "boss", "exactly one literal"),
    "bdi: a goal as the body": ("achieve", "!go", "boss", "exactly one literal"),
    "bdi: huge body": ("tell", "p(" + "1," * 100_000 + "1)", "boss", "exceeds"),
    "bdi: nested too deeply": ("tell", "a(" * 500 + "1" + ")" * 500, "boss", "nested too deeply"),
    "bdi: control characters": ("tell", "p(\x01\x02)", "boss", "illegal character"),
    "bdi: unknown ilf_type": ("explode", "p(1)", "boss", "unknown ilf_type"),
    "bdi: tellHow from a stranger": ("tellHow", "+!x <- .rl_finish.", "stranger", "experiment's agents only"),
    "bdi: tellHow of a belief": ("tellHow", "p(1).", "boss", "plans only"),
    "bdi: askOne from a stranger": ("askOne", "secret(X)", "stranger", "experiment's agents only"),
    "bdi: achieve from a stranger": ("achieve", 'greet("stranger")', "stranger", "experiment's agents only"),
    "bdi: a forged percept": ("tell", "training_done", "boss", "perceived, not told"),
    "bdi: a forged trust": ("tell", 'trusted("stranger@localhost")', "stranger", "perceived, not told"),
    "bdi: untelling a percept": ("untell", "state(3)", "meddler", "perceived, not told"),
}


@dataclass
class Received:
    rejections: dict[str, list[str]] = field(default_factory=dict)  # sender -> reasons, in order
    rejected_count: int = 0
    beliefs: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


class _Warnings(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def _run_collecting_warnings(logger: str, scenario: Callable[[_Warnings], Awaitable[T]]) -> T:
    """Run ``scenario`` on SPADE's loop with the warnings of ``logger`` collected for it."""
    warnings = _Warnings()
    logging.getLogger(logger).addHandler(warnings)
    try:
        return _run(scenario(warnings))
    finally:
        logging.getLogger(logger).removeHandler(warnings)


async def _start_plain_agents(names: tuple[str, ...], port: int) -> dict[str, Agent]:
    """Bare SPADE agents (no BDI, no trace): what any XMPP client could be."""
    agents = {name: Agent(f"{name}@localhost", "pw", port=port, verify_security=False) for name in names}
    for agent in agents.values():
        await agent.start()
        agent.presence.set_available()
    return agents


async def _stop_plain_agents(agents: dict[str, Agent]) -> None:
    for agent in agents.values():
        await agent.stop()
        agent.container.unregister(str(agent.jid))


async def _send_from(agent: Agent, messages: list[Message]) -> None:
    class Send(OneShotBehaviour):
        async def run(self) -> None:
            for msg in messages:
                await self.send(msg)

    behaviour = Send()
    agent.add_behaviour(behaviour)
    await behaviour.join()


def _bdi(body: str, ilf: str = "tell") -> Message:
    return Message(to="bob@localhost", body=body, metadata={"performative": "BDI", "ilf_type": ilf})


@contextlib.asynccontextmanager
async def _bob_listening(tmp: Path, level: TraceLevel) -> AsyncIterator[tuple[TracedBdiAgent, int]]:
    """``bob`` (plans in tmp/bob.asl; boss and bob may make requests) on an embedded XMPP
    server, with a telemetry agent writing tmp/trace.jsonl; yields bob and the server's port."""
    server = EmbeddedXmppServer(port=free_port(), data_dir=tmp / "xmpp", open_registration=True)
    await server.start()
    telemetry = TelemetryAgent("telemetry@localhost", "pw", port=server.port)
    bob = TracedBdiAgent(
        "bob@localhost",
        "pw",
        str(tmp / "bob.asl"),
        port=server.port,
        tracer=Tracer(tmp.name, "bob@localhost", level),
        telemetry="telemetry@localhost",
        achieve_from=["bob@localhost", "boss@localhost"],
    )
    try:
        await telemetry.start()
        telemetry.open_trace(tmp / "trace.jsonl")
        await bob.start()
        yield bob, server.port
    finally:
        await bob.stop()
        await telemetry.stop()
        await server.stop()


async def _believed(bob: TracedBdiAgent, belief: str, attempts: int = 200) -> None:
    """Wait until bob believes ``belief`` (the good message after the bad ones), then until
    telemetry holds its whole trace."""
    for _ in range(attempts):
        if belief in bob.beliefs():
            break
        await asyncio.sleep(0.05)
    assert await bob.flush_trace(stall_seconds=10)


@pytest.fixture(scope="module")
def bdi_received(tmp_path_factory) -> Received:
    """Every BDI case sent to ``bob`` over the embedded XMPP server, then one good ``tell``."""
    tmp = tmp_path_factory.mktemp("bdi-corpus")
    (tmp / "bob.asl").write_text("@greet +!greet(X) <- +greeted(X).\n")

    async def scenario(warnings: _Warnings) -> Received:
        async with _bob_listening(tmp, TraceLevel.STEP) as (bob, port):
            senders = await _start_plain_agents(("boss", "stranger", "meddler"), port)
            try:
                for sender in senders:
                    await _send_from(
                        senders[sender], [_bdi(body, ilf) for ilf, body, who, _ in BDI_CASES.values() if who == sender]
                    )
                # Then a good message: bob must still be listening and reasoning.
                await _send_from(senders["boss"], [_bdi("still_alive(1)")])
                await _believed(bob, "still_alive(1)")
            finally:
                await _stop_plain_agents(senders)
            rejections: dict[str, list[str]] = {}
            for event in read_trace(str(tmp / "trace.jsonl")):
                if event["kind"] == "msg.recv" and "rejected" in event["data"]:
                    sender = event["data"]["from"].split("@")[0]
                    rejections.setdefault(sender, []).append(event["data"]["rejected"])
            return Received(rejections, bob.inbox.rejected_messages, bob.beliefs(), warnings.messages)

    return _run_collecting_warnings("bdi_rl.xmpp.agent", scenario)


@pytest.mark.parametrize("name", sorted(BDI_CASES))
def test_bad_bdi_message_is_refused_counted_and_logged(name, bdi_received):
    _, _, sender, reason = BDI_CASES[name]
    index = [key for key, case in BDI_CASES.items() if case[2] == sender].index(name)
    traced = bdi_received.rejections[sender][index]
    assert reason in traced, traced
    assert any(
        f"from {sender}@localhost" in line and (reason in line or "refused" in line) for line in bdi_received.warnings
    ), "no log line"


def test_an_agent_fed_bad_messages_keeps_working(bdi_received):
    assert "still_alive(1)" in bdi_received.beliefs  # the good message after all the bad ones
    assert bdi_received.rejected_count == len(BDI_CASES)
    assert sum(map(len, bdi_received.rejections.values())) == len(BDI_CASES)
    assert not any("greeted" in belief for belief in bdi_received.beliefs)


def test_a_stranger_cannot_fill_an_agents_memory_with_tells(tmp_path):
    """Anyone may tell, but senders outside the experiment together get STRANGER_TELL_BYTES:
    a flood of 16 KB tells past it is refused (counted, traced, logged once), while the
    experiment's own agents are still heard."""
    (tmp_path / "bob.asl").write_text("@greet +!greet(X) <- +greeted(X).\n")
    body = 'note({n}, "' + "x" * 15_000 + '")'
    flood = STRANGER_TELL_BYTES // len(body) + 20

    async def scenario(warnings: _Warnings) -> tuple[TracedBdiAgent, list[str], list[str]]:
        async with _bob_listening(tmp_path, TraceLevel.EPISODE) as (bob, port):
            senders = await _start_plain_agents(("boss", "flooder"), port)
            try:
                await _send_from(senders["flooder"], [_bdi(body.format(n=n)) for n in range(flood)])
                await _send_from(senders["boss"], [_bdi("still_heard(1)")])
                await _believed(bob, "still_heard(1)", attempts=400)
            finally:
                await _stop_plain_agents(senders)
            rejected = [
                e["data"]["rejected"]
                for e in read_trace(str(tmp_path / "trace.jsonl"))
                if e["kind"] == "msg.recv" and "rejected" in e["data"]
            ]
            return bob, rejected, warnings.messages

    bob, rejected, warnings = _run_collecting_warnings("bdi_rl.xmpp.agent", scenario)
    held = [b for b in bob.beliefs() if b.startswith("note(")]
    assert "still_heard(1)" in bob.beliefs()
    assert len(held) * len(body) <= STRANGER_TELL_BYTES and len(held) + len(rejected) == flood
    assert len(rejected) >= 20 and all("bytes already" in reason for reason in rejected)
    assert bob.inbox.rejected_messages == len(rejected)
    assert sum("refused tells from flooder@localhost" in line for line in warnings) == 1


# -- trace batches to a running telemetry agent -------------------------------------------------

RUN = "corpus-run"
MEMBER = "member@localhost"


def _event(seq: int, agent: str = MEMBER, **fields) -> dict:
    return {
        "schema": SCHEMA,
        "run": RUN,
        "agent": agent,
        "seq": seq,
        "ts": 1.0,
        "kind": "episode.end",
        "episode": seq,
        "step": 0,
        "data": {"return": 1.0, "length": 3, "outcome": "goal", "epsilon": 0.5},
        **fields,
    }


def _header(**fields) -> bytes:
    return orjson.dumps({"schema": BATCH_SCHEMA, "run": RUN, "agent": MEMBER, "first": 0, "count": 1, **fields}) + b"\n"


def _zstd(payload: bytes) -> str:
    return base64.b64encode(zstandard.ZstdCompressor().compress(payload)).decode()


#: (sender, body, outcome): "rejected" (counted, logged, no ack), "gap" (not written, acked with
#: gap), "replay" (dropped as a duplicate). The member's good batch of seq 0 goes first.
BATCH_CASES: dict[str, tuple[str, str, str]] = {
    "batch: not JSON": ("member", "{not json", "rejected"),
    "batch: wrong schema": ("member", _header(schema="bdi-rl.trace-batch/0").decode(), "rejected"),
    "batch: fewer lines than its header says": (
        "member",
        (_header(first=1, count=2) + orjson.dumps(_event(1)) + b"\n").decode(),
        "rejected",
    ),
    "batch: event missing a field": ("member", (_header(first=1) + b'{"seq": 1}\n').decode(), "rejected"),
    "batch: event data of the wrong type": (
        "member",
        (_header(first=1) + orjson.dumps(_event(1, data={**_event(1)["data"], "return": "lots"})) + b"\n").decode(),
        "rejected",
    ),
    "batch: event of another agent": (
        "member",
        (_header(first=1) + orjson.dumps(_event(1, agent="other@localhost")) + b"\n").decode(),
        "rejected",
    ),
    "batch: claims to come from another agent": (
        "member",
        encode_batch(RUN, "peer@localhost", [_event(0, agent="peer@localhost")]),
        "rejected",
    ),
    "batch: of another run": (
        "member",
        encode_batch("other-run", MEMBER, [{**_event(1), "run": "other-run"}]),
        "rejected",
    ),
    "batch: oversized": ("member", " " * (MAX_BODY_CHARS + 1), "rejected"),
    "batch: zip bomb": ("member", _zstd(_header(first=1) + b" " * (MAX_PAYLOAD_BYTES + 1)), "rejected"),
    "batch: fake compression": ("member", "KLUv/" + "!" * 20, "rejected"),
    "batch: from a stranger": (
        "stranger",
        encode_batch(RUN, "stranger@localhost", [_event(0, agent="stranger@localhost")]),
        "rejected",
    ),
    "batch: seq gap": ("member", encode_batch(RUN, MEMBER, [_event(5)]), "gap"),
    "batch: replay": ("member", encode_batch(RUN, MEMBER, [_event(0)]), "replay"),
}


@dataclass
class Outcome:
    rejected: int
    duplicates: int
    ack: dict | None
    warnings: list[str]


@dataclass
class TelemetryRecord:
    outcomes: dict[str, Outcome]
    written: list[dict]
    final_ack: dict | None


@pytest.fixture(scope="module")
def batches_received(tmp_path_factory) -> TelemetryRecord:
    """Each batch case sent to telemetry in turn, its effect recorded; a good batch last."""
    tmp = tmp_path_factory.mktemp("batch-corpus")

    async def scenario(warnings: _Warnings) -> TelemetryRecord:
        server = EmbeddedXmppServer(port=free_port(), data_dir=tmp / "xmpp", open_registration=True)
        await server.start()
        (tmp / RUN).mkdir()
        telemetry = TelemetryAgent("telemetry@localhost", "pw", port=server.port, senders=[MEMBER, "peer@localhost"])
        senders: dict[str, Agent] = {}
        acks: asyncio.Queue[dict] = asyncio.Queue()

        class Acks(OneShotBehaviour):
            async def run(self) -> None:
                while True:
                    msg = await self.receive(timeout=60)
                    if msg is not None:
                        acks.put_nowait(orjson.loads(msg.body))

        async def send(sender: str, body: str) -> dict | None:
            """Send one batch; the ack it earns, if any, within 1 s."""
            await _send_from(senders[sender], [Message(to="telemetry@localhost", body=body, metadata=BATCH_METADATA)])
            try:
                return await asyncio.wait_for(acks.get(), 1.0)
            except TimeoutError:
                return None

        outcomes: dict[str, Outcome] = {}
        try:
            await telemetry.start()
            telemetry.open_trace(tmp / RUN / "trace.jsonl")
            senders = await _start_plain_agents(("member", "stranger"), server.port)
            senders["member"].add_behaviour(Acks(), Template(metadata=ACK_METADATA))
            assert await send("member", encode_batch(RUN, MEMBER, [_event(0)])) == {"upto": 1}
            for name, (sender, body, _) in BATCH_CASES.items():
                log = telemetry.trace_log
                rejected, duplicates, seen = log.rejected, log.duplicates, len(warnings.messages)
                ack = await send(sender, body)
                if ack is None:  # a rejection is not acked: wait until it is counted
                    for _ in range(100):
                        if log.rejected > rejected:
                            break
                        await asyncio.sleep(0.02)
                outcomes[name] = Outcome(
                    log.rejected - rejected, log.duplicates - duplicates, ack, warnings.messages[seen:]
                )
            final = await send("member", encode_batch(RUN, MEMBER, [_event(1)]))
        finally:
            await _stop_plain_agents(senders)
            await telemetry.stop()
            await server.stop()
        return TelemetryRecord(outcomes, read_trace(str(tmp / RUN / "trace.jsonl")), final)

    return _run_collecting_warnings("bdi_rl.xmpp.telemetry", scenario)


@pytest.mark.parametrize("name", sorted(BATCH_CASES))
def test_bad_trace_batch_is_refused_and_writes_nothing(name, batches_received):
    sender, _, expected = BATCH_CASES[name]
    outcome = batches_received.outcomes[name]
    if expected == "rejected":
        assert (outcome.rejected, outcome.ack) == (1, None)
        assert len(outcome.warnings) == 1 and f"{sender}@localhost" in outcome.warnings[0]
    elif expected == "gap":
        assert (outcome.rejected, outcome.ack) == (0, {"upto": 1, "gap": True})
    else:
        assert (outcome.rejected, outcome.duplicates, outcome.ack) == (0, 1, {"upto": 1})


def test_telemetry_names_the_kind_and_field_of_wrong_event_data(batches_received):
    (warning,) = batches_received.outcomes["batch: event data of the wrong type"].warnings
    assert "episode.end data" in warning and "`data.return`" in warning


def test_telemetry_fed_bad_batches_writes_only_the_good_events(batches_received):
    assert batches_received.final_ack == {"upto": 2}  # still accepting, in order
    assert batches_received.written == [_event(0), _event(1)]


# -- URLs to the viewer -------------------------------------------------------------------------

TINY = "{tiny}"  # replaced by the name of a real run

URL_CASES: dict[str, tuple[str, tuple[int, ...]]] = {
    "url: parent directory": ("/api/runs/..", (404,)),
    "url: encoded parent directory": ("/api/runs/%2e%2e", (404,)),
    "url: encoded traversal to /etc": ("/api/runs/..%2F..%2Fetc", (404,)),
    "url: double-encoded traversal": ("/api/runs/%252e%252e%252f%252e%252e%252fetc", (404,)),
    "url: absolute path": ("/api/runs/%2Fetc%2Fpasswd", (404,)),
    "url: NUL byte": ("/api/runs/tiny%00", (404,)),
    "url: unknown run": ("/api/runs/nope", (404,)),
    "url: run page traversal": ("/run/..%2F..", (404,)),
    "url: static traversal": ("/static/..%2Fviewer.py", (404,)),
    "url: source file as static": ("/static/viewer.py", (404,)),
    "url: agent traversal": (f"/api/runs/{TINY}/agents/..%2F..%2Fx/mind", (404,)),
    "url: unknown agent": (f"/api/runs/{TINY}/agents/ghost/mind", (404,)),
    "url: position not a number": (f"/api/runs/{TINY}/agents/learner/mind?pos=abc", (400,)),
    "url: negative position": (f"/api/runs/{TINY}/agents/learner/mind?pos=-1", (400,)),
    "url: position of 10,000 digits": (f"/api/runs/{TINY}/agents/learner/mind?pos={'9' * 10_000}", (400,)),
    "url: negative episode": (f"/api/runs/{TINY}/agents/learner/mind?episode=-3", (400,)),
    "url: zero message limit": (f"/api/runs/{TINY}/messages?limit=0", (400,)),
    "url: markup as a functor filter": (f"/api/runs/{TINY}/messages?hide=%3Cscript%3E", (400,)),
    "url: very long run name": ("/api/runs/" + "r" * 6000, (404,)),
    "url: request line over 8 KB": ("/api/runs/" + "r" * 20_000, (400,)),
    # aiohttp answers these itself, before any route: the viewer's server makes those answers its own
    "url: path of 10,000 characters": ("/" + "p" * 10_000, (400,)),
    "url: query of 10,000 characters": ("/api/runs?" + "q" * 10_000, (400,)),
    "url: no such route": ("/wp-admin/setup.php", (404,)),
}

#: Requests no browser sends, byte for byte over a socket, and the status each gets.
RAW_CASES: dict[str, tuple[bytes, int]] = {
    "raw: header of 20,000 characters": (
        b"GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"h" * 20_000 + b"\r\n\r\n",
        400,
    ),
    "raw: 200 headers": (
        b"GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\n" + b"".join(b"X-%d: 1\r\n" % i for i in range(200)) + b"\r\n",
        400,
    ),
    "raw: malformed request line": (b"GET /api/runs HTTP/9.9 extra\r\nHost: 127.0.0.1\r\n\r\n", 400),
    "raw: no method": (b"/api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 400),
    "raw: NUL in the method": (b"GE\x00T / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 400),
    "raw: not HTTP at all": (b"hello there\r\n\r\n", 400),
    "raw: TLS on the HTTP port": (b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + b"\x00" * 64, 400),
    "raw: malformed header": (b"GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header: x\r\n\r\n", 400),
    "raw: two Host headers": (b"GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\n\r\n", 400),
    "raw: a method no route takes": (b"DELETE /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", 405),
    "raw: an expectation it cannot meet": (
        b"POST /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 999-x\r\n"
        b"Connection: close\r\nContent-Length: 1\r\n\r\nx",
        417,
    ),
}


async def raw_request(port: int, request: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send ``request`` as it is and read the whole answer: status, headers, body."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(request)
        await writer.drain()
        answer = await asyncio.wait_for(reader.read(), 10)
    finally:
        writer.close()
    head, _, body = answer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:] if ": " in line)
    return int(lines[0].split()[1]), headers, body


@contextlib.asynccontextmanager
async def _listening_viewer(runs: Path) -> AsyncIterator[int]:
    """``bdi-rl view``'s server over ``runs``, listening on a free loopback port."""
    from bdi_rl.readers.viewer import start_viewer

    port = free_port()
    runner = await start_viewer(runs, "127.0.0.1", port)
    try:
        yield port
    finally:
        await runner.cleanup()


def _assert_refused_in_one_line(status: int, headers: dict[str, str], body: bytes, statuses: tuple[int, ...]) -> None:
    assert status in statuses, (status, body[:300])
    for header, value in SECURITY_HEADERS.items():
        assert headers.get(header) == value, (header, headers)
    text = body.decode("utf-8", "replace")
    assert "root:" not in text and "import " not in text and "Traceback" not in text
    assert len(text) < 300 and text.rstrip("\n").count("\n") == 0, text  # one line, never the request echoed


def _no_traceback_logged(caplog) -> None:
    logged = [r for r in caplog.records if r.exc_info or "Traceback" in r.getMessage()]
    assert not logged, [r.getMessage() for r in logged]


@pytest.mark.parametrize("name", sorted(URL_CASES) + sorted(RAW_CASES))
async def test_bad_url_is_refused_and_the_viewer_goes_on(name, runs, caplog):
    """Each over a socket to a real listening viewer: a 4xx with the security headers and one
    line, nothing from outside the runs, no traceback in the log, nothing on disk changed,
    and the viewer answers the next request."""
    if name in URL_CASES:
        path, statuses = URL_CASES[name]
        path = path.replace(TINY, _run_named(runs, "tiny").name)
        request = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode()
    else:
        request, status = RAW_CASES[name]
        statuses = (status,)
    before = {p: p.stat().st_mtime_ns for p in runs.rglob("*")}
    with caplog.at_level(logging.DEBUG):
        async with _listening_viewer(runs) as port:
            _assert_refused_in_one_line(*await raw_request(port, request), statuses)
            status, headers, _ = await raw_request(
                port, b"GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
            )
            assert status == 200 and headers["Content-Security-Policy"] == SECURITY_HEADERS["Content-Security-Policy"]
    _no_traceback_logged(caplog)
    assert {p: p.stat().st_mtime_ns for p in runs.rglob("*")} == before


async def test_a_handler_that_fails_is_a_500_with_the_headers_and_its_traceback_logged(runs, monkeypatch, caplog):
    """A bug (here injected: a handler that raises) is a 500 of one line with the security
    headers; its traceback goes to the log, once, as a bug's should."""
    from bdi_rl.readers import viewer

    async def broken(request):
        raise RuntimeError("injected fault")

    monkeypatch.setattr(viewer, "api_kinds", broken)
    with caplog.at_level(logging.DEBUG):
        async with _listening_viewer(runs) as port:
            status, headers, body = await raw_request(
                port, b"GET /api/kinds HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
            )
    assert status == 500 and body == b"500 Internal Server Error\n"
    assert headers["Content-Security-Policy"] == SECURITY_HEADERS["Content-Security-Policy"]
    failures = [r for r in caplog.records if r.exc_info]
    assert len(failures) == 1 and "injected fault" in str(failures[0].exc_info[1])


async def test_a_handler_that_fails_mid_answer_closes_the_connection_and_logs_it_once(runs, monkeypatch, caplog):
    """The live stream fails after its headers went out (injected): nothing can replace the
    answer, so the connection closes; the bug's traceback is logged once, and nothing else."""
    from bdi_rl.readers import viewerapi

    async def broken(request, index, response):
        await response.write(b"event: update\ndata: {}\n\n")
        raise RuntimeError("injected fault mid-stream")

    monkeypatch.setattr(viewerapi, "_stream_updates", broken)
    run = _run_named(runs, "tiny").name
    with caplog.at_level(logging.DEBUG):
        async with _listening_viewer(runs) as port:
            status, headers, body = await raw_request(
                port, f"GET /api/runs/{run}/live HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()
            )
            assert status == 200 and headers["Content-Security-Policy"] and b"event: update" in body
            assert b"500" not in body  # no second answer written into the stream
    failures = [r for r in caplog.records if r.exc_info]
    assert len(failures) == 1 and "injected fault mid-stream" in str(failures[0].exc_info[1])
