"""Env families: what differs between FrozenLake, CliffWalking, Taxi, the shipped worlds and
any other env, answered by one class each instead of comparing names around the code.

A family is chosen once, where its env is made (:func:`family_of_env` for a Gymnasium env,
``rl.worldenv.WORLDS`` for a shared world) or where a reader meets its name
(:func:`family_named` for the ``family`` a trace's map carries, :func:`family_of_id` for an
old trace's env id). Its ``name`` is what the trace and the viewer's JSON record. Plain Python:
readers import it without gymnasium; the toy-text envs it reads (``desc``, ``shape``...) are
handed in as their unwrapped env.
"""

from __future__ import annotations

from typing import Any, ClassVar

__all__ = [
    "CLIFF_WALKING",
    "FAMILIES",
    "FROZEN_LAKE",
    "GENERIC",
    "LB_FORAGING",
    "MATRIX_GAME",
    "MOVES",
    "TAXI",
    "TAXI_STATIONS",
    "Family",
    "family_named",
    "family_of_env",
    "family_of_id",
    "taxi_decode",
    "taxi_encode",
    "world_cell",
    "world_state",
]

#: (dx, dy) of each move by its action's name (y grows downwards); Taxi's pickup and dropoff
#: move nothing.
MOVES: dict[str, tuple[int, int]] = {
    "left": (-1, 0),
    "west": (-1, 0),
    "right": (1, 0),
    "east": (1, 0),
    "up": (0, -1),
    "north": (0, -1),
    "down": (0, 1),
    "south": (0, 1),
}

#: Taxi's passenger locations and destinations index these stations (Gymnasium's ``locs``).
TAXI_STATIONS = "RGYB"


def taxi_decode(s: int) -> tuple[int, int, int, int]:
    """(taxi_row, taxi_col, passenger location, destination) of a Taxi state, as
    Gymnasium's ``TaxiEnv.decode`` does it (passenger location 4: in the taxi)."""
    s, destination = divmod(s, 4)
    s, passenger = divmod(s, 5)
    row, col = divmod(s, 5)
    return row, col, passenger, destination


def taxi_encode(row: int, col: int, passenger: int, destination: int) -> int:
    """The Taxi state of those coordinates (``TaxiEnv.encode``)."""
    return ((row * 5 + col) * 5 + passenger) * 4 + destination


def _desc_rows(base: Any) -> list[str]:
    """A toy-text env's ``desc`` (a byte array) as one string per row."""
    return [b"".join(row).decode() for row in base.desc.tolist()]


class Family:
    """Any other env: no grid, no map, success by a positive last reward.

    Subclasses override what their envs do differently; every answer here is the one for an
    env bdi-rl knows nothing about."""

    name: ClassVar[str] = "generic"
    #: The success rule, as the README states it.
    success_rule: ClassVar[str] = "ended by termination with a positive last reward"
    #: What each action does (Gymnasium's toy-text docs); an env without them gets "a0", "a1"...
    action_names: ClassVar[tuple[str, ...]] = ()
    #: ``type(env.unwrapped).__name__`` of the Gymnasium envs of this family.
    env_classes: ClassVar[tuple[str, ...]] = ()
    #: Beginnings of the env ids of this family (readers of traces that predate ``success``).
    id_prefixes: ClassVar[tuple[str, ...]] = ()
    #: Map letters a drawn map labels, those of them that are hazards (never shaded, white
    #: label), and Taxi's stations (drawn in their colours).
    marks: ClassVar[str] = ""
    hazards: ClassVar[str] = ""
    stations: ClassVar[str] = ""
    #: Whether a spec may move this family's goal (``env.goals``, ``rl.goals``).
    moving_goals: ClassVar[bool] = False

    # -- the env (``base`` is its unwrapped Gymnasium env) ----------------------------------

    def grid_shape(self, base: Any) -> tuple[int, int] | None:
        """(rows, cols) when a state is a grid cell (``y * cols + x``), else None."""
        return None

    def world(self, base: Any) -> dict[str, Any] | None:
        """The map the trace records (``trace.kinds.WorldData``); None: nothing to draw."""
        return None

    #: Whether a state decodes into facts a learner perceives (:meth:`facts`).
    has_facts: ClassVar[bool] = False

    def facts(self, s: int) -> dict[str, tuple[int, ...]]:
        """What state ``s`` is made of, as percepts (functor -> arguments): plans that
        abstract the state read them (Taxi's hierarchy navigates on ``taxi(Row, Col)``)."""
        return {}

    def state_space_kwargs(self, base: Any) -> dict[str, Any] | None:
        """The kwargs a saved Q-table must match when the env itself tells them; None: they
        come from the env id's kwargs (``rl.envs``)."""
        return None

    def task_signature(self, base: Any) -> dict[str, Any]:
        """What the task looks like on the states (``EnvAdapter.task_signature``)."""
        return {}

    def terminal_outcome(self, r: float) -> str:
        """How an episode that terminated with last reward ``r`` ended."""
        return "goal" if r > 0 else "failed"

    def is_success(self, outcome: str | None, episode_return: float | None) -> bool:
        """Whether an episode that ended as ``outcome`` with ``episode_return`` succeeded:
        "goal" means terminated at the goal or with a positive reward."""
        return outcome == "goal"

    # -- the recorded map (``world`` is what :meth:`world` returned) ------------------------

    def cell(self, world: dict[str, Any], s: int) -> dict[str, Any]:
        """Where state ``s`` is on ``world``'s map: ``x`` (column) and ``y`` (row)."""
        y, x = divmod(s, int(world["cols"]))
        return {"x": x, "y": y}

    def state(self, world: dict[str, Any], x: int, y: int, like: dict[str, Any] | None) -> int:
        """The state at cell (x, y); ``like`` (a :meth:`cell`) fills what a cell leaves open."""
        return y * int(world["cols"]) + x

    def fits_map(self, world: dict[str, Any], n_states: int) -> bool:
        """Whether a Q-table of ``n_states`` rows can be drawn on ``world``'s map."""
        return n_states == int(world["rows"]) * int(world["cols"])


