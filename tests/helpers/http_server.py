#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# Test helper: an HTTP(S) server on the loopback (or an address of a test's
# network namespace) that answers every GET and POST with a fixed body and
# writes one line per request to a log: what the egress proxy let through
# (the real value of a --secret, the Host it was sent to, the body).
#
#   http_server.py [--bind ADDR] [--port N] [--port-file F] [--tls DIR]
#                  [--log F] [--fields LIST] [--only-with HEADER]
#                  [--reply TEXT] [--keep-alive]
#
# --port 0 (the default) takes a free port, written to --port-file (made
# whole by a rename: a reader never sees half a number). --tls DIR serves
# HTTPS with DIR/srv.pem and DIR/srv.key. --fields: the log line's
# NAME=VALUE pairs in that order, each NAME a request header (auth:
# Authorization, host: Host) or body, or NAME=HEADER to log HEADER as
# NAME (default "auth"; a missing header is "None"). --only-with HEADER:
# only the requests that carry HEADER are logged. --keep-alive: HTTP/1.1,
# each connection kept open for the client's next request whatever
# "Connection: close" says.
import argparse
import http.server
import os
import socketserver
import ssl

ap = argparse.ArgumentParser()
ap.add_argument("--bind", default="127.0.0.1")
ap.add_argument("--port", type=int, default=0)
ap.add_argument("--port-file")
ap.add_argument("--tls")
ap.add_argument("--log")
ap.add_argument("--fields", default="auth")
ap.add_argument("--only-with")
ap.add_argument("--reply", default="ok-from-tls")
ap.add_argument("--keep-alive", action="store_true")
args = ap.parse_args()

HEADERS = {"auth": "Authorization", "host": "Host"}
fields = []
for f in args.fields.split(","):
    name, _, header = f.partition("=")
    fields.append((name, header or HEADERS.get(name, name)))
log = open(args.log, "a") if args.log else None
reply = (args.reply + "\n").encode()


class Handler(http.server.BaseHTTPRequestHandler):
    if args.keep_alive:
        protocol_version = "HTTP/1.1"

    def answer(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        if log and (not args.only_with or self.headers.get(args.only_with)):
            vals = []
            for name, header in fields:
                v = body.decode() if name == "body" else self.headers.get(header)
                vals.append("%s=%s" % (name, v))
            log.write(" ".join(vals) + "\n")
            log.flush()
        self.send_response(200)
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)
        if args.keep_alive:
            self.close_connection = False

    do_GET = answer
    do_POST = answer

    def log_message(self, *a):
        pass


socketserver.TCPServer.allow_reuse_address = True
server = socketserver.ThreadingTCPServer((args.bind, args.port), Handler)
server.daemon_threads = True
if args.tls:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(args.tls + "/srv.pem", args.tls + "/srv.key")
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
if args.port_file:
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(args.port_file + ".tmp", args.port_file)
server.serve_forever()
