"""Pinned npm packages that tests and benchmarks drive (the MCP Inspector, Claude Code, npm MCP servers): installed
once from the npm registry into a folder under `.work/`, lifecycle scripts off, with the npm cache beside them."""
import json, shutil, subprocess
from pathlib import Path
from typing import Callable


def npm_version(prefix: Path, package: str) -> str | None:
    "The version of `package` installed under `prefix`, or None."
    try: return json.loads((prefix / 'node_modules' / package / 'package.json').read_text())['version']
    except (OSError, ValueError, KeyError): return None


def npm_install(prefix: Path, pins: dict[str, str], installed: Callable[[], bool] | None = None, timeout: int = 900) -> None:
    "Install every `package@version` of `pins` into `prefix` unless `installed()` (default: all at their pinned version); raises `RuntimeError` naming what failed."
    done = installed or (lambda: all(npm_version(prefix, p) == v for p, v in pins.items()))
    if done(): return
    npm = shutil.which('npm')
    if not npm or not shutil.which('node'): raise RuntimeError(f'node and npm are needed to install {", ".join(pins)} (npm registry)')
    prefix.mkdir(parents=True, exist_ok=True)
    specs = [f'{p}@{v}' for p, v in pins.items()]
    r = subprocess.run([npm, 'install', '--prefix', str(prefix), '--cache', str(prefix / 'cache'), '--ignore-scripts',
                        '--no-audit', '--no-fund', '--loglevel', 'error', *specs],
                       capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    if r.returncode != 0 or not done():
        raise RuntimeError(f'npm install {" ".join(specs)} failed (rc {r.returncode}):\n{r.stderr[-3000:]}')
