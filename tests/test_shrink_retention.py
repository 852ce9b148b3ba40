"""Retention suite for caveman-shrink (issue 15): on real catalogs dumped from MCP servers installed from npm and PyPI
(tests/_mcp_catalogs.py), every fact an agent needs to call a tool validly, to choose it, or to use it safely survives
in that tool's shrunk definition — in English, in the Chinese of the AMap / Baidu Maps servers, and in our own
Japanese / Korean / German / French / Spanish translations (tests/_translated_catalog.py: no installable server ships
those). Also: annotations byte-identical, `$schema` kept where the dialect matters (validation under each schema's
declared dialect with `jsonschema`), grapheme-safe and CJK-safe cuts, list items and Args sections judged item by item,
every dumped catalog keeping the invariants of the existing suite.

The judge reads the original and the shrunk catalog with its own code (json, `regex`'s grapheme clusters,
`jsonschema`); it imports nothing from the compressor but the public `shrink` it judges."""
import json

import pytest
import regex
from jsonschema.validators import validator_for, Draft202012Validator

from caveman.shrink import shrink
from _mcp_catalogs import dumped_catalogs
from _toolschema_checks import catalog_validation_differences, check_catalog
from _translated_catalog import TRANSLATED

pytestmark = pytest.mark.slow   # installs the MCP servers on first use

