"""Failure and warning lines in other languages: the labels translators chose in the gettext catalogs shipped on
this machine (`/usr/share/locale/*/LC_MESSAGES/*.mo`: apt, coreutils, dpkg, bash, …), read at test time with the
standard library's `gettext`, are signals of the output profile, and a real log with such lines planted keeps every
one of them in its view (checked by `in` on the view's text: nothing of the compressor is imported to judge it)."""
import gettext, glob, random
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
    "A real log (the corpus's npm install) with 40 translated error and warning lines planted at random places, each label four times with another file (so a line is like its neighbours, as repeated failures are): the view shows every planted line, and the handle gives the original back."
    base = corpus_path('log_npm_install_verbose.log').read_text().split('\n')
    labels = sorted({t for lab in ('error', 'warning') for ts in LABEL_TRANSLATIONS[lab].values() for t in ts})
    if not labels: pytest.skip('no translations here')
    rnd = random.Random(len(labels))
    planted = [f'{t}: could not open file /var/lib/cache/{k}.bin' for t in rnd.sample(labels, min(10, len(labels))) for k in range(4)]
    lines = list(base)
    for p in planted: lines.insert(rnd.randrange(len(lines)), p)
    data = '\n'.join(lines).encode()
    eng = Engine(ccr.open_store(str(tmp_path / 's.db')))
    r = eng.compress(data)
    assert r.content_type == 'log' and len(r.output) < len(data)
    view = r.output.decode()
    assert [p for p in planted if p not in view] == []
    assert r.recovery_handle and eng.retrieve(r.recovery_handle) == data
