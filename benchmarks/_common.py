"""What several benchmarks share: the nearest-rank percentile, the installed `caveman-mcp`, and its cold start
(spawn, write one request line, read the answer) on raw pipes."""
import json, shutil, subprocess, sys, time
from pathlib import Path

SPAWNS = 15     # cold starts per measurement (the median is reported)


def pct(xs: list[float], p: float) -> float:
    "The `p`-th percentile of `xs` by nearest rank."
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, round(p / 100 * len(xs) + 0.5) - 1))]


def server() -> str:
    "Path of the installed `caveman-mcp` console script (exits when it is missing)."
    exe = shutil.which('caveman-mcp') or str(Path(sys.executable).with_name('caveman-mcp'))
    if not Path(exe).exists(): raise SystemExit('caveman-mcp is not installed: run `make bench`')
    return exe


def cold_starts(exe: str, env: dict, line: bytes, check, spawns: int = SPAWNS) -> list[float]:
    "Seconds from spawning `exe` to reading its answer to the request `line`, `spawns` times; `check(result)` judges each answer."
    out = []
    for _ in range(spawns):
        t = time.perf_counter()
        p = subprocess.Popen([exe], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        p.stdin.write(line); p.stdin.flush()
        answer = p.stdout.readline()
        out.append(time.perf_counter() - t)
        check(json.loads(answer)['result'])
        p.stdin.close(); p.wait(timeout=60)
    return out
