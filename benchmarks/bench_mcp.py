"""caveman-mcp over stdio: cold start and `caveman_compress` round trips through the official MCP SDK client.

Targets (issue 3): cold start (spawn -> `initialize` answered) <= 300 ms; `caveman_compress` round-trip
p50 <= 50 ms for a ~100 KB JSON payload.

- Cold start: spawn the installed `caveman-mcp` console script, write one `initialize` line, read the
  answer; the median of 15 spawns. Measured on raw pipes, so it is the server's time and not a
  client library's; the same handshake through the SDK's `ClientSession` is shown beside it.
- Round trip: one SDK `ClientSession.call_tool('caveman_compress', …)` — JSON-RPC encode, pipe,
  server decode, engine (detect, count, compress, count, store the original in a SQLite file), encode,
  pipe, client decode and validation — after 3 warm-up calls; p50/p95 of 40 calls.
- Payloads, from the corpus: `json_pip_inspect.json` cut to its first 11 package records
  (re-serialised with the file's own 2-space indent: 100,495 bytes; every package description is
  unique, so it compresses little), and the 13 issues of `json_github_list_issues.json` three times
  over (107,204 bytes; repetitive, compresses a lot).
"""
import asyncio, json, os, resource, shutil, statistics, subprocess, sys, tempfile, time
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from _common import SPAWNS, cold_starts, pct, server
from caveman import ccr
from caveman.corpus import corpus_path
from caveman.engine import Engine
from caveman.mcp.tools import TOOL_DEFINITIONS
from caveman.tokens import count_tokens

WARM, CALLS = 3, 40
INIT = (b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},'
        b'"clientInfo":{"name":"bench","version":"0"}}}\n')


NOTE = b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'


