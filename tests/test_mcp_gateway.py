"""caveman-mcp as a gateway in front of real MCP servers from npm and PyPI, driven by the official SDK client
and by the MCP Inspector CLI.

Upstreams (installed by the test setup, tests/_upstreams.py): `@modelcontextprotocol/server-filesystem`,
`@modelcontextprotocol/server-everything`, `mcp-server-time`, `mcp-server-git`, plus two broken ones made
here (one never answers `initialize`, one exits at once). What is checked, each with the test's own code:
catalogs shrunk with every selection fact kept; a large file read through the filesystem server comes back
as a view whose handle returns the exact bytes (through the gateway and through the `caveman` CLI sharing
the store); small results identical to calling the upstream directly; an upstream killed mid-session
answers `cave_upstream_unavailable` and comes back; a silent upstream does not hold the others back;
progress of server-everything's long-running tool reaches the client; broken configs are clear errors.
"""
import asyncio, json, os, re, shutil, signal, subprocess, sys, time
from pathlib import Path

import pytest

from _mcp_client import session
from conftest import ROOT, server_command, child_env
from _upstreams import install_upstreams
from test_mcp_inspector import inspector   # noqa: F401  the fixture that installs the pinned Inspector from npm

pytestmark = pytest.mark.slow
NAME = re.compile(r'[A-Za-z0-9_.-]{1,128}')


@pytest.fixture(scope='module')
def upstreams():
    return install_upstreams()


@pytest.fixture
def world(upstreams, tmp_path):
    "A config with the four real upstreams, a filesystem root holding real output, a git repo, and a store shared with the CLI."
    root = tmp_path / 'files'; root.mkdir()
    log = subprocess.run([sys.executable, '-m', 'pip', 'inspect'], capture_output=True, timeout=300).stdout   # real, captured now
    assert len(log) > 20_000
    (root / 'pip-inspect.json').write_bytes(log)
    (root / 'small.txt').write_text('hello\n')
    repo = tmp_path / 'repo'
    subprocess.run(['git', 'init', '-q', str(repo)], check=True, timeout=60)
    (repo / 'a.txt').write_text('a\n')
    gitenv = child_env(GIT_AUTHOR_NAME='t', GIT_AUTHOR_EMAIL='t@e', GIT_COMMITTER_NAME='t', GIT_COMMITTER_EMAIL='t@e')
    subprocess.run(['git', 'add', '.'], cwd=repo, check=True, timeout=60)
    subprocess.run(['git', 'commit', '-qm', 'first'], cwd=repo, check=True, timeout=60, env=gitenv)
    servers = {'files': {'command': upstreams['filesystem'][0], 'args': upstreams['filesystem'][1:] + [str(root)]},
               'everything': {'command': upstreams['everything'][0], 'args': upstreams['everything'][1:]},
               'time': {'command': upstreams['time'][0], 'args': ['--local-timezone', 'UTC']},
               'git': {'command': upstreams['git'][0], 'args': ['--repository', str(repo)]}}
    cfg = tmp_path / 'servers.json'
    cfg.write_text(json.dumps({'mcpServers': servers}))
    env = child_env(CAVEMAN_CCR_DB=str(tmp_path / 'store' / 'ccr.db'), CAVEMAN_HOME=str(tmp_path / 'home'))
    return {'root': root, 'cfg': cfg, 'servers': servers, 'env': env, 'tmp': tmp_path, 'log': log}


client = session


def gateway(world) -> list[str]: return server_command() + ['--config', str(world['cfg'])]


def text(result) -> str:
    return ''.join(b.text for b in result.content if b.type == 'text')


def profile(tool) -> dict:
    "The test's own selection facts of a tool: parameter names, required ones, enum values, parameter types."
    schema = tool.input_schema or {}
    props = schema.get('properties') or {}
    return {'params': sorted(props), 'required': sorted(schema.get('required') or []),
            'enums': {k: v.get('enum') for k, v in props.items() if isinstance(v, dict) and 'enum' in v},
            'types': {k: v.get('type') for k, v in props.items() if isinstance(v, dict)}}


