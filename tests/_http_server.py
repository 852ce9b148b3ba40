"""A real `caveman-mcp --http` in a subprocess, and raw HTTP to it through the standard library; shared by
the HTTP, Inspector and protocol-bench tests."""
import http.client, json, os, signal, subprocess, time
from pathlib import Path

from conftest import server_command, child_env

MODERN = {'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {},
          'io.modelcontextprotocol/clientInfo': {'name': 'raw-http', 'version': '1'}}


class HttpServer:
    "A running `caveman-mcp --http BIND`; `.port` once it said where it listens."
    def __init__(self, tmp: Path, bind='127.0.0.1:0', **env):
        self.err = open(tmp / f'http-{time.monotonic_ns()}.log', 'w+')
        full = child_env(**{'CAVEMAN_CCR_DB': str(tmp / 'store' / 'ccr.db'), 'CAVEMAN_HOME': str(tmp / 'home'), **env})
        self.p = subprocess.Popen(server_command() + ['--http', bind], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=self.err, env=full)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and self.p.poll() is None:
            self.err.seek(0)
            line = next((l for l in self.err.read().splitlines() if 'listening on http://' in l), None)
            if line:
                self.url = line.split('listening on ', 1)[1].strip()
                self.port = int(self.url.rsplit(':', 1)[1].split('/')[0])
                return
            time.sleep(0.05)
        raise AssertionError(f'server did not start (rc {self.p.poll()}): {self.log()}')

    def log(self, tail: int | None = 3000) -> str:
        self.err.seek(0); text = self.err.read()
        return text if tail is None else text[-tail:]

    def local_url(self) -> str: return f'http://127.0.0.1:{self.port}/mcp'

    def stop(self, sig=signal.SIGTERM, timeout=60) -> int:
        self.p.send_signal(sig)
        return self.p.wait(timeout)

    def __enter__(self): return self
    def __exit__(self, *exc):
        if self.p.poll() is None: self.p.kill(); self.p.wait()
        assert self.p.stdout.read() == b''          # an HTTP server writes nothing on stdout


def post(port, body: bytes, headers: dict | None = None, method='POST', host=None) -> tuple[int, dict, bytes]:
    "One raw HTTP request to /mcp: (status, lower-cased headers, body)."
    c = http.client.HTTPConnection('127.0.0.1', port, timeout=60)
    h = {'Content-Type': 'application/json', 'Accept': 'application/json, text/event-stream', **(headers or {})}
    if host: h['Host'] = host
    c.request(method, '/mcp', body=body, headers=h)
    r = c.getresponse()
    out = (r.status, {k.lower(): v for k, v in r.getheaders()}, r.read())
    c.close()
    return out


def modern(rid, method, **params) -> tuple[bytes, dict]:
    "A stateless request and the headers the 2026-07-28 transport asks for."
    headers = {'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': method}
    if 'name' in params: headers['Mcp-Name'] = params['name']
    if 'uri' in params: headers['Mcp-Name'] = params['uri']
    return json.dumps({'jsonrpc': '2.0', 'id': rid, 'method': method, 'params': {**params, '_meta': MODERN}}).encode(), headers


def discover_ok(port) -> bool:
    status, _, body = post(port, *modern(99, 'server/discover'))
    return status == 200 and json.loads(body)['result']['supportedVersions'][0] == '2026-07-28'


