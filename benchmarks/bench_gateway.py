"""caveman-mcp as a gateway in front of real MCP servers, side by side with calling them directly.

Upstreams: `@modelcontextprotocol/server-filesystem`, `@modelcontextprotocol/server-everything` (npm),
`mcp-server-time`, `mcp-server-git` (PyPI), installed as the tests install them (tests/_upstreams.py), and
`caveman-mcp` itself as a fifth. All through the official SDK client over stdio.

- Catalog: compact o200k tokens of each upstream's `tools/list` direct vs through the gateway (its tools
  as the gateway serves them, with the gateway's own two tools counted separately in the combined row).
- Results: o200k tokens (and call time) of large real results direct vs through the gateway (a `pip inspect` JSON and
  this repository's `git log -p`, read through server-filesystem; 200 commits of `git_log` through mcp-server-git).
- Per-call overhead: `everything`'s `echo` (a small result, never compressed) direct vs through the gateway,
  p50/p95 of 60 calls after 5 warm-up calls, alternating.
- Start-up: spawn -> `initialize` answered, and spawn -> first `tools/list` with all five upstreams up.
- Memory: the gateway process's peak RSS (VmHWM) after the runs above.
"""
import asyncio, json, os, statistics, subprocess, sys, tempfile, time
from contextlib import asynccontextmanager
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from caveman.tokens import count_tokens

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / 'tests'))


class _NoPytest:
    "tests/_upstreams.py reports install failures with pytest.fail; outside pytest that is a SystemExit."
    @staticmethod
    def fail(msg): raise SystemExit(msg)


@asynccontextmanager
async def client(command, env, errlog):
    async with stdio_client(StdioServerParameters(command=command[0], args=command[1:], env=env), errlog=errlog) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            yield s


def compact_tokens(obj) -> int: return count_tokens(json.dumps(obj, separators=(',', ':'), ensure_ascii=False))


def pct(a, b) -> str: return f'{(a - b) / a * 100:.1f}%' if a else '—'