# (catalog, tool, where, fact, kind): `where` is 'description' or a path of keys into the tool's input schema;
# `fact` is a string, or a tuple of strings that must all survive in this order (a fact with its context).
FACTS = [
    # valid call
    ('npm_filesystem', 'move_file', 'description', 'If the destination exists, the operation will fail.', 'valid-call'),
    ('npm_filesystem', 'search_files', 'description', "'**/*.ext' to match files in all subdirectories", 'valid-call'),
    ('npm_filesystem', 'search_files', 'description', 'The patterns should be glob-style patterns that match paths relative to the working directory.', 'valid-call'),
    ('npm_filesystem', 'read_text_file', 'description', "Use the 'head' parameter to read only the first N lines of a file", 'valid-call'),
    ('npm_filesystem', 'edit_file', 'description', 'Each edit replaces exact line sequences with new content.', 'valid-call'),
    ('npm_filesystem', 'create_directory', 'description', 'If the directory already exists, this operation will succeed silently.', 'valid-call'),
    ('npm_filesystem', 'read_multiple_files', 'description', "Failed reads for individual files won't stop the entire operation.", 'valid-call'),
    ('npm_filesystem', 'directory_tree', 'description', 'Files have no children array, while directories always have a children array', 'valid-call'),
    ('npm_playwright', 'browser_find', ('properties', 'regex', 'description'), 'Provide either text or regex, not both.', 'valid-call'),
    ('npm_playwright', 'browser_fill_form', ('properties', 'fields', 'items', 'properties', 'value', 'description'),
     'If the field is a checkbox, the value should be `true` or `false`.', 'valid-call'),
    # a default the schema states (`"default": "css"`): the prose restatement may go, the keyword must stay
    ('npm_playwright', 'browser_take_screenshot', ('properties', 'scale'), {'default': 'css', 'enum': ['css', 'device']}, 'valid-call'),
    # defaults stated only in prose (no `default` keyword): the sentence must stay
    ('npm_playwright', 'browser_console_messages', ('properties', 'all', 'description'), 'Defaults to false.', 'valid-call'),
    ('npm_playwright', 'browser_click', ('properties', 'button', 'description'), 'defaults to left', 'valid-call'),
    ('npm_playwright', 'browser_take_screenshot', ('properties', 'filename', 'description'),
     'If not specified, the screenshot is saved into the output directory as `page-{timestamp}.{png|jpeg|webp}`.', 'valid-call'),
    ('npm_playwright', 'browser_run_code_unsafe', ('properties', 'code', 'description'),
     'It will be invoked with a single argument, page, which you can use for any page interaction.', 'valid-call'),
    ('npm_playwright', 'browser_run_code_unsafe', ('properties', 'filename', 'description'),
     'If both code and filename are provided, code will be ignored.', 'valid-call'),
    ('npm_everything', 'gzip-file-as-resource', ('properties', 'outputType', 'description'), "'resource' returns a full resource object.", 'valid-call'),
    ('npm_everything', 'simulate-research-query', 'description', "If 'ambiguous' is true and client supports elicitation", 'valid-call'),
    ('npm_chart', 'generate_spreadsheet', 'description', "When 'rows' or 'values' fields are provided, it renders as a pivot table", 'valid-call'),
    ('npm_chart', 'generate_spreadsheet', ('properties', 'columns', 'description'), 'for pivot tables, this is used for column grouping.', 'valid-call'),
    ('npm_chart', 'generate_area_chart', ('properties', 'data', 'description'),
     'when stacking is needed for area, the data should contain a `group` field', 'valid-call'),
    ('npm_chart', 'generate_district_map', ('properties', 'title', 'description'), 'The map title should not exceed 16 characters.', 'valid-call'),
    ('npm_chart', 'generate_district_map', ('properties', 'data', 'description'), 'If `subdistricts` has a value, `showAllSubdistricts` must be set to true.', 'valid-call'),
    ('npm_sequential_thinking', 'sequentialthinking', 'description', 'Only set nextThoughtNeeded to false when truly done', 'valid-call'),
    ('npm_sequential_thinking', 'sequentialthinking', 'description', 'thoughtNumber: Current number in sequence (can go beyond initial total if needed)', 'valid-call'),
    # tool choice
    ('npm_filesystem', 'read_text_file', 'description', 'Use this tool when you need to examine the contents of a single file.', 'tool-choice'),
    ('npm_filesystem', 'read_multiple_files', 'description',
     'This is more efficient than reading files one by one when you need to analyze or compare multiple files.', 'tool-choice'),
    ('npm_filesystem', 'list_allowed_directories', 'description',
     'Use this to understand which directories and their nested paths are available before trying to access files.', 'tool-choice'),
    ('npm_playwright', 'browser_take_screenshot', 'description', "You can't perform actions based on the screenshot, use browser_snapshot for actions.", 'tool-choice'),
    ('npm_chart', 'generate_district_map', 'description', 'This tool is limited to generating data maps within China.', 'tool-choice'),
    ('npm_chart', 'generate_district_map', 'description', 'It is not suitable for showing the distribution of specific locations', 'tool-choice'),
    ('npm_chart', 'generate_column_chart', 'description', 'column charts are preferable because our eyes are better at judging height', 'tool-choice'),
    ('npm_sequential_thinking', 'sequentialthinking', 'description', ('When to use this tool:', '- Breaking down complex problems into steps'), 'tool-choice'),
    ('npm_sequential_thinking', 'sequentialthinking', 'description', ('When to use this tool:', '- Problems that require a multi-step solution'), 'tool-choice'),
    ('pypi_fetch', 'fetch', 'description', 'this tool now grants you internet access', 'tool-choice'),
    # safety
    ('npm_filesystem', 'write_file', 'description', 'Use with caution as it will overwrite existing files without warning.', 'safety'),
    ('npm_filesystem', 'write_file', 'description', 'Only works within allowed directories.', 'safety'),
    ('npm_filesystem', 'move_file', 'description', 'Both source and destination must be within allowed directories.', 'safety'),
    ('npm_playwright', 'browser_run_code_unsafe', 'description', 'Unsafe: executes arbitrary JavaScript in the Playwright server process and is RCE-equivalent.', 'safety'),
    ('npm_sequential_thinking', 'sequentialthinking', 'description', ('You should:', '6. Ignore information that is irrelevant to the current step'), 'safety'),
    # behaviour, capability, output shape: what the tool does and gives back, which the output schema does not say
    # (issue 15 break test: the real @modelcontextprotocol/server-filesystem catalog lost all six first ones)
    ('npm_filesystem', 'create_directory', 'description', 'Can create multiple nested directories in one operation.', 'behaviour'),
    ('npm_filesystem', 'edit_file', 'description', 'Returns a git-style diff showing the changes made.', 'behaviour'),
    ('npm_filesystem', 'read_media_file', 'description',
     'Image and audio files are returned as image/audio content; any other file type is returned as an embedded resource.', 'behaviour'),
    ('npm_filesystem', 'search_files', 'description', 'Returns full paths to all matching items.', 'behaviour'),
    ('npm_filesystem', 'read_text_file', 'description', 'Operates on the file as text regardless of extension.', 'behaviour'),
    ('npm_filesystem', 'read_multiple_files', 'description', "Each file's content is returned with its path as a reference.", 'behaviour'),
    ('npm_filesystem', 'move_file', 'description', 'Can move files between directories and rename them in a single operation.', 'behaviour'),
    ('npm_filesystem', 'get_file_info', 'description',
     'Returns comprehensive information including size, creation time, last modified time, permissions, and type.', 'behaviour'),
    ('npm_filesystem', 'directory_tree', 'description', 'The output is formatted with 2-space indentation for readability.', 'behaviour'),
    ('npm_playwright', 'browser_network_requests', 'description', 'Returns a numbered list of network requests since loading the page.', 'behaviour'),
    ('npm_playwright', 'browser_console_messages', ('properties', 'filename', 'description'), 'If not provided, messages are returned as text.', 'behaviour'),
    ('npm_everything', 'get-resource-links', 'description', 'Returns up to ten resource links that reference different types of resources', 'behaviour'),
    ('npm_sequential_thinking', 'sequentialthinking', 'description', ('Key features:', '- You can question or revise previous thoughts'), 'behaviour'),
    ('npm_sequential_thinking', 'sequentialthinking', 'description', ('Key features:', '- You can adjust total_thoughts up or down as you progress'), 'behaviour'),
    ('npm_amap_zh', 'maps_direction_driving', 'description', '并且返回通勤方案的数据', 'behaviour'),
    ('translated', 'move_file_ja', 'description', 'ディレクトリ間の移動と名前変更を一回の操作で行えます', 'behaviour'),
    ('translated', 'move_file_ko', 'description', '디렉터리 사이의 이동과 이름 변경을 한 번에 할 수 있습니다', 'behaviour'),
    ('translated', 'search_files_es', 'description', 'Devuelve rutas completas a todos los elementos coincidentes.', 'behaviour'),
    # tool choice in praise's clothing: a condition / negation makes it guidance, not filler
    ('npm_filesystem', 'search_files', 'description', "Great for finding files when you don't know their exact location.", 'tool-choice'),
    ('npm_filesystem', 'get_file_info', 'description', 'This tool is perfect for understanding file characteristics without reading the actual content.', 'tool-choice'),
    ('npm_chart', 'generate_fishbone_diagram', 'description', 'It suits problems that can be split into multiple related factors.', 'tool-choice'),
    # context: the sentence a kept one refers back to
    ('npm_chart', 'generate_district_map', ('properties', 'data', 'properties', 'name', 'description'),
     ('The name should be more specific and add attributive descriptions, for example, "西安市" is better than "西安", "杭州西湖区" is better than "西湖区".',
      'It cannot be a specific place name or a vague name'), 'valid-call'),
    # Chinese (real: AMap, Baidu Maps)
    ('npm_baidu_map_zh', 'map_geocode', ('properties', 'address', 'description'), '最多支持84个字节', 'valid-call'),
    ('npm_baidu_map_zh', 'map_geocode', ('properties', 'address', 'description'), '只有当地址库中存在该地址描述时才有返回', 'valid-call'),
    ('npm_baidu_map_zh', 'map_road_traffic', ('properties', 'vertexes', 'description'), '顶点顺序需按逆时针排列', 'valid-call'),
    ('npm_baidu_map_zh', 'map_road_traffic', ('properties', 'bounds', 'description'), '格式为：纬度,经度;纬度,经度', 'valid-call'),
    ('npm_amap_zh', 'maps_direction_transit_integrated', 'description', '跨城场景下必须传起点城市与终点城市', 'valid-call'),
    ('npm_amap_zh', 'maps_bicycling', 'description', '最大支持 500km 的骑行路线规划', 'valid-call'),
    # Japanese, Korean, German, French, Spanish (our translations of the filesystem server's descriptions)
    ('translated', 'write_file_ja', 'description', '注意して使用してください', 'safety'),
    ('translated', 'write_file_ja', 'description', '許可されたディレクトリ内でのみ動作します', 'safety'),
    ('translated', 'move_file_ja', 'description', '移動先が既に存在する場合、操作は失敗します', 'valid-call'),
    ('translated', 'write_file_ko', 'description', '주의해서 사용하세요', 'safety'),
    ('translated', 'write_file_ko', 'description', '허용된 디렉터리 안에서만 작동합니다', 'safety'),
    ('translated', 'move_file_ko', 'description', '대상이 이미 존재하면 작업이 실패합니다', 'valid-call'),
    ('translated', 'write_file_de', 'description', 'Mit Vorsicht verwenden, da vorhandene Dateien ohne Warnung überschrieben werden.', 'safety'),
    ('translated', 'write_file_de', 'description', 'Funktioniert nur innerhalb erlaubter Verzeichnisse.', 'safety'),
    ('translated', 'read_text_file_fr', 'description', 'Utilisez le paramètre « head » pour lire uniquement les N premières lignes', 'valid-call'),
    ('translated', 'read_text_file_fr', 'description', 'Ne fonctionne que dans les répertoires autorisés.', 'safety'),
    ('translated', 'search_files_es', 'description', 'Los patrones deben ser patrones de estilo glob relativos al directorio de trabajo.', 'valid-call'),
    ('translated', 'search_files_es', 'description', 'Solo busca dentro de los directorios permitidos.', 'safety'),
]