async def full_listing(s, servers, limit: float = 90.0):
    "`tools/list` once every server is in it: a server slow to start on a loaded machine joins later (the gateway then sends list_changed)."
    t0 = time.monotonic()
    while True:
        tools = (await s.list_tools()).tools
        if all(any(t.name.startswith(f'{n}__') for t in tools) for n in servers) or time.monotonic() - t0 > limit: return tools
        await asyncio.sleep(1)


def test_catalogs_are_shrunk_and_keep_every_selection_fact(world, tmp_path):
    errlog = open(tmp_path / 'err.log', 'w+')
    async def go():
        direct = {}
        for name, spec in world['servers'].items():
            async with client([spec['command'], *spec['args']], world['env'], errlog) as s:
                direct[name] = (await s.list_tools()).tools
        async with client(gateway(world), world['env'], errlog) as s:
            first = await full_listing(s, direct)
        async with client(gateway(world), world['env'], errlog) as s:
            second = await full_listing(s, direct)
        return direct, first, second
    direct, first, second = asyncio.run(go())
    assert [t.model_dump() for t in first] == [t.model_dump() for t in second]          # deterministic catalog
    served = {t.name: t for t in first}
    assert {'caveman_retrieve', 'caveman_stats'} <= set(served) and 'caveman_compress' not in served
    before = after = 0
    for server, tools in direct.items():
        assert tools, server
        for t in tools:
            g = served[f'{server}__{t.name}']
            assert NAME.fullmatch(g.name)
            assert profile(g) == profile(t), g.name
            before += len(json.dumps(t.model_dump(by_alias=True, exclude_none=True), separators=(',', ':')))
            after += len(json.dumps({**g.model_dump(by_alias=True, exclude_none=True), 'name': t.name}, separators=(',', ':')))
    assert len(served) == sum(map(len, direct.values())) + 2
    assert after < before, (before, after)


def test_large_file_is_a_view_whose_handle_returns_the_exact_bytes(world, tmp_path):
    errlog = open(tmp_path / 'err.log', 'w+')
    path = str(world['root'] / 'pip-inspect.json')
    async def go():
        async with client(gateway(world), world['env'], errlog) as s:
            res = await s.call_tool('files__read_text_file', {'path': path})
            view = text(res)
            handle = re.search(r'original stored as (ccr_[0-9a-f]{32})', view)[1]
            back = await s.call_tool('caveman_retrieve', {'recovery_handle': handle})
            small = await s.call_tool('files__read_text_file', {'path': str(world['root'] / 'small.txt')})
            stats = json.loads(text(await s.call_tool('caveman_stats', {})))
            return res, view, handle, text(back), text(small), stats
    res, view, handle, back, small, stats = asyncio.run(go())
    original = world['log'].decode()
    assert len(view) < len(original) / 2 and '(caveman)' in view
    assert res.structured_content == {'content': view}                 # still valid against its outputSchema
    assert back == original
    assert small == 'hello\n'
    assert stats['tokens_before'] > stats['tokens_after'] > 0
    cli = subprocess.run(['caveman', 'retrieve', handle], capture_output=True, env=world['env'], timeout=120)
    assert cli.returncode == 0 and cli.stdout == world['log']


def test_small_results_are_untouched(world, tmp_path):
    errlog = open(tmp_path / 'err.log', 'w+')
    spec = world['servers']['everything']
    async def go():
        async with client([spec['command'], *spec['args']], world['env'], errlog) as s:
            direct = await s.call_tool('echo', {'message': 'hello from the test'})
            dsum = await s.call_tool('get-sum', {'a': 2, 'b': 40})
        async with client(gateway(world), world['env'], errlog) as s:
            via = await s.call_tool('everything__echo', {'message': 'hello from the test'})
            vsum = await s.call_tool('everything__get-sum', {'a': 2, 'b': 40})
            tz = await s.call_tool('time__get_current_time', {'timezone': 'UTC'})
        return direct, dsum, via, vsum, tz
    direct, dsum, via, vsum, tz = asyncio.run(go())
    assert via.model_dump() == direct.model_dump() and vsum.model_dump() == dsum.model_dump()
    assert not tz.is_error and '"timezone": "UTC"' in text(tz)


