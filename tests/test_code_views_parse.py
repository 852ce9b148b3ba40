"""The code compressor does not parse its own output again when the input parsed cleanly: every
replacement is valid by construction. These sources put the constructions under stress — docstrings
in every prefix and quote style (f-strings cut inside an interpolation, raw and byte strings, quotes
inside, a trailing backslash), bodies on the `def` line, CRLF line ends, nested functions and
classes, JavaScript arrows, methods, generators and JSDoc — and each view is parsed here with
tree-sitter and, for Python, with the standard library's `ast`."""
import ast, random
import pytest
import tree_sitter_javascript, tree_sitter_python
from tree_sitter import Language, Parser
from caveman.compressors.code import compress_code

PY = Parser(Language(tree_sitter_python.language()))
JS = Parser(Language(tree_sitter_javascript.language()))

DOCS = ['"""Sum {x}.\n\n    More text.\n    """', 'f"""Value {x\n    } and more."""', "r'''Raw \\d+ pattern\n    second line'''",
        'b"""Bytes doc\n    line"""', '"""Say "hi" twice\n    again"""', "'''It\\'s here\n    more'''", '"""Ends with a slash \\\n    next"""',
        '"""\n    Starts on the next line.\n    """', 'rb"""x\n    y"""', '"plain one line"', '"""Has # hash and { brace\n    end"""']


def python_source(r: random.Random) -> str:
    out = ['import os', '']
    for i in range(r.randint(3, 12)):
        doc = r.choice(DOCS)
        kind = r.randrange(4)
        if kind == 0:
            out += [f'def f{i}(x):', f'    {doc}', '    y = x + 1', '    return y', '']
        elif kind == 1:
            out += [f'class C{i}:', f'    {doc}', '    def m(self, x):', f'        {doc.replace(chr(10), chr(10) + "    ")}',
                    '        if x:', '            return 1', '        return 2', '']
        elif kind == 2:
            out += [f'def g{i}(x): return (x,', '    x)', '']
        else:
            out += [f'async def h{i}():', f'    {doc}', '    def inner():', '        return 1', '    return inner', '']
    return '\n'.join(out) + '\n'


def javascript_source(r: random.Random) -> str:
    out = ["'use strict';", "const fs = require('fs');", '']
    pad = ['  const c = [a, a + 1, a + 2].map((v) => v * 2);', '  console.log("computed the values", c.length);']
    for i in range(r.randint(3, 12)):
        kind = r.randrange(4)
        doc = ['/**', ' * Read the thing.', ' * More words here.', ' * ```js', ' * read(1)', ' * ```', ' * @param {number} a the input', ' */']
        if kind == 0:
            out += doc + [f'function f{i}(a) {{', '  const b = a + 1;', *pad, '  return b;', '}', '']
        elif kind == 1:
            out += [f'const g{i} = (a) => {{', *pad, '  return a * 2;', '};', '']
        elif kind == 2:
            out += [f'class K{i} {{', '  m(a) {', *pad, '    return a;', '  }', '  *gen() {', '    yield 1;', '  }', '}', '']
        else:
            out += [f'module.exports.h{i} = function (a) {{', *pad, '  if (a) {', '    return 1;', '  }', '  return 2;', '};', '']
    return '\n'.join(out) + '\n'


@pytest.mark.parametrize('seed', range(40))
@pytest.mark.parametrize('newline', ['\n', '\r\n'])
def test_python_views_parse(seed, newline):
    src = python_source(random.Random(seed)).replace('\n', newline).encode()
    assert not PY.parse(src).root_node.has_error
    out = compress_code(src)
    if out is None: return
    assert not PY.parse(out).root_node.has_error, out.decode()
    ast.parse(out.decode().replace('\r\n', '\n'))


@pytest.mark.parametrize('seed', range(40))
@pytest.mark.parametrize('newline', ['\n', '\r\n'])
def test_javascript_views_parse(seed, newline):
    src = javascript_source(random.Random(seed)).replace('\n', newline).encode()
    assert not JS.parse(src).root_node.has_error
    out = compress_code(src)
    assert out is not None and len(out) < len(src)
    assert not JS.parse(out).root_node.has_error, out.decode()