@pytest.fixture(scope='module')
def catalogs() -> dict[str, bytes]:
    "Every dumped real catalog and the translated one, as bytes."
    out = {name: path.read_bytes() for name, path in dumped_catalogs().items()}
    out['translated'] = json.dumps(TRANSLATED, ensure_ascii=False).encode()
    return out


@pytest.fixture(scope='module')
def shrunk(catalogs) -> dict[str, bytes]:
    return {name: shrink(x, ':memory:')[0] for name, x in catalogs.items()}


def tool(catalog: bytes, name: str) -> dict:
    return next(t for t in json.loads(catalog)['tools'] if t['name'] == name)


def text_at(t: dict, where) -> str:
    if where == 'description': return t.get('description', '')
    node = t['inputSchema']
    for k in where: node = node[k]
    return node


def survives(fact, text) -> bool:
    """Whether `fact` (or every part of a tuple, in order) occurs in `text`, whitespace runs compared as one space; a dict
    `fact` is a set of schema keywords the schema object `text` must carry with those values."""
    if isinstance(fact, dict): return isinstance(text, dict) and all(k in text and text[k] == v for k, v in fact.items())
    norm = lambda s: ' '.join(s.split())
    text, at = norm(text), 0
    for part in (fact if isinstance(fact, tuple) else (fact,)):
        at = text.find(norm(part), at)
        if at < 0: return False
        at += len(norm(part))
    return True


