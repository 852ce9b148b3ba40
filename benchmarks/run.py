"""`make bench`: speed and ratio numbers, measured side by side in one run, written to benchmarks/RESULTS.md.

Each section is a module `benchmarks/bench_<name>.py` with `run() -> str` (a markdown section).
`python benchmarks/run.py [section ...]` runs the named sections (default: all). Each section is
written to RESULTS.md under a stamp of its own (when, the commit, the load average before it ran);
sections not run this time keep their earlier text and stamp, so a partial run never erases figures
and never passes old figures off as new. Medians only; the machines are noisy.
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

STAMP = '<!-- section {name} -->'
EARLIER = 'earlier'

def stamp(name: str) -> str:
    "The line under a section's heading: when it was measured, the commit, the load average before it ran."
    try: commit = subprocess.run(['git', 'rev-parse', '--short', 'HEAD'], capture_output=True, text=True, cwd=HERE, timeout=10).stdout.strip()
    except Exception: commit = ''
    load = ' / '.join(f'{x:.1f}' for x in os.getloadavg())
    return f'*measured {datetime.now(timezone.utc):%Y-%m-%d %H:%M UTC} at commit {commit or "unknown"}; load average before: {load}*'

def earlier_sections(text: str) -> tuple[dict, str]:
    "({name: section text} of a RESULTS.md written with stamps, the text of one written before stamps existed ('' when none))."
    import re
    parts = re.split(r'^<!-- section (\w+) -->$', text, flags=re.M)
    if len(parts) == 1: return {}, text
    return {parts[i]: parts[i + 1].strip('\n') for i in range(1, len(parts), 2)}, ''

def main(argv):
    names = argv or SECTIONS
    out = HERE / 'RESULTS.md'
    kept, legacy = earlier_sections(out.read_text()) if out.exists() else ({}, '')
    if legacy: kept[EARLIER] = '# Earlier results, written before sections carried their own stamps\n\n' + legacy.split('\n', 1)[-1].strip('\n')
    if not argv: kept.pop(EARLIER, None)   # a full run measures everything again
    for n in names:
        t = time.perf_counter()
        print(f'== {n} ...', flush=True)
        when = stamp(n)
        md = importlib.import_module(f'bench_{n}').run()
        head, _, body = md.partition('\n')
        kept[n] = f'{head}\n\n{when}\n{body}'
        print(md, flush=True)
        print(f'   ({time.perf_counter() - t:.1f} s)', flush=True)
        out.write_text(render(kept))   # after every section: an interrupted run keeps what it measured
    print(f'wrote {out}')

def render(sections: dict) -> str:
    order = [n for n in SECTIONS if n in sections] + [n for n in sections if n not in SECTIONS and n != EARLIER] + [EARLIER] * (EARLIER in sections)
    body = '\n\n'.join(STAMP.format(name=n) + '\n' + sections[n] for n in order)
    return ('# caveman benchmark results\n\nWritten by `make bench` (`benchmarks/run.py`). All token counts are o200k_base; '
            'times are medians of repeated runs in one process, measured side by side. Each section says when it was measured; '
            'sections re-run later replace their earlier text.\n\n' + machine() + '\n' + body + '\n')

if __name__ == '__main__': main(sys.argv[1:])