def child_pids(marker: str) -> list[int]:
    pids = []
    for d in Path('/proc').iterdir():
        if d.name.isdigit():
            try: cmd = (d / 'cmdline').read_bytes().split(b'\0')
            except OSError: continue
            if any(marker.encode() == c for c in cmd): pids.append(int(d.name))
    return pids


def test_an_upstream_killed_mid_session_answers_unavailable_then_comes_back(world, tmp_path):
    errlog = open(tmp_path / 'err.log', 'w+')
    small = str(world['root'] / 'small.txt')
    async def go():
        async with client(gateway(world), world['env'], errlog) as s:
            assert text(await s.call_tool('files__read_text_file', {'path': small})) == 'hello\n'
            pids = child_pids(str(world['root']))
            assert pids
            for p in pids: os.kill(p, signal.SIGKILL)
            await asyncio.sleep(0.5)
            down = await s.call_tool('files__read_text_file', {'path': small})
            other = await s.call_tool('everything__echo', {'message': 'still here'})
            again = await s.call_tool('files__read_text_file', {'path': small})
            return down, other, again
    down, other, again = asyncio.run(go())
    assert down.is_error and json.loads(text(down))['error'] == 'cave_upstream_unavailable'
    assert not other.is_error and 'still here' in text(other)
    assert not again.is_error and text(again) == 'hello\n'


def test_a_silent_upstream_does_not_hold_the_others_back(world, tmp_path):
    errlog = open(tmp_path / 'err.log', 'w+')
    cfg = json.loads(world['cfg'].read_text())
    cfg['mcpServers']['silent'] = {'command': sys.executable, 'args': ['-c', 'import sys; sys.stdin.read()']}
    cfg['mcpServers']['gone'] = {'command': sys.executable, 'args': ['-c', 'raise SystemExit(3)']}
    world['cfg'].write_text(json.dumps(cfg))
    async def go():
        t0 = time.monotonic()
        async with client(gateway(world), world['env'], errlog) as s:
            t_init = time.monotonic() - t0
            names = [t.name for t in (await s.list_tools()).tools]
            echo = await s.call_tool('everything__echo', {'message': 'x'})
            gone = await s.call_tool('gone__anything', {})
            return t_init, names, echo, gone
    t_init, names, echo, gone = asyncio.run(go())
    assert t_init < 10                                    # initialize is answered before any upstream is up
    assert any(n.startswith('files__') for n in names) and not any(n.startswith(('silent__', 'gone__')) for n in names)
    assert not echo.is_error
    assert gone.is_error and json.loads(text(gone))['error'] == 'cave_upstream_unavailable'   # its server's namespace: down, not unknown


def test_progress_of_a_long_running_tool_reaches_the_client(world, tmp_path):
    errlog = open(tmp_path / 'err.log', 'w+')
    seen = []
    async def go():
        async with client(gateway(world), world['env'], errlog) as s:
            async def on_progress(p, total, message): seen.append((p, total))
            return await s.call_tool('everything__trigger-long-running-operation', {'duration': 2, 'steps': 4}, progress_callback=on_progress)
    res = asyncio.run(go())
    assert not res.is_error, text(res)
    assert len(seen) >= 2 and seen[-1][0] == seen[-1][1] == 4, seen


