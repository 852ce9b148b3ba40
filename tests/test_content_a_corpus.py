"""Corpus-wide checks for the diff, html, repetition and code compressors: never raise, keep what
they promise (computed independently of the compressors), deterministic, idempotent."""
import ast, hashlib, os, re, subprocess, sys

import lxml.html
import pytest

from _html_text import hidden_only_text
import tree_sitter as ts
import tree_sitter_javascript, tree_sitter_typescript
from hypothesis import given, settings, HealthCheck, strategies as st

from caveman.corpus import corpus_files, corpus_path
from caveman.compressors import diff, html, repetition, code
from conftest import child_env

MODULES = {'diff': diff, 'html': html, 'repetition': repetition, 'code': code}


def strip_gutter(listing: bytes) -> bytes:
    "The corpus code files are `cat -n` listings; the engine strips the gutter before compressing."
    return re.sub(rb'(?m)^ *\d+\t', b'', listing)


def payload(path) -> bytes:
    data = path.read_bytes()
    return strip_gutter(data) if path.name.startswith('code_') else data


ALL_FILES = corpus_files()
OWN_FILES = corpus_files('diff') + corpus_files('html') + corpus_files('code')


# ---------------------------------------------------------------- every compressor on every payload
@pytest.mark.parametrize('kind', MODULES)
@pytest.mark.parametrize('path', ALL_FILES, ids=lambda p: p.name)
def test_never_raises_and_never_grows(kind, path):
    data = payload(path)
    comp = MODULES[kind].COMPRESSOR
    assert comp.content_type == kind and comp.safety == 'S4'
    res = comp(data)
    if res is not None:
        assert res.method == kind
        assert len(res.output) < len(data)


@pytest.mark.parametrize('path', OWN_FILES, ids=lambda p: p.name)
def test_own_corpus_deterministic_and_idempotent(path):
    kind = path.name.split('_')[0]
    fn = {'diff': diff.compress_diff, 'html': html.compress_html, 'code': code.compress_code}[kind]
    data = payload(path)
    once = fn(data)
    assert fn(data) == once
    if once is not None:
        again = fn(once)
        assert again is None or again == once


def test_determinism_across_processes():
    "Hash randomisation must not change any output: compare digests from two interpreters."
    script = ('import hashlib, re\nfrom caveman.corpus import corpus_files\n'
              'from caveman.compressors import diff, html, code\n'
              'for p in corpus_files("diff") + corpus_files("html") + corpus_files("code"):\n'
              '    b = p.read_bytes()\n'
              '    if p.name.startswith("code_"): b = re.sub(rb"(?m)^ *\\d+\\t", b"", b)\n'
              '    m = {"diff": diff, "html": html, "code": code}[p.name.split("_")[0]]\n'
              '    out = m.COMPRESSOR(b)\n'
              '    print(p.name, hashlib.sha256(out.output if out else b"-").hexdigest())\n')
    runs = [subprocess.run([sys.executable, '-c', script], capture_output=True, text=True, timeout=120,
                           stdin=subprocess.DEVNULL, env=child_env(PYTHONHASHSEED=seed), check=True).stdout
            for seed in ('1', '2')]
    assert runs[0] == runs[1] and runs[0].count('\n') == len(OWN_FILES)


# ---------------------------------------------------------------- diff retention
STRUCTURAL = (b'diff --git ', b'index ', b'--- ', b'+++ ', b'@@ ')
DIFF_MARKER = re.compile(rb'^\xe2\x80\xa6 (\d+) (context|added|removed) lines? elided \(caveman\) \xe2\x80\xa6\r?$')

def restores(original: bytes, output: bytes) -> list:
    """Walk the output against the original: plain lines must be the next original line, each marker must
    stand for exactly N next original lines of its kind (context: ' '/empty, added: '+', removed: '-').
    Returns the markers as (kind, hidden lines); fails the test on any mismatch."""
    orig, out = original.split(b'\n'), output.split(b'\n')
    ok = {b'context': lambda l: l[:1] in (b' ', b'', b'\r'), b'added': lambda l: l[:1] == b'+' and not l.startswith(b'+++ '),
          b'removed': lambda l: l[:1] == b'-' and not l.startswith(b'--- ')}
    p, markers = 0, []
    for line in out:
        m = DIFF_MARKER.match(line)
        if m and not (p < len(orig) and orig[p] == line):
            n, hidden = int(m[1]), orig[p:p + int(m[1])]
            assert len(hidden) == n and n >= 3 and all(ok[m[2]](l) for l in hidden), (line, hidden[:3])
            markers.append((m[2], hidden)); p += n
        else:
            assert p < len(orig) and orig[p] == line, (p, line)
            p += 1
    assert p == len(orig)
    return markers


