"""Sweep records: what ``bdi-rl serve`` writes and the charts read back."""

from __future__ import annotations

from pathlib import Path

from bdi_rl.store import SWEEPS_DIR, Sweep, new_sweep_id, read_sweep, read_sweeps, write_sweep


def test_a_sweep_reads_back_and_a_second_in_the_same_second_gets_its_own_id(tmp_path: Path) -> None:
    first = Sweep(id=new_sweep_id(tmp_path, 0.0), spec="frozenlake-8x8", seeds=[1, 2], runs=[None, None], created=0.0)
    write_sweep(tmp_path, first)
    second_id = new_sweep_id(tmp_path, 0.0)
    assert second_id == f"{first.id}-1"
    write_sweep(tmp_path, Sweep(id=second_id, spec="x", seeds=[3], runs=["r"], created=1.0))
    first.runs[0] = "FrozenLake-v1__frozenlake-8x8__1__5"
    write_sweep(tmp_path, first)  # updated in place as its runs start
    assert read_sweep(tmp_path, first.id) == first
    assert [s.id for s in read_sweeps(tmp_path)] == [second_id, first.id]


def test_ids_that_are_not_sweep_ids_and_damaged_records_read_as_none(tmp_path: Path) -> None:
    (tmp_path / "secret.json").write_text("{}")
    assert read_sweep(tmp_path, "../secret") is None
    folder = tmp_path / SWEEPS_DIR
    folder.mkdir()
    (folder / "sweep-20260101-000000.json").write_text('{"id": "sweep-20260101-000000", "seeds": "x"}')
    assert read_sweep(tmp_path, "sweep-20260101-000000") is None
    assert read_sweeps(tmp_path) == []
