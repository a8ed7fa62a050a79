#!/usr/bin/env python3
"""Issue 35's serve check: the same greedy requests give the same text and logprobs under any load.

Usage: batch_invariant_requests.py HOST PORT

Sixteen greedy chat completions (with top-5 logprobs) are sent one at a time, then eight at a time,
then one at a time again once their prefixes are in the prefix cache; an Anthropic tool-result
round trip (the weather answer) is sent before, between and after them. Every pass must return the
same texts and the same logprob values as the first. Prints "ok ..." lines; exits 1 on a mismatch.
Standard library only.
"""
import http.client
import json
import sys
from concurrent.futures import ThreadPoolExecutor

HOST, PORT = sys.argv[1], int(sys.argv[2])
# A shared system prompt long enough to be prefilled in several calls and then cached.
SYSTEM = ("You are a careful assistant. Answer briefly and exactly. " * 12).strip()
QUESTIONS = [
    "What is 17 + 25?", "What is 300 - 123?", "What is 12 * 11?", "What is 81 / 9?",
    "Repeat exactly: the quick brown fox.", "Repeat exactly: alpha beta gamma delta.",
    "What is the weather in Paris?", "What is the weather in Tokyo?",
    "What is 1000 + 2345?", "Repeat exactly: one two three four five six.",
    "What is 45 - 67?", "What is 7 * 8 * 2?", "What is the weather in Lima?",
    "Repeat exactly: red green blue.", "What is 99 + 1?", "What is 64 / 4?",
]


def post(path, body, headers=None):
    conn = http.client.HTTPConnection(HOST, PORT, timeout=300)
    conn.request("POST", path, json.dumps(body),
                 {"Content-Type": "application/json", **(headers or {})})
    response = conn.getresponse()
    data = response.read()
    conn.close()
    if response.status != 200:
        raise RuntimeError(f"{path}: {response.status} {data[:300]!r}")
    return json.loads(data)


def served_model():
    conn = http.client.HTTPConnection(HOST, PORT, timeout=30)
    conn.request("GET", "/v1/models")
    models = json.loads(conn.getresponse().read())
    conn.close()
    return models["data"][0]["id"]


MODEL = served_model()


def chat(question):
    out = post("/v1/chat/completions", {
        "model": MODEL, "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": question}],
        "max_tokens": 24, "temperature": 0, "logprobs": True, "top_logprobs": 5})
    choice = out["choices"][0]
    content = choice["message"].get("content") or ""
    reasoning = choice["message"].get("reasoning_content") or ""
    tool_calls = json.dumps(choice["message"].get("tool_calls"), sort_keys=True)
    logprobs = [(t["token"], t["logprob"], [(a["token"], a["logprob"]) for a in t["top_logprobs"]])
                for t in (choice.get("logprobs") or {}).get("content") or []]
    return (reasoning, content, tool_calls, logprobs)


def weather_round_trip():
    tools = [{"name": "get_weather", "description": "Get the current weather in a city.",
              "input_schema": {"type": "object", "properties": {"city": {"type": "string"}},
                               "required": ["city"]}}]
    out = post("/v1/messages", {
        "model": MODEL, "max_tokens": 40, "temperature": 0, "tools": tools,
        "messages": [
            {"role": "user", "content": "What is the weather in Paris?"},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_1", "name": "get_weather",
                 "input": {"city": "Paris"}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1",
                 "content": '{"city": "Paris", "temperature": 21, "condition": "sunny"}'}]},
        ]}, {"anthropic-version": "2023-06-01"})
    return "".join(b.get("text", "") for b in out["content"] if b["type"] == "text")


failures = 0


def expect_same(name, want, got):
    global failures
    for i, (a, b) in enumerate(zip(want, got)):
        if a != b:
            failures += 1
            print(f"FAIL {name}: request {i} ({QUESTIONS[i]!r}) differs:\n  first {a}\n  now   {b}")
            return
    print(f"ok   {name}: {len(got)} answers identical to the first pass, logprobs included")


weather = [weather_round_trip()]
first = [chat(q) for q in QUESTIONS]
if not any(lp for (_, _, _, lp) in first):
    print("FAIL the answers carry no logprobs")
    sys.exit(1)
weather.append(weather_round_trip())
with ThreadPoolExecutor(8) as pool:
    concurrent = list(pool.map(chat, QUESTIONS))
expect_same("8 at a time", first, concurrent)
weather.append(weather_round_trip())
cached = [chat(q) for q in QUESTIONS]
expect_same("one at a time after the prefix cache holds them", first, cached)
weather.append(weather_round_trip())
if len(set(weather)) != 1:
    failures += 1
    print(f"FAIL the weather round trip changed with the server's history: {weather}")
else:
    print(f"ok   the weather round trip gives the same answer 4 times: {weather[0]!r}")
sys.exit(1 if failures else 0)