def test_suite_size():
    assert len(FACTS) >= 40
    kinds = {k for *_, k in FACTS}
    assert kinds == {'valid-call', 'tool-choice', 'safety', 'behaviour'}


@pytest.mark.parametrize('catalog,name,where,fact,kind', FACTS, ids=[f'{c}:{n}:{i}' for i, (c, n, *_) in enumerate(FACTS)])
def test_fact_survives(catalogs, shrunk, catalog, name, where, fact, kind):
    "The fact is in the original tool (the suite is honest) and in that tool's shrunk definition."
    assert survives(fact, text_at(tool(catalogs[catalog], name), where)), 'fact not in the original'
    assert survives(fact, text_at(tool(shrunk[catalog], name), where)), text_at(tool(shrunk[catalog], name), where)


def test_descriptions_still_shrink(catalogs, shrunk):
    """Keeping facts is not keeping everything: Markdown decoration, schema restatements and proven filler go, so the real
    catalogs' descriptions shrink. Praise is filler only when the whole sentence is praise (break test 6): the real catalogs'
    praise sentences all go on to a second phrase ("… and finding specific files", "… or ensuring required paths exist",
    "… that can adapt and evolve"), so they are kept whole — over-keeping is safer than a retry (break test 4)."""
    seq = tool(shrunk['npm_sequential_thinking'], 'sequentialthinking')['description']
    assert '- Generates a solution hypothesis' in seq and 'When to use this tool:' in seq
    fs0, fs1 = (lambda name: tool(catalogs['npm_filesystem'], name)['description'], lambda name: tool(shrunk['npm_filesystem'], name)['description'])
    for name, praise in [('create_directory', 'Perfect for setting up directory structures for projects or ensuring required paths exist.'),
                         ('list_directory', 'This tool is essential for understanding directory structure and finding specific files within a directory.')]:
        assert praise in fs0(name) and praise in fs1(name), name
    size = lambda cats: sum(len(t.get('description', '').encode()) for x in cats for t in json.loads(x)['tools'])
    names = [n for n in catalogs if n != 'translated']
    before, after = size(catalogs[n] for n in names), size(shrunk[n] for n in names)
    assert after < before, (before, after)


