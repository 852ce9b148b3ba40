"""A toy JSON-RPC server for the framing tests: caveman's real transport and serve loop around a tiny dispatch.

Run as `python tests/_echo_server.py`; reads stdin until EOF. Methods: `ping` -> {}, `echo` -> params,
`boom` raises, `exit` raises SystemExit, `noisy` writes to stdout every way it can and returns {};
anything else -> -32601. The cap comes from CAVEMAN_MCP_MAX_INBOUND_BYTES, like the real server.
With ECHO_SERVER_REPORT_PEAK=1 it writes `peak_rss_kib=<VmHWM>` to stderr at EOF (Linux /proc; the
high-water mark of this program's own memory, which getrusage would mix with its parent's after fork).
"""
import os, subprocess, sys

from caveman.mcp.jsonrpc import method_not_found, serve
from caveman.mcp.transport import guard_stdout, setup_logging


def dispatch(method, params):
    if method == 'ping': return {}
    if method == 'echo': return params
    if method == 'boom': raise RuntimeError('boom handler failed on purpose')
    if method == 'exit': raise SystemExit(0)
    if method == 'noisy':
        print('noisy: print to sys.stdout')
        sys.stdout.write('noisy: sys.stdout.write\n'); sys.stdout.flush()
        os.write(1, b'noisy: os.write to fd 1\n')
        subprocess.run([sys.executable, '-c', 'print("noisy: a child process printing")'], stdin=subprocess.DEVNULL, check=True)
        return {}
    raise method_not_found(method)


def main():
    out = guard_stdout()
    setup_logging()
    serve(sys.stdin.buffer, out, dispatch)
    if os.environ.get('ECHO_SERVER_REPORT_PEAK') == '1':
        hwm = next(l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM:'))
        sys.stderr.write(f'peak_rss_kib={hwm}\n')


if __name__ == '__main__': main()
