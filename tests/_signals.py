"""Independent hidden-signal checker (issue 10, class 7).

`hidden_signals(original, view, content_type)` lists every *signal* of the original that the view
neither shows nor counts in a `signals×N first=S` section of an elision marker. It reads the
original with its own code: nothing here imports caveman's compressors or `caveman.signals`, so a
bug in the shared detector cannot hide itself.

What a signal is (the same classes the package documents in nbs/05_signals.ipynb, written again):
- failure: an error/failure word (error, failure, failed, fatal, panic, exception, traceback, any
  case, whole word), a CamelCase `…Error`/`…Exception` name, a pytest `E   ` line, `FAILED`;
- errno: a system call result `= -1 EXXX`;
- exit: a non-zero exit status (`exit code 2`, `exit status 1`, `returned non-zero`);
- http: an HTTP 4xx/5xx status (access-log status field, `HTTP/1.1 503`, `status=503`, a table's
  `status`/`code` column);
- frame: the last stack frame of a failure (pytest's `path:N: Name` location line after `E` lines,
  the last `File "…", line N` of a Python traceback);
- summary: totals (`10 files changed`, `=== 3 failed, 10 passed in 2.1s ===`, `added 57 packages`,
  `Successfully installed`);
- definition: in a diff, an added `def`/`class`/`function`/`func`/`fn` line;
- change: in a diff hunk, a removed or added line the other side does not hold up to white space,
  when at most a quarter of the hunk's changed lines differ so (the real edit of a rewritten block);
- security: a disabled safety check (`verify=False`, `shell=True`, `rejectUnauthorized: false`,
  `CERT_NONE`, `--insecure`, …);
- crash (output only): a report by its phrase: `Permission denied`, `Segmentation fault`, `core dumped`,
  `out of memory`, `No such file or directory`, `Connection refused`, `command not found`, `timed out`,
  `undefined reference to`, `[Errno N]`, a loud `Killed`/`Aborted`/`CRITICAL`, npm's `ERR!`, apt's `E: `;
- warning (output only): `warning:` (any case), a `…Warning:` name, `N warnings emitted|generated`, a
  loud `WARN`/`WARNING`, apt's `W: `;
- the failure and warning words of other languages (output only): the words gettext catalogs use for
  *error*/*failed* (`Fehler`, `erreur`, `ошибка`, `错误`, …) and for *warning* before a colon;
- the crash reports of other languages (output only): every translation, in this machine's `libc` (error
  and signal texts), `bash` (command not found, core dumped, signal texts) and `coreutils` (memory exhausted)
  catalogs (read here with the standard library's `gettext`), of the English messages whose phrase the crash class reads (`Permission denied` -> `Keine Berechtigung`, `Killed` -> `Getötet`,
  `%s: command not found` -> `未找到命令`): the translation's longest piece between printf directives, its
  edge spaces, colons, stops, quotes and brackets trimmed, at least 4 letters (2 of Chinese, Japanese or
  Korean); several words (or three characters or more of Chinese, Japanese, Korean) in any case, starting as
  a whole word where the script spaces them, running into what follows or not; one word in the catalog's case
  and only where bash prints a job's end: alone, after its `N: PID ` or a job number `[1]+`, and then at the line's end, before two blanks or
  a bracket, or glued to the command when 24 bytes or longer (bash pads its job field to 24 bytes).
The result classes (errno, exit, http, summary, security, pytest `E` lines) apply to every content
type; failure words depend on it: output (log, terminal, search-result, tabular) takes them in any
case; prose (text, html, JSON string values) only loud (ERROR, FAILED, FATAL, PANIC, Traceback);
source (code, config, diff) not at all, since code talks about errors without reporting one; prose also
takes a program's report: a line opening with a lower-case program name or a path (at most 64 characters, an optional
`[pid]`, a translated `línia 3`) or a shell job's number `[1]+`, that holds a failure label (`error:`), an
exception's name or a crash report (`ls: cannot access 'x': No such
file or directory`, `bash: line 3: 4711 Killed`), and a line as a program prints a report (an exception's name, `Error` or
`Exception` first, then a colon and a message: `TypeError: x`; a runtime's uncaught failure: Java's `Exception in thread`,
Rust's `panicked at`, .NET's `Unhandled exception.`, C++'s `terminate called`, Perl's `Died at … line N.`; a signal's death alone or after a job number: `Segmentation fault (core
dumped)`; npm's `ERR!`). JSON members: `error`/`errors`/`exception`/
`failure` holding something, `deleted`/`failed`/`error` true, `ok`/`success` false, a
`status`/`status_code`/`statusCode`/`code` 4xx-5xx, a non-zero `exit_code`/`exitCode`/`returncode`,
a `level`/`severity`/`state`/`status`/`conclusion`/`result` of error, fatal, critical, failed, failure.
"""
import csv, gettext, glob, io, json, re, unicodedata
from collections import Counter

