"""``bdi-rl dashboard``: a desktop window following a run's curves live (pyqtgraph, Qt).

Needs the ``[gui]`` extra (pyqtgraph, PySide6-Essentials). Reads the run through
:class:`~bdi_rl.readers.runindex.RunIndex` once a second; shows episodic return (rolling mean) and
success rate per agent, and epsilon. ``--screenshot FILE`` renders one frame and exits (for
headless machines: ``QT_QPA_PLATFORM=offscreen``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from bdi_rl.readers.plots import WINDOW, rolling_mean
from bdi_rl.readers.runindex import RunIndex

log = logging.getLogger("bdi_rl.readers.dashboard")

#: Seconds between two reads of a live run's trace.
REFRESH_SECONDS = 1.0
COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2"]


class DashboardError(RuntimeError):
    """The GUI extra is missing (one line for the CLI)."""


def _qt() -> tuple[Any, Any]:
    try:
        import pyqtgraph as pg
        from pyqtgraph.Qt import QtWidgets
    except ImportError as exc:
        raise DashboardError(f"the dashboard needs the GUI extra: pip install 'bdi-rl[gui]' ({exc})") from None
    return pg, QtWidgets


class Dashboard:
    """The window: three plots, one curve per agent, refreshed from the run's trace."""

    def __init__(self, run_dir: Path, on_damage: Callable[[str], None] | None = None) -> None:
        pg, QtWidgets = _qt()
        self.app = QtWidgets.QApplication.instance() or QtWidgets.QApplication([])
        pg.setConfigOptions(antialias=True, background="w", foreground="k")
        self.index = RunIndex(run_dir, read_around=True)  # a damaged trace: said in the title
        self._told: str | None = None
        self._on_damage = on_damage or (lambda notice: log.warning("dashboard: %s", notice))
        self.window = pg.GraphicsLayoutWidget(title=f"bdi-rl: {run_dir.name}")
        self.window.resize(1100, 760)
        self.returns = self.window.addPlot(row=0, col=0, title=f"Episodic return (rolling {WINDOW})")
        self.success = self.window.addPlot(row=0, col=1, title=f"Success rate (rolling {WINDOW})")
        self.epsilon = self.window.addPlot(row=1, col=0, colspan=2, title="Epsilon")
        for plot in (self.returns, self.success, self.epsilon):
            plot.showGrid(x=True, y=True, alpha=0.3)
            plot.setLabel("bottom", "episode")
        self.returns.addLegend(offset=(10, 10))
        self.curves: dict[str, tuple[Any, Any, Any]] = {}
        self._pg = pg
        self.timer = pg.QtCore.QTimer()
        self.timer.timeout.connect(self.update)

    def update(self) -> int:
        """Read what the trace gained and redraw; returns the episodes shown."""
        self.index.refresh()
        shown = 0
        for jid, agent in sorted(self.index.agents.items()):
            if not agent.episodes:
                continue
            if jid not in self.curves:
                pen = self._pg.mkPen(COLORS[len(self.curves) % len(COLORS)], width=1.5)
                name = jid.split("@", 1)[0]
                self.curves[jid] = (
                    self.returns.plot(pen=pen, name=name),
                    self.success.plot(pen=pen),
                    self.epsilon.plot(pen=pen),
                )
            ret, succ, eps = self.curves[jid]
            x = np.arange(1, len(agent.episodes) + 1)
            returns = np.array([e["return"] or 0.0 for e in agent.episodes])
            wins = np.array([1.0 if e["success"] else 0.0 for e in agent.episodes])
            epsilons = np.array([e["epsilon"] if e["epsilon"] is not None else np.nan for e in agent.episodes])
            ret.setData(x, rolling_mean(returns))
            succ.setData(x, rolling_mean(wins))
            eps.setData(x, epsilons)
            shown += len(x)
        state = self.index.state.state
        self.window.setWindowTitle(f"bdi-rl: {self.index.run_dir.name} ({state}, {shown} episodes)")
        if state != "live":
            self.timer.stop()
        self._say_damage()
        return shown

    def _say_damage(self) -> None:
        """A damaged trace is read around (a live view, as the viewer): the title says so, and
        ``on_damage`` (stderr) which line and why, once."""
        notice = self.index.damage_notice()
        if notice is None:
            return
        self.window.setWindowTitle(f"{self.window.windowTitle()} DAMAGED TRACE: lines read around")
        if notice != self._told:
            self._told = notice
            self._on_damage(notice)

    def screenshot(self, path: Path) -> None:
        self.window.show()
        self.update()
        self.app.processEvents()
        if not self.window.grab().save(str(path)):
            raise DashboardError(f"{path}: cannot write the screenshot")

    def run(self) -> None:
        self.window.show()
        self.update()
        self.timer.start(int(REFRESH_SECONDS * 1000))
        self.app.exec()