class FrozenLake(Family):
    name = "frozenlake"
    success_rule = "reached the goal tile"
    action_names = ("left", "down", "right", "up")
    env_classes = ("FrozenLakeEnv",)
    id_prefixes = ("FrozenLake",)
    marks, hazards = "HG", "H"
    moving_goals = True

    def grid_shape(self, base: Any) -> tuple[int, int] | None:
        return (int(base.nrow), int(base.ncol))

    def world(self, base: Any) -> dict[str, Any] | None:
        """The resolved ``desc`` (S F H G), custom and generated maps included."""
        rows = _desc_rows(base)
        return {"family": self.name, "rows": len(rows), "cols": len(rows[0]), "map": rows}

    def state_space_kwargs(self, base: Any) -> dict[str, Any] | None:
        """The grid's size, not its layout: a table carries over to a map whose goal (or
        holes) moved, a new task on the same states (:meth:`task_signature` records it)."""
        rows, cols = self.grid_shape(base)  # type: ignore[misc]
        return {"grid": f"{rows}x{cols}"}

    def task_signature(self, base: Any) -> dict[str, Any]:
        """The map rows (start, holes, goal)."""
        return {"desc": _desc_rows(base)}

    def terminal_outcome(self, r: float) -> str:
        """Terminated without reward: fell in a hole."""
        return "goal" if r > 0 else "hole"