def test_schema_restatements_go(catalogs, shrunk):
    "Prose that says again what the property's schema states (optional, the default, the enum values) goes; the rest of the description stays."
    props = lambda cat, name: tool(shrunk[cat], name)['inputSchema']['properties']
    area = props('npm_chart', 'generate_area_chart')
    orig = tool(catalogs['npm_chart'], 'generate_area_chart')['inputSchema']['properties']
    assert "default is 'default'" in orig['theme']['description'] and 'default is 600' in orig['width']['description']
    # what is left once the restatement goes ("Set the theme for the chart.") only restates the name: the description goes too
    assert 'description' not in area['theme'] and area['theme']['default'] == 'default'
    assert 'description' not in area['width'] and area['width']['default'] == 600
    assert area['style']['properties']['texture']['description'] == "Set the texture for the chart. 'rough' refers to hand-drawn style."
    level = props('npm_playwright', 'browser_console_messages')['level']
    assert 'Defaults to' not in level['description'] and level['default'] == 'info'
    assert 'Image resolution scale.' in props('npm_playwright', 'browser_take_screenshot')['scale']['description']


def test_name_restatements_go(catalogs, shrunk):
    "A property description whose every word is the property's name, the tool's name or its type goes; one more word keeps it whole."
    gone = [('npm_chart', 'generate_bar_chart', 'axisXTitle'), ('npm_memory', 'delete_entities', 'entityNames'),
            ('npm_playwright', 'browser_handle_dialog', 'accept'), ('npm_everything', 'echo', 'message'), ('npm_playwright', 'browser_navigate', 'url')]
    kept = [('npm_chart', 'generate_area_chart', ('style', 'properties', 'texture')), ('npm_chart', 'generate_district_map', ('title',)),
            ('npm_filesystem', 'read_text_file', ('head',)), ('npm_amap_zh', 'maps_weather', ('city',))]
    for cat, name, prop in gone:
        before = tool(catalogs[cat], name)['inputSchema']['properties'][prop]
        assert before.get('description'), (cat, name, prop)
        assert 'description' not in tool(shrunk[cat], name)['inputSchema']['properties'][prop], (cat, name, prop, before['description'])
    for cat, name, path in kept:
        node0, node1 = tool(catalogs[cat], name)['inputSchema']['properties'], tool(shrunk[cat], name)['inputSchema']['properties']
        for key in path: node0, node1 = node0[key], node1[key]
        assert node0['description'] and node1.get('description'), (cat, name, path)


