"""Failure and warning lines in other languages: the labels translators chose in the gettext catalogs shipped on
this machine (`/usr/share/locale/*/LC_MESSAGES/*.mo`: apt, coreutils, dpkg, bash, …), read at test time with the
standard library's `gettext`, are signals of the output profile, and a real log with such lines planted keeps every
one of them in its view (checked by `in` on the view's text: nothing of the compressor is imported to judge it)."""
import gettext, glob, random, sys
from pathlib import Path
import pytest
from caveman import ccr
from caveman.engine import Engine
from caveman.signals import line_signal
from caveman.corpus import corpus_path

LANGS = ('de', 'fr', 'es', 'pt', 'pt_BR', 'it', 'ru', 'uk', 'pl', 'nl', 'sv', 'cs', 'tr', 'zh_CN', 'zh_TW', 'ja', 'ko')
LABELS = {'error': 'failure', 'failed': 'failure', 'fatal error': 'failure', 'warning': 'warning'}

def _labels() -> dict[str, dict[str, set[str]]]:
    "{English label: {language: its translations}} from every catalog of `LANGS` on this machine (msgid == a label, any case, a trailing colon or blank ignored)."
    out = {k: {} for k in LABELS}
    for lang in LANGS:
        for mo in glob.glob(f'/usr/share/locale/{lang}/LC_MESSAGES/*.mo'):
            try: cat = gettext.GNUTranslations(open(mo, 'rb'))._catalog
            except Exception: continue
            for k, v in cat.items():
                if not isinstance(k, str) or not isinstance(v, str): continue
                label = k.strip().rstrip(':').strip().lower()
                t = v.strip().rstrip(':：').strip()
                if label in out and t and t.lower() != label and '%' not in t and '\n' not in t:
                    out[label].setdefault(lang, set()).add(t)
    return out

LABEL_TRANSLATIONS = _labels()
pytestmark = pytest.mark.skipif(not any(LABEL_TRANSLATIONS.values()), reason='no gettext catalogs of these languages on this machine')

def _planted(base: list[str], planted: list[str], seed: int, tmp_path):
    "`(data, engine, result)`: `planted` lines inserted at random places of the lines `base`, joined, compressed by an engine with a store in `tmp_path`."
    rnd = random.Random(seed)
    lines = list(base)
    for p in planted: lines.insert(rnd.randrange(len(lines) + 1), p)
    data = '\n'.join(lines).encode()
    eng = Engine(ccr.open_store(str(tmp_path / 's.db')))
    return data, eng, eng.compress(data)

@pytest.mark.parametrize('label', sorted(LABELS))
def test_translated_labels_are_signals(label):
    "Each translation `T` of a label, printed as a tool prints it (`T: cannot open 'x'`), gets a signal; the words a catalog uses for its *error* and *warning* labels all do, and at least 3 in 4 of the *failed* ones (a catalog may say it another way: `la suma no coincide`)."
    got = LABEL_TRANSLATIONS[label]
    lines = [(lang, f"{t}: cannot open 'x'") for lang, ts in sorted(got.items()) for t in sorted(ts)]
    if not lines: pytest.skip(f'no translation of {label!r} here')
    missed = [(lang, l) for lang, l in lines if not line_signal(l)]
    need = 1.0 if label in ('error', 'warning') else 0.75
    assert len(missed) <= (1 - need) * len(lines), f'{len(missed)} of {len(lines)} missed: {missed}'

def test_planted_translated_failures_survive_in_a_log_view(tmp_path):
    "A real log (the corpus's npm install) with 40 translated error and warning lines planted at random places, each label four times with another file (so a line is like its neighbours, as repeated failures are): the view shows nearly every planted line and counts the rest (the independent checker), and the handle gives the original back."
    base = corpus_path('log_npm_install_verbose.log').read_text().split('\n')
    labels = sorted({t for lab in ('error', 'warning') for ts in LABEL_TRANSLATIONS[lab].values() for t in ts})
    if not labels: pytest.skip('no translations here')
    rnd = random.Random(len(labels))
    planted = [f'{t}: could not open file /var/lib/cache/{k}.bin' for t in rnd.sample(labels, min(10, len(labels))) for k in range(4)]
    data, eng, r = _planted(base, planted, len(labels), tmp_path)
    assert r.content_type == 'log' and len(r.output) < len(data)
    view = r.output.decode()
    assert hidden_signals(data, r.output, 'log') == []                 # each planted line shown, or counted by its marker
    assert sum(p in view for p in planted) >= len(planted) * 3 // 4
    assert r.recovery_handle and eng.retrieve(r.recovery_handle) == data


# --- translated system messages (break test 12 rows 1-5) ---------------------------------------------
import os, subprocess, shutil
from _signals import hidden_signals, line_signal as checker_signal

