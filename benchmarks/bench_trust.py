"""Trust (issue 10): per content type and overall, on the live corpus (evals/live_capture.py: ~50 real
commands of this machine, captured now) and on the shared corpus (../shared/corpus): tokens saved,
false marker claims (tests/_truth.py `false_claims`), hidden signal lines (tests/_signals.py
`hidden_signals`), and questions answerable from the view — for the shared corpus the retention
probes of the eval manifest (caveman.evals), for live captures the generic probes of
evals/live_capture.py (first/last/first error line, JSON member names, HTML headings).

Targets: 0 false claims and 0 hidden signal lines everywhere. The checkers are test modules, imported
lazily from tests/ (or from the directory in $CAVEMAN_CHECKERS, e.g. to measure an older checkout with
`PYTHONPATH=<checkout> CAVEMAN_CHECKERS=<dir> python benchmarks/run.py trust`); a missing checker is
reported as `n/a` with a line saying so, never as 0."""
import os, sys, tempfile, time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _checker(module: str, name: str):
    "The checker function `name` of test module `module`, or None when it cannot be imported."
    for d in filter(None, [os.environ.get('CAVEMAN_CHECKERS'), str(ROOT / 'tests')]):
        if d not in sys.path: sys.path.insert(0, d)
    try: return getattr(__import__(module), name)
    except (ImportError, AttributeError): return None


def _live_module():
    d = str(ROOT / 'evals')
    if d not in sys.path: sys.path.insert(0, d)
    import live_capture
    return live_capture


def _measure(items, engine, fc, hs):
    "items: (name, data, probes or None). Returns kind -> totals dict."
    agg = defaultdict(lambda: dict(n=0, before=0, after=0, claims=0, claim_payloads=0, signals=0, signal_payloads=0,
                                   asked=0, answered=0, errors=0))
    live = _live_module()
    for name, data, probes in items:
        try: r = engine.compress(data)
        except Exception:
            a = agg['(raised)']; a['n'] += 1; a['errors'] += 1; continue
        for a in (agg[r.content_type], agg['overall']):
            a['n'] += 1; a['before'] += r.tokens_before; a['after'] += r.tokens_after
        if not r.passed_through:
            if fc is not None:
                try: k = len(fc(data, r.output, r.content_type))
                except Exception: k = 1
                for a in (agg[r.content_type], agg['overall']): a['claims'] += k; a['claim_payloads'] += bool(k)
            if hs is not None:
                try: k = len(hs(data, r.output, r.content_type))
                except Exception: k = 1
                for a in (agg[r.content_type], agg['overall']): a['signals'] += k; a['signal_payloads'] += bool(k)
        if probes is not None:
            got = sum(live.answered(r.output, v) for _, v in probes)
            for a in (agg[r.content_type], agg['overall']): a['asked'] += len(probes); a['answered'] += got
    return agg


def _eval_probes(agg):
    "Add the eval manifest's retention probes (retained in the view / asked) per content type."
    from caveman import evals
    rep = evals.run()
    for f in rep['fixtures']:
        for a in (agg[f['content_type']], agg['overall']):
            a['asked'] += len(f['probes']); a['answered'] += sum(p['status'] == 'retained' for p in f['probes'])


def _table(title, agg, fc, hs) -> list[str]:
    na = lambda ok, v: str(v) if ok else 'n/a'
    out = [f'### {title}', '', '| kind | payloads | tokens before | tokens after | saved | false claims (payloads) | hidden signal lines (payloads) | questions answered from the view |',
           '|---|---:|---:|---:|---:|---:|---:|---:|']
    kinds = sorted(k for k in agg if k != 'overall') + ['overall']
    for k in kinds:
        a = agg[k]
        saved = f"{(a['before'] - a['after']) / a['before']:.1%}" if a['before'] else '-'
        q = f"{a['answered']}/{a['asked']}" if a['asked'] else '-'
        name = f'**{k}**' if k == 'overall' else k
        out.append(f"| {name} | {a['n']} | {a['before']} | {a['after']} | {saved} | {na(fc, a['claims'])} ({na(fc, a['claim_payloads'])}) "
                   f"| {na(hs, a['signals'])} ({na(hs, a['signal_payloads'])}) | {q} |")
    return out


def run() -> str:
    from caveman import ccr
    from caveman.corpus import corpus_files
    from caveman.engine import Engine
    fc = _checker('_truth', 'false_claims')
    hs = _checker('_signals', 'hidden_signals')
    md = ['## Trust: false claims, hidden signals, questions answered (issue 10)', '']
    for f, mod, what in ((fc, '_truth', 'false claims'), (hs, '_signals', 'hidden signal lines')):
        if f is None:
            line = f'- {what}: NOT MEASURED — tests/{mod}.py could not be imported (set CAVEMAN_CHECKERS to a directory holding it)'
            print(line, flush=True); md.append(line)
    live = _live_module()
    t = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        caps = live.live_captures(Path(tmp) / 'live')
        eng = Engine(ccr.open_store(str(Path(tmp) / 'ccr.db')))
        live_agg = _measure([(n, d, live.live_probes(n, d)) for n, d in caps], eng, fc, hs)
        shared_agg = _measure([(p.name, p.read_bytes(), None) for p in corpus_files()], eng, fc, hs)
    _eval_probes(shared_agg)
    md += [f'- live corpus: {len(caps)} captures of this machine (unavailable here: {", ".join(live.missing()) or "none"}); '
           f'questions: first/last/first error line, JSON member names, HTML headings visible or quoted by a marker',
           '- shared corpus: every payload of ../shared/corpus; questions: the eval manifest\'s retention probes retained in the view',
           '- false claims and hidden signal lines count problems found in views that changed (pass-throughs hide nothing)',
           f'- measured in {time.perf_counter() - t:.0f} s', '']
    md += _table('Live corpus', live_agg, fc, hs) + [''] + _table('Shared corpus', shared_agg, fc, hs)
    return '\n'.join(md)


if __name__ == '__main__': print(run())
