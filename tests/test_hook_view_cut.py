"""A lossy hook view cut under the host's limit never hides a failure line (issue 18: one cutter).

The hook cuts a view longer than `max_chars` (`CAVEMAN_MAX_CHARS`). A cut by head and tail alone drops a
failure in the middle of a long output — the one line the model needs. Run through the installed `caveman
hook claude-code`, as a host runs it; the judge finds the failure lines of the original with its own code
(`tests/_signals.py`, which imports nothing of caveman) and imports nothing from `caveman.hooks`.
"""
import json, re, subprocess, sys
from pathlib import Path

import pytest
from conftest import child_env
from _signals import signal_lines

CAVEMAN = Path(sys.executable).with_name('caveman')
MARKER = ' lines of the original elided (caveman)'


def hook_view(stdout: str, env: dict) -> str:
    event = {'hook_event_name': 'PostToolUse', 'tool_name': 'Bash', 'tool_input': {'command': 'make test'},
             'tool_response': {'stdout': stdout, 'stderr': '', 'interrupted': False}}
    r = subprocess.run([str(CAVEMAN), 'hook', 'claude-code', '--recovery'], input=json.dumps(event).encode(),
                       capture_output=True, env=env, timeout=120)
    assert r.returncode == 0 and r.stdout, r.stderr
    return json.loads(r.stdout)['hookSpecificOutput']['updatedToolOutput']['stdout']


