"""An independent checker of every claim a caveman view makes about its original.

`false_claims(original, view, content_type)` returns human-readable problems ([] when every claim holds):
every elision marker of the view (line markers of every content type, JSON markers at any depth, CSV/markdown
marker rows) is placed against the ORIGINAL with this module's own code, its count of elided units is checked
where the units can be placed, and every claim of its invariant summary is recomputed from every field of every
elided unit. Nothing here imports from `caveman.compressors` or `caveman.report`: the grammar (notebook
`10_compressors_base`, "The invariant grammar"), the field extraction and the alignment are re-implemented.

The grammar read here: an invariant summary is sections joined by `; ` (outside string literals):
  all K=V K=V ...                      constants
  K: V×c V×c absent×c                  enumeration (counts sum to the run)
  K: N distinct[, LO..HI][, absent×c]  bounded coverage (LO..HI only over finite numbers or ISO-8601 times)
  K: LO..HI all N present              dense coverage (a common prefix, equal-width digit suffixes, no gaps)
  range K=LO..HI K=LO..HI              numeric / time range
  signals×N first=S                    N signal units hidden; S = the first one's text (<= 100 chars, `…` if cut)
Keys are bare (`[A-Za-z_][A-Za-z0-9_-]*`) or JSON string literals; values are JSON literals (`absent` = missing).
Fields of a unit: a JSON record's members (scalars by JSON type; objects/arrays are present but not scalar);
a log line's JSON object or its logfmt `key=value` pairs (text; empty values are absent); a table row's cells
by column position (text; empty cells are absent). A name occurring twice in one unit (log key, table column)
cannot be the subject of a claim. Config `same as <path>` claims are recognised and not checked here.
"""
import csv, io, json, posixpath, re
from datetime import datetime, timezone
from decimal import Decimal, InvalidOperation

ELL = '\u2026'
MARKER, INV, NOTE = '__caveman_elided__', '__caveman_invariants__', '__caveman_note__'
CONTRACT = ELL + ' caveman: elided '
NUL_NOTE = ELL + ' caveman: the original separates its records with NUL bytes'
LINE_MARKER = re.compile(ELL + r' (\d+) ([a-z][a-z ]*?) elided \(caveman\)(?:: (.*?))? ' + ELL)
CREDENTIAL = re.compile(r'secret|passw|token|api[-_]?key|authoriz|credential|cookie|session', re.I)

# ---------------------------------------------------------------------------------------------------------
# typed values: ('str', text) | ('num', spelling) | ('bool', 'true'/'false') | ('null', 'null') | NESTED | DUP

NESTED, DUP = ('nested', ''), ('dup', '')


class _Num(str):
    "A JSON number as it was spelled."


def _no_constant(s): raise ValueError(f'{s} is not JSON')


def _pairs_hook(pairs):
    d = {}
    for k, v in pairs:
        if k in d: d[k] = DupValue(d[k], v)   # last wins for the value, remembered as duplicated
        else: d[k] = v
    return d


class DupValue:
    "A member whose name occurs more than once in its object (JSON readers keep the last)."
    def __init__(self, first, last): self.last = last.last if isinstance(last, DupValue) else last


def parse_json(text: str):
    "One JSON value with numbers kept as spelled and duplicate member names remembered; raises ValueError."
    return json.loads(text, parse_int=_Num, parse_float=_Num, parse_constant=_no_constant, object_pairs_hook=_pairs_hook)


def _plain(v):
    return v.last if isinstance(v, DupValue) else v


def typed(v) -> tuple:
    "The typed value of a parsed JSON member."
    v = _plain(v)
    if isinstance(v, _Num): return ('num', str(v))
    if v is True: return ('bool', 'true')
    if v is False: return ('bool', 'false')
    if v is None: return ('null', 'null')
    if isinstance(v, str): return ('str', v)
    return NESTED


def show(t: tuple) -> str:
    if t[0] == 'str': return json.dumps(t[1], ensure_ascii=False)
    if t[0] == 'absent': return 'absent'
    return t[1] or t[0]

# ---------------------------------------------------------------------------------------------------------
# fields of one unit


def record_fields(obj) -> dict:
    "Fields of a JSON record: every member by name (a non-object record has none)."
    if not isinstance(obj, dict): return {}
    return {k: typed(v) for k, v in obj.items()}


_KEY_START = re.compile(r'[A-Za-z_]')