_WORDS = re.compile(r'(?<![\w./@-])(?<!(?<![0-9])0 )(?:errors?|failed|failures?|fatal|panic(?:ked)?|exceptions?|traceback)(?![\w@/-])(?!\.\w)'
                    r'(?!["\']?\s*[=:]\s*(?:""|\'\'|["\']?(?:0|null|none|nil|false|\[\]|\{\})["\']?(?![\w.])))', re.I)   # not `errors=0`, `0 failed`
_LOUD = re.compile(r'(?<![A-Za-z0-9_./@-])(?:ERROR|ERRORS|FAILED|FAILURE|FATAL|PANIC)(?![A-Za-z0-9_@/-])|Traceback \(most recent call last\)')   # whole words: `ERROR/MISSING` names
_CAMEL = re.compile(r'(?<![\w.])[A-Z][A-Za-z0-9]*(?:Error|Exception)(?=:|\s*$)')
_PYTEST_E = re.compile(r'^E {3}')
_ERRNO = re.compile(r'= -1 E[A-Z0-9]+\b')
_EXIT = re.compile(r'(?i:exit(?:ed)?(?: with)?(?: code| status)|exit_code|exitcode|returncode|return code)\W{0,3}(?:[1-9][0-9]*|-[0-9]+)\b'
                   r'|(?i:returned non-zero|non-zero exit|exited with non-zero status [0-9]+)')
_HTTP = re.compile(r'"[A-Z]+ [^"]* HTTP/[0-9.]+" [45][0-9][0-9]\b|\bHTTP/[0-9.]+ [45][0-9][0-9]\b'
                   r'|(?i:\bstatus(?:_code|Code)?)"?\s*[=:]\s*"?[45][0-9][0-9]\b')
_SUMMARY = re.compile(r'\b[0-9]+ files? changed\b|\b[0-9]+ insertions?\(\+\)|\b[0-9]+ deletions?\(-\)'
                      r'|^=+ .*\b[0-9]+ (?:passed|failed|errors?|skipped|xfailed|xpassed|deselected|warnings?)\b.* in [0-9.]+s'
                      r'|\badded [0-9]+ packages?\b|\bremoved [0-9]+ packages?\b|\bchanged [0-9]+ packages?\b|\baudited [0-9]+ packages?\b'
                      r'|\bSuccessfully (?:installed|built|uninstalled)\b|\b[0-9]+ upgraded, [0-9]+ newly installed\b'
                      r'|^Ran [0-9]+ tests? in\b|\bfound [0-9]+ vulnerabilit')
_SAFETY_NAMES = (r'(?:verify|ssl_verify|verify_ssl|verify_certs?|check_hostname|sslverify|strict_ssl|strictSSL|rejectUnauthorized'
                 r'|validate_certs|verify_peer|verify_host)')
_SECURITY = re.compile(r'\b' + _SAFETY_NAMES + r'["\']?\s*[=:]\s*(?:False|false|0|no|off)\b'
                       r'|\b(?:insecure\w*|InsecureSkipVerify|allow_insecure)["\']?\s*[=:]\s*(?:True|true)\b'
                       r'|\bshell\s*=\s*True\b|\bCERT_NONE\b|--insecure\b|--no-verify\b|--no-check-certificate\b'
                       r'|\bNODE_TLS_REJECT_UNAUTHORIZED\W{0,3}0\b'
                       r'|\bdisable[_-]?(?:ssl|tls|verify|verification|auth|csrf|security|checks?)\w*["\']?\s*[=:]\s*(?:True|true|1|yes|on)\b'
                       r'|\bchmod\s+(?:-R\s+)?0?777\b')
_CRASH_PHRASES = re.compile(r'(?i)\bfloating point exception|\b(?:permission denied|access denied|segmentation fault|core dumped|out of memory|no such file or directory'
                            r'|connection refused|connection reset|command not found|timed out|undefined reference to'
                            r'|no space left on device|operation not permitted|cannot allocate memory|too many open files'
                            r'|broken pipe|read-only file system|bus error|illegal instruction|floating point exception'
                            r'|input/output error|memory exhausted|operation not supported|no such process|cpu time limit exceeded'
                            r'|bad system call|trace/breakpoint trap|alarm clock|user defined signal [12]|profiling timer expired|no such job'
                            r'|virtual timer expired|stack fault|power failure|dumped core|code=killed|code=dumped)\b|\bfile size limit exceeded|:\s*not found\s*$'
                            r'|(?-i:(?:^[ \t]*|:[ \t]*[0-9]+[ \t]+|^\[[0-9]+\][+-]?[ \t]+)(?:Terminated|Hangup)(?:[ \t\r]*$|[ \t]{2}|[ \t]*\())')
