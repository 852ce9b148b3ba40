"""Scale: engine time against tiktoken's count, growth, memory and reduction at 100 KB, 1 MB and 16 MB, plus a pathological set.

Targets (issue 12): engine <= 2x the count for every type at 1 MB and 16 MB; no growth exponent above 1.1;
peak RSS <= 8x the payload at 16 MB; reduction at 16 MB within 10 points of the reduction at 100 KB.

Every payload is built from the shared corpus by repeating whole units of one kind (files, rows, array
items, YAML documents; `ls_lR` from a live `ls -laR` of /usr/lib and /usr/share, its directory blocks; `html` pastes whole pages one after another, `html_page` is one page whose body holds
the corpus pages' bodies) until it reaches the size, written to a temporary file, and measured in a FRESH
process (`python bench_scale.py --one PATH REPS`), so peak RSS is that process's own. In it: one
`Engine.compress` (fresh SQLite file store) -> peak RSS; then REPS alternating pairs (engine, tiktoken
`encode_ordinary` of the same text) -> medians. A second fresh process runs caveman's counter alone
for its peak RSS. Repetitions: 5 pairs at 100 KB, 3 at 1 MB, 1 at 16 MB and in the pathological set
(to keep the section to a few minutes). `BENCH_SCALE_SIZES=100000,1000000` limits the sizes;
`BENCH_SCALE_TYPES=log,code_js` the types; `BENCH_SCALE_PATHOLOGICAL=0` and `BENCH_SCALE_FLOORS=0` leave out the
pathological set and the floors (what the engine pays around a compressor — its own counts of the payload and the view, detection — and the parse a compressor cannot skip — libyaml's events, tree-sitter, libxml2's parse — against the count; and the memory floor of one 16 MB HTML page: libxml2's tree alone beside the whole html compressor, each in a fresh process, `--floor-rss`). A run that exceeds the per-process timeout is reported as such.
"""
import json, math, os, re, resource, statistics, subprocess, sys, tempfile, time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SIZES = [100_000, 1_000_000, 16_000_000]
REPS = {100_000: 5, 1_000_000: 3}
TIMEOUT = float(os.environ.get('BENCH_SCALE_TIMEOUT', 300))

def _files(kind):
    from caveman.corpus import corpus_files
    return corpus_files(kind)

def _repeat(units: list[bytes], size: int, sep: bytes = b'', head: bytes = b'', tail: bytes = b'') -> bytes:
    "Whole units, cycled, joined by `sep`, until the body reaches `size` bytes."
    out, n, i = [], len(head) + len(tail), 0
    while n < size:
        u = units[i % len(units)]; out.append(u); n += len(u) + len(sep); i += 1
    return head + sep.join(out) + tail

def _json_items():
    items = []
    for f in _files('json'):
        v = json.loads(f.read_bytes())
        items += v if isinstance(v, list) else [v]
    return items

def _lines_of(kind, keep_header=False):
    return [l for f in _files(kind) for l in f.read_bytes().splitlines(keepends=True)]

def build(kind: str, size: int) -> bytes:
    "A payload of about `size` bytes of content type `kind`, from the corpus."
    if kind == 'json_array':   # pretty-printed array of the corpus's JSON objects
        items = [json.dumps(x, indent=2).encode() for x in _json_items()]
        return _repeat(items, size, b',\n', b'[\n', b'\n]\n')
    if kind == 'csv':
        f = next(p for p in _files('csv') if 'airports' in p.name).read_bytes().splitlines(keepends=True)
        return _repeat(f[1:], size, head=f[0])
    if kind == 'yaml':
        docs = [f.read_bytes().strip(b'\n') + b'\n' for f in _files('yaml') if 'k8s' in f.name or 'gha' in f.name]
        return _repeat(docs, size, b'---\n')
    if kind in ('code_py', 'code_js'):   # the corpus holds `cat -n` views: the bare source, repeated
        src = next(p for p in _files('code') if p.name.endswith(kind[-2:] + '.txt')).read_bytes()
        return _repeat([re.sub(rb'(?m)^ *\d+\t', b'', src)], size, b'\n')
    if kind == 'log': return _repeat(_lines_of('log'), size)
    if kind == 'html_page':   # ONE page whose body holds the corpus pages' bodies, cycled (a paste of pages ends at the first `</html>`)
        bodies = [m.group(1) for f in _files('html') if (m := re.search(rb'<body[^>]*>(.*)</body>', f.read_bytes(), re.S | re.I))]
        return _repeat(bodies, size, b'\n', b'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>One page</title></head><body>\n',
                       b'\n</body></html>\n')
    if kind == 'code_js_cut':   # JavaScript cut off mid-statement, as a tool's output is truncated: parses with errors, declined (break test 9)
        d = build('code_js', size)
        return d[:d.rfind(b'\n', 0, len(d) - 200) + 20]
    if kind == 'ls_lR':   # a live capture: `ls -laR` of this machine's /usr, its per-directory blocks cycled (break test 9)
        out = subprocess.run(['ls', '-laR', '/usr/lib', '/usr/share'], capture_output=True, env={**os.environ, 'LC_ALL': 'C'}).stdout
        return _repeat([b + b'\n' for b in out.split(b'\n\n') if b.strip()], size, b'\n')
    return _repeat([f.read_bytes() for f in _files(kind)], size, b'\n')   # prose, diff, search, terminal, html

