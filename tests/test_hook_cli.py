"""`caveman hook` and `caveman install/uninstall` through the installed console script, as a host runs them.

Bad input of every kind must leave the host's original output standing: exit 0, nothing on stdout, exactly
one line on stderr — in a process of its own (`CAVEMAN_HOOK_SERVER=off`) and answered by the warm hook server alike
(the `by` fixture runs each such test both ways). The installer must merge into settings files without touching anything else, and
uninstall must give the user's file back as it was.
"""
import json, os, re, shutil, subprocess, sys, tempfile
from pathlib import Path

import pytest
from conftest import child_env
from _warm import server_status, stop, wait_for_server

CAVEMAN = Path(sys.executable).with_name('caveman')


def hook(data: bytes, env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(CAVEMAN), 'hook', 'claude-code', *args], input=data, capture_output=True, env=env, timeout=120)


@pytest.fixture
def env(tmp_path):
    if not CAVEMAN.exists(): pytest.fail('the caveman console script is not installed: run through `make test`')
    return child_env(only=(), PATH='/usr/bin:/bin', HOME=str(tmp_path / 'home'), CAVEMAN_HOME=str(tmp_path / 'cv'))


@pytest.fixture(scope='module')
def warm_servers():
    "`(runtime directory, home)` shared by this module's warm calls, and the configurations whose servers they started: one server per configuration for the whole module, stopped at its end."
    run_dir, home = tempfile.mkdtemp(prefix='cvrun'), tempfile.mkdtemp(prefix='cvhome')
    started = {}
    yield run_dir, home, started
    for e in started.values(): stop(e)
    shutil.rmtree(run_dir, ignore_errors=True); shutil.rmtree(home, ignore_errors=True)


class Warm:
    "A hook call answered by the warm server: the test's environment with the server on, in a shared home; the server is started first, and the call is checked to be the server's."
    def __init__(self, servers): self.run_dir, self.home, self.started = servers
    def env(self, env: dict) -> dict:
        e = {**env, 'HOME': os.path.join(self.home, 'home'), 'CAVEMAN_HOME': os.path.join(self.home, 'cv'),
             'XDG_RUNTIME_DIR': self.run_dir, 'CAVEMAN_HOOK_SERVER_IDLE': '300'}
        e.pop('CAVEMAN_HOOK_SERVER', None)
        return e
    def __call__(self, data: bytes, env: dict, *args: str) -> subprocess.CompletedProcess:
        e = self.env(env)
        key = tuple(sorted(e.items()))
        if key not in self.started:
            subprocess.run([str(CAVEMAN), 'compress', '-'], input=b'x' * 100, env=e, capture_output=True, timeout=120)   # starts the server
            self.started[key] = e
        before = wait_for_server(e)['calls']
        r = hook(data, e, *args)
        assert server_status(e)['calls'] == before + 1, 'the call was not answered by the server'
        return r


class Cold:
    "A hook call in a process of its own (the warm server off, as `child_env` gives it)."
    def env(self, env: dict) -> dict: return {**env, 'CAVEMAN_HOOK_SERVER': 'off'}
    def __call__(self, data: bytes, env: dict, *args: str) -> subprocess.CompletedProcess: return hook(data, self.env(env), *args)


@pytest.fixture(params=['cold', 'warm'])
def by(request, warm_servers):
    "Runs a hook call one way or the other: `by(data, env, *args)`, and `by.env(env)` the environment it runs in."
    return Cold() if request.param == 'cold' else Warm(warm_servers)


def bash_event(stdout: str, **extra) -> bytes:
    return json.dumps({'hook_event_name': 'PostToolUse', 'tool_name': 'Bash', 'tool_input': {'command': 'x'},
                       'tool_response': {'stdout': stdout, 'stderr': '', 'interrupted': False, **extra}}).encode()


LOG = ''.join(f'2026-12-01 10:00:{i % 60:02d} INFO request served id={i} status=200\n' for i in range(500))


@pytest.mark.parametrize('data', [b'\x00\xff\xfe binary \x89PNG\r\n', b'{"tool_name": "Bash", "tool_response": ', b'[]', b'',
                                  b'{"tool_name": 7}'])
