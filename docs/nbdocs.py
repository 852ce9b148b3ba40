"""The notebooks as documentation without Jupyter (issue 18): execute them and render what they show.

    python docs/nbdocs.py site build/docs      # every notebook executed, one static HTML page each, an index
    python docs/nbdocs.py readme README.md     # nbs/index.ipynb executed and written as Markdown

Notebooks run the way `nbdev_test` runs them (execnb's CaptureShell, cwd = nbs/, cells flagged with
settings.ini's `tst_flags` or `#| eval: false` skipped), each in a fresh process, two at a time. A cell that
raises stops its notebook and fails the build (exit status 1, the traceback on stderr). The committed
notebooks stay without outputs: the outputs live only in what this script writes. Quarto (what
`nbdev_docs`/`nbdev_readme` need) cannot be installed offline, so this is the project's own renderer:
markdown-it-py for prose, Pygments for code.
"""
import argparse, configparser, html, os, re, sys, time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NBS = ROOT / 'nbs'
README_NOTE = ('<!-- Generated from nbs/index.ipynb by `make readme` (docs/nbdocs.py): edit the notebook, '
               'not this file; `make check-sync` fails when they differ. -->')
MAX_OUTPUT_CHARS = 20_000      # one output longer than this is cut in the page, with a note saying so

# The architecture, bottom up: a notebook's number says its layer (nothing imports from a higher number). A
# section's heading is this phrase and the modules of the notebooks listed under it (`section_title`), so no
# notebook can be missing from its heading.
LAYERS = [(0, 'Foundations'),
          (10, 'Compressors: one pure bytes-to-bytes transform per content type'),
          (25, 'Tool catalogs and query-narrowed views'),
          (30, 'The engine: detect, compress, verify, store, publish'),
          (40, 'caveman-shrink: smaller tool catalogs'),
          (50, 'The MCP server and the policy it shares with the hook'),
          (60, 'Report, hooks, installation, the command line, the explorer'),
          (70, 'Evals')]
ANSI = re.compile(r'\x1b\[[0-9;?]*[A-Za-z]')
DIRECTIVE = re.compile(r'^\s*#\s*\|\s*(.*)$')


def notebooks() -> list[Path]:
    "The documented notebooks in architecture order (file-name order, as nbdev exports them), `index.ipynb` first."
    nbs = sorted(p for p in NBS.glob('*.ipynb') if not p.name.startswith(('_', '.')) and p.name != 'index.ipynb')
    return [NBS / 'index.ipynb'] + nbs


def skip_flags() -> set[str]:
    cfg = configparser.ConfigParser(); cfg.read(ROOT / 'settings.ini')
    return set(cfg['DEFAULT'].get('tst_flags', 'notest').split())


def directives(source: str) -> dict[str, list[str]]:
    "The `#| name args` lines at the top of a cell's source, as {name: args}."
    out = {}
    for line in source.splitlines():
        m = DIRECTIVE.match(line)
        if not m:
            if line.strip(): break
            continue
        name, *args = m.group(1).split()
        out[name.rstrip(':')] = args
    return out


def strip_directives(source: str) -> str:
    lines = source.splitlines()
    while lines and (DIRECTIVE.match(lines[0]) or not lines[0].strip()): lines.pop(0)
    return '\n'.join(lines)


