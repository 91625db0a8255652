"""Property-based tests (hypothesis) of the decoders that read what other processes send or
left on disk: the BDI message literal parser, the trace-batch decoder and the Q-table
checkpoint reader. Whatever arrives, they answer with a value or their own one-line error,
never anything else; what we send, they read back."""

from __future__ import annotations

import io
import json
import math
import tempfile
import types
import zipfile
from pathlib import Path
from typing import Any, Union, get_args, get_origin, get_type_hints, is_typeddict

import numpy as np
import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from bdi_rl.bdi.runtime.terms import Struct, atom
from bdi_rl.bdi.wire import KEYWORDS, WireError, format_literal, parse_literal
from bdi_rl.rl.checkpoint import (
    Checkpoint,
    CheckpointError,
    check_env,
    load_checkpoint,
    save_checkpoint,
    table_checksum,
    task_change,
)
from bdi_rl.rl.envs import make_env
from bdi_rl.trace.batch import Batch, decode_batch, encode_batch
from bdi_rl.trace.errors import TraceFormatError
from bdi_rl.trace.kinds import KIND_DATA, LINE_KINDS, RECORD_KINDS, SCHEMA, STEPS, TraceLevel
from bdi_rl.trace.steps import expanded
from bdi_rl.trace.tracer import Tracer
from tests.fuzzing import examples

FUZZ = settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])

#: Atoms the wire writes (a keyword, ``if``, is refused: a WireError says to send it as a string).
atoms = st.from_regex(r"[a-z][A-Za-z0-9_]{0,8}", fullmatch=True).filter(lambda a: a not in KEYWORDS)
numbers = st.one_of(st.integers(-(10**9), 10**9), st.floats(allow_nan=False, allow_infinity=False, width=32))
strings = st.text(st.characters(blacklist_categories=("Cs",)), max_size=20)


def _terms(depth: int):
    leaves = st.one_of(numbers, strings, atoms.map(atom))
    if depth == 0:
        return leaves
    inner = _terms(depth - 1)
    return st.one_of(
        leaves,
        st.lists(inner, max_size=3).map(tuple),
        st.builds(lambda f, args: Struct(f, tuple(args)), atoms, st.lists(inner, max_size=3)),
    )


literals = st.builds(lambda f, args: Struct(f, tuple(args)), atoms, st.lists(_terms(2), max_size=4))


@FUZZ
@given(literals)
def test_every_literal_we_send_is_read_back_equal(term):
    """Equal as terms (a whole float is written as Jason writes it, ``2``, and read back as
    the int 2, which equals 2.0)."""
    assert parse_literal(format_literal(term)) == term


@FUZZ
@given(st.text(max_size=300))
def test_any_message_body_is_a_literal_or_a_wire_error(body):
    try:
        term = parse_literal(body)
    except WireError as exc:
        assert "\n" not in str(exc)
    else:
        assert isinstance(term, Struct)


json_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**53), 2**53), st.floats(allow_nan=False, allow_infinity=False), strings
)


def _values(tp):
    """Values of ``tp``, the type of a field of some kind's data (``KIND_DATA``)."""
    origin, args = get_origin(tp), get_args(tp)
    if tp is Any:
        return st.one_of(json_scalars, st.lists(json_scalars, max_size=4))
    if is_typeddict(tp):
        return typed_dicts(tp)
    if origin is list:
        return st.lists(_values(args[0]), max_size=4)
    if origin is dict:
        return st.dictionaries(strings, _values(args[1]), max_size=3)
    if origin in (Union, types.UnionType):
        return st.one_of(*map(_values, args))
    return {
        type(None): st.none(),
        bool: st.booleans(),
        int: st.integers(-(2**53), 2**53),
        str: strings,
        float: st.floats(allow_nan=False, allow_infinity=False),
    }[tp]


def event_data(kind: str):
    """Data of ``kind`` as its writers put it: every field its TypedDict requires, any others it allows."""
    return typed_dicts(KIND_DATA[kind])


def typed_dicts(record):
    """Dicts that ``record`` (a TypedDict) allows."""
    fields = {name: _values(tp) for name, tp in get_type_hints(record).items()}
    return st.fixed_dictionaries(
        {k: v for k, v in fields.items() if k in record.__required_keys__},
        optional={k: v for k, v in fields.items() if k not in record.__required_keys__},
    )


#: The kinds a format-2 line has outside step records (a ``steps`` line is what a Tracer
#: closes a record into: drawn as the events it holds).
LINE_ONLY = sorted(kind for kind in LINE_KINDS[SCHEMA] if kind != STEPS)