def logfmt_pairs(line: str) -> list[tuple[str, str]]:
    "logfmt pairs: a key starts the line or follows white space or one of `,[{(`; value quoted, or bare up to white space or `,]})` taking whole bracket groups (`[]`, `[1,2]`: no blank or bracket inside); a bare value whose group is cut short gives no pair."
    out, i, n = [], 0, len(line)
    while i < n:
        if (i == 0 or line[i - 1].isspace() or line[i - 1] in ',[{(') and line[i].isascii() and _KEY_START.match(line[i]):
            j = i + 1
            while j < n and line[j].isascii() and (line[j].isalnum() or line[j] in '_.-'): j += 1
            if j < n and line[j] == '=':
                k, j = line[i:j], j + 1
                if j < n and line[j] in '"\'':
                    q = line[j]; e = line.find(q, j + 1)
                    if e >= 0: out.append((k, line[j + 1:e])); i = e + 1; continue
                    # an unclosed quote: the value is bare text from the quote on
                e, whole = j, True
                while e < n and not line[e].isspace() and line[e] not in ',]})':
                    if line[e] in '[{(':                         # a bracket group is part of the value: `sa_mask=[]`
                        close, g = ']})'['[{('.index(line[e])], e + 1
                        while g < n and not line[g].isspace() and line[g] not in '[]{}()': g += 1
                        if g < n and line[g] == close: e = g + 1; continue
                        whole = False; break                     # a group cut short: the pair gives no field
                    e += 1
                if whole: out.append((k, line[j:e])); i = e
                else: i = j
                continue
            i = j; continue
        i += 1
    return out


def text_fields(pairs) -> dict:
    "Fields of a text record from `(name, text)` pairs: empty text is absent, a repeated name is DUP."
    out, seen = {}, set()
    for k, v in pairs:
        if k in seen: out[k] = DUP; continue
        seen.add(k)
        if v != '': out[k] = ('str', v)
    return out


def log_line_fields(line: str) -> dict:
    s = line.strip()
    if s[:1] == '{' and s[-1:] == '}':
        try: obj = parse_json(s)
        except (ValueError, RecursionError): obj = None
        if isinstance(obj, dict) and any(typed(v) != NESTED for v in obj.values()): return record_fields(obj)
    return text_fields(logfmt_pairs(line))


def row_record(header: list[str], cells: list[str]) -> dict:
    "Fields of a table row by column position; names trimmed, cells as they are (white space in a CSV cell is part of its value; a markdown cell comes trimmed by its reader); a name used by two columns is DUP."
    names = [h.strip() for h in header]
    pairs = [(names[i], cells[i] if i < len(cells) else '') for i in range(len(names)) if names[i]]
    return text_fields(pairs)

# ---------------------------------------------------------------------------------------------------------
# the grammar

_BARE_KEY = re.compile(r'[A-Za-z_][A-Za-z0-9_-]*')
_STR = re.compile(r'"(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"')
_NUMLIT = re.compile(r'-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?')
_WORD = re.compile(r'true|false|null|absent')
_INT = re.compile(r'[0-9]+')


class GrammarError(ValueError):
    pass


class _P:
    def __init__(self, s: str): self.s, self.i = s, 0

    def at(self, lit: str) -> bool: return self.s.startswith(lit, self.i)

    def eat(self, lit: str):
        if not self.at(lit): raise GrammarError(f'expected {lit!r} at {self.i} in {self.s!r}')
        self.i += len(lit)

    def end(self) -> bool: return self.i >= len(self.s) or self.at('; ')

    def key(self) -> str:
        if self.at('"'):
            m = _STR.match(self.s, self.i)
            if not m: raise GrammarError(f'bad key string at {self.i} in {self.s!r}')
            self.i = m.end(); k = json.loads(m[0])
            if _BARE_KEY.fullmatch(k): raise GrammarError(f'key {k!r} should be bare')
            return k
        m = _BARE_KEY.match(self.s, self.i)
        if not m: raise GrammarError(f'expected a key at {self.i} in {self.s!r}')
        self.i = m.end(); return m[0]

    def value(self, absent_ok: bool = False) -> tuple:
        if self.at('"'):
            m = _STR.match(self.s, self.i)
            if not m: raise GrammarError(f'bad string literal at {self.i} in {self.s!r}')
            self.i = m.end(); return ('str', json.loads(m[0]))
        if m := _WORD.match(self.s, self.i):
            if m[0] == 'absent' and not absent_ok: raise GrammarError(f'absent not allowed at {self.i} in {self.s!r}')
            self.i = m.end()
            return {'true': ('bool', 'true'), 'false': ('bool', 'false'), 'null': ('null', 'null'), 'absent': ('absent', '')}[m[0]]
        if m := _NUMLIT.match(self.s, self.i):
            self.i = m.end(); return ('num', m[0])
        raise GrammarError(f'expected a value at {self.i} in {self.s!r}')

    def int(self) -> int:
        m = _INT.match(self.s, self.i)
        if not m: raise GrammarError(f'expected a count at {self.i} in {self.s!r}')
        self.i = m.end(); return int(m[0])