def test_bad_input_stands_aside_with_one_line(data, env, by):
    r = by(data, env, '--recovery')
    assert (r.returncode, r.stdout) == (0, b'')
    assert r.stderr.startswith(b'caveman hook: ') and r.stderr.count(b'\n') == 1


def test_missing_persisted_file_stands_aside(env, tmp_path, by):
    r = by(bash_event(LOG[:3000], persistedOutputPath=str(tmp_path / 'gone.txt'), persistedOutputSize=len(LOG)), env, '--recovery')
    assert (r.returncode, r.stdout) == (0, b'') and b'persisted output' in r.stderr and r.stderr.count(b'\n') == 1


def test_persisted_path_that_is_a_fifo_is_refused_at_once(env, tmp_path):
    "A `persistedOutputPath` naming a FIFO (no writer ever comes) is refused without reading: exit 0, no output, one stderr line, well before the host's 60 s hook timeout (break test 7 row 07: the hook blocked until it)."
    import os, time
    fifo = tmp_path / 'out.fifo'; os.mkfifo(fifo)
    t = time.monotonic()
    r = hook(bash_event(LOG[:3000], persistedOutputPath=str(fifo), persistedOutputSize=len(LOG)), env, '--recovery')
    assert (r.returncode, r.stdout) == (0, b'') and b'not a regular file' in r.stderr and r.stderr.count(b'\n') == 1
    assert time.monotonic() - t < 50


def test_persisted_output_gets_a_view_the_size_of_the_hosts_preview(env, tmp_path):
    "An output Claude Code persisted (over 30,000 characters) gets a view of about the host's 2 KB preview plus the handle line: its first and last lines and its failure line shown, every line shown a line of the original, shown lines plus every `N lines of the original elided` count = the original's lines, the handle returning the whole output."
    lines = [f'2026-12-01 10:{i // 60 % 60:02d}:{i % 60:02d} INFO worker {i % 7} compiled unit {i} in {i % 97} ms' for i in range(3000)]
    lines[1700] = '2026-12-01 10:28:20 ERROR worker 6 failed to compile unit 1700: disk quota exceeded'
    full = '\n'.join(lines) + '\n'
    f = tmp_path / 'persisted.txt'; f.write_text(full)
    r = hook(bash_event(full[:30000], persistedOutputPath=str(f), persistedOutputSize=len(full)), env, '--recovery')
    assert r.returncode == 0 and r.stdout, r.stderr
    view = json.loads(r.stdout)['hookSpecificOutput']['updatedToolOutput']['stdout']
    body, handle = view.rstrip('\n').rsplit('\n', 1)
    assert 'caveman_retrieve(recovery_handle="ccr_' in handle and len(body) <= 2_300, len(body)
    shown = body.split('\n')
    for probe in (lines[0], lines[-1], lines[1700]): assert probe in shown, probe
    got = subprocess.run([str(CAVEMAN), 'retrieve', handle.split('recovery_handle="')[1].split('"')[0]], env=env,
                         capture_output=True, timeout=120, stdin=subprocess.DEVNULL)
    assert got.stdout.decode() == full
    k = 0                                              # each shown line is the next one of the original; each gap counts the original lines it skips
    for line in shown:
        m = re.fullmatch(r'… (\d+) lines? (?:of the original )?elided \(caveman\)[^\n]*', line)
        if m: k += int(m.group(1)); continue
        assert line.startswith('… caveman: ') or lines[k] == line, (k, line)
        if not line.startswith('… caveman: '): k += 1
    assert k == len(lines)
    assert 'invariants' not in view                    # no note about invariants the view does not state


def test_small_output_is_silent_whatever_its_tool_or_shape(env):
    for data in (bash_event('ok\n'), json.dumps({'tool_name': 'Frobnicate', 'tool_response': {'text': 'ok'}}).encode(),
                 json.dumps({'tool_name': 'Bash', 'tool_response': {'stdout': ['ok']}}).encode()):
        r = hook(data, env, '--recovery')
        assert (r.returncode, r.stdout, r.stderr) == (0, b'', b'')


