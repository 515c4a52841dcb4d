# SPDX-License-Identifier: GPL-2.0-or-later
"""Both ends of the load lane's connections (tests/load/test_egress_load.sh).

  egress_peer.py serve ADDR PORT PORTFILE [TLSDIR]
      A threaded server: each connection sends an HTTP/1.0-like request
      (GET, or POST with a Content-Length body), gets
      "ok PATH BODYBYTES auth=AUTHORIZATION" back and is closed by the
      server once the reply is written. PORT 0 picks one; the port is
      written to PORTFILE. With TLSDIR (srv.pem, srv.key) it speaks TLS.
      Each request's Authorization value is appended to PORTFILE.auth.

  egress_peer.py client MODE HOST PORT N [WORKERS [POST_EVERY]]
      N connections, WORKERS at a time (default 8), through MODE:
        direct   connect HOST:PORT (the loopback relay, transparent
                 capture, --publish)
        connect  HTTP CONNECT through $HTTP_PROXY, then the request
        http     GET http://HOST:PORT/... through $HTTP_PROXY
        socks    SOCKS5 (by name) through $ALL_PROXY, then the request
        tls      CONNECT, then TLS (the CA of $SSL_CERT_FILE) with
                 "Authorization: Bearer $TOKEN"
      Every POST_EVERY-th request (default 3) is a POST with a 48 KiB
      body (more than the TLS interception's head buffer). Prints
      "ok=N failed=M" and each failure (at most 20); exits 1 on any.
"""
import os
import socket
import ssl
import struct
import sys
import threading
import time
import urllib.parse

# per connection: generous, the lane loads the machine
TIMEOUT = float(os.environ.get("PEER_TIMEOUT", "60"))
BODY = b"x" * (48 * 1024)


def read_head(s):
    buf = b""
    while b"\r\n\r\n" not in buf:
        d = s.recv(4096)
        if not d:
            raise ConnectionError("closed before the end of the head: %r" % buf[:200])
        buf += d
    head, rest = buf.split(b"\r\n\r\n", 1)
    return head.decode("latin-1"), rest


def read_all(s, rest=b""):
    buf = rest
    while True:
        d = s.recv(65536)
        if not d:
            return buf
        buf += d


# ---- server ----

