"""What caveman claims in the README about the edges of its reach, checked through the real Claude Code binary (offline,
fake Messages API: `_fake_anthropic.py`, `_claude_code.py`), break test 7 rows 14 and 21.

- A Bash command that exits non-zero: Claude Code fires `PostToolUseFailure`, not `PostToolUse`, and the model sees
  the host's own `Exit code N` text, cut in the middle — caveman's hook is not in that path. The README's workaround
  (end the command so it exits 0 and prints its status) gives caveman's view of the whole output, with its last line
  (the error) and the status visible and a handle.
- Where the user's settings turn the caveman server off, the host offers no `mcp__caveman__*` tool, and the views
  the hook installed there makes carry no handle.
The judges read the original with this file's own code: its last line, its length.
"""
import json
from pathlib import Path

import pytest

from _fake_anthropic import FakeAnthropic, tool_use, tool_results, result_text, text
from _claude_code import claude_binary, host_env, run_claude
from _agent_hosts import HANDLE, caveman_cli, host_binary_fixture

pytestmark = pytest.mark.slow

claude = host_binary_fixture(claude_binary)
GEN = ("python3 -c \"print('\\n'.join('2026-12-02 11:00:%02d INFO worker %d compiled unit %d' % (i % 60, i % 7, i) "
       "for i in range(1500))); print('ERROR unit 1499: disk quota exceeded')\"")
FULL = ''.join('2026-12-02 11:00:%02d INFO worker %d compiled unit %d\n' % (i % 60, i % 7, i) for i in range(1500)) + 'ERROR unit 1499: disk quota exceeded\n'


def session(tmp: Path, claude: str, script, sources: str = 'project', user_settings: dict | None = None,
            project_settings: dict | None = None, tools: str = 'Bash,mcp__caveman__caveman_retrieve'):
    project, home = tmp / 'project', tmp / 'home'; project.mkdir(); home.mkdir()
    for base, s in ((home, user_settings), (project, project_settings)):
        if s is not None: (base / '.claude').mkdir(); (base / '.claude' / 'settings.json').write_text(json.dumps(s))
    env = host_env(home, {'CAVEMAN_HOOK_SERVER': 'off'})
    out = caveman_cli('install', 'claude-code', '--scope', 'project', cwd=project, env=env)
    with FakeAnthropic(script) as api:
        r = run_claude(claude, project, {**env, **api.env()}, tools, sources=sources)
    assert r.returncode == 0, (r.stdout[-2000:], r.stderr[-2000:])
    return api, out


def test_failing_command_is_the_hosts_text_and_the_workaround_gets_a_view(claude, tmp_path):
    last = FULL.rstrip('\n').rsplit('\n', 1)[1]
    assert len(FULL) > 30_000
    api, _ = session(tmp_path, claude, [[tool_use('Bash', {'command': GEN + '; exit 1'}, id='toolu_fail'),
                                         tool_use('Bash', {'command': GEN + '; false; echo "exit code: $?"'}, id='toolu_status')],
                                        [text('done')]])
    seen = {b['tool_use_id']: (result_text(b), b.get('is_error')) for b in tool_results(api.main_requests()[-1])}
    fail, is_error = seen['toolu_fail']
    assert is_error and fail.startswith('Exit code 1') and '(caveman)' not in fail and not HANDLE.search(fail)
    assert 'characters truncated' in fail and last not in fail and len(fail) < 12_000      # the host's cut: the error line lost
    status, _ = seen['toolu_status']
    assert '(caveman)' in status and HANDLE.search(status) and last in status and 'exit code: 1' in status


@pytest.mark.parametrize('where', ['project disabledMcpjsonServers', 'user deniedMcpServers'])
def test_server_turned_off_gets_no_handle(claude, tmp_path, where):
    user = {'deniedMcpServers': [{'serverName': 'caveman'}]} if where.startswith('user') else None
    proj = {'disabledMcpjsonServers': ['caveman']} if where.startswith('project') else None
    api, out = session(tmp_path, claude, [[tool_use('Bash', {'command': GEN}, id='toolu_big')], [text('done')]],
                       sources='user,project', user_settings=user, project_settings=proj)
    assert 'not registered' in out, out
    body = api.main_requests()[-1]
    assert not any(t['name'].startswith('mcp__caveman') for t in body.get('tools', []))
    view = {b['tool_use_id']: result_text(b) for b in tool_results(body)}['toolu_big']
    assert not HANDLE.search(view) and 'caveman_retrieve' not in view, view[-500:]
