"""The config readers of issue 23: libyaml's C parser giving exactly the pure parser's data and
positions, the position of a repeated key, and the limits each reader checks before the work
they bound (README, "Limits of the readers").

Independent references: PyYAML's pure-Python loader (the reference for the C one), a text search
for the line of a key, the regular expressions that the linear-time code replaced (kept here),
and tomllib's own reading of what is accepted.
"""

from __future__ import annotations

import pathlib
import random
import re
import tomllib

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from ropelaw.errors import UsageError
from ropelaw.lint import parse as P
from ropelaw.lint.loader import INTERP, NUMERIC_STR, load_config, parse_text

HERE = pathlib.Path(__file__).resolve().parent
CORPUS = pathlib.Path(__import__("os").environ.get("ROPELAW_CORPUS") or HERE.parent.parent / "shared" / "corpus")
YAML_FILES = sorted({*HERE.rglob("*.yaml"), *HERE.rglob("*.yml"), *CORPUS.rglob("*.yaml"), *CORPUS.rglob("*.yml")})


def _load(text: str, pure: bool):
    loader = P._loader_class(pure=pure)(text)
    try:
        root = loader.get_node() if loader.check_node() else None
        return (None, None) if root is None else (loader.construct_document(root), root)
    finally:
        loader.dispose()


def _all_positions(root) -> dict:
    pos = P.YamlPositions(root)
    return {path: pos[path] for path in pos}


def test_libyaml_is_used_where_pyyaml_has_it():
    assert yaml.__with_libyaml__  # the project's environments build PyYAML with libyaml
    assert issubclass(P._loader_class(), yaml.CSafeLoader)
    assert not issubclass(P._loader_class(pure=True), yaml.CSafeLoader)


@pytest.mark.parametrize("path", YAML_FILES, ids=lambda p: str(p)[-60:])
def test_c_loader_gives_the_pure_loaders_data_and_positions(path):
    text = path.read_text(encoding="utf-8-sig")
    try:
        pure = _load(text, pure=True)
    except yaml.YAMLError:
        with pytest.raises(yaml.YAMLError):
            _load(text, pure=False)
        return
    fast = _load(text, pure=False)
    assert fast[0] == pure[0]
    if isinstance(pure[0], dict):
        assert _all_positions(fast[1]) == _all_positions(pure[1])


_words = st.sampled_from(["a", "b", "rope_theta", "é", "x y", "'q'", '"d"', "1", "1e6", "0x1F", "null", "~", "yes",
                          "2001-12-14", "12:30:00", "-.inf", "&a", "*a", "!!str 5", "[1, 2]", "{k: v}", "- 1"])


@st.composite
def documents(draw):
    lines = []
    for _ in range(draw(st.integers(1, 12))):
        indent = "  " * draw(st.integers(0, 2))
        key = draw(_words)
        value = draw(st.one_of(_words, st.just("")))
        lines.append(f"{indent}{key}: {value}" if draw(st.booleans()) else f"{indent}- {value}")
    return "\n".join(lines) + "\n"


@settings(max_examples=300, deadline=None)
@given(text=documents())
def test_c_and_pure_loaders_agree_on_generated_documents(text):
    try:
        pure = _load(text, pure=True)
    except yaml.YAMLError:
        with pytest.raises(yaml.YAMLError):
            _load(text, pure=False)
        return
    except (ValueError, TypeError, OverflowError, RecursionError) as exc:  # constructor errors: the same in both
        with pytest.raises(type(exc)):
            _load(text, pure=False)
        return
    fast = _load(text, pure=False)
    try:
        same = fast[0] == pure[0]
    except RecursionError:  # an alias inside the node it names ('- &a\n  - *a'): compare what repr prints
        same = repr(fast[0]) == repr(pure[0])
    assert same
    if isinstance(pure[0], dict):
        assert _all_positions(fast[1]) == _all_positions(pure[1])


def test_a_repeated_key_points_at_the_occurrence_whose_value_is_kept():
    text = "hidden_size: 4096\nrope_theta: 10000\nnum_attention_heads: 32\nrope_theta: 500000\n"
    data, pos = parse_text(text, "yaml")
    assert data["rope_theta"] == 500000  # PyYAML keeps the last value
    line = max(i for i, ln in enumerate(text.splitlines(), 1) if ln.startswith("rope_theta:"))
    assert pos[("rope_theta",)] == (line, 1) == (4, 1)
    # a key of the mapping itself wins over a merged one, as in the data
    data, pos = parse_text("base: &b {rope_theta: 1}\nmodel:\n  <<: *b\n  rope_theta: 2\n", "yaml")
    assert data["model"]["rope_theta"] == 2 and pos[("model", "rope_theta")] == (4, 3)
    # JSON: the last of repeated keys, as json.loads
    data, pos = parse_text('{"rope_theta": 1,\n "rope_theta": 2}', "json")
    assert data["rope_theta"] == 2 and pos[("rope_theta",)] == (2, 2)


