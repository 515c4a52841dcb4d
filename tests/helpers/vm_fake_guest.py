#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A fake QEMU for `agentrun vm-host` (tests/integration/test_vm_agent.sh):
instead of booting a guest it plays the guest agent (or a hostile guest)
on fd 3, the socket vm-host passes as the virtio-serial port "agent".

    vm_fake_guest.py MODE [ARGS]

Frames (runtime/sandbox/vm/vm_proto.h): u32 length (big-endian), u8 type,
u32 session, payload. Modes:
  echo         READY; check the SPAWN of session 0 and say what it held;
               echo each STDIN frame back as STDOUT; on EOF, EXIT 3
  resize       READY; after the SPAWN, report each RESIZE and SIGNAL
               frame on stdout (as STDOUT frames) until SIGNAL 15, EXIT 143
  exec         READY; SPAWN 0; answer each SPAWN of another session
               with its argv and cwd on STDOUT and EXIT 9; EXIT 0 of
               session 0 after ARGS[0] exec sessions
  garbage-len  READY, then a frame header whose length is 4 GiB - 1
  hostile      READY, unknown types, frames for sessions that do not
               exist, an EXIT of no session, then STDOUT "still-fine"
               and EXIT 0 of session 0
  flood        READY; after the SPAWN a thread sends ARGS[1] bytes of
               STDOUT (64 KiB frames of pattern_bytes()) then EXIT 0,
               while the main thread writes each SIGNAL frame's number
               to the file ARGS[0] and on SIGNAL 15 the "VM" stops at once
  silent       never READY (sleeps)
  noexit       READY, SPAWN read, then the "VM" stops without EXIT
"""
import os
import socket
import struct
import sys
import threading
import time

SPAWN, STDIN, EOF, RESIZE, SIGNAL = 1, 2, 3, 4, 5
READY, STDOUT, STDERR, EXIT = 16, 17, 18, 19

sock = socket.socket(fileno=3)
buf = b""


lock = threading.Lock()


def put(ftype, session, payload=b""):
    with lock:
        sock.sendall(struct.pack(">IBI", len(payload), ftype, session) + payload)


def pattern_bytes(n):
    """what flood sends: bytes 0..250 over and over (a stream whose every
    64 KiB differ from the next: a lost or doubled frame shows)"""
    pat = bytes(range(251))
    return (pat * (n // 251 + 1))[:n]


def frame():
    global buf
    while True:
        if len(buf) >= 9:
            n, t, s = struct.unpack(">IBI", buf[:9])
            if len(buf) >= 9 + n:
                p = buf[9:9 + n]
                buf = buf[9 + n:]
                return t, s, p
        d = sock.recv(65536)
        if not d:
            sys.exit(0)
        buf += d


def spawn_fields(p):
    flags, rows, cols, argc, envc = struct.unpack(">BHHII", p[:13])
    strs = p[13:].split(b"\0")[:-1]
    cwd, argv, env = strs[0], strs[1:1 + argc], strs[1 + argc:]
    return flags & 1, rows, cols, cwd.decode(), [a.decode() for a in argv], [e.decode() for e in env]


def main():
    mode = sys.argv[1]
    if mode == "silent":
        time.sleep(600)
        return
    put(READY, 0)
    if mode == "garbage-len":
        sock.sendall(struct.pack(">IBI", 0xFFFFFFFF, STDOUT, 0) + b"x" * 64)
        time.sleep(600)
        return
    if mode == "hostile":
        put(99, 0, b"unknown type")
        put(STDOUT, 77, b"for-no-session\n")
        put(EXIT, 5, b"\x01")
        put(EXIT, 0, b"")  # an EXIT without its status byte: dropped
        put(STDERR, 1234567, b"x" * 65536)
        put(STDOUT, 0, b"still-fine\n")
        put(EXIT, 0, b"\x00")
        time.sleep(0.5)
        return
    t, s, p = frame()
    assert t == SPAWN and s == 0, (t, s)
    tty, rows, cols, cwd, argv, env = spawn_fields(p)
    if mode == "noexit":
        return
    if mode == "echo":
        put(STDOUT, 0, f"spawn argv0={argv[0]} cwdarg={argv[-1]} tty={tty} env={len(env)}\n".encode())
        while True:
            t, s, p = frame()
            if t == STDIN:
                put(STDOUT, 0, p)
            elif t == EOF:
                put(STDERR, 0, b"got-eof\n")
                put(EXIT, 0, b"\x03")
                time.sleep(0.5)
                return
    if mode == "resize":
        put(STDOUT, 0, f"size {rows}x{cols}\n".encode())
        while True:
            t, s, p = frame()
            if t == RESIZE:
                r, c = struct.unpack(">HH", p)
                put(STDOUT, 0, f"resize {r}x{c}\n".encode())
            elif t == SIGNAL:
                put(STDOUT, 0, f"signal {p[0]}\n".encode())
                if p[0] == 15:
                    put(EXIT, 0, bytes([143]))
                    time.sleep(0.5)
                    return
    if mode == "flood":
        marker, total = sys.argv[2], int(sys.argv[3])
        data = pattern_bytes(total)

        def flood():
            for off in range(0, total, 65536):
                put(STDOUT, 0, data[off:off + 65536])
            put(EXIT, 0, b"\x00")

        threading.Thread(target=flood, daemon=True).start()
        while True:
            t, s, p = frame()
            if t == SIGNAL:
                with open(marker, "a") as f:
                    f.write(f"signal {p[0]}\n")
                if p[0] == 15:
                    os._exit(0)
    if mode == "exec":
        want = int(sys.argv[2])
        put(STDOUT, 0, b"main-ready\n")
        seen = 0
        while seen < want:
            t, s, p = frame()
            if t == SPAWN and s != 0:
                tty, rows, cols, cwd, argv, env = spawn_fields(p)
                proxy = [e for e in env if e.startswith("HTTP_PROXY=")]
                put(STDOUT, s, f"exec session={s} argv={' '.join(argv)} cwd={cwd} tty={tty} {' '.join(proxy)}\n".encode())
                put(STDERR, s, b"exec-stderr\n")
                put(EXIT, s, b"\x09")
                seen += 1
        put(EXIT, 0, b"\x00")
        time.sleep(0.5)
        return


if __name__ == "__main__":
    main()
