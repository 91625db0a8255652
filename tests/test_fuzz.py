"""Property-based tests (hypothesis) of the two decoders that read what other processes send:
the BDI message literal parser and the trace-batch decoder. Whatever arrives, they answer
with a value or their own one-line error, never anything else; what we send, they read back."""

from __future__ import annotations

import math

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bdi_rl.trace import KIND_LEVEL, SCHEMA, Batch, TraceFormatError, decode_batch, encode_batch
from bdi_rl.wire import WireError, format_literal, parse_literal

import agentspeak as asp

FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

atoms = st.from_regex(r"[a-z][A-Za-z0-9_]{0,8}", fullmatch=True)
numbers = st.one_of(st.integers(-10**9, 10**9),
                    st.floats(allow_nan=False, allow_infinity=False, width=32))
strings = st.text(st.characters(blacklist_categories=("Cs",)), max_size=20)


def _terms(depth: int):
    leaves = st.one_of(numbers, strings, atoms.map(asp.Literal))
    if depth == 0:
        return leaves
    inner = _terms(depth - 1)
    return st.one_of(leaves, st.lists(inner, max_size=3).map(tuple),
                     st.builds(lambda f, args: asp.Literal(f, tuple(args)), atoms,
                               st.lists(inner, max_size=3)))


literals = st.builds(lambda f, args: asp.Literal(f, tuple(args)), atoms, st.lists(_terms(2), max_size=4))


def _normal(term):
    """Numbers compare as floats: AgentSpeak reads every number as one."""
    if isinstance(term, bool):
        return term
    if isinstance(term, (int, float)):
        return float(term)
    if isinstance(term, tuple):
        return tuple(_normal(t) for t in term)
    if isinstance(term, asp.Literal):
        return (term.functor, tuple(_normal(a) for a in term.args))
    return term


@FUZZ
@given(literals)
def test_every_literal_we_send_is_read_back_equal(term):
    assert _normal(parse_literal(format_literal(term))) == _normal(term)


@FUZZ
@given(st.text(max_size=300))
def test_any_message_body_is_a_literal_or_a_wire_error(body):
    try:
        term = parse_literal(body)
    except WireError as exc:
        assert "\n" not in str(exc)
    else:
        assert isinstance(term, asp.Literal)


json_scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**53, 2**53),
                         st.floats(allow_nan=False, allow_infinity=False), strings)
event_data = st.dictionaries(strings, st.one_of(json_scalars, st.lists(json_scalars, max_size=4)),
                             max_size=5)


@st.composite
def batches(draw):
    first = draw(st.integers(0, 10**6))
    kinds = draw(st.lists(st.sampled_from(sorted(KIND_LEVEL)), min_size=1, max_size=30))
    events = [{"schema": SCHEMA, "run": "run-1", "agent": "a@localhost", "seq": first + i,
               "ts": draw(st.floats(0, 2e9)), "kind": kind, "episode": draw(st.integers(0, 10**6)),
               "step": draw(st.integers(0, 10**4)), "data": draw(event_data)}
              for i, kind in enumerate(kinds)]
    return events, draw(st.booleans())


@FUZZ
@given(batches())
def test_every_batch_we_send_is_read_back_line_for_line(drawn):
    events, compress = drawn
    batch = decode_batch(encode_batch("run-1", "a@localhost", events, compress=compress))
    assert isinstance(batch, Batch) and batch.first == events[0]["seq"]
    assert [orjson.loads(line) for line in batch.lines] == events
    assert batch.kinds == [e["kind"] for e in events]


@FUZZ
@given(batches(), st.data())
def test_a_damaged_batch_is_refused_with_a_trace_format_error(drawn, data):
    events, compress = drawn
    body = encode_batch("run-1", "a@localhost", events, compress=compress)
    cut = data.draw(st.integers(0, len(body) - 1))
    damaged = data.draw(st.sampled_from([
        body[:cut],                                            # truncated
        body[:cut] + data.draw(st.text(min_size=1, max_size=3)) + body[cut + 1:],  # a byte changed
        body[:cut] + body[cut + 1:],                           # a byte lost
    ]))
    try:
        batch = decode_batch(damaged)
    except TraceFormatError as exc:
        assert "\n" not in str(exc)
    else:  # a change that still makes a valid batch (inside a string, say) must decode fully
        assert [orjson.loads(line) for line in batch.lines] == batch.events
        assert all(math.isfinite(e["ts"]) for e in batch.events)


@FUZZ
@given(st.text(max_size=400))
def test_any_text_is_a_batch_or_a_trace_format_error(body):
    try:
        decode_batch(body)
    except TraceFormatError:
        pass
