"""Invariant checks for the toolschema compressor, shared by the catalog and property tests.

Each check takes the original catalog bytes and the compressed bytes and returns a list of
violations (empty = holds), so a failing test names every broken path at once. The checks use
JSON Schema structure (which keys are keywords, which are user names) but none of the
compressor's code.
"""
import json
from urllib.parse import unquote

import regex

from jsonschema.validators import validator_for, Draft202012Validator

from caveman.toolschema import extract_tools, selection_profile

SCHEMA_KEYS = ('inputSchema', 'input_schema', 'parameters', 'outputSchema')
NAME_MAPS = {'properties', '$defs', 'definitions', 'patternProperties', 'dependentSchemas', 'dependentRequired', 'dependencies'}
DATA_KEYWORDS = {'enum', 'required', 'default', 'const'}            # values are data, not schemas
ANNOTATIONS = {'examples', 'example', '$comment', 'title', '$schema'}  # the only keywords allowed to go
CHECKED = {'enum', 'required', 'default', 'const', 'type', '$ref'}    # must be unchanged at their path


def schema_objects(schema, path=()):
    "Yield `(path, object)` for every schema object in `schema` (keyword positions, not data or user-name maps themselves)."
    if isinstance(schema, list):
        for i, v in enumerate(schema): yield from schema_objects(v, path + (i,))
        return
    if not isinstance(schema, dict): return
    yield path, schema
    for k, v in schema.items():
        if k in DATA_KEYWORDS or k in ANNOTATIONS: continue
        if k in NAME_MAPS and isinstance(v, dict):
            for name, sub in v.items(): yield from schema_objects(sub, path + (k, name))
        elif isinstance(v, (dict, list)): yield from schema_objects(v, path + (k,))


def at(node, path):
    "The value at `path` (a tuple of keys and indices), or KeyError."
    for p in path:
        if isinstance(node, list) and isinstance(p, int) and p < len(node): node = node[p]
        elif isinstance(node, dict) and p in node: node = node[p]
        else: raise KeyError(path)
    return node


def resolve(root, ref: str):
    "Follow a local `$ref` (`#` or `#/json/pointer`, percent- and `~`-escaped) in `root`; KeyError if it does not resolve."
    if ref == '#': return root
    node = root
    for tok in ref[2:].split('/'):
        tok = unquote(tok).replace('~1', '/').replace('~0', '~')
        if isinstance(node, list) and tok.isdigit() and int(tok) < len(node): node = node[int(tok)]
        elif isinstance(node, dict) and tok in node: node = node[tok]
        else: raise KeyError(ref)
    return node


def resolved_refs(catalog_doc) -> int:
    "Resolve every `$ref` of every tool schema in a parsed catalog against its own schema (raises when one does not resolve); returns how many there were."
    refs = 0
    for tool in extract_tools(catalog_doc):
        for _, schema in tool_schemas(tool):
            stack = [schema]
            while stack:
                node = stack.pop()
                if isinstance(node, dict):
                    if isinstance(node.get('$ref'), str):
                        resolve(schema, node['$ref']); refs += 1
                    stack += node.values()
                elif isinstance(node, list): stack += node
    return refs


def tool_schemas(tool):
    "`(key, schema)` for each schema a tool carries."
    return [(k, tool[k]) for k in SCHEMA_KEYS if k in tool]


def check_catalog(original: bytes, compressed: bytes) -> list[str]:
    "Every invariant the compressor promises, as a list of violations."
    bad = []
    try: out_doc = json.loads(compressed)
    except ValueError as e: return [f'output is not valid JSON: {e}']
    if selection_profile(original) != selection_profile(compressed): bad.append('selection profile changed')
    before, after = extract_tools(json.loads(original)), extract_tools(out_doc)
    if [t['name'] for t in before] != [t['name'] for t in after]: return bad + ['tool names or order changed']
    for t0, t1 in zip(before, after):
        name = t0['name']
        if set(t0) != set(t1): bad.append(f'{name}: envelope keys changed {sorted(set(t0) ^ set(t1))}')
        for k in t0:
            if k in SCHEMA_KEYS or k == 'description': continue
            if json.dumps(t0[k]) != json.dumps(t1.get(k)): bad.append(f'{name}: envelope member {k} changed')  # annotations byte-identical
        for key, s0 in tool_schemas(t0):
            s1 = t1[key]
            bad += [f'{name}.{key}: {v}' for v in check_schema(s0, s1, name)]
    return bad


