"""Retention of behaviour sentences (break test 4, items 11 and 12): in a description over 160 bytes, a sentence that states
what the tool does or how it behaves — a side effect, an output unit, what it skips, that it may be slow — survives shrink in
every language, whether or not it holds a word of the compressor's fact list; only proven filler (praise, greetings) goes.

The sentences: the break test's (its 34-tool catalog and its German/Japanese twins), and new ones written in the same classes
(side effects, behaviour, output units, slowness, skips) in English, German, French, Spanish, Russian, Chinese, Japanese and
Korean. Each is put between a lead and a rule in its own language, so the description is long enough to be reduced. The judge
reads the output with json only; it imports nothing from the compressor but the public `shrink` it judges."""
import json

import pytest

from caveman.shrink import shrink

# (language, lead, tail) around each sentence: the description is lead + sentence + tail, well over 160 UTF-8 bytes
FRAMES = {
    'en': ('Lists the files of a folder.', 'Only works within allowed directories. Returns at most 100 entries per call; use the cursor to page. Paths must be absolute.'),
    'de': ('Listet die Dateien eines Ordners auf.', 'Funktioniert nur in erlaubten Verzeichnissen. Liefert höchstens 100 Einträge pro Aufruf. Pfade müssen absolut sein.'),
    'fr': ("Liste les fichiers d'un dossier.", 'Fonctionne uniquement dans les répertoires autorisés. Renvoie au plus 100 entrées par appel. Les chemins doivent être absolus.'),
    'es': ('Lista los archivos de una carpeta.', 'Solo funciona en directorios permitidos. Devuelve como máximo 100 entradas por llamada. Las rutas deben ser absolutas.'),
    'ru': ('Перечисляет файлы папки.', 'Работает только в разрешённых каталогах. Возвращает не более 100 записей за вызов. Пути должны быть абсолютными.'),
    'zh': ('列出文件夹中的文件。', '仅在允许的目录中有效。每次调用最多返回100个条目。路径必须是绝对路径，不能包含通配符。'),
    'ja': ('フォルダ内のファイルを一覧表示します。', '許可されたディレクトリでのみ動作します。1回の呼び出しで最大100件を返します。パスは絶対パスでなければなりません。'),
    'ko': ('폴더의 파일을 나열합니다.', '허용된 디렉터리에서만 작동합니다. 호출당 최대 100개 항목을 반환합니다. 경로는 절대 경로여야 합니다.'),
}

KEPT = [
    # break test 4, r11: side effects and behaviour in English without a fact-list word
    ('en', "Charges the customer's card immediately."), ('en', 'Sends an email to every watcher.'),
    ('en', 'Creates parent directories as needed.'), ('en', 'Paths are resolved against the workspace root.'),
    # new, same class: effects a caller must know before calling
    ('en', 'Posts a message to the team channel.'), ('en', 'Logs the current user out of every session.'),
    ('en', 'Commits the staged changes to the current branch.'), ('en', 'Starts a billable cloud build.'),
    ('en', 'Notifies the reviewers by SMS.'), ('en', 'Publishes the package to the public registry.'),
    ('en', 'Restarts the database server.'), ('en', 'Locks the record for the duration of the edit.'),
    # break test 4, r10/r11: non-English twins of kept English facts
    ('de', 'Temperaturen werden in Celsius zurückgegeben.'), ('de', 'Überspringt versteckte Dateien.'),
    ('de', 'Symbolische Links werden verfolgt.'), ('de', 'Belastet sofort die Karte des Kunden.'),
    ('fr', 'Les tailles sont en kibioctets.'), ('es', 'Los tamaños están en kibibytes.'), ('ru', 'Размеры указаны в кибибайтах.'),
    ('ja', '大きなディレクトリでは時間がかかることがあります。'),
    # new, same classes in each language: side effects, units, skips, slowness
    ('de', 'Sendet eine E-Mail an alle Beobachter.'), ('de', 'Legt fehlende Elternverzeichnisse an.'),
    ('de', 'Große Repositories brauchen mehrere Minuten.'),
    ('fr', 'Envoie un courriel à chaque observateur.'), ('fr', 'Débite immédiatement la carte du client.'),
    ('fr', 'Les fichiers cachés sont ignorés.'), ('fr', 'Les températures sont en degrés Celsius.'),
    ('es', 'Envía un correo a cada observador.'), ('es', 'Cobra de inmediato la tarjeta del cliente.'),
    ('es', 'Crea los directorios padre necesarios.'), ('es', 'Los archivos ocultos se omiten.'),
    ('ru', 'Отправляет письмо каждому наблюдателю.'), ('ru', 'Сразу списывает деньги с карты клиента.'),
    ('ru', 'Скрытые файлы пропускаются.'), ('ru', 'Температура указывается в градусах Цельсия.'),
    ('zh', '会立即从客户的卡中扣款。'), ('zh', '向每位关注者发送电子邮件。'), ('zh', '大小以千字节为单位。'), ('zh', '大型仓库可能需要几分钟。'),
    ('ja', '顧客のカードに即時に請求します。'), ('ja', 'すべてのウォッチャーにメールを送信します。'), ('ja', '隠しファイルはスキップされます。'),
    ('ko', '고객의 카드에 즉시 청구합니다.'), ('ko', '모든 관찰자에게 이메일을 보냅니다.'), ('ko', '크기는 킬로바이트 단위입니다.'),
    ('ko', '큰 디렉터리에서는 시간이 걸릴 수 있습니다.'),
]

