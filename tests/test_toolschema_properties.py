"""Property tests: generated JSON-Schema-like catalogs in every catalog shape keep the toolschema invariants
(selection profile, keywords at their paths, `$ref`s, names and order, valid JSON, idempotence, validation
equivalence), and description reduction / the byte-splice variant keep theirs."""
import json, re
from urllib.parse import quote

import pytest
from hypothesis import example, given, settings, strategies as st, HealthCheck

from caveman.toolschema import (compress_toolschema, extract_tools, reduce_description, split_sentences, strip_annotations,
                                is_fact, selection_profile)
from _toolschema_checks import check_catalog, tool_schemas, validation_differences

KEYWORDISH = ['title', 'description', 'example', 'examples', '$comment', '$schema', 'default', 'enum', 'const', 'type',
              'required', 'properties', 'items', '$ref', '$defs', 'deprecated', 'path', 'mode', 'body', 'count']
names = st.one_of(st.sampled_from(KEYWORDISH), st.text(min_size=1, max_size=8))

CONSTRAINT_SENTENCES = ['The key must be an absolute path, e.g. /srv/x or /data/in.', 'Set exactly one of body or body_b64.',
                        'The timestamp format must be RFC3339.', 'Values above 100 are not allowed.',
                        'Dates are ISO 8601 strings.', 'At most 50 items are returned.', 'Ünïcødé names must not repeat.']
FILLER = ['This tool is very handy.', 'It was written by the platform team.', 'Results are pretty.', 'Think of it as a helper.',
          'Größere Dateien dauern länger.', '日本語の説明です。', 'See Node.js docs, e.g. The guide.', 'Use v1.2 or 3.14 here.']
sentence = st.one_of(st.sampled_from(CONSTRAINT_SENTENCES + FILLER),
                     st.text(min_size=1, max_size=90).map(lambda s: s.strip() + '.'))
descriptions = st.one_of(st.text(max_size=60), st.lists(sentence, min_size=1, max_size=9).map(' '.join),
                         st.lists(sentence, min_size=1, max_size=6).map('\n\n'.join))
json_scalars = st.one_of(st.none(), st.booleans(), st.integers(-10 ** 20, 10 ** 20),
                         st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=10))
json_values = st.recursive(json_scalars, lambda c: st.lists(c, max_size=3) | st.dictionaries(names, c, max_size=3), max_leaves=6)
annotations = {'title': st.text(max_size=20), 'description': descriptions, 'examples': st.lists(json_values, max_size=2),
               'example': json_values, '$comment': st.text(max_size=20)}

leaf = st.fixed_dictionaries({'type': st.sampled_from(['string', 'integer', 'number', 'boolean', 'null'])}, optional={
    **annotations, 'deprecated': st.booleans(), 'default': json_values, 'const': json_scalars, 'enum': st.lists(json_scalars, min_size=1, max_size=4),
    'minimum': st.integers(-5, 5), 'maximum': st.integers(5, 200), 'minLength': st.integers(0, 3), 'maxLength': st.integers(3, 40)})


def containers(children):
    obj = st.fixed_dictionaries({'type': st.just('object'), 'properties': st.dictionaries(names, children, max_size=4)},
                                optional={**annotations, 'required': st.lists(names, max_size=3, unique=True),
                                          'additionalProperties': st.booleans(), 'default': json_values,
                                          'dependentRequired': st.dictionaries(names, st.lists(names, max_size=2), max_size=2),
                                          'patternProperties': st.dictionaries(st.sampled_from(['^title_', '^x-', 'example$']), children, max_size=2)})
    arr = st.fixed_dictionaries({'type': st.just('array'), 'items': children},
                                optional={**annotations, 'minItems': st.integers(0, 2), 'maxItems': st.integers(2, 4)})
    any_of = st.fixed_dictionaries({'anyOf': st.lists(children, min_size=1, max_size=3)}, optional=annotations)
    return st.one_of(obj, arr, any_of, st.fixed_dictionaries({'x-vendor': st.dictionaries(names, json_values, max_size=2)}, optional={'not': children}))


