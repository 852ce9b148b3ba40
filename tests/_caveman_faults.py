"""caveman-mcp with planted faults, for the tests that need a handler to misbehave.

Runs the real `caveman.mcp.server.main()` — transport, JSON-RPC layer, dispatch, the five tools —
with two kinds of planted faults, so the same rules can be checked on the real server that
`tests/_echo_server.py` shows on a toy one:

- three extra JSON-RPC methods wrapped around the real dispatch, as in the echo server: `boom`
  raises RuntimeError, `exit` raises SystemExit, `noisy` writes to stdout every way it can;
- three tools that misbehave: `caveman_stats` raises (-> tool error `cave_tool_panicked`),
  `caveman_toon_encode` writes to stdout every way it can before answering normally, and
  `caveman_toon_decode` of one of two magic inputs never ends until cancelled: `hold-the-logging-lock`
  takes the logging module's lock and spins in Python (as if the cancellation's interrupt had landed
  between that lock's `acquire()` and its `try:`), `stuck-in-c` waits in C code where no interrupt
  lands; either writes its input to the file `$CAVEMAN_FAULT_STARTED` when it starts.

Everything else is the unmodified server. Run as `python tests/_caveman_faults.py`.
"""
import logging, os, subprocess, sys, threading

from caveman.mcp import server, tools


def noise(tag: str):
    "Write to stdout through print, sys.stdout, fd 1 and a child process."
    print(f'{tag}: print to sys.stdout')
    sys.stdout.write(f'{tag}: sys.stdout.write\n'); sys.stdout.flush()
    os.write(1, f'{tag}: os.write to fd 1\n'.encode())
    subprocess.run([sys.executable, '-c', f'print("{tag}: a child process printing")'], stdin=subprocess.DEVNULL, check=True)


real_make_dispatch = server.make_dispatch

def make_dispatch(*args, **kwargs):
    inner = real_make_dispatch(*args, **kwargs)
    def dispatch(method, params):
        if method == 'boom': raise RuntimeError('boom handler failed on purpose')
        if method == 'exit': raise SystemExit(0)
        if method == 'noisy': noise('noisy'); return {}
        return inner(method, params)
    return dispatch


def stats_raises(self, arguments=None): raise RuntimeError('stats failed on purpose')

real_toon_encode = tools.Tools.toon_encode

def noisy_toon_encode(self, arguments):
    noise('toon')
    return real_toon_encode(self, arguments)


real_toon_decode = tools.Tools.toon_decode

def endless_toon_decode(self, arguments):
    what = arguments.get('input') if isinstance(arguments, dict) else None
    if what not in ('hold-the-logging-lock', 'stuck-in-c'): return real_toon_decode(self, arguments)
    with open(os.environ['CAVEMAN_FAULT_STARTED'], 'w') as f: f.write(what)
    if what == 'hold-the-logging-lock':
        logging._lock.acquire()               # never released: the interrupt lands in the loop below
        while True: sum(range(1000))
    threading.Event().wait(3600)


if __name__ == '__main__':
    server.make_dispatch = make_dispatch
    tools.Tools.stats = stats_raises
    tools.Tools.toon_encode = noisy_toon_encode
    tools.Tools.toon_decode = endless_toon_decode
    sys.exit(server.main([]))
