"""A hook view never hides where an output starts and ends (issue 13: the agent bench lost the last line of a `Read`
and the first hit of a `Grep` that the bare session showed).

Payloads are captured live at test time — Python, JavaScript and C sources of the installed packages for `Read`,
`grep -rn` hits over site-packages for `Grep`, the live corpus (tests/_live.py) for `Bash` — and sent through
`caveman hook claude-code --recovery` as Claude Code sends them. The judge is this file's own code: the first and
the last non-blank line of the original (stripped) must appear verbatim in the text the model would see. A Bash
output over 30,000 characters reaches the hook as the host does it (a 30,000-character cut plus the persisted
file); the host itself would show only a 2 KB preview of its first lines, so its first line is required there too.

Not judged: payloads that are one JSON document (a view re-spells its lines; the data stays) and HTML or XML
documents (the model is shown their text, not their markup).
"""
import json, subprocess, sys
from pathlib import Path

import pytest

from conftest import child_env
from _live import live_corpus   # noqa: F401  (session fixture)

pytestmark = pytest.mark.slow

CAVEMAN = Path(sys.executable).with_name('caveman')
SITE = Path(next(p for p in sys.path if p.endswith('site-packages')))
HOST_CUT = 30_000     # characters of Bash stdout Claude Code hands a hook; the rest is in the persisted file


@pytest.fixture(scope='module')
def env(tmp_path_factory):
    if not CAVEMAN.exists(): pytest.fail('the caveman console script is not installed: run through `make test`')
    tmp = tmp_path_factory.mktemp('edges')
    return child_env(only=(), PATH='/usr/bin:/bin', HOME=str(tmp / 'home'), CAVEMAN_HOME=str(tmp / 'cv'))


def edges(text: str) -> list[str]:
    "The first and last non-blank lines of `text`, stripped; NUL-separated records (`find -print0`) count as lines."
    lines = [l.strip() for l in text.replace('\x00', '\n').splitlines() if l.strip()]
    return list(dict.fromkeys([lines[0], lines[-1]])) if lines else []


def run_hook(event: dict, env: dict):
    "The hook's updatedToolOutput for `event`, or None when it keeps the original."
    r = subprocess.run([str(CAVEMAN), 'hook', 'claude-code', '--recovery'], input=json.dumps(event).encode(),
                       capture_output=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)['hookSpecificOutput']['updatedToolOutput'] if r.stdout.strip() else None


def lost(original: str, seen: str) -> list[str]:
    return [p for p in edges(original) if p not in seen]


def sources() -> list[Path]:
    "About 20 source files of the installed packages (3 KB to 300 KB), spread over the sorted list, and every fastcore module."
    files = sorted(f for ext in ('py', 'js', 'c', 'h') for f in SITE.rglob(f'*.{ext}') if 3_000 < f.stat().st_size < 300_000)
    assert len(files) > 100, len(files)
    fastcore = sorted((SITE / 'fastcore').glob('*.py'))
    return list(dict.fromkeys(files[::len(files) // 20] + [f for f in fastcore if f.stat().st_size > 3_000]))


def read_event(path: Path) -> dict:
    text = path.read_text('utf-8', 'replace')
    n = text.count('\n')
    return {'hook_event_name': 'PostToolUse', 'tool_name': 'Read', 'tool_input': {'file_path': str(path)},
            'tool_response': {'type': 'text', 'file': {'filePath': str(path), 'content': text, 'numLines': n, 'startLine': 1, 'totalLines': n}}}


def test_read_views_show_the_first_and_last_lines(env):
    failures, changed = [], 0
    for f in sources():
        event = read_event(f)
        out = run_hook(event, env)
        if out is None: continue
        changed += 1
        if miss := lost(event['tool_response']['file']['content'], out['file']['content']): failures.append((str(f), miss))
    assert changed >= 10, changed              # the check saw real views, not only originals left standing
    assert not failures, failures


def grep_payloads() -> list[tuple[str, dict]]:
    "Grep tool responses of live `grep -rn` runs over installed packages: content (with and without context) and file lists."
    out = []
    for pkg, pattern in [('fastcore', 'def __init__'), ('_pytest', 'raise '), ('pip', 'return None'), ('mcp', 'import '),
                         ('IPython', 'class .*Error')]:
        for flags in (['-rn'], ['-rn', '-C1'], ['-rl']):
            g = subprocess.run(['grep', *flags, '-E', pattern, str(SITE / pkg)], capture_output=True, text=True, errors='replace',
                               timeout=120).stdout
            if len(g) < 4_096: continue
            if '-rl' in flags: resp = {'mode': 'files_with_matches', 'filenames': g.splitlines(), 'numFiles': len(g.splitlines())}
            else: resp = {'mode': 'content', 'numFiles': 0, 'filenames': [], 'content': g, 'numLines': g.count('\n')}
            out.append((f'{pkg} {pattern} {" ".join(flags)}', {'hook_event_name': 'PostToolUse', 'tool_name': 'Grep',
                                                              'tool_input': {'pattern': pattern}, 'tool_response': resp}))
    assert len(out) >= 8, [n for n, _ in out]
    return out


def test_grep_views_show_the_first_and_last_lines(env):
    failures, changed = [], 0
    for name, event in grep_payloads():
        out = run_hook(event, env)
        if out is None: continue
        changed += 1
        resp = event['tool_response']
        original = resp.get('content') or '\n'.join(resp['filenames'])
        seen = out['content'] if resp['mode'] == 'content' else '\n'.join(out['filenames'])
        if miss := lost(original, seen): failures.append((name, miss))
    assert changed >= 6, changed
    assert not failures, failures


def judged(text: str) -> bool:
    "Line-oriented text: not one JSON document, not an HTML or XML document."
    s = text.strip()
    if s[:1] in '[{':
        try: json.loads(s); return False
        except ValueError: pass
    return not s[:200].lower().startswith(('<!doctype', '<html', '<?xml'))


def test_bash_views_show_the_first_and_last_lines(env, live_corpus, tmp_path):
    failures, changed = [], 0
    for name, data in live_corpus:
        text = data.decode('utf-8', 'replace')
        if not judged(text): continue
        resp = {'stdout': text, 'stderr': '', 'interrupted': False}
        if len(text) > HOST_CUT:           # as Claude Code hands it over: the cut, and the whole output on disk
            (tmp_path / name).write_bytes(data)
            resp.update(stdout=text[:HOST_CUT], persistedOutputPath=str(tmp_path / name), persistedOutputSize=len(data))
        out = run_hook({'hook_event_name': 'PostToolUse', 'tool_name': 'Bash', 'tool_input': {'command': name}, 'tool_response': resp}, env)
        if out is None: continue
        changed += 1
        if miss := lost(text, out['stdout']): failures.append((name, miss))
    assert changed >= 20, changed
    assert not failures, failures
