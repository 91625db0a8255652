"""The Jason corpus (tests/jason/, issue 27): programs bdi-rl's runtime already runs as Jason
3.2.2 does must go on doing so.

``tests/jason_corpus.py`` is the instrument (``python -m tests.jason_corpus``); this test holds
only the programs that print Jason's recorded lines today on Jason's reasoning cycle (and, but
for those whose output depends on interleaving, on the fast cycle too), under every hash
seed tried (20):
a program whose output depends on the order of an annotation set is left out until the
runtime keeps annotations sorted. Add a program here once the runtime passes it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.jason_corpus import CorpusHost, Program, discover, error_lines, load_causes, run_program

CORPUS = {program.name: program for program in discover()}

PASSING = [
    "annotations/annot_unify",
    "annotations/event_source",
    "annotations/findall_annots",
    "annotations/nested_annots",
    "annotations/source_var",
    "annotations/subset_match",
    "annotations/trigger_annots",
    "beliefs/add_event_order",
    "beliefs/add_front_back",
    "beliefs/add_remove",
    "beliefs/belief_args",
    "beliefs/duplicates",
    "beliefs/explicit_sources",
    "beliefs/initial_order",
    "beliefs/query_order",
    "beliefs/remove_annot",
    "beliefs/remove_events",
    "beliefs/remove_source",
    "beliefs/replace",
    "beliefs/replace_events",
    "beliefs/source_annots",
    "beliefs/strong_negation",
    "beliefs/test_failing",
    "beliefs/var_remove",
    "control/for_fail",
    "control/for_member",
    "control/for_string_chars",
    "control/if_binds",
    "control/if_elif_else",
    "control/if_in_loop_break",
    "control/if_no_else",
    "control/nested_if",
    "control/nested_loops",
    "control/while_bindings",
    "control/while_loop",
    "cycle/achieve_vs_belief",
    "cycle/atomic_message",
    "cycle/atomic_subgoal",
    "cycle/atomic_wait",
    "cycle/belief_unchanged_turn",
    "cycle/empty_plan_turn",
    "cycle/events_before_intentions",
    "cycle/for_deeds",
    "cycle/goal_during_wait",
    "cycle/if_deeds",
    "cycle/irrelevant_belief_turn",
    "cycle/many_initial_beliefs",
    "cycle/messages_one_per_cycle",
    "cycle/nested_reactions",
    "cycle/nested_reactions_removal",
    "cycle/new_focus",
    "cycle/new_focus_atomic",
    "cycle/percept_event_new_intention",
    "cycle/reaction_chain_goals",
    "cycle/reaction_failure",
    "cycle/reaction_in_subgoal",
    "cycle/reaction_new_intention",
    "cycle/reaction_not_applicable",
    "cycle/reaction_order_two_beliefs",
    "cycle/reaction_subgoal",
    "cycle/replace_events",
    "cycle/round_robin",
    "cycle/round_robin_subgoals",
    "cycle/test_goal_plan_interleave",
    "cycle/three_mixed",
    "cycle/two_intentions_beliefs",
    "cycle/wait_event",
    "cycle/wait_event_vs_reaction",
    "cycle/wait_formula",
    "cycle/wait_formula_true",
    "cycle/wait_ms",
    "cycle/wait_timeout",
    "cycle/while_goal_deeds",
    "cycle/while_interleave",
    "failure/code_of_goal",
    "failure/constraint_failed",
    "failure/context_handler",
    "failure/drop_reports",
    "failure/dropped_no_handler",
    "failure/error_annots",
    "failure/error_in_reaction_handler",
    "failure/error_msgs",
    "failure/fail_error",
    "failure/fail_goal_handler_order",
    "failure/fail_in_context",
    "failure/fail_in_handler_outer",
    "failure/fail_in_if",
    "failure/failure_annots_subgoal",
    "failure/failure_plan_fails",
    "failure/handler_bindings",
    "failure/handler_binds_two",
    "failure/handler_for_deeper_goal",
    "failure/handler_resumes",
    "failure/nested_recovery",
    "failure/no_applicable",
    "failure/no_applicable_own_handler",
    "failure/no_relevant",
    "failure/propagate",
    "failure/reaction_subgoal_handler",
    "failure/reaction_with_del_plan",
    "failure/retry",
    "failure/subgoal_no_relevant_handler",
    "failure/test_goal_failed",
    "failure/test_goal_handler_binds",
    "failure/test_goal_plan_fails",
    "failure/unifier_context",
    "failure/unify_failed",
    "failure/wait_timeout_handler",
    "goals/achieve_already_true",
    "goals/deep_subgoals",
    "goals/goal_events_interleave",
    "goals/goal_with_context_var",
    "goals/initial_goals_order",
    "goals/new_intention",
    "goals/plan_choice_order",
    "goals/recursive_goal",
    "goals/subgoal_bindings",
    "goals/tail_not_last",
    "goals/tail_recursion_bindings",
    "goals/tail_recursion_deep",
    "goals/tail_recursion_depth",
    "goals/tail_recursion_failure",
    "goals/test_goal_belief_first",
    "goals/test_goal_fail_plan",
    "goals/test_goal_plan",
    "goals/test_goal_rule",
    "lists/head_tail",
    "lists/length_unbound",
    "lists/list_equal",
    "lists/max_empty",
    "lists/max_min",
    "lists/member",
    "lists/member_unbound_list",
    "lists/nested_lists",
    "management/add_plan_string_begin",
    "management/atomic",
    "management/atomic_reaction",
    "management/atomic_second",
    "management/current_intention",
    "management/desire_args",
    "management/desire_event",
    "management/drop_all_desires",
    "management/drop_all_intentions",
    "management/drop_desire",
    "management/drop_desire_event",
    "management/drop_desire_pending",
    "management/drop_event",
    "management/drop_intention",
    "management/drop_intention_queued",
    "management/drop_intention_self",
    "management/fail_goal",
    "management/fail_goal_queued",
    "management/fail_goal_self",
    "management/intend_bind",
    "management/intend_desire",
    "management/intention_4",
    "management/intention_ids",
    "management/intention_states",
    "management/relevant_plans",
    "management/remove_plan",
    "management/remove_plan_relevant",
    "management/succeed_goal",
    "management/succeed_goal_pending",
    "management/succeed_goal_subgoal",
    "management/succeed_queued",
    "management/suspend_queued",
    "management/suspend_resume",
    "management/suspend_self",
    "management/suspended_list",
    "messages/achieve",
    "messages/achieve_fail",
    "messages/achieve_failing",
    "messages/achieve_order",
    "messages/ask_all",
    "messages/ask_async",
    "messages/ask_one_list",
    "messages/ask_plan",
    "messages/ask_rule",
    "messages/ask_self",
    "messages/ask_sync_fail",
    "messages/ask_sync_pattern",
    "messages/ask_timeout",
    "messages/my_name",
    "messages/ping_pong",
    "messages/send_list_receivers",
    "messages/sources",
    "messages/tell",
    "messages/tell_annots",
    "messages/tell_how",
    "messages/tell_update",
    "messages/unachieve",
    "messages/untell",
    "messages/untell_absent",
    "numbers/arith_in_terms",
    "numbers/compare_numbers",
    "numbers/division",
    "numbers/float_ops",
    "numbers/int_float_eq",
    "numbers/math_functions",
    "numbers/negative",
    "numbers/number_beliefs",
    "numbers/number_types",
    "numbers/power",
    "numbers/round_math",
    "numbers/trig",
    "rules/factorial",
    "rules/fib",
    "rules/findall_in_rule",
    "rules/negation",
    "rules/recursion",
    "rules/rule_backtrack",
    "rules/rule_context",
    "rules/rule_disjunction",
    "rules/rule_unbound_arith",
    "stdlib/concat_lists_unbound",
    "stdlib/count",
    "stdlib/count_rules",
    "stdlib/findall_conj",
    "stdlib/findall_order_rules",
    "stdlib/if_then_else_ia",
    "stdlib/my_name_single",
    "strings/compare",
    "strings/concat",
    "strings/concat_numbers",
    "strings/concat_unbound",
    "strings/length",
    "strings/string_list_ops",
    "strings/string_type",
    "syntax/bad_trigger",
    "syntax/belief_with_rule_ops",
    "syntax/block_comment_unclosed",
    "syntax/comments",
    "syntax/context_true",
    "syntax/double_plus",
    "syntax/else_without_if",
    "syntax/empty_body",
    "syntax/goal_in_context",
    "syntax/if_missing_brace",
    "syntax/initial_goal_args",
    "syntax/keyword_atoms",
    "syntax/labels",
    "syntax/missing_period",
    "syntax/missing_semicolon_later",
    "syntax/operators_precedence",
    "syntax/plan_annotations_label",
    "syntax/plan_no_body",
    "syntax/print_no_args",
    "syntax/quoted_atom_doubled",
    "syntax/rule_body_semicolon",
    "syntax/semicolon_end",
    "syntax/unbalanced_paren",
    "syntax/unterminated_string",
    "syntax/uppercase_functor",
    "terms/print_multiple",
    "terms/strong_neg_print",
    "terms/struct_compare",
]

#: Programs of PASSING whose output depends on how intentions interleave: the fast cycle
#: (``[[agents]] cycle = "fast"``) prints other lines for them (docs/AGENTSPEAK.md, "Which
#: programs can tell the two cycles apart"). Every other program of PASSING must print
#: Jason's lines on the fast cycle too.
FAST_DIFFERS = [
    "cycle/belief_unchanged_turn",
    "cycle/empty_plan_turn",
    "cycle/events_before_intentions",
    "cycle/for_deeds",
    "cycle/if_deeds",
    "cycle/irrelevant_belief_turn",
    "cycle/messages_one_per_cycle",
    "cycle/nested_reactions",
    "cycle/nested_reactions_removal",
    "cycle/new_focus",
    "cycle/reaction_chain_goals",
    "cycle/reaction_failure",
    "cycle/reaction_new_intention",
    "cycle/round_robin",
    "cycle/round_robin_subgoals",
    "cycle/test_goal_plan_interleave",
    "cycle/three_mixed",
    "cycle/two_intentions_beliefs",
    "cycle/wait_event_vs_reaction",
    "cycle/wait_formula",
    "cycle/wait_formula_true",
    "cycle/while_goal_deeds",
    "cycle/while_interleave",
    "failure/error_in_reaction_handler",
    "failure/reaction_subgoal_handler",
    "failure/reaction_with_del_plan",
    "goals/goal_events_interleave",
    "goals/initial_goals_order",
    "goals/new_intention",
    "management/atomic_reaction",
    "management/atomic_second",
    "management/desire_args",
    "management/desire_event",
    "management/drop_all_desires",
    "management/drop_all_intentions",
    "management/drop_desire_event",
    "management/drop_intention_queued",
    "management/fail_goal_self",
    "management/succeed_goal",
    "management/succeed_queued",
    "management/suspend_queued",
    "syntax/double_plus",
]
FAST_PASSING = [name for name in PASSING if name not in FAST_DIFFERS]


@pytest.mark.parametrize("name", PASSING)
def test_prints_what_jason_printed(name: str) -> None:
    """On Jason's reasoning cycle (the default)."""
    outcome = run_program(CORPUS[name])
    assert outcome.status == "same", outcome.diff() or outcome.detail