def one_line(r) -> str:
    assert (r.returncode, r.stdout) == (0, b''), r
    assert r.stderr.startswith(b'caveman hook: ') and r.stderr.count(b'\n') == 1 and r.stderr.endswith(b'the original output stands\n')
    return r.stderr.decode()


@pytest.mark.parametrize('tool, response, says', [
    ('Frobnicate', {'text': LOG}, "unknown tool 'Frobnicate'"),
    ('Bash', {'stdout': [LOG], 'stderr': ''}, 'unknown Bash tool_response shape'),
    ('Bash', LOG, 'unknown Bash tool_response shape'),
    ('Read', {'file': {'content': LOG}}, 'unknown Read tool_response shape'),
    ('Grep', {'mode': 'content', 'content': {'text': LOG}}, 'unknown Grep tool_response shape'),
    ('Glob', {'filenames': LOG}, 'unknown Glob tool_response shape'),
    ('WebFetch', {'result': [LOG]}, 'unknown WebFetch tool_response shape'),
    ('mcp__fs__read', {'content': LOG}, 'unknown MCP tool_response shape')])
def test_unknown_tool_or_shape_says_so_in_one_line(tool, response, says, env, by):
    r = by(json.dumps({'hook_event_name': 'PostToolUse', 'tool_name': tool, 'tool_input': {}, 'tool_response': response}).encode(), env, '--recovery')
    assert says in one_line(r)


def test_read_only_store_stands_aside(env, by):
    r = by(bash_event(LOG), {**env, 'CAVEMAN_CCR_DB': '/sys/caveman-ccr.db'}, '--recovery')    # /sys: read-only even for root
    assert 'recovery store' in one_line(r)


def test_binary_text_in_a_large_output_never_breaks_the_hook(env, by):
    junk = ''.join(chr(c) for c in range(0, 0x3000, 7)) + '\udc80\x00\ufffd' * 2000      # control bytes, a lone surrogate, NULs
    r = by(bash_event(junk), env, '--recovery')
    assert r.returncode == 0 and r.stderr.count(b'\n') <= 1
    if r.stdout:
        view = json.loads(r.stdout)['hookSpecificOutput']['updatedToolOutput']['stdout']
        handle = view.rsplit('recovery_handle="', 1)[1].split('"', 1)[0]
        got = subprocess.run([str(CAVEMAN), 'retrieve', handle], capture_output=True, env=by.env(env), timeout=120)
        assert got.stdout == junk.encode('utf-8', 'surrogatepass')


def test_a_policy_file_lowering_the_minimum_reaches_the_fast_path(env, tmp_path):
    small = json.dumps([{'id': i, 'name': f'n{i}'} for i in range(20)], indent=2)       # about 700 bytes of JSON
    data = bash_event(small)
    assert len(data) < 2048
    assert hook(data, env, '--recovery').stdout == b''                                  # under the default minimum
    cfg = tmp_path / 'elsewhere.json'
    cfg.write_text(json.dumps({'minBytes': 100}))
    home_file = Path(env['CAVEMAN_HOME']) / 'policy.json'                                # the policy file in the caveman home
    for e, f in (({**env, 'CAVEMAN_POLICY': str(cfg)}, None), ({**env, 'CAVEMAN_MIN_BYTES': '100'}, None), (env, home_file)):
        if f: f.parent.mkdir(parents=True, exist_ok=True); f.write_text(json.dumps({'minBytes': 100}))
        r = hook(data, e)
        view = json.loads(r.stdout)['hookSpecificOutput']['updatedToolOutput']['stdout']
        assert len(view) < len(small) and r.stderr == b''
    home_file.unlink()
    r = hook(data, {**env, 'CAVEMAN_HOOK_MIN_BYTES': '100'})                            # the old name still works, and says so once
    assert json.loads(r.stdout)['hookSpecificOutput']['updatedToolOutput']['stdout'] != small
    assert r.stderr.count(b'\n') == 1 and b'CAVEMAN_MIN_BYTES' in r.stderr