def _word(i: int) -> str:
    "A made-up word for `i` (three consonants): lines that differ by such words are of different kinds to the log compressor."
    return ''.join('bcdfghjklmnpqrstvwxz'[i // 20 ** k % 20] for k in range(3))


def build_log(n: int, failure: str) -> str:
    "A build log of `n` lines in blocks of ten about one made-up unit each (the compressed view keeps a line or two of every block, in order, so it stays long), with `failure` as the middle line."
    lines = [f'2026-12-01 10:{i // 60 % 60:02d}:{i % 60:02d} INFO compiled {_word(i // 10)}ola {_word(i // 10 * 7 + 3)}ine in {i * 37 % 997} ms'
             for i in range(n)]
    lines[n // 2] = failure
    return '\n'.join(lines) + '\n'


@pytest.mark.parametrize('failure', [
    '2026-12-01 10:25:00 INFO FAILED tests/test_api.py::test_refund - AssertionError: expected 200, got 500',
    'Traceback (most recent call last):'])
def test_a_failure_in_the_middle_stays_visible_under_a_small_limit(failure, tmp_path):
    if not CAVEMAN.exists(): pytest.fail('the caveman console script is not installed: run through `make test`')
    env = child_env(only=(), PATH='/usr/bin:/bin', HOME=str(tmp_path / 'home'), CAVEMAN_HOME=str(tmp_path / 'cv'),
                    CAVEMAN_MAX_CHARS='3000')
    original = build_log(1000, failure)
    signals = signal_lines(original, 'log')
    assert [line for _, _, line in signals] == [failure]            # the judge sees the one failure line, and only it
    view = hook_view(original, env)
    body, handle = view.rstrip('\n').rsplit('\n', 1)
    assert 'caveman_retrieve(recovery_handle="ccr_' in handle and len(view) <= 3000, len(view)
    assert any(MARKER in line for line in body.split('\n')), 'the view was not cut: the limit does not test the cutter'
    shown = body.split('\n')
    assert failure in shown, 'the failure line of the original is hidden by the cut'
    assert shown[0] == original.split('\n')[0]                     # head and tail still shown around it


GAP = re.compile(r'… (\d+) lines? of the original elided \(caveman\)(?:: signals×(\d+) first=)?')


def shipped_documents() -> list[Path]:
    "Documents this machine ships, long enough for the host to persist them (over 30,000 characters): the long descriptions (READMEs, changelogs) of the installed Python packages and the licence texts of /usr/share/common-licenses."
    site = [p for d in map(Path, sys.path) if d.name == 'site-packages' and d.is_dir() for p in d.glob('*.dist-info/METADATA')]
    lic = [p for p in Path('/usr/share/common-licenses').glob('*') if p.is_file()] if Path('/usr/share/common-licenses').is_dir() else []
    return sorted(p for p in {*site, *lic} if p.stat().st_size > 31_000)


def document_cut_problems(original: str, view: str, kind: str) -> tuple[list[str], int]:
    "Problems of a document's cut (shown lines verbatim and in order, shown plus counted lines = the document's, each gap's `signals×N` = the hidden lines the judge reads as signals of a `kind` document: by the prose profile), and the number of hidden lines only an output profile would call signals."
    ol = original.rstrip('\n').split('\n')
    prose = {i for i, _, _ in signal_lines(original, kind)}
    words = {i for i, _, _ in signal_lines(original, 'log')} - prose
    problems, pos, named = [], 0, 0
    for line in view.rstrip('\n').split('\n'):
        if m := GAP.match(line):
            hidden = range(pos, pos + int(m.group(1)))
            if int(m.group(2) or 0) != len(prose.intersection(hidden)):
                problems.append(f'{line[:90]}: the judge counts {[ol[i] for i in sorted(prose.intersection(hidden))][:3]}')
            named += len(words.intersection(hidden)); pos = hidden.stop
        elif not line.startswith('… '):
            if pos >= len(ol) or line != ol[pos]: return problems + [f'line {pos} shown is not the document\'s: {line[:80]!r}'], named
            pos += 1
    if pos != len(ol): problems.append(f'{pos} lines shown or counted of {len(ol)}')
    return problems, named


def test_a_documents_cut_counts_reports_not_sentences_naming_a_failure(tmp_path):
    """Break test 14 row 9: a document (a README, a licence, a changelog) through the hook, persisted by the host, was cut with gap
    markers counting every sentence that names a failure (`or an error happens.`) as a signal. Each gap's `signals×N` must count
    the failure reports it hides, as the judge's prose profile reads them (a loud ERROR, a traceback, a program's `name: error:`,
    a report line such as `TypeError: x` or `Segmentation fault`), not the sentences that merely name a failure."""
    if not CAVEMAN.exists(): pytest.fail('the caveman console script is not installed: run through `make test`')
    env = child_env(only=(), PATH='/usr/bin:/bin', HOME=str(tmp_path / 'home'), CAVEMAN_HOME=str(tmp_path / 'cv'), CAVEMAN_HOOK_SERVER='off')
    docs, cut, naming = shipped_documents(), 0, 0
    if not docs: pytest.skip('no document over 30,000 characters on this machine')
    for doc in docs:
        original = doc.read_text(errors='replace').replace('\r', '')
        kind = subprocess.run([str(CAVEMAN), 'detect', '-'], input=original.encode(), capture_output=True, env=env).stdout.decode().strip()
        if kind not in ('text', 'html'): continue                 # no document by its content type: other tests judge those
        path = tmp_path / 'persisted.txt'; path.write_text(original)
        event = {'hook_event_name': 'PostToolUse', 'tool_name': 'Bash', 'tool_input': {'command': f'cat {doc}'},
                 'tool_response': {'stdout': original[:30_000], 'stderr': '', 'interrupted': False,
                                   'persistedOutputPath': str(path), 'persistedOutputSize': len(original)}}
        r = subprocess.run([str(CAVEMAN), 'hook', 'claude-code', '--recovery'], input=json.dumps(event).encode(),
                           capture_output=True, env=env, timeout=120)
        assert r.returncode == 0 and r.stdout, (doc, r.stderr)
        view = json.loads(r.stdout)['hookSpecificOutput']['updatedToolOutput']['stdout']
        if not GAP.search(view): continue                         # the engine's own view fitted: no cut of the original's lines
        cut += 1
        problems, n = document_cut_problems(original, view, kind)
        assert not problems, (doc, problems)
        naming += n
    if not cut: pytest.skip('no document here was cut by its lines')
    assert naming, 'no hidden line names a failure without reporting one: the documents do not test the rule'
