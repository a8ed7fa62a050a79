#!/usr/bin/env python3
"""Issue 32's grammar reproductions (F1-F4) and variants against a running `minimax serve`.

Usage: hostile_grammar_requests.py HOST PORT API_KEY

Each hostile body is sent through every route that compiles a grammar; the server must answer
each with a 4xx or a clean 200, and a plain chat sent alongside the expensive ones must finish
while they run. Prints "ok   ..." / "FAIL ..." lines (scripts/lib/check.sh's format) and exits 1
on any failure. Only the standard library: Debian's python3 or any other.
"""
import http.client
import json
import sys
import threading
import time

HOST, PORT, KEY = sys.argv[1], int(sys.argv[2]), sys.argv[3]
failures = 0


def check(name, ok):
    global failures
    print(("ok   " if ok else "FAIL ") + name, flush=True)
    if not ok:
        failures += 1


def post(path, body, timeout=120):
    """(status, parsed JSON or text) of one POST; (None, error) when the connection fails."""
    conn = http.client.HTTPConnection(HOST, PORT, timeout=timeout)
    try:
        data = json.dumps(body).encode()
        conn.request("POST", path, data, {"Content-Type": "application/json",
                                          "Authorization": "Bearer " + KEY})
        reply = conn.getresponse()
        text = reply.read().decode("utf-8", "replace")
        try:
            return reply.status, json.loads(text)
        except ValueError:
            return reply.status, text
    except Exception as e:  # noqa: BLE001 - a dead server shows up here
        return None, repr(e)
    finally:
        conn.close()


def alive():
    conn = http.client.HTTPConnection(HOST, PORT, timeout=30)
    try:
        conn.request("GET", "/health")
        return conn.getresponse().status == 200
    except Exception:  # noqa: BLE001
        return False
    finally:
        conn.close()


def model_id():
    conn = http.client.HTTPConnection(HOST, PORT, timeout=30)
    try:
        conn.request("GET", "/v1/models", headers={"Authorization": "Bearer " + KEY})
        return json.loads(conn.getresponse().read())["data"][0]["id"]
    finally:
        conn.close()


MODEL = model_id()


def chain(count, wrap):
    defs = {}
    for i in range(count):
        nxt = {"$ref": f"#/$defs/d{i + 1}"}
        defs[f"d{i}"] = {"type": "array", "items": nxt} if wrap else nxt
    defs[f"d{count}"] = {"type": "integer"}
    return {"$defs": defs, "$ref": "#/$defs/d0"}


MESSAGES = [{"role": "user", "content": "hi"}]
NESTED = "(" * 20000 + "a" + ")" * 20000
# Each hostile schema, and what the 400's message must say.
SCHEMAS = {
    "F1 20,000 nested groups": ({"type": "string", "pattern": NESTED}, "nested deeper than 64"),
    "F1 variant: 20,000 nested (?: groups": (
        {"type": "string", "pattern": "(?:" * 20000 + "a" + ")" * 20000}, "nested deeper than 64"),
    "F3 30,000 chained $defs": (chain(30000, False), "deeper than 64 levels"),
    "F3 10,000 $defs of arrays": (chain(10000, True), "deeper than 64 levels"),
    "F4 ((.{0,100}){0,100}){0,100}": (
        {"type": "string", "pattern": "^((.{0,100}){0,100}){0,100}$"}, "the limit is 10000"),
    "F4 variant: a{0,1000} nested four deep": (
        {"type": "string", "pattern": "^(((a{0,1000}){0,10}){0,10}){0,10}$"}, "the limit is 10000"),
}


