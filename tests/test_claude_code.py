"""caveman's PostToolUse hook inside the real Claude Code binary (`@anthropic-ai/claude-code`, npm), offline.

The test setup installs the pinned Claude Code from the npm registry into `.work/npm` (git-ignored), once,
like the Inspector test does; lifecycle scripts are not run — the platform package
(`@anthropic-ai/claude-code-linux-x64`, an optional dependency) holds the binary, which we run directly.
A fake Messages API on 127.0.0.1 (`_fake_anthropic.py`) plays the model: it answers each turn with a
scripted `tool_use`, and records every request, so we read exactly what the model would have been sent.
`caveman install claude-code --scope project` (the real command) writes the project's settings; HOME and
CAVEMAN_HOME point into a temp dir, so the hook and caveman-mcp share a fresh recovery store.
"""
import json, re, subprocess, sys
from pathlib import Path

import pytest

from conftest import ROOT
from _fake_anthropic import FakeAnthropic, tool_use, tool_results, result_text, text
from _claude_code import claude_binary, host_env, run_claude
from _agent_hosts import HANDLE, caveman_exe, caveman_cli, host_binary_fixture
sys.path.insert(0, str(ROOT / 'evals'))
from live_capture import NODE_T, GIT_CONFLICT   # noqa: E402  the live corpus's node test file and merge script

pytestmark = pytest.mark.slow

TOOLS = 'Bash,Read,Grep,Glob,WebFetch,mcp__caveman__caveman_retrieve'


claude = host_binary_fixture(claude_binary)


class Session:
    "A temp project + home with caveman installed in Claude Code's project scope."
    def __init__(self, tmp: Path, *install_args: str, extra_env: dict | None = None, scope: str = 'project'):
        self.project, self.home = tmp / 'project', tmp / 'home'
        self.project.mkdir(); self.home.mkdir()
        self.env = host_env(self.home, extra_env)
        self.sources = {'user': 'user', 'project': 'project', 'local': 'project,local'}[scope]
        caveman_cli('install', 'claude-code', '--scope', scope, *install_args, cwd=self.project, env=self.env)

    def run(self, claude: str, script, tools: str = TOOLS) -> FakeAnthropic:
        with FakeAnthropic(script) as api:
            r = run_claude(claude, self.project, {**self.env, **api.env()}, tools, sources=self.sources)
        assert r.returncode == 0, (r.stdout[-2000:], r.stderr[-2000:])
        return api


def results(api: FakeAnthropic) -> dict[str, str]:
    "tool_use_id -> the text of its tool_result, as the model saw it in the last request."
    return {b['tool_use_id']: result_text(b) for b in tool_results(api.main_requests()[-1])}


def pylines(n: int, fmt: str) -> str:
    "A Bash command printing `n` lines of `fmt` (with {i}), and the output it prints."
    return (f"python3 -c \"for i in range({n}): print('{fmt}'.format(i=i, m=i % 7))\"",
            ''.join(fmt.format(i=i, m=i % 7) + '\n' for i in range(n)))


def retrieve_step(tool_use_id: str):
    "A script step that calls caveman_retrieve with the handle the model saw in `tool_use_id`'s result."
    def step(body):
        seen = {b['tool_use_id']: result_text(b) for b in tool_results(body)}
        m = HANDLE.search(seen.get(tool_use_id, ''))
        if not m: return [text(f'no handle in the result of {tool_use_id}')]
        return [tool_use('mcp__caveman__caveman_retrieve', {'recovery_handle': m.group(1)}, id='toolu_retrieve')]
    return step


def test_large_bash_output_is_a_view_whose_handle_returns_the_original(claude, tmp_path):
    s = Session(tmp_path)
    cmd, full = pylines(700, '2026-12-01 10:00:00 INFO worker {m} processed item {i} in 12ms')   # ~45,000 characters
    assert 30_000 < len(full) < 50_000
    api = s.run(claude, [[tool_use('Bash', {'command': cmd}, id='toolu_big')], retrieve_step('toolu_big')])
    seen = results(api)
    view = seen['toolu_big']
    assert '(caveman)' in view and HANDLE.search(view) and len(view) < len(full) / 5
    assert 'item 699 ' in view and 'persisted-output' not in view      # the whole output, not Claude Code's 30,000 cut
    assert seen['toolu_retrieve'] == full                               # the MCP server shares the hook's store
    h = HANDLE.search(view).group(1)
    r = subprocess.run([caveman_exe(), 'retrieve', h], env=s.env, capture_output=True, timeout=60, stdin=subprocess.DEVNULL)
    assert r.stdout.decode() == full


