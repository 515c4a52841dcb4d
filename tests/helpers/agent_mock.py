#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/helpers/agent_mock.py — a model API on 127.0.0.1 for the agent CLIs' end-to-end
# tests (tests/integration/test_sandbox_agents.sh) and by hand:
#
#   agent_mock.py DIR [COMMAND]
#
# Serves, on a free port written to DIR/port (DIR/port.tmp renamed), the
# three APIs the CLIs speak, each streamed:
#   POST .../responses                       OpenAI Responses API (Codex)
#   POST .../chat/completions                OpenAI chat completions (opencode)
#   POST .../models/M:streamGenerateContent  Gemini API (?alt=sse)
#   POST .../models/M:generateContent        Gemini API, not streamed
#   POST .../models/M:countTokens            Gemini API
# A conversation whose request offers a shell tool and holds no tool result
# yet is answered with one call of that tool running COMMAND (default
# `git status --short --untracked-files=all`); once the result is in the
# request, with a final text quoting it ("mock: the tool said: ...").
# Every request is appended to DIR/requests.log (method, path, the
# Authorization or x-goog-api-key header, the body) and each tool result
# to DIR/tool-output.log. Anything else: 404 with a JSON error.
import json
import os
import sys
import threading
import http.server
import socketserver

DIR = sys.argv[1]
COMMAND = sys.argv[2] if len(sys.argv) > 2 else "git status --short --untracked-files=all"
LOCK = threading.Lock()
SEQ = [0]


def log(name, text):
    with LOCK:
        with open(os.path.join(DIR, name), "a") as f:
            f.write(text + "\n")


def seq():
    with LOCK:
        SEQ[0] += 1
        return SEQ[0]


def final_text(result):
    return "mock: the tool said: " + (result or "(nothing)").strip().replace("\n", " | ")


