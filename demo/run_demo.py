"""`make demo`: caveman's main job on real tool output captured on the spot.

Captures three payloads from this machine (`pip inspect` of the demo venv, the verbose pip log of
installing caveman into it, `git log -p` of this repository), starts `caveman-mcp` through the
official MCP Python SDK client, compresses each payload, retrieves each original from a *second*
server process sharing the same recovery store, checks byte-exactness, and prints `caveman_stats`.
"""
import argparse, asyncio, json, os, shutil, subprocess, sys, textwrap
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

ROOT = Path(__file__).resolve().parents[1]

def capture(venv: Path, work: Path) -> list[tuple[str, Path]]:
    "Run real commands and keep their output as payload files."
    out = []
    py = venv / 'bin' / 'python'
    p = work / 'pip-inspect.json'
    p.write_bytes(subprocess.run([str(py), '-m', 'pip', 'inspect'], check=True, capture_output=True, timeout=300).stdout)
    out.append(('pip inspect (JSON)', p))
    log = work / 'pip-install-verbose.log'
    if not log.is_file() or log.stat().st_size < 1000:
        log.write_bytes(subprocess.run([str(py), '-m', 'pip', 'install', '-v', '-e', f'{ROOT}[dev]'], capture_output=True, timeout=900).stdout)
    out.append(('pip install -v (log)', log))
    if (ROOT / '.git').exists() and shutil.which('git'):
        g = work / 'git-log-p.diff'
        g.write_bytes(subprocess.run(['git', '-C', str(ROOT), 'log', '-p', '-n', '20'],
                                     check=True, capture_output=True, timeout=300).stdout)
        if g.stat().st_size: out.append(('git log -p (diff)', g))
    return out

def text_of(res) -> str: return res.content[0].text

def first_marker(view: str) -> str | None:
    "The first elision marker of a compressed view: a JSON marker object, or a marker line."
    i = view.find('"__caveman_elided__"')
    if i >= 0:
        start = view.rfind('{', 0, i)
        try: return json.dumps(json.JSONDecoder().raw_decode(view, start)[0], ensure_ascii=False)
        except ValueError: pass
    return next((l for l in view.splitlines() if 'elided (caveman)' in l and l.lstrip(' \t#*|"/').startswith('…')), None)

async def run(payloads, env, errlog):
    server = StdioServerParameters(command=shutil.which('caveman-mcp') or 'caveman-mcp', env=env)
    results = []
    async with stdio_client(server, errlog=errlog) as (r, w), ClientSession(r, w) as s:
        init = await s.initialize()
        tools = [t.name for t in (await s.list_tools()).tools]
        print(f'caveman-mcp {init.server_info.version} (protocol {init.protocol_version}) serves: {", ".join(tools)}\n')
        for label, path in payloads:
            original = path.read_text(encoding='utf-8', errors='surrogateescape')
            p = json.loads(text_of(await s.call_tool('caveman_compress', {'input': original})))
            results.append((label, path, original, p))
        stats = json.loads(text_of(await s.call_tool('caveman_stats', {})))
    print(f'{"payload":<24} {"type":<8} {"bytes":>9} {"tokens before":>14} {"after":>8} {"ratio":>7}  recovery handle')
    for label, path, original, p in results:
        print(f'{label:<24} {p["content_type"]:<8} {len(original.encode()):>9,} {p["tokens_before"]:>14,} {p["tokens_after"]:>8,} '
              f'{p["ratio"]:>7.1%}  {p["recovery_handle"] or "- (passed through)"}')
    for label, path, original, p in results:
        marker = first_marker(p['compressed']) if p['recovery_handle'] else None
        if marker:
            print(f'\n{label}: a marker from the compressed view:')
            print(textwrap.indent(textwrap.shorten(marker.strip(), 400, placeholder=' …'), '    '))
    print('\nRetrieving every original from a second caveman-mcp process sharing the same store:')
    ok = True
    async with stdio_client(server, errlog=errlog) as (r, w), ClientSession(r, w) as s:
        await s.initialize()
        for label, path, original, p in results:
            if not p['recovery_handle']: continue
            got = text_of(await s.call_tool('caveman_retrieve', {'recovery_handle': p['recovery_handle']}))
            exact = got == original
            ok &= exact
            print(f'  {label:<24} {len(got.encode()):>9,} bytes  byte-exact: {"yes" if exact else "NO"}')
    print('\ncaveman_stats (first session):')
    print(textwrap.indent(json.dumps(stats, indent=2), '  '))
    return ok

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--venv', default='.venv'); ap.add_argument('--work', default='.work')
    a = ap.parse_args()
    work = (ROOT / a.work).resolve(); work.mkdir(parents=True, exist_ok=True)
    store = work / 'demo-store' / 'ccr.db'
    env = {'CAVEMAN_CCR_DB': str(store)}
    print(f'Capturing real tool output into {work} ...')
    payloads = capture((ROOT / a.venv).resolve(), work)
    print(f'Recovery store: {store}\n')
    with open(work / 'demo-server-stderr.log', 'w') as errlog:
        ok = asyncio.run(run(payloads, env, errlog))
    if not ok: sys.exit('demo: a retrieved original was not byte-exact')
    print('\nAll originals came back byte-exact.')

if __name__ == '__main__': main()