SCRIPT = r'''
ls /nonexistent-{k}
cat /nonexistent-dir-{k}/file
mkdir /proc/nope-{k}/x
/etc/hostname
nosuchcommand-{k}
sh -c 'kill -SEGV $$'
sh -c 'kill -KILL $$'
sh -c 'kill -ABRT $$'
sh -c 'kill -FPE $$'
sh -c 'kill -BUS $$'
sh -c 'kill -ILL $$'
sh -c 'kill -TERM $$'
sh -c 'kill -HUP $$'
sh -c 'kill -XFSZ $$'
sh -c 'kill -XCPU $$'
sh -c 'kill -SYS $$'
sh -c 'kill -TRAP $$'
kill -0 99999999
sh -c 'kill -ALRM $$'
sh -c 'kill -USR1 $$'
sh -c 'nosuchcommand-{k}'
true
'''

def _captured(lang: str, k: int) -> list[str]:
    "The stderr lines real coreutils and bash print for a few failures under `LANGUAGE=lang` (run now, on this machine)."
    env = {**os.environ, 'LC_ALL': 'C.UTF-8', 'LANGUAGE': lang}
    r = subprocess.run(['bash', '-c', SCRIPT.format(k=k)], env=env, capture_output=True, text=True, timeout=30)
    return [l for l in r.stderr.split('\n') if l.strip()]

def _langs_with_catalogs() -> list[str]:
    return sorted({Path(p).parts[-3] for p in glob.glob('/usr/share/locale/*/LC_MESSAGES/libc.mo')} & set(LANGS))

@pytest.mark.skipif(not shutil.which('bash') or not _langs_with_catalogs(), reason='no bash or no C library catalogs here')
def test_real_translated_failures_are_shown_or_counted(tmp_path):
    "The failures real `ls`, `cat`, `mkdir` and bash print under each language whose C library catalog this machine has (file not found, permission denied, command not found, segmentation fault, killed, aborted, floating point exception — 24 bytes and more glued to the command by bash —, bus error, illegal instruction, terminated, hangup, file size and CPU time limits, bad system call, trace trap, no such process: the messages themselves translated, not only a label) are captured now and planted at random places in a real log (this machine's dpkg log, or the corpus's npm log): the independent checker (which reads the catalogs with `gettext`) finds each captured line a signal, and no signal of the original is hidden from the view uncounted."
    dpkg = Path('/var/log/dpkg.log')
    base = dpkg.read_text(errors='replace').split('\n') if dpkg.is_file() else []
    if len(base) < 3000: base = [l for _ in range(4) for l in corpus_path('log_npm_install_verbose.log').read_text().split('\n')] + base
    captured = {lang: _captured(lang, k) for k, lang in enumerate(_langs_with_catalogs() + ['en'])}
    english = captured.pop('en')
    assert len(english) >= 7 and all(checker_signal(l, 'output') for l in english), english
    planted = [l for ls in captured.values() for l in ls]
    translated = [l for l in planted if l not in english and not l.isascii()]
    assert len(translated) > len(captured), 'the catalogs gave no translated messages'
    unseen = [l for l in planted if not checker_signal(l, 'output')]
    assert len(unseen) <= len(planted) // 20, f'the checker reads {len(unseen)} of {len(planted)} captured failures as no signal: {unseen[:8]}'
    data, eng, r = _planted(base, planted, len(planted), tmp_path)
    assert r.content_type == 'log' and len(r.output) < len(data)
    assert hidden_signals(data, r.output, 'log') == []
    view = r.output.decode()
    shown = sum(p in view for p in planted)
    assert shown >= len(planted) // 2, f'{shown} of {len(planted)} captured failures shown'
    assert r.recovery_handle and eng.retrieve(r.recovery_handle) == data