def test_judge_refuses_a_lost_description():
    "The invariant judge lets a property description go only when it restated the names: removing one with a fact is reported."
    def cat(props): return json.dumps({'tools': [{'name': 'browser_find', 'inputSchema': {'type': 'object', 'properties': props}}]}).encode()
    before = cat({'regex': {'type': 'string', 'description': 'Provide either text or regex, not both.'},
                  'text': {'type': 'string', 'description': 'The text to find'},
                  'data': {'type': 'array', 'description': "Data, such as [{ k: 1 }].", 'items': {'type': 'object', 'properties': {'k': {}}}}})
    fine = cat({'regex': {'type': 'string', 'description': 'Provide either text or regex, not both.'}, 'text': {'type': 'string'},
                'data': {'type': 'array', 'items': {'type': 'object', 'properties': {'k': {}}}}})
    lost = cat({'regex': {'type': 'string'}, 'text': {'type': 'string'}, 'data': {'type': 'array', 'items': {'type': 'object', 'properties': {'k': {}}}}})
    assert check_catalog(before, fine) == []
    assert check_catalog(before, lost) == ["browser_find.inputSchema: ('properties', 'regex'): non-annotation keys removed ['description']"]


def test_annotations_byte_identical(catalogs, shrunk):
    "MCP annotations (and execution) are copied verbatim, default-valued hints included."
    seen = 0
    for name, x in catalogs.items():
        for t0, t1 in zip(json.loads(x)['tools'], json.loads(shrunk[name])['tools']):
            for key in ('annotations', 'execution'):
                if key in t0:
                    seen += 1
                    assert json.dumps(t1.get(key), ensure_ascii=False) == json.dumps(t0[key], ensure_ascii=False), (name, t0['name'])
    assert seen >= 50


def test_invariants_on_dumped_catalogs(catalogs, shrunk):
    "Everything the corpus suite checks, on the dumped catalogs: profile, keywords at their paths, refs, names, envelopes."
    for name, x in catalogs.items():
        assert check_catalog(x, shrunk[name]) == [], name
        assert shrink(shrunk[name], ':memory:')[0] == shrunk[name], name      # idempotent


def test_validation_equivalence_under_declared_dialect(catalogs, shrunk):
    for name, x in catalogs.items():
        diffs, valid, invalid = catalog_validation_differences(x, shrunk[name])
        assert diffs == [], (name, diffs[:3])


def test_dialect_kept_where_it_matters():
    "A draft-07 tuple schema keeps its `$schema`: under the default 2020-12 dialect the same schema would validate differently."
    d7 = 'http://json-schema.org/draft-07/schema#'
    schema = {'$schema': d7, 'type': 'object', 'properties': {
        'point': {'type': 'array', 'items': [{'type': 'number'}, {'type': 'string'}], 'additionalItems': False},
        'ref': {'$ref': '#/definitions/short', 'maxLength': 2}}, 'definitions': {'short': {'type': 'string'}}}
    x = json.dumps({'tools': [{'name': 'plot', 'description': 'Plots a point.', 'inputSchema': schema}]}).encode()
    s1 = json.loads(shrink(x, ':memory:')[0])['tools'][0]['inputSchema']
    instances = [{'point': p, 'ref': r} for p in ([1, 'a'], ['a', 1], [1, 'a', 3], [1], [], [True, None])
                 for r in ('a', 'abc', 'abcdef', 1)]
    v0 = validator_for(schema)(schema)
    v1 = validator_for(s1, default=Draft202012Validator)(s1)
    flips = [i for i in instances if v0.is_valid(i) != v1.is_valid(i)]
    assert flips == [] and s1.get('$schema') == d7
    plain = {'$schema': d7, 'type': 'object', 'properties': {'a': {'type': 'string'}}}
    y = json.loads(shrink(json.dumps({'tools': [{'name': 't', 'description': 'T.', 'title': 'x', 'inputSchema': plain}]}), ':memory:')[0])
    assert '$schema' not in y['tools'][0]['inputSchema']          # no keyword that differs: the dialect is redundant