_REASONS = ('Bad Request', 'Unauthorized', 'Payment Required', 'Forbidden', 'Not Found', 'Method Not Allowed', 'Not Acceptable',
            'Proxy Authentication Required', 'Request Timeout', 'Conflict', 'Gone', 'Length Required', 'Precondition Failed',
            'Content Too Large', 'Payload Too Large', 'Request Entity Too Large', 'URI Too Long', 'Request-URI Too Long',
            'Unsupported Media Type', 'Range Not Satisfiable', 'Requested Range Not Satisfiable', 'Expectation Failed', "I'm a teapot",
            'Misdirected Request', 'Unprocessable Content', 'Unprocessable Entity', 'Locked', 'Failed Dependency', 'Too Early',
            'Upgrade Required', 'Precondition Required', 'Too Many Requests', 'Request Header Fields Too Large',
            'Unavailable For Legal Reasons', 'Internal Server Error', 'Not Implemented', 'Bad Gateway', 'Service Unavailable',
            'Gateway Timeout', 'HTTP Version Not Supported', 'Variant Also Negotiates', 'Insufficient Storage', 'Loop Detected',
            'Not Extended', 'Network Authentication Required')
_STATUS_REASON = re.compile(r'(?<![\w.])[45][0-9]{2} (?:' + '|'.join(map(re.escape, _REASONS)) + r')(?![\w-])')   # `503 Service Unavailable`, as servers write it
_TAP_FAILED = re.compile(r'^\s*not ok\b(?!(?:\\.|[^#\\])*#\s*[Tt][Oo][Dd][Oo]\b)')     # TAP's failed test point, not a TODO one (`\#` is escaped)
_FAIL_UPPER = re.compile(r'(?<![\w./@-])FAIL(?![\w@/-])(?!["\']?\s*[:=]?\s*["\']?0\b)(?!\s+=\s)|^(?:XPASS|UNRESOLVED): |^# XPASS: +[1-9]')   # Go, Automake, DejaGnu; not a zero count, not `FAIL = 2` in code
_RESULT_QUOTED = re.compile(r'^(?:FAIL|XPASS|UNRESOLVED): \S')              # a test driver's result line in a report read as prose
_PYTEST_HEADER = re.compile(r'^_{3,} \S.* _{3,}\s*$')                                      # pytest's header over a failing test's report
_REFUSAL = re.compile(r"(?i)\b(?:unable to|could not|couldn't|cannot|can't)\b")   # a program's refusal, read in its report (prose)
_CRASH = re.compile(r'\[Errno [0-9]+\]|(?<![\w./@-])(?:Killed|Aborted|CRITICAL|CRIT)(?![\w@/-])|(?<![\w./@-])ERR!|^E: ')
_LEVEL = re.compile(r'(?<![\w\]])\[(?:[a-z_]+:)?(?:emerg|alert|crit)\](?=[ \t])')   # nginx's `[emerg] `, Apache's `[core:crit] ` (output)
# failures that name themselves by their form alone - output and prose: a database's coded error, a JVM exception's cause,
# git's merge conflict (its output reads as text), C++'s `what():` line; output only: a JVM exception named alone (in prose
# an API index's entry), a Kubernetes pod state that cannot run
_CODED_ERROR = re.compile(r'(?<![A-Za-z0-9_-])ORA-(?!00000)\d{5}(?!\d)|SQLSTATE\s*[\[(:=]?\s*(?!0[012])(?=[A-Z]*\d)[0-9A-Z]{5}\b')   # not success
_SYSTEMD_EXIT = re.compile(r'code=exited[,\s]+status=[1-9]')            # systemd's `code=exited, status=1/FAILURE` (output, prose)
_FORM_FAILURE = re.compile(r'^\s*what\(\):  |^\s*(?:Caused by|Suppressed):\s+(?:[\w$]+\.)*[A-Z][\w$]*(?:Exception|Error|Throwable)\b'
                           r'|^CONFLICT \([^)]+\): ')
_JVM_ALONE = re.compile(r'^(?:[a-z_$][\w$]*\.){2,}[A-Z][\w$]*(?:Exception|Error)\s*$')   # at the line's start, as printStackTrace prints it
_POD_FAILED = re.compile(r'(?<![\w./@-])(?:CrashLoopBackOff|ImagePullBackOff|ErrImagePull|CreateContainerConfigError|CreateContainerError'
                         r'|RunContainerError|InvalidImageName|ContainerStatusUnknown|BackoffLimitExceeded)(?![\w@/-])')
_WARN = re.compile(r'(?i:(?<![\w-])(?:level|lvl|severity)["\']?\s*[=:]\s*["\']?warn(?:ing)?(?![\w-]))|(?i:(?<![\w./@-])warning:)|(?<![\w.])[A-Z][A-Za-z0-9]*Warning:|\b[0-9]+ warnings? (?:emitted|generated)\b'
                   r'|(?<![\w./@-])WARN(?:ING)?(?![\w@/-])|^W: (?![0-9])')
_FOREIGN = re.compile(r'(?i)(?<![\w./@-])(?:fehler|fehlgeschlagen|erreur|échec|ошибка|ошибки|помилка|błąd|errore|erro|falhou|fallo|falló'
                      r'|mislukt|misslyckades|chyba|hata)(?![\w@/-])|错误|失败|錯誤|失敗|エラー|오류|실패'
                      r'|(?i:(?<![\w./@-])(?:warnung|avertissement|advertencia|avviso|aviso|предупреждение|ostrzeżenie|waarschuwing|varning)[ \t\u00a0]?:)|警告[ \t]?[:：]')


