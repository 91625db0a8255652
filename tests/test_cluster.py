"""Beyond one server: two ejabberd nodes joined into one cluster on loopback (Debian's
ejabberd, private node names and ports, the same compose/ejabberd.yml), and a shared-world
experiment whose agents log in to different nodes: telemetry and the leader on one, the world
agent and the follower on the other. Every call between a player and the world, every
proposal and every trace batch crosses the cluster one way or the other."""

from __future__ import annotations

import pytest

from bdi_rl.trace.kinds import WORLD_STEP
from bdi_rl.trace.reading import read_trace
from tests.ejabberd import remove, start_ejabberd_cluster
from tests.test_processes import _assert_every_event_once, across_processes
from tests.test_world_shared import ROOT

pytestmark = pytest.mark.slow  # two ejabberd nodes and five processes


@pytest.fixture(scope="module")
def cluster():
    nodes = start_ejabberd_cluster(2)
    yield nodes
    for node in nodes:
        remove(node)


def test_a_shared_world_across_two_clustered_ejabberd_nodes(cluster, tmp_path):
    a, b = cluster
    text = (ROOT / "agents" / "climbing.toml").read_text().replace("episodes = 1000", "episodes = 300")
    spec = tmp_path / "climbing.toml"
    spec.write_text(text.replace("epsilon_decay_episodes = 800", "epsilon_decay_episodes = 240"))
    ports = {"telemetry": a.port, "player-1": a.port, "world": b.port, "player-2": b.port}
    run_dir = across_processes(ports, tmp_path, spec, "player-1", "world", "player-2")

    events = read_trace(run_dir / "trace.jsonl")
    _assert_every_event_once(events, ["player-1", "player-2", "world"])  # each event once, none lost
    steps = [e["data"] for e in events if e["kind"] == WORLD_STEP]
    assert [s["episode"] for s in steps] == list(range(300))
    # the follower (node b) told the leader (node a) its intentions; the leader proposed back
    heard = {(e["agent"], e["data"]["content"].split("(", 1)[0]) for e in events if e["kind"] == "msg.recv"}
    assert {("player-1@localhost", "intends"), ("player-2@localhost", "adopt")} <= heard
    for name in ("player-1", "player-2"):
        stop = next(e for e in events if e["agent"] == f"{name}@localhost" and e["kind"] == "agent.stop")
        assert stop["data"]["reason"] == "finished"
    # one database: the accounts each node registered are known to the other
    for node in (a, b):
        assert set(node.ctl("registered_users", "localhost").stdout.split()) >= {
            "player-1",
            "player-2",
            "world",
            "telemetry",
        }
