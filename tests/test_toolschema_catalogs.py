"""The toolschema compressor on every real catalog of the corpus: the invariants of SPEC §10 and
reference §8.1/§8.3, and validation equivalence under the `jsonschema` library."""
import json

import pytest

from caveman.corpus import corpus_files
from caveman.toolschema import compress_toolschema, extract_tools, strip_annotations
from _toolschema_checks import catalog_validation_differences, check_catalog, resolved_refs, tool_schemas, validation_differences

CATALOGS = corpus_files(catalogs=True)


@pytest.fixture(scope='module', params=CATALOGS, ids=lambda p: p.name)
def catalog(request):
    x = request.param.read_bytes()
    return x, compress_toolschema(x)


def test_corpus_has_catalogs():
    assert len(CATALOGS) >= 12
    assert any(p.name == 'mcp_combined_5_servers.json' for p in CATALOGS)


def test_invariants(catalog):
    x, y = catalog
    assert y is not None
    assert check_catalog(x, y) == []


def test_idempotent(catalog):
    x, y = catalog
    assert compress_toolschema(y) == y


def test_output_is_compact_and_smaller(catalog):
    x, y = catalog
    assert json.dumps(json.loads(y), separators=(',', ':'), ensure_ascii=False).encode() == y
    assert len(y) < len(json.dumps(json.loads(x), separators=(',', ':'), ensure_ascii=False).encode())


def test_every_ref_resolves(catalog):
    x, y = catalog
    refs = resolved_refs(json.loads(y))
    if b'"$ref"' in x: assert refs > 0


def test_validation_equivalence(catalog):
    """Instances generated from the original and from the compressed schemas get the same verdict under both
    (original judged in its own `$schema` dialect; compressed in that dialect and in its own default)."""
    x, y = catalog
    diffs, valid, invalid = catalog_validation_differences(x, y)
    assert diffs == []
    assert valid > 0 and invalid > 0, (valid, invalid)  # the instances exercise both verdicts


def test_checks_can_fail():
    "The invariant and equivalence checks do catch a broken compression."
    x = CATALOGS[0].read_bytes()
    doc = json.loads(compress_toolschema(x))
    tools = doc['tools'] if isinstance(doc, dict) else [t.get('function', t) for t in doc]
    schema = next(t for t in tools if (t.get('inputSchema') or t.get('parameters') or {}).get('required'))
    schema = schema.get('inputSchema') or schema['parameters']
    schema['required'] = []
    broken = json.dumps(doc).encode()
    problems = check_catalog(x, broken)
    assert any('required' in p for p in problems) and 'selection profile changed' in problems
    orig = next(s for t in extract_tools(json.loads(x)) for _, s in tool_schemas(t) if s.get('required'))
    assert validation_differences(orig, {**orig, 'required': []})[0]


@pytest.mark.parametrize('path', [p for p in CATALOGS if p.name.startswith('openai_')], ids=lambda p: p.name)
def test_strip_annotations_only_deletes(path):
    "The byte-splice variant's output is the input with spans deleted, valid, idempotent, and validates the same."
    x = path.read_bytes()
    y = strip_annotations(x)
    it = iter(x)
    assert all(b in it for b in y)  # y is a subsequence of x
    assert len(y) < len(x) and strip_annotations(y) == y
    for t0, t1 in zip(extract_tools(json.loads(x)), extract_tools(json.loads(y))):
        assert validation_differences(t0['parameters'], t1['parameters'])[0] == []