_SIGNAL_TEXTS = ['Segmentation fault', 'Killed', 'Aborted', 'Bus error', 'Illegal instruction', 'Floating point exception',
                 'File size limit exceeded', 'CPU time limit exceeded', 'Bad system call', 'Trace/breakpoint trap', 'Terminated', 'Hangup',
                 'Alarm clock', 'User defined signal 1', 'User defined signal 2', 'Profiling timer expired', 'Virtual timer expired',
                 'Stack fault', 'Power failure']
# prose: a line as a program prints a report - an exception's name (`Error`, `Exception` too) first, then a colon and a message; a signal's
# death alone or after a job number, then nothing, two blanks or a bracket; npm's `ERR!`
_EXCEPTION_FIRST = re.compile(r'^\s*(?:Uncaught\s+)?(?:[A-Za-z_][A-Za-z0-9_]*\.)*(?:[A-Z][A-Za-z0-9]*Error|[A-Z][A-Za-z0-9]*Exception|Error|Exception)'
                              r'(?: \[[A-Z0-9_]+\])?:[ \t]'                         # Node's `RangeError [ERR_OUT_OF_RANGE]: `
                              r'|^\s*(?:Exception in thread "[^"]*" |thread \'[^\']*\' panicked at |Unhandled exception\. '   # Java, Rust, .NET
                              r'|terminate called (?:after throwing|without an active exception)|what\(\):  |Died at .* line \d+\.)')    # C++, Perl
_DEATH_ALONE = re.compile(r'^\s*(?:\[\d+\][+-]?\s+)?(?:' + '|'.join(re.escape(t) for t in _SIGNAL_TEXTS) + r')(?:\s*\(core dumped\))?(?:\s*$|[ \t]{2}|\s*\()')
_NPM_ERR = re.compile(r'(?<![A-Za-z0-9_./@-])ERR!')
_CATALOG_IDS = {'libc.mo': ['No such file or directory', 'Permission denied', 'Operation not permitted', 'No space left on device',
                            'Connection refused', 'Connection reset by peer', 'Connection timed out', 'Cannot allocate memory',
                            'Too many open files', 'Broken pipe', 'Read-only file system', 'Input/output error',
                            'Operation not supported', 'No such process', 'Memory exhausted'] + _SIGNAL_TEXTS,
                'bash.mo': ['%s: command not found', '%s: no such job', '(core dumped) ', '(core dumped)'] + _SIGNAL_TEXTS,
                'coreutils.mo': ['memory exhausted'],
                'make.mo': ['%s[%s: %s] Error %d%s', '%s[%s] Error %d%s']}
_PRINTF = re.compile(r"%[0-9]*\$?[-+ #0']*[0-9*]*(?:\.[0-9*]+)?[hlLqjzt]*[a-zA-Z%]")
_TRIM = ' \t\xa0.:：;,!«»<>"\'`‘’“”„-'
_PAIRS = ('()', '（）', '[]')


def _phrase_of(piece: str) -> str:
    "A piece of a translation, its edges trimmed and the brackets around all of it taken off (a bracket that closes nothing stays)."
    p = piece.strip(_TRIM)
    while len(p) > 1 and p[0] + p[-1] in _PAIRS: p = p[1:-1].strip(_TRIM)
    return p


def _wide_char(c: str) -> bool: return unicodedata.east_asian_width(c) in ('W', 'F')


def _catalog_phrases() -> tuple[dict, list]:
    "({lower-cased first word: [(phrase, one word)]} of the spaced scripts, [phrase] of the unspaced ones) from this machine's catalogs."
    spaced, wide = {}, set()
    english = {max((_phrase_of(x) for x in _PRINTF.split(i)), key=len).lower() for ids in _CATALOG_IDS.values() for i in ids}
    for mo in sorted(glob.glob('/usr/share/locale*/*/LC_MESSAGES/*.mo')):
        if (ids := _CATALOG_IDS.get(mo.rsplit('/', 1)[1])) is None: continue
        try:
            with open(mo, 'rb') as f: tr = gettext.GNUTranslations(f)
        except Exception: continue
        for i in ids:
            t = tr.gettext(i)
            if t == i or '\n' in t or '\ufffd' in t: continue
            ph = max((_phrase_of(x) for x in _PRINTF.split(t)), key=len)
            ph = ''.join(chr(ord(c) - 0xFEE0) if 0xFF01 <= ord(c) <= 0xFF5E else c for c in ph)
            if ph.lower() in english or sum(c.isalpha() for c in ph) < (2 if any(map(_wide_char, ph)) else 4): continue
            if _wide_char(ph[0]): wide.add(ph)
            else: spaced.setdefault(re.findall(r'[^\W_]+', ph.lower())[0], set()).add((ph, not any(c.isspace() for c in ph) and ph.lower() != ph.upper()))
    return spaced, sorted(wide)


