#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# A (possibly hostile) agent on the Sandbox-Agent channel, for
# tests/integration/test_sandbox_channel.sh. Run inside the sandbox:
#
#   agent_channel.py OUT STEP...
#
# Speaks on the fd named by SANDBOX_AGENT_CHANNEL_FD; every line read from
# the sandbox is appended to OUT (then OUT.done is made). Steps, in order:
#   hello              read the sandbox's hello, send ours
#   send:JSON          send one line
#   raw:TEXT           send TEXT and a newline as is
#   big:N              send N bytes of 'x' without a newline, then one
#   flood:N            send N permission_requests for distinct hosts
#   junk:N             send N lines that are not JSON
#   read:N             read N lines (30 s at most)
#   readtype:TYPE      read until a line of that type (30 s at most)
#   sleep:S
#   close              close the channel
import json
import os
import socket
import sys
import time

out_path = sys.argv[1]
fd = int(os.environ["SANDBOX_AGENT_CHANNEL_FD"])
sock = socket.socket(fileno=fd)
buf = b""
out = open(out_path + ".tmp", "w")


def readline(deadline):
    global buf
    while b"\n" not in buf:
        left = deadline - time.time()
        if left <= 0:
            return None
        sock.settimeout(left)
        try:
            chunk = sock.recv(65536)
        except socket.timeout:
            return None
        if not chunk:
            return None
        buf += chunk
    line, buf = buf.split(b"\n", 1)
    out.write(line.decode(errors="replace") + "\n")
    out.flush()
    return line


def send(data):
    sock.settimeout(60)
    sock.sendall(data)


for step in sys.argv[2:]:
    kind, _, arg = step.partition(":")
    if kind == "hello":
        readline(time.time() + 30)
        send(b'{"type":"hello","protocol_version":1}\n')
    elif kind == "send":
        send(arg.encode() + b"\n")
    elif kind == "raw":
        send(arg.encode() + b"\n")
    elif kind == "big":
        send(b"x" * int(arg) + b"\n")
    elif kind == "flood":
        lines = []
        for i in range(int(arg)):
            lines.append(json.dumps({
                "type": "permission_request", "id": "f%d" % i,
                "resource": {"type": "network", "host": "h%d.example" % i,
                             "port": 443},
                "operation": "connect", "description": "flood"}))
        send(("\n".join(lines) + "\n").encode())
    elif kind == "junk":
        send(b"{not json\n" * int(arg))
    elif kind == "read":
        d = time.time() + 30
        for _ in range(int(arg)):
            if readline(d) is None:
                break
    elif kind == "readtype":
        d = time.time() + 30
        while True:
            line = readline(d)
            if line is None:
                break
            try:
                if json.loads(line).get("type") == arg:
                    break
            except ValueError:
                pass
    elif kind == "drain":
        # read what comes within S seconds
        d = time.time() + float(arg)
        while readline(d) is not None:
            pass
    elif kind == "sleep":
        time.sleep(float(arg))
    elif kind == "close":
        sock.close()
out.close()
os.rename(out_path + ".tmp", out_path)
open(out_path + ".done", "w").close()
