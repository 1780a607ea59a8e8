"""Every command's ``--format json`` output fits its versioned JSON Schema (docs/schemas/, issue 30).

The schemas are committed contracts (``scripts/json_schemas.py`` infers them from the runs it lists and
writes them): here the real outputs of those runs are validated against the committed files with
jsonschema (Draft 2020-12), each schema is checked as a schema, and a schema that no longer matches what
the script would write fails, so a change of output is a deliberate new version, not drift.
"""

from __future__ import annotations

import importlib.util
import json
import pathlib

import pytest

jsonschema = pytest.importorskip("jsonschema")

ROOT = pathlib.Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("json_schemas", ROOT / "scripts" / "json_schemas.py")
js = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(js)


def _committed(name: str) -> dict:
    return json.loads((ROOT / "docs" / "schemas" / f"{name}.schema.json").read_text())


@pytest.mark.parametrize("name", sorted(js.RUNS))
def test_outputs_fit_the_committed_schema(name):
    schema = _committed(name)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$id"] == f"urn:ropelaw:schema:{name}:{js.VERSION}"
    validator = jsonschema.Draft202012Validator(schema)
    for argv in js.RUNS[name]:
        errors = sorted(validator.iter_errors(js.output(argv)), key=lambda e: list(e.path))
        assert not errors, f"ropelaw {' '.join(argv)} --format json: " + "; ".join(
            f"{list(e.path)}: {e.message[:200]}" for e in errors[:5])


@pytest.mark.parametrize("name", sorted(set(js.RUNS) - js.MEASURED))
def test_the_committed_schema_is_what_the_script_writes(name):
    assert _committed(name) == json.loads(json.dumps(js.schema_of(name))), \
        f"docs/schemas/{name}.schema.json is stale: run python scripts/json_schemas.py (and bump VERSION if " \
        "an existing key changed)"


def test_every_command_with_json_output_has_a_schema():
    """Every command (and audit target) that takes --format json is in RUNS."""
    from ropelaw.cli import COMMANDS

    named = {n for n in COMMANDS if n not in ("audit", "plot")} | {"audit-code", "audit-module", "audit-checkpoint"}
    assert named == set(js.RUNS), sorted(named ^ set(js.RUNS))
    assert js.output(js.RUNS["audit-module"][1])["target"].startswith("transformers ")  # audit hf: the same schema


def test_a_wrong_type_is_caught():
    """The schemas check types: an extrapolation_bound written as a string ("inf", as lint once did) fails."""
    out = js.output(js.RUNS["bound"][0])
    out["extrapolation_bound"] = "inf"
    assert list(jsonschema.Draft202012Validator(_committed("bound")).iter_errors(out))
