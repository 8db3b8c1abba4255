"""Model-facing tool names: mcp__<server>__<tool>, safe characters, 64 at most, collisions settled."""

from __future__ import annotations

import itertools
import re

from desktop.core.mcp import MAX_TOOL_NAME, ToolNameMap, mangle_tool_name

SAFE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def test_plain_and_sanitised_names() -> None:
    assert mangle_tool_name("files", "read_file") == "mcp__files__read_file"
    assert mangle_tool_name("my.server", "get weather/now") == "mcp__my_server__get_weather_now"
    assert mangle_tool_name("gh", "list-issues") == "mcp__gh__list-issues"
    assert mangle_tool_name("ü", "日本") == "mcp__" + "_" + "__" + "__"  # one _ per character


def test_long_names_are_cut_with_a_stable_hash() -> None:
    name = mangle_tool_name("server" * 10, "tool" * 10)
    assert len(name) == MAX_TOOL_NAME and SAFE.match(name)
    assert re.search(r"_[0-9a-f]{8}$", name)
    assert name == mangle_tool_name("server" * 10, "tool" * 10)  # stable
    assert name != mangle_tool_name("server" * 10, "tool" * 10 + "x")  # the hash tells them apart
    assert name[:55] == ("mcp__" + "server" * 10 + "__" + "tool" * 10)[:55]


def test_collisions_are_resolved_deterministically() -> None:
    pairs = [("a.b", "x"), ("a_b", "x"), ("a b", "x"), ("c", "y")]
    maps = [ToolNameMap(p) for p in itertools.permutations(pairs)]
    first = maps[0]
    for other in maps[1:]:
        assert {n: other.resolve(n) for n in other.names()} == {n: first.resolve(n) for n in first.names()}
    assert first.name_for("a_b", "x") == "mcp__a_b__x"  # unchanged by sanitising: keeps the plain name
    assert first.name_for("c", "y") == "mcp__c__y"
    for server in ("a.b", "a b"):
        assert re.fullmatch(r"mcp__a_b__x_[0-9a-f]{8}", first.name_for(server, "x"))
    assert len(set(first.names())) == 4
    for name in first.names():
        assert SAFE.match(name)
        pair = first.resolve(name)
        assert pair is not None and first.name_for(*pair) == name
    assert first.resolve("mcp__nope__x") is None


def test_ambiguous_double_underscores_and_duplicates() -> None:
    names = ToolNameMap([("a__b", "c"), ("a", "b__c"), ("a", "b__c")])
    assert len(names) == 2
    assert names.name_for("a", "b__c") == "mcp__a__b__c"  # first in sorted order keeps it
    assert re.fullmatch(r"mcp__a__b__c_[0-9a-f]{8}", names.name_for("a__b", "c"))


def test_many_long_colliding_names_stay_unique_and_valid() -> None:
    pairs = [("s" * 70, f"t{i}") for i in range(50)] + [("s.x" * 30, "t") for _ in range(3)]
    names = ToolNameMap(pairs)
    assert len(names) == 51
    for name in names.names():
        assert SAFE.match(name)
