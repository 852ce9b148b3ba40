"""A lossy hook view cut under the host's limit never hides a failure line (issue 18: one cutter).

The hook cuts a view longer than `max_chars` (`CAVEMAN_MAX_CHARS`). A cut by head and tail alone drops a
failure in the middle of a long output — the one line the model needs. Run through the installed `caveman
hook claude-code`, as a host runs it; the judge finds the failure lines of the original with its own code
(`tests/_signals.py`, which imports nothing of caveman) and imports nothing from `caveman.hooks`.
"""
import json, subprocess, sys
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