_SPACED, _WIDE = _catalog_phrases()


def _git_conflict_phrases() -> list[str]:
    "The longest piece of each translation of git's `CONFLICT (%s): Merge conflict in %s` in this machine's catalogs, its edges, brackets and colons trimmed (read with gettext here)."
    out, mid = set(), 'CONFLICT (%s): Merge conflict in %s'
    for mo in sorted(glob.glob('/usr/share/locale*/*/LC_MESSAGES/git.mo')):
        try:
            with open(mo, 'rb') as f: t = gettext.GNUTranslations(f).gettext(mid)
        except Exception: continue
        if t == mid or '\n' in t: continue
        ph = max((_phrase_of(x) for x in _PRINTF.split(t)), key=len).strip('():\uff08\uff09\uff1a ')
        if sum(c.isalpha() for c in ph) >= (2 if any(map(_wide_char, ph)) else 4): out.add(ph)
    return sorted(out)


_GIT_CONFLICTS = _git_conflict_phrases()


def _catalog_report(line: str) -> bool:
    "Does `line` hold a translated crash report of this machine's catalogs (see the module's notes)?"
    low = line.lower()
    for word in set(re.findall(r'[^\W_]+', low)) & _SPACED.keys():
        for ph, cased in _SPACED[word]:
            hay, needle = (line, ph) if cased else (low, ph.lower())
            k = hay.find(needle)
            while k >= 0:
                if (k == 0 or not ph[0].isalnum() or not re.match(r'[\w./@-]', hay[k - 1])) and (any(c.isspace() for c in ph) or _report_place(line, k, k + len(needle), ph)): return True
                k = hay.find(needle, k + 1)
    if any(ord(c) > 0x2e7f for c in line):
        for w in _WIDE:
            k = line.find(w)
            while k >= 0:
                if any(c.isspace() for c in w) or len(w) > 2 or _report_place(line, k, k + len(w), w): return True
                k = line.find(w, k + 1)
    return False


def _report_place(line: str, a: int, z: int, phrase: str) -> bool:
    "Is a one-word report at `line[a:z]` where bash prints a job's end: alone, after its `N: PID ` or a job number `[1]+`; then at the end, before two blanks or a bracket, or glued to the command when 24 bytes or longer (bash's padded field)?"
    before, after = line[:a].replace('\uff1a', ':'), line[z:]
    placed = (re.fullmatch(r'[ \t]*', before) or re.search(r':[ \t]*[0-9]+[ \t]+$', before)
              or re.fullmatch(r'\[[0-9]+\][+-]?[ \t]+', before))
    return bool(placed) and (re.fullmatch(r'[ \t\r]*', after) or after.startswith(('  ', '\t\t', ' \t', '\t ')) or after.lstrip(' \t').startswith('(')
                             or len(phrase.encode()) >= 24)


_LABEL = re.compile(r'(?<![\w./@-])(?:errors?|fatal|failed|failures?|panic|exceptions?)\s*:', re.I)
_PROGRAM = re.compile(r'[ \t]*(?:[a-z./][A-Za-z0-9_./+-]{0,63}(?:\[[0-9]+\])?(?:,?[ \t][^\W\d]{1,20}[ \t][0-9]+)?[ \xa0\u202f]?:[ \t]'
                      r'|\[[0-9]+\][+-]?[ \t])')


def _reported(line: str) -> bool:
    "A crash, warning or other-language failure line (output profile)."
    return any(rx.search(line) for rx in (_CRASH_PHRASES, _CRASH, _WARN, _FOREIGN)) or _catalog_report(line)


_DEFINITION = re.compile(r'^\+\s*(?:export\s+)?(?:default\s+)?(?:pub(?:\([a-z]+\))?\s+)?(?:async\s+)?(?:def|class|function|func|fn)\b')
_PY_FRAME = re.compile(r'^\s*File "[^"]*", line [0-9]+')
_PYTEST_LOC = re.compile(r'^[^\s:]+:[0-9]+: [A-Za-z_][\w.]*')

OUTPUT, SOURCE, PROSE = 'output', 'source', 'prose'
PROFILE = {'log': OUTPUT, 'terminal': OUTPUT, 'search-result': OUTPUT, 'tabular': OUTPUT, 'json': OUTPUT,
           'code': SOURCE, 'config': SOURCE, 'diff': SOURCE, 'text': PROSE, 'html': PROSE}

_ANSI = re.compile(r'\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[ -/]+[0-~]|[0-Z\\-_a-~])')


def _security(line: str) -> bool: return _SECURITY.search(line) is not None