def execute(path: Path) -> tuple[list[dict], str, float]:
    "Run notebook `path` like nbdev_test; returns (cells as dicts with `outputs`, error text or '', seconds)."
    from execnb.nbio import read_nb
    from execnb.shell import CaptureShell
    from fastcore.xtras import working_directory
    flags, start = skip_flags(), time.time()
    os.environ['IN_TEST'] = '1'
    sys.path.insert(0, str(ROOT))
    nb = read_nb(path)
    def no_eval(cell) -> bool:
        if cell.cell_type != 'code': return True
        if 'nbdev_export' + '(' in cell.source: return True
        d = directives(cell.source)
        return d.get('eval', [''])[0].lower() == 'false' or bool(flags & d.keys())
    shell, err = CaptureShell(path), ''
    try:
        with working_directory(path.parent): shell.run_all(nb, exc_stop=True, preproc=no_eval)
    except BaseException:
        err = shell.prettytb(fname=path) if shell.exc else __import__('traceback').format_exc()
    cells = [{'cell_type': c.cell_type, 'source': c.source, 'outputs': [dict(o) for o in c.get('outputs', [])]}
             for c in nb.cells]
    return cells, err, time.time() - start


NB_TIMEOUT = int(os.environ.get('NBTEST_TIMEOUT', '1200'))   # seconds one notebook may run, as make test-nbs allows