def parse_summary(summary: str) -> list[dict]:
    "The claims of an invariant summary (list of dicts with 'kind', 'field', ...); raises GrammarError when it is not the grammar."
    p, claims = _P(summary), []
    if not summary: return claims
    while True:
        if p.at('same as '):                         # config: a pointer to an identical kept block; the rest is its path
            claims.append({'kind': 'same', 'text': summary[p.i:]}); p.i = len(summary)
        elif p.at('all '):
            p.eat('all ')
            while True:
                k = p.key(); p.eat('='); claims.append({'kind': 'const', 'field': k, 'value': p.value()})
                if p.end(): break
                p.eat(' ')
        elif p.at('range '):
            p.eat('range ')
            while True:
                k = p.key(); p.eat('='); lo = p.value(); p.eat('..'); hi = p.value()
                claims.append({'kind': 'range', 'field': k, 'low': lo, 'high': hi})
                if p.end(): break
                p.eat(' ')
        elif p.at('signals×'):
            p.eat('signals×'); n = p.int(); p.eat(' first='); s = p.value()
            if s[0] != 'str': raise GrammarError(f'signals first= must be a string in {summary!r}')
            claims.append({'kind': 'signals', 'count': n, 'first': s[1]})
        else:
            k = p.key(); p.eat(': ')
            save = p.i
            m = _INT.match(summary, p.i)
            if m and summary.startswith(' distinct', m.end()):
                p.i = m.end() + len(' distinct'); c = {'kind': 'bounded', 'field': k, 'distinct': int(m[0]), 'absent': 0}
                if p.at(', ') and not p.at(', absent×'):
                    p.eat(', '); c['low'] = p.value(); p.eat('..'); c['high'] = p.value()
                if p.at(', absent×'): p.eat(', absent×'); c['absent'] = p.int()
                claims.append(c)
            else:
                v = p.value(absent_ok=True)
                if p.at('..'):
                    p.eat('..'); hi = p.value(); p.eat(' all '); n = p.int(); p.eat(' present')
                    claims.append({'kind': 'dense', 'field': k, 'low': v, 'high': hi, 'distinct': n})
                else:
                    p.i = save; counts = []
                    while True:
                        v = p.value(absent_ok=True); p.eat('×'); counts.append((v, p.int()))
                        if p.end(): break
                        p.eat(' ')
                    claims.append({'kind': 'enum', 'field': k, 'counts': counts})
        if p.i >= len(summary): return claims
        p.eat('; ')

# ---------------------------------------------------------------------------------------------------------
# checking claims against units


def finite_number(t: tuple):
    "The exact value of a finite decimal number (JSON number, or text spelling one), else None."
    if t[0] not in ('num', 'str'): return None
    s = t[1]
    if t[0] == 'str' and not re.fullmatch(r'[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?', s): return None
    try: d = Decimal(s)
    except InvalidOperation: return None
    return d if d.is_finite() else None


_ISO = re.compile(r'\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|z|[+-]\d{2}(?::?\d{2})?)?)?')


def iso_time(t: tuple):
    "An ISO-8601 timestamp string as (aware?, datetime), else None."
    if t[0] != 'str' or not _ISO.fullmatch(t[1]): return None
    s = t[1].replace(',', '.')
    if s[-1:] in 'Zz': s = s[:-1] + '+00:00'
    m = re.search(r'([+-]\d{2})(\d{2})$', s)
    if m and 'T' in s or m and ' ' in s: s = s[:m.start()] + m[1] + ':' + m[2]
    m = re.search(r'\.(\d+)', s)
    if m and len(m[1]) != 6: s = s[:m.start()] + '.' + (m[1] + '000000')[:6] + s[m.end():]
    try: d = datetime.fromisoformat(s)
    except ValueError: return None
    return d


def _order_keys(values: list[tuple]):
    "Sort keys of `values` when all are finite numbers or all ISO-8601 times of one kind (aware or naive), else None."
    nums = [finite_number(v) for v in values]
    if all(x is not None for x in nums):
        if len({v[0] for v in values}) == 1: return nums
    times = [iso_time(v) for v in values]
    if all(x is not None for x in times):
        kinds = {x.tzinfo is not None for x in times}
        if len(kinds) == 1: return times
    return None


def _dense_set(lo: tuple, hi: tuple, n: int):
    if lo[0] != hi[0] or lo[0] not in ('str', 'num'): return None
    a, b = lo[1], hi[1]
    pa, pb = a.rstrip('0123456789'), b.rstrip('0123456789')
    da, db = a[len(pa):], b[len(pb):]
    if pa != pb or not da or len(da) != len(db): return None
    x, y = int(da), int(db)
    if y - x + 1 != n or n > 100000: return None
    return {(lo[0], pa + str(k).zfill(len(da))) for k in range(x, y + 1)}


CHECKED: dict[str, int] = {}   # claim kind -> claims checked so far (tests assert the checker was not vacuous)


