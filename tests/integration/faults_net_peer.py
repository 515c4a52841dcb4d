# SPDX-License-Identifier: GPL-2.0-or-later
"""Both ends of tests/integration/test_faults_net.sh.

  faults_net_peer.py serve PORTFILE
      HTTP/1.0 on 127.0.0.1 (a free port, written to PORTFILE): GET /reset
      sends a 200 head and 64 KiB of a 1 MiB body, then resets the
      connection (SO_LINGER 0); every other path gets "ok PATH".

  faults_net_peer.py reset HOST PORT
      Through $HTTP_PROXY (CONNECT): /reset while 20 other requests run
      beside it. Prints "reset=<what the /reset client saw>" and
      "others=N/20".

  faults_net_peer.py trickle HOST PORT
      Through $HTTP_PROXY: one client sends its request head a byte a
      second; 20 normal requests run beside it meanwhile. Prints
      "others=N/20", then "trickle=closed after S s: REPLY".

  faults_net_peer.py fds HOST PORT
      Under a low RLIMIT_NOFILE: opens connections to the proxy until
      EMFILE, closes them, then makes 10 requests. Prints "emfile=yes|no"
      and "after=N/10".
"""
import os
import socket
import struct
import sys
import threading
import time


def serve(portfile):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", 0))
    s.listen(128)
    with open(portfile + ".tmp", "w") as f:
        f.write(str(s.getsockname()[1]))
    os.rename(portfile + ".tmp", portfile)

    def one(c):
        try:
            buf = b""
            while b"\r\n\r\n" not in buf:
                d = c.recv(4096)
                if not d:
                    return
                buf += d
            path = buf.split(b" ")[1].decode("latin-1")
            if path == "/reset":
                c.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 1048576\r\n\r\n" + b"r" * 65536)
                time.sleep(0.3)
                c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            else:
                c.sendall(b"HTTP/1.0 200 OK\r\n\r\nok " + path.encode())
        except OSError:
            pass
        finally:
            c.close()

    while True:
        c, _ = s.accept()
        threading.Thread(target=one, args=(c,), daemon=True).start()


def proxy_addr():
    p = os.environ["HTTP_PROXY"].split("//", 1)[-1].rstrip("/")
    h, port = p.rsplit(":", 1)
    return h, int(port)


def tunnel(host, port, timeout=60):
    c = socket.create_connection(proxy_addr(), timeout=timeout)
    c.sendall(("CONNECT %s:%d HTTP/1.1\r\nHost: %s:%d\r\n\r\n" % (host, port, host, port)).encode())
    buf = b""
    while b"\r\n\r\n" not in buf:
        d = c.recv(1)
        if not d:
            raise ConnectionError("proxy closed: %r" % buf)
        buf += d
    if b" 200 " not in buf.split(b"\r\n")[0]:
        raise ConnectionError("proxy said %r" % buf.split(b"\r\n")[0])
    return c


def get(host, port, path):
    c = tunnel(host, port)
    c.sendall(("GET %s HTTP/1.0\r\n\r\n" % path).encode())
    buf = b""
    while True:
        d = c.recv(65536)
        if not d:
            break
        buf += d
    c.close()
    return buf


def others(host, port, n, res):
    for i in range(n):
        try:
            if get(host, port, "/o%d" % i).endswith(b"ok /o%d" % i):
                res.append(i)
        except OSError as e:
            print("other %d: %r" % (i, e))


def cmd_reset(host, port):
    res = []
    t = threading.Thread(target=others, args=(host, port, 20, res))
    t.start()
    got = 0
    what = "eof"
    try:
        c = tunnel(host, port)
        c.sendall(b"GET /reset HTTP/1.0\r\n\r\n")
        while True:
            d = c.recv(65536)
            if not d:
                break
            got += len(d)
    except ConnectionResetError:
        what = "ConnectionResetError"
    except OSError as e:
        what = repr(e)
    t.join()
    print("reset=%s after %d bytes" % (what, got))
    print("others=%d/20" % len(res))


def cmd_trickle(host, port):
    c = socket.create_connection(proxy_addr(), timeout=120)
    head = b"GET http://%s:%d/t HTTP/1.1\r\nHost: %s:%d\r\nX-Pad: %s\r\n\r\n" % (
        host.encode(), port, host.encode(), port, b"p" * 200)
    res = []
    t = threading.Thread(target=others, args=(host, port, 20, res))
    t0 = time.time()
    t.start()
    reply = b""
    for b in head:
        try:
            c.sendall(bytes([b]))
        except OSError as e:
            reply = repr(e).encode()
            break
        c.settimeout(1.0)
        try:
            d = c.recv(4096)
            if d == b"" or d:
                reply = d or b"EOF"
                break
        except socket.timeout:
            pass
        except OSError as e:
            reply = repr(e).encode()
            break
        if time.time() - t0 > 100:
            break
    t.join()
    print("others=%d/20" % len(res))
    print("trickle=closed after %d s: %s" % (time.time() - t0, reply.split(b"\r\n")[0].decode("latin-1")))


def cmd_fds(host, port):
    socks = []
    emfile = "no"
    try:
        for _ in range(200):
            socks.append(socket.create_connection(proxy_addr(), timeout=30))
    except OSError as e:
        if e.errno == 24:
            emfile = "yes"
        else:
            print("open: %r" % e)
    for s in socks:
        s.close()
    print("emfile=%s after %d sockets" % (emfile, len(socks)))
    res = []
    others(host, port, 10, res)
    print("after=%d/10" % len(res))


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "serve":
        serve(sys.argv[2])
    else:
        {"reset": cmd_reset, "trickle": cmd_trickle, "fds": cmd_fds}[cmd](sys.argv[2], int(sys.argv[3]))