@pytest.mark.parametrize("name", FAST_PASSING)
def test_prints_what_jason_printed_on_the_fast_cycle(name: str) -> None:
    outcome = run_program(CORPUS[name], cycle="fast")
    assert outcome.status == "same", outcome.diff() or outcome.detail


@pytest.mark.parametrize("name", FAST_DIFFERS)
def test_the_fast_cycle_interleaves_otherwise(name: str) -> None:
    """The programs FAST_DIFFERS names do tell the cycles apart (else they belong in
    FAST_PASSING)."""
    assert run_program(CORPUS[name], cycle="fast").status == "different"


def test_every_program_has_its_recording_and_every_cause_names_corpus_programs() -> None:
    assert len(CORPUS) >= 160
    assert [name for name, program in CORPUS.items() if not program.expected_path.exists()] == []
    named = {name for cause in load_causes() for name in cause.programs}
    assert sorted(named - set(CORPUS)) == []


# -- the instrument itself ------------------------------------------------------------------
def _program(tmp_path: Path, source: str, recorded: str) -> Program:
    (tmp_path / "p.asl").write_text(source)
    (tmp_path / "p.out").write_text(recorded)
    return Program("t/p", (("p", tmp_path / "p.asl"),), tmp_path / "p.out")


@pytest.mark.parametrize(
    "source, recorded, status",
    [
        ('!start.\n+!start <- .print("hi"); .wait(5000); .stopMAS.\n', "[p] hi\n", "same"),
        ('!start.\n+!start <- .print("hi"); .stopMAS.\n', "[p] ho\n", "different"),
        ("!start.\n+!start <- .nope(1).\n", "[p] x\n", "refused"),
        ("!start.\n+!start <- .print(a)\n  .print(b).\n", "#refused line 3\n", "accepted"),
        ("!start.\n+!start <- .print(a;\n", "#refused line 2\n", "same"),
        ("!start.\n+!start <- .print(a;\n", "#refused line 1\n", "different"),
    ],
    ids=["virtual-clock", "other-line", "load-error", "accepts-refused", "refused-same-line", "refused-other-line"],
)
def test_the_harness_classifies_runs(tmp_path: Path, source: str, recorded: str, status: str) -> None:
    """A .wait(5000) costs no wall time (the clock is virtual, and the wall limit is 5 s); a
    refusal matches only when bdi-rl names the line Jason names."""
    assert run_program(_program(tmp_path, source, recorded), wall_limit=5).status == status


def test_messages_are_routed_between_the_agents_by_name(tmp_path: Path) -> None:
    (tmp_path / "alice.asl").write_text("!s.\n+!s <- .send(bob, tell, hi(1)).\n")
    (tmp_path / "bob.asl").write_text("+hi(N)[source(S)] <- .print(S, N); .stopMAS.\n")
    (tmp_path / "x.out").write_text("[bob] alice1\n")
    agents = (("alice", tmp_path / "alice.asl"), ("bob", tmp_path / "bob.asl"))
    assert run_program(Program("t/x", agents, tmp_path / "x.out")).status == "same"
    assert isinstance(CorpusHost().now(), float)


def test_error_lines_reads_both_forms() -> None:
    assert error_lines("a/b.asl:3:4: unexpected x") == {3}
    assert error_lines("line 7: a belief must be ground: b") == {7}
