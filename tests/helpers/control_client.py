#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# control_client.py SOCKET REQUEST [stream]: send one request line to a
# sandbox's control socket (docs/sandbox.md, "The control plane") and
# print the reply line; with `stream`, every line after it until the
# socket closes. Connect errors go to stderr (exit 1).
import socket
import sys

s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect(sys.argv[1])
except OSError as e:
    print("connect: %s" % e, file=sys.stderr)
    sys.exit(1)
try:
    s.sendall(sys.argv[2].encode() + b"\n")
except BrokenPipeError:
    pass  # refused before the request: the reply is there to read
f = s.makefile("rb")
for line in f:
    sys.stdout.write(line.decode("utf-8", "replace"))
    sys.stdout.flush()
    if len(sys.argv) < 4:
        break
