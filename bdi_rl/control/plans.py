"""Plan files a user uploads with a sweep from the control page: their own ``.asl`` text,
named in the sweep's axes (``"agents.learner.asl" = ["mine.asl", "learner.asl"]``).

They are staged in a directory of their own beside a copy of the shipped ``lib/`` (so
``{ include("lib/episode.asl") }`` works as beside the shipped plans), checked by the
loader as every plan of a run is (``bdi-rl run``'s checks, per configuration), and only then
kept beside the sweep (``runs/.sweeps/<sweep>/plans/``), where its runs read them. A name is
a plain file name that no shipped plan has; nothing else of the server's files is reachable.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

from bdi_rl.control.specs import RequestError
from bdi_rl.spec import packaged_asl_dir
from bdi_rl.store import SWEEPS_DIR

#: Most plan files one sweep uploads.
MAX_PLANS = 8
_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}\.asl")


class StagedPlans:
    """Uploaded plans in a temporary directory, until the sweep they belong to keeps them."""

    def __init__(self, plans: dict[str, str]) -> None:
        shipped = {p.name for p in packaged_asl_dir().glob("*.asl")}
        if len(plans) > MAX_PLANS:
            raise RequestError(f"plans: at most {MAX_PLANS} plan files")
        for name in plans:
            if not _NAME.fullmatch(name):
                raise RequestError(
                    f"plans: {name[:80]!r} is not a plan file name (letters, digits, - and _, then .asl)"
                )
            if name in shipped:
                raise RequestError(f"plans: {name} is a shipped plan's name: upload yours under another")
        self.names = set(plans)
        self.directory = Path(tempfile.mkdtemp(prefix="bdi-rl-plans-"))
        lib = packaged_asl_dir() / "lib"
        if lib.is_dir():
            shutil.copytree(lib, self.directory / "lib")
        for name, text in plans.items():
            (self.directory / name).write_text(text)

    def resolve(self, axes: dict[str, Any]) -> dict[str, Any]:
        """The axes with each uploaded plan's name as its staged path."""
        out: dict[str, Any] = {}
        for path, values in axes.items():
            if path.startswith("agents.") and path.endswith(".asl") and isinstance(values, list):
                values = [str(self.directory / v) if isinstance(v, str) and v in self.names else v for v in values]
            out[path] = values
        return out

    def keep(self, runs: Path, sweep: str) -> Path:
        """Move the plans beside the sweep; returns where they are now."""
        kept = runs / SWEEPS_DIR / sweep / "plans"
        kept.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(self.directory, kept)
        self.discard()
        return kept

    def moved(self, value: Any, kept: Path) -> Any:
        """A setting's value as it reads once the plans are kept (staged path -> kept path)."""
        if isinstance(value, str) and value.startswith(str(self.directory) + "/"):
            return str(kept / Path(value).name)
        return value

    def discard(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)