def test_output_far_over_the_cut_is_compressed_whole(claude, tmp_path):
    s = Session(tmp_path)
    cmd, full = pylines(4000, '2026-12-01 10:00:00 INFO worker {m} processed item {i} in 12ms')   # ~260,000 characters
    api = s.run(claude, [[tool_use('Bash', {'command': cmd}, id='toolu_huge')]])
    view = results(api)['toolu_huge']
    assert 'persisted-output' not in view and 'item 3999 ' in view and len(view) < 5000
    r = subprocess.run([caveman_exe(), 'retrieve', HANDLE.search(view).group(1)], env=s.env, capture_output=True, timeout=60,
                       stdin=subprocess.DEVNULL)
    assert r.stdout.decode() == full


def test_failure_lines_left_out_of_a_whole_output_cut_are_counted(claude, tmp_path):
    "A 4,000-line Bash output with 100 distinct failure lines, in the real Claude Code: the model's 2,000-character view shows some failure lines and every gap counts those it hides (`signals×N`), so shown + counted = 100 (break test 11 row 2: the cut showed 7 of 60 and said nothing of the rest)."
    s = Session(tmp_path)
    line = lambda i: f'error: unit test-{i} failed with status {i % 7 + 1}' if i % 40 == 7 else f'2026-12-01 10:00:00 INFO worker {i % 7} processed item {i} in 12ms'
    full = ''.join(line(i) + '\n' for i in range(4000))
    cmd = ("python3 -c \"for i in range(4000): print(('error: unit test-%d failed with status %d' % (i, i % 7 + 1)) if i % 40 == 7 "
           "else ('2026-12-01 10:00:00 INFO worker %d processed item %d in 12ms' % (i % 7, i)))\"")
    api = s.run(claude, [[tool_use('Bash', {'command': cmd}, id='toolu_fail')]])
    view = results(api)["toolu_fail"]
    assert 'persisted-output' not in view and '(caveman)' in view
    shown = sum(1 for l in view.split('\n') if l.startswith('error: unit test-'))
    counted = sum(int(n) for n in re.findall(r'signals×([0-9]+)', view))
    assert shown > 0 and shown + counted == sum(1 for l in full.split('\n') if l.startswith('error: unit test-')) == 100
    r = subprocess.run([caveman_exe(), 'retrieve', HANDLE.search(view).group(1)], env=s.env, capture_output=True, timeout=60,
                       stdin=subprocess.DEVNULL)
    assert r.stdout.decode() == full


@pytest.mark.skipif(not Path('/usr/share/locale/de/LC_MESSAGES/libc.mo').is_file(), reason='no German C library catalog here')
def test_translated_failure_messages_are_counted_in_the_cut(claude, tmp_path):
    "A 3,000-line Bash output in the real Claude Code where 50 lines are real `ls` failures printed under `LANGUAGE=de` (the C library's own German: `Datei oder Verzeichnis nicht gefunden`, no English word in them): the 2,000-character view shows some and every gap counts those it hides, so shown + counted = 50 (break test 12 rows 1-3)."
    s = Session(tmp_path)
    cmd = ('for i in $(seq 0 2999); do if [ $((i % 60)) -eq 7 ]; then LC_ALL=C.UTF-8 LANGUAGE=de ls /nope-$i 2>&1; '
           'else echo "2026-12-01 10:00:00 INFO worker $((i % 7)) processed item $i in 12ms"; fi; done')
    full = subprocess.run(['bash', '-c', cmd], capture_output=True, text=True, timeout=120).stdout
    failures = [l for l in full.split('\n') if l.startswith('ls: ')]
    assert len(failures) == 50 and not any('No such file' in l for l in failures), failures[:2]
    api = s.run(claude, [[tool_use('Bash', {'command': cmd}, id='toolu_de')]])
    view = results(api)["toolu_de"]
    assert 'persisted-output' not in view and '(caveman)' in view
    shown = sum(1 for l in view.split('\n') if l.startswith('ls: '))
    counted = sum(int(n) for n in re.findall(r'signals×([0-9]+)', view))
    assert shown > 0 and shown + counted == 50, (shown, counted)
    r = subprocess.run([caveman_exe(), 'retrieve', HANDLE.search(view).group(1)], env=s.env, capture_output=True, timeout=60,
                       stdin=subprocess.DEVNULL)
    assert r.stdout.decode() == full