def run() -> str:
    try:
        import _upstreams
        _upstreams.pytest = _NoPytest
        ups = _upstreams.install_upstreams()
    except SystemExit as e: return f'## Gateway\n\nnot measured: {e}\n'
    tmp = Path(tempfile.mkdtemp(prefix='bench-gw-'))
    root = tmp / 'files'; root.mkdir()
    inspect = subprocess.run([sys.executable, '-m', 'pip', 'inspect'], capture_output=True, timeout=300).stdout
    (root / 'pip-inspect.json').write_bytes(inspect)
    gitp = subprocess.run(['git', 'log', '-p', '-n', '30'], cwd=ROOT, capture_output=True, timeout=300).stdout
    (root / 'git-log-p.diff').write_bytes(gitp)
    repo = ROOT
    servers = {'files': ups['filesystem'] + [str(root)], 'everything': ups['everything'], 'time': ups['time'],
               'git': ups['git'] + ['--repository', str(repo)], 'caveman': [str(Path(sys.executable).with_name('caveman-mcp'))]}
    cfg = tmp / 'servers.json'
    cfg.write_text(json.dumps({'mcpServers': {n: {'command': c[0], 'args': c[1:], **({'env': {'CAVEMAN_MCP_EPHEMERAL': '1'}} if n == 'caveman' else {})}
                                              for n, c in servers.items()}}))
    env = {**os.environ, 'CAVEMAN_CCR_DB': str(tmp / 'store' / 'ccr.db'), 'CAVEMAN_HOME': str(tmp / 'home')}
    gw = [str(Path(sys.executable).with_name('caveman-mcp')), '--config', str(cfg)]
    errlog = open(tmp / 'stderr.log', 'w+')

    async def measure():
        direct = {}
        for name, cmd in servers.items():
            async with client(cmd, {**env, 'CAVEMAN_MCP_EPHEMERAL': '1'}, errlog) as s:
                direct[name] = [t.model_dump(by_alias=True, exclude_none=True) for t in (await s.list_tools()).tools]
        t0 = time.perf_counter()
        async with client(gw, env, errlog) as g:
            t_init = time.perf_counter() - t0
            served = [t.model_dump(by_alias=True, exclude_none=True) for t in (await g.list_tools()).tools]
            t_list = time.perf_counter() - t0
            results = []
            async def pair(d, tool, args, label):
                t = time.perf_counter(); a = await d.call_tool(tool, args); ta = time.perf_counter() - t
                t = time.perf_counter(); b = await g.call_tool(f'{label}__{tool}', args); tb = time.perf_counter() - t
                return count_tokens(a.content[0].text), count_tokens(b.content[0].text), ta, tb
            async with client(servers['files'], env, errlog) as d:
                for f in ('pip-inspect.json', 'git-log-p.diff'):
                    results.append((f'{f} (server-filesystem `read_text_file`)', *await pair(d, 'read_text_file', {'path': str(root / f)}, 'files')))
            async with client(servers['git'], env, errlog) as d:
                results.append(('200 commits (mcp-server-git `git_log`)', *await pair(d, 'git_log', {'repo_path': str(repo), 'max_count': 200}, 'git')))
            async with client(servers['everything'], env, errlog) as d:
                td, tg = [], []
                for i in range(65):
                    for s, name, out in ((d, 'echo', td), (g, 'everything__echo', tg)):
                        t = time.perf_counter(); await s.call_tool(name, {'message': f'ping {i}'}); out.append(time.perf_counter() - t)
            pid = [p for p in Path('/proc').iterdir() if p.name.isdigit() and str(cfg).encode() in (p / 'cmdline').read_bytes()] if True else []
            hwm = ''
            for p in pid:
                try: hwm = next(l.split(':')[1].strip() for l in (p / 'status').read_text().splitlines() if l.startswith('VmHWM'))
                except (OSError, StopIteration): pass
        return direct, served, t_init, t_list, results, td[5:], tg[5:], hwm

    direct, served, t_init, t_list, results, td, tg, hwm = asyncio.run(measure())
    by_name = {t['name']: t for t in served}
    rows, tb, ta = [], 0, 0
    for name, tools in direct.items():
        b = compact_tokens(tools)
        a = compact_tokens([{**by_name[f'{name}__{t["name"]}'], 'name': t['name']} for t in tools])
        rows.append(f'| {name} | {len(tools)} | {b:,} | {a:,} | {pct(b, a)} |'); tb += b; ta += a
    own = compact_tokens([t for t in served if t['name'] in ('caveman_retrieve', 'caveman_stats')])
    q = lambda xs, p: statistics.quantiles(xs, n=100)[p - 1] * 1000
    out = ['## Gateway: caveman-mcp --config in front of five real MCP servers', '',
           '| upstream | tools | catalog tokens direct | through the gateway | saved |', '|---|---:|---:|---:|---:|', *rows,
           f'| **combined** | {sum(map(len, direct.values()))} | {tb:,} | {ta:,} (+{own:,} for caveman_retrieve and caveman_stats) | {pct(tb, ta + own)} net |', '',
           '| large result | tokens direct | through the gateway | saved | call ms direct | through the gateway (incl. compression) |',
           '|---|---:|---:|---:|---:|---:|',
           *[f'| {f} | {a:,} | {b:,} | {pct(a, b)} | {ta * 1000:.0f} | {tb * 1000:.0f} |' for f, a, b, ta, tb in results], '',
           f'Per-call overhead, `echo` (small, passed through): direct p50 {q(td, 50):.1f} ms / p95 {q(td, 95):.1f} ms; '
           f'through the gateway p50 {q(tg, 50):.1f} ms / p95 {q(tg, 95):.1f} ms — **{q(tg, 50) - q(td, 50):+.1f} ms at p50** (target <= 5 ms plus compression).',
           f'Start-up with five upstreams: `initialize` answered {t_init * 1000:.0f} ms after spawn; first `tools/list` with every upstream up {t_list * 1000:.0f} ms after spawn.',
           f'Gateway process peak RSS: {hwm or "n/a"}.']
    return '\n'.join(out) + '\n'


if __name__ == '__main__': print(run())
