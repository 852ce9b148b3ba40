"""Issue 15, savings from what is really redundant: keywords that constrain nothing (`"required": []`, `"minItems": 0`,
`"propertyNames": {"type": "string"}`, …) go, and only those; a shape example given with alternatives (`such as [{…}] or
[{…}]`) goes whole, never leaving a dangling `or [{…}]`; a property description that only restates its name up to an
English plural (*The name of the entity* on `name` in `create_entities`) goes.

Each judge reads the original with its own code: `jsonschema` for verdicts, `_toolschema_checks` (which imports no
compressor code) for the invariants, plain `json`/`regex` for the descriptions."""
import json

import pytest
import regex
from hypothesis import given, settings, strategies as st, HealthCheck
from jsonschema.validators import Draft202012Validator, Draft7Validator

from caveman.shrink import shrink
from caveman.toolschema import compress_toolschema
from _toolschema_checks import check_catalog, constrains_nothing, validation_differences

VACUOUS = [('required', []), ('minItems', 0), ('minLength', 0), ('minProperties', 0), ('uniqueItems', False),
           ('dependentRequired', {}), ('propertyNames', {'type': 'string'}), ('propertyNames', {}), ('propertyNames', True),
           ('propertyNames', {'type': 'string', 'title': 'Key'})]
NOT_VACUOUS = [('required', ['a']), ('minItems', 1), ('minLength', 2), ('minProperties', 1), ('uniqueItems', True),
               ('dependentRequired', {'a': ['b']}), ('propertyNames', {'type': 'string', 'maxLength': 2}),
               ('propertyNames', {'pattern': '^a'}), ('propertyNames', False), ('propertyNames', {'type': 'string', 'description': 'ISO dates'}),
               ('maxItems', 0), ('properties', {}), ('additionalProperties', True)]


def catalog(schema: dict) -> bytes:
    return json.dumps({'tools': [{'name': 'tool', 'description': 'Does a thing.', 'inputSchema': schema}]}).encode()


def shrunk_schema(schema: dict) -> dict:
    return json.loads(compress_toolschema(catalog(schema)))['tools'][0]['inputSchema']


def instances():
    "Instances that exercise each keyword: objects with and without keys, duplicates, empty strings and arrays."
    return [{}, {'a': 'x'}, {'a': ''}, {'a': [], 'b': 1}, {'a': [1, 1]}, {'a': [1, 2]}, {'a': {}}, {'a': {'k': 1}},
            {'1': 1}, {'': None}, [], [1, 1], '', 'x', 0, None]


@pytest.mark.parametrize('key,value', VACUOUS, ids=lambda v: json.dumps(v))
@pytest.mark.parametrize('where', ['root', 'property'])
def test_vacuous_keywords_go_and_change_no_verdict(key, value, where):
    inner = {key: value, 'type': 'object' if key in ('required', 'minProperties', 'dependentRequired', 'propertyNames') else
             'array' if key in ('minItems', 'uniqueItems') else 'string'}
    schema = ({'type': 'object', 'properties': {'a': {'type': 'string'}}, key: value} if where == 'root'
              else {'type': 'object', 'properties': {'a': inner}})
    out = shrunk_schema(schema)
    node = out if where == 'root' else out['properties']['a']
    assert key not in node, out
    assert check_catalog(catalog(schema), catalog(out)) == []
    for cls in (Draft202012Validator, Draft7Validator):     # the same verdict in every dialect the rule claims
        v0, v1 = cls(schema), cls(out)
        flips = [i for i in instances() + [{'a': i} for i in instances()] if v0.is_valid(i) != v1.is_valid(i)]
        assert flips == [], (cls.__name__, flips)


@pytest.mark.parametrize('key,value', NOT_VACUOUS, ids=lambda v: json.dumps(v))
def test_keywords_that_constrain_stay(key, value):
    schema = {'type': 'object', 'properties': {'a': {'type': 'string'}}, key: value}
    out = shrunk_schema(schema)
    assert out.get(key) == value or (key == 'propertyNames' and isinstance(value, dict) and set(out[key]) <= set(value))


def test_judge_refuses_a_constraint_removed():
    "The invariant judge lets a keyword go only when it constrained nothing."
    schema = {'type': 'object', 'properties': {'a': {'type': 'array', 'minItems': 1, 'uniqueItems': True}}, 'required': ['a'],
              'propertyNames': {'maxLength': 3}}
    broken = {'type': 'object', 'properties': {'a': {'type': 'array'}}}
    problems = check_catalog(catalog(schema), catalog(broken))
    assert {"tool.inputSchema: ('properties', 'a'): non-annotation keys removed ['minItems', 'uniqueItems']",
            "tool.inputSchema: (): non-annotation keys removed ['propertyNames', 'required']",
            "tool.inputSchema: schema object ('propertyNames',) missing"} <= set(problems), problems
    assert all(constrains_nothing(k, v) for k, v in VACUOUS)
    assert not any(constrains_nothing(k, v) for k, v in NOT_VACUOUS)


def test_a_ref_into_a_vacuous_keyword_keeps_it():
    schema = {'type': 'object', 'properties': {'a': {'type': 'object', 'propertyNames': {'type': 'string'}},
                                               'b': {'$ref': '#/properties/a/propertyNames'}}}
    out = shrunk_schema(schema)
    assert out['properties']['a']['propertyNames'] == {'type': 'string'}


