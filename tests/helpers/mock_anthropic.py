#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A stand-in for the Anthropic Messages API, for driving the real Claude
Code CLI's tool loop without the internet (tests/integration/
test_sandbox_claude_e2e.sh).

    mock_anthropic.py PORTFILE LOGFILE [COMMAND]

Listens on 127.0.0.1 at a free port (written to PORTFILE once listening).
POST /v1/messages answers in the API's format, streamed as server-sent
events (message_start, content_block_start/delta/stop, message_delta,
message_stop) when the request asks for a stream, one JSON object
otherwise:
  * a request that offers the Bash tool and carries no tool result yet:
    a tool_use block asking to run COMMAND (default `git status`);
  * a request carrying a tool_result: a final text, "MOCK-DONE" followed
    by the first line of the result;
  * anything else (title, quota and topic requests): a short text.
POST /v1/messages/count_tokens answers a count; anything else is 404.
Every request is appended to LOGFILE as one JSON line: method, path, the
x-api-key / authorization headers, whether it offered tools, and the
text of each tool_result it carried.
"""
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORTFILE, LOGFILE = sys.argv[1], sys.argv[2]
COMMAND = sys.argv[3] if len(sys.argv) > 3 else "git status"
LOCK = threading.Lock()
COUNTER = [0]


def log(entry):
    with LOCK:
        with open(LOGFILE, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")


def tool_results(body):
    out = []
    for msg in body.get("messages", []):
        content = msg.get("content")
        if msg.get("role") != "user" or not isinstance(content, list):
            continue
        for block in content:
            if block.get("type") != "tool_result":
                continue
            c = block.get("content")
            if isinstance(c, list):
                c = "".join(x.get("text", "") for x in c if isinstance(x, dict))
            out.append(str(c or ""))
    return out


def offers_bash(body):
    return any(t.get("name") == "Bash" for t in body.get("tools", []) or [])


def last_is_tool_result(body):
    msgs = body.get("messages", [])
    if not msgs or msgs[-1].get("role") != "user":
        return False
    c = msgs[-1].get("content")
    return isinstance(c, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in c)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send_json(self, code, obj):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        log({"method": "GET", "path": self.path})
        self.send_json(404, {"type": "error", "error": {
            "type": "not_found_error", "message": "mock: no such route"}})

    do_HEAD = do_GET

    def do_POST(self):
        n = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        path = self.path.split("?")[0]
        results = tool_results(body)
        log({"method": "POST", "path": self.path,
             "x-api-key": self.headers.get("x-api-key"),
             "authorization": self.headers.get("authorization"),
             "model": body.get("model"), "stream": bool(body.get("stream")),
             "bash": offers_bash(body), "tool_results": results})
        if path.endswith("/count_tokens"):
            self.send_json(200, {"input_tokens": 10})
            return
        if not path.endswith("/v1/messages"):
            self.send_json(404, {"type": "error", "error": {
                "type": "not_found_error", "message": "mock: no such route"}})
            return
        with LOCK:
            COUNTER[0] += 1
            mid = "msg_mock%04d" % COUNTER[0]
        if last_is_tool_result(body):
            first = (results[-1].strip().splitlines() or [""])[0]
            blocks = [{"type": "text", "text": "MOCK-DONE " + first}]
            stop = "end_turn"
        elif offers_bash(body):
            blocks = [{"type": "text", "text": "Running it."},
                      {"type": "tool_use", "id": "toolu_" + mid[4:],
                       "name": "Bash",
                       "input": {"command": COMMAND,
                                 "description": "Show the working tree status"}}]
            stop = "tool_use"
        else:
            blocks = [{"type": "text", "text": "Mock reply"}]
            stop = "end_turn"
        msg = {"id": mid, "type": "message", "role": "assistant",
               "model": body.get("model") or "claude-mock",
               "stop_reason": None, "stop_sequence": None,
               "usage": {"input_tokens": 10, "output_tokens": 1}}
        if not body.get("stream"):
            msg.update(content=blocks, stop_reason=stop)
            self.send_json(200, msg)
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()

        def event(name, data):
            self.wfile.write(("event: %s\ndata: %s\n\n" % (
                name, json.dumps(data))).encode())
            self.wfile.flush()

        event("message_start", {"type": "message_start",
                                "message": dict(msg, content=[])})
        for i, b in enumerate(blocks):
            if b["type"] == "text":
                event("content_block_start", {
                    "type": "content_block_start", "index": i,
                    "content_block": {"type": "text", "text": ""}})
                event("content_block_delta", {
                    "type": "content_block_delta", "index": i,
                    "delta": {"type": "text_delta", "text": b["text"]}})
            else:
                event("content_block_start", {
                    "type": "content_block_start", "index": i,
                    "content_block": {"type": "tool_use", "id": b["id"],
                                      "name": b["name"], "input": {}}})
                event("content_block_delta", {
                    "type": "content_block_delta", "index": i,
                    "delta": {"type": "input_json_delta",
                              "partial_json": json.dumps(b["input"])}})
            event("content_block_stop", {"type": "content_block_stop",
                                         "index": i})
        event("message_delta", {"type": "message_delta",
                                "delta": {"stop_reason": stop,
                                          "stop_sequence": None},
                                "usage": {"output_tokens": 12}})
        event("message_stop", {"type": "message_stop"})
        self.close_connection = True


def main():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    srv.handle_error = lambda request, address: None  # a client's reset
    with open(PORTFILE + ".tmp", "w", encoding="ascii") as f:
        f.write(str(srv.server_address[1]))
    os.rename(PORTFILE + ".tmp", PORTFILE)
    srv.serve_forever()


if __name__ == "__main__":
    main()
