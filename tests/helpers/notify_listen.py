#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# Test helper: the caller's NOTIFY_SOCKET (what systemd listens on). Binds a
# datagram socket at argv[1], then appends each datagram received to argv[2]
# (one per line), until argv[3] seconds pass with nothing (default 30).
# Ancillary data (the barrier's pipe fd) is discarded, which closes it.
import os
import socket
import sys

path, out = sys.argv[1], sys.argv[2]
idle = float(sys.argv[3]) if len(sys.argv) > 3 else 30.0
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
os.chmod(path, 0o777)
open(out + ".bound", "w").close()
s.settimeout(idle)
while True:
    try:
        data = s.recv(4096)
    except socket.timeout:
        break
    with open(out, "a") as f:
        f.write(data.decode(errors="replace") + "\n")