def first_calls(exe: str, env: dict, call: dict, spawns: int = SPAWNS) -> tuple[list, list, list]:
    "For `spawns` fresh servers: seconds from spawn to the answer of the first `tools/call` `call` (after `initialize`), seconds from the `initialize` answer to it, and the process's CPU seconds (user + system, until it exits)."
    line = json.dumps({'jsonrpc': '2.0', 'id': 1, 'method': 'tools/call', 'params': call}).encode() + b'\n'
    walls, afters, cpus = [], [], []
    for _ in range(spawns):
        u0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        p = subprocess.Popen([exe], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        p.stdin.write(INIT + NOTE); p.stdin.flush()
        json.loads(p.stdout.readline()); ready = time.perf_counter()
        p.stdin.write(line); p.stdin.flush()
        answer = json.loads(p.stdout.readline()); done = time.perf_counter()
        if 'result' not in answer or answer['result'].get('isError'): sys.exit(f'bad first call {answer}')
        p.stdin.close(); p.wait(timeout=60)
        u1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        walls.append(done - t); afters.append(done - ready)
        cpus.append(u1.ru_utime + u1.ru_stime - u0.ru_utime - u0.ru_stime)
    return walls, afters, cpus


def payloads() -> dict[str, str]:
    inspect = json.loads(corpus_path('json_pip_inspect.json').read_text())
    issues = json.loads(corpus_path('json_github_list_issues.json').read_text())
    return {'pip inspect, first 11 packages': json.dumps(dict(inspect, installed=inspect['installed'][:11]), indent=2),
            'GitHub issues page x3': json.dumps(issues * 3, indent=2)}


async def sdk_session(exe: str, env: dict, texts: dict[str, str]) -> dict:
    r = {}
    params = StdioServerParameters(command=exe, args=[], env=env)
    inits = []
    for _ in range(5):
        t = time.perf_counter()
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize(); inits.append(time.perf_counter() - t)
    r['sdk_init'] = inits
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as s:
            await s.initialize()
            t = time.perf_counter(); await s.call_tool('caveman_stats', {}); r['first_call'] = time.perf_counter() - t
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as s:
            await s.initialize()
            await asyncio.sleep(3)                       # the server warms its engine up 1 s after the handshake
            t = time.perf_counter(); await s.call_tool('caveman_stats', {}); r['first_call_warm'] = time.perf_counter() - t
            for name, text in texts.items():
                ts = []
                for i in range(WARM + CALLS):
                    t = time.perf_counter()
                    res = await s.call_tool('caveman_compress', {'input': text})
                    if i >= WARM: ts.append(time.perf_counter() - t)
                p = json.loads(res.content[0].text)
                assert not res.is_error and p['recovery_handle'], p
                r[name] = (ts, p)
    return r


def engine_times(texts: dict[str, str], tmp: str) -> dict[str, float]:
    e = Engine(ccr.open_store(os.path.join(tmp, 'engine.db')))
    out = {}
    for name, text in texts.items():
        data = text.encode()
        e.compress(data)
        ts = []
        for _ in range(CALLS):
            t = time.perf_counter(); e.compress(data); ts.append(time.perf_counter() - t)
        out[name] = statistics.median(ts)
    return out


def run() -> str:
    exe, texts = server(), payloads()
    with tempfile.TemporaryDirectory() as tmp:
        env = {k: v for k, v in os.environ.items() if not k.startswith('CAVEMAN_') and k != 'PYTHONDONTWRITEBYTECODE'}   # a user's server reads cached bytecode
        env['CAVEMAN_CCR_DB'] = os.path.join(tmp, 'ccr.db')
        cold = cold_starts(exe, env, INIT, lambda r: r['protocolVersion'] == '2025-06-18' or sys.exit(f'bad initialize {r}'))
        small = corpus_path('log_pip_install_verbose.log').read_text()[:2000]
        firsts = {'`caveman_compress` of a 2 KB log': first_calls(exe, env, {'name': 'caveman_compress', 'arguments': {'input': small}}),
                  '`caveman_stats`': first_calls(exe, env, {'name': 'caveman_stats', 'arguments': {}})}
        sdk = asyncio.run(sdk_session(exe, env, texts))
        eng = engine_times(texts, tmp)
    cold_ms = statistics.median(cold) * 1e3
    defs = json.dumps({'tools': TOOL_DEFINITIONS}, ensure_ascii=False, separators=(',', ':'))
    md = ['## MCP server: cold start and round trips', '',
          f'Cold start, spawn -> `initialize` answered (raw pipes, median of {SPAWNS} spawns): **{cold_ms:.0f} ms** '
          f'(min {min(cold)*1e3:.0f}, max {max(cold)*1e3:.0f}) — target <= 300 ms: {"met" if cold_ms <= 300 else "NOT met"}.',
          f'The same through the SDK (`stdio_client` + `ClientSession.initialize()`, median of 5): {statistics.median(sdk["sdk_init"])*1e3:.0f} ms.',
          '',
          f'The first `tools/call` of a session (`caveman_stats`, through the SDK, client-side first-call costs included): '
          f'{sdk["first_call"]*1e3:.0f} ms right after the handshake, when it builds the engine (compressors, o200k vocabulary, '
          f'store); {sdk["first_call_warm"]*1e3:.0f} ms 3 s later, after the server\'s background warm-up has built it.',
          '',
          f'The first tool call of a session on raw pipes (median of {SPAWNS} fresh servers; spawn, `initialize`, '
          '`notifications/initialized`, then the call at once, before the server\'s background warm-up; '
          'target <= 300 ms from spawn):', '',
          '| first call | spawn -> answered, wall | `initialize` answered -> call answered, wall | server CPU (user + system) | target |',
          '|---|---:|---:|---:|---|',
          *[f'| {name} | {statistics.median(w)*1e3:.0f} ms | {statistics.median(a)*1e3:.0f} ms | {statistics.median(c)*1e3:.0f} ms '
            f'| {"met" if statistics.median(w) <= 0.300 else "NOT met"} |' for name, (w, a, c) in firsts.items()],
          '',
          f'`caveman_compress` round trip through the SDK client ({CALLS} calls after {WARM} warm-ups, one session):', '',
          '| payload | bytes | tokens before -> after | ratio | p50 (ms) | p95 (ms) | engine alone, median (ms) |',
          '|---|---:|---:|---:|---:|---:|---:|']
    for name, text in texts.items():
        ts, p = sdk[name]
        md.append(f'| {name} | {len(text.encode()):,} | {p["tokens_before"]:,} -> {p["tokens_after"]:,} | {p["ratio"]:.1%} | '
                  f'{statistics.median(ts)*1e3:.1f} | {pct(ts, 95)*1e3:.1f} | {eng[name]*1e3:.1f} |')
    head = next(iter(texts))
    p50 = statistics.median(sdk[head][0]) * 1e3
    md += ['', f'Target p50 <= 50 ms on the ~100 KB payload ({head}): {p50:.1f} ms, {"met" if p50 <= 50 else "NOT met"}.', '',
           f'The five tool definitions as a host receives them (`{{"tools": [...]}}`, compact JSON): '
           f'{count_tokens(defs):,} o200k tokens, {len(defs.encode()):,} bytes.', '',
           'Payloads: the first 11 package records of the corpus `json_pip_inspect.json` (same envelope, 2-space indent, '
           'as the file is written), and the 13 issues of `json_github_list_issues.json` repeated three times. '
           '"Engine alone" is `Engine.compress` in-process on a file store, for the share of the round trip that is transport.']
    return '\n'.join(md)


if __name__ == '__main__': print(run())
