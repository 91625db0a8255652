"""Jason 3.2.2's standard library in bdi-rl's runtime (issue 27): every action implemented or
refused at load with its reason, the table of docs/AGENTSPEAK.md true to the code, and the
MAS's actions on a host of one agent. What each action does is held by the Jason corpus
(tests/jason/, tests/test_jason_corpus.py: programs recorded on Jason itself); a whole run's
MAS (``.create_agent``, ``.kill_agent``, ``.stopMAS`` over XMPP) by tests/test_mas.py.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bdi_rl.bdi.mind import AslError, load_mind
from bdi_rl.bdi.runtime import Actions, Agent, Host, Struct, load_agent
from bdi_rl.bdi.runtime.stdlib import STANDARD
from bdi_rl.bdi.runtime.stdlib_refused import JASON_ACTIONS, REFUSED, every_action

DOCS = Path(__file__).parent.parent / "docs" / "AGENTSPEAK.md"

#: The classes of jason.stdlib at tag v3.2.2 (jason-interpreter/src/main/java/jason/stdlib),
#: map/set/queue as .map.x, .set.x, .queue.x: the list JASON_ACTIONS must be.
JASON_322 = """
abolish add_annot add_nested_source add_plan all_names asserta assertz at atom belief broadcast clone
concat copy_term count create_agent current_intention date delete desire df_deregister df_register
df_search df_subscribe difference done drop_all_desires drop_all_events drop_all_intentions
drop_desire drop_event drop_future_intention drop_intention empty eval fail fail_goal findall
foreach fork get_src_info ground if_then_else include intend intention internal_action intersection
join kill_agent length list list_files list_plans list_rules literal log loop lower_case map.clear
map.copy map.create map.get map.key map.put map.remove map.value max member min my_name namespace
nano_time nth number perceive plan_label prefix print print_unifier printf println puts queue.add
queue.add_all queue.clear queue.copy queue.create queue.head queue.remove queue.to_list random range
relevant_plan relevant_plans relevant_rules remove_plan remove_source_annot rename_apart replace
resume reverse save_agent send set.add set.add_all set.clear set.copy set.create set.difference
set.intersection set.remove set.to_list set.union set_random_seed setof shuffle signal sort stopMAS
string structure sublist substring succeed_goal suffix suspend suspended term2string time type union
upper_case verbose version wait
"""


def test_every_jason_action_is_implemented_or_refused_with_a_reason() -> None:
    jason = {"." + name for name in JASON_322.split()}
    assert len(jason) == 136
    assert sorted(every_action()) == sorted(jason)  # the table is Jason's library, each once
    assert len(every_action()) == len(jason)
    assert sorted(n for n in jason if n in STANDARD and n in REFUSED) == []
    assert sorted(n for n in jason if n not in STANDARD and n not in REFUSED) == []
    assert sorted(set(STANDARD) - jason) == []  # no action of bdi-rl's own among Jason's
    assert all(REFUSED[name].strip() for name in REFUSED)


def test_the_docs_table_says_what_the_code_does() -> None:
    rows = dict(re.findall(r"^\| [^|]+ \| `(\.[A-Za-z0-9_.]+)` \| (implemented|refused)", DOCS.read_text(), re.M))
    assert sorted(rows) == sorted(every_action())
    wrong = {name: said for name, said in rows.items() if (said == "implemented") != (name in STANDARD)}
    assert wrong == {}
    for name, reason in REFUSED.items():
        assert f"| `{name}` | refused: {reason} |" in DOCS.read_text()


def _load_error(tmp_path: Path, body: str) -> str:
    path = tmp_path / "p.asl"
    path.write_text(f"!start.\n+!start <- true.\n+!go <- {body}.\n")
    with pytest.raises(AslError) as caught:
        load_mind(path, Actions(), "p")
    return str(caught.value)


@pytest.mark.parametrize(
    "body, said",
    [
        (
            ".df_register(s)",
            "p.asl:3: .df_register is a Jason action bdi-rl does not implement: no directory facilitator",
        ),
        (".clone(bob)", "p.asl:3: .clone is a Jason action bdi-rl does not implement: copies a running agent's mind"),
        (".map.create(M)", "p.asl:3: .map.create is a Jason action bdi-rl does not implement: Java's mutable sets"),
        ("if (true) { .perceive }", "p.asl:3: .perceive is a Jason action bdi-rl does not implement: percepts"),
        (".lenght([], N)", "p.asl:3: unknown internal action .lenght (did you mean .length?)"),
        (".zzz", "p.asl:3: unknown internal action .zzz"),
        (".nth(1, [a])", "p.asl:3: .nth takes 3 argument(s), got 2"),
    ],
    ids=["directory facilitator", "clone", "java collections", "in an if", "typo", "no close name", "arity"],
)
def test_a_refused_action_is_one_line_with_file_line_action_and_why(tmp_path: Path, body: str, said: str) -> None:
    message = _load_error(tmp_path, body)
    assert message.startswith(str(tmp_path / said.split(":", 1)[0]) + ":" + said.split(":", 1)[1]), message
    assert "\n" not in message
    if "zzz" in body:
        assert "did you mean" not in message


class Printed(Host):
    def __init__(self) -> None:
        self.lines: list[str] = []

    def print(self, agent: Agent, text: str) -> None:
        self.lines.append(text)


def test_a_host_of_one_agent_is_a_mas_of_one(tmp_path: Path) -> None:
    """Host's defaults: the agent alone in .all_names, a broadcast to nobody, no agent to
    create (internal_action), .kill_agent of itself or of nobody, .stopMAS ends run()."""
    path = tmp_path / "solo.asl"
    path.write_text(
        "!start.\n"
        "+!start <- .all_names(L); .print(L); .broadcast(tell, hello); !make;\n"
        '   if (.kill_agent(nobody)) { .print("?") } else { .print("nobody") };\n'
        "   .stopMAS.\n"
        '+!make <- .create_agent(bob, "solo.asl").\n'
        '-!make[error(E)] <- .print("cannot create: ", E).\n'
        '+!other <- .print("?").\n'
    )
    host = Printed()
    agent = load_agent(path, "solo", host=host)
    agent.run(max_cycles=1000)
    assert host.lines == ["[solo]", "cannot create: internal_action", "nobody"]
    assert host.stopped
    agent.post_goal(Struct("other"))  # a stopped MAS runs no more cycles
    assert agent.run(max_cycles=1000) == 0 and host.lines[-1] == "nobody"


def test_kill_agent_of_itself_stops_a_host_of_one(tmp_path: Path) -> None:
    path = tmp_path / "solo.asl"
    path.write_text("!start.\n+!start <- .my_name(Me); .kill_agent(Me).\n")
    host = Printed()
    load_agent(path, "solo", host=host).run(max_cycles=1000)
    assert host.stopped


def test_the_table_groups_every_action_under_one_area() -> None:
    names = [name for names in JASON_ACTIONS.values() for name in names]
    assert len(names) == len(set(names))
