"""Library patches (bdi_rl/patches.py): in one place, applied explicitly at start-up, each
library the version its patches were written for."""

from __future__ import annotations

import logging
import subprocess
import sys

import pytest

from bdi_rl import patches


@pytest.mark.parametrize("distribution", sorted(patches.BY_DISTRIBUTION))
def test_the_installed_library_is_the_version_its_patches_were_written_for(distribution):
    problem = patches.mismatch(distribution)
    assert problem is None, problem


def test_another_version_is_named_with_the_modules_to_recheck(monkeypatch, caplog):
    """What a user with another release sees, once: which library, which modules."""
    old = patches.BY_DISTRIBUTION["spade"]
    monkeypatch.setitem(
        patches.BY_DISTRIBUTION, "spade", patches.Patch("spade", "0.0.1", ("bdi_rl.xmpp.patches",), old.what, old.apply)
    )
    monkeypatch.setattr(patches, "_warned", set())
    with caplog.at_level(logging.WARNING, logger="bdi_rl.patches"):
        patches.check_versions()
        patches.check_versions()
    messages = [r.getMessage() for r in caplog.records if r.name == "bdi_rl.patches"]
    assert messages == [
        f"spade {patches.installed('spade')} is installed, but "
        "bdi_rl.xmpp.patches patch its internals as of 0.0.1: re-check them against "
        "the new release"
    ]


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def test_importing_the_package_patches_nothing():
    """No side effects on import: the libraries are as shipped until apply_all()."""
    result = _python("""
import spade.agent, sys
original = spade.agent.XMPPClient
import bdi_rl.cli, bdi_rl.xmpp.runner, bdi_rl.xmpp.agent, bdi_rl.xmpp.telemetry, bdi_rl.bdi.mind
assert spade.agent.XMPPClient is original, "patched on import"
assert "agentspeak" not in sys.modules and "spade_bdi" not in sys.modules  # bdi-rl's mind is its own
from bdi_rl import patches
patches.apply_all()
assert spade.agent.XMPPClient is not original
print("ok")
""")
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr


def test_an_agent_built_before_start_up_says_what_to_call():
    """A script that skips apply_all() is told so, instead of running on unpatched libraries."""
    result = _python("""
from bdi_rl.xmpp.agent import TracedBdiAgent
from bdi_rl.xmpp.telemetry import TelemetryAgent
for build in (lambda: TracedBdiAgent("a@localhost", "pw", "a.asl", tracer=None, telemetry="t@localhost"),
              lambda: TelemetryAgent("t@localhost", "pw")):
    try:
        build()
    except RuntimeError as exc:
        print(exc)
""")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 2 and all("call bdi_rl.patches.apply_all() at start-up" in line for line in lines), lines


def test_an_agent_gets_no_web_interface_it_would_never_start():
    """SPADE's per-agent web app (its jinja2 pages) is not built: bdi-rl never serves it, and
    the first one cost a process the import of arrow (start-up, issue 33)."""
    result = _python("""
import sys
from bdi_rl.patches import apply_all
apply_all()
from bdi_rl.xmpp.agent import TracedBdiAgent
from spade.agent import Agent
agent = Agent("someone@localhost", "secret")
assert not agent.web.is_started()
assert "arrow" not in sys.modules and "jinja2_time" not in sys.modules, "the web app was built"
print("ok")
""")
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr


def test_a_plain_template_matches_the_messages_spades_own_match_does():
    """The mailboxes' template match (without SPADE's per-match debug line) takes exactly
    the messages SPADE's ``Template.match`` takes, on every field a template can hold."""
    from spade.message import Message
    from spade.template import Template

    from bdi_rl.xmpp.patches import _template_matches

    templates = [
        Template(),
        Template(metadata={"performative": "BDI"}),
        Template(metadata={"performative": "BDI", "ilf_type": "tell"}),
        Template(to="bob@localhost"),
        Template(to="bob@localhost/r1"),
        Template(sender="alice@localhost"),
        Template(body="hello"),
        Template(thread="t-1"),
        Template(sender="alice@localhost", metadata={"ontology": "bdi-rl.trace"}),
    ]
    messages = []
    for to in ("bob@localhost", "bob@localhost/r1", "carol@localhost", None):
        for sender in ("alice@localhost", "mallory@localhost", None):
            for metadata in (
                {},
                {"performative": "BDI"},
                {"performative": "BDI", "ilf_type": "tell"},
                {"ontology": "bdi-rl.trace"},
            ):
                for body, thread in ((None, None), ("hello", "t-1"), ("bye", "t-2")):
                    msg = Message(to=to, sender=sender, body=body, thread=thread, metadata=dict(metadata))
                    messages.append(msg)
    agreed = [(t.match(m), _template_matches(t, m)) for t in templates for m in messages]
    assert all(spade == ours for spade, ours in agreed)
    assert sum(spade for spade, _ in agreed) > len(messages)  # some match, not only the empty template's