# proven filler: praise and sign-offs, in the same languages
FILLER = [
    ('en', 'This tool is great for exploring.'), ('en', 'Perfect for everyday file browsing.'), ('de', 'Dieses Tool ist nützlich, um Daten zu erkunden.'),
    ('fr', 'Cet outil est très utile pour explorer vos fichiers.'), ('es', 'Esta herramienta es útil para explorar datos.'),
    ('ru', 'Этот инструмент полезен для изучения данных.'), ('zh', '这个工具非常适合探索数据。'), ('ja', 'このツールはデータの探索に便利です。'),
    ('ko', '이 도구는 데이터 탐색에 유용합니다.'),
]


def description(lang: str, sentence: str) -> str:
    lead, tail = FRAMES[lang]
    sep = '' if lang in ('zh', 'ja') else ' '
    return lead + sep + sentence + sep + tail


def catalog(items) -> bytes:
    tools = [{'name': f'tool_{i}', 'description': description(lang, s),
              'inputSchema': {'type': 'object', 'title': 'Arguments', 'properties': {'cursor': {'type': 'string', 'title': 'Cursor'}}}}
             for i, (lang, s) in enumerate(items)]
    return json.dumps({'tools': tools}, ensure_ascii=False).encode()


def shrunk_descriptions(items) -> list[str]:
    out, _ = shrink(catalog(items), ':memory:')
    return [t['description'] for t in json.loads(out)['tools']]


def test_frames_are_long():
    "Every description is over 160 UTF-8 bytes, where shrink reduces descriptions instead of keeping them whole."
    assert min(len(description(lang, s).encode()) for lang, s in KEPT + FILLER) > 160
    assert {lang for lang, _ in KEPT} == set(FRAMES) and len(KEPT) >= 40


@pytest.mark.parametrize('lang,sentence', KEPT, ids=[f'{l}:{i}' for i, (l, _) in enumerate(KEPT)])
def test_behaviour_sentence_kept(lang, sentence):
    [got] = shrunk_descriptions([(lang, sentence)])
    assert sentence in got, got
    lead, tail = FRAMES[lang]
    assert lead in got and tail.split('. ')[0].split('。')[0] in got, got     # the frame's rule stays too


def test_all_kept_in_one_catalog():
    "The same, as one catalog of many tools (the gateway's case): not one behaviour sentence lost."
    got = shrunk_descriptions(KEPT)
    assert [s for (_, s), d in zip(KEPT, got) if s not in d] == []


def test_filler_goes():
    "Over-keeping is not keeping everything: praise and sign-offs go, in every language, so the catalog still shrinks."
    got = shrunk_descriptions(FILLER)
    assert [s for (_, s), d in zip(FILLER, got) if s in d] == []
    for (lang, _), d in zip(FILLER, got): assert FRAMES[lang][0] in d, d


def test_sign_off_goes():
    "A closing greeting or sign-off is filler too; the rules before it stay."
    for lang, bye in [('en', 'Happy coding!'), ('de', 'Viel Spaß!'), ('es', '¡Disfruta!'), ('ja', 'お楽しみください！')]:
        desc = description(lang, '') + ('' if lang == 'ja' else ' ') + bye
        x = json.dumps({'tools': [{'name': 't', 'description': desc, 'inputSchema': {'type': 'object'}}]}, ensure_ascii=False).encode()
        got = json.loads(shrink(x, ':memory:')[0])['tools'][0]['description']
        assert bye not in got and FRAMES[lang][1] in got, (lang, got)