def check_claim(c: dict, units: list[dict], what: str) -> list[str]:
    "Problems with one claim over `units` (each a field dict); [] when it holds."
    kind = c['kind']
    CHECKED[kind] = CHECKED.get(kind, 0) + 1
    if kind in ('same', 'signals'): return []
    f, n = c['field'], len(units)
    bad = lambda why: [f'{what}: claim {kind} on {f!r} is false: {why}']
    if CREDENTIAL.search(f): return bad('a credential-shaped field is mentioned')
    vals = [u.get(f, ('absent', '')) for u in units]
    if any(v == DUP for v in vals): return bad('the name occurs more than once in a unit, so the claim is ambiguous')
    if any(v == NESTED for v in vals) and kind != 'bounded' and kind != 'enum':
        return bad('some unit holds an object or array there')
    if kind == 'const':
        wrong = [v for v in vals if v != c['value']]
        return bad(f'{len(wrong)} of {n} units differ, e.g. {show(wrong[0])} (claimed {show(c["value"])})') if wrong else []
    if kind == 'range':
        keys = _order_keys(vals)
        if keys is None: return bad(f'values are not all finite numbers / ISO-8601 times of one type: e.g. {[show(v) for v in vals[:4]]}')
        lo, hi = c['low'], c['high']
        if lo not in vals or hi not in vals: return bad(f'an endpoint {show(lo)}..{show(hi)} is not a value of the run')
        klo, khi = keys[vals.index(lo)], keys[vals.index(hi)]
        if klo != min(keys) or khi != max(keys): return bad(f'{show(lo)}..{show(hi)} are not the extremes')
        return []
    if kind == 'enum':
        tally = {}
        for v in vals:
            if v == NESTED: return bad('some unit holds an object or array there')
            tally[v] = tally.get(v, 0) + 1
        claimed = {}
        for v, k in c['counts']: claimed[v] = claimed.get(v, 0) + k
        if claimed != tally:
            diff = {show(v): (claimed.get(v, 0), tally.get(v, 0)) for v in set(claimed) | set(tally) if claimed.get(v, 0) != tally.get(v, 0)}
            return bad(f'claimed vs true counts {dict(list(diff.items())[:4])}')
        return []
    present = [v for v in vals if v[0] != 'absent']
    if kind == 'bounded':
        if any(v == NESTED for v in present): return bad('some unit holds an object or array there')
        distinct, absent = set(present), n - len(present)
        out = []
        if len(distinct) != c['distinct']: out += bad(f'{len(distinct)} distinct values, not {c["distinct"]}')
        if absent != c['absent']: out += bad(f'absent in {absent} units, not {c["absent"]}')
        if 'low' in c:
            keys = _order_keys(list(distinct))
            d = list(distinct)
            if keys is None: out += bad(f'a range is stated over values that are not all finite numbers / ISO-8601 times: {[show(v) for v in d[:4]]}')
            elif c['low'] not in distinct or c['high'] not in distinct: out += bad('an endpoint is not a value of the run')
            elif keys[d.index(c['low'])] != min(keys) or keys[d.index(c['high'])] != max(keys): out += bad('the endpoints are not the extremes')
        return out
    if kind == 'dense':
        if len(present) != n: return bad(f'absent in {n - len(present)} units')
        want = _dense_set(c['low'], c['high'], c['distinct'])
        if want is None: return bad('LO..HI do not span N equal-width values')
        return [] if set(present) == want else bad(f'the {len(set(present))} distinct values are not exactly {show(c["low"])}..{show(c["high"])}')
    return bad('unknown claim kind')


UNCHECKED: list[str] = []   # claims seen whose units' fields this checker cannot read (content types without a field rule)


def _strings(v, out: list) -> list:
    "Every member name and string value inside a parsed JSON value."
    v = _plain(v)
    if isinstance(v, dict):
        for k, x in v.items(): out.append(k); _strings(x, out)
    elif isinstance(v, list):
        for x in v: _strings(x, out)
    elif isinstance(v, str) and not isinstance(v, _Num): out.append(v)
    return out


def check_summary(summary: str, units: list[dict] | None, unit_texts: list[str] | None, what: str, json_units: list | None = None,
                  fields_elsewhere: bool = False) -> list[str]:
    "Problems of one marker's summary: grammar, then each claim over `units` (None: fields not known for this content type, see `UNCHECKED`; `fields_elsewhere`: the field claims are checked by the caller, only `signals` here)."
    try: claims = parse_summary(summary)
    except GrammarError as e: return [f'{what}: summary does not follow the grammar: {e}']
    out = []
    if units is None and unit_texts is not None and not fields_elsewhere:
        UNCHECKED.extend(f'{what}: {c["kind"]} on {c["field"]!r}' for c in claims if 'field' in c)
    for c in claims:
        if c['kind'] == 'signals':
            if unit_texts is None: continue
            if c['count'] < 1 or c['count'] > len(unit_texts): out.append(f'{what}: signals×{c["count"]} but the run has {len(unit_texts)} units')
            s = c['first']
            cut = s.endswith(ELL) and len(s) == 101
            if json_units is not None:   # a JSON unit's signal is a member (`key=value`) or a line of a string inside it
                core = s[:-1] if cut else s
                found = any(core in t or core.split('=', 1)[0] == t for u in json_units for t in _strings(u, []))
            else: found = any((t.startswith(s[:-1]) if cut else t.rstrip('\r') == s or t.strip() == s.strip()) for t in unit_texts)
            if not found:
                out.append(f'{what}: signals first={json.dumps(s, ensure_ascii=False)} is not the text of an elided unit')
        elif units is not None: out += check_claim(c, units, what)
    return out

