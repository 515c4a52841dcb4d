#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A read-only registry (distribution API v2, plain HTTP) serving images
from OCI layout directories, for tests/conformance/podman-system.sh: podman's
system tests pull quay.io/libpod/testimage:TAG, which registries.conf then
maps to this server on loopback (no network here).

    oci-registry.py HOST:PORT NAME:TAG=OCI_DIR [NAME:TAG=OCI_DIR...]

e.g. 127.0.0.1:5099 libpod/testimage:20220615=/var/tmp/x/testimage. Serves
GET/HEAD /v2/, /v2/NAME/manifests/TAG-or-DIGEST, /v2/NAME/blobs/DIGEST and
/v2/NAME/tags/list; everything else is a 404 (pushes are refused: 405)."""

import http.server
import json
import os
import re
import sys

IMAGES = {}  # name -> {tag: oci_dir}


def manifest_of(oci_dir):
    with open(os.path.join(oci_dir, "index.json"), encoding="utf-8") as f:
        desc = json.load(f)["manifests"][0]
    return desc["digest"], desc.get("mediaType", "application/vnd.oci.image.manifest.v1+json")


def blob_path(oci_dir, digest):
    algo, _, hexd = digest.partition(":")
    if not re.fullmatch(r"[a-z0-9]+", algo) or not re.fullmatch(r"[a-f0-9]+", hexd):
        return None
    p = os.path.join(oci_dir, "blobs", algo, hexd)
    return p if os.path.isfile(p) else None


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        sys.stderr.write("oci-registry: " + (fmt % args) + "\n")

    def reply(self, code, body=b"", ctype="application/json", headers=None):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Docker-Distribution-API-Version", "registry/2.0")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def not_found(self, code="NAME_UNKNOWN"):
        body = json.dumps({"errors": [{"code": code, "message": self.path}]}).encode()
        self.reply(404, body)

    def do_GET(self):
        path = self.path.split("?", 1)[0]
        if path in ("/v2", "/v2/"):
            return self.reply(200, b"{}")
        m = re.fullmatch(r"/v2/(.+)/(manifests|blobs|tags)/(.+)", path)
        if not m or m.group(1) not in IMAGES:
            return self.not_found()
        name, kind, ref = m.groups()
        tags = IMAGES[name]
        if kind == "tags":
            body = json.dumps({"name": name, "tags": sorted(tags)}).encode()
            return self.reply(200, body)
        if kind == "manifests":
            for oci_dir in ([tags[ref]] if ref in tags else tags.values()):
                digest, mtype = manifest_of(oci_dir)
                if ref in tags or ref == digest:
                    with open(blob_path(oci_dir, digest), "rb") as f:
                        body = f.read()
                    return self.reply(200, body, mtype, {"Docker-Content-Digest": digest})
            return self.not_found("MANIFEST_UNKNOWN")
        for oci_dir in tags.values():
            p = blob_path(oci_dir, ref)
            if p:
                with open(p, "rb") as f:
                    body = f.read()
                return self.reply(200, body, "application/octet-stream", {"Docker-Content-Digest": ref})
        return self.not_found("BLOB_UNKNOWN")

    do_HEAD = do_GET

    def refuse(self):
        self.reply(405, b'{"errors":[{"code":"UNSUPPORTED","message":"read-only registry"}]}')

    do_POST = do_PUT = do_PATCH = do_DELETE = refuse


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    host, _, port = sys.argv[1].rpartition(":")
    for arg in sys.argv[2:]:
        ref, _, oci_dir = arg.partition("=")
        name, _, tag = ref.rpartition(":")
        manifest_of(oci_dir)  # fails early on a bad directory
        IMAGES.setdefault(name, {})[tag] = oci_dir
    srv = http.server.ThreadingHTTPServer((host, int(port)), Handler)
    print("ready", flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
