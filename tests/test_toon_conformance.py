"""The official TOON conformance fixtures, run through `caveman.toon` (SPEC §7), plus property tests.

Required cases: every v4.0.0 case except lenient-mode ones (`options.strict == false`, the optional
non-strict decoding of spec §14.4, which caveman never uses). Encode cases must produce the expected
TOON exactly; decode cases the expected JSON value (types, key order and exact numbers compared);
`shouldError` cases must raise `ToonError`.

v3.3.2 cases are required when v4 kept their behaviour. We find the changed ones by comparing with
the v4.0.0 files (same category, input and options):
- 24 cases use options v4 no longer has: `keyFolding`/`flattenDepth` (encode/key-folding.json, 12)
  and `expandPaths` (decode/path-expansion.json, 12). v4 removed key folding and path expansion.
- encode/arrays-objects.json #1 is absent from v4 and contradicts it: v3 wrote
  `{"items":[{"id":1,"nested":{"x":1}}]}` with list items, v4 §9.3 writes a table with a nested
  field group, `items[1]{id,nested{x}}:`.
- No v3 case has an identical input/options twin in v4 with a different expectation.
Every other v3 case (371 with an identical v4 twin, 4 more that v4 does not repeat) must pass.

The loader and comparison (`_toon_fixtures.py`, shared with the CLI conformance test) are independent
of `caveman.toon.run_conformance`; the last test checks that `run_conformance` reports the same counts.
"""
import json
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from caveman.toon import ToonError, conformance_summary, decode, encode, run_conformance
from _toon_fixtures import V3, V4, case_id, dump, optional, tagged, v3_status


def kwargs(case) -> dict:
    names = {'delimiter': 'delimiter', 'indentSize': 'indent_size', 'strict': 'strict'}
    return {names[k]: v for k, v in case['options'].items()}


def check(case) -> None:
    "Run one fixture case through caveman.toon; AssertionError when it does not behave as the fixture says."
    t = case['test']
    run = (lambda: encode(dump(t['input']), **kwargs(case))) if case['category'] == 'encode' else (lambda: decode(t['input'], **kwargs(case)))
    if t.get('shouldError'):
        with pytest.raises(ToonError): run()
        return
    got = run()
    if case['category'] == 'encode': assert got == t['expected']
    else: assert tagged(json.loads(got, parse_float=Decimal)) == tagged(t['expected'])


def run_case(case) -> None:
    if not optional(case): return check(case)
    try: check(case)
    except (AssertionError, ToonError) as e: pytest.skip(f'optional lenient-mode case (strict: false): {e}')


@pytest.mark.parametrize('case', V4, ids=case_id)
def test_v4(case): run_case(case)


@pytest.mark.parametrize('case', V3, ids=case_id)
def test_v3_kept_by_v4(case):
    status = v3_status(case)
    if status in ('removed', 'changed'): pytest.skip(f'v3.3.2 behaviour changed in v4 ({status})')
    assert status != 'contradicted'
    run_case(case)


def test_v3_classification():
    "The comparison finds exactly the changes the module docstring explains."
    by = {}
    for c in V3: by.setdefault(v3_status(c), []).append((c['file'], c['index']))
    assert len(by['removed']) == 24 and {f for f, _ in by['removed']} == {'encode/key-folding.json', 'decode/path-expansion.json'}
    assert 'contradicted' not in by
    assert len(by['kept']) + len(by['absent']) + len(by['changed']) + len(by['removed']) == len(V3)


def test_v3_changed_case_has_v4_form():
    "The one v3 case v4 changed: v4 writes a nested field group, and the value still round-trips."
    case = next(c for c in V3 if (c['file'], c['index']) == ('encode/arrays-objects.json', 1))
    src = dump(case['test']['input'])
    toon = encode(src)
    assert toon != case['test']['expected']
    assert toon.splitlines()[0] == 'items[1]{id,nested{x}}:'
    assert json.loads(decode(toon)) == json.loads(src)


def test_run_conformance_agrees(capsys):
    "caveman.toon.run_conformance reports no failures and the same totals; the counts are printed."
    rep = run_conformance()
    with capsys.disabled():
        print('\nTOON conformance (caveman.toon):\n' + conformance_summary(rep))
        for v, files in rep['by_file'].items():
            for f, n in files.items():
                print(f'  {v} {f}: {n["passed"]} passed, {n["failed"]} failed, {n["skipped_optional"]} optional, {n["skipped_changed"]} changed')
    assert rep['failures'] == []
    for version, cases in (('v4.0.0', V4), ('v3.3.2', V3)):
        for cat in ('encode', 'decode'):
            n = rep['counts'][version][cat]
            assert sum(n.values()) == sum(c['category'] == cat for c in cases)
            assert n['skipped_optional'] <= sum(optional(c) for c in cases if c['category'] == cat)
    assert rep['counts']['v4.0.0']['encode']['passed'] == sum(c['category'] == 'encode' for c in V4)
    assert rep['counts']['v3.3.2']['encode']['skipped_changed'] + rep['counts']['v3.3.2']['decode']['skipped_changed'] == 25