KINDS = ['json_array', 'log', 'csv', 'prose', 'diff', 'yaml', 'search', 'terminal', 'html', 'html_page', 'code_py', 'code_js', 'code_js_cut', 'ls_lR']

def pathological() -> list[tuple[str, bytes]]:
    items = _json_items()
    one_line, i = [], 0
    n = 0
    while n < 16 * 2**20:
        s = json.dumps(items[i % len(items)], separators=(',', ':')); one_line.append(s); n += len(s) + 1; i += 1
    lines = _lines_of('log')
    return [('16 MiB run of spaces in a line', b'start: ' + b' ' * 16 * 2**20 + b'end\n'),
            ('one 16 MiB JSON line', ('[' + ','.join(one_line) + ']').encode()),
            ('HTML page: 200 nested divs around 20k links and a paragraph (each level asks whether it is a link list)',
             b'<html><body>' + b'<div>' * 200 + b''.join(b'<a href="/x%d">link %d</a> ' % (i, i) for i in range(20_000))
             + b'<p>' + b'Some long prose about the thing, with words. ' * 9_000 + b'</p>' + b'</div>' * 200 + b'</body></html>'),
            ('1M-line log (16 B lines)', b''.join(lines[i % len(lines)].decode()[:15].rstrip('\r\n').encode() + b'\n'   # cut by characters: valid UTF-8
                                                  for i in range(1_000_000))),
            ('4,000 lines of 1,000-5,000 blanks then a word', b''.join(b' ' * (1000 + (i * 7919) % 4001) + b'v%d\n' % i for i in range(4000)))]   # break test 10 row 7: a regex with two adjacent blank runs was quadratic (80 CPU-s a MB)

def _rss_now() -> int:
    for l in open('/proc/self/status'):
        if l.startswith('VmRSS:'): return int(l.split()[1]) * 1024
    return 0

