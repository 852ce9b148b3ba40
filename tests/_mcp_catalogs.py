"""Real MCP tool catalogs, dumped by the test setup itself (never committed: the descriptions are third-party text).

`dumped_catalogs()` installs pinned MCP servers from the npm registry into `.work/mcp-catalogs/npm` and from PyPI into
a separate venv `.work/mcp-catalogs/venv` (their dependencies must not mix with ours), starts each one over stdio, lists
its tools with the official `mcp` SDK client (`ClientSession.list_tools`, following `nextCursor`) and writes
`{"tools": [...]}` — each tool exactly as the SDK parsed it, `by_alias`, unset fields left out — to
`.work/mcp-catalogs/<name>.json`. A dump is reused while the pinned version is unchanged. Installation or listing
failures FAIL (a missing catalog is an error, never a skip).

Two of the servers are Chinese (AMap and Baidu Maps ship their tool descriptions in Chinese; `howtocook-mcp` too):
they are the non-English real catalogs. Listing tools needs no network; the map servers only check that an API key
variable is set, so a dummy one is passed.
"""
import asyncio, json, os, shutil, subprocess, sys
from pathlib import Path

from _npm import npm_install
from conftest import child_env

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / '.work' / 'mcp-catalogs'
NPM_DIR, VENV = WORK / 'npm', WORK / 'venv'

# name -> (registry, package, version, bin, args, env)
SERVERS = {
    'npm_filesystem': ('npm', '@modelcontextprotocol/server-filesystem', '2026.8.31', 'mcp-server-filesystem', ['{tmp}'], {}),
    'npm_everything': ('npm', '@modelcontextprotocol/server-everything', '2026.8.31', 'mcp-server-everything', ['stdio'], {}),
    'npm_memory': ('npm', '@modelcontextprotocol/server-memory', '2026.8.31', 'mcp-server-memory', [], {'MEMORY_FILE_PATH': '{tmp}/memory.jsonl'}),
    'npm_sequential_thinking': ('npm', '@modelcontextprotocol/server-sequential-thinking', '2026.8.31', 'mcp-server-sequential-thinking', [], {}),
    'npm_playwright': ('npm', '@playwright/mcp', '0.0.83', 'playwright-mcp', ['--headless', '--output-dir', '{tmp}/out'], {}),
    'npm_chart': ('npm', '@antv/mcp-server-chart', '0.9.10', 'mcp-server-chart', [], {}),
    'npm_amap_zh': ('npm', '@amap/amap-maps-mcp-server', '0.0.8', 'mcp-amap', [], {'AMAP_MAPS_API_KEY': 'dummy'}),
    'npm_baidu_map_zh': ('npm', '@baidumap/mcp-server-baidu-map', '1.0.5', 'mcp-server-baidu-map', [], {'BAIDU_MAP_API_KEY': 'dummy'}),
    'npm_howtocook_zh': ('npm', 'howtocook-mcp', '0.2.2', 'howtocook-mcp', [], {}),
    'pypi_git': ('pypi', 'mcp-server-git', '2026.10.19', 'mcp-server-git', [], {}),
    'pypi_time': ('pypi', 'mcp-server-time', '2026.10.19', 'mcp-server-time', ['--local-timezone', 'UTC'], {}),
    'pypi_fetch': ('pypi', 'mcp-server-fetch', '2026.10.24', 'mcp-server-fetch', [], {}),
}


def _npm_version(package: str) -> str | None:
    try: return json.loads((NPM_DIR / 'node_modules' / package / 'package.json').read_text())['version']
    except (OSError, ValueError, KeyError): return None


def _pypi_version(package: str) -> str | None:
    r = subprocess.run([str(VENV / 'bin' / 'python'), '-c', f'import importlib.metadata as m; print(m.version({package!r}))'],
                       capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60)
    return r.stdout.strip() if r.returncode == 0 else None


def install() -> None:
    "Install every pinned server that is missing or at another version; raises `RuntimeError` naming what failed."
    npm_install(NPM_DIR, {p: v for reg, p, v, *_ in SERVERS.values() if reg == 'npm'})
    if not (VENV / 'bin' / 'python').exists():
        subprocess.run([sys.executable, '-m', 'venv', str(VENV)], check=True, stdin=subprocess.DEVNULL, timeout=300)
    py = [f'{p}=={v}' for reg, p, v, *_ in SERVERS.values() if reg == 'pypi' and _pypi_version(p) != v]
    if py:
        r = subprocess.run([str(VENV / 'bin' / 'python'), '-m', 'pip', 'install', '-q', *py],
                           capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL)
        if r.returncode: raise RuntimeError(f'pip install {py} failed:\n{r.stderr[-3000:]}')


def _command(name: str, tmp: Path) -> tuple[str, list[str], dict]:
    reg, package, version, exe, args, env = SERVERS[name]
    if reg == 'npm': cmd = [shutil.which('node') or 'node', str(NPM_DIR / 'node_modules' / '.bin' / exe)]
    else: cmd = [str(VENV / 'bin' / exe)]
    fill = lambda s: s.replace('{tmp}', str(tmp))
    full_env = child_env(only=('PATH',), HOME=str(tmp), **{k: fill(v) for k, v in env.items()})
    return cmd[0], cmd[1:] + [fill(a) for a in args], full_env


async def _list_tools(name: str, tmp: Path) -> list[dict]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    from mcp.types import PaginatedRequestParams
    command, args, env = _command(name, tmp)
    params = StdioServerParameters(command=command, args=args, env=env, cwd=str(tmp))
    tools, cursor = [], None
    with open(tmp / f'{name}.stderr', 'w') as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                while True:
                    page = await s.list_tools(params=PaginatedRequestParams(cursor=cursor) if cursor else None)
                    tools += [t.model_dump(mode='json', by_alias=True, exclude_unset=True) for t in page.tools]
                    cursor = page.next_cursor
                    if not cursor: break
    return tools


def dump(name: str) -> Path:
    "The dump file of one server (made now if missing or from another version)."
    out = WORK / f'{name}.json'
    stamp = WORK / f'{name}.version'
    want = SERVERS[name][1] + '@' + SERVERS[name][2]
    if out.exists() and stamp.exists() and stamp.read_text() == want: return out
    tmp = WORK / 'tmp' / name
    tmp.mkdir(parents=True, exist_ok=True)
    tools = asyncio.run(asyncio.wait_for(_list_tools(name, tmp), 120))
    if not tools: raise RuntimeError(f'{name}: no tools listed')
    out.write_text(json.dumps({'tools': tools}, ensure_ascii=False, indent=2))
    stamp.write_text(want)
    return out


def dumped_catalogs() -> dict[str, Path]:
    "`{name: path of its dumped catalog}` for every server of `SERVERS`, installing and dumping as needed."
    WORK.mkdir(parents=True, exist_ok=True)
    install()
    return {name: dump(name) for name in SERVERS}


if __name__ == '__main__':
    for n, p in dumped_catalogs().items(): print(n, p, len(json.loads(p.read_text())['tools']))