def line_signal(line: str, profile: str) -> str | None:
    "The class of one line (None: not a signal) under a profile (output, source, prose)."
    if not line.isascii(): line = ''.join(chr(ord(c) - 0xFEE0) if 0xFF01 <= ord(c) <= 0xFF5E else c for c in line)   # full-width forms
    if _security(line): return 'security'
    if _ERRNO.search(line): return 'errno'
    if _EXIT.search(line) or (profile != SOURCE and _SYSTEMD_EXIT.search(line)): return 'exit'
    if _HTTP.search(line): return 'http'
    if _SUMMARY.search(line): return 'summary'
    if _PYTEST_E.match(line): return 'failure'
    if profile == SOURCE: return None
    if profile == OUTPUT and _STATUS_REASON.search(line): return 'http'
    if _PYTEST_HEADER.match(line) or (profile == OUTPUT and (_TAP_FAILED.match(line) or _FAIL_UPPER.search(line))): return 'failure'
    if profile == PROSE and _RESULT_QUOTED.match(line): return 'failure'
    if profile == OUTPUT and (_WORDS.search(line) or _CAMEL.search(line)): return 'failure'
    if profile == OUTPUT and (_JVM_ALONE.search(line) or _POD_FAILED.search(line) or _LEVEL.search(line)): return 'failure'
    if profile in (OUTPUT, PROSE) and (_CODED_ERROR.search(line) or _FORM_FAILURE.search(line) or any(p in line for p in _GIT_CONFLICTS)): return 'failure'
    if profile == OUTPUT and _reported(line): return 'reported'
    if _LOUD.search(line): return 'failure'
    if profile == PROSE and _PROGRAM.match(line) and (_LABEL.search(line) or _CAMEL.search(line) or _CRASH_PHRASES.search(line) or _REFUSAL.search(line)
                                                     or _CRASH.search(line) or _catalog_report(line)):
        return 'failure'                  # a program's report quoted in prose
    if profile == PROSE and (_EXCEPTION_FIRST.match(line) or _DEATH_ALONE.match(line) or _NPM_ERR.search(line)): return 'failure'
    return None


_BANNER = re.compile(r'^={3,} (FAILURES|ERRORS|PASSES|XPASSES|warnings summary|short test summary info|test session starts|.* in [0-9.]+s(?: \([0-9:]+\))?) ={3,}\s*$')


def _frames(lines: list[str], flags: list) -> None:
    "Mark the last frame of each failure: pytest's location line after `E` lines, the last `File \"…\"` line before a traceback's exception line; a pytest report header under the `PASSES` banner (`-rP`, `-rA`) is a passing test's, no failure."
    section = None
    for i, l in enumerate(lines):
        if (m := _BANNER.match(l)): section = m.group(1)
        elif section in ('PASSES', 'XPASSES') and flags[i] == 'failure' and _PYTEST_HEADER.match(l): flags[i] = None
    last_frame = None
    for i, l in enumerate(lines):
        if _PY_FRAME.match(l): last_frame = i; continue
        if _PYTEST_E.match(l):
            j = i + 1
            while j < len(lines) and (_PYTEST_E.match(lines[j]) or not lines[j].strip()): j += 1
            if j < len(lines) and _PYTEST_LOC.match(lines[j]) and not flags[j]: flags[j] = 'frame'
        if last_frame is not None and flags[i] and not l.startswith((' ', '\t')):
            if not flags[last_frame]: flags[last_frame] = 'frame'
            last_frame = None


def _rewritten(lines: list[str], flags: list) -> None:
    "Diff: in each hunk, the removed lines the added ones do not hold and the other way round (white space ignored), when at most a quarter of its changed lines differ: the real edits of a rewritten (re-indented, moved) block."
    starts = [i for i, l in enumerate(lines) if l.startswith(('@@', 'diff '))] + [len(lines)]
    for a, b in zip(starts, starts[1:]):
        old = [(i, ''.join(lines[i][1:].split())) for i in range(a, b) if lines[i].startswith('-') and not lines[i].startswith('---')]
        new = [(i, ''.join(lines[i][1:].split())) for i in range(a, b) if lines[i].startswith('+') and not lines[i].startswith('+++')]
        if not old or not new: continue
        co, cn = Counter(x for _, x in old), Counter(x for _, x in new)
        odd = [i for i, x in old if co[x] > cn[x]] + [i for i, x in new if cn[x] > co[x]]
        if odd and 4 * len(odd) <= len(old) + len(new):
            for i in odd:
                if not flags[i]: flags[i] = 'change'


def signal_lines(text: str, content_type: str) -> list[tuple[int, str, str]]:
    "`(line index, class, line)` of every signal line of a line-oriented original."
    profile = PROFILE.get(content_type, OUTPUT)
    lines = text.split('\n')
    if content_type == 'terminal': lines = [_render(l) for l in lines]
    flags = [line_signal(l, profile) for l in lines]
    if content_type == 'diff':
        for i, l in enumerate(lines):
            if flags[i] or l.startswith(('+++', '---')): continue
            if _DEFINITION.match(l): flags[i] = 'definition'
            elif not l.startswith((' ', '-', '+')) and _SUMMARY.search(l): flags[i] = 'summary'
        _rewritten(lines, flags)
    else: _frames(lines, flags)
    return [(i, f, lines[i]) for i, f in enumerate(flags) if f and lines[i].strip()]


