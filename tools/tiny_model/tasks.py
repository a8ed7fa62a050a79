"""Synthetic tasks of the tiny MiniMax-M3 model, exactly as docs/tiny_model_tasks.md specifies them:
each generator returns the OpenAI-style conversation (messages, tools, template kwargs) and the
expected assistant output, and `render` turns it into (text, is_target) segments with the
checkpoint's chat template (Python jinja2 set up like transformers' apply_chat_template)."""

import json
import os

import jinja2
import jinja2.ext
from jinja2.sandbox import ImmutableSandboxedEnvironment

MASK64 = (1 << 64) - 1

FILLER_WORDS = ("the small green house stands near old river and every morning bird sings over quiet "
                "field while soft wind moves through tall grass under bright sky children walk "
                "along road slowly light").split()
KEYS = ("apple banana cherry dragon eagle forest garden harbor island jungle kettle lemon mirror "
        "needle orange pepper").split()
CITIES = "Paris London Tokyo Berlin Madrid Rome Cairo Lima Oslo Delhi Seoul Sydney".split()
CONDITIONS = "sunny cloudy rainy snowy windy".split()
ITEMS = "book lamp chair phone watch ticket bottle pencil guitar camera jacket candle".split()
assert len(FILLER_WORDS) == 32 and len(KEYS) == 16 and len(CITIES) == 12 and len(ITEMS) == 12

TOOLS = [
    {"type": "function", "function": {
        "name": "get_weather", "description": "Get the current weather in a city.",
        "parameters": {"type": "object", "properties": {
            "city": {"type": "string", "description": "City name"}}, "required": ["city"]}}},
    {"type": "function", "function": {
        "name": "get_price", "description": "Get the price of an item in dollars.",
        "parameters": {"type": "object", "properties": {
            "item": {"type": "string", "description": "Item name"}}, "required": ["item"]}}},
]

THINK_BEGIN, THINK_END, EOS = "<mm:think>", "</mm:think>", "[e~["
NS = "]<]minimax[>["


class Rng:
    """splitmix64, as the spec defines it (so C++ gates can reproduce documents exactly)."""

    def __init__(self, seed):
        self.state = seed & MASK64

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)

    def u(self, n):
        return self.next() % n

    def uniform(self, lo, hi):  # inclusive
        return lo + self.u(hi - lo + 1)

    def real(self):  # [0, 1]
        return self.u(1_000_001) / 1_000_000


def filler(rng, sentences):
    out = []
    for _ in range(sentences):
        words = [FILLER_WORDS[rng.u(32)] for _ in range(5 + rng.u(6))]
        words[0] = words[0][0].upper() + words[0][1:]
        out.append(" ".join(words) + ".")
    return out


