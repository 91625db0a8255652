"""``bdi-rl serve``: the viewer grown into a control surface (start runs and seed sweeps,
queue them, stop them). Each run is a ``bdi-rl run`` child process, so it makes an ordinary
run directory by the same code path as the terminal does. Only :mod:`bdi_rl.cli` imports it.
"""