def _render(line: str) -> str:
    cr = line.endswith('\r')
    if cr: line = line[:-1]
    line = _ANSI.sub('', line)
    if '\r' in line: line = next((s for s in reversed(line.split('\r')) if s), '')
    return line


# --- markers -------------------------------------------------------------------------------------
NUL_NOTE = '\u2026 caveman: the original separates its records with NUL bytes'
_LINE_MARKER = re.compile(r'… [0-9]+ [^\n]{0,80}? elided \(caveman\)(?::([^\n]*))? …|… caveman: [^\n]*')
_SIGNALS = re.compile(r'(?:^|; )signals×([0-9]+) first=("(?:[^"\\]|\\.)*")')


def _counted(summary: str, problems: list) -> int:
    n = 0
    for m in _SIGNALS.finditer(summary.strip()):
        n += int(m.group(1))
        try: json.loads(m.group(2))
        except ValueError: problems.append(f'malformed first= in {summary!r}')
    return n


_HIT = re.compile(r'[^\s:]+?([:-])([0-9]+)\1(.*)\Z', re.S)


def _core(line: str, content_type: str = '') -> str:
    "What of an original line must show in the view: the line without outer white space; for a search hit `N:text` (hits may be grouped under their path)."
    if content_type == 'search-result' and (m := _HIT.match(line)): return f'{m[2]}{m[1]}{m[3]}'.strip()
    return line.strip()


def _line_view(view: str, content_type: str) -> tuple[str, int, list]:
    "The view's text without marker lines, and the signals its markers count."
    problems, counted, kept = [], 0, []
    for l in view.split('\n'):
        m = _LINE_MARKER.search(l)
        if m:
            counted += _counted(m.group(1) or '', problems)
            if m.group(1) is not None or l.strip().startswith(('…', '#', '//', '*', '|', '"')): continue
        kept.append(_render(l) if content_type == 'terminal' else l)
    return '\n'.join(kept), counted, problems


def _table_rows(text: str) -> list[tuple[str, ...]]:
    first = text.split('\n', 1)[0]
    if first.lstrip().startswith('|'):
        return [tuple(c.strip() for c in l.strip().strip('|').split('|')) for l in text.split('\n') if l.strip()]
    delim = '\t' if first.count('\t') > first.count(',') else ','
    return [tuple(r) for r in csv.reader(io.StringIO(text), delimiter=delim)]


_STATUS_COLUMNS = {'status', 'status_code', 'statuscode', 'http_status', 'code', 'response', 'response_code', 'sc-status'}


