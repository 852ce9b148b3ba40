"""caveman-mcp across protocol versions and transports: Streamable HTTP beside stdio, many HTTP clients at once,
and the stateless cold start (issue 16).

- Round trip: one `caveman_compress` of a ~100 KB JSON payload (the 13 issues of the corpus
  `json_github_list_issues.json` three times over, 2-space indent: 107,204 bytes) through the official
  SDK client (`mcp.Client`), after 3 warm-up calls; p50/p95 of 40 calls. Over stdio and over HTTP
  (`caveman-mcp --http 127.0.0.1:0`, loopback), each in the stateless 2026-07-28 protocol and in the
  handshake (`mode="legacy"`, 2025-11-25, one HTTP session).
- Load: 10 SDK clients over HTTP at once (stateless, each its own `clientInfo`), 100 `caveman_compress`
  calls each on a 7.6 KB log excerpt; errors (exceptions and `isError` results; must be 0) and the
  p50/p95 of all 1,000 calls. Both cores of the bench machine serve and drive the load.
- Cold start to `server/discover`: spawn the installed `caveman-mcp`, write one stateless
  `server/discover` line, read the answer (raw pipes, median of 15 spawns) — what a 2026-07-28 host such
  as Claude Code waits for, beside the same for `initialize`.
"""
import asyncio, json, os, shutil, statistics, subprocess, sys, tempfile, time
from pathlib import Path

from mcp import Client, Implementation, StdioServerParameters

from _common import SPAWNS, cold_starts, pct, server
from caveman.corpus import corpus_path

WARM, CALLS, CLIENTS, LOAD_CALLS = 3, 40, 10, 100
META = {'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {},
        'io.modelcontextprotocol/clientInfo': {'name': 'bench', 'version': '0'}}
DISCOVER = json.dumps({'jsonrpc': '2.0', 'id': 0, 'method': 'server/discover', 'params': {'_meta': META}}).encode() + b'\n'
INIT = (b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},'
        b'"clientInfo":{"name":"bench","version":"0"}}}\n')


class Http:
    "`caveman-mcp --http 127.0.0.1:0` for the duration of a `with`."
    def __init__(self, exe: str, env: dict): self.exe, self.env = exe, env
    def __enter__(self):
        self.p = subprocess.Popen([self.exe, '--http', '127.0.0.1:0'], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, env=self.env, text=True)
        for line in self.p.stderr:
            if 'listening on ' in line: self.url = line.split('listening on ', 1)[1].strip(); break
        else: raise SystemExit('caveman-mcp --http did not start')
        return self
    def __exit__(self, *exc):
        self.p.terminate(); rc = self.p.wait(60)
        if rc != 0 and exc[0] is None: raise SystemExit(f'caveman-mcp --http exited {rc} on SIGTERM')


async def round_trips(target, mode: str, text: str) -> tuple[list[float], dict]:
    async with Client(target, mode=mode, read_timeout_seconds=120) as c:
        ts = []
        for i in range(WARM + CALLS):
            t = time.perf_counter()
            res = await c.call_tool('caveman_compress', {'input': text})
            if i >= WARM: ts.append(time.perf_counter() - t)
        p = json.loads(res.content[0].text)
        assert not res.is_error and p['recovery_handle'], p
        return ts, p


async def load(url: str, text: str) -> tuple[list[float], int]:
    async def one(k: int):
        ts, errors = [], 0
        try:
            async with Client(url, mode='2026-07-28', read_timeout_seconds=120, client_info=Implementation(name=f'load-{k}', version='0')) as c:
                for _ in range(LOAD_CALLS):
                    t = time.perf_counter()
                    try:
                        res = await c.call_tool('caveman_compress', {'input': text})
                        errors += bool(res.is_error)
                    except Exception: errors += 1
                    ts.append(time.perf_counter() - t)
        except Exception: errors += LOAD_CALLS - len(ts)
        return ts, errors
    results = await asyncio.gather(*[one(k) for k in range(CLIENTS)])
    return [t for ts, _ in results for t in ts], sum(e for _, e in results)


def run() -> str:
    exe = server()
    text = json.dumps(json.loads(corpus_path('json_github_list_issues.json').read_text()) * 3, indent=2)
    small = corpus_path('log_pytest_requests_failures.log').read_text(encoding='utf-8')[:7600]
    with tempfile.TemporaryDirectory() as tmp:
        env = {k: v for k, v in os.environ.items() if not k.startswith('CAVEMAN_')}
        env['CAVEMAN_CCR_DB'] = os.path.join(tmp, 'ccr.db')
        disc = cold_starts(exe, env, DISCOVER, lambda r: r['supportedVersions'][0] == '2026-07-28' or sys.exit(f'bad discover {r}'))
        init = cold_starts(exe, env, INIT, lambda r: r['protocolVersion'] == '2025-11-25' or sys.exit(f'bad initialize {r}'))
        stdio = StdioServerParameters(command=exe, args=[], env=env)
        rt = {('stdio', '2026-07-28'): asyncio.run(round_trips(stdio, '2026-07-28', text)),
              ('stdio', 'legacy'): asyncio.run(round_trips(stdio, 'legacy', text))}
        with Http(exe, env) as h:
            rt[('HTTP', '2026-07-28')] = asyncio.run(round_trips(h.url, '2026-07-28', text))
            rt[('HTTP', 'legacy')] = asyncio.run(round_trips(h.url, 'legacy', text))
            t0 = time.perf_counter()
            lts, errors = asyncio.run(load(h.url, small))
            wall = time.perf_counter() - t0
    p = rt[('stdio', '2026-07-28')][1]
    md = ['## MCP protocols and transports: HTTP beside stdio, load, stateless cold start', '',
          f'`caveman_compress` of {len(text.encode()):,} bytes of JSON ({p["tokens_before"]:,} -> {p["tokens_after"]:,} tokens) '
          f'through the SDK client, {CALLS} calls after {WARM} warm-ups:', '',
          '| transport | protocol | p50 (ms) | p95 (ms) |', '|---|---|---:|---:|']
    for (transport, mode), (ts, _) in rt.items():
        label = '2026-07-28 (stateless)' if mode == '2026-07-28' else '2025-11-25 (handshake)'
        md.append(f'| {transport} | {label} | {statistics.median(ts)*1e3:.1f} | {pct(ts, 95)*1e3:.1f} |')
    md += ['', f'{CLIENTS} concurrent HTTP clients x {LOAD_CALLS} `caveman_compress` calls ({len(small.encode()):,}-byte log excerpt, '
           f'stateless, one `clientInfo` each): **{errors} errors** of {CLIENTS * LOAD_CALLS} (must be 0); per call p50 '
           f'{statistics.median(lts)*1e3:.1f} ms, p95 **{pct(lts, 95)*1e3:.1f} ms**; {CLIENTS * LOAD_CALLS / wall:.0f} calls/s over {wall:.1f} s.',
           '',
           f'Cold start, spawn -> `server/discover` answered (stdio, raw pipes, median of {SPAWNS}): **{statistics.median(disc)*1e3:.0f} ms** '
           f'(min {min(disc)*1e3:.0f}, max {max(disc)*1e3:.0f}); spawn -> `initialize` answered: {statistics.median(init)*1e3:.0f} ms.']
    if errors: md.append('\n**The load run had errors: the zero-error target is NOT met.**')
    return '\n'.join(md)


if __name__ == '__main__': print(run())