def test_a_catalog_of_any_language_is_read(tmp_path):
    "A catalog the machine does not ship (written here, in GNU .mo layout, under `CAVEMAN_LOCALE_DIRS`) is read in a fresh process: its made-up translation of `Permission denied` is a `crash` report there, and not in a process without it; the one-word `Killed` is read in the catalog's case only."
    from caveman.catalogs import MO_MAGIC, hashpjw
    import struct, sys, json
    pairs = {'': 'Content-Type: text/plain; charset=UTF-8\n', 'Permission denied': 'Zugang verwehrt worden', 'Killed': 'Vernichtet'}
    keys = sorted(pairs, key=str.encode)
    ids, strs, n = [k.encode() for k in keys], [pairs[k].encode() for k in keys], len(keys)
    pos, blob, otab, ttab = 28 + 16 * n, b'', b'', b''
    for s_ in ids: otab += struct.pack('<2I', len(s_), pos + len(blob)); blob += s_ + b'\0'
    for s_ in strs: ttab += struct.pack('<2I', len(s_), pos + len(blob)); blob += s_ + b'\0'
    d = tmp_path / 'xx' / 'LC_MESSAGES'; d.mkdir(parents=True)
    (d / 'libc.mo').write_bytes(struct.pack('<7I', MO_MAGIC, 0, n, 28, 28 + 8 * n, 0, pos) + otab + ttab + blob)
    lines = ["cat: /x: Zugang verwehrt worden", "bash: line 1: 4711 Vernichtet  sh -c x", "er wurde vernichtet", "ZUGANG VERWEHRT WORDEN"]
    code = f"import json; from caveman.signals import line_signal; print(json.dumps([line_signal(l) for l in {lines!r}]))"
    got = {}
    for dirs in (str(tmp_path), str(tmp_path / 'none')):
        r = subprocess.run([sys.executable, '-c', code], env={**os.environ, 'CAVEMAN_LOCALE_DIRS': dirs}, capture_output=True, text=True, timeout=60)
        got[dirs] = json.loads(r.stdout)
    assert got[str(tmp_path)] == ['crash', 'crash', None, 'crash']
    assert got[str(tmp_path / 'none')] == [None, None, None, None]


@pytest.mark.skipif(not shutil.which('bash') or not shutil.which('ps'), reason='no bash or ps here')
def test_failures_interleaved_in_a_process_table_are_kept_whatever_it_is_read_as(tmp_path):
    "A real `ps aux` captured now with the stderr of failing commands interleaved, as a shell that merges both streams prints them (break test 13 row F1: read as prose, 16-26 such lines went behind plain markers): whatever content type it is read as, no line the independent checker calls a signal is hidden uncounted, and nearly every interleaved line is such a signal."
    table = subprocess.run(['ps', 'aux'], capture_output=True, text=True, timeout=30).stdout.rstrip('\n').split('\n')
    langs = ['en'] + _langs_with_catalogs()[:4]
    failures = [l for k, lang in enumerate(langs) for l in _captured(lang, 100 + k)]
    data, eng, r = _planted(table + [''], failures, len(failures), tmp_path)
    from _signals import PROFILE
    profile = PROFILE.get(r.content_type, 'output')
    unread = [f for f in failures if not checker_signal(f, profile)]
    assert len(unread) <= len(failures) // 5, unread[:8]          # as prose, a bare `Terminated` (no program's name) is no report
    if r.output != data:
        assert hidden_signals(data, r.output, r.content_type) == []
        assert r.recovery_handle and eng.retrieve(r.recovery_handle) == data


def _program_reports() -> list[str]:
    "The last line of real Python tracebacks (an exception's name, a colon, its message), captured now, of a Node.js failure and Perl's `die` when they are on this machine."
    out = []
    for exc in ("TypeError('x is not a function')", "ValueError('invalid literal for int()')", "Exception('boom')",
                "json.decoder.JSONDecodeError('Expecting value', 'x', 0)", "OSError(28, 'No space left on device')"):
        r = subprocess.run([sys.executable, '-c', f'import json\nraise {exc}'], capture_output=True, text=True, timeout=60)
        out.append(r.stderr.rstrip('\n').split('\n')[-1])
    if shutil.which('node'):
        r = subprocess.run(['node', '-e', 'undefinedFunction()'], capture_output=True, text=True, timeout=60)
        out += [l for l in r.stderr.split('\n') if l.startswith(('ReferenceError', 'TypeError'))][:1]
    if shutil.which('perl'):                                  # Perl's uncaught die: `Died at -e line 1.`
        out.append(subprocess.run(['perl', '-e', 'die'], capture_output=True, text=True, timeout=60).stderr.strip())
    return out


def test_program_reports_in_a_document_are_shown_or_counted(tmp_path):
    "A program's output that detection reads as text (break test 15): the last lines of real tracebacks planted in a real document stay visible or counted in the engine's view — prose reads a line as programs print a report, and the independent checker (its own patterns) reads the same."
    doc = Path('/usr/share/common-licenses/GPL-3')
    base = (doc if doc.is_file() else Path(__file__).parents[1] / 'README.md').read_text(errors='replace').split('\n')
    reports = _program_reports()
    assert len(reports) >= 5 and all(': ' in r or r.startswith('Died at ') for r in reports), reports
    assert all(checker_signal(r, 'prose') for r in reports), reports
    data, eng, r = _planted(base * 3, reports * 4, 15, tmp_path)
    assert r.content_type in ('text', 'html'), r.content_type
    assert r.output != data and hidden_signals(data, r.output, r.content_type) == []
    assert eng.retrieve(r.recovery_handle) == data