@st.composite
def batches(draw):
    """A batch as an agent's tracer writes it: episode-level events and step records (each
    drawn as the record kinds' events it holds), numbered from ``first``; and the kinds, in
    order, that reading it back (records expanded) gives."""
    first = draw(st.integers(0, 10**6))
    tracer = Tracer("run-1", "a@localhost", TraceLevel.CYCLE)
    tracer.seq = first
    kinds = []
    for _ in range(draw(st.integers(1, 20))):
        tracer.stamp(draw(st.integers(0, 10**6)), draw(st.integers(0, 10**4)))
        if draw(st.booleans()):
            kind = draw(st.sampled_from(LINE_ONLY))
            tracer.emit(kind, draw(event_data(kind)))
            kinds.append(kind)
            continue
        for kind in draw(st.lists(st.sampled_from(RECORD_KINDS), min_size=1, max_size=12)):
            if draw(st.booleans()):
                tracer.stamp(tracer.episode, tracer.step + 1)
            tracer.emit(kind, draw(event_data(kind)))
            kinds.append(kind)
        tracer.flush_record()
    events = list(tracer.pending)
    for event in events:
        event["ts"] = draw(st.floats(0, 2e9))
    return events, draw(st.booleans()), kinds


@FUZZ
@given(batches())
def test_every_batch_we_send_is_read_back_line_for_line(drawn):
    events, compress, kinds = drawn
    batch = decode_batch(encode_batch("run-1", "a@localhost", events, compress=compress))
    assert isinstance(batch, Batch) and batch.first == events[0]["seq"]
    assert [orjson.loads(line) for line in batch.lines] == events
    assert batch.kinds == [e["kind"] for e in events]
    assert [e["kind"] for e in expanded(batch.events)] == kinds


@FUZZ
@given(batches(), st.data())
def test_a_damaged_batch_is_refused_with_a_trace_format_error(drawn, data):
    events, compress, _ = drawn
    body = encode_batch("run-1", "a@localhost", events, compress=compress)
    cut = data.draw(st.integers(0, len(body) - 1))
    damaged = data.draw(
        st.sampled_from(
            [
                body[:cut],  # truncated
                body[:cut] + data.draw(st.text(min_size=1, max_size=3)) + body[cut + 1 :],  # a byte changed
                body[:cut] + body[cut + 1 :],  # a byte lost
            ]
        )
    )
    try:
        batch = decode_batch(damaged)
    except TraceFormatError as exc:
        assert "\n" not in str(exc)
    else:  # a change that still makes a valid batch (inside a string, say) must decode fully
        assert [orjson.loads(line) for line in batch.lines] == batch.events
        assert all(math.isfinite(e["ts"]) for e in batch.events)
        try:  # a step record that passed the check expands, or is refused by the reader
            expanded(batch.events)
        except TraceFormatError as exc:
            assert "\n" not in str(exc)


@FUZZ
@given(st.text(max_size=400))
def test_any_text_is_a_batch_or_a_trace_format_error(body):
    try:
        decode_batch(body)
    except TraceFormatError:
        pass


# -- the Q-table checkpoint reader ----------------------------------------------------------------
# Whatever a .npz holds (any bytes, any arrays, any metadata JSON), load_checkpoint gives a
# checked Checkpoint or one line of CheckpointError; and what it gives, every reader can show.