def _execute_in_child(path: Path) -> tuple[list[dict], str, float]:
    "`execute(path)` in a fresh interpreter (`nbdocs.py run-one`): a notebook that hangs, kills its own process or crashes the interpreter fails with a reason instead of stopping the build."
    import json, subprocess, tempfile
    start = time.time()
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / 'result.json'
        try:
            r = subprocess.run([sys.executable, str(Path(__file__).resolve()), 'run-one', str(path), str(out)], capture_output=True,
                               text=True, timeout=NB_TIMEOUT, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            return [], f'{path.name}: still running after {NB_TIMEOUT} s (NBTEST_TIMEOUT), stopped', time.time() - start
        if not out.exists():
            return [], f'{path.name}: the notebook process ended with status {r.returncode} before writing its result:\n{r.stderr[-3000:]}', time.time() - start
        cells, err, secs = json.loads(out.read_text())
    return cells, err, secs


def execute_all(paths: list[Path], workers: int = 2) -> dict[Path, tuple[list[dict], str, float]]:
    "Run each notebook in its own fresh process (no state leaks between notebooks), `workers` at a time."
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(max(1, workers)) as pool:
        return dict(zip(paths, pool.map(_execute_in_child, paths)))


# ---------------------------------------------------------------------------------------------------
# Outputs: one plain-text or HTML rendering per output, shared by the site and the README

def _text(value) -> str:
    return ''.join(value) if isinstance(value, list) else str(value)


def output_text(out: dict) -> str:
    "The plain text of one output (stream, result or error), ANSI escapes removed."
    kind = out.get('output_type')
    if kind == 'stream': return ANSI.sub('', _text(out.get('text', '')))
    if kind == 'error': return ANSI.sub('', '\n'.join(out.get('traceback', [])))
    return ANSI.sub('', _text(out.get('data', {}).get('text/plain', '')))


def module_of(cells: list[dict]) -> str:
    "The module a notebook exports (`#| default_exp`), without the package: `compressors.json`; '' for none."
    for c in cells:
        if c['cell_type'] == 'code' and (d := directives(_text(c['source']))).get('default_exp'): return d['default_exp'][0]
    return ''


def title_and_summary(cells: list[dict]) -> tuple[str, str]:
    "The notebook's `# title` and its `> summary` line, from its first markdown cell."
    for c in cells:
        if c['cell_type'] != 'markdown': continue
        src = _text(c['source'])
        t = re.search(r'^#\s+(.+)$', src, re.M); s = re.search(r'^>\s*(.+)$', src, re.M)
        return (t.group(1).strip() if t else ''), (s.group(1).strip() if s else '')
    return '', ''


# ---------------------------------------------------------------------------------------------------
# The README: index.ipynb as Markdown

def readme_markdown(cells: list[dict]) -> str:
    "index.ipynb's cells as GitHub Markdown: prose as written, shown code in ```python fences, outputs in plain fences."
    parts, first = [], True
    for c in cells:
        src = _text(c['source'])
        if c['cell_type'] == 'markdown':
            parts.append(src.strip())
            if first: parts.append(README_NOTE); first = False
            continue
        if c['cell_type'] != 'code' or 'hide' in directives(src) or 'default_exp' in directives(src): continue
        code = strip_directives(src).strip()
        if code: parts.append(f'```python\n{code}\n```')
        text = '\n'.join(t.rstrip('\n') for t in map(output_text, c['outputs']) if t.strip())
        if text: parts.append(f'```\n{text}\n```')
    return '\n\n'.join(parts) + '\n'


# ---------------------------------------------------------------------------------------------------
# The site

CSS = """
body{font:16px/1.55 system-ui,-apple-system,'Segoe UI',sans-serif;margin:0;color:#1d1d1f;background:#fff}
main{max-width:66rem;margin:0 auto;padding:1rem 1.5rem 4rem}
nav{background:#f4f1ea;border-bottom:1px solid #ddd;padding:.5rem 1.5rem;font-size:.9rem}
nav a{margin-right:1rem}
pre{background:#f7f7f9;border:1px solid #e3e3e8;border-radius:4px;padding:.6rem .8rem;overflow-x:auto;font-size:13px;line-height:1.4}
div.cell{margin:1rem 0}
div.output pre{background:#fff;border-left:3px solid #8aa;border-radius:0}
div.output pre.stderr{border-left-color:#c96}
table{border-collapse:collapse;margin:.8rem 0}td,th{border:1px solid #ddd;padding:.25rem .5rem;font-size:.92rem}
code{font-size:.92em}
.note{color:#666;font-style:italic}
li.nb span{color:#555}
nav.toc{background:none;border:1px solid #e3e3e8;border-radius:4px;padding:.5rem 1rem;font-size:.9rem;margin:1rem 0}
nav.toc ul{margin:.3rem 0;padding-left:1.2rem;columns:2}nav.toc a{margin:0}
h2[id],h3[id]{scroll-margin-top:.5rem}
"""


def _markdown():
    from markdown_it import MarkdownIt
    return MarkdownIt('commonmark', {'html': True}).enable('table').enable('strikethrough')


def plain(inline_md: str) -> str:
    "The text of one line of Markdown without its markup (`code` -> code): for `<title>` and anchors."
    toks = _markdown().parseInline(inline_md)[0].children or []
    return ''.join(t.content for t in toks if t.type in ('text', 'code_inline', 'softbreak'))


def slug(text: str) -> str:
    "GitHub's anchor for a heading's text (lower case, punctuation dropped, each space a `-`), so `#links` written for the README work here too."
    return re.sub(r'[^\w\- ]', '', text.lower()).replace(' ', '-')


def render_markdown(src: str, seen: dict, sections: list | None = None) -> str:
    "`src` as HTML, every heading with GitHub's `id` (a repeat gets `-1`, `-2`, … as on GitHub); `seen` counts the ids of the page so far; each `##` heading is appended to `sections` as (id, its inline HTML)."
    md = _markdown()
    toks = md.parse(src)
    for i, t in enumerate(toks):
        if t.type != 'heading_open': continue
        base = slug(''.join(c.content for c in toks[i + 1].children or [] if c.type in ('text', 'code_inline')))
        n = seen.get(base, 0); seen[base] = n + 1
        t.attrSet('id', f'{base}-{n}' if n else base)
        if t.tag == 'h2' and sections is not None: sections.append((t.attrGet('id'), md.renderer.render(toks[i + 1].children or [], md.options, {})))
    return md.renderer.render(toks, md.options, {})


def _highlight(code: str) -> str:
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import PythonLexer
    return highlight(code, PythonLexer(), HtmlFormatter(nowrap=False, cssclass='highlight'))


def _pre(text: str, cls: str = '') -> str:
    if len(text) > MAX_OUTPUT_CHARS:
        text = text[:MAX_OUTPUT_CHARS] + f'\n… ({len(text) - MAX_OUTPUT_CHARS:,} more characters not shown)'
    return f'<pre class="{cls}">{html.escape(text)}</pre>'


def output_html(out: dict) -> str:
    "One output as HTML: images inline, a result's own HTML as is, everything else as escaped text."
    data = out.get('data', {})
    for mime in ('image/png', 'image/jpeg'):
        if mime in data: return f'<img alt="output" src="data:{mime};base64,{_text(data[mime]).strip()}">'
    if 'image/svg+xml' in data: return _text(data['image/svg+xml'])
    if 'text/html' in data: return _text(data['text/html'])
    text = output_text(out)
    if not text.strip(): return ''
    return _pre(text, 'stderr' if out.get('name') == 'stderr' or out.get('output_type') == 'error' else '')


def page_html(title: str, body: str, nav: str) -> str:
    from pygments.formatters import HtmlFormatter
    style = HtmlFormatter().get_style_defs('.highlight')
    return (f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<style>{CSS}{style}</style></head>\n<body><nav>{nav}</nav><main>\n{body}\n</main></body></html>\n')


def notebook_html(cells: list[dict]) -> str:
    "The body of one notebook's page: prose rendered, shown code highlighted, each code cell's outputs after it."
    parts, ids, sections = [], {}, []
    for c in cells:
        src = _text(c['source'])
        if c['cell_type'] == 'markdown':
            parts.append(f'<div class="cell md">{render_markdown(src, ids, sections)}</div>'); continue
        if c['cell_type'] != 'code': continue
        d = directives(src)
        if 'default_exp' in d and not strip_directives(src).strip(): continue
        if 'hide' in d: continue            # a hidden cell is hidden whole, its outputs too (as nbdev renders it)
        outs = ''.join(output_html(o) for o in c['outputs'])
        code = strip_directives(src).strip()
        if not code and not outs: continue
        parts.append('<div class="cell code">' + (_highlight(code) if code else '')
                     + (f'<div class="output">{outs}</div>' if outs else '') + '</div>')
    if len(sections) >= 2 and parts:   # a page of several sections opens with their list, after its title
        toc = ''.join(f'<li><a href="#{i}">{h}</a></li>' for i, h in sections)
        parts.insert(1, f'<nav class="toc"><b>On this page</b><ul>{toc}</ul></nav>')
    return '\n'.join(parts)


def page_name(path: Path) -> str:
    "The page of a notebook; index.ipynb (the README) is `front.html`, `index.html` being the contents."
    return 'front.html' if path.name == 'index.ipynb' else path.stem + '.html'


def build_site(out_dir: Path, paths: list[Path], workers: int = 2) -> list[str]:
    "Execute `paths`, write one page each and index.html into `out_dir`; returns the error texts (empty when all ran)."
    out_dir.mkdir(parents=True, exist_ok=True)
    results = execute_all(paths, workers)
    errors, entries = [], []
    for i, p in enumerate(paths):
        cells, err, secs = results[p]
        if err: errors.append(f'{p.name}:\n{err}')
        title, summary = title_and_summary(cells)
        summary = _markdown().renderInline(summary)
        prev_ = f'<a href="{page_name(paths[i-1])}">← {paths[i-1].stem}</a>' if i else ''
        next_ = f'<a href="{page_name(paths[i+1])}">{paths[i+1].stem} →</a>' if i + 1 < len(paths) else ''
        nav = f'<a href="index.html">caveman: contents</a>{prev_}{next_}'
        body = notebook_html(cells)
        if err: body += f'<h2>Execution failed</h2>{_pre(err, "stderr")}'
        body += f'<p class="note">Executed from nbs/{p.name} in {secs:.1f} s.</p>'
        (out_dir / page_name(p)).write_text(page_html(plain(title) or p.stem, body, nav), encoding='utf-8')
        entries.append((p, title, summary, module_of(cells)))
    (out_dir / 'index.html').write_text(index_html(entries), encoding='utf-8')
    return errors


def layer_of(path: Path) -> int:
    "The key in `LAYERS` of the section a notebook belongs to, from the number its file name starts with (none: the last)."
    n = int(m.group()) if (m := re.match(r'\d+', path.stem)) else LAYERS[-1][0]
    return max(k for k, _ in LAYERS if k <= n)


def section_title(layer: int, modules: list[str]) -> str:
    "A section's heading: the layer's phrase and the modules of its notebooks, in order (`compressors.` dropped under Compressors)."
    names = [m.removeprefix('compressors.') if layer == 10 else m for m in modules if m]
    return dict(LAYERS)[layer] + (' — ' + ', '.join(names) if names else '')


def index_html(entries: list[tuple[Path, str, str, str]]) -> str:
    "The contents page: the front page (index.ipynb) first, then the notebooks layer by layer, each title's Markdown rendered."
    body = ['<h1>caveman: the notebooks</h1>',
            '<p>Each page is one notebook of <code>nbs/</code>, executed when this site was built: its prose, '
            'its code and the outputs the code really gave. They are listed bottom up, in the order of the '
            'architecture: a notebook uses only those above it.</p><ul>']
    layer, inline = None, _markdown().renderInline
    for p, title, summary, _ in entries:
        if p.name == 'index.ipynb':
            body.append(f'<li class="nb"><a href="{page_name(p)}">Front page (README)</a> <span>{summary}</span></li></ul>')
            continue
        if layer_of(p) != layer:
            if layer is not None: body.append('</ul>')
            layer = layer_of(p)
            heading = section_title(layer, [m for q, _, _, m in entries if q.name != 'index.ipynb' and layer_of(q) == layer])
            body.append(f'<h2 id="{slug(heading)}">{html.escape(heading)}</h2><ul>')
        body.append(f'<li class="nb"><a href="{page_name(p)}">{html.escape(p.stem)}: {inline(title)}</a><br>'
                    f'<span>{summary}</span></li>')
    body.append('</ul>')
    return page_html('caveman: the notebooks', '\n'.join(body), '<a href="index.html">caveman: contents</a>')


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    sub = ap.add_subparsers(dest='cmd', required=True)
    s = sub.add_parser('site', help='execute the notebooks and write a static HTML site')
    s.add_argument('out', type=Path)
    s.add_argument('notebooks', nargs='*', help='notebook file names (default: all)')
    s.add_argument('--workers', type=int, default=2)
    r = sub.add_parser('readme', help='execute nbs/index.ipynb and write it as Markdown')
    r.add_argument('out', type=Path)
    o = sub.add_parser('run-one', help='(internal) execute one notebook and write its cells, error and time as JSON')
    o.add_argument('notebook', type=Path); o.add_argument('out', type=Path)
    a = ap.parse_args(argv)
    if a.cmd == 'run-one':
        import json
        a.out.write_text(json.dumps(execute(a.notebook.resolve()), default=str)); return 0
    if a.cmd == 'readme':
        cells, err, _ = execute(NBS / 'index.ipynb')
        if err: sys.stderr.write(err + '\n'); return 1
        a.out.write_text(readme_markdown(cells), encoding='utf-8')
        print(f'wrote {a.out} from nbs/index.ipynb'); return 0
    if a.notebooks:     # names in nbs/ (kept in architecture order) or paths of other notebooks
        named = {n for n in a.notebooks if '/' not in n and (NBS / n).is_file()}
        paths = [p for p in notebooks() if p.name in named] + [Path(n).resolve() for n in a.notebooks if n not in named]
    else: paths = notebooks()
    start = time.time()
    errors = build_site(a.out, paths, a.workers)
    for e in errors: sys.stderr.write(e + '\n')
    print(f'{len(paths)} notebooks executed and written to {a.out}/ in {time.time() - start:.0f} s; {len(errors)} failed')
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main())