# ---------------------------------------------------------------------------------------------------------
# JSON views: markers at any depth


def _is_marker(v) -> bool:
    return isinstance(v, dict) and MARKER in v


def _json_walk(o, v, path: str, out: list[str]):
    o, v = _plain(o), _plain(v)
    if isinstance(v, list) and isinstance(o, list):
        j = 0
        for item in v:
            item = _plain(item)
            if _is_marker(item):
                n = item[MARKER]
                if not isinstance(n, _Num) or not str(n).isdigit():
                    out.append(f'{path}[{j}]: marker count {n!r} is not a whole number'); return
                n = int(n)
                units = o[j:j + n]
                what = f'{path}[{j}:{j + n}]'
                if len(units) < n: out.append(f'{what}: marker says {n} elements, only {len(units)} remain in the original'); return
                summary = _plain(item.get(INV, ''))
                if summary:
                    if not isinstance(summary, str): out.append(f'{what}: invariants are not a string')
                    else: out.extend(check_summary(summary, [record_fields(_plain(e)) for e in units],
                                                   [json.dumps(_plain(e), ensure_ascii=False) for e in units], what, units))
                j += n
            else:
                if j < len(o): _json_walk(o[j], item, f'{path}[{j}]', out)
                j += 1
        if j != len(o): out.append(f'{path}: the view accounts for {j} elements, the original has {len(o)}')
    elif isinstance(v, dict) and isinstance(o, dict):
        if MARKER in v:   # a keyed table: the marker members stand for the original members not shown
            n = v[MARKER]
            gone = [k for k in o if k not in v]
            extra = [k for k in v if k not in o and k not in (MARKER, INV, NOTE)]
            if extra: out.append(f'{path}: members {extra[:3]} are not in the original')
            if not (isinstance(n, _Num) and str(n).isdigit() and int(n) == len(gone)):
                out.append(f'{path}: marker says {n} members elided, {len(gone)} are missing from the view')
            summary = _plain(v.get(INV, ''))
            if summary:
                units = [record_fields({'key': k, 'value': o[k]}) for k in gone]
                out.extend(check_summary(summary, units, [f'{json.dumps(k)}:{json.dumps(_plain(o[k]))}' for k in gone], path,
                                         [{k: o[k]} for k in gone]))
        for k, vv in v.items():
            if k in (MARKER, INV, NOTE): continue
            if k in o: _json_walk(o[k], vv, f'{path}.{k}', out)
    elif _is_marker(v):
        out.append(f'{path}: a marker object stands where the original has no array')
    elif isinstance(v, str) and isinstance(o, str) and not isinstance(v, _Num) and v != o and CHARS_MARKER.search(v):
        out.extend(cut_string_problems(o, v, path))


CHARS_MARKER = re.compile(ELL + r' (\d+) chars? elided \(caveman\)(?:: (.*?))? ' + ELL)


def cut_string_problems(orig: str, cut: str, path: str) -> list[str]:
    "A shortened string: kept fragments verbatim and in order, each `… N chars elided …` exactly N characters, its summary's claims true of those characters."
    out, pos, last = [], 0, 0
    for m in CHARS_MARKER.finditer(cut):
        frag = cut[last:m.start()]
        if orig[pos:pos + len(frag)] != frag:
            return out + [f'{path}: a kept fragment of a shortened string is not the original text at that place']
        pos += len(frag); n = int(m[1])
        gap = orig[pos:pos + n]
        if len(gap) != n: return out + [f'{path}: says {n} chars elided, only {len(gap)} remain']
        if m[2]:
            try: claims = parse_summary(m[2])
            except GrammarError as e: out.append(f'{path}: summary does not follow the grammar: {e}'); claims = []
            for c in claims:
                if c['kind'] != 'signals': out.append(f'{path}: a {c["kind"]} claim on a string gap'); continue
                core = c['first'][:-1] if c['first'].endswith(ELL) and len(c['first']) == 101 else c['first']
                if core not in gap: out.append(f'{path}: signals first={json.dumps(c["first"])} is not in the elided characters')
                if c['count'] < 1 or c['count'] > gap.count('\n') + 1: out.append(f'{path}: signals×{c["count"]} but the gap has fewer lines')
        pos += n; last = m.end()
    if orig[pos:] != cut[last:]: out.append(f'{path}: the end of a shortened string is not the end of the original')
    return out


def json_false_claims(original: str, view: str) -> list[str] | None:
    "Problems of a JSON view; None when either side is not one JSON value."
    try: o, v = parse_json(original), parse_json(view)
    except (ValueError, RecursionError): return None
    out = []
    _json_walk(o, v, '$', out)
    return out