def routes(schema):
    """(route name, path, body) for every way a request can carry `schema`."""
    fmt = {"type": "json_schema", "json_schema": {"name": "x", "schema": schema}}
    # In a tool, $refs resolve against the parameters: the $defs move up there.
    inner = {k: v for k, v in schema.items() if k != "$defs"}
    parameters = {"type": "object", "properties": {"p": inner}, "required": ["p"]}
    if "$defs" in schema:
        parameters["$defs"] = schema["$defs"]
    tool = [{"type": "function", "function": {"name": "f", "parameters": parameters}}]
    return [
        ("/tokenize", "/tokenize", {"messages": MESSAGES, "response_format": fmt}),
        ("chat", "/v1/chat/completions", {"messages": MESSAGES, "max_tokens": 4,
                                          "response_format": fmt}),
        ("completions", "/v1/completions", {"prompt": "hi", "max_tokens": 4,
                                            "response_format": fmt}),
        ("messages output_config", "/v1/messages",
         {"model": MODEL, "max_tokens": 4, "messages": MESSAGES,
          "output_config": {"format": {"type": "json_schema", "schema": schema}}}),
        ("forced tool parameters", "/v1/chat/completions",
         {"messages": MESSAGES, "max_tokens": 4, "tools": tool, "tool_choice": "required"}),
    ]


def error_message(reply):
    if not isinstance(reply, dict):
        return str(reply)
    error = reply.get("error", {})
    return error.get("message", "") if isinstance(error, dict) else str(error)


for case, (schema, why) in SCHEMAS.items():
    for route, path, body in routes(schema):
        status, reply = post(path, body)
        message = error_message(reply)
        check(f"{case} via {route}: 400 naming the limit (got {status} {message[:90]!r})",
              status == 400 and why in message)
        check("... the server is alive", alive())

# F2: a tool whose parameters refer to themselves, forced three ways: compiled as recursion.
SELF = {"type": "object", "properties": {"c": {"$ref": "#"}}}
TOOLS = [{"type": "function", "function": {"name": "f", "parameters": SELF}}]
for name, path, body in [
        ("tool_choice required", "/v1/chat/completions",
         {"messages": MESSAGES, "max_tokens": 8, "tools": TOOLS, "tool_choice": "required"}),
        ("a named function", "/v1/chat/completions",
         {"messages": MESSAGES, "max_tokens": 8, "tools": TOOLS,
          "tool_choice": {"type": "function", "function": {"name": "f"}}}),
        ("Anthropic tool_choice any", "/v1/messages",
         {"model": MODEL, "max_tokens": 8, "messages": MESSAGES,
          "tools": [{"name": "f", "input_schema": SELF}], "tool_choice": {"type": "any"}})]:
    status, reply = post(path, body)
    check(f"F2 self-referring tool parameters, {name}: 200 (got {status})", status == 200)
    check("... the server is alive", alive())

# Expensive grammars that pass the compile-time bounds run under the per-step mask budget: a
# plain chat sent alongside them finishes while they run.
EXPENSIVE = [{"type": "string", "pattern": "^" + ".{0,100}" * 150 + "$"},
             {"type": "string", "pattern": "^((.{0,100}){0,100})$"},
             {"type": "string", "pattern": "^((a|aa|aaa){0,1000}b){0,10}$"}]
results = {}


def run_expensive(i, schema):
    fmt = {"type": "json_schema", "json_schema": {"name": "x", "schema": schema}}
    results[i] = post("/v1/chat/completions", {"messages": MESSAGES, "max_tokens": 200,
                                                "temperature": 1.0, "response_format": fmt},
                      timeout=600)


threads = [threading.Thread(target=run_expensive, args=(i, s)) for i, s in enumerate(EXPENSIVE)]
for t in threads:
    t.start()
time.sleep(0.5)
start = time.monotonic()
status, reply = post("/v1/chat/completions", {"messages": MESSAGES, "max_tokens": 4,
                                              "temperature": 0}, timeout=60)
elapsed = time.monotonic() - start
check(f"a plain chat alongside expensive grammars: 200 (got {status}, {elapsed:.2f} s)",
      status == 200)
for t in threads:
    t.join()
for i, (status, reply) in sorted(results.items()):
    message = error_message(reply)
    check(f"expensive grammar {i}: 200 or 400 (got {status} {message[:100]!r})",
          status in (200, 400))
check("the server is alive at the end", alive())
sys.exit(1 if failures else 0)