schemas = st.recursive(leaf, containers, max_leaves=8)


def pointer(name: str) -> str:
    return '#/$defs/' + quote(name.replace('~', '~0').replace('/', '~1'), safe='')


@st.composite
def root_schemas(draw):
    "An object schema with `$defs` (user names that collide with keywords) and properties that `$ref` them."
    defs = draw(st.dictionaries(names, schemas, max_size=3))
    props = draw(st.dictionaries(names, st.one_of(schemas, st.sampled_from([{'$ref': pointer(n)} for n in defs]) if defs else schemas), max_size=5))
    root = {'type': 'object', 'properties': props}
    if defs: root['$defs'] = defs
    if props: root['required'] = draw(st.lists(st.sampled_from(sorted(props)), unique=True, max_size=3))
    for k, strat in [('$schema', st.sampled_from(['https://json-schema.org/draft/2020-12/schema'])), ('title', st.text(max_size=15)),
                     ('description', descriptions), ('additionalProperties', st.booleans()), ('$comment', st.text(max_size=10))]:
        if draw(st.booleans()): root[k] = draw(strat)
    return root


hints = st.fixed_dictionaries({}, optional={'title': st.text(max_size=15), 'readOnlyHint': st.booleans(), 'destructiveHint': st.booleans(),
                                            'idempotentHint': st.booleans(), 'openWorldHint': st.booleans()})


@st.composite
def tools(draw, name):
    tool = {'name': name, 'description': draw(descriptions), 'inputSchema': draw(root_schemas())}
    if draw(st.booleans()): tool['title'] = draw(st.text(max_size=15))
    if draw(st.booleans()): tool['outputSchema'] = draw(root_schemas())
    if draw(st.booleans()): tool['annotations'] = draw(hints)
    if draw(st.booleans()): tool['execution'] = {'taskSupport': draw(st.sampled_from(['forbidden', 'optional', 'required']))}
    if draw(st.booleans()): tool['_meta'] = {'title': 'meta', 'examples': [1]}
    return tool


def openai(t): return {'type': 'function', 'function': {'name': t['name'], 'description': t['description'], 'parameters': t['inputSchema']}}
def anthropic(t): return {'name': t['name'], 'description': t['description'], 'input_schema': t['inputSchema'], 'cache_control': {'type': 'ephemeral'}}

SHAPES = {'mcp': lambda ts: {'tools': ts}, 'jsonrpc': lambda ts: {'jsonrpc': '2.0', 'id': 1, 'result': {'tools': ts}},
          'openai': lambda ts: [openai(t) for t in ts], 'functions': lambda ts: {'functions': [openai(t)['function'] for t in ts]},
          'anthropic': lambda ts: [anthropic(t) for t in ts], 'bare': lambda ts: ts, 'single': lambda ts: ts[0]}


@st.composite
def catalogs(draw):
    tool_names = draw(st.lists(st.text(min_size=1, max_size=12), min_size=1, max_size=4, unique=True))
    ts = [draw(tools(n)) for n in tool_names]
    doc = SHAPES[draw(st.sampled_from(sorted(SHAPES)))](ts)
    return json.dumps(doc, indent=draw(st.sampled_from([None, 2])), ensure_ascii=draw(st.booleans())).encode()


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(catalogs())
def test_generated_catalogs_keep_invariants(x):
    y = compress_toolschema(x)
    assert y is not None
    assert check_catalog(x, y) == []
    assert compress_toolschema(y) == y


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(catalogs())
def test_generated_catalogs_validate_the_same(x):
    y = compress_toolschema(x)
    for t0, t1 in zip(extract_tools(json.loads(x)), extract_tools(json.loads(y))):
        for (key, s0), (_, s1) in zip(tool_schemas(t0), tool_schemas(t1)):
            assert validation_differences(s0, s1)[0] == [], key