def test_an_unknown_dialect_keeps_them():
    "Under a `$schema` we cannot read, a keyword may mean something else: nothing is called vacuous."
    schema = {'$schema': 'https://example.com/my-dialect', 'type': 'object', 'required': [], 'properties': {'a': {'type': 'array', 'minItems': 0}}}
    assert shrunk_schema(schema) == schema


vacuous_leaf = st.fixed_dictionaries({'type': st.sampled_from(['object', 'array', 'string'])},
                                     optional={k: st.just(v) for k, v in VACUOUS[:7]} | {'maxLength': st.integers(0, 3), 'maxItems': st.integers(0, 2)})


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.sampled_from(['a', 'b', 'required', 'title']), vacuous_leaf, max_size=3), st.booleans())
def test_generated_schemas_with_vacuous_keywords(props, empty_required):
    schema = {'type': 'object', 'properties': props, **({'required': []} if empty_required else {})}
    x = catalog(schema)
    y = compress_toolschema(x)
    assert check_catalog(x, y) == []
    assert compress_toolschema(y) == y
    out = json.loads(y)['tools'][0]['inputSchema']
    assert validation_differences(schema, out)[0] == []
    text = json.dumps(out)
    assert '"minItems": 0' not in text and '"required": []' not in text and '"uniqueItems": false' not in text


# ---- descriptions --------------------------------------------------------------------------------------------------

ALTERNATIVE = regex.compile(r'\b(?:or|and)\s*[\[{]', regex.I)


def _descriptions(node, path=()):
    if isinstance(node, dict):
        for k, v in node.items():
            if k == 'description' and isinstance(v, str): yield path, v
            elif k not in ('enum', 'const', 'default', 'examples'): yield from _descriptions(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node): yield from _descriptions(v, path + (i,))


def dangling_alternatives(original: bytes, shrunk: bytes) -> list[str]:
    "Every `or [` / `and {` in a shrunk description whose preceding 30 characters differ from the original's: an alternative cut loose from what it was an alternative to."
    before = {(t['name'], p): d for t in json.loads(original)['tools'] for p, d in _descriptions(t)}
    bad = []
    for t in json.loads(shrunk)['tools']:
        for p, d in _descriptions(t):
            orig = before[(t['name'], p)]
            for m in ALTERNATIVE.finditer(d):
                tail = d[max(0, m.start() - 30):m.end()]
                if tail not in orig: bad.append(f"{t['name']} {p}: …{tail}")
    return bad


def test_shape_example_alternatives_go_whole():
    desc = "Data for boxplot chart, such as, [{ category: 'a', value: 10 }] or [{ category: 'b', value: 20, group: 'c' }]."
    items = {'type': 'object', 'properties': {k: {'type': 'string'} for k in ('category', 'value', 'group')}}
    x = catalog({'type': 'object', 'properties': {'data': {'type': 'array', 'items': items, 'description': desc},
                                                  'rows': {'type': 'array', 'description': 'Rows, e.g. [{ category: 1 }] or [{ other: 2 }].'}}})
    y = compress_toolschema(x)
    assert dangling_alternatives(x, y) == [] and check_catalog(x, y) == []
    props = json.loads(y)['tools'][0]['inputSchema']['properties']
    assert props['data']['description'] == 'Data for boxplot chart.'        # both literals went, with their "such as" and "or"
    assert props['rows']['description'] == 'Rows, e.g. [{ category: 1 }] or [{ other: 2 }].'   # `other` is no parameter: kept whole


def test_the_alternatives_judge_can_fail():
    x = catalog({'type': 'object', 'properties': {'d': {'type': 'string', 'description': 'Data, such as [{ d: 1 }] or [{ d: 2 }].'}}})
    y = catalog({'type': 'object', 'properties': {'d': {'type': 'string', 'description': 'Data or [{ d: 2 }].'}}})
    assert dangling_alternatives(x, y)


@pytest.mark.slow
def test_no_dangling_alternatives_on_real_catalogs():
    from _mcp_catalogs import dumped_catalogs
    from caveman.corpus import corpus_files
    cats = [p.read_bytes() for p in dumped_catalogs().values()] + [p.read_bytes() for p in corpus_files(catalogs=True) if p.name.startswith('mcp_')]
    for x in cats:
        y = shrink(x, ':memory:')[0]
        assert dangling_alternatives(x, y) == []


def test_plural_of_a_name_word_is_a_restatement():
    "A description that restates the names up to an English plural goes; a different word keeps it."
    props = {'name': {'type': 'string', 'description': 'The name of the entity'},
             'from': {'type': 'string', 'description': 'The name of the entity where the relation starts'},
             'status': {'type': 'string', 'description': 'The statu'}}
    x = json.dumps({'tools': [{'name': 'create_entities', 'inputSchema': {'type': 'object', 'properties': props}}]}).encode()
    y = compress_toolschema(x)
    assert check_catalog(x, y) == []
    out = json.loads(y)['tools'][0]['inputSchema']['properties']
    assert 'description' not in out['name']
    assert out['from']['description'] == props['from']['description']
    assert out['status']['description'] == 'The statu'      # no fold of `status`: "statu" is no word of the names
