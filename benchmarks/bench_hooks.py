"""Hook and CLI latency: the wall time of one `caveman` process, before (today's main, /work/wt/baseline) and after.

A PostToolUse hook is a new process for every tool call, so its start-up is its cost. Measured as the
median wall time of spawning the process, writing the input, and reading everything it prints:

- `caveman hook claude-code --recovery` on a Bash event with a small output (passes through; target <= 60 ms);
- the same on a Bash event with a 100 KB output (the corpus pytest log plus pip log, cut to 100,000 bytes;
  compressed, the original stored; target <= 250 ms);
- `caveman compress` of a small file (the 2 KB head of the pip log; target <= 150 ms).

"Before" runs the checkout of main in $CAVEMAN_BASELINE (default /work/wt/baseline) with this venv's Python
(its own code imported, the editable install of this tree hidden). It has no hook command, so the row
beside each hook row is `caveman compress` of the same payload there: what a caveman process cost before.
Every run uses a fresh CAVEMAN_HOME; the first run (which builds the vocabulary cache) is reported apart.
"""
import json, os, resource, statistics, subprocess, sys, tempfile, time
from pathlib import Path

from caveman.corpus import corpus_path

RUNS = 15
BASELINE = Path(os.environ.get('CAVEMAN_BASELINE', '/work/wt/baseline'))
ENTRY = ("import sys; sys.meta_path[:] = [f for f in sys.meta_path if 'editable' not in repr(f)]; "
         "sys.path.insert(0, {root!r}); from caveman.cli import main; sys.exit(main())")


def cpu() -> float:
    u = resource.getrusage(resource.RUSAGE_CHILDREN)
    return u.ru_utime + u.ru_stime

def timed(cmd: list[str], data: bytes, env: dict, runs: int = RUNS) -> tuple[float, list[float], list[float]]:
    "(first run wall seconds, wall seconds of `runs` later runs, their CPU seconds (user + system))."
    out, cpus = [], []
    for _ in range(runs + 1):
        t, c = time.perf_counter(), cpu()
        r = subprocess.run(cmd, input=data, capture_output=True, env=env, timeout=120)
        out.append(time.perf_counter() - t); cpus.append(cpu() - c)
        assert r.returncode == 0, r.stderr[-500:]
    return out[0], out[1:], cpus[1:]


def payloads() -> dict:
    big = (corpus_path('log_pytest_requests_failures.log').read_bytes() + corpus_path('log_pip_install_verbose.log').read_bytes())[:100_000]
    small = corpus_path('log_pip_install_verbose.log').read_bytes()[:2000]
    event = lambda out: json.dumps({'hook_event_name': 'PostToolUse', 'tool_name': 'Bash', 'tool_input': {'command': 'x'},
                                    'tool_response': {'stdout': out.decode('utf-8', 'replace'), 'stderr': '', 'interrupted': False,
                                                      'isImage': False, 'noOutputExpected': False}}).encode()
    return {'small_event': event(b'collected 3 items\n\n3 passed in 0.01s\n'), 'big_event': event(big), 'big': big, 'small': small}


def run() -> str:
    p = payloads()
    exe = str(Path(sys.executable).with_name('caveman'))
    rows = []
    with tempfile.TemporaryDirectory() as home:
        def env(name):
            d = Path(home) / name; d.mkdir(exist_ok=True)
            return {**os.environ, 'CAVEMAN_HOME': str(d), 'HOME': str(d)}
        base = [sys.executable, '-c', ENTRY.format(root=str(BASELINE))] if (BASELINE / 'caveman').is_dir() else None
        cases = [('hook pass-through, small Bash output', [exe, 'hook', 'claude-code', '--recovery'], p['small_event'], 0.060,
                  ['compress', '-'], p['small_event']),
                 ('hook, 100 KB Bash output', [exe, 'hook', 'claude-code', '--recovery'], p['big_event'], 0.250,
                  ['compress', '-'], p['big']),
                 ('`caveman compress` of a 2 KB file', [exe, 'compress', '-'], p['small'], 0.150, ['compress', '-'], p['small'])]
        for name, cmd, data, target, bcmd, bdata in cases:
            first, xs, cs = timed(cmd, data, env('after'))
            after = statistics.median(xs)
            if base:
                _, bx, bc = timed(base + bcmd, bdata, env('before'))
                before = f'{statistics.median(bx) * 1000:.0f} ms / {statistics.median(bc) * 1000:.0f} ms'
                if 'hook' in name: before += ' (`caveman compress` of the same payload)'
            else: before = 'n/a (no baseline checkout)'
            rows.append(f'| {name} | {before} | {after * 1000:.0f} ms / {statistics.median(cs) * 1000:.0f} ms | {first * 1000:.0f} ms '
                        f'| <= {target * 1000:.0f} ms wall: {"met" if after <= target else "MISSED"} |')
    return '\n'.join(['## hooks: start-up and hook latency', '',
                      f'Median wall time of one process over {RUNS} runs (spawn, input on stdin, all output read), this machine; '
                      '"first" is the first run in a fresh caveman home, which builds the o200k ranks cache. Each cell is wall / CPU '
                      '(user + system) time: on a shared, loaded machine the CPU time is the steadier figure.', '',
                      f'Load average when measured: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores.', '',
                      '| case | before (main), wall / CPU | after, wall / CPU | after, first run (wall) | target |', '|---|---|---|---|---|', *rows])


if __name__ == '__main__': print(run())