# ---------------------------------------------------------------------------------------------------------
# line views


def _lines(text: str) -> list[str]:
    ls = text.split('\n')
    if ls and ls[-1] == '': ls.pop()
    return [l[:-1] if l.endswith('\r') else l for l in ls]


_FENCE = re.compile(r'( *)(`{3,}|~{3,})')


def count_sections(lines: list[str], paragraphs: bool) -> tuple[int, int]:
    "(sections, possible heading splits) in `lines`: paragraphs (non-blank runs; every non-blank line when the document has no blank line), a fenced block whole; a paragraph whose first line sits over deeper-indented lines may count as two."
    n, splits, open_, fence, indent, para = 0, 0, False, None, 0, []
    def end():
        nonlocal splits, para
        if len(para) > 1:
            d = len(para[0]) - len(para[0].lstrip(' \t'))
            if all(len(l) - len(l.lstrip(' \t')) > d for l in para[1:]): splits += 1
        para = []
    for line in lines:
        blank = not line.strip()
        if fence:
            body = line.rstrip().lstrip(' ')
            if len(line.rstrip()) - len(body) <= indent + 3 and len(body) >= len(fence) and body == fence[0] * len(body): fence = None; open_ = False
            continue
        if m := _FENCE.match(line):
            end(); n += 1; fence, indent, open_ = m[2], len(m[1]), True; continue
        if not blank:
            if not paragraphs: n += 1; continue
            if not open_: end(); n += 1; open_ = True
            para.append(line.rstrip('\r'))
        elif paragraphs: open_ = False; end()
    end()
    return n, splits


def _place_lines(o: list[str], v: list[str]):
    "Yield `(marker match, start, end)` for each line marker: the original lines between its kept neighbours (None when unplaced)."
    cur, pending = 0, None
    index = {}
    for i, l in enumerate(o): index.setdefault(l, []).append(i)

    def next_lines(seq, at, k=3):
        "The next `k` lines of `seq` after index `at` that are neither blank nor a marker or contract line."
        out = []
        for l in seq[at + 1:]:
            if len(out) == k: break
            if l.strip() and not LINE_MARKER.search(l) and CONTRACT not in l: out.append(l)
        return out

    def find(line, start, vi=None):
        "The first place of `line` in the original at or after `start`; when `line` occurs more than once there, the first whose following lines are the view's following lines."
        cands = [i for i in index.get(line, ()) if i >= start]
        if len(cands) > 1 and vi is not None:
            want = next_lines(v, vi)
            for i in cands:
                if next_lines(o, i, len(want)) == want: return i
        return cands[0] if cands else None
    for vi, line in enumerate(v):
        m = LINE_MARKER.search(line)
        if m and m[2] not in ('chars', 'char'):   # `… N chars elided (caveman) …` shortens a value inside a kept line
            if pending is not None:   # two markers in a row: the first one's count cannot be checked by placement
                yield pending, cur, None; cur += int(pending[1])
            pending = m; continue
        if line.startswith(CONTRACT) or CONTRACT in line: continue
        if pending is not None:
            n = int(pending[1])
            if pending[2] in ('sections', 'section') and not line.strip(): continue   # blank lines around a section marker
            if pending[2] in ('sections', 'section'):
                j = find(line, cur, vi)
                yield pending, cur, j; pending = None
                if j is not None: cur = j + 1
                continue
            if cur + n < len(o) and o[cur + n] == line:
                yield pending, cur, cur + n; cur += n + 1; pending = None; continue
            j = find(line, cur)
            yield pending, cur, (j if j is not None else None); pending = None
            if j is not None: cur = j + 1
            continue
        if cur < len(o) and o[cur] == line: cur += 1; continue
        j = find(line, cur)
        if j is not None: cur = j + 1
    if pending is not None: yield pending, cur, len(o)


def path_record(line: str) -> dict:
    "Fields of one line of a path listing: `dir` (its parent, `.` at the top) and `ext` (the name's extension with its dot; absent when none)."
    p = line.rstrip('\r').rstrip('/')
    return text_fields([('dir', posixpath.dirname(p) or '.'), ('ext', posixpath.splitext(posixpath.basename(p))[1])])


def _segments(run: list[str]) -> list[tuple[int, int]]:
    "Maximal stretches `[p, q)` of character positions that are not blank in every line of `run` (a position past a line's end is blank there)."
    width = max(map(len, run), default=0)
    filled = [False] * width
    for l in run:
        for p, ch in enumerate(l):
            if ch not in ' \t\r': filled[p] = True
    segs, p = [], 0
    while p < width:
        if not filled[p]: p += 1; continue
        q = p
        while q < width and filled[q]: q += 1
        segs.append((p, q)); p = q
    return segs


LS_NAMES = ('mode', 'links', 'owner', 'group', 'size', 'major', 'minor', 'month', 'day', 'time', 'year', 'date', 'zone',
            'name', 'target')
