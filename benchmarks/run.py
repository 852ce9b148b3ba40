"""`make bench`: speed and ratio numbers, measured side by side in one run, written to benchmarks/RESULTS.md.

Each section is a module `benchmarks/bench_<name>.py` with `run() -> str` (a markdown section).
`python benchmarks/run.py [section ...]` runs the named sections (default: all) and rewrites
RESULTS.md with the machine noted at the top. Medians only; the machines are noisy.
"""
import importlib, os, platform, subprocess, sys, time
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
SECTIONS = ['engine', 'mcp', 'protocol', 'gateway', 'store', 'shrink', 'headroom', 'trust', 'hooks', 'agent', 'install', 'postgres', 'scale']   # order of sections in RESULTS.md

def machine() -> str:
    cpu = ''
    try: cpu = next(l.split(':', 1)[1].strip() for l in open('/proc/cpuinfo') if l.startswith('model name'))
    except Exception: pass
    mem = ''
    try: mem = f"{int(next(l.split()[1] for l in open('/proc/meminfo') if l.startswith('MemTotal'))) / 2**20:.0f} GiB"
    except Exception: pass
    import caveman
    return (f'- when: {datetime.now(timezone.utc):%Y-%m-%d %H:%M UTC}\n- machine: {platform.machine()}, {os.cpu_count()} cores, {mem}, {cpu}\n'
            f'- python: {platform.python_version()} ({platform.platform()})\n- caveman: {caveman.__version__}\n')

def main(argv):
    names = argv or SECTIONS
    parts = []
    for n in names:
        t = time.perf_counter()
        print(f'== {n} ...', flush=True)
        md = importlib.import_module(f'bench_{n}').run()
        print(md, flush=True)
        parts.append(md)
        print(f'   ({time.perf_counter() - t:.1f} s)', flush=True)
    out = HERE / 'RESULTS.md'
    out.write_text('# caveman benchmark results\n\nWritten by `make bench` (`benchmarks/run.py`). All token counts are o200k_base; '
                   'times are medians of repeated runs in one process, measured side by side.\n\n' + machine() + '\n' + '\n\n'.join(parts) + '\n')
    print(f'wrote {out}')

if __name__ == '__main__': main(sys.argv[1:])