# Break test 6 (r27, r28): a sentence that opens with praise but states a side effect in a later clause is no filler. The
# sentences are generated: each praise opener (a purpose phrase that alone is proven filler) joined, the ways its language
# joins a second clause, to each side-effect clause of that language. Every joined sentence must survive whole; each opener
# alone, closed as a sentence, may still go.
PRAISE = {   # language: (openers, how an opener alone is closed, side-effect clauses, joins of opener + clause)
    'en': (['This tool is essential for understanding directory structure', 'Perfect for reading documentation pages',
            'This tool is very useful for exploring large sites'], '.',
           ['follows symlinks outside the allowed directories', 'sends your cookies to the target host',
            'restarts the production database', 'uploads your browsing history to analytics.example.com'],
           ['{o}, and it {c}.', '{o} and it {c}.', '{o}; it also {c}.', '{o} — it {c}.']),
    'de': (['Dieses Tool ist sehr nützlich für das Lesen von Dokumentationsseiten', 'Praktisch für die tägliche Arbeit mit Dateien'], '.',
           ['sendet Ihre Cookies an den Zielhost', 'startet die Produktionsdatenbank neu', 'lädt Ihren Browserverlauf zu analytics.example.com hoch'],
           ['{o}, und es {c}.', '{o} und es {c}.', '{o}; es {c}.']),
    'fr': (['Cet outil est très utile pour lire les pages de documentation', 'Idéal pour explorer vos fichiers'], '.',
           ["envoie vos cookies à l'hôte cible", 'redémarre la base de données de production', 'suit les liens symboliques hors des répertoires autorisés'],
           ['{o}, et il {c}.', '{o} et il {c}.', '{o} ; il {c}.']),
    'es': (['Esta herramienta es muy útil para leer páginas de documentación', 'Ideal para explorar tus archivos'], '.',
           ['envía tus cookies al host de destino', 'reinicia la base de datos de producción', 'sube tu historial de navegación a analytics.example.com'],
           ['{o}, y {c}.', '{o} y además {c}.', '{o}; también {c}.']),
    'ru': (['Этот инструмент очень полезен для чтения документации', 'Удобно для просмотра файлов'], '.',
           ['отправляет ваши cookie на целевой хост', 'перезапускает рабочую базу данных', 'загружает историю браузера на analytics.example.com'],
           ['{o}, и он {c}.', '{o} и {c}.', '{o}; также {c}.']),
    'zh': (['这个工具非常适合阅读文档页面', '此工具很适合浏览文件'], '。',
           ['会把您的Cookie发送到目标主机', '重启生产数据库', '把浏览历史上传到分析服务器'],
           ['{o}，并且{c}。', '{o}，它还{c}。', '{o}并{c}。', '{o}，同时{c}。']),
    'ja': (['このツールはドキュメントページを読むのに便利', 'このツールはファイルの閲覧に最適'], 'です。',
           ['送信先ホストにあなたのCookieを送信します', '本番データベースを再起動します', '閲覧履歴をanalytics.example.comにアップロードします'],
           ['{o}で、{c}。', '{o}ですが、{c}。', '{o}で{c}。']),
    'ko': (['이 도구는 문서 페이지를 읽는 데 유용', '이 도구는 파일 탐색에 편리'], '합니다.',
           ['쿠키를 대상 호스트로 전송합니다', '운영 데이터베이스를 다시 시작합니다', '검색 기록을 analytics.example.com에 업로드합니다'],
           ['{o}하며 {c}.', '{o}하지만 {c}.', '{o}하고, {c}.']),
}
PRAISE_WITH_EFFECT = [(lang, j.format(o=o, c=c)) for lang, (os_, _, cs, js) in PRAISE.items() for o in os_ for c in cs for j in js]
PURE_PRAISE = [(lang, o + end) for lang, (os_, end, _, _) in PRAISE.items() for o in os_]


def test_praise_frames_cover_every_language():
    "The generated sentences cover all eight languages and each of them is over the reduction threshold."
    assert {lang for lang, _ in PRAISE_WITH_EFFECT} == set(FRAMES) and len(PRAISE_WITH_EFFECT) >= 150
    assert min(len(description(lang, s).encode()) for lang, s in PRAISE_WITH_EFFECT + PURE_PRAISE) > 160


def test_praise_with_side_effect_kept():
    "A sentence that opens with praise and goes on to state a side effect is kept whole, in every language and join."
    got = shrunk_descriptions(PRAISE_WITH_EFFECT)
    lost = [s for (_, s), d in zip(PRAISE_WITH_EFFECT, got) if s not in d]
    assert lost == [], f'{len(lost)} of {len(PRAISE_WITH_EFFECT)} lost, e.g. {lost[:5]}'


def test_pure_praise_still_goes():
    "The openers alone, closed as sentences, are still proven filler and go; the lead stays."
    got = shrunk_descriptions(PURE_PRAISE)
    assert [s for (_, s), d in zip(PURE_PRAISE, got) if s in d] == []
    for (lang, _), d in zip(PURE_PRAISE, got): assert FRAMES[lang][0] in d, d