def test_small_output_and_failing_hook_leave_the_original(claude, tmp_path):
    bad = tmp_path / 'bad.json'; bad.write_text('{not json')
    s = Session(tmp_path)
    small_cmd, small = pylines(3, 'line {i}')
    big_cmd, big = pylines(200, '2026-12-01 10:00:00 INFO worker {m} processed item {i} in 12ms')
    api = s.run(claude, [[tool_use('Bash', {'command': small_cmd}, id='toolu_small')],
                         [tool_use('Bash', {'command': big_cmd}, id='toolu_big')]])
    seen = results(api)
    assert seen['toolu_small'] == small.rstrip('\n') and '(caveman)' in seen['toolu_big']
    s.env['CAVEMAN_HOOK_CONFIG'] = str(bad)                       # the hook now fails on every call
    api = s.run(claude, [[tool_use('Bash', {'command': big_cmd}, id='toolu_big2')]])
    assert results(api)['toolu_big2'] == big.rstrip('\n')


def test_read_grep_and_mcp_results_are_views_in_their_own_shape(claude, tmp_path):
    s = Session(tmp_path)
    log = ''.join(f'2026-12-01 10:00:{i % 60:02d} INFO request served id={i} status=200\n' for i in range(700))
    assert len(log) < 50_000    # Claude Code shows an MCP result over ~50,000 characters as a 2 KB preview (see README)
    (s.project / 'server.log').write_text(log)
    api = s.run(claude, [[tool_use('Read', {'file_path': str(s.project / 'server.log')}, id='toolu_read')],
                         [tool_use('Grep', {'pattern': 'status=200', 'path': str(s.project), 'output_mode': 'content'}, id='toolu_grep')],
                         [tool_use('Bash', {'command': f'cat {s.project / "server.log"}'}, id='toolu_cat')],
                         retrieve_step('toolu_cat')])
    seen = results(api)
    assert re.match(r'\s*1\t2026-12-01 10:00:00 INFO request served id=0 ', seen['toolu_read'])   # Claude Code numbers the view's lines
    assert '(caveman)' in seen['toolu_read'] and len(seen['toolu_read']) < len(log) / 5
    assert '(caveman)' in seen['toolu_grep'] and HANDLE.search(seen['toolu_grep'])
    assert seen['toolu_retrieve'] == log                                           # caveman_retrieve's own result is never compressed


def test_host_without_caveman_mcp_gets_only_lossless_views(claude, tmp_path):
    s = Session(tmp_path, '--no-mcp')
    settings = json.loads((s.project / '.claude' / 'settings.json').read_text())
    assert not settings['hooks']['PostToolUse'][0]['hooks'][0]['command'].endswith('--recovery')
    log_cmd, log = pylines(300, '2026-12-01 10:00:00 INFO worker {m} processed item {i} in 12ms')
    rows = [{'id': i, 'name': f'user{i}', 'active': i % 2 == 0, 'score': i * 3} for i in range(200)]
    (s.project / 'rows.json').write_text(json.dumps(rows, indent=2))
    api = s.run(claude, [[tool_use('Bash', {'command': log_cmd}, id='toolu_log')],
                         [tool_use('Bash', {'command': f'cat {s.project / "rows.json"}'}, id='toolu_json')]],
                tools='Bash')
    assert not any(t['name'].startswith('mcp__caveman') for t in api.main_requests()[-1]['tools'])
    seen = results(api)
    assert seen['toolu_log'] == log.rstrip('\n')                  # a log view would be lossy: untouched
    view = seen['toolu_json']
    assert 'caveman' not in view and len(view) < len(json.dumps(rows, indent=2)) / 2
    r = subprocess.run([caveman_exe(), 'toon', 'decode'], input=view.encode(), capture_output=True, timeout=60)
    assert json.loads(r.stdout) == rows                           # TOON: exactly the same data


@pytest.mark.parametrize('scope', ['user', 'local'])
def test_user_and_local_scopes_work_end_to_end(claude, tmp_path, scope):
    s = Session(tmp_path, scope=scope)
    assert not (s.project / '.mcp.json').exists()             # these scopes register the server in ~/.claude.json
    cmd, full = pylines(600, '2026-12-01 10:00:00 INFO worker {m} processed item {i} in 12ms')
    api = s.run(claude, [[tool_use('Bash', {'command': cmd}, id='toolu_big')], retrieve_step('toolu_big')])
    seen = results(api)
    assert '(caveman)' in seen['toolu_big'] and seen['toolu_retrieve'] == full