_LS_LINE = re.compile(r'[-dlcbpsD][rwxsStT-]{9}[.+@]?[ ]+\d')


def ls_row(line: str) -> dict:
    "This module's own reading of an `ls -l` row, word by word: mode links owner group, then size or `major, minor`, then month day time|year or an ISO date, time and optional zone, then the name (and a symbolic link's target after ' -> ')."
    words = line.rstrip('\r').split()
    f = dict(zip(('mode', 'links', 'owner', 'group'), words[:4]))
    k = 4
    if words[k].endswith(','): f['major'], f['minor'], k = words[k][:-1], words[k + 1], k + 2
    elif ',' in words[k] and words[k].split(',')[1]: f['major'], f['minor'], k = *words[k].split(',', 1), k + 1
    else: f['size'], k = words[k], k + 1
    if re.fullmatch(r'\d{4}-\d\d-\d\d', words[k]):
        f['date'], f['time'], k = words[k], words[k + 1], k + 2
        if re.fullmatch(r'[+-]\d{4}', words[k]): f['zone'], k = words[k], k + 1
    else:
        f['month'], f['day'] = words[k], words[k + 1]
        f['time' if ':' in words[k + 2] else 'year'] = words[k + 2]; k += 3
    rest = line.rstrip('\r')
    for w in words[:k]: rest = rest[rest.index(w) + len(w):]
    name = rest[1:] if rest.startswith(' ') else rest.lstrip(' ')
    if f['mode'][0] == 'l' and ' -> ' in name: name, f['target'] = name.split(' -> ', 1)
    f['name'] = name
    return f


def fixed_columns(field: str, run: list[str], above: list[str]) -> list[list[dict]]:
    "Candidate readings of column `field` over the elided records `run` of a fixed-width table, each a list of field dicts (one per line): every span of whole stretches (`_segments`: a column boundary is blank in every record) whose header cell in a line of `above` (the table's lines before the run) is `field` for some boundaries inside the blank stretches around it, running up to the next column with a name over it (a stretch with no header text over it belongs to the named column on its left: `COMMAND` is `/usr/bin/worker --slot 3`, not `/usr/bin/worker`; a repeated name is `name@k`); for an `ls -l` listing the `ls` column by position; for `cN` (no header) every span."
    if field in LS_NAMES and all(_LS_LINE.match(l) for l in run):
        try: return [[text_fields([(field, ls_row(l).get(field, ''))]) for l in run]]
        except (IndexError, ValueError): return []
    segs = _segments(run)
    name = field.rsplit('@', 1)[0] if re.fullmatch(r'.+@\d+', field) else field
    blank = lambda h, p: p < 0 or p >= len(h) or h[p] in ' \t'
    def headed(i, j):   # a header cell of `above` is `name` for some boundaries inside the blank stretches around segments i..j,
        los = range(segs[i - 1][1] if i else 0, segs[i][0] + 1)          # and the column ends where the next one has a name over it
        his = range(segs[j][1], (segs[j + 1][0] if j + 1 < len(segs) else max(map(len, above), default=0) + 1) + 1)
        return any(h[lo:hi].strip(' \t') == name and blank(h, lo - 1) and blank(h, hi)
                   and (j + 1 == len(segs) or h[segs[j][1]:segs[j + 1][1]].strip(' \t'))
                   for h in above for lo in los for hi in his)
    out = []
    for i in range(len(segs)):
        for j in range(i, len(segs)):
            a, b = segs[i][0], (segs[j][1] if j + 1 < len(segs) else None)
            if re.fullmatch(r'c\d+', field) or headed(i, j):
                out.append([text_fields([(field, l[a:b].strip(' \t\r'))]) for l in run])
    return out


def fixed_check(summary: str, run: list[str], above: list[str], what: str) -> list[str]:
    "Every claim of a fixed-width table marker, recomputed over the cells of the elided records: a claim holds when it holds for a column reading of `fixed_columns` (the header names the column); no reading at all is a problem."
    try: claims = parse_summary(summary)
    except GrammarError as e: return [f'{what}: summary does not follow the grammar: {e}']
    out = []
    for c in claims:
        if 'field' not in c or c['kind'] in ('same', 'signals'): continue
        readings = fixed_columns(c['field'], run, above)
        if not readings: out.append(f'{what}: no column of the table is headed {c["field"]!r}'); continue
        problems = [check_claim(c, units, what) for units in readings]
        if all(problems): out += problems[0]
    return out


COUNTED_LINE_UNITS = ('lines', 'context lines', 'added lines', 'removed lines', 'config lines', 'comment lines', 'paths', 'rows')


