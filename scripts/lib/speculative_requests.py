#!/usr/bin/env python3
"""Issue 37's serve check: a server with --speculative-config answers exactly as a plain one.

Usage: speculative_requests.py HOST PLAIN SPEC_PORT [--time]
       speculative_requests.py HOST PLAIN_PORT --save FILE

PLAIN is the plain server's port, or a FILE of its answers saved with --save (for servers that
cannot run at once, such as two MPI jobs).

Greedy chat completions (copy tasks, arithmetic, needles, a tool call) are sent to both servers,
one at a time and then eight at a time (drafting sequences beside plain ones), streamed and not;
the texts, reasoning and tool calls must be equal. The speculating server's /metrics must show
accepted draft tokens. With --time, also prints the wall time of a batch of copy tasks on each
server (for the closing note's number; timings are never asserted). Standard library only.
"""
import http.client
import json
import re
import sys
import time
from concurrent.futures import ThreadPoolExecutor

HOST, PLAIN, SPEC = sys.argv[1], sys.argv[2], sys.argv[3]
TIME = "--time" in sys.argv[4:]

WORDS = ("the small green house stands near old river and every morning bird sings over quiet "
         "field while soft wind moves through tall grass under bright sky children walk along "
         "road slowly light").split()
COPIES = [" ".join(WORDS[(7 * i + 3 * j) % 32] for j in range(3 + i % 10)) for i in range(12)]
QUESTIONS = ([f"Repeat exactly: {text}" for text in COPIES] +
             ["What is 17 + 25?", "What is 300 - 123?", "What is the weather in Paris?",
              "The code for kettle is 4411. The river is quiet. What is the code for kettle?"])


def request(port, path, body=None):
    conn = http.client.HTTPConnection(HOST, port, timeout=300)
    if body is None:
        conn.request("GET", path)
    else:
        conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    response = conn.getresponse()
    data = response.read().decode()
    conn.close()
    if response.status != 200:
        raise RuntimeError(f"{path}: {response.status} {data[:300]}")
    return data


def model(port):
    return json.loads(request(port, "/v1/models"))["data"][0]["id"]


def chat(port, question, stream=False):
    body = {"model": model(port), "messages": [{"role": "user", "content": question}],
            "max_tokens": 64, "temperature": 0, "stream": stream}
    if question.endswith("Paris?"):
        body["tools"] = [{"type": "function", "function": {
            "name": "get_weather", "parameters": {"type": "object", "properties": {
                "city": {"type": "string"}}, "required": ["city"]}}}]
    data = request(port, "/v1/chat/completions", body)
    if not stream:
        message = json.loads(data)["choices"][0]["message"]
        calls = message.get("tool_calls") or []
        names = [c["function"]["name"] for c in calls]
        args = "".join(c["function"]["arguments"] for c in calls)
        return (message.get("content") or "", message.get("reasoning_content") or "",
                json.dumps([names, args]) if calls else "null")
    content, reasoning, tools = "", "", []
    for line in data.splitlines():
        if not line.startswith("data: ") or line == "data: [DONE]":
            continue
        delta = json.loads(line[6:])["choices"][0]["delta"] if json.loads(line[6:])["choices"] else {}
        content += delta.get("content") or ""
        reasoning += delta.get("reasoning_content") or ""
        tools.extend(delta.get("tool_calls") or [])
    # Streamed tool calls arrive in pieces; their names and arguments are what must agree.
    calls = [(t.get("function") or {}).get("name") or "" for t in tools]
    args = "".join((t.get("function") or {}).get("arguments") or "" for t in tools)
    return content, reasoning, json.dumps([calls, args]) if tools else "null"


def answers(port, concurrent, stream):
    if not concurrent:
        return [chat(port, q, stream) for q in QUESTIONS]
    with ThreadPoolExecutor(8) as pool:
        return list(pool.map(lambda q: chat(port, q, stream), QUESTIONS))


def metric(port, name):
    text = request(port, "/metrics")
    m = re.search(rf"^{re.escape(name)}{{[^}}]*}} ([0-9.e+]+)$", text, re.M)
    return float(m.group(1)) if m else None


def main():
    fails = 0
    if SPEC == "--save":
        with open(sys.argv[4], "w") as f:
            json.dump(answers(int(PLAIN), False, False), f)
        return
    if PLAIN.isdigit():
        want = answers(int(PLAIN), False, False)
    else:
        with open(PLAIN) as f:
            want = [tuple(a) for a in json.load(f)]
    spec_port = int(SPEC)
    copies_right = sum(a[0].strip() == t for a, t in zip(want, COPIES))
    print(f"ok plain server: {copies_right} of {len(COPIES)} copy tasks exact")
    for concurrent in (False, True):
        for stream in (False, True):
            got = answers(spec_port, concurrent, stream)
            label = f"{'8 at a time' if concurrent else 'one at a time'}, " \
                    f"{'streamed' if stream else 'not streamed'}"
            bad = [i for i, (a, b) in enumerate(zip(want, got)) if a != b]
            if bad:
                fails += 1
                for i in bad[:3]:
                    print(f"FAIL {label}: {QUESTIONS[i]!r}: plain {want[i]!r} speculative {got[i]!r}")
            else:
                print(f"ok {label}: {len(got)} answers equal the plain server's")
    accepted = metric(spec_port, "vllm:spec_decode_num_accepted_tokens_total")
    drafts = metric(spec_port, "vllm:spec_decode_num_drafts_total")
    if not accepted or not drafts:
        fails += 1
        print(f"FAIL metrics: drafts {drafts}, accepted tokens {accepted}")
    else:
        print(f"ok metrics: {drafts:.0f} verify steps with drafts, {accepted:.0f} tokens accepted")
    if TIME:
        for name, port in (("plain", int(PLAIN)), ("speculative", spec_port)):
            best = 1e9
            for _ in range(3):
                start = time.perf_counter()
                for q in QUESTIONS[:len(COPIES)]:
                    chat(port, q)
                best = min(best, time.perf_counter() - start)
            print(f"time {name}: {best:.3f} s for {len(COPIES)} copy tasks (best of 3)")
    sys.exit(1 if fails else 0)


main()