def test_gateway_tools_are_never_compressed_twice(claude, tmp_path):
    "caveman-mcp as a gateway (its own policy leaves this file alone) beside the same server registered directly: the hook touches only the direct one."
    from _upstreams import install_upstreams
    fs = install_upstreams()['filesystem']
    s = Session(tmp_path)
    rows = [{'id': i, 'name': f'user{i}', 'active': i % 2 == 0, 'score': i * 3} for i in range(200)]
    data = s.project / 'rows.json'
    data.write_text(json.dumps(rows, indent=2))
    cfg = tmp_path / 'gateway.json'
    cfg.write_text(json.dumps({'mcpServers': {'fs': {'command': fs[0], 'args': [*fs[1:], str(s.project)], 'caveman': {'compress': False}}}}))
    mcp = json.loads((s.project / '.mcp.json').read_text())
    mcp['mcpServers']['fsgw'] = {'type': 'stdio', 'command': str(Path(caveman_exe()).with_name('caveman-mcp')), 'args': ['--config', str(cfg)], 'env': {}}
    mcp['mcpServers']['fsdirect'] = {'type': 'stdio', 'command': fs[0], 'args': [*fs[1:], str(s.project)], 'env': {}}
    (s.project / '.mcp.json').write_text(json.dumps(mcp))
    settings = json.loads((s.project / '.claude' / 'settings.json').read_text())
    settings['enabledMcpjsonServers'] += ['fsgw', 'fsdirect']
    (s.project / '.claude' / 'settings.json').write_text(json.dumps(settings))
    def step(body):                           # the gateway starts slower than a plain server: wait until both are connected
        done = tool_results(body)
        last_id, last = (done[-1]['tool_use_id'], result_text(done[-1])) if done else ('', '')
        if last_id == 'toolu_direct': return [text('done')]
        if len(done) > 30: return [text('the MCP servers never came up')]
        if last_id.startswith('toolu_gw') and not last.lstrip().startswith('{'):   # the gateway's upstream still starting: again
            return [tool_use('mcp__fsgw__read_text_file', {'path': str(data)}, id=f'toolu_gw{len(done)}')]
        if last_id.startswith('toolu_gw'): return [tool_use('mcp__fsdirect__read_text_file', {'path': str(data)}, id='toolu_direct')]
        if last.startswith('ready: true') or 'is not enabled in this context' in last:   # connected (the wait tool is offered only while a server connects)
            return [tool_use('mcp__fsgw__read_text_file', {'path': str(data)}, id='toolu_gw')]
        return [tool_use('WaitForMcpServers', {'serverNames': ['fsgw', 'fsdirect']}, id=f'toolu_wait{len(done)}')]
    api = s.run(claude, [step] * 40, tools='WaitForMcpServers,mcp__fsgw__read_text_file,mcp__fsdirect__read_text_file')
    seen = results(api)
    gw_id = [k for k in seen if k.startswith('toolu_gw')][-1]                      # the last read through the gateway
    gw = re.sub(r'\s*<system-reminder>.*', '', seen[gw_id], flags=re.S)   # a reminder with the new server's instructions follows
    assert 'caveman' not in gw and json.loads(gw) == {'content': data.read_text()}    # the gateway left it (Claude Code shows the structured result): so did the hook
    direct = seen['toolu_direct']                                  # the same result from a plain server: the hook's view
    assert '(caveman)' in direct and len(direct) < len(data.read_text()) / 2
    r = subprocess.run([caveman_exe(), 'retrieve', HANDLE.search(direct).group(1)], env=s.env, capture_output=True, timeout=60,
                       stdin=subprocess.DEVNULL)
    assert json.loads(r.stdout) == {'content': data.read_text()}


