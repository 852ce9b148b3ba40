"""The official TOON conformance fixtures through the `caveman toon` command (SPEC §7, §11).

Which cases are required is decided as in `test_toon_conformance.py` (both use `_toon_fixtures.py`): every v4.0.0 case except the
optional lenient-mode ones (`strict: false`), plus the v3.3.2 cases whose input, options and outcome v4
kept (cases with options v4 removed — key folding, path expansion — and the one v4 changed are left out).

Each case runs as the command line would: encode cases pipe the fixture's JSON into
`caveman toon encode [--delimiter D] [--indent N]` and must print exactly the expected TOON and a newline;
decode cases pipe the TOON into `caveman toon decode [--indent N]` and must print the expected JSON value
(types, key order, exact numbers); `shouldError` cases must exit 1 with nothing on stdout and one JSON
error line on stderr. The fast test does this in-process through `caveman.cli.run`, the real argument
parsing and output path; the slow test spawns the installed console script for every distinct case.
Both print counts by version and category.
"""
import json, os, shutil, subprocess
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal

import pytest

from caveman.cli import run
from _toon_fixtures import V3, V4, dump, tagged, v3_status
from conftest import child_env


def required_v3() -> list[dict]:
    "The v3.3.2 cases v4 kept (or does not repeat); v4 contradicts none of them."
    assert not any(v3_status(c) == 'contradicted' for c in V3)
    return [c for c in V3 if v3_status(c) in ('kept', 'absent')]


CASES = V4 + required_v3()


def argv(c) -> tuple[list[str], bytes]:
    "The command line and stdin of one case."
    o, t = c['options'], c['test']
    args = ['toon', c['category']]
    if 'delimiter' in o: args += ['--delimiter', {',': 'comma', '\t': 'tab', '|': 'pipe'}[o['delimiter']]]
    if 'indentSize' in o: args += ['--indent', str(o['indentSize'])]
    if o.get('strict') is False: args += ['--lenient']
    stdin = dump(t['input']) if c['category'] == 'encode' else t['input']
    return args + ['-'], stdin.encode('utf-8')


def judge(c, status: int, out: bytes, err: bytes) -> str | None:
    "None when the command behaved as the case says, else why not."
    t = c['test']
    if t.get('shouldError'):
        if status != 1 or out: return f'expected exit 1 and empty stdout, got {status} / {out[:80]!r}'
        try: e = json.loads(err)
        except ValueError: return f'stderr is not one JSON line: {err[:120]!r}'
        return None if e.get('error') in ('cave_invalid_toon', 'cave_invalid_json') else f'unexpected error {e}'
    if status != 0: return f'exit {status}: {err[:160]!r}'
    if not out.endswith(b'\n'): return 'no trailing newline'
    text = out[:-1].decode('utf-8')
    if c['category'] == 'encode': return None if text == t['expected'] else f'expected {t["expected"]!r}, got {text!r}'
    got = json.loads(text, parse_float=Decimal)
    return None if tagged(got) == tagged(t['expected']) else f'expected {dump(t["expected"])}, got {text}'


def tally(results) -> tuple[dict, list]:
    "Counts per (version, category): passed / failed / optional-missed, and the required failures."
    counts, failures = {}, []
    for c, why in results:
        n = counts.setdefault((c['version'], c['category']), Counter())
        if why is None: n['passed'] += 1
        elif c['options'].get('strict') is False: n['optional (lenient) not passed'] += 1
        else: n['failed'] += 1; failures.append((c['version'], c['file'], c['index'], c['test']['name'], why))
    return counts, failures


def show(title, counts, capsys):
    with capsys.disabled():
        print(f'\n{title}')
        for (v, cat), n in sorted(counts.items(), reverse=True):
            print(f'  {v} {cat}: ' + ', '.join(f'{k} {n[k]}' for k in ('passed', 'failed', 'optional (lenient) not passed')))


def test_counts_are_complete():
    "Every required v4 case is in the run, and the v3 selection is what the module docstring says."
    assert sum(c['version'] == 'v4.0.0' for c in CASES) == len(V4)
    assert len(V3) - sum(c['version'] == 'v3.3.2' for c in CASES) == 25


def test_conformance_through_cli_in_process(capsys):
    results = []
    for c in CASES:
        args, stdin = argv(c)
        status, out, err = run(args, __import__('io').BytesIO(stdin))
        results.append((c, judge(c, status, out, err)))
    counts, failures = tally(results)
    show('TOON conformance through `caveman toon` (in-process):', counts, capsys)
    assert failures == []
    for v in ('v4.0.0', 'v3.3.2'):
        for cat in ('encode', 'decode'): assert counts[(v, cat)]['passed'] > 0


@pytest.mark.slow
def test_conformance_through_console_script(capsys, tmp_path):
    exe = shutil.which('caveman')
    if exe is None: pytest.fail('caveman is not on PATH: run the tests through `make test`')
    env = child_env(CAVEMAN_CCR_DB=str(tmp_path / 'ccr.db'), CAVEMAN_HOME=str(tmp_path / 'home'))
    distinct = {}
    for c in CASES: distinct.setdefault((tuple(argv(c)[0]), argv(c)[1]), []).append(c)

    def spawn(key):
        args, stdin = key
        r = subprocess.run([exe, *args], input=stdin, capture_output=True, env=env, timeout=120)
        return key, (r.returncode, r.stdout, r.stderr)

    with ThreadPoolExecutor(max_workers=4) as pool: ran = dict(pool.map(spawn, distinct))
    results = [(c, judge(c, *ran[key])) for key, cs in distinct.items() for c in cs]
    counts, failures = tally(results)
    show(f'TOON conformance through the `caveman` console script ({len(distinct)} processes for {len(CASES)} cases; '
         'a v3 case identical to a v4 one runs once):', counts, capsys)
    assert failures == []