# ---------------------------------------------------------------- property tests

TRICKY = ['', 'true', 'false', 'null', '123', '-1.5', '1e5', '05', '-', '- x', '#', '#c', 'a,b', 'a|b', 'a\tb',
          ' pad ', '[1]', '{x}', 'a: b', 'a:b', '"q"', 'a"b', '\\', 'line\nbreak', '\r', '\x00', '\ufeffbom', 'é', '🚀']
strings = st.one_of(st.text(max_size=12), st.sampled_from(TRICKY))
numbers = st.one_of(
    st.integers(min_value=-10**40, max_value=10**40).map(str),
    st.decimals(allow_nan=False, allow_infinity=False).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr))
scalars = st.one_of(st.none(), st.booleans(), numbers.map(lambda s: ('num', s)), strings)


def tables(children):
    "Lists of objects with the same keys: the tabular and nested-field-group forms."
    return st.lists(strings, min_size=1, max_size=4, unique=True).flatmap(
        lambda keys: st.lists(st.fixed_dictionaries({k: children for k in keys}), min_size=1, max_size=4))


values = st.recursive(scalars, lambda children: st.one_of(
    st.lists(children, max_size=5), st.dictionaries(strings, children, max_size=5), tables(scalars), tables(children)),
    max_leaves=30)


def to_json(v) -> str:
    if isinstance(v, tuple): return v[1]
    if isinstance(v, dict): return '{' + ','.join(json.dumps(k) + ':' + to_json(x) for k, x in v.items()) + '}'
    if isinstance(v, list): return '[' + ','.join(map(to_json, v)) + ']'
    return json.dumps(v)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(values, st.sampled_from([',', '\t', '|']), st.integers(min_value=1, max_value=4))
def test_round_trip(value, delimiter, indent):
    """decode(encode(x)) is the same JSON value as x, for every delimiter and indent, numbers exact.
    Objects compare unordered (RFC 8259 §4): rows of a table take the header's key order (v4 §9.3)."""
    src = to_json(value)
    toon = encode(src, delimiter=delimiter, indent_size=indent)
    back = decode(toon, indent_size=indent)
    assert tagged(json.loads(back, parse_float=Decimal), False) == tagged(json.loads(src, parse_float=Decimal), False)
    assert encode(src, delimiter=delimiter, indent_size=indent) == toon  # deterministic


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=200))
def test_decode_fails_closed_on_any_text(text):
    "Any text either decodes to valid JSON or raises ToonError with a short message, never anything else."
    try: out = decode(text)
    except ToonError as e:
        assert 'no JSON was emitted' in str(e) and len(str(e)) < 300
        return
    json.loads(out)


no_tables = st.recursive(scalars, lambda children: st.one_of(st.lists(children, max_size=5), st.dictionaries(strings, children, max_size=5)), max_leaves=30)


@settings(max_examples=300, deadline=None)
@given(no_tables)
def test_round_trip_keeps_key_order_outside_tables(value):
    "Without uniform-object arrays, key order survives exactly too (v4 §2)."
    src = to_json(value)
    toon = encode(src)
    if '{' in toon.split('\n')[0] or any('}:' in line for line in toon.split('\n')):
        return  # hypothesis built a table anyway (e.g. one-key objects); covered above
    assert tagged(json.loads(decode(toon), parse_float=Decimal)) == tagged(json.loads(src, parse_float=Decimal))


@settings(max_examples=300, deadline=None)
@given(values, st.data())
def test_decode_fails_closed_on_damaged_toon(value, data):
    "Deleting or replacing one character of valid TOON gives a ToonError or valid JSON, nothing else."
    toon = encode(to_json(value))
    if not toon: return
    i = data.draw(st.integers(min_value=0, max_value=len(toon) - 1))
    repl = data.draw(st.sampled_from(['', ' ', ',', ':', '"', '\n', '-', '[', '9', '\t']))
    try: out = decode(toon[:i] + repl + toon[i + 1:])
    except ToonError: return
    json.loads(out)


def test_big_numbers_exact():
    "Numbers beyond float range and precision come back digit for digit in value (reference §10.8)."
    src = '{"a":1.10,"b":1e9,"c":123456789012345678901234567890,"d":1e400,"e":-1e-400,"f":0.1000000000000000000000000001,"g":' + '7' * 5000 + '}'
    back = json.loads(decode(encode(src)), parse_float=Decimal, parse_int=Decimal)
    want = json.loads(src, parse_float=Decimal, parse_int=Decimal)
    assert tagged(back) == tagged(want)
