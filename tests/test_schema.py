#!/usr/bin/env python3
"""test_schema: docs/result.schema.json is a valid JSON Schema (draft 2020-12), the saved result files of both
schema versions (tests/fixtures/result-v1.json, result-v2.json) and any files given after them satisfy it,
and documents that break it (a wrong severity, a negative hidden-communication fraction, a record without a
metric) are rejected. argv: SCHEMA FILE... Test-only helper: ddpbench itself never needs Python."""
import copy
import json
import sys

try:
    import jsonschema
except ImportError:
    print("jsonschema is not installed (apt-get install python3-jsonschema)", file=sys.stderr)
    print("0 passed, 0 failed")
    sys.exit(77)

passed = failed = 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print(f"FAIL {what}", file=sys.stderr)


def errors(v, doc):
    return [e.message for e in v.iter_errors(doc)]


schema = json.load(open(sys.argv[1]))
try:
    jsonschema.Draft202012Validator.check_schema(schema)
    check(True, "schema")
except jsonschema.SchemaError as e:
    check(False, f"schema is not a valid JSON Schema: {e.message}")
v = jsonschema.Draft202012Validator(schema)
docs = {}
for path in sys.argv[2:]:
    docs[path] = json.load(open(path))
    errs = errors(v, docs[path])
    check(not errs, f"{path}: {errs[:3]}")
v2 = next((d for d in docs.values() if d.get("schema_version") == 2), None)
check(v2 is not None, "a version 2 file was given")
if v2:
    bad = copy.deepcopy(v2)
    bad["findings"] = [{"check": "x", "severity": "fatal", "scope": "job", "subject": "job", "measured": None,
                        "expected": None, "unit": "", "text": "t"}]
    check(errors(v, bad), "unknown severity rejected")
    bad = copy.deepcopy(v2)
    bad["hidden_comm_fraction"] = -1.55
    check(errors(v, bad), "hidden fraction below 0 rejected")
    bad = copy.deepcopy(v2)
    del bad["records"][0]["metric"]
    check(errors(v, bad), "record without metric rejected")
    bad = copy.deepcopy(v2)
    del bad["records"]
    check(errors(v, bad), "version 2 without records rejected")
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