_STOP_WORDS = set('a an the of to for in on at by is are be it its this that which with and or as from your you if any can will'.split())
_TYPE_SYNONYMS = {'boolean': ['whether'], 'integer': ['number'], 'array': ['list']}


def _words(text: str) -> set[str]:
    "Lower-case words of `text`, camelCase and snake_case split, stop words left out (the judge's own split)."
    parts = regex.findall(r'\p{Lu}?\p{Ll}+|\p{Lu}+(?!\p{Ll})|\p{N}+|[\p{Lo}\p{Lm}\p{Lt}\p{M}]', text)
    return {p.lower() for p in parts} - _STOP_WORDS


def _property_names_below(schema) -> set[str]:
    names, stack = set(), [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if isinstance(node.get('properties'), dict): names |= set(node['properties'])
            stack += [v for k, v in node.items() if k not in DATA_KEYWORDS]
        elif isinstance(node, list): stack += node
    return names


def _without_shape_examples(text: str, names: set[str]) -> str:
    "`text` without each `such as [...]` / `e.g. {...}` literal, and the literals joined to it by *or* / *and* / a comma, whose keys are all in `names` (the shape the schema states)."
    def literal(i):   # (end, keys) of the bracketed literal at text[i]
        depth, j = 0, i
        while j < len(text):
            depth += (text[j] in '[{') - (text[j] in ']}')
            j += 1
            if depth == 0: break
        return j, regex.findall(r'["\']?([A-Za-z_]\w*)["\']?\s*:', text[i:j])
    for m in reversed(list(regex.finditer(r'(?:such\s+as|e\.g\.|for\s+example)\s*[:,]?\s*(?=[\[{])', text, regex.I))):
        j, keys = literal(m.end())
        shapes = bool(keys) and set(keys) <= names
        while shapes and (alt := regex.match(r'\s*,?\s*(?:(?:or|and)\s*)?(?=[\[{])', text[j:], regex.I)):
            j, keys = literal(j + alt.end())
            shapes = bool(keys) and set(keys) <= names
        if shapes: text = text[:m.start()] + text[j:]
    return text


def only_restates_name(description, name: str, tool: str, schema: dict, required: bool | None = None) -> bool:
    "Whether a removed property `description` said nothing but the property name, the tool name, the property's type, and what its schema states: *optional* / *required* as `required` says, its `default`, its `enum` values (or was empty)."
    if not isinstance(description, str): return False
    types = schema.get('type') if isinstance(schema.get('type'), list) else [schema.get('type')]
    known = _words(f'{name} {tool}') | {'set', 'sets', 'specify', 'specifies'}
    if required is False: known.add('optional')
    if required is True: known.add('required')
    if 'default' in schema: known |= {'default', 'defaults', 'value'} | _words(json.dumps(schema['default']))
    if isinstance(schema.get('enum'), list): known |= {'can', 'be', 'one', 'either', 'possible', 'allowed', 'valid', 'values', 'value'} | _words(json.dumps(schema['enum']))
    for t in types:
        if isinstance(t, str): known |= {t, *_TYPE_SYNONYMS.get(t, [])}
    def inflects(w: str) -> bool:   # an English plural of a known word, or the singular of one (entity / entities)
        forms = {w + 's', w + 'es', w[:-1] + 'ies' if w.endswith('y') else w,
                 w[:-1] if w.endswith('s') else w, w[:-2] if w.endswith('es') else w, w[:-3] + 'y' if w.endswith('ies') else w}
        return bool(forms & known)
    return all(w in known or inflects(w) for w in _words(_without_shape_examples(description, _property_names_below(schema))))


def constrains_nothing(key: str, value) -> bool:
    """Whether a keyword, as the original spelled it, accepts every instance and yields no annotation, so it may go (the
    judge's own reading of JSON Schema validation §6): an empty `required` or `dependentRequired`, a zero `minItems` /
    `minLength` / `minProperties`, `uniqueItems: false`, and a `propertyNames` that every string passes (member names are
    strings) and that says nothing else (no description)."""
    if key in ('required',): return value == [] and isinstance(value, list)
    if key == 'dependentRequired': return value == {} and isinstance(value, dict)
    if key in ('minItems', 'minLength', 'minProperties'): return type(value) in (int, float) and value == 0
    if key == 'uniqueItems': return value is False
    if key == 'propertyNames':
        if value is True: return True
        return isinstance(value, dict) and set(value) - ANNOTATIONS <= {'type'} and value.get('type', 'string') == 'string'
    return False


def _inside_dropped_keyword(s0, s1, path) -> bool:
    "Whether `path` lies inside a keyword of `s0` that constrained nothing and is gone from `s1`."
    for i, key in enumerate(path):
        try: p0, p1 = at(s0, path[:i]), at(s1, path[:i])
        except KeyError: return False
        if isinstance(p0, dict) and isinstance(p1, dict) and key in p0 and key not in p1 and constrains_nothing(key, p0[key]): return True
    return False


def check_schema(s0, s1, tool: str = '') -> list[str]:
    "Keywords unchanged at their paths, only annotations and keywords that constrain nothing removed (a property's `description` only where it restated the names), key order kept, every `$ref` resolves."
    bad = []
    for path, obj in schema_objects(s0):
        try: new = at(s1, path)
        except KeyError:
            if not _inside_dropped_keyword(s0, s1, path): bad.append(f'schema object {path} missing')
            continue
        if not isinstance(new, dict): bad.append(f'{path} is no longer an object'); continue
        removed = set(obj) - set(new)
        if 'description' in removed and len(path) >= 2 and path[-2] == 'properties':
            parent = at(s0, path[:-2])
            req = parent.get('required') if isinstance(parent, dict) and isinstance(parent.get('required'), list) else []
            conditional = isinstance(parent, dict) and bool({'anyOf', 'oneOf', 'allOf', 'not', 'if', 'dependentRequired', 'dependencies'} & set(parent))
            if only_restates_name(obj['description'], path[-1], tool, obj, True if path[-1] in req else None if conditional else False):
                removed.discard('description')
        removed -= {k for k in removed if constrains_nothing(k, obj[k])}
        if removed - ANNOTATIONS: bad.append(f'{path}: non-annotation keys removed {sorted(removed - ANNOTATIONS)}')
        if set(new) - set(obj): bad.append(f'{path}: keys added {sorted(set(new) - set(obj))}')
        if [k for k in obj if k in new] != list(new): bad.append(f'{path}: key order changed')
        for k in CHECKED & set(obj):
            if k not in new and constrains_nothing(k, obj[k]): continue
            if new.get(k, object()) != obj[k]: bad.append(f'{path + (k,)} changed')
        if isinstance(obj.get('$ref'), str) and obj['$ref'].startswith('#'):
            try: resolve(s0, obj['$ref'])
            except KeyError: continue  # did not resolve before either: nothing to keep
            try: resolve(s1, obj['$ref'])
            except KeyError: bad.append(f'{path}: $ref {obj["$ref"]} no longer resolves')
    return bad


# ---- validation equivalence -------------------------------------------------------------------

PROBES = [None, True, False, 0, -1, 1, 2.5, 101, 10 ** 6, '', 'a', 'x' * 300, '2024-01-15T14:30:25Z', '/srv/x',
          [], ['a'], [1, 2], {}, {'a': 1}]


def _follow(schema, root, depth):
    while isinstance(schema, dict) and isinstance(schema.get('$ref'), str) and schema['$ref'].startswith('#') and depth < 8:
        try: schema = resolve(root, schema['$ref'])
        except KeyError: return schema
        depth += 1
    return schema


def sample(schema, root, depth=0):
    "One instance that aims to satisfy `schema` (a guess: validity is decided by the validator, not here)."
    schema = _follow(schema, root, depth)
    if not isinstance(schema, dict) or depth > 6: return 'a'
    if 'const' in schema: return schema['const']
    if isinstance(schema.get('enum'), list) and schema['enum']: return schema['enum'][0]
    for comb in ('anyOf', 'oneOf', 'allOf'):
        if isinstance(schema.get(comb), list) and schema[comb]: return sample(schema[comb][0], root, depth + 1)
    t = schema.get('type')
    if isinstance(t, list): t = t[0] if t else None
    if t == 'object' or (t is None and isinstance(schema.get('properties'), dict)):
        props = schema.get('properties') if isinstance(schema.get('properties'), dict) else {}
        req = schema.get('required') if isinstance(schema.get('required'), list) else []
        return {p: sample(s, root, depth + 1) for p, s in props.items() if p in req or depth < 2}
    if t == 'array':
        item = sample(schema['items'], root, depth + 1) if isinstance(schema.get('items'), dict) else 'a'
        n = schema.get('minItems', 1) if isinstance(schema.get('minItems'), int) else 1
        return [item] * max(1, min(n, 5))
    if t in ('integer', 'number'):
        v = 1
        if isinstance(schema.get('minimum'), (int, float)) and not isinstance(schema['minimum'], bool): v = max(v, schema['minimum'])
        if isinstance(schema.get('maximum'), (int, float)) and not isinstance(schema['maximum'], bool): v = min(v, schema['maximum'])
        return v
    if t == 'boolean': return True
    if t == 'null': return None
    n = schema.get('minLength', 1) if isinstance(schema.get('minLength'), int) else 1
    return 'a' * max(1, min(n, 50))


def candidates(schema, root=None, depth=0) -> list:
    "A deterministic mix of instances for `schema`: a valid-looking sample, every probe value, and per property the sample with that property removed, replaced (recursively) or joined by an unknown one."
    root = schema if root is None else root
    base = sample(schema, root, depth)
    out = [base, *PROBES]
    schema = _follow(schema, root, depth)
    if isinstance(base, dict) and isinstance(schema, dict) and isinstance(schema.get('properties'), dict) and depth < 3:
        for p, sub in schema['properties'].items():
            for v in (candidates(sub, root, depth + 1) if depth < 2 else PROBES): out.append({**base, p: v})
            out.append({k: v for k, v in base.items() if k != p})
        out.append({**base, 'zz_unknown_arg': 1})
    if isinstance(base, list) and base and isinstance(schema, dict) and isinstance(schema.get('items'), dict) and depth < 3:
        out += [[v] for v in candidates(schema['items'], root, depth + 1)]
    return out


def validation_differences(s0, s1) -> tuple[list[str], int, int]:
    """Instances from both schemas on which `s0` and `s1` disagree, plus the counts of valid and invalid instances seen.
    `s0` is judged by its own dialect (`$schema`, default 2020-12); `s1` by that same dialect and by its own (it may have lost `$schema`)."""
    if not isinstance(s0, dict) or not isinstance(s1, dict): return [], 0, 0
    cls0 = validator_for(s0, default=Draft202012Validator)
    v0, v1, v1own = cls0(s0), cls0(s1), validator_for(s1, default=Draft202012Validator)(s1)
    diffs, valid, invalid = [], 0, 0
    seen = set()
    for x in candidates(s0) + candidates(s1):
        key = json.dumps(x, sort_keys=True)
        if key in seen: continue
        seen.add(key)
        a, b, c = v0.is_valid(x), v1.is_valid(x), v1own.is_valid(x)
        valid += a; invalid += not a
        if not (a == b == c): diffs.append(f'{key[:120]}: original {a}, compressed {b} / own dialect {c}')
    return diffs, valid, invalid


def catalog_validation_differences(original: bytes, compressed: bytes) -> tuple[list[str], int, int]:
    "`validation_differences` over every tool schema of two catalogs (parsed JSON bytes), tool by tool: (differences named by tool and key, valid count, invalid count)."
    diffs, valid, invalid = [], 0, 0
    for t0, t1 in zip(extract_tools(json.loads(original)), extract_tools(json.loads(compressed))):
        for (key, s0), (_, s1) in zip(tool_schemas(t0), tool_schemas(t1)):
            d, v, i = validation_differences(s0, s1)
            diffs += [f"{t0['name']}.{key}: {m}" for m in d]; valid += v; invalid += i
    return diffs, valid, invalid
