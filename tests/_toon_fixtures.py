"""The official TOON conformance fixtures as test cases, shared by the library and CLI conformance tests.

Loading (numbers kept as exact decimals, the v3 option `indent` read as v4's `indentSize`), the
comparison of v3.3.2 cases with v4.0.0 (same category, input and options), and exact JSON comparison.
None of it uses caveman's own conformance runner, so the tests check that runner too.
"""
import json
from decimal import Decimal

from caveman.toon import conformance_dir

ROOT = conformance_dir()
REMOVED_IN_V4 = {'keyFolding', 'flattenDepth', 'expandPaths'}      # options v4 no longer has
CHANGED_IN_V4 = {('v3.3.2', 'encode/arrays-objects.json', 1)}       # v4 writes a nested field group instead


def load(version: str) -> list[dict]:
    "Every case of one spec version ('v4.0.0', 'v3.3.2'): dicts with version, file, index, category, test, options."
    cases = []
    for f in sorted((ROOT / f'spec-{version}' / 'tests' / 'fixtures').glob('*/*.json')):
        doc = json.loads(f.read_text(encoding='utf-8'), parse_float=Decimal)
        assert doc['category'] == f.parent.name
        for i, t in enumerate(doc['tests']):
            opts = dict(t.get('options') or {})
            if 'indent' in opts: opts['indentSize'] = opts.pop('indent')  # renamed in v4
            cases.append(dict(version=version, file=f'{f.parent.name}/{f.name}', index=i, category=doc['category'], test=t, options=opts))
    return cases


def dump(v) -> str:
    "A fixture value as compact JSON text, decimals digit for digit and key order kept."
    if isinstance(v, Decimal): return str(v)
    if isinstance(v, dict): return '{' + ','.join(json.dumps(k) + ':' + dump(x) for k, x in v.items()) + '}'
    if isinstance(v, list): return '[' + ','.join(map(dump, v)) + ']'
    return json.dumps(v)


def tagged(v, ordered=True):
    "A JSON value as nested tuples that compare by JSON type: bool is not a number, numbers compare as exact decimals; object key order counts if `ordered`."
    if isinstance(v, bool): return ('bool', v)
    if v is None: return ('null',)
    if isinstance(v, (int, Decimal)): return ('num', Decimal(v))
    if isinstance(v, float): return ('num', Decimal(repr(v)))
    if isinstance(v, str): return ('str', v)
    if isinstance(v, list): return ('arr', tuple(tagged(x, ordered) for x in v))
    if isinstance(v, dict):
        members = [(k, tagged(x, ordered)) for k, x in v.items()]
        return ('obj', tuple(members if ordered else sorted(members, key=lambda m: m[0])))
    raise TypeError(type(v))


def signature(c) -> str: return json.dumps([c['category'], dump(c['test']['input']), sorted(c['options'].items())])
def outcome(c) -> str: return 'error' if c['test'].get('shouldError') else dump(c['test']['expected'])
def optional(c) -> bool: return c['options'].get('strict') is False          # lenient mode (spec §14.4)
def case_id(c) -> str: return f"{c['file']}#{c['index']}"


V4, V3 = load('v4.0.0'), load('v3.3.2')
V4_OUTCOMES = {}
for _c in V4: V4_OUTCOMES.setdefault(signature(_c), set()).add(outcome(_c))


def v3_status(c) -> str:
    "How v4 treats a v3.3.2 case: 'removed' (an option v4 dropped), 'changed', 'absent' (no v4 twin), 'kept' or 'contradicted'."
    if set(c['options']) & REMOVED_IN_V4: return 'removed'
    if (c['version'], c['file'], c['index']) in CHANGED_IN_V4: return 'changed'
    known = V4_OUTCOMES.get(signature(c))
    if known is None: return 'absent'
    return 'kept' if outcome(c) in known else 'contradicted'
