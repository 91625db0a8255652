"""A sweep file: one spec, axes over any of its settings, seeds; a grid or a random draw;
read and checked whole before a single run starts (``bdi-rl sweep FILE``).

    spec = "climbing"                 # a spec file (beside this file) or a shipped spec's name
    method = "grid"                   # or "random": ``samples`` configurations drawn
    samples = 12                      # random only
    draw_seed = 0                     # random only: the draw's own seed

    [axes]
    "learning.alpha" = [0.1, 0.2, 0.4]
    "agents.player.asl" = ["coordinated-learner.asl", "learner.asl"]
    "env.kwargs.is_slippery" = [true, false]
    "learning.gamma" = { uniform = [0.9, 0.99] }     # random only: uniform, log_uniform, int_uniform
    seed = { from = 0, count = 20 }                   # or a list of seeds

An axis is a spec path (``bdi_rl.settings``). A configuration is one value per axis (every
combination for a grid); each configuration runs once per seed, seed by seed (every
configuration's first seed before any second one, so early results cover them all). Every
value of every axis is checked alone against the spec (a bad one is named with its axis), then
every configuration as a whole; a plan file named in an axis is looked for beside the sweep
file, then beside the spec, then among the shipped plans.
"""

from __future__ import annotations

import itertools
import math
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bdi_rl.settings import check_path
from bdi_rl.spec import MAX_SEED, ExperimentSpec, SpecError, load_spec, read_toml_file, resolve_spec_path

#: Most runs in one sweep (a typo in ``count`` must not queue a million runs).
MAX_RUNS = 10_000
METHODS = ("grid", "random")
DISTRIBUTIONS = ("uniform", "log_uniform", "int_uniform")
_TOP_KEYS = {"spec", "method", "samples", "draw_seed", "axes", "name"}


@dataclass(frozen=True)
class Configuration:
    """One value per axis (the seed aside)."""

    settings: dict[str, Any]

    def label(self) -> str:
        """``alpha=0.1, asl=learner.asl``: each axis by its last key."""
        return ", ".join(f"{path.rsplit('.', 1)[-1]}={_shown(value)}" for path, value in self.settings.items())


@dataclass(frozen=True)
class SweepPlan:
    file: Path
    name: str
    spec_path: Path
    spec: ExperimentSpec
    """the spec as it is, without any axis"""
    axes: list[str]
    configurations: list[Configuration]
    seeds: list[int]

    def runs(self) -> list[tuple[int, int]]:
        """(configuration index, seed) of every run, seed by seed."""
        return [(k, seed) for seed in self.seeds for k in range(len(self.configurations))]


def _shown(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, str) and "/" in value:  # a plan file: its name is what tells them apart
        return Path(value).name
    return str(value)


def _bad(file: Path, where: str, what: str) -> SpecError:
    return SpecError(f"{file}: {where}: {what}")


def _seeds(file: Path, value: Any) -> list[int]:
    if isinstance(value, dict):
        if set(value) != {"from", "count"} or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in value.values()
        ):
            raise _bad(file, "axes.seed", "write { from = 0, count = 20 } or a list of seeds")
        start, count = value["from"], value["count"]
        if count < 1:
            raise _bad(file, "axes.seed", "count must be at least 1")
        seeds = list(range(start, start + count))
    elif isinstance(value, list) and value:
        seeds = value
    else:
        raise _bad(file, "axes.seed", "write { from = 0, count = 20 } or a list of seeds")
    for seed in seeds:
        if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed <= MAX_SEED:
            raise _bad(file, "axes.seed", f"{seed!r} is not a seed (an integer from 0 to {MAX_SEED})")
    if len(set(seeds)) != len(seeds):
        raise _bad(file, "axes.seed", "a seed is listed twice")
    return seeds


def _axis(file: Path, path: str, value: Any, method: str) -> list[Any] | dict[str, Any]:
    where = f"axes.{path}"
    if isinstance(value, list):
        if not value:
            raise _bad(file, where, "no value to try")
        return value
    if isinstance(value, dict) and len(value) == 1 and next(iter(value)) in DISTRIBUTIONS:
        kind, bounds = next(iter(value.items()))
        if method != "random":
            raise _bad(file, where, f'a distribution ({kind}) needs method = "random"; a grid takes a list of values')
        numbers = isinstance(bounds, list) and len(bounds) == 2
        numbers = numbers and all(isinstance(b, int | float) and not isinstance(b, bool) for b in bounds)
        if not numbers or not bounds[0] < bounds[1]:
            raise _bad(file, where, f"{kind} takes [low, high] with low < high")
        if kind == "log_uniform" and bounds[0] <= 0:
            raise _bad(file, where, "log_uniform takes positive bounds")
        if kind == "int_uniform" and not all(isinstance(b, int) for b in bounds):
            raise _bad(file, where, "int_uniform takes integer bounds")
        return {kind: bounds}
    raise _bad(file, where, "a list of values, or a distribution: { uniform = [low, high] } (random only)")


def _draw(rng: random.Random, axis: list[Any] | dict[str, Any]) -> Any:
    if isinstance(axis, list):
        return axis[rng.randrange(len(axis))]
    kind, (low, high) = next(iter(axis.items()))
    if kind == "uniform":
        return rng.uniform(low, high)
    if kind == "log_uniform":
        return math.exp(rng.uniform(math.log(low), math.log(high)))
    return rng.randint(low, high)