# ---- OpenAI Responses API (Codex) -------------------------------------------
def responses(req):
    tools = {t.get("name") for t in req.get("tools", []) if isinstance(t, dict)}
    result = None
    for item in req.get("input", []) if isinstance(req.get("input"), list) else []:
        if isinstance(item, dict) and item.get("type") in ("function_call_output",
                                                           "custom_tool_call_output"):
            out = item.get("output")
            if isinstance(out, dict):
                out = out.get("content") or json.dumps(out)
            elif isinstance(out, list):
                out = " ".join(o.get("text", "") for o in out if isinstance(o, dict))
            result = out
    rid = "resp_%d" % seq()
    events = [("response.created", {"type": "response.created",
                                     "response": {"id": rid}})]
    if result is None and tools & {"shell", "shell_command", "exec_command"}:
        if "shell_command" in tools:
            name, args = "shell_command", {"command": COMMAND}
        elif "exec_command" in tools:
            name, args = "exec_command", {"cmd": COMMAND}
        else:
            name, args = "shell", {"command": ["bash", "-lc", COMMAND]}
        item = {"type": "function_call", "id": "fc_%d" % seq(), "call_id": "call_%d" % seq(),
                "name": name, "arguments": json.dumps(args), "status": "completed"}
        events.append(("response.output_item.added",
                       {"type": "response.output_item.added", "output_index": 0, "item": item}))
        events.append(("response.output_item.done",
                       {"type": "response.output_item.done", "output_index": 0, "item": item}))
    else:
        if result is not None:
            log("tool-output.log", result)
        text = final_text(result) if result is not None else "mock: hello"
        mid = "msg_%d" % seq()
        item = {"type": "message", "id": mid, "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}]}
        events.append(("response.output_item.added",
                       {"type": "response.output_item.added", "output_index": 0,
                        "item": dict(item, content=[], status="in_progress")}))
        events.append(("response.output_text.delta",
                       {"type": "response.output_text.delta", "item_id": mid,
                        "output_index": 0, "content_index": 0, "delta": text}))
        events.append(("response.output_item.done",
                       {"type": "response.output_item.done", "output_index": 0, "item": item}))
    events.append(("response.completed",
                   {"type": "response.completed",
                    "response": {"id": rid, "usage": {
                        "input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
                        "output_tokens": 10, "output_tokens_details": {"reasoning_tokens": 0},
                        "total_tokens": 20}}}))
    return "".join("event: %s\ndata: %s\n\n" % (e, json.dumps(d)) for e, d in events)


# ---- OpenAI chat completions (opencode) -------------------------------------
def chat(req):
    tools = {t.get("function", {}).get("name") for t in req.get("tools", []) if isinstance(t, dict)}
    result = None
    for m in req.get("messages", []):
        if m.get("role") == "tool":
            c = m.get("content")
            if isinstance(c, list):
                c = " ".join(p.get("text", "") for p in c if isinstance(p, dict))
            result = c
    cid = "chatcmpl-%d" % seq()

    def chunk(delta, finish=None):
        return "data: " + json.dumps({"id": cid, "object": "chat.completion.chunk",
                                      "created": 0, "model": req.get("model", "mock"),
                                      "choices": [{"index": 0, "delta": delta,
                                                   "finish_reason": finish}]}) + "\n\n"
    out = chunk({"role": "assistant", "content": ""})
    if result is None and "bash" in tools:
        args = {"command": COMMAND, "description": "Shows the git status"}
        out += chunk({"tool_calls": [{"index": 0, "id": "call_%d" % seq(), "type": "function",
                                      "function": {"name": "bash",
                                                   "arguments": json.dumps(args)}}]})
        out += chunk({}, "tool_calls")
    else:
        if result is not None:
            log("tool-output.log", result)
        text = final_text(result) if result is not None else ("Mock title" if not tools else "mock: hello")
        out += chunk({"content": text})
        out += chunk({}, "stop")
    out += "data: " + json.dumps({"id": cid, "object": "chat.completion.chunk", "created": 0,
                                  "model": req.get("model", "mock"), "choices": [],
                                  "usage": {"prompt_tokens": 10, "completion_tokens": 10,
                                            "total_tokens": 20}}) + "\n\n"
    return out + "data: [DONE]\n\n"


# ---- Gemini API --------------------------------------------------------------
def gemini(req):
    tools = set()
    for t in req.get("tools", []) or []:
        for f in t.get("functionDeclarations", []) or []:
            tools.add(f.get("name"))
    result = None
    for c in req.get("contents", []) or []:
        for p in c.get("parts", []) or []:
            fr = p.get("functionResponse")
            if fr:
                r = fr.get("response", {})
                result = r.get("output") if isinstance(r, dict) and "output" in r else json.dumps(r)
    if result is None and "run_shell_command" in tools:
        parts = [{"functionCall": {"name": "run_shell_command",
                                   "args": {"command": COMMAND,
                                            "description": "Shows the git status"}}}]
    else:
        if result is not None:
            log("tool-output.log", result)
        text = final_text(result) if result is not None else "mock: hello"
        if not tools and "json" in json.dumps(req.get("generationConfig", {})).lower():
            # the CLI's routing/next-speaker checks ask for JSON
            text = json.dumps({"reasoning": "mock", "model_choice": "flash",
                               "next_speaker": "user", "complexity_reasoning": "mock",
                               "complexity_score": 1})
        parts = [{"text": text}]
    return {"candidates": [{"content": {"role": "model", "parts": parts},
                            "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 10,
                              "totalTokenCount": 20},
            "modelVersion": "mock"}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def send(self, code, body, ctype):
        data = body.encode()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def record(self, body):
        auth = self.headers.get("Authorization") or self.headers.get("x-goog-api-key") or ""
        log("requests.log", "%s %s auth=%s\n%s" % (self.command, self.path, auth, body))

    def do_GET(self):
        self.record("")
        if self.path.rstrip("/").endswith("/models"):
            self.send(200, json.dumps({"object": "list", "data": [], "models": []}),
                      "application/json")
            return
        self.send(404, json.dumps({"error": {"message": "mock: no " + self.path}}),
                  "application/json")

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n).decode("utf-8", "replace")
        self.record(body)
        try:
            req = json.loads(body or "{}")
        except ValueError:
            req = {}
        path = self.path.split("?")[0]
        if path.endswith("/responses"):
            self.send(200, responses(req), "text/event-stream")
        elif path.endswith("/chat/completions"):
            self.send(200, chat(req), "text/event-stream")
        elif path.endswith(":streamGenerateContent"):
            self.send(200, "data: " + json.dumps(gemini(req)) + "\n\n", "text/event-stream")
        elif path.endswith(":generateContent"):
            self.send(200, json.dumps(gemini(req)), "application/json")
        elif path.endswith(":countTokens"):
            self.send(200, json.dumps({"totalTokens": 10}), "application/json")
        else:
            self.send(404, json.dumps({"error": {"message": "mock: no " + path}}),
                      "application/json")


socketserver.TCPServer.allow_reuse_address = True
srv = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
srv.daemon_threads = True
with open(os.path.join(DIR, "port.tmp"), "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(os.path.join(DIR, "port.tmp"), os.path.join(DIR, "port"))
srv.serve_forever()
