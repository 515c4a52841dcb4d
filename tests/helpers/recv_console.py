#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Receive a pty master over a unix socket (--console-socket), as conmon
does, and copy what the container writes to stdout.

usage: recv_console.py SOCKET_PATH [INPUT]

Listens on SOCKET_PATH, prints "listening" on stderr once bound, accepts one
connection, receives the fd (SCM_RIGHTS), writes INPUT (if given) to it,
then copies the pty output to stdout until the pty is closed (EIO).
"""
import os
import socket
import sys


def main():
    path = sys.argv[1]
    data = sys.argv[2].encode() if len(sys.argv) > 2 else None
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(1)
    print("listening", file=sys.stderr, flush=True)
    conn, _ = srv.accept()
    msg, fds, _, _ = socket.recv_fds(conn, 1024, 1)
    if not fds:
        print("no fd received", file=sys.stderr)
        return 2
    master = fds[0]
    print("received fd, tag=%r" % msg.rstrip(b"\0").decode(errors="replace"),
          file=sys.stderr, flush=True)
    if data is not None:
        os.write(master, data)
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        sys.stdout.buffer.write(chunk)
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