def digits_from_right(value, n):
    return [(value // 10 ** i) % 10 for i in range(n)]


def arithmetic_reasoning(a, op, b):
    n = max(len(str(a)), len(str(b)))
    da, db = digits_from_right(a, n), digits_from_right(b, n)
    steps, carry = [], 0
    for x, y in zip(da, db):
        if op == "+":
            s = x + y + carry
            steps.append(f"{x}+{y}+{carry}={s}")
            carry = s // 10
        elif x - y - carry >= 0:
            steps.append(f"{x}-{y}-{carry}={x - y - carry}")
            carry = 0
        else:
            steps.append(f"{x + 10}-{y}-{carry}={x + 10 - y - carry}")
            carry = 1
    return ", ".join(steps) + "."


def arithmetic(rng):
    op = "+" if rng.u(2) == 0 else "-"
    a, b = rng.uniform(10, 999), rng.uniform(10, 999)
    if op == "-" and a < b:
        a, b = b, a
    result = a + b if op == "+" else a - b
    return {"task": "arithmetic", "user": f"What is {a} {op} {b}?",
            "reasoning": arithmetic_reasoning(a, op, b), "content": str(result)}


def needle_document(rng, sentences, needles):
    """needles: [(key, value)]; returns (document, depths) with each needle at a drawn depth."""
    text = filler(rng, sentences)
    placed = []
    for j, (key, value) in enumerate(needles):
        depth = rng.real()
        placed.append((round(depth * sentences), j, f"The secret code for {key} is {value}."))
    placed.sort()
    out, k = [], 0
    for i in range(sentences + 1):
        while k < len(placed) and placed[k][0] == i:
            out.append(placed[k][2])
            k += 1
        if i < sentences:
            out.append(text[i])
    return " ".join(out)


def needle(rng, sentences=None):
    if sentences is None:
        sentences = rng.uniform(3, 64)
    count = rng.uniform(1, 3)
    keys = []
    while len(keys) < count:
        key = KEYS[rng.u(16)]
        if key not in keys:
            keys.append(key)
    needles = [(key, rng.uniform(1000, 9999)) for key in keys]
    document = needle_document(rng, sentences, needles)
    key, value = needles[rng.u(count)]
    return {"task": "needle", "sentences": sentences,
            "user": f"{document}\n\nWhat is the secret code for {key}?", "content": str(value)}


def tool(rng):
    if rng.u(2) == 0:
        city, t, cond = CITIES[rng.u(12)], rng.uniform(-10, 40), CONDITIONS[rng.u(5)]
        user, name, args = f"What is the weather in {city}?", "get_weather", {"city": city}
        result = json.dumps({"city": city, "temperature": t, "condition": cond})
        answer = f"It is {cond} and {t} degrees in {city}."
    else:
        item, p = ITEMS[rng.u(12)], rng.uniform(1, 999)
        user, name, args = f"How much does a {item} cost?", "get_price", {"item": item}
        result = json.dumps({"item": item, "price": p})
        answer = f"A {item} costs {p} dollars."
    string_args = rng.u(5) == 0  # OpenAI clients send arguments as a JSON string
    return {"task": "tool", "user": user, "tool_name": name, "arguments": args,
            "string_arguments": string_args, "tool_result": result, "content": answer}


def copy(rng):
    text = " ".join(FILLER_WORDS[rng.u(32)] for _ in range(rng.uniform(3, 12)))
    return {"task": "copy", "user": f"Repeat exactly: {text}", "content": text}


def recall(rng):
    n = rng.uniform(4, 8)
    words = []
    while len(words) < n:
        w = KEYS[rng.u(16)]
        if w not in words:
            words.append(w)
    i = rng.uniform(1, n - 1)
    return {"task": "recall",
            "user": f"Here is a list: {', '.join(words)}. Which word comes right after {words[i - 1]}?",
            "content": words[i]}


GENERATORS = {"arithmetic": arithmetic, "needle": needle, "tool": tool, "copy": copy,
              "recall": recall}
MIXTURE = [("arithmetic", 0.35), ("needle", 0.25), ("tool", 0.15), ("copy", 0.125),
           ("recall", 0.125)]


def sample(seed):
    """One training/eval problem from a seed (task drawn by the mixture, 15% of non-arithmetic
    ones rendered with thinking_mode disabled)."""
    rng = Rng(seed)
    r, acc = rng.real(), 0.0
    task = MIXTURE[-1][0]
    for name, share in MIXTURE:
        acc += share
        if r < acc:
            task = name
            break
    problem = GENERATORS[task](rng)
    problem["disabled"] = task != "arithmetic" and rng.u(100) < 15
    return problem


def tool_call_block(name, args):
    inner = "".join(f"{NS}<{k}>{v}{NS}</{k}>" for k, v in args.items())
    return f"{NS}<tool_call>\n{NS}<invoke name=\"{name}\">{inner}{NS}</invoke>\n{NS}</tool_call>"


def conversation(problem):
    """(messages, tools, kwargs, targets): targets = the generated text of each assistant turn
    (without the EOS)."""
    kwargs = {"thinking_mode": "disabled"} if problem.get("disabled") else {}
    messages = [{"role": "user", "content": problem["user"]}]
    if problem["task"] == "tool":
        args = problem["arguments"]
        call = {"id": "call_0", "type": "function", "function": {
            "name": problem["tool_name"],
            "arguments": json.dumps(args) if problem["string_arguments"] else args}}
        messages.append({"role": "assistant", "content": "", "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": "call_0",
                         "content": problem["tool_result"]})
        messages.append({"role": "assistant", "content": problem["content"]})
        # The call is always generated as XML parameters (the spec's turn 1); how the client
        # sends it back only changes the history of round 2 (history_turn).
        first = THINK_END + tool_call_block(problem["tool_name"], args)
        return messages, TOOLS, kwargs, [first, THINK_END + problem["content"]]
    if problem["task"] == "arithmetic":
        messages.append({"role": "assistant", "content": problem["content"],
                         "reasoning_content": problem["reasoning"]})
        return messages, None, kwargs, [THINK_BEGIN + problem["reasoning"] + THINK_END +
                                        problem["content"]]
    messages.append({"role": "assistant", "content": problem["content"]})
    return messages, None, kwargs, [THINK_END + problem["content"]]


def history_turn(problem, turn, target):
    """(text, trained): how generated turn `turn` appears in the rendered conversation. A tool
    call whose arguments the client sent back as a JSON string is rendered verbatim, which is not
    what the model generates at turn 1 (that is `target`), so that text is history only: no loss."""
    if problem["task"] == "tool" and turn == 0 and problem["string_arguments"]:
        return THINK_END + tool_call_block_string(problem["tool_name"], problem["arguments"]), False
    return target, True


def tool_call_block_string(name, args):
    return f"{NS}<tool_call>\n{NS}<invoke name=\"{name}\">{json.dumps(args)}{NS}</invoke>\n{NS}</tool_call>"


_TEMPLATE = None


def template():
    global _TEMPLATE
    if _TEMPLATE is None:
        root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
        with open(os.path.join(root, "templates", "minimax_m3.jinja"), encoding="utf-8") as f:
            source = f.read()
        env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                            extensions=[jinja2.ext.loopcontrols])
        env.filters["tojson"] = lambda x, ensure_ascii=False, indent=None, separators=None, \
            sort_keys=False: json.dumps(x, ensure_ascii=ensure_ascii, indent=indent,
                                        separators=separators, sort_keys=sort_keys)
        _TEMPLATE = env.from_string(source)
    return _TEMPLATE


def render_prompt(messages, tools, kwargs):
    context = dict(kwargs, messages=messages, add_generation_prompt=True)
    if tools:
        context["tools"] = tools
    return template().render(**context)


def render(problem):
    """[(text, is_target)] covering the whole conversation; target segments are each assistant
    turn's generated text plus EOS (except a tool call sent back as a string: history_turn);
    every boundary sits at a special token, so encoding the segments one by one equals encoding
    the whole text."""
    messages, tools, kwargs, targets = conversation(problem)
    context = dict(kwargs, messages=messages, add_generation_prompt=False)
    if tools:
        context["tools"] = tools
    full = template().render(**context)
    segments, cursor = [], 0
    for turn, target in enumerate(targets):
        text, trained = history_turn(problem, turn, target)
        piece = text + EOS
        at = full.find(piece, cursor)
        if at < 0:
            raise ValueError(f"target {piece!r} not in the rendering of {problem['user']!r}")
        segments.append((full[cursor:at], False))
        segments.append((piece, trained))
        cursor = at + len(piece)
    if full[cursor:]:
        segments.append((full[cursor:], False))
    # The prompt the server renders for the first turn must be exactly what precedes it here.
    first_prompt = render_prompt(messages[:1], tools, kwargs)
    if kwargs.get("thinking_mode") == "disabled":
        assert first_prompt == segments[0][0] + THINK_END, "generation prefix differs"
    else:
        assert first_prompt == segments[0][0], "generation prefix differs"
    return segments