def test_large_output_view_and_retrieve(env):
    r = hook(bash_event(LOG), env, '--recovery')
    assert r.returncode == 0 and r.stderr == b''
    out = json.loads(r.stdout)['hookSpecificOutput']
    assert out['hookEventName'] == 'PostToolUse'
    view = out['updatedToolOutput']['stdout']
    assert len(view) < len(LOG) / 4 and out['updatedToolOutput']['interrupted'] is False
    handle = view.rsplit('recovery_handle="', 1)[1].split('"', 1)[0]
    got = subprocess.run([str(CAVEMAN), 'retrieve', handle], capture_output=True, env=env, timeout=120)
    assert got.stdout.decode() == LOG
    r = hook(bash_event(LOG), env)                   # no --recovery: a log view would be lossy, so nothing
    assert (r.returncode, r.stdout, r.stderr) == (0, b'', b'')
    r = hook(bash_event(LOG), {**env, 'CAVEMAN_HOOK': 'off'}, '--recovery')
    assert (r.returncode, r.stdout) == (0, b'')


def test_policy_file_excludes_a_command(env, tmp_path):
    cfg = tmp_path / 'policy.json'
    cfg.write_text(json.dumps({'exclude': ['Bash(x)']}))
    r = hook(bash_event(LOG), {**env, 'CAVEMAN_POLICY': str(cfg)}, '--recovery')
    assert (r.returncode, r.stdout, r.stderr) == (0, b'', b'')



@pytest.mark.parametrize('command, excluded', [
    ('git log -p', True), ('cd repo && git log -p', True), ('GIT_PAGER=cat git log -p', True),
    ('timeout 60 git log -p 2>&1 | head -n 400', True), ('(cd repo; git log) || true', True),
    ('echo "cd repo && git log"', False),        # quoted: one simple command, echo
    ('git -C repo log -p', False),               # options are not rewritten: a pattern names this form itself
])
def test_a_bash_exclude_pattern_matches_each_simple_command(env, command, excluded):
    "`exclude: [\"Bash(git log*)\"]` (the README's example) holds for every simple command of a compound command, after env assignments and wrappers, as Claude Code's permission rules match."
    event = json.dumps({'hook_event_name': 'PostToolUse', 'tool_name': 'Bash', 'tool_input': {'command': command},
                        'tool_response': {'stdout': LOG, 'stderr': '', 'interrupted': False}}).encode()
    r = hook(event, {**env, 'CAVEMAN_EXCLUDE': 'Bash(git log*)'}, '--recovery')
    assert r.returncode == 0 and r.stderr == b''
    assert (r.stdout == b'') == excluded, r.stdout[:200]

def test_install_uninstall_keep_the_users_settings(env, tmp_path):
    home = Path(env['HOME']); (home / '.claude').mkdir(parents=True)
    user = {'model': 'opus', 'permissions': {'allow': ['Bash(ls:*)']},
            'hooks': {'PostToolUse': [{'matcher': 'Edit', 'hooks': [{'type': 'command', 'command': 'prettier --write'}]}],
                      'Stop': [{'hooks': [{'type': 'command', 'command': 'notify'}]}]}}
    settings = home / '.claude' / 'settings.json'
    settings.write_text(json.dumps(user, indent=4))
    claude_json = home / '.claude.json'
    claude_json.write_text(json.dumps({'numStartups': 9, 'mcpServers': {'gh': {'command': 'gh-mcp'}}}))
    run = lambda *a: subprocess.run([str(CAVEMAN), *a], capture_output=True, env=env, timeout=120, cwd=tmp_path)
    dry = run('install', 'claude-code', '--dry-run')
    assert dry.returncode == 0 and b'hook claude-code --recovery' in dry.stdout and json.loads(settings.read_text()) == user
    assert run('install', 'claude-code').returncode == 0
    s = json.loads(settings.read_text())
    assert {k: v for k, v in s.items() if k != 'hooks'} == {k: v for k, v in user.items() if k != 'hooks'}
    assert s['hooks']['Stop'] == user['hooks']['Stop'] and len(s['hooks']['PostToolUse']) == 2
    assert json.loads(claude_json.read_text())['mcpServers']['caveman']['command'].endswith('caveman-mcp')
    assert json.loads((home / '.claude' / 'settings.json.caveman.bak').read_text()) == user
    again = run('install', 'claude-code')
    assert again.returncode == 0 and b'no change' in again.stdout
    assert run('uninstall', 'claude-code').returncode == 0
    assert json.loads(settings.read_text()) == user
    assert json.loads(claude_json.read_text()) == {'numStartups': 9, 'mcpServers': {'gh': {'command': 'gh-mcp'}}}


