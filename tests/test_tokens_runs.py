"""Proof that the o200k counter's shortcuts give tiktoken's own count.

`fold_runs` relies on one identity: once a run of one whitespace character is at least RUN_KEEP long,
RUN_PERIOD more characters add `period_tokens(ch)` tokens, whatever text surrounds the run. Checked
here against `encode_ordinary` for every Unicode White_Space character, in contexts that touch each
alternative of the o200k pre-tokeniser, for EVERY run length across the fold boundary and two periods
beyond it, and for sampled longer runs. `encoded_length` (tiktoken's 4-byte buffer) is checked
against `len(encode_ordinary(...))` on the whole corpus and on adversarial text.
"""
import random
import pytest
import regex
from caveman.corpus import corpus_files
from caveman.tokens import (O200kCounter, RUN_KEEP, RUN_PERIOD, encoded_length, fold_runs, o200k_encoding)

ENC = o200k_encoding()
# every White_Space character, found with the same regex engine class tiktoken's pattern uses (\s)
WHITE = [chr(i) for i in range(0x3001) if regex.match(r'\s', chr(i))]
CONTEXTS = [('', ''), ('word', 'word'), ('x', '\n'), ('\n', 'X'), ('\t', '\t'), ('};', '{'), ('a', ' b'),
            ('\r\n', '\r\n'), ("it's", '<|endoftext|>'), (' ', 'é'), ('\u3000' * 700, ' ' * 650), ('9', '7'), ('é', '\n\n')]

def ordinary(t): return len(ENC.encode_ordinary(t))

def test_white_space_set():
    assert len(WHITE) == 25   # Unicode White_Space: the characters fold_runs folds
    from caveman.tokens import _WHITE_SPACE
    assert sorted(_WHITE_SPACE) == WHITE

@pytest.mark.slow
@pytest.mark.parametrize('ch', WHITE, ids=[f'U+{ord(c):04X}' for c in WHITE])
def test_fold_is_exact_for_every_length_across_the_boundary(ch):
    c = O200kCounter()
    for pre, post in CONTEXTS:
        for n in range(RUN_KEEP + RUN_PERIOD - 3, RUN_KEEP + 3 * RUN_PERIOD + 4):
            t = pre + ch * n + post
            assert c.count(t) == ordinary(t), (repr(pre), repr(post), n)

@pytest.mark.slow
@pytest.mark.parametrize('ch', WHITE, ids=[f'U+{ord(c):04X}' for c in WHITE])
def test_fold_is_exact_for_long_runs(ch):
    rng, c = random.Random(ord(ch)), O200kCounter()
    for pre, post in CONTEXTS:
        n = rng.randrange(RUN_KEEP + 3 * RUN_PERIOD, 9000)
        t = pre + ch * n + post + 'x' + ch * (n // 3) + pre
        folded, cut = fold_runs(t)
        assert len(folded) < len(t) and c.count(t) == ordinary(t), (repr(pre), repr(post), n)

def test_sixteen_mib_run_folds_to_a_short_text():
    folded, cut = fold_runs('a' + ' ' * 16 * 2**20 + 'b')
    assert len(folded) < RUN_KEEP + RUN_PERIOD + 2
    # the bare run's count grows by exactly one 128-space token per period (checked above), so:
    assert O200kCounter().count('a' + ' ' * 16 * 2**20 + 'b') == ordinary(folded) + cut

ADVERSARIAL = ['<|endoftext|>', '<|fim_prefix|><|fim_middle|><|fim_suffix|><|endofprompt|>', 'a\ud800b\udfff',
               '\x00\x01\x1f', '🙂' * 1000, 'x' * 5000, '\r\n' * 3000, ' \t' * 2000, "'S'T'RE'VE'M'LL'D" * 50,
               '1234567890' * 300, 'ǅǈǋ' * 100, '\u0300' * 500]

def test_buffer_count_equals_encode_ordinary_on_corpus_and_adversarial_text():
    texts = [p.read_text(errors='surrogateescape') for p in corpus_files()] + ADVERSARIAL
    assert len(texts) > 30
    for t in texts: assert encoded_length(ENC, t) == ordinary(t), t[:40]