CHECKPOINT_FUZZ = settings(
    max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
_FROZEN = make_env("FrozenLake-v1", {"map_name": "4x4"})
_SIGNATURE = _FROZEN.state_space_signature()
_Q = np.arange(64, dtype=np.float64).reshape(16, 4) / 100


def _valid_meta() -> dict:
    """The metadata a run writes (RlBridge.save_qtable's fields, through save_checkpoint)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "learner.npz"
        save_checkpoint(
            path,
            _Q,
            {
                "agent": "learner",
                "run": "run-1",
                "env": _SIGNATURE,
                "env_kwargs": {"map_name": "4x4"},
                "learning": {"alpha": 0.1, "alpha_min": None, "gamma": 0.99},
                "spec_hash": "sha256:00",
                "warm_start": {"path": "old.npz", "episodes": 9, "checksum": None},
                "task": {**_FROZEN.task_signature(), "goal": [3, 3]},
                "episodes": 7,
                "total_episodes": 16,
                "env_steps": 70,
                "epsilon": 0.5,
                "alpha": 0.1,
            },
        )
        with np.load(path) as data:
            return json.loads(data["meta"].tobytes())


VALID_META = _valid_meta()
json_values = st.recursive(
    st.one_of(json_scalars, st.floats(), st.integers(), st.sampled_from([-1, 0, 2**63, 10**30])),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(strings, inner, max_size=4)),
    max_leaves=12,
)
FIELDS = [
    *VALID_META,
    "env.env_id",
    "env.n_states",
    "env.n_actions",
    "env.kwargs",
    "task.desc",
    "task.goal",
    "warm_start.path",
    "warm_start.episodes",
    "warm_start.checksum",
]


@st.composite
def mutated_meta(draw) -> dict:
    """The valid metadata with a few fields replaced by any JSON, or removed."""
    meta = json.loads(json.dumps(VALID_META))
    for field in draw(st.lists(st.sampled_from(FIELDS), min_size=1, max_size=3)):
        parent, _, name = field.rpartition(".")
        holder = meta.get(parent) if parent else meta
        if not isinstance(holder, dict):
            continue
        if draw(st.booleans()):
            holder[name] = draw(json_values)
        else:
            holder.pop(name, None)
    return meta


tables = st.one_of(
    st.just(_Q),
    hnp.arrays(
        st.one_of(
            hnp.floating_dtypes(),
            hnp.integer_dtypes(),
            hnp.unsigned_integer_dtypes(),
            hnp.boolean_dtypes(),
            hnp.complex_number_dtypes(),
            hnp.datetime64_dtypes(),
            hnp.byte_string_dtypes(max_len=3),
            hnp.unicode_string_dtypes(max_len=3),
        ),
        hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5),
    ),
    hnp.arrays(
        np.float64,
        st.tuples(st.integers(1, 6), st.integers(1, 6)),
        elements=st.floats(allow_nan=True, allow_infinity=True),
    ),
    st.just(np.array([{"a": 1}], dtype=object)),
)
metas = st.one_of(
    mutated_meta().map(lambda m: json.dumps(m).encode()),
    json_values.map(lambda v: json.dumps(v).encode()),
    st.binary(max_size=200),
)


def _npz(q: np.ndarray, meta: bytes | None, keep_checksum: bool) -> bytes:
    arrays = {"q": q}
    if meta is not None:
        if keep_checksum and q.dtype.kind == "f" and q.ndim == 2:  # a table that passes its checksum
            try:
                parsed = json.loads(meta)
            except ValueError:
                parsed = None
            if isinstance(parsed, dict):
                parsed.update(shape=list(q.shape), checksum=table_checksum(q))
                meta = json.dumps(parsed).encode()
        arrays["meta"] = np.frombuffer(meta, dtype=np.uint8)
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def _load_and_read(data: bytes) -> Checkpoint | None:
    """Write ``data`` as a checkpoint file and read it the ways bdi-rl does (qtable show,
    a warm start's checks and learning rate, the viewer's grid)."""
    from bdi_rl.readers.qgrid import QGridError, grid_of
    from bdi_rl.readers.qtables import show
    from bdi_rl.rl.qlearning import LearningConfig
    from bdi_rl.xmpp.setup import _continue_alpha

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "learner.npz"
        path.write_bytes(data)
        try:
            checkpoint = load_checkpoint(path)
        except CheckpointError as exc:
            assert "\n" not in str(exc) and str(exc).startswith(f"{path}: "), str(exc)
            return None
        q = checkpoint.q
        assert q.dtype == np.float64 and q.ndim == 2 and np.isfinite(q).all()
        assert checkpoint.episodes >= checkpoint.header.episodes >= 0 and checkpoint.prior_episodes >= 0
        show(path, file=io.StringIO())
        try:
            check_env(checkpoint, _SIGNATURE)
        except CheckpointError as exc:
            assert "\n" not in str(exc)
        task_change(checkpoint, _FROZEN.task_signature())
        _continue_alpha(LearningConfig(), checkpoint)
        try:
            grid_of(q, _FROZEN, checkpoint.header.agent)
        except QGridError:
            pass
        return checkpoint


@CHECKPOINT_FUZZ
@given(st.binary(max_size=3000))
def test_any_bytes_are_a_checkpoint_or_a_checkpoint_error(data):
    _load_and_read(data)


@CHECKPOINT_FUZZ
@given(tables, st.one_of(st.none(), metas), st.booleans())
def test_any_arrays_and_metadata_are_a_checkpoint_or_a_checkpoint_error(q, meta, keep_checksum):
    _load_and_read(_npz(q, meta, keep_checksum))


@CHECKPOINT_FUZZ
@given(mutated_meta())
def test_mutated_metadata_of_a_good_table_is_a_checkpoint_or_a_checkpoint_error(meta):
    _load_and_read(_npz(_Q, json.dumps(meta).encode(), keep_checksum=False))


@CHECKPOINT_FUZZ
@given(st.data())
def test_a_damaged_checkpoint_file_is_refused_or_still_whole(data):
    good = _npz(_Q, json.dumps(VALID_META).encode(), keep_checksum=False)
    cut = data.draw(st.integers(0, len(good) - 1))
    damaged = data.draw(
        st.sampled_from(
            [
                good[:cut],  # truncated
                good[:cut] + bytes([good[cut] ^ data.draw(st.integers(1, 255))]) + good[cut + 1 :],  # a byte changed
                good[:cut] + good[cut + 1 :],  # a byte lost
            ]
        )
    )
    checkpoint = _load_and_read(damaged)
    if checkpoint is not None:  # a change the checks cannot see (zip padding, say) changes nothing
        assert np.array_equal(checkpoint.q, _Q)


@CHECKPOINT_FUZZ
@given(
    st.dictionaries(
        st.sampled_from(["q.npy", "meta.npy", "q", "meta", "x.npy", "../q.npy"]), st.binary(max_size=300), max_size=3
    ),
    st.sampled_from([zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA]),
)
def test_any_zip_members_are_a_checkpoint_or_a_checkpoint_error(members, compression):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=compression) as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    _load_and_read(buffer.getvalue())