def _resolve_plan_values(file: Path, spec_path: Path, path: str, values: list[Any]) -> list[Any]:
    """A plan file named in an axis, found beside the sweep file first (then as the spec finds
    it: beside the spec, then among the shipped plans)."""
    if not path.startswith("agents.") or not path.endswith(".asl"):
        return values
    out = []
    for value in values:
        if (
            isinstance(value, str)
            and (file.parent / value).is_file()
            and file.parent.resolve() != spec_path.parent.resolve()
        ):
            out.append(str((file.parent / value).resolve()))
        else:
            out.append(value)
    return out


def load_sweep(file: str | Path) -> SweepPlan:
    """Read and check a sweep file whole: SpecError naming the file and the axis or key."""
    file = Path(file)
    data = read_toml_file(file, "sweep")
    spec_name = data.get("spec")
    if not isinstance(spec_name, str) or not spec_name:
        raise _bad(file, "spec", "name the spec to sweep: a spec file or a shipped spec's name")
    beside = file.parent / spec_name
    return plan_from_table(data, file, beside if beside.is_file() else resolve_spec_path(spec_name))


def plan_from_table(data: dict[str, Any], file: Path, spec_path: Path) -> SweepPlan:
    """A sweep file's table (its ``spec`` already found at ``spec_path``) checked whole; plan
    files named in an axis are looked for beside ``file`` first. ``bdi-rl serve`` gives the
    axes a page sent (``file``: where its uploads are kept)."""
    unknown = sorted(set(data) - _TOP_KEYS)
    if unknown:
        raise _bad(file, unknown[0], f"unknown key (known: {', '.join(sorted(_TOP_KEYS))})")
    base = load_spec(spec_path)
    method = data.get("method", "grid")
    if method not in METHODS:
        raise _bad(file, "method", f"{method!r} is not one of {', '.join(METHODS)}")
    axes_table = data.get("axes", {})
    if not isinstance(axes_table, dict) or not axes_table:
        raise _bad(file, "axes", "no axis: add [axes] with at least one setting or the seeds")
    seeds = _seeds(file, axes_table["seed"]) if "seed" in axes_table else [base.seed]
    axes: dict[str, list[Any] | dict[str, Any]] = {}
    for path, value in axes_table.items():
        if path == "seed":
            continue
        check_path(path, f"{file}: axes.{path}")
        axis = _axis(file, path, value, method)
        if isinstance(axis, list):
            axis = _resolve_plan_values(file, spec_path, path, axis)
            for one in axis:  # each value alone: a bad one is named with its axis
                _check(spec_path, {path: one}, file, f"axes.{path} = {_shown(one)}")
        axes[path] = axis
    configurations = _configurations(file, data, method, axes)
    for configuration in configurations:
        _check(spec_path, configuration.settings, file, f"configuration ({configuration.label()})")
    if len(configurations) * len(seeds) > MAX_RUNS:
        raise _bad(file, "axes", f"{len(configurations) * len(seeds)} runs: a sweep has at most {MAX_RUNS}")
    name = data.get("name", file.stem)
    if not isinstance(name, str) or not name:
        raise _bad(file, "name", "a name is a non-empty string")
    return SweepPlan(file, name, spec_path, base, list(axes), configurations, seeds)


def _configurations(
    file: Path, data: dict[str, Any], method: str, axes: dict[str, list[Any] | dict[str, Any]]
) -> list[Configuration]:
    paths = list(axes)
    if method == "grid":
        lists = [axes[p] for p in paths]
        assert all(isinstance(values, list) for values in lists)  # _axis refused the rest
        total = math.prod(len(values) for values in lists)
        if total > MAX_RUNS:
            raise _bad(file, "axes", f"{total} configurations: a sweep has at most {MAX_RUNS} runs")
        return [Configuration(dict(zip(paths, combo, strict=True))) for combo in itertools.product(*lists)]
    samples = data.get("samples")
    if not isinstance(samples, int) or isinstance(samples, bool) or not 1 <= samples <= MAX_RUNS:
        raise _bad(file, "samples", f"random draws need samples = N (1 to {MAX_RUNS})")
    draw_seed = data.get("draw_seed", 0)
    if not isinstance(draw_seed, int) or isinstance(draw_seed, bool):
        raise _bad(file, "draw_seed", "an integer")
    rng = random.Random(draw_seed)
    return [Configuration({p: _draw(rng, axes[p]) for p in paths}) for _ in range(samples)]


def _check(spec_path: Path, settings: dict[str, Any], file: Path, where: str) -> None:
    try:
        load_spec(spec_path, settings=settings)
    except SpecError as exc:
        text = str(exc)
        prefix = f"{spec_path}: "
        raise _bad(file, where, text[len(prefix) :] if text.startswith(prefix) else text) from None


def configuration_spec(plan: SweepPlan, configuration: Configuration) -> ExperimentSpec:
    """The spec one configuration runs (checked already by :func:`load_sweep`)."""
    return load_spec(plan.spec_path, settings=configuration.settings)