def _peak() -> int:
    "This process's peak RSS in bytes since the last `_reset_peak()` (VmHWM)."
    for l in open('/proc/self/status'):
        if l.startswith('VmHWM:'): return int(l.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

def _reset_peak():
    "Start the peak afresh at the current RSS (Linux: `5` to clear_refs), so loading the vocabulary does not hide the call's own peak."
    try:
        with open('/proc/self/clear_refs', 'w') as f: f.write('5')
    except OSError: pass

def on_counting_thread(f):
    "`f()` run on caveman's counting thread (`tokens.count_thread`: the thread tiktoken's regex serves at full speed, notebook 01), else here."
    try: from caveman.tokens import count_thread
    except ImportError: return f()
    job = count_thread().submit(f)
    return f() if job is None else job.result()

def one(path: str, reps: int, mode: str) -> dict:
    "Measured in this (fresh) process: see the module docstring."
    from caveman import ccr
    from caveman.engine import Engine
    from caveman.tokens import default_counter, o200k_encoding
    enc = o200k_encoding(); counter = default_counter()
    data = Path(path).read_bytes(); counter.count('warm up')
    rss0 = _rss_now(); _reset_peak()
    if mode == 'count':
        t = time.perf_counter(); counter.count(data.decode('utf-8', 'replace'))
        return {'count_s': time.perf_counter() - t, 'peak': _peak(), 'rss0': rss0}
    tmp = tempfile.mkdtemp()
    stores = iter(ccr.open_store(os.path.join(tmp, f'{i}.db')) for i in range(reps + 1))
    c0, t = time.process_time(), time.perf_counter(); r = Engine(next(stores), counter=counter).compress(data)
    first = (time.perf_counter() - t, time.process_time() - c0)   # the only engine run when reps == 1; else a warm-up
    peak = _peak()
    text = data.decode('utf-8', 'replace')
    eng, cnt = [], []
    for i in range(reps):
        if reps > 1:
            c0, t0 = time.process_time(), time.perf_counter(); Engine(next(stores), counter=counter).compress(data)
            eng.append((time.perf_counter() - t0, time.process_time() - c0))
        else: eng.append(first)
        c0, t0 = time.process_time(), time.perf_counter()
        try: on_counting_thread(lambda: enc.encode_ordinary(text))
        except Exception: raise
        except BaseException: cnt = None; continue   # tiktoken's own count panics (a long whitespace run): no ratio
        if cnt is not None: cnt.append((time.perf_counter() - t0, time.process_time() - c0))
    med = lambda xs, j: statistics.median(x[j] for x in xs) if xs else None
    return {'type': r.content_type, 'before': r.tokens_before, 'after': r.tokens_after, 'peak': peak, 'rss0': rss0,
            'engine_s': med(eng, 0), 'count_s': med(cnt, 0), 'engine_cpu': med(eng, 1), 'count_cpu': med(cnt, 1)}

def measure(payload: bytes, reps: int, tmp: str) -> dict:
    p = os.path.join(tmp, 'payload'); Path(p).write_bytes(payload)
    out = {}
    for mode in ('engine', 'count'):
        try:
            cp = subprocess.run([sys.executable, __file__, '--one', p, str(reps), mode], capture_output=True, text=True,
                                timeout=TIMEOUT, stdin=subprocess.DEVNULL)
            res = json.loads(cp.stdout.strip().splitlines()[-1]) if cp.returncode == 0 else {'error': cp.stderr.strip().splitlines()[-1:]}
        except subprocess.TimeoutExpired: res = {'timeout': TIMEOUT}
        out[mode] = res
    out['bytes'] = len(payload)
    return out

def _fmt(m: dict) -> list[str]:
    e, c, n = m['engine'], m['count'], m['bytes']
    if 'timeout' in e: return [f'> {TIMEOUT:.0f} s (timeout)', '', '', '', '', '']
    if 'error' in e: return [f'error {e["error"]}', '', '', '', '', '']
    red = 1 - e['after'] / e['before'] if e['before'] else 0
    cpk = f'{(c["peak"] - c["rss0"]) / n:.1f}' if 'peak' in c else 'timeout'
    ratio = (f'{e["engine_s"] / e["count_s"]:.2f}x ({e["engine_cpu"] / e["count_cpu"]:.2f}x CPU)' if e['count_s'] else 'tiktoken panics')
    return [e['type'], f'{e["engine_s"]:.2f} / ' + (f'{e["count_s"]:.2f}' if e['count_s'] else '-'), ratio,
            f'{e["peak"] / n:.1f} ({(e["peak"] - e["rss0"]) / n:.1f})', cpk, f'{red:.1%}']

def _best_cpu(f, before=lambda: None) -> float:
    "The least CPU seconds (this process) of three calls of `f`, each after `before()`."
    best = float('inf')
    for _ in range(3):
        before(); t = time.process_time(); f(); best = min(best, time.process_time() - t)
    return best

def floors(size: int = 1_000_000) -> list[str]:
    "What the engine pays around a compressor (its two counts, detection) and the parse each compressor cannot skip, against tiktoken's count of the same text (CPU, best of 3, this process): the floor under the engine / count ratio."
    from caveman.tokens import default_counter
    from caveman.compressors.code import parser_for, captures, brace_outermost_bodies
    from caveman.compressors.config import _FLAGGED, _ONE_LINE_LEAST, _yaml_shape, yaml_events, yaml_layout
    from caveman.signals import SOURCE
    def yaml_passes(d, t):                                    # what every YAML payload costs the config compressor before any rule
        lines = t.split('\n')
        return yaml_layout(d, lines, _ONE_LINE_LEAST), _yaml_shape(lines), _FLAGGED.flags(lines, SOURCE)   # signals and flag words: one pass
    from caveman.compressors.html import parse_page, pages
    from lxml.etree import iterwalk
    counter = default_counter(); counter.count('warm up')
    cpu = _best_cpu
    from caveman.detect import detect, _LAST_KIND, forget_payloads, text_fixed_blocks
    from caveman.engine import Engine
    def compressed(d):                                        # the engine's output for `d`, outside the timing
        from caveman import ccr
        return Engine(ccr.open_store(':memory:'), counter=counter).compress(d).output
    eng = Engine(counter=counter)
    def counts(data, view):                                   # as `_transform` counts: the payload on the counting thread, then the view (`_attempt` waits for the payload's count)
        later = eng._count_later(data); n = later()
        return eng._count(view), n
    out = []
    for kind in ('yaml', 'prose', 'search', 'ls_lR'):         # what every engine call pays before and after its compressor (ls_lR: detection settles the table share from two counts and a block or two; the compressor reads every block)
        data = build(kind, size); text = data.decode(); view = compressed(data)
        c = cpu(lambda: counter.count(text))
        both = cpu(lambda: counts(data, view))
        found = cpu(lambda: (_LAST_KIND.clear(), detect(data)), forget_payloads)   # no parse kept from the run before (the best of 3 was a cache hit)
        out.append(f'| {kind} | the engine\'s own counts (input + view) | {both:.3f} / {c:.3f} | {both / c:.2f}x |')
        out.append(f'| {kind} | detection (every rule up to the match) | {found:.3f} / {c:.3f} | {found / c:.2f}x |')
        if kind == 'ls_lR':
            blocks = cpu(lambda: text_fixed_blocks(text), forget_payloads)
            out.append(f'| {kind} | every block\'s fixed table (`text_fixed_blocks`, the listing compressor\'s reading) | {blocks:.3f} / {c:.3f} | {blocks / c:.2f}x |')
    from caveman.tokens import encoded_length, o200k_encoding
    enc, data = o200k_encoding(), build('prose', size); text = data.decode()   # tiktoken's regex pools: fast only on the thread that used them first
    c, other = cpu(lambda: on_counting_thread(lambda: encoded_length(enc, text))), cpu(lambda: encoded_length(enc, text))
    out.append(f'| prose | one count on another thread than the counting thread (tiktoken\'s regex pools take their locked slow path) | {other:.3f} / {c:.3f} | {other / c:.2f}x |')
    view = compressed(data)
    def beside():                                             # the order before issue 12's fix: the view counted as soon as it exists, beside the payload
        later = eng._count_later(data); v = eng._count(view); return v, later()
    both = cpu(beside)
    out.append(f'| prose | the engine\'s own counts in the old order: the view counted on the caller\'s thread beside the payload\'s count (slow path, one regex pool for two threads) | {both:.3f} / {c:.3f} | {both / c:.2f}x |')
    for kind, what, parse in (('yaml', 'libyaml events', lambda d, t: sum(1 for _ in yaml_events(d))),     # from the bytes, as the compressor reads them
                              ('yaml', 'libyaml events + yaml_layout walk (as the compressor asks: no entry for a short one-line key)', lambda d, t: yaml_layout(d, t.split('\n'), _ONE_LINE_LEAST)),
                              ('yaml', 'the same + the per-line passes every line needs (indentation, parents and comments: `_yaml_shape`; the signal and flag-word scans)', yaml_passes),
                              ('html_page', 'libxml2 parse (lxml HTMLPullParser, one page)', lambda d, t: parse_page(d)),
                              ('html', 'libxml2 parse (lxml HTMLPullParser, page by page)', lambda d, t: [parse_page(d[a:b]) for a, b in pages(d)]),
                              ('html', 'libxml2 parse + one lxml iterwalk of each page (every element\'s start and end: what one Python walk of the tree pays)',
                               lambda d, t: [sum(1 for _ in iterwalk(parse_page(d[a:b]), events=('start', 'end'))) for a, b in pages(d)]),
                              ('code_py', 'tree-sitter parse (python)', lambda d, t: parser_for('python').parse(d)),
                              ('code_js', 'tree-sitter parse (javascript)', lambda d, t: parser_for('javascript').parse(d)),
                              ('code_js', 'tree-sitter parse + the body/comment query (javascript: arrow functions sit in any expression)',
                               lambda d, t: captures(parser_for('javascript').parse(d), 'javascript')),
                              ('code_js', 'tree-sitter parse + the cursor walk the compressor makes instead (javascript)',
                               lambda d, t: brace_outermost_bodies(parser_for('javascript').parse(d), 'javascript'))):
        data = build(kind, size); text = data.decode()
        c, p = cpu(lambda: counter.count(text)), cpu(lambda: parse(data, text))
        out.append(f'| {kind} | {what} | {p:.3f} / {c:.3f} | {p / c:.2f}x |')
    return out

def floor_rss(kind: str, size: int, what: str) -> dict:
    "Peak RSS above the RSS before the call, in this (fresh) process, of `what` on `build(kind, size)`: 'parse' (`html.parse_page`, libxml2's tree of the page, kept until the peak is read) or 'compress' (`html.compress_html`)."
    from caveman.compressors.html import parse_page, compress_html
    data = build(kind, size)
    rss0 = _rss_now(); _reset_peak()
    got = parse_page(data) if what == 'parse' else compress_html(data)
    return {'bytes': len(data), 'above': _peak() - rss0, 'kept': got is not None}

def memory_floors(size: int = 16_000_000) -> list[str]:
    "The memory floor under the html compressor at `size` bytes (issue 12 target: peak RSS <= 8x the payload): libxml2's tree of one page alone (`parse_page`), beside the whole compressor, each in a fresh process, as peak RSS above the RSS before the call / payload."
    out = []
    for what, label in (('parse', "libxml2's tree alone (parse_page of one page, lxml HTMLPullParser)"), ('compress', 'the whole html compressor (compress_html)')):
        try:
            cp = subprocess.run([sys.executable, __file__, '--floor-rss', 'html_page', str(size), what], capture_output=True, text=True,
                                timeout=TIMEOUT, stdin=subprocess.DEVNULL)
            m = json.loads(cp.stdout.strip().splitlines()[-1])
            out.append(f'| html_page | {label} | {m["above"] / 2**20:.0f} MiB / {m["bytes"] / 2**20:.0f} MiB | {m["above"] / m["bytes"]:.1f}x |')
        except Exception as e: out.append(f'| html_page | {label} | error {e!r} | |')
    return out

def _clear_caches():
    "Empty the `functools` caches of detection, signals and the compressors (a parse shared by detection and a compressor is made again); the encoder's stay."
    for name, mod in list(sys.modules.items()):
        if name.startswith(('caveman.compressors', 'caveman.detect', 'caveman.signals')):   # not the encoder's: every count would build it again
            for v in list(vars(mod).values()):
                if callable(getattr(v, 'cache_clear', None)): v.cache_clear()

def splits(size: int = 1_000_000) -> list[str]:
    "Every type's engine CPU at `size` bytes split into detection, the compressor and the engine's own counts (input on the counting thread, then the view), against caveman's count of the same text (CPU, best of 3, this process, caches emptied before each run): the rows a type's CPU ratio is made of."
    from caveman import ccr
    from caveman.detect import detect, unwrap
    from caveman.engine import Engine, default_registry
    from caveman.tokens import default_counter
    counter = default_counter(); counter.count('warm up')
    cpu = lambda f: _best_cpu(f, _clear_caches)
    reg, out = default_registry(), []
    for kind in KINDS:
        data = build(kind, size); text = data.decode('utf-8', 'replace')
        eng = Engine(ccr.open_store(':memory:'), counter=counter)
        ctype = detect(unwrap(data)[0]); comp = reg[ctype]
        r = eng.compress(data)
        view = b'' if r.passed_through else r.output          # a declined or no-smaller view: the engine counts no view (cut-off JS)
        def counts():                                         # as `_transform` counts: the payload, then the view once it is counted
            later = eng._count_later(data); n = later()
            return eng._count(view), n
        c = cpu(lambda: counter.count(text))
        d, k, n = cpu(lambda: detect(data)), cpu(lambda: comp(data, '')), cpu(counts)
        e = cpu(lambda: Engine(ccr.open_store(':memory:'), counter=counter).compress(data))
        out.append(f'| {kind} | {ctype} | {c:.3f} | {d / c:.2f}x | {k / c:.2f}x | {n / c:.2f}x | {(d + k + n) / c:.2f}x | {e / c:.2f}x |')
        print(out[-1], file=sys.stderr, flush=True)
    return out

def run() -> str:
    sizes = [int(s) for s in os.environ.get('BENCH_SCALE_SIZES', ','.join(map(str, SIZES))).split(',')]
    kinds = [k for k in os.environ.get('BENCH_SCALE_TYPES', ','.join(KINDS)).split(',') if k]
    md = ['## Scale: 100 KB, 1 MB, 16 MB and pathological payloads', '',
          'Fresh process per row. engine / count: `Engine.compress` (fresh file store) and tiktoken `encode_ordinary` of the same text, '
          f'medians of alternating pairs ({", ".join(f"{REPS.get(s, 1)} at {s:,} B" for s in sizes)}; 1 in the pathological set). '
          'Peak RSS / payload: the whole fresh process after one compress (in brackets: above its RSS before the call); '
          '"count RSS" caveman\'s counter alone, above the RSS before the call. Exponent: growth of engine time from the smallest to the largest size.', '',
          '| payload | bytes | detected | engine / count (s) | ratio | peak RSS / payload | count RSS / payload | reduction |',
          '|---|---:|---|---:|---:|---:|---:|---:|']
    growth = []
    with tempfile.TemporaryDirectory() as tmp:
        for kind in kinds:
            got = {}
            for s in sizes:
                payload = build(kind, s)
                got[s] = m = measure(payload, REPS.get(s, 1), tmp)
                md.append(f'| {kind} | {m["bytes"]:,} | ' + ' | '.join(_fmt(m)) + ' |')
                print(md[-1], file=sys.stderr, flush=True)
            a, b = got[sizes[0]], got[sizes[-1]]
            if len(sizes) > 1 and 'engine_s' in a['engine'] and 'engine_s' in b['engine']:
                growth.append(f'{kind} {math.log(b["engine"]["engine_s"] / a["engine"]["engine_s"]) / math.log(b["bytes"] / a["bytes"]):.2f}')
        if os.environ.get('BENCH_SCALE_PATHOLOGICAL', '1') == '1':
            for name, payload in pathological():
                m = measure(payload, 1, tmp)
                md.append(f'| {name} | {m["bytes"]:,} | ' + ' | '.join(_fmt(m)) + ' |')
                print(md[-1], file=sys.stderr, flush=True)
    md += ['', 'Growth exponents (engine time, smallest to largest size): ' + (', '.join(growth) or 'n/a') + '.']
    if os.environ.get('BENCH_SCALE_FLOORS', '1') == '1':
        md += ['', 'Floors at 1 MB: what every engine call pays around its compressor (its own counts of the payload and the view, detection), and the parse a compressor cannot skip, against the count of the same text (CPU, best of 3). '
               'A type\'s engine / count ratio cannot go below the sum of its rows: for YAML, the engine\'s own counts, detection, and libyaml\'s events with the one Python walk that reads them '
               '(notebook 16, "Cost on big files", gives the split of the rest and the memory floor).', '',
               '| payload | parse | parse / count (s) | ratio |', '|---|---|---:|---:|', *floors()]
        md += ['', 'Memory floor of one big HTML page at 16 MB (fresh process each, peak RSS above the RSS before the call / payload): '
               "libxml2's tree of the page alone is over the 8x target, so the html compressor cannot meet it while it scores the page on a whole tree.", '',
               '| payload | what | peak RSS above start / payload | ratio |', '|---|---|---:|---:|', *memory_floors()]
        md += ['', 'Where each type\'s engine CPU goes at 1 MB (CPU, best of 3, caches emptied before each run, against caveman\'s count of the same text): '
               'detection, the compressor, and the engine\'s own counts (the payload, on a worker thread during the compressor, and the view); '
               'their sum, and one whole `Engine.compress` (memory store). The counts alone are at least 1x: the engine reports the payload\'s tokens.', '',
               '| payload | detected | count (s) | detection | compressor | counts (input + view) | sum | engine |',
               '|---|---|---:|---:|---:|---:|---:|---:|', *splits()]
    return '\n'.join(md)

if __name__ == '__main__':
    if sys.argv[1:2] == ['--one']: print(json.dumps(one(sys.argv[2], int(sys.argv[3]), sys.argv[4])))
    elif sys.argv[1:2] == ['--floor-rss']: print(json.dumps(floor_rss(sys.argv[2], int(sys.argv[3]), sys.argv[4])))
    else: print(run())