@pytest.mark.parametrize('path', corpus_files('diff'), ids=lambda p: p.name)
def test_diff_keeps_every_header_and_counts_every_change(path):
    data = path.read_bytes()
    out = diff.compress_diff(data)
    assert out is not None                     # large added/removed blocks: every corpus diff compresses now
    headers = lambda d: [l for l in d.split(b'\n') if l.startswith(STRUCTURAL)]
    assert headers(out) == headers(data)       # file headers, index lines, hunk headers: all kept
    markers = restores(data, out)
    assert markers
    for kind, hidden in markers:
        if kind != b'context':                 # hidden changed lines never carry an error/warning/failure word
            assert not any(re.search(rb'(?i)\b(error|fatal|panic|exception|traceback|fail|failed|failure|warn|warning)\b', l)
                           for l in hidden)
    plus = lambda d: sum(l[:1] == b'+' and not l.startswith(b'+++ ') for l in d.split(b'\n'))
    minus = lambda d: sum(l[:1] == b'-' and not l.startswith(b'--- ') for l in d.split(b'\n'))
    assert plus(out) + sum(len(h) for k, h in markers if k == b'added') == plus(data)
    assert minus(out) + sum(len(h) for k, h in markers if k == b'removed') == minus(data)
    assert diff.compress_diff(out) is None


def test_diff_blocks_keep_their_ends():
    "Each hidden block run sits between kept lines of the same sign: the block's first lines and last lines survive."
    data = corpus_path('diff_click_git_show.diff').read_bytes()
    out = diff.compress_diff(data).split(b'\n')
    for i, line in enumerate(out):
        m = DIFF_MARKER.match(line)
        if m and m[2] != b'context':
            sign = b'+' if m[2] == b'added' else b'-'
            assert out[i - 1][:1] == sign and out[i + 1][:1] == sign


def widen_hunks(data: bytes, n: int = 10) -> tuple[bytes, int]:
    "Add `n` context lines at both ends of every hunk (fixing its header counts); returns the diff and the hunk count."
    out, lines, i, hunks = [], data.split(b'\n'), 0, 0
    pad = [b' filler context line %d' % k for k in range(n)]
    while i < len(lines):
        m = re.match(rb'^@@ -(\d+),(\d+) \+(\d+),(\d+) @@(.*)$', lines[i])
        if not m: out.append(lines[i]); i += 1; continue
        old, new = int(m[2]), int(m[4])
        out += [b'@@ -%s,%d +%s,%d @@%s' % (m[1], old + 2 * n, m[3], new + 2 * n, m[5])] + pad
        i += 1
        while old > 0 or new > 0:
            line = lines[i]; out.append(line); i += 1
            if line[:1] != b'\\': old -= line[:1] != b'+'; new -= line[:1] != b'-'
        out += pad; hunks += 1
    return b'\n'.join(out), hunks


def test_diff_real_payload_with_wide_context():
    "The corpus diffs use git's 3-line context, so little is elided; with wider context the filler goes."
    text, hunks = widen_hunks(corpus_path('diff_click_git_show.diff').read_bytes())
    out = diff.compress_diff(text)
    restores(text, out)
    elided = sum(map(int, re.findall(rb'(\d+) context lines? elided \(caveman\)', out)))
    assert hunks > 5 and elided >= 12 * hunks  # of 20 filler lines per hunk at most 8 sit next to a kept line
    assert diff.compress_diff(out) is None


# ---------------------------------------------------------------- html retention
MAIN_XPATH = {'html_python311_argparse.html': '//div[@role="main"]', 'html_git_rebase.html': '//div[@id="content"]',
              'html_nodejs18_child_process.html': '//div[@id="apicontent"]'}