def table_signal_rows(rows: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
    "Data rows of a table (first row: header) holding a signal: a line class in its joined cells, or a 4xx/5xx status in a status column."
    if not rows: return []
    cols = [k for k, h in enumerate(rows[0]) if h.strip().lower() in _STATUS_COLUMNS]
    return [r for r in rows[1:] if line_signal(' '.join(r), OUTPUT)
            or any(k < len(r) and re.fullmatch(r'[45][0-9][0-9]', r[k].strip()) for k in cols)]


def _hidden_lines(original: str, view: str, content_type: str) -> list[str]:
    if content_type == 'tabular':
        want = Counter(tuple(c.strip() for c in r) for r in table_signal_rows(_table_rows(original)))
        if not want: return []
        body, counted, problems = _line_view(view, content_type)
        have = Counter(tuple(c.strip() for c in r) for r in _table_rows(body))
        hidden = [' , '.join(r) for r, c in want.items() for _ in range(max(0, c - have[r]))]
    else:
        sig = signal_lines(original, content_type)
        if not sig: return []
        body, counted, problems = _line_view(view, content_type)
        need = Counter(_core(l, content_type) for _, _, l in sig)
        hidden = []
        for core, c in need.items():
            seen = body.count(core) if core else c
            hidden += [core] * max(0, c - seen)
    if len(hidden) > counted:
        problems += [f'hidden signal line (not counted by any marker): {h[:200]!r}' for h in hidden[counted:]]
    return problems


# --- JSON ----------------------------------------------------------------------------------------
_TRUE_KEYS = {'deleted', 'failed', 'error', 'errored', 'crashed', 'aborted', 'timed_out', 'timedout'}
_FALSE_KEYS = {'ok', 'success', 'successful', 'succeeded', 'passed'}
_HOLDING_KEYS = {'error', 'errors', 'exception', 'failure', 'failures', 'stderr_error', 'err'}
_STATUS_KEYS = {'status', 'status_code', 'statuscode', 'http_status', 'httpstatus', 'code'}
_LEVEL_KEYS = {'level', 'severity', 'loglevel', 'log_level', 'state', 'status', 'conclusion', 'result', 'outcome'}
_BAD_LEVELS = {'error', 'err', 'fatal', 'critical', 'crit', 'panic', 'emerg', 'alert', 'failed', 'failure', 'crashed', 'errored'}
_EXIT_KEYS = {'exit_code', 'exitcode', 'returncode', 'return_code', 'exit_status', 'exitstatus'}


def _member_signal(key: str, value) -> bool:
    k = key.lower()
    if k in _TRUE_KEYS and value is True: return True
    if k in _FALSE_KEYS and value is False: return True
    if k in _HOLDING_KEYS and value not in (None, False, '', [], {}, 0): return True
    if k in _STATUS_KEYS and (type(value) is int and 400 <= value <= 599 or type(value) is str and re.fullmatch(r'[45][0-9][0-9]', value)):
        return True
    if k in _EXIT_KEYS and type(value) is int and value != 0: return True
    if k in _LEVEL_KEYS and type(value) is str and value.lower() in _BAD_LEVELS: return True
    return False


def json_signals(doc) -> tuple[Counter, Counter]:
    "(member signals as `key=json value` -> count, string-value signal lines -> count) over a parsed JSON document."
    members, strings = Counter(), Counter()
    stack = [doc]
    while stack:
        v = stack.pop()
        if type(v) is dict:
            for k, x in v.items():
                if k.startswith('__caveman_'): continue
                if type(x) in (dict, list): stack.append(x)
                else:
                    if _member_signal(k, x): members[f'{k}={json.dumps(x)}'] += 1
                    if type(x) is str: stack.append(x)
        elif type(v) is list: stack.extend(v)
        elif type(v) is str:
            for l in v.split('\n'):
                if line_signal(l, PROSE): strings[_core(l)] += 1
    return members, strings


def _json_view(view: bytes, problems: list) -> tuple[Counter, list[str], int]:
    doc = json.loads(view)
    members, texts, counted, stack = Counter(), [], 0, [doc]
    while stack:
        v = stack.pop()
        if type(v) is dict:
            inv = v.get('__caveman_invariants__')
            if type(inv) is str: counted += _counted(inv, problems)
            for k, x in v.items():
                if k.startswith('__caveman_'): continue
                if type(x) in (dict, list): stack.append(x)
                else:
                    if _member_signal(k, x): members[f'{k}={json.dumps(x)}'] += 1
                    if type(x) is str: texts.append(x)
        elif type(v) is list: stack.extend(v)
        elif type(v) is str: texts.append(v)
    for t in texts:
        for m in _LINE_MARKER.finditer(t): counted += _counted(m.group(1) or '', problems)
    return members, texts, counted


def _hidden_json(original: bytes, view: bytes) -> list[str]:
    try: doc = json.loads(original)
    except ValueError: return _hidden_lines(original.decode('utf-8', 'replace'), view.decode('utf-8', 'replace'), 'log')
    members, strings = json_signals(doc)
    if not members and not strings: return []
    problems = []
    try: vmembers, texts, counted = _json_view(view, problems)
    except ValueError: return [f'view is not JSON although the original is']
    hidden = [m for m, c in members.items() for _ in range(max(0, c - vmembers[m]))]
    joined = '\n'.join(texts)
    hidden += [s for s, c in strings.items() for _ in range(max(0, c - joined.count(s)))]
    if len(hidden) > counted:
        problems += [f'hidden JSON signal (not counted by any marker): {h[:200]!r}' for h in hidden[counted:]]
    return problems


# --- HTML ----------------------------------------------------------------------------------------
def _html_text(original: bytes) -> str:
    import lxml.html
    try: doc = lxml.html.document_fromstring(original)
    except Exception: return original.decode('utf-8', 'replace')
    # not page text: code, styles, and interactive controls (a code sample's "copy" button is no part of its lines)
    for el in doc.iter('script', 'style', 'noscript', 'template', 'button'):
        el.drop_tree() if el.getparent() is not None else None
    out = []
    for el in doc.iter('p', 'pre', 'li', 'td', 'th', 'dt', 'dd', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'blockquote', 'code'):
        out.extend(' '.join(l.split()) for l in el.text_content().split('\n'))
    return '\n'.join(out)


def hidden_signals(original: bytes, view: bytes, content_type: str) -> list[str]:
    "Every signal of `original` neither visible in `view` nor counted by a `signals×N` marker section; [] when none (issue 10, class 7)."
    if content_type == 'json': return _hidden_json(original, view)
    if content_type == 'html':
        text = _html_text(original)
        sig = signal_lines(text, 'html')
        flat = ' '.join(view.decode('utf-8', 'replace').split())
        _, counted, problems = _line_view(view.decode('utf-8', 'replace'), 'html')
        hidden = [l for _, _, l in sig if l.strip() and ' '.join(l.split()) not in flat]
        return problems + [f'hidden signal line (not counted by any marker): {h[:200]!r}' for h in hidden[counted:]]
    try: text = original.decode('utf-8')
    except UnicodeDecodeError: return []
    shown = view.decode('utf-8', 'replace')
    if '\x00' in text and NUL_NOTE in shown: text = text.replace('\x00', '\n')   # the view says it shows NUL-separated records one a line
    return _hidden_lines(text, shown, content_type)
