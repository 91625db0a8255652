"""bdi-rl patches library internals (bdi_rl/versions.py): the installed versions must be the
ones those patches were written for, or this says which modules to re-check."""

from __future__ import annotations

import logging

import pytest

from bdi_rl import versions


@pytest.mark.parametrize("distribution", sorted(versions.WRITTEN_FOR))
def test_the_installed_library_is_the_version_its_patches_were_written_for(distribution):
    problem = versions.mismatch(distribution)
    assert problem is None, problem


def test_another_version_is_named_with_the_modules_to_recheck(monkeypatch, caplog):
    """What a user with another release sees, once: which library, which modules."""
    monkeypatch.setitem(versions.WRITTEN_FOR, "agentspeak", ("0.0.1", ("bdi_rl.bdi.fused",)))
    monkeypatch.setattr(versions, "_warned", set())
    with caplog.at_level(logging.WARNING, logger="bdi_rl.versions"):
        versions.check("agentspeak")
        versions.check("agentspeak")
    messages = [r.getMessage() for r in caplog.records if r.name == "bdi_rl.versions"]
    assert messages == [f"agentspeak {versions.installed('agentspeak')} is installed, but "
                        "bdi_rl.bdi.fused patch its internals as of 0.0.1: re-check them against "
                        "the new release"]