def serve(addr, port, portfile, tlsdir=None):
    import socketserver

    auth_log = open(portfile + ".auth", "a")
    lock = threading.Lock()

    class H(socketserver.BaseRequestHandler):
        def handle(self):
            s = self.request
            s.settimeout(TIMEOUT)
            try:
                head, rest = read_head(s)
                lines = head.split("\r\n")
                path = lines[0].split(" ")[1]
                hdr = {}
                for l in lines[1:]:
                    k, _, v = l.partition(":")
                    hdr[k.strip().lower()] = v.strip()
                n = int(hdr.get("content-length", "0"))
                while len(rest) < n:
                    d = s.recv(65536)
                    if not d:
                        break
                    rest += d
                auth = hdr.get("authorization", "-")
                with lock:
                    auth_log.write(auth + "\n")
                    auth_log.flush()
                body = ("ok %s %d auth=%s\n" % (path, len(rest), auth)).encode()
                s.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: %d\r\n"
                          b"Connection: close\r\n\r\n" % len(body) + body)
            except Exception as e:  # the client reports it
                sys.stderr.write("server: %r\n" % e)

    class S(socketserver.ThreadingTCPServer):
        allow_reuse_address = True
        daemon_threads = True
        request_queue_size = 128

    srv = S((addr, int(port)), H)
    if tlsdir:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(tlsdir + "/srv.pem", tlsdir + "/srv.key")
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    with open(portfile + ".tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(portfile + ".tmp", portfile)
    srv.serve_forever()


# ---- client ----

def proxy_addr(var):
    u = urllib.parse.urlsplit(os.environ[var])
    return u.hostname, u.port


def request(s, i, host, port, absolute=False, post_every=3):
    path = "/c%d" % i
    target = "http://%s:%d%s" % (host, port, path) if absolute else path
    auth = "Bearer %s" % os.environ.get("TOKEN", "-")
    if i % post_every == post_every - 1:
        s.sendall(("POST %s HTTP/1.1\r\nHost: %s:%d\r\nAuthorization: %s\r\n"
                   "Content-Length: %d\r\n\r\n" % (target, host, port, auth, len(BODY))).encode() + BODY)
        want = "ok %s %d auth=" % (path, len(BODY))
    else:
        s.sendall(("GET %s HTTP/1.1\r\nHost: %s:%d\r\nAuthorization: %s\r\n"
                   "Connection: close\r\n\r\n" % (target, host, port, auth)).encode())
        want = "ok %s 0 auth=" % path
    head, rest = read_head(s)
    body = read_all(s, rest).decode("latin-1")
    if " 200 " not in head.split("\r\n")[0] + " " or not body.startswith(want):
        raise ValueError("unexpected reply: %r %r" % (head[:300], body[:200]))


def tunnel(host, port):
    s = socket.create_connection(proxy_addr("HTTP_PROXY"), timeout=TIMEOUT)
    s.sendall(("CONNECT %s:%d HTTP/1.1\r\nHost: %s:%d\r\n\r\n" % (host, port, host, port)).encode())
    head, rest = read_head(s)
    if " 200" not in head.split("\r\n")[0]:
        raise ValueError("CONNECT refused: %r" % head[:300])
    if rest:
        raise ValueError("bytes after the CONNECT reply: %r" % rest[:100])
    return s


def socks(host, port):
    s = socket.create_connection(proxy_addr("ALL_PROXY"), timeout=TIMEOUT)
    s.sendall(b"\x05\x01\x00")
    if s.recv(2) != b"\x05\x00":
        raise ValueError("SOCKS5 method refused")
    h = host.encode()
    s.sendall(b"\x05\x01\x00\x03" + bytes([len(h)]) + h + struct.pack("!H", port))
    r = b""
    while len(r) < 10:
        d = s.recv(10 - len(r))
        if not d:
            raise ConnectionError("SOCKS5 reply cut: %r" % r)
        r += d
    if r[1] != 0:
        raise ValueError("SOCKS5 reply %d" % r[1])
    return s


def one(mode, host, port, i, ctx, post_every):
    if mode == "direct":
        s = socket.create_connection((host, port), timeout=TIMEOUT)
    elif mode == "connect":
        s = tunnel(host, port)
    elif mode == "http":
        s = socket.create_connection(proxy_addr("HTTP_PROXY"), timeout=TIMEOUT)
    elif mode == "socks":
        s = socks(host, port)
    elif mode == "tls":
        s = ctx.wrap_socket(tunnel(host, port), server_hostname=host)
    else:
        raise SystemExit("unknown mode " + mode)
    try:
        request(s, i, host, port, absolute=(mode == "http"), post_every=post_every)
    finally:
        s.close()


def client(mode, host, port, n, workers=8, post_every=3):
    port, n, workers, post_every = int(port), int(n), int(workers), int(post_every)
    ctx = None
    if mode == "tls":
        ctx = ssl.create_default_context(cafile=os.environ["SSL_CERT_FILE"])
    lock = threading.Lock()
    nxt = [0]
    ok = [0]
    failures = []

    def work():
        while True:
            with lock:
                i = nxt[0]
                nxt[0] += 1
            if i >= n:
                return
            t = time.monotonic()
            try:
                one(mode, host, port, i, ctx, post_every)
                with lock:
                    ok[0] += 1
            except Exception as e:
                with lock:
                    failures.append("#%d after %.1fs: %s: %s" % (i, time.monotonic() - t, type(e).__name__, e))

    ts = [threading.Thread(target=work) for _ in range(workers)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    print("ok=%d failed=%d" % (ok[0], len(failures)))
    for f in failures[:20]:
        print("failure: " + f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        serve(*sys.argv[2:])
    else:
        client(*sys.argv[2:])