GRAPHEMES = ['🇯🇵', '👨\u200d👩\u200d👧', 'e\u0301', '각', '🏳️\u200d🌈']


@pytest.mark.parametrize('pad', range(0, 24, 3))
@pytest.mark.parametrize('g', GRAPHEMES)
def test_cuts_on_grapheme_boundaries(g, pad):
    "A lead cut near its budget never splits a grapheme cluster, wherever the cluster falls."
    lead = 'Lead' + 'x' * (60 + pad) + g * 6 + 'y' * 60
    desc = lead + '. The path must be absolute and at most 100 bytes long, relative paths are rejected by the server.'
    x = json.dumps({'tools': [{'name': 't', 'description': desc, 'inputSchema': {'type': 'object'}}]}, ensure_ascii=False)
    out = json.loads(shrink(x, ':memory:')[0])['tools'][0]['description']
    assert 'The path must be absolute' in out
    kept_lead = regex.split(r'\s+The path must', out)[0]          # a line break follows a cut lead
    assert len(kept_lead) < len(lead)
    orig = regex.findall(r'\X', lead)
    cut = regex.findall(r'\X', kept_lead)
    assert cut == orig[:len(cut)], (kept_lead[-12:], lead)


def test_cjk_leads_cut_at_a_clause_mark(catalogs, shrunk):
    "A Chinese lead that has to be shortened ends where the original has a clause or sentence mark, never mid-word."
    # AMap's transit lead without its "可以" (can) and "返回…" (returns …) clauses, which make the real one a fact kept whole
    long_zh = ('公交路径规划 API 根据用户起终点经纬度坐标规划综合各类公共（火车、公交、地铁）交通方式的通勤方案，'
               '方案的数据会按照时间排序，方便用户出行时参考和比较。')
    desc = long_zh + '路径必须是绝对路径，最多读取100行。'
    x = json.dumps({'tools': [{'name': 't', 'description': desc, 'inputSchema': {'type': 'object'}}]}, ensure_ascii=False)
    out = json.loads(shrink(x, ':memory:')[0])['tools'][0]['description']
    assert '路径必须是绝对路径，最多读取100行。' in out                      # the rule, in Chinese, survives whole
    lead = out.split('路径必须是')[0].rstrip()
    assert long_zh.startswith(lead) and len(lead) < len(long_zh)
    assert long_zh[len(lead)] in '，、；：（。！？ ', long_zh[len(lead):len(lead) + 3]


def test_args_section_checked_against_the_schema():
    "An Args: item that only restates its parameter's schema goes; one that adds a rule stays, and so does an item for no parameter."
    desc = ('List the issues of a repository, newest first, in pages that the caller walks through one at a time.\n\n'
            'Args:\n    owner: Repository owner\n    repo: Repository name\n    per_page: Results per page, at most 100\n'
            '    since: Only issues updated after this time')
    schema = {'type': 'object', 'properties': {'owner': {'type': 'string', 'description': 'Repository owner'},
                                               'repo': {'type': 'string', 'description': 'Repository name'},
                                               'per_page': {'type': 'integer', 'description': 'Results per page'}}}
    x = json.dumps({'tools': [{'name': 'list_issues', 'description': desc, 'inputSchema': schema}]})
    out = json.loads(shrink(x, ':memory:')[0])['tools'][0]['description']
    assert 'owner: Repository owner' not in out and 'repo: Repository name' not in out
    assert 'per_page: Results per page, at most 100' in out and 'since: Only issues updated after this time' in out
