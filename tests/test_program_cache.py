"""Parsed plan files kept between processes (bdi_rl/bdi/runtime/programcache.py): the same
program as a parse, never a stale one."""

from __future__ import annotations

from pathlib import Path

import pytest

from bdi_rl.bdi.runtime import programcache
from bdi_rl.bdi.runtime.parser import parse_file, parse_text
from tests.conftest import ASL


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("BDI_RL_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache" / "programs"


def test_a_plan_file_read_back_is_the_program_a_parse_gives(cache: Path) -> None:
    learner = ASL / "learner.asl"
    first = parse_file(learner)
    assert len(list(cache.glob("*.program"))) == 1
    again = parse_file(learner)
    assert again == first and again is not first
    assert again == parse_text(learner.read_text(), str(learner), frozenset({str(learner.resolve())}))


def test_an_edited_file_or_include_is_parsed_anew(cache: Path, tmp_path: Path) -> None:
    lib = tmp_path / "lib.asl"
    main = tmp_path / "main.asl"
    lib.write_text("+!g <- .print(one).\n")
    main.write_text('{ include("lib.asl") }\n!g.\n')
    assert "one" in repr(parse_file(main).plans[0])
    lib.write_text("+!g <- .print(two).\n")  # the including file is unchanged
    assert "two" in repr(parse_file(main).plans[0])
    main.write_text('{ include("lib.asl") }\n!g.\n+!h <- true.\n')
    assert len(parse_file(main).plans) == 2


def test_a_damaged_entry_is_parsed_around(cache: Path) -> None:
    learner = ASL / "learner.asl"
    expected = parse_file(learner)
    for entry in cache.glob("*.program"):
        entry.write_bytes(b"not a pickle")
    assert parse_file(learner) == expected


def test_no_cache_without_a_private_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)  # others may write: nothing read back from there is trusted
    monkeypatch.setenv("BDI_RL_CACHE", str(shared))
    (shared / "programs").mkdir(mode=0o777)
    (shared / "programs").chmod(0o777)
    parse_file(ASL / "learner.asl")
    assert list((shared / "programs").iterdir()) == []
    assert programcache.load(ASL / "learner.asl", (ASL / "learner.asl").read_text()) is None
