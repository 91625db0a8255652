"""What vulture (``[tool.vulture]`` in pyproject.toml) takes for dead code and is not: each name
here is used where vulture cannot see it. Only parsed, never run. A name goes here with why;
dead code is deleted instead."""

# ruff: noqa
# fmt: off

# -- the runtime (bdi_rl/bdi/runtime) ------------------------------------------------------------
planlibrary  # agent.py imports it for its side effect: it registers the plan library's actions
# parser.py: lark's Transformer calls a method (or alias) per grammar rule, by the rule's name
_.var_literal
_.neg
_.list_tail
_.or_expr
_.and_expr
_.not_expr
_.rel_expr
add_op
mul_op
trig_kind
_.add_bel
_.add_bel_new_focus
_.add_bel_end
_.del_bel
_.del_bel_new_focus
_.del_add_bel
_.expr_stmt
_.else_part
_.if_stmt
_.while_stmt
_.for_stmt
_.directive
_.ns_block
_.belief_or_rule
_.initial_goal
_.label_name
_.label_anonymous
_.body_part

# -- fields read by name, not as attributes ------------------------------------------------------
verified  # readers/library.py's CheckpointEntry: sent as JSON (asdict), read as entry["verified"]
min_q  # readers/qgrid.py: a table's field, sent as JSON and read as table["min_q"]
# trace/kinds.py: TypedDict fields, written into the trace as keys of ``data``, read as dict keys
recovered_events
joint_episodes
joint_steps
seats_left
after_episodes
content_chars
down_s

# -- libraries' interfaces, implemented or set for the library to call or read -------------------
_.handle_error  # readers/webserver.py: aiohttp's RequestHandler calls it for the requests it refuses
_.__class__  # readers/webserver.py: the server aiohttp built, given our subclass
_.render_mode  # rl/foraging.py, rl/matrixgames.py: PettingZoo's ParallelEnv attribute
_.current_step  # rl/foraging.py: lbforaging's own state, set to compute the optimum
_._food_spawned
_.enable_direct_tls  # xmpp/patches.py, tests/test_trust.py: slixmpp reads it when it connects
_.reschedule_connection_attempt  # xmpp/patches.py: slixmpp's, overridden
_.is_started  # xmpp/patches.py: _NoWebInterface, SPADE's Agent.stop asks it
_.on_end  # xmpp/wakeable.py: SPADE calls a behaviour's on_end when it ends
_.WebApp  # xmpp/patches.py: the class SPADE's Agent.__init__ builds, replaced
exc_type  # xmpp/server.py: __aexit__'s signature
_.buffer_text  # xmpp/xmlstream.py: expat's parser settings and handlers, read by expat
_.ordered_attributes
_.StartElementHandler
_.EndElementHandler
_.CharacterDataHandler
_.StartDoctypeDeclHandler
_.EntityDeclHandler
_.CommentHandler
_.ProcessingInstructionHandler
__new__  # xmpp/spadeimport.py: a stand-in class, called by SPADE if ever
_.__qualname__
_.__module__
_.__path__  # xmpp/spadeimport.py: marks a stand-in module as a package

# -- tests -----------------------------------------------------------------------------------------
memo  # asp_reference.py: python-agentspeak's freeze(scope, memo), overridden
_.grounded  # asp_reference.py: python-agentspeak calls it
_.visit_while  # asp_reference.py: python-agentspeak's visitor, patched
signum  # jason_corpus.py: a signal handler's signature
_print  # test_conformance.py: registered as the .print action by its decorator
TinyChain  # test_envs.py: an env loaded by entry point ("tests.test_envs:TinyChain")
Corridor  # test_world.py: an env loaded by entry point
Doomed  # test_sweeps.py: an env loaded by entry point
aec_climbing  # test_world_shared.py: an env loaded by entry point