def line_false_claims(original: str, view: str, content_type: str) -> list[str]:
    o, v, out = _lines(original), _lines(view), []
    for m, a, b in _place_lines(o, v):
        n, unit, summary = int(m[1]), m[2] if m[2].endswith('s') else m[2] + 's', m[3] or ''   # `1 section` reads in the singular
        what = f'line marker "{m[0][:60]}"'
        if (n == 1) == m[2].endswith('s'):
            out.append(f'{what}: "{n} {m[2]}" is not English: one unit reads in the singular, any other count in the plural')
        if b is None:   # the neighbours could not be placed verbatim: only the grammar is checked
            out.extend(check_summary(summary, None, None, what)); continue
        if unit in COUNTED_LINE_UNITS and b - a != n:
            out.append(f'{what}: says {n} {unit}, {b - a} original lines stand between its neighbours'); continue
        if unit == 'sections' and content_type == 'text':
            k, splits = count_sections(o[a:b], any(not l.strip() for l in o))
            CHECKED['sections'] = CHECKED.get('sections', 0) + 1
            if not k <= n <= k + splits:
                out.append(f'{what}: says {n} sections, {k} stand between its neighbours'); continue
        run = o[a:b]
        if content_type == 'table':
            top = a
            while top > 0 and o[top - 1].strip(): top -= 1               # the table's block: back to the blank line before it
            out.extend(fixed_check(summary, run, o[top:a], what))
            out.extend(check_summary(summary, None, run, what, fields_elsewhere=True))
            continue
        else: units = [log_line_fields(l) for l in run] if content_type == 'log' else [path_record(l) for l in run] if content_type == 'listing' else None
        out.extend(check_summary(summary, units, run, what))
    return out

# ---------------------------------------------------------------------------------------------------------
# tables (CSV/TSV/markdown): rows by position


def _table(text: str):
    "(header, records, markdown, delimiter) of a table, or None."
    s = text.strip()
    if s[:1] == '|':
        rows = [[c.strip() for c in l.strip()[1:-1].split('|')] for l in s.replace('\r\n', '\n').split('\n') if l.strip()]
        if len(rows) < 3: return None
        return rows[0], rows[2:], True, '|'
    first = s.split('\n', 1)[0]
    d = '\t' if first.count('\t') > first.count(',') else ','
    rows = [r for r in csv.reader(io.StringIO(text, newline=''), delimiter=d) if r]    # a CRLF inside a quoted cell is the cell's
    return (rows[0], rows[1:], False, d) if rows else None


def table_false_claims(original: str, view: str) -> list[str] | None:
    t = _table(original)
    if t is None: return None
    header, records, markdown, d = t
    out, cur, pending = [], 0, None
    if markdown:
        vrows = []
        for l in view.replace('\r\n', '\n').strip().split('\n')[2:]:
            m = LINE_MARKER.search(l)
            vrows.append(m if m else (None if CONTRACT in l else [c.strip() for c in l.strip()[1:-1].split('|')]))
    else:
        vrows = []
        for r in list(csv.reader(io.StringIO(view, newline=''), delimiter=d))[1:]:
            if not r: continue
            m = LINE_MARKER.fullmatch(r[0]) if r else None
            vrows.append(m if m else (None if CONTRACT in r[0] else r))
    norm = lambda r: [c.strip() for c in r]
    recs = [norm(r) for r in records]

    def settle(m, a, b):
        n, what = int(m[1]), f'marker row "{m[0][:60]}"'
        if b is not None and b - a != n: out.append(f'{what}: says {n} rows, {b - a} original rows stand between its neighbours')
        units = [row_record(header, r) for r in records[a:a + n]]
        out.extend(check_summary(m[3] or '', units, [d.join(r) for r in records[a:a + n]], what))
        return a + n
    for r in vrows:
        if r is None: continue
        if isinstance(r, re.Match):
            if pending is not None: cur = settle(pending, cur, None)
            pending = r; continue
        r = norm(r)
        if pending is not None:
            n = int(pending[1]); j = cur + n
            if not (j < len(recs) and recs[j] == r):
                j = next((i for i in range(cur, len(recs)) if recs[i] == r), None)
            settle(pending, cur, j); pending = None
            cur = (j if j is not None else cur + n) + 1; continue
        j = next((i for i in range(cur, len(recs)) if recs[i] == r), None)
        if j is not None: cur = j + 1
    if pending is not None: settle(pending, cur, len(recs))
    return out

# ---------------------------------------------------------------------------------------------------------


def _text(b) -> str:
    return b if isinstance(b, str) else bytes(b).decode('utf-8', 'replace')


def false_claims(original: bytes, view: bytes, content_type: str) -> list[str]:
    "Every problem with the claims of `view`'s markers, recomputed from `original` with this module's own code; [] when all hold."
    o, v = _text(original), _text(view)
    if o == v: return []
    if '\x00' in o and NUL_NOTE in v: o = o.replace('\x00', '\n')   # the view says it shows NUL-separated records one a line
    vs = v.lstrip()
    if vs[:1] in ('{', '[') and (MARKER in v or content_type == 'json'):
        got = json_false_claims(o, v)
        if got is not None: return got
    if content_type == 'tabular':
        got = table_false_claims(o, v)
        if got is not None: return got
    return line_false_claims(o, v, content_type)
