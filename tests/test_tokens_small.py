"""Proof that a small text's count from its own vocabulary is tiktoken's count with the whole vocabulary.

`tokens.small_text_count` builds a tiktoken encoder from only the o200k entries that occur in the text
(found with `text_vocabulary`, bounded by the token shape that nbs/01_tokens checks on every official
token). The claim: the count equals `encoded_length` with the whole encoder, for any text. Checked here on
random texts over an alphabet that touches every alternative of the o200k pre-tokeniser (letters of each
case class, marks, digits, contractions, punctuation runs with `/` and line ends, ASCII and Unicode
whitespace, CJK, emoji, special-token text, lone surrogates), on random windows of every corpus payload,
and through the `caveman` console script, whose counts must equal a non-deferred engine's.
"""
import json, random, subprocess, sys
from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st

from caveman.corpus import corpus_files
from caveman.tokens import (SMALL_LOOKUPS, SMALL_TEXT_BYTES, SMALL_TEXT_CHARS, encoded_length, fold_runs, o200k_encoding, o200k_ranks,
                            small_text_count, text_vocabulary)

ENC = o200k_encoding()
ATOMS = ['a', 'Z', 'é', 'É', 'ǅ', 'ʰ', 'ß', '\u0301', '0', '7', '٣', "'s", "'T", "'re", "'ll", 'D', ' ', '  ', '\t', '\n', '\r\n',
         '\r', '\x0b', '\x0c', '\u00a0', '\u3000', '\u2028', '\u0085', '/', '//', '*/', '.', ',', ';', '{', '}', '(', ')', '"', '<',
         '|', '-', '_', '=', '中', '文', 'の', '한', 'Ж', 'ي', '😀', '👍🏽', '\u200d', '<|endoftext|>', '\ud800', 'http://x.y/z?q=1',
         'return', ' the', 'JSON', 'x' * 40, ' ' * 140, '\n' * 9]


def whole(text: str) -> int:
    folded, cut = fold_runs(text)
    return encoded_length(ENC, folded) + cut


def check(text: str) -> bool:
    "The shortcut's count is the whole encoder's; where it declines (None), only for its stated reasons. True when it counted."
    n = small_text_count(text)
    if n is None:
        data = fold_runs(text)[0].encode('utf-8', 'replace')
        assert len(data) > SMALL_TEXT_BYTES or text_vocabulary(data, o200k_ranks(), SMALL_LOOKUPS) is None
        return False
    assert n == whole(text)
    return True


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(ATOMS), min_size=1, max_size=200))
def test_random_texts(parts):
    check(''.join(parts))


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=1, max_size=300))
def test_any_unicode(text):
    check(text)


def test_corpus_windows():
    rng, counted, tried = random.Random(12), 0, 0
    for p in corpus_files():
        t = p.read_bytes().decode('utf-8', 'replace')
        for _ in range(3):
            start = rng.randrange(max(1, len(t)))
            w = t[start:start + rng.randrange(1, SMALL_TEXT_CHARS + 1)]
            if w: tried += 1; counted += check(w)
    assert counted >= tried * 3 // 4, (counted, tried)       # the shortcut really ran on most windows


def test_console_script_counts(tmp_path):
    "`caveman compress` (deferred encoder) reports the counts of an engine that built the whole encoder."
    exe = str(Path(sys.executable).with_name('caveman'))
    env = {'PATH': '/usr/bin:/bin', 'HOME': str(tmp_path), 'CAVEMAN_HOME': str(tmp_path / 'home')}
    for p in sorted(corpus_files())[:12]:
        data = p.read_bytes()[:3000]
        r = subprocess.run([exe, 'compress', '--mode', 'record', '-'], input=data, capture_output=True, env=env, timeout=120)
        assert r.returncode == 0, r.stderr
        report = json.loads(r.stderr.decode().splitlines()[-1])
        text = data.decode('utf-8', 'replace')
        assert report['tokens_before'] == encoded_length(ENC, fold_runs(text)[0]) + fold_runs(text)[1], p.name