def test_main_xpaths_cover_html_corpus():
    assert sorted(MAIN_XPATH) == [p.name for p in corpus_files('html')]


@pytest.mark.parametrize('path', corpus_files('html'), ids=lambda p: p.name)
def test_html_drops_script_style_nav_text(path):
    raw = path.read_bytes()
    out = html.compress_html(raw)
    assert out is not None
    flat = ' '.join(out.decode().split())
    only_hidden = hidden_only_text(raw.decode())
    assert [t for t in only_hidden if t in flat] == []


@pytest.mark.parametrize('path', corpus_files('html'), ids=lambda p: p.name)
def test_html_keeps_main_article_headings(path):
    raw = path.read_bytes()
    out = html.compress_html(raw).decode()
    main = lxml.html.document_fromstring(raw).xpath(MAIN_XPATH[path.name])[0]
    heads = [' '.join(h.text_content().split()).rstrip('¶#§ ') for h in main.iter('h1', 'h2', 'h3', 'h4', 'h5', 'h6')]
    assert len(heads) >= 10
    got = {' '.join(l.lstrip('#').split()) for l in out.split('\n') if l.startswith('#')}
    assert [h for h in heads if h not in got] == []


def test_html_synthetic_page_drops_chrome():
    body = ''.join(f'<p>Paragraph {i} says something useful about the topic, at some length.</p>' for i in range(6))
    page = (f'<html><head><style>.x{{color:red}}</style></head><body><nav><a href="/">Site home link</a></nav>'
            f'<script>window.tracker = "t-123";</script><main class="content"><h1>Topic</h1>{body}</main>'
            f'<footer class="footer">Legal footer text here</footer></body></html>').encode()
    out = html.compress_html(page).decode()
    for gone in ('color:red', 'Site home link', 'tracker', 'Legal footer'): assert gone not in out
    assert out.startswith('# Topic') and out.count('Paragraph ') == 6


# ---------------------------------------------------------------- code retention
def python_names(src: bytes) -> list[str]:
    names = []
    def walk(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)): names.append(prefix + child.name)
            elif isinstance(child, ast.ClassDef): names.append(prefix + child.name); walk(child, prefix + child.name + '.')
            else: walk(child, prefix)
    walk(ast.parse(src), '')
    return names


_JS_FUNCS = {'function_declaration', 'generator_function_declaration', 'function_expression', 'generator_function',
             'arrow_function', 'method_definition'}
_JS_NAMES = '''
(function_declaration name: (_) @n) (generator_function_declaration name: (_) @n) (function_expression name: (_) @n)
(class_declaration name: (_) @n) (method_definition name: (_) @n)
(assignment_expression left: (member_expression property: (_) @n) right: [(function_expression) (arrow_function)])
(variable_declarator name: (identifier) @n value: [(function_expression) (arrow_function)])
'''
_TS_NAMES = _JS_NAMES + '''
(function_signature name: (_) @n) (method_signature name: (_) @n) (interface_declaration name: (_) @n)
(type_alias_declaration name: (_) @n) (abstract_class_declaration name: (_) @n) (enum_declaration name: (_) @n)
(internal_module name: (_) @n)
'''

def js_names(src: bytes, typescript: bool) -> list[bytes]:
    "Names of functions/classes/methods/types not nested inside a function body, by tree-sitter query."
    lang = ts.Language(tree_sitter_typescript.language_typescript() if typescript else tree_sitter_javascript.language())
    tree = ts.Parser(lang).parse(src)
    assert not tree.root_node.has_error
    nodes = ts.QueryCursor(ts.Query(lang, _TS_NAMES if typescript else _JS_NAMES)).captures(tree.root_node)['n']
    def nested(n):
        p = n.parent
        while p is not None:
            body = p.child_by_field_name('body') if p.type in _JS_FUNCS else None
            if body is not None and body.start_byte <= n.start_byte < body.end_byte: return True
            p = p.parent
        return False
    return sorted(src[n.start_byte:n.end_byte] for n in nodes if not nested(n))


