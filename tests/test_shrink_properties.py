"""Property tests of `caveman.shrink` through the engine and an in-memory store: generated JSON-Schema-like catalogs
in every catalog shape (the generator of test_toolschema_properties) keep the invariants, the accounting is compact
vs compact whatever the whitespace, the original is recoverable, and anything that is not JSON passes through."""
import json

import pytest
from hypothesis import given, settings, strategies as st, HealthCheck

from caveman import ccr
from caveman.shrink import shrink, recover, compact_json
from caveman.tokens import count_tokens
from caveman.toolschema import extract_tools
from _toolschema_checks import check_catalog, tool_schemas, validation_differences
from test_toolschema_properties import catalogs

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def compact(data: bytes) -> str:
    return json.dumps(json.loads(data), separators=(',', ':'), ensure_ascii=False)


@settings(max_examples=100, **SETTINGS)
@given(catalogs())
def test_generated_catalogs_keep_invariants(x):
    store = ccr.open_store(':memory:')
    y, r = shrink(x, store)
    json.loads(y)
    assert check_catalog(x, y) == []
    assert r.tokens_before == count_tokens(compact(x))            # compact input, whatever the whitespace
    if r.recovery_handle:
        assert r.tokens_after == count_tokens(y.decode()) < r.tokens_before
        assert y == compact(y).encode()
        assert recover(r.recovery_handle, store) == x            # the exact original, not its compact form
    else:                                                       # nothing fewer in compact terms: untouched
        assert (y, r.ratio, r.tokens_after) == (x, 0, r.tokens_before)
    y2, r2 = shrink(y, store)
    assert y2 == y and r2.ratio == 0 and not r2.recovery_handle  # idempotent


@settings(max_examples=60, **SETTINGS)
@given(catalogs(), st.sampled_from([None, 1, 4]), st.booleans())
def test_whitespace_is_never_a_saving(x, indent, ascii_only):
    "Re-serialising the same catalog differently changes neither the numbers nor (unless passed through) the output."
    doc = json.loads(x)
    other = json.dumps(doc, indent=indent, ensure_ascii=ascii_only).encode()
    y1, r1 = shrink(x, ':memory:')
    y2, r2 = shrink(other, ':memory:')
    assert (r1.tokens_before, r1.tokens_after, r1.ratio) == (r2.tokens_before, r2.tokens_after, r2.ratio)
    if r1.ratio: assert y1 == y2
    else: assert (y1, y2) == (x, other)


@pytest.mark.slow
@settings(max_examples=50, **SETTINGS)
@given(catalogs())
def test_generated_catalogs_validate_the_same(x):
    y, _ = shrink(x, ':memory:')
    for t0, t1 in zip(extract_tools(json.loads(x)), extract_tools(json.loads(y))):
        for (key, s0), (_, s1) in zip(tool_schemas(t0), tool_schemas(t1)):
            assert validation_differences(s0, s1)[0] == [], key


@settings(max_examples=200, **SETTINGS)
@given(st.one_of(st.binary(max_size=200), st.text(max_size=200).map(lambda s: s.encode('utf-8', 'surrogatepass'))))
def test_non_json_passes_through(x):
    "Input that is not exactly one JSON value comes back byte-identical, ratio 0, no handle, no error."
    if compact_json(x) is not None: return  # the rare valid JSON value is covered above
    store = ccr.open_store(':memory:')
    y, r = shrink(x, store)
    assert (y, r.ratio, r.recovery_handle, r.tokens_after) == (x, 0, '', r.tokens_before)
    assert store.summary()['totals']['count'] == 0