def _plain(text: str) -> str:
    "Words of `text` with Markdown emphasis/heading marks and whitespace runs removed (what tidying may change)."
    return ' '.join(text.replace('*', ' ').replace('_', ' ').replace('#', ' ').split())


@given(descriptions)
@example('The key must be an absolute path, e.g. /srv/x or /data/in.\n\n' * 3 + '%.')   # a unit of no letter: no fact (found in CI)
def test_description_reduction(d):
    r = reduce_description(d)
    assert reduce_description(r) == r                                  # idempotent
    assert len(r.encode()) <= len(d.strip().encode())                  # never grows
    if len(r.encode()) <= 160 and len(d.strip().encode()) <= 160: assert _plain(r) == _plain(d)   # short: every word kept
    else:
        for line in d.splitlines():
            for s in split_sentences(line.strip()):
                if is_fact(s): assert _plain(s) in _plain(r), s          # every fact sentence survives
        r.encode('utf-8')                                              # no broken characters


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(catalogs())
def test_profile_of_every_shape(x):
    "Every generated shape yields its tools (the single-tool shape yields one)."
    assert 1 <= len(selection_profile(x)) <= 4


@pytest.mark.slow
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(catalogs())
def test_strip_annotations_deletes_only(x):
    y = strip_annotations(x)
    assert y is not None and strip_annotations(y) == y
    it = iter(x)
    assert all(b in it for b in y)                                     # only deletions
    json.loads(y)
    for t0, t1 in zip(extract_tools(json.loads(x)), extract_tools(json.loads(y))):
        for (key, s0), (_, s1) in zip(tool_schemas(t0), tool_schemas(t1)):
            assert validation_differences(s0, s1)[0] == [], key


FACT_PIECES = ['must', 'not', "can't", 'at least', 'at  most', 'requires', 'İf', 'rfc 3339', 'ISO-8601', 'Muß', 'ne', 'pas', '必须', '最多',
               'の', '필수', 'x', '_', '2', '²', '-', "'", ' ', '\n', 'É', 'case-insensitive', 'one of', 'formatted']


@given(st.one_of(st.text(max_size=40), st.lists(st.sampled_from(FACT_PIECES), max_size=8).map(''.join)))
def test_fact_words_by_set_match_the_regex(s):
    "The word-set test answers exactly as the one big alternation it replaces for speed."
    from caveman.toolschema import has_fact_word, FACT_WORDS
    assert has_fact_word(s) == bool(FACT_WORDS.search(s))


@given(json_values)
def test_fast_writer_matches_the_lexeme_writer(v):
    "The C-encoder path of dumps_compact writes what the lexeme-keeping writer writes."
    from caveman.toolschema import dumps_compact, _dumps_slow, loads_typed
    assert dumps_compact(v) == _dumps_slow(v)
    x = loads_typed(json.dumps(v, ensure_ascii=False))
    assert dumps_compact(x) == _dumps_slow(x)


RESTATING = ['optional', 'required', "default is 'a'", 'defaults to 600', 'default: true', "can be 'a' or 'b'", 'either a or b', 'Optional:']


@given(st.lists(st.one_of(st.sampled_from(RESTATING), st.sampled_from(FILLER), st.text(max_size=15)), max_size=6).map(lambda p: ', '.join(p) + '.'),
       st.fixed_dictionaries({}, optional={'default': st.sampled_from(['a', 600, True, None]), 'enum': st.just(['a', 'b'])}),
       st.sampled_from([True, False, None]))
def test_restatement_removal_is_idempotent_and_only_removes(text, schema, optional):
    from caveman.toolschema import drop_schema_restatements
    r = drop_schema_restatements(text, schema, optional)
    assert drop_schema_restatements(r, schema, optional) == r
    words = lambda t: set(re.findall(r'\w+', t.lower()))
    assert len(r) <= len(text) and words(r) <= words(text)             # only removes words, never adds