@pytest.mark.parametrize('path', corpus_files('code'), ids=lambda p: p.name)
def test_code_keeps_every_outer_name(path):
    src = payload(path)
    out = code.compress_code(src)
    assert out is not None
    if path.name.endswith('_py.txt'):
        assert python_names(out) == python_names(src) and len(python_names(src)) > 50
    else:
        typescript = path.name.endswith('_d_ts.txt')
        want = js_names(src, typescript)
        assert len(want) > 20
        assert want == js_names(out, typescript)


@pytest.mark.parametrize('path', corpus_files('code'), ids=lambda p: p.name)
def test_code_output_parses_and_marks_elisions(path):
    src = payload(path)
    out = code.compress_code(src)
    lang = code.detect_language(src)
    assert not code.parser_for(lang).parse(out).root_node.has_error
    if lang == 'python': ast.parse(out)
    assert b'caveman: body elided' in out or b'doc comment lines elided' in out or out.count(b'...') > 10


# ---------------------------------------------------------------- repetition on real lines
def test_repetition_on_real_log_lines():
    lines = corpus_path('log_pytest_requests_failures.log').read_bytes().split(b'\n')[:40]
    data = b'\n'.join(lines[:10] + [lines[10]] * 25 + lines[11:]) + b'\n'
    out = repetition.compress_repetition(data)
    assert out.count(lines[10] + b'\n') == 1 + (data.count(lines[10] + b'\n') - 25)
    assert '… caveman: 24 identical lines elided …'.encode() in out
    assert repetition.compress_repetition(out) is None


# ---------------------------------------------------------------- fuzz: never raise
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.binary(max_size=3000),
                 st.lists(st.sampled_from([b'<div>', b'</div>', b'<p>', b'</p>', b'<pre>', b'</pre>', b'<a href=x>', b'</a>',
                                           b'<td>', b'<table>', b'<li>', b'<ul>', b'<h2>', b'</h2>', b'<script>', b'</script>',
                                           b'text, more text and words ', b'\r\n', b'\n', b'   ', b'@@ -1,3 +1,3 @@\n',
                                           b' ctx\n', b'-old\n', b'+new\n', b'def f():\n    return 1\n',
                                           b'function f() {\n  return 1;\n}\n', b'/**\n * doc\n * @param x\n */\n',
                                           b'\xff', b'same line\n']), max_size=300).map(b''.join)))
def test_fuzz_never_raises(data):
    for m in MODULES.values():
        res = m.COMPRESSOR(data)
        assert res is None or len(res.output) < len(data)


# ---------------------------------------------------------------- CRLF parity on real payloads
def test_crlf_parity_code_and_diff():
    "CRLF input gives the LF result with CRLF endings: no bare LF is introduced."
    src = payload(corpus_path('code_express_response_js.txt'))
    out = code.compress_code(src.replace(b'\n', b'\r\n'))
    assert out.count(b'\n') == out.count(b'\r\n') and out.replace(b'\r\n', b'\n') == code.compress_code(src)
    wide, _ = widen_hunks(corpus_path('diff_requests_git_log_p.diff').read_bytes())
    out = diff.compress_diff(wide.replace(b'\n', b'\r\n'))
    assert out.count(b'\n') == out.count(b'\r\n') and out.replace(b'\r\n', b'\n') == diff.compress_diff(wide)


# ---------------------------------------------------------------- random hunks: markers always restore
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(' +-'), st.integers(1, 30), st.booleans()), min_size=1, max_size=12),
       st.sampled_from(['f.py', 'yarn.lock', 'app.min.js']))
def test_random_hunks_restore_and_second_pass_declines(blocks, name):
    lines, old, new = [], 0, 0
    for sign, n, err in blocks:
        for k in range(n):
            lines.append(f'{sign}line {k}{" raises an error here" if err and k == n // 2 else ""}'.encode())
            old += sign != '+'; new += sign != '-'
    header = [f'diff --git a/{name} b/{name}'.encode(), f'--- a/{name}'.encode(), f'+++ b/{name}'.encode(),
              b'@@ -1,%d +1,%d @@' % (old, new)]
    data = b'\n'.join(header + lines) + b'\n'
    out = diff.compress_diff(data)
    if out is None: return
    for kind, hidden in restores(data, out):
        assert kind == b'context' or not any(b'error' in l for l in hidden)     # changed lines with failure words stay
    assert diff.compress_diff(out) is None
