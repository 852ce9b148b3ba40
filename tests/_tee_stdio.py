"""Runs `$TEE_SERVER` (a stdio MCP server) and copies every line between it and our own stdin/stdout,
appending each to `$TEE_LOG` prefixed `> ` (client to server) or `< ` (server to client): how a test
sees what a real host sent, without changing a byte of it."""
import os, subprocess, sys, threading

log = open(os.environ['TEE_LOG'], 'ab', buffering=0)
server = subprocess.Popen([os.environ['TEE_SERVER']], stdin=subprocess.PIPE, stdout=subprocess.PIPE)

def upstream():
    for line in sys.stdin.buffer:
        log.write(b'> ' + line); server.stdin.write(line); server.stdin.flush()
    server.stdin.close()

threading.Thread(target=upstream, daemon=True).start()
for line in server.stdout:
    log.write(b'< ' + line); sys.stdout.buffer.write(line); sys.stdout.buffer.flush()
sys.exit(server.wait())