def test_install_refuses_a_broken_settings_file(env):
    home = Path(env['HOME']); (home / '.claude').mkdir(parents=True)
    (home / '.claude' / 'settings.json').write_text('{"model": "opus",')
    r = subprocess.run([str(CAVEMAN), 'install', 'claude-code'], capture_output=True, env=env, timeout=120)
    assert r.returncode == 1 and json.loads(r.stderr)['error'] == 'cave_settings_invalid'
    assert (home / '.claude' / 'settings.json').read_text() == '{"model": "opus",' and not (home / '.claude.json').exists()



@pytest.mark.parametrize('flags', [[], ['--gateway']])
def test_install_never_replaces_a_users_own_server_named_caveman(env, flags):
    "A server of the user's that happens to be named `caveman` (not caveman-mcp) is refused, never overwritten; every file stays as it was."
    home = Path(env['HOME']); home.mkdir(parents=True, exist_ok=True); original = '{\n  "mcpServers": {\n    "caveman": {\n      "command": "/opt/other/bin/server"\n    }\n  }\n}\n'
    (home / '.claude.json').write_text(original)
    r = subprocess.run([str(CAVEMAN), 'install', 'claude-code', *flags], capture_output=True, env=env, timeout=120)
    assert r.returncode == 1 and b'not caveman-mcp' in r.stderr
    assert (home / '.claude.json').read_text() == original and not (home / '.claude' / 'settings.json').exists()
    r = subprocess.run([str(CAVEMAN), 'uninstall', 'claude-code'], capture_output=True, env=env, timeout=120)
    assert (home / '.claude.json').read_text() == original

ISSUES = json.dumps([{'id': i, 'title': f'issue {i}', 'state': 'open', 'labels': [], 'user': {'login': 'octocat', 'id': 1}}
                     for i in range(60)], indent=2)


def mcp_event(tool: str, cwd: str) -> bytes:
    return json.dumps({'hook_event_name': 'PostToolUse', 'tool_name': tool, 'tool_input': {}, 'cwd': cwd,
                       'tool_response': [{'type': 'text', 'text': ISSUES}]}).encode()


def test_gateway_tools_are_never_compressed_twice(env, tmp_path):
    "The gateway's proxied tools: under the installer's server name, or under any name whose command runs caveman-mcp."
    project = tmp_path / 'project'; project.mkdir()
    (project / '.mcp.json').write_text(json.dumps({'mcpServers': {
        'gw': {'command': str(CAVEMAN.with_name('caveman-mcp')), 'args': ['--', 'npx', 'some-mcp-server']},
        'plain': {'command': 'npx', 'args': ['some-mcp-server']}}}))
    home = Path(env['HOME']); home.mkdir(parents=True, exist_ok=True)
    (home / '.claude.json').write_text(json.dumps({'projects': {str(project): {'mcpServers': {
        'db': {'command': 'python', 'args': ['-m', 'caveman.mcp.server', '--config', 'x.json']}}}}}))
    for tool in ('mcp__caveman__github__list_issues', 'mcp__caveman__list_issues', 'mcp__gw__list_issues', 'mcp__db__query'):
        r = hook(mcp_event(tool, str(project)), env, '--recovery')
        assert (r.returncode, r.stdout, r.stderr) == (0, b'', b''), tool
    r = hook(mcp_event('mcp__plain__list_issues', str(project)), env, '--recovery')     # not a gateway: compressed
    view = json.loads(r.stdout)['hookSpecificOutput']['updatedMCPToolOutput'][0]['text']
    assert len(view) < len(ISSUES)
    r = hook(mcp_event('mcp__gw__list_issues', str(tmp_path)), env, '--recovery')        # another project: gw is not registered there
    assert r.stdout != b''
