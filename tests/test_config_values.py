"""Configs whose values span lines: detected as `config`, and every view still parses with no value
cut in the middle — generated YAML dumps in every scalar style, TOML with multi-line arrays and
strings, INI with continuation lines. Each view is also recovered byte-exact through the engine."""
import configparser, random, tomllib
import pytest, yaml
from caveman import ccr
from caveman.detect import detect
from caveman.engine import Engine

WORDS = 'alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron'.split()


def ini_load(text: str) -> dict:
    "An INI text as configparser reads it: {section: {option: value}}."
    c = configparser.ConfigParser(interpolation=None, strict=False)
    c.read_string(text)
    return {s: dict(c[s]) for s in c.sections()}


def strings(v):
    "Every string inside a loaded YAML/TOML value."
    if isinstance(v, dict): return [s for k, x in v.items() for s in strings(k) + strings(x)]
    if isinstance(v, list): return [s for x in v for s in strings(x)]
    return [v] if isinstance(v, str) else []


@pytest.fixture(scope='module')
def engine():
    return Engine(store=ccr.open_store(':memory:'))


def _check(engine, body: bytes, load):
    assert detect(body) == 'config'
    res = engine.compress(body)
    if not res.recovery_handle:
        assert res.output == body
        return None
    assert engine.store.get(res.recovery_handle) == body
    view = load(res.output.decode())
    assert not [s for s in strings(view) if 'elided (caveman)' in s]          # no marker inside a value
    return view


@pytest.mark.parametrize('seed', range(40))
def test_yaml_dumps_every_style(engine, seed):
    r = random.Random(seed)
    def s(): return ' '.join(r.choice(WORDS) for _ in range(r.randint(1, 25)))
    items = [{'name': f'n{i}', 'desc': s(), 'tags': [s() for _ in range(r.randint(0, 3))], 'cfg': {'a': s(), 'b': r.randint(0, 9)}}
             for i in range(r.randint(10, 40))]
    original = {'version': 1, 'kind': 'x', 'items': items}
    text = yaml.dump(original, width=r.choice([40, 60, 80]), sort_keys=False, default_style=r.choice([None, '"', "'"]),
                     default_flow_style=r.choice([False, None]))
    view = _check(engine, text.encode(), yaml.safe_load)
    if view is None: return
    shown = {i['name']: i for i in view['items'] if isinstance(i, dict) and 'name' in i}
    for item in original['items']:                                               # an item shown is shown as it was
        if item['name'] in shown and 'desc' in shown[item['name']]: assert shown[item['name']]['desc'] == item['desc']


def test_toml_multiline_arrays_and_strings(engine):
    parts = ['version = 3', '']
    for i in range(40):
        parts += ['[[package]]', f'name = "crate{i}"', f'version = "1.{i}.0"', 'dependencies = [', *[f' "dep{k}",' for k in range(i % 5 + 1)], ']', '']
    parts += ['[metadata]', 'notes = """', 'a [ bracket in a string', 'and # no comment', '"""', 'owner = "me"']
    body = '\n'.join(parts).encode()
    view = _check(engine, body, tomllib.loads)
    assert view is not None
    original = {p['name']: p for p in tomllib.loads(body.decode())['package']}
    for p in view['package']: assert p == original[p['name']]                   # every table shown is whole
    assert view['metadata']['notes'] == 'a [ bracket in a string\nand # no comment\n'


def test_ini_continuation_lines(engine):
    parts = ['; global settings']
    for i in range(30):
        parts += [f'[host{i}]', f'HostName = h{i}.internal', 'User = deploy', f'LocalForward = 80{i:02d} localhost:80',
                  '  extra continuation line one', '  extra continuation line two', 'Port = 22', '']
    body = '\n'.join(parts).encode()
    view = _check(engine, body, ini_load)
    assert view is not None
    original = ini_load(body.decode())
    for section, options in view.items():
        for k, v in options.items(): assert original[section][k] == v


def test_yaml_value_text_at_column_zero_keeps_its_parents(engine):
    "A quoted value whose second line starts at column 0 with `key:` text: it is no top-level key, and the value stays with its own item."
    parts = ['spec:']
    for i in range(12):
        parts += [f'  item{i}:', f'    name: svc{i}', f'    replicas: {i}', f'    image: nginx:{i}', f'    msg: "hello {i}', 'world: col zero', '      end"', f'    port: {8000 + i}']
    body = '\n'.join(parts).encode()
    view = _check(engine, body, yaml.safe_load)
    assert view is not None
    original = yaml.safe_load(body)
    for name, item in view['spec'].items():
        for k, v in item.items(): assert original['spec'][name][k] == v


def test_toml_header_inside_a_string_is_no_header(engine):
    tables = []
    for t in range(3):
        tables += ['[[server]]', *[f'a{i} = {i}' for i in range(20)]]
        if t == 1: tables += ['a99 = """', '[fake]', 'text', '"""', 'token = "abc"']
    body = '\n'.join(tables).encode()
    view = _check(engine, body, tomllib.loads)
    assert view is not None
    original = tomllib.loads(body.decode())['server']
    assert len(view['server']) == 3                                             # every [[server]] header is still there
    for shown, was in zip(view['server'], original):
        for k, v in shown.items(): assert was[k] == v


@pytest.mark.parametrize('between', ['', '# a comment inside the value'])
def test_ini_value_with_blank_or_comment_lines(engine, between):
    parts = ['[a]', *[f'x{i} = {i}' for i in range(20)], 'secret_hosts =', '    host0', between, *[f'    host{i}' for i in range(1, 25)],
             '[b]', *[f'y{i} = {i}' for i in range(10)]]
    body = '\n'.join(parts).encode()
    view = _check(engine, body, ini_load)
    assert view is not None
    shown = engine.compress(body).output.decode().count('    host')
    assert shown in (0, 25)                                                     # the value is shown whole or not at all
    if shown: assert view['a']['secret_hosts'] == ini_load(body.decode())['a']['secret_hosts']


def test_yaml_keep_chomping_keeps_trailing_blank_lines(engine):
    body = '\n'.join(['top:', *[f'  k{i}: {i}' for i in range(10)], '  script: |+', '    echo one', '    echo two', '', '', '',
                      *[f'  j{i}: {i}' for i in range(13)]]).encode()
    view = _check(engine, body, yaml.safe_load)
    assert view is not None and view['top']['script'] == 'echo one\necho two\n\n\n\n'


def test_stack_traces_are_not_config():
    traces = b''.join(b'TypeError: Cannot read properties of undefined (reading "id")\n    at handler (/app/src/routes.js:%d:7)\n'
                      b'    at next (/app/node_modules/express/lib/router/route.js:149:13)\n' % i for i in range(40))
    assert detect(traces) == 'text'