def test_a_linted_repeated_key_is_reported_where_its_value_is(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text("hidden_size: 4096\nnum_attention_heads: 32\nrope_theta: 10000\nrope_theta: 0.5\n"
                 "max_position_embeddings: 4096\n")
    cfg = load_config(str(p))
    base = cfg.layers[0].base
    assert base.raw == 0.5 and (base.line, base.column) == (4, 1)


# -- limits, each checked before the work it bounds ----------------------------------------------
def test_alias_expansion_is_counted_in_bytes():
    # 1,100 aliases of a 16 KiB string: 1,100 nodes (far under MAX_ALIAS_EXPANSION) but 18 MB of text
    text = ("hidden_size: 4096\nnum_attention_heads: 32\ns: &s " + "x" * 16384 + "\nrope_theta: ["
            + ", ".join(["*s"] * 1100) + "]\n")
    with pytest.raises(UsageError, match="extra characters of text"):
        parse_text(text, "yaml")
    ok = text.replace(", ".join(["*s"] * 1100), ", ".join(["*s"] * 900))  # 14.7 MB: under the limit
    assert len(parse_text(ok, "yaml")[0]["rope_theta"]) == 900


def test_yaml_and_toml_item_limit():
    items = P.MAX_ITEMS  # newlines + commas: one newline and (values - 1) commas here
    with pytest.raises(UsageError, match="comma-separated items"):
        parse_text("x: [" + ",".join(["1"] * (items + 1)) + "]\n", "yaml")
    assert len(parse_text("x: [" + ",".join(["1"] * items) + "]\n", "yaml")[0]["x"]) == items
    with pytest.raises(UsageError, match="comma-separated items"):
        parse_text("x = [" + ",".join(["1"] * (items + 1)) + "]\n", "toml")


def test_toml_key_paths_are_bounded_before_tomllib():
    with pytest.raises(UsageError, match="deeper than 64"):
        parse_text("a" + ".a" * 64 + " = 1\n", "toml")
    assert parse_text("a" + ".a" * 63 + " = 1\n", "toml")[0]  # 64 parts: tomllib reads it
    with pytest.raises(UsageError, match="deeper than 64"):
        parse_text("[" + "a." * 64 + "a]\nx = 1\n", "toml")
    many = "".join(f"k{i}" + ".a" * 60 + " = 1\n" for i in range(600))  # 600 x 61^2 > 2^21
    with pytest.raises(UsageError, match="squared parts"):
        parse_text(many, "toml")
    fine = "".join(f"k{i}" + ".a" * 60 + " = 1\n" for i in range(500))  # 500 x 61^2 < 2^21
    assert len(parse_text(fine, "toml")[0]) == 500 == len(tomllib.loads(fine))


def test_toml_lines_are_counted_at_newlines_only():
    # U+2028 and NEL inside strings are not TOML newlines: str.splitlines would shift the lines
    text = 'a = "x\u0085y"\nb = "p\u2028q"  # \u2029\nrope_theta = 5\n'
    assert tomllib.loads(text)["rope_theta"] == 5
    assert P.toml_positions(text)[("rope_theta",)] == (3, 1)


# -- linear-time expressions: the same matches as the expressions they replaced -------------------
_OLD_HEADER = re.compile(r"^\s*(\[\[?)\s*(.+?)\s*\]\]?\s*(?:#.*)?$")
_OLD_NUMERIC = re.compile(r"^\s*[-+]?(?:\d[\d_]*\.?\d*|\.\d+)(?:[eE][-+]?\d+)?\s*$")
_OLD_INTERP = re.compile(r"^\$\{\s*([^${}:]*?)\s*\}$")


def _strings(alphabet: str, n: int, seed: int):
    rng = random.Random(seed)
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12))) for _ in range(n)]


def test_toml_header_matches_the_old_expression_on_valid_headers():
    for line in _strings('[] a#".\tb_', 40_000, 1):
        m = _OLD_HEADER.match(line)
        got = P._toml_header(line) if line.lstrip().startswith("[") else None
        valid = m is not None and m.group(2).strip() and not m.group(2).startswith("[")
        if valid:
            try:
                tomllib.loads(line)  # the positions scan runs only on documents tomllib accepts
            except tomllib.TOMLDecodeError:
                continue
            assert got == (m.group(1), m.group(2)), line


def test_numeric_string_matches_the_old_expression():
    for s in _strings("0123456789_.eE+- x", 60_000, 2):
        assert bool(NUMERIC_STR.match(s)) == bool(_OLD_NUMERIC.match(s)), repr(s)


def test_interpolation_matches_the_old_expression():
    for s in _strings("${}:. a\tb", 60_000, 3):
        old = _OLD_INTERP.match(s)
        new = INTERP.match(s)
        assert (old is None) == (new is None), repr(s)
        if old:
            assert new.group(1).strip() == old.group(1), repr(s)