@pytest.mark.parametrize('config,needle', [
    ('{not json', 'is not JSON'),
    (json.dumps({'mcpServers': {'a': {'command': 'node', 'argz': []}}}), "server 'a': unknown key 'argz'"),
    (json.dumps({'mcpServers': {'b': {'args': ['x']}}}), "server 'b': needs exactly one of"),
    (json.dumps({'mcpServers': {'c': {'command': 'no-such-mcp-server-anywhere'}}}), "server 'c': command not found"),
])
def test_broken_configs_are_clear_errors(tmp_path, config, needle):
    cfg = tmp_path / 'bad.json'; cfg.write_text(config)
    r = subprocess.run(server_command() + ['--config', str(cfg)], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert (r.returncode, r.stdout) == (2, '')
    assert needle in r.stderr and 'Traceback' not in r.stderr and r.stderr.count('\n') == 1


def test_the_short_form_serves_one_upstream_without_namespaces(world, tmp_path):
    spec = world['servers']['everything']
    errlog = open(tmp_path / 'err.log', 'w+')
    async def go():
        async with client(server_command() + ['--', spec['command'], *spec['args']], world['env'], errlog) as s:
            return [t.name for t in (await s.list_tools()).tools]
    names = asyncio.run(go())
    assert 'echo' in names and 'caveman_retrieve' in names and not any('__' in n for n in names)


def test_the_short_form_server_is_named_upstream_for_the_policy(world, tmp_path):
    "`caveman-mcp -- node …/server-filesystem ROOT`: a rule naming mcp__upstream__<tool> holds, whatever the command is called."
    spec = world['servers']['files']
    path = str(world['root'] / 'pip-inspect.json')
    env = {**world['env'], 'CAVEMAN_EXCLUDE': 'mcp__upstream__read_text_file'}
    errlog = open(tmp_path / 'err.log', 'w+')
    async def go():
        async with client(server_command() + ['--', spec['command'], *spec['args']], env, errlog) as s:
            return text(await s.call_tool('read_text_file', {'path': path})), text(await s.call_tool('read_file', {'path': path}))
    excluded, other = asyncio.run(go())
    assert excluded == world['log'].decode()                     # the rule named it: untouched
    assert len(other) < len(excluded) / 2                        # the same bytes through a tool the rule does not name: a view


def test_lossless_only_gives_the_hooks_lossless_view(world, tmp_path):
    "CAVEMAN_LOSSLESS_ONLY=1: a large JSON file read through the gateway comes back as the lossless view the hook makes"
    " (shorter, no handle, the same JSON value read back by the test's own decoders), not passed through."
    import toon_format
    from caveman.hooks import compress_text
    from caveman.policy import Policy
    path = str(world['root'] / 'pip-inspect.json')
    env = {**world['env'], 'CAVEMAN_LOSSLESS_ONLY': '1'}
    errlog = open(tmp_path / 'err.log', 'w+')
    async def go():
        async with client(gateway(world), env, errlog) as s:
            return text(await s.call_tool('files__read_text_file', {'path': path}))
    view = asyncio.run(go())
    original = world['log'].decode()
    assert len(view) < len(original)                  # no handle line: the view decodes to the whole value (below)
    try: value = json.loads(view)
    except ValueError: value = toon_format.loads(view)
    assert value == json.loads(original)
    assert view == compress_text(original, True, Policy(lossless_only=True))      # one policy, the same view as the hook's


def test_inspector_cli_through_the_gateway(world, inspector, tmp_path):
    "The official TypeScript client: list the gateway's tools, call an upstream tool, retrieve through the gateway."
    wrapper = tmp_path / 'gateway.sh'                     # the Inspector reads --config itself: hand it one command
    wrapper.write_text(f'#!/bin/sh\nexec {" ".join(gateway(world))}\n'); wrapper.chmod(0o755)
    env = child_env(only=(), PATH=str(Path(shutil.which('node')).parent) + ':' + os.environ['PATH'], HOME=str(tmp_path))
    def run(*args):
        r = subprocess.run(inspector + [str(wrapper), '-e', f"CAVEMAN_CCR_DB={world['env']['CAVEMAN_CCR_DB']}", *args],
                           capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL, env=env)
        assert r.returncode == 0, (r.stdout[-2000:], r.stderr[-2000:])
        return json.loads(r.stdout)
    names = [t['name'] for t in run('--method', 'tools/list')['tools']]
    assert 'files__read_text_file' in names and 'caveman_retrieve' in names
    out = run('--method', 'tools/call', '--tool-name', 'files__read_text_file', '--tool-arg', f"path={world['root'] / 'pip-inspect.json'}")
    view = out['content'][0]['text']
    handle = re.search(r'original stored as (ccr_[0-9a-f]{32})', view)[1]
    back = run('--method', 'tools/call', '--tool-name', 'caveman_retrieve', '--tool-arg', f'recovery_handle={handle}')
    assert back['content'][0]['text'] == world['log'].decode()


def test_upstreams_get_the_hosts_environment_with_their_env_over_it(world, tmp_path):
    "As a host runs them: the gateway's whole environment (the host's) plus the entry's `env`, `${VAR}`s expanded; secrets never logged."
    spec = world['servers']['everything']
    cfg = tmp_path / 'env.json'
    cfg.write_text(json.dumps({'mcpServers': {'everything': {'command': spec['command'], 'args': spec['args'],
                                                             'env': {'FROM_ENTRY': 'entry', 'SHADOWED': 'entry wins',
                                                                     'EXPANDED': '${HOST_ONLY_TOKEN}', 'DEFAULTED': '${UNSET_HERE:-fallback}'}}}}))
    env = {**world['env'], 'HOST_ONLY_TOKEN': 'tok-4f1e9c', 'SHADOWED': 'host', 'CAVEMAN_EXCLUDE': 'mcp__everything__get-env'}
    env.pop('UNSET_HERE', None)
    errlog = open(tmp_path / 'err.log', 'w+')
    async def go():
        async with client(server_command() + ['--config', str(cfg)], env, errlog) as s:
            return await s.call_tool('get-env', {})
    res = asyncio.run(go())
    seen = json.loads(text(res))
    assert seen['HOST_ONLY_TOKEN'] == 'tok-4f1e9c' and seen['HOME'] == env['HOME']           # inherited, as from the host
    assert seen['CAVEMAN_CCR_DB'] == env['CAVEMAN_CCR_DB']
    assert (seen['FROM_ENTRY'], seen['SHADOWED'], seen['EXPANDED'], seen['DEFAULTED']) == ('entry', 'entry wins', 'tok-4f1e9c', 'fallback')
    errlog.seek(0)
    assert 'tok-4f1e9c' not in errlog.read()


def test_cancelling_a_long_call_interrupts_the_upstream_and_the_gateway_keeps_serving(world, tmp_path):
    "The SDK client cancels a call (it sends notifications/cancelled); the gateway cancels its upstream call the same way."
    notes = tmp_path / 'slow.log'
    cfg = json.loads(world['cfg'].read_text())
    cfg['mcpServers'] = {'slow': {'command': sys.executable, 'args': [str(ROOT / 'tests' / '_slow_upstream.py')],
                                  'env': {'SLOW_UPSTREAM_LOG': str(notes)}},
                         'everything': cfg['mcpServers']['everything']}
    world['cfg'].write_text(json.dumps(cfg))
    errlog = open(tmp_path / 'err.log', 'w+')
    lines = lambda: notes.read_text().splitlines() if notes.exists() else []
    async def until(pred, limit=60.0):
        t0 = time.monotonic()
        while not pred() and time.monotonic() - t0 < limit: await asyncio.sleep(0.1)
    async def go():
        async with client(gateway(world), world['env'], errlog) as s:
            call = asyncio.ensure_future(s.call_tool('slow__sleep', {'seconds': 600}))
            await until(lambda: 'start 600' in lines())
            assert lines() == ['start 600'], lines()
            call.cancel()                                     # the SDK sends notifications/cancelled to the gateway
            with pytest.raises(asyncio.CancelledError): await call
            await until(lambda: 'cancelled 600' in lines())
            after = lines()
            echo = await s.call_tool('everything__echo', {'message': 'still serving'})
            again = await s.call_tool('slow__sleep', {'seconds': 0})    # the same upstream session still serves
            return after, echo, again
    after, echo, again = asyncio.run(go())
    assert after == ['start 600', 'cancelled 600']            # interrupted upstream, never finished
    assert not echo.is_error and 'still serving' in text(echo)
    assert not again.is_error and text(again) == 'slept 0 s'
    assert lines() == ['start 600', 'cancelled 600', 'start 0', 'finished 0']


def test_an_upstream_that_fails_at_its_first_start_is_retried_and_announced(world, tmp_path):
    "A real server (mcp-server-time) whose first starts fail: its namespace answers cave_upstream_unavailable, never"
    " cave_unknown_tool; the gateway retries it with backoff on its own, and once it is up the client hears"
    " notifications/tools/list_changed and its tools answer."
    flag = tmp_path / 'time-may-start'
    script = f'test -e {flag} && exec {world["servers"]["time"]["command"]} --local-timezone UTC; echo not yet >&2; exit 3'
    cfg = tmp_path / 'retry.json'
    cfg.write_text(json.dumps({'mcpServers': {'time': {'command': '/bin/sh', 'args': ['-c', script]},
                                              'everything': world['servers']['everything']}}))
    errlog = open(tmp_path / 'err.log', 'w+')
    changed = []
    async def on_message(m):
        m = getattr(m, 'root', m)
        if getattr(m, 'method', None) == 'notifications/tools/list_changed': changed.append(time.monotonic())
    async def go():
        async with session(server_command() + ['--config', str(cfg)], world['env'], errlog, on_message) as s:
            first = [t.name for t in (await s.list_tools()).tools]
            down = await s.call_tool('time__get_current_time', {'timezone': 'UTC'})
            flag.write_text('')
            t0 = time.monotonic()
            while not changed and time.monotonic() - t0 < 120: await asyncio.sleep(0.2)
            later = [t.name for t in (await s.list_tools()).tools]
            up = await s.call_tool('time__get_current_time', {'timezone': 'UTC'})
            return first, down, later, up
    first, down, later, up = asyncio.run(go())
    assert 'everything__echo' in first and not any(n.startswith('time__') for n in first)
    assert down.is_error and json.loads(text(down))['error'] == 'cave_upstream_unavailable', text(down)
    assert changed, 'no notifications/tools/list_changed'
    assert 'time__get_current_time' in later
    assert not up.is_error and '"timezone": "UTC"' in text(up)


def test_at_eof_a_hung_upstream_call_does_not_keep_the_gateway_alive(world, tmp_path):
    "The client closes stdin while a call hangs in an upstream: the gateway cancels it, closes its upstreams and exits."
    notes = tmp_path / 'slow.log'
    cfg = tmp_path / 'slow.json'
    cfg.write_text(json.dumps({'mcpServers': {'slow': {'command': sys.executable, 'args': [str(ROOT / 'tests' / '_slow_upstream.py')],
                                                       'env': {'SLOW_UPSTREAM_LOG': str(notes)}}}}))
    p = subprocess.Popen(server_command() + ['--config', str(cfg)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=open(tmp_path / 'err.log', 'wb'), env=world['env'])
    try:
        send = lambda m: (p.stdin.write((json.dumps(m) + '\n').encode()), p.stdin.flush())
        send({'jsonrpc': '2.0', 'id': 1, 'method': 'initialize', 'params': {'protocolVersion': '2025-06-18', 'capabilities': {},
                                                                         'clientInfo': {'name': 't', 'version': '1'}}})
        assert json.loads(p.stdout.readline())['id'] == 1
        send({'jsonrpc': '2.0', 'method': 'notifications/initialized'})
        send({'jsonrpc': '2.0', 'id': 2, 'method': 'tools/call', 'params': {'name': 'sleep', 'arguments': {'seconds': 600}}})
        t0 = time.monotonic()
        while not (notes.exists() and 'start 600' in notes.read_text()) and time.monotonic() - t0 < 90: time.sleep(0.1)
        assert 'start 600' in notes.read_text()
        p.stdin.close()
        code = p.wait(timeout=120)                        # before the fix: it waited the whole 600 s
    finally:
        if p.poll() is None: p.kill(); p.wait()
    assert code == 0
    assert 'finished 600' not in notes.read_text()