class CliffWalking(Family):
    name = "cliffwalking"
    success_rule = "reached the goal (the optimal -13 included: the cliff only sends you back)"
    action_names = ("up", "right", "down", "left")
    env_classes = ("CliffWalkingEnv",)
    id_prefixes = ("CliffWalking",)
    marks, hazards = "CG", "C"

    def grid_shape(self, base: Any) -> tuple[int, int] | None:
        rows, cols = base.shape
        return (int(rows), int(cols))

    def world(self, base: Any) -> dict[str, Any] | None:
        """S, C (cliff), G and ``.``."""
        n_rows, n_cols = (int(v) for v in base.shape)
        cliff = base._cliff
        cells = [["C" if cliff[y][x] else "." for x in range(n_cols)] for y in range(n_rows)]
        start = int(base.start_state_index)
        cells[start // n_cols][start % n_cols] = "S"
        cells[n_rows - 1][n_cols - 1] = "G"
        return {"family": self.name, "rows": n_rows, "cols": n_cols, "map": ["".join(r) for r in cells]}

    def terminal_outcome(self, r: float) -> str:
        """CliffWalking only terminates at the goal (the cliff sends the agent back)."""
        return "goal"


class Taxi(Family):
    name = "taxi"
    success_rule = "delivered the passenger with a positive return (a delivery after many illegal moves is not)"
    action_names = ("south", "north", "east", "west", "pickup", "dropoff")
    env_classes = ("TaxiEnv",)
    id_prefixes = ("Taxi",)
    stations = TAXI_STATIONS

    def world(self, base: Any) -> dict[str, Any] | None:
        """The stations R G Y B and ``.``, with ``walls`` the [row, col] cells that have a
        wall on their east side (Taxi's fixed layout)."""
        desc = _desc_rows(base)
        n_rows, n_cols = len(desc) - 2, (len(desc[0]) - 1) // 2
        cells = [[desc[y + 1][2 * x + 1].strip() or "." for x in range(n_cols)] for y in range(n_rows)]
        walls = [[y, x] for y in range(n_rows) for x in range(n_cols - 1) if desc[y + 1][2 * x + 2] == "|"]
        return {"family": self.name, "rows": n_rows, "cols": n_cols, "map": ["".join(r) for r in cells], "walls": walls}

    def is_success(self, outcome: str | None, episode_return: float | None) -> bool:
        return outcome == "goal" and episode_return is not None and episode_return > 0

    has_facts = True

    def facts(self, s: int) -> dict[str, tuple[int, ...]]:
        """``taxi(Row, Col)``, ``passenger(P)`` (a station 0-3, 4: in the taxi) and
        ``destination(D)`` (a station 0-3; ``taxi_decode``)."""
        row, col, passenger, destination = taxi_decode(s)
        return {"taxi": (row, col), "passenger": (passenger,), "destination": (destination,)}

    def cell(self, world: dict[str, Any], s: int) -> dict[str, Any]:
        """Also the passenger location and destination, decoded (a cell is many states)."""
        row, col, passenger, destination = taxi_decode(s)
        return {"x": col, "y": row, "passenger": passenger, "destination": destination}

    def state(self, world: dict[str, Any], x: int, y: int, like: dict[str, Any] | None) -> int:
        """With the passenger and destination of ``like``."""
        like = like or {}
        return taxi_encode(y, x, int(like.get("passenger", 0)), int(like.get("destination", 0)))

    def fits_map(self, world: dict[str, Any], n_states: int) -> bool:
        """Any table: its cells are drawn for one passenger and destination."""
        return True


class MatrixGame(Family):
    name = "matrixgame"
    success_rule = "the joint action paid the game's optimum (climbing 11, penalty 10, consensus 1)"
    id_prefixes = ("climbing_game", "penalty_game", "consensus_game")


class LBForaging(Family):
    name = "lbforaging"
    success_rule = "the players ate the food together before the step limit"
    id_prefixes = ("lbforaging",)


FROZEN_LAKE, CLIFF_WALKING, TAXI = FrozenLake(), CliffWalking(), Taxi()
MATRIX_GAME, LB_FORAGING, GENERIC = MatrixGame(), LBForaging(), Family()
#: Every family, the one lookup table the others are built from.
FAMILIES: tuple[Family, ...] = (FROZEN_LAKE, CLIFF_WALKING, TAXI, MATRIX_GAME, LB_FORAGING, GENERIC)

_BY_NAME = {family.name: family for family in FAMILIES}
_BY_ENV_CLASS = {cls: family for family in FAMILIES for cls in family.env_classes}
_BY_ID_PREFIX = tuple((prefix, family) for family in FAMILIES for prefix in family.id_prefixes)


def family_of_env(base: Any) -> Family:
    """The family of an unwrapped Gymnasium env, by its class."""
    return _BY_ENV_CLASS.get(type(base).__name__, GENERIC)


def family_named(name: str | None) -> Family:
    """The family a trace names (a map's ``family``); the generic one for a name it does not know."""
    return _BY_NAME.get(name or "", GENERIC)


def family_of_id(env_id: str | None) -> Family:
    """The family of an env id (``FrozenLake-v1`` -> FrozenLake); generic for others."""
    name = (env_id or "").split(":")[-1]
    return next((family for prefix, family in _BY_ID_PREFIX if name.startswith(prefix)), GENERIC)


def world_cell(world: dict[str, Any], s: int) -> dict[str, Any]:
    """Where state ``s`` is on ``world``'s map (``EnvAdapter.world``): ``x`` (column) and
    ``y`` (row); for Taxi also the passenger location and destination, decoded."""
    return family_named(world["family"]).cell(world, s)


def world_state(world: dict[str, Any], x: int, y: int, like: dict[str, Any] | None = None) -> int:
    """The state at cell (x, y); for Taxi, with the passenger and destination of ``like``
    (a :func:`world_cell`), since a Taxi cell is many states."""
    return family_named(world["family"]).state(world, x, y, like)
