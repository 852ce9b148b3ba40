"""A small tool catalog in Japanese, Korean, German, French and Spanish, for the retention suite.

None of the MCP servers we can install from npm or PyPI ships its tool descriptions in these languages (the
non-English real catalogs we dump are Chinese: AMap, Baidu Maps, howtocook). So these five tools are OUR
translations of real descriptions of `@modelcontextprotocol/server-filesystem` (write_file, move_file,
read_text_file, search_files), written for this suite; the English originals are in the dumped catalog.
"""

TRANSLATED = {'tools': [
    {'name': 'write_file_ja',
     'description': '新しいファイルを作成するか、既存のファイルを新しい内容で完全に上書きします。既存のファイルを警告なしで上書きするため、'
                    '注意して使用してください。適切なエンコーディングでテキストを処理します。許可されたディレクトリ内でのみ動作します。',
     'inputSchema': {'type': 'object', 'properties': {'path': {'type': 'string'}, 'content': {'type': 'string'}}, 'required': ['path', 'content']}},
    {'name': 'move_file_ja',
     'description': 'ファイルやディレクトリを移動または名前変更します。ディレクトリ間の移動と名前変更を一回の操作で行えます。'
                    '移動先が既に存在する場合、操作は失敗します。同じディレクトリ内での単純な名前変更にも使えます。',
     'inputSchema': {'type': 'object', 'properties': {'source': {'type': 'string'}, 'destination': {'type': 'string'}}, 'required': ['source', 'destination']}},
    {'name': 'write_file_ko',
     'description': '새 파일을 만들거나 기존 파일을 새 내용으로 완전히 덮어씁니다. 경고 없이 기존 파일을 덮어쓰므로 주의해서 사용하세요. '
                    '적절한 인코딩으로 텍스트를 처리합니다. 허용된 디렉터리 안에서만 작동합니다.',
     'inputSchema': {'type': 'object', 'properties': {'path': {'type': 'string'}, 'content': {'type': 'string'}}, 'required': ['path', 'content']}},
    {'name': 'move_file_ko',
     'description': '파일과 디렉터리를 이동하거나 이름을 바꿉니다. 디렉터리 사이의 이동과 이름 변경을 한 번에 할 수 있습니다. '
                    '대상이 이미 존재하면 작업이 실패합니다. 같은 디렉터리 안에서 간단히 이름을 바꿀 때도 쓸 수 있습니다.',
     'inputSchema': {'type': 'object', 'properties': {'source': {'type': 'string'}, 'destination': {'type': 'string'}}, 'required': ['source', 'destination']}},
    {'name': 'write_file_de',
     'description': 'Erstellt eine neue Datei oder überschreibt eine vorhandene Datei vollständig mit neuem Inhalt. Mit Vorsicht verwenden, '
                    'da vorhandene Dateien ohne Warnung überschrieben werden. Verarbeitet Textinhalte mit der richtigen Kodierung. '
                    'Funktioniert nur innerhalb erlaubter Verzeichnisse.',
     'inputSchema': {'type': 'object', 'properties': {'path': {'type': 'string'}, 'content': {'type': 'string'}}, 'required': ['path', 'content']}},
    {'name': 'read_text_file_fr',
     'description': "Lit le contenu complet d'un fichier du système de fichiers sous forme de texte. Gère divers encodages de texte et "
                    "fournit des messages détaillés. Utilisez le paramètre « head » pour lire uniquement les N premières lignes d'un fichier. "
                    'Ne fonctionne que dans les répertoires autorisés.',
     'inputSchema': {'type': 'object', 'properties': {'path': {'type': 'string'}, 'head': {'type': 'number'}, 'tail': {'type': 'number'}}, 'required': ['path']}},
    {'name': 'search_files_es',
     'description': 'Busca recursivamente archivos y directorios que coincidan con un patrón. Los patrones deben ser patrones de estilo glob '
                    'relativos al directorio de trabajo. Devuelve rutas completas a todos los elementos coincidentes. Ideal para encontrar '
                    'archivos cuando no conoces su ubicación exacta. Solo busca dentro de los directorios permitidos.',
     'inputSchema': {'type': 'object', 'properties': {'path': {'type': 'string'}, 'pattern': {'type': 'string'}}, 'required': ['path', 'pattern']}},
]}