def hook_server_status(env: dict) -> dict | None:
    "The status of the warm hook server of the configuration `env` (`caveman.hook_server.status`), or None."
    r = subprocess.run([sys.executable, '-c', 'import json; from caveman.hook_server import status; print(json.dumps(status()))'],
                       env=env, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_warm_hook_server_answers_with_the_views_of_the_cold_path(claude, tmp_path):
    "Several hooked calls through the real binary with the warm path on (as users get it): the first starts the hook server and answers in process, the server answers the next ones, and the model sees byte for byte what it sees with the server off."
    outputs = [pylines(300 + 60 * k, f'2026-12-01 10:00:0{k} INFO worker {{m}} run {k} processed item {{i}} in 12ms') for k in range(4)]
    script = [[tool_use('Bash', {'command': cmd}, id=f'toolu_{k}')] for k, (cmd, _) in enumerate(outputs)]
    (tmp_path / 'warm').mkdir(); (tmp_path / 'cold').mkdir()
    warm = Session(tmp_path / 'warm')
    assert 'CAVEMAN_HOOK_SERVER' not in warm.env                      # the default: on
    seen = results(warm.run(claude, script))
    st = hook_server_status(warm.env)
    try:
        assert st is not None and st['calls'] >= 2, st               # the server answered the calls after the first one (or two)
        cold = Session(tmp_path / 'cold', extra_env={'CAVEMAN_HOOK_SERVER': 'off'})
        assert results(cold.run(claude, script)) == seen              # the same views, byte for byte
        assert all('(caveman)' in v and HANDLE.search(v) for v in seen.values())
        r = subprocess.run([caveman_exe(), 'retrieve', HANDLE.search(seen['toolu_3']).group(1)], env=warm.env, capture_output=True,
                           timeout=60, stdin=subprocess.DEVNULL)
        assert r.stdout.decode() == outputs[3][1]                      # the server stored the original in the session's store
    finally:
        import os, signal
        os.kill(st['pid'], signal.SIGTERM) if st else None             # the server this test started


def test_a_read_of_source_counts_no_failures_and_a_tap_run_keeps_its_not_ok_lines(claude, tmp_path):
    "Break test 17: a Read of Python source cut to fit had gap markers counting `except IndexError:` as failure lines (the output profile read source); a TAP run was text, its two `not ok` lines among 6,000 kept ones. The file is now read by its content type's profile; the run is a log whose view keeps them."
    s = Session(tmp_path)
    src = 'import os\nimport sys\n\n\n' + ''.join(            # bodies the code view elides, module-level code it keeps: a view over the cut
        f'def pop_{i}(stack):\n    item = stack.pop()\n    stack.append(item)\n    return item\n\n\n'
        f'try:\n    ITEM_{i} = pop_{i}(STACK)\nexcept IndexError:\n    raise ValueError("Failed to pop item {i}: the stack is empty")\n\n\n'
        for i in range(350))                                   # under Read's 256 KB and 25,000-token limits
    (s.project / 'stacks.py').write_text(src)
    tap_cmd = ("python3 -c \"print('1..6000'); [print(('not ok' if i in (3333, 4780) else 'ok') + f' {i} - item {i} is valid') "
               "for i in range(1, 6001)]\"")
    api = s.run(claude, [[tool_use('Read', {'file_path': str(s.project / 'stacks.py')}, id='toolu_src')],
                         [tool_use('Bash', {'command': tap_cmd}, id='toolu_tap')]])
    seen = results(api)
    assert 'lines of the original elided (caveman)' in seen['toolu_src'] and HANDLE.search(seen['toolu_src']), seen['toolu_src'][-800:]
    assert 'signals×' not in seen['toolu_src'], [l for l in seen['toolu_src'].split('\n') if 'signals×' in l]
    tap = seen['toolu_tap']
    assert '(caveman)' in tap and len(tap) < 20_000, len(tap)
    assert [l for l in tap.split('\n') if l.startswith('not ok')] == ['not ok 3333 - item 3333 is valid', 'not ok 4780 - item 4780 is valid']



def test_a_node_test_run_is_a_log_and_a_merge_keeps_every_conflict(claude, tmp_path):
    "Break tests 19-20 (each command exits 0, as the README asks of a run that may fail: Claude Code hooks no failed command): Node's TAP reporter (`# Subtest:` lines, YAML blocks) read as text and passed through whole; a `git merge` of 300 files read as text, where `CONFLICT` was no failure line: one of two conflicts went into a section marker with no count. A TAP run is now a test run (a log), and a conflict line a failure in prose too."
    s = Session(tmp_path)
    (s.project / 'items.test.mjs').write_text(NODE_T.lstrip('\n')); (s.project / 'merge.sh').write_text(GIT_CONFLICT.lstrip('\n'))
    api = s.run(claude, [[tool_use('Bash', {'command': f'cd {s.project} && node --test --test-reporter=tap items.test.mjs; echo "exit code: $?"'}, id='toolu_node')],
                         [tool_use('Bash', {'command': f'cd {s.project} && sh merge.sh'}, id='toolu_merge')]])
    seen = results(api)
    node, merge = seen['toolu_node'], seen['toolu_merge']
    assert 'lines elided (caveman)' in node and 'of the original' not in node and len(node) < 8_000, node[-1500:]   # the log view, whole: no cut
    assert [l for l in node.split('\n') if l.startswith('not ok')] == ['not ok 613 - item 613 is valid', 'not ok 1207 - item 1207 is valid']
    assert '-1 !== 613' in node and '-1 !== 1207' in node and '# fail 2' in node   # each failure's own message, and the totals
    assert '(caveman)' in merge and HANDLE.search(merge), merge[-1500:]
    assert sorted(l for l in merge.split('\n') if l.startswith('CONFLICT')) == [
        'CONFLICT (content): Merge conflict in f212.txt', 'CONFLICT (content): Merge conflict in f77.txt']
