// Drives a running `minimax serve` with the official OpenAI Node client and checks what users of
// the API rely on: streaming and non-streaming agree (reasoning, content, tool calls), a prompt
// whose system message spells the reasoning markers in prose splits the same both ways, usage and
// logprobs are present and sane, 16 concurrent greedy streams equal 16 sequential runs, and a
// client that disconnects mid-stream gets its KV blocks freed (seen in /metrics).
//
//   node client_test.mjs --url http://127.0.0.1:PORT --key KEY --model NAME --markers m3|m2
//                        [--trained]   (also check the answers of the bundled trained model)
import OpenAI from "openai";
import { args, check, finish } from "./test_support.mjs";

const client = new OpenAI({ baseURL: `${args.url}/v1`, apiKey: args.key, maxRetries: 0 });
const model = args.model;
const [open, close] = args.markers === "m2" ? ["<think>", "</think>"] : ["<mm:think>", "</mm:think>"];

async function streamChat(body) {
  const stream = await client.chat.completions.create({ ...body, stream: true, stream_options: { include_usage: true } });
  const out = { reasoning: "", content: "", tools: {}, finish: null, usage: null, chunks: 0, roleFirst: null };
  for await (const chunk of stream) {
    out.chunks++;
    if (chunk.usage) out.usage = chunk.usage;
    for (const choice of chunk.choices) {
      const d = choice.delta ?? {};
      if (out.roleFirst === null) out.roleFirst = d.role === "assistant";
      if (d.reasoning_content) out.reasoning += d.reasoning_content;
      if (d.content) out.content += d.content;
      for (const tc of d.tool_calls ?? []) {
        const t = (out.tools[tc.index] ??= { id: "", name: "", arguments: "" });
        if (tc.id) t.id = tc.id;
        if (tc.function?.name) t.name += tc.function.name;
        if (tc.function?.arguments) t.arguments += tc.function.arguments;
      }
      if (choice.finish_reason) out.finish = choice.finish_reason;
    }
  }
  return out;
}

async function wholeChat(body) {
  const r = await client.chat.completions.create(body);
  const m = r.choices[0].message;
  return { reasoning: m.reasoning_content ?? "", content: m.content ?? "", tools: m.tool_calls ?? [],
           finish: r.choices[0].finish_reason, usage: r.usage, raw: r };
}

async function sameBothWays(what, body) {
  const s = await streamChat(body);
  const w = await wholeChat(body);
  check(s.roleFirst === true, `${what}: first delta carries role assistant`);
  check(s.reasoning === w.reasoning && s.content === w.content,
        `${what}: stream and non-stream split reasoning/content identically`,
        JSON.stringify({ stream: [s.reasoning, s.content], whole: [w.reasoning, w.content] }));
  check(s.finish === w.finish, `${what}: same finish_reason`, `${s.finish} vs ${w.finish}`);
  check(s.usage && s.usage.completion_tokens === w.usage.completion_tokens &&
        s.usage.total_tokens === s.usage.prompt_tokens + s.usage.completion_tokens,
        `${what}: usage in the final chunk matches`, JSON.stringify([s.usage, w.usage]));
  const streamedTools = Object.values(s.tools);
  check(streamedTools.length === w.tools.length &&
        streamedTools.every((t, i) => t.name === w.tools[i].function.name &&
                                      t.arguments === w.tools[i].function.arguments),
        `${what}: streamed tool calls concatenate to the non-streamed ones`,
        JSON.stringify([streamedTools, w.tools]));
  return w;
}

// The value of a /metrics sample; with `label` (`key="value"`, the sample's last label), that
// labelled series of it.
async function metric(name, label = "") {
  const text = await (await fetch(`${args.url}/metrics`)).text();
  const line = text.split("\n").find((l) => (l.startsWith(name + "{") || l.startsWith(name + " ")) &&
                                            (label === "" || l.includes(`${label}}`)));
  return line === undefined ? NaN : Number(line.split(" ").pop());
}

const greedy = { model, temperature: 0, max_tokens: 48 };

// 1. Models.
const models = await client.models.list();
check(models.data.some((m) => m.id === model), "/v1/models lists the served model");
const card = await client.models.retrieve(model);
check(card.id === model && card.object === "model", "/v1/models/{id} returns the served model's card");
try {
  await client.models.retrieve("no-such-model");
  check(false, "/v1/models/{id} for an unknown id is a 404");
} catch (e) {
  check(e.status === 404 && e.error?.param === "model", "/v1/models/{id} for an unknown id is a 404",
        `${e.status} ${JSON.stringify(e.error)}`);
}

// 2. Streaming chat with reasoning; the prose-markers system message.
await sameBothWays("chat", { ...greedy, messages: [{ role: "user", content: "What is 12 + 7?" }] });
await sameBothWays("chat with markers in the system prose", {
  ...greedy,
  messages: [
    { role: "system", content: `Think inside ${open} and ${close} before answering. Never print ${close} twice.` },
    { role: "user", content: "What is 3 + 4?" }],
});
await sameBothWays("chat, thinking disabled", {
  ...greedy, messages: [{ role: "user", content: "Repeat after me: red blue green" }],
  chat_template_kwargs: { thinking_mode: "disabled" },
});

// 3. Tools: required and named tool_choice make a call (constrained decoding of the model's own
// tool-call markup) whose arguments satisfy the tool's schema, streamed or not.
const parseJson = (text) => { try { return JSON.parse(text); } catch { return undefined; } };
const tools = [{ type: "function", function: { name: "get_weather", description: "Current weather",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } }];
const toolBody = { ...greedy, max_tokens: 64, tools, messages: [{ role: "user", content: "What is the weather in Paris?" }] };
const auto = await sameBothWays("tool request (auto)", toolBody);
const named = await sameBothWays("tool request (named tool_choice)",
  { ...toolBody, tool_choice: { type: "function", function: { name: "get_weather" } } });
check(named.finish === "tool_calls" && named.tools.length === 1 &&
      named.tools[0].function.name === "get_weather" && named.content === "",
      "named tool_choice: exactly one call of the tool, no content", JSON.stringify(named.raw.choices[0]));
check(typeof parseJson(named.tools[0]?.function.arguments)?.city === "string",
      "named tool_choice: arguments hold the required string city", named.tools[0]?.function.arguments);
// A schema the model would not follow by itself: integer, enum and boolean values, and a tool
// name with a double quote (written name='...' in the markup).
const typedTools = [
  { type: "function", function: { name: "get_price", parameters: { type: "object", properties: {
      item: { type: "string", maxLength: 12 }, qty: { type: "integer", minimum: 1 },
      currency: { enum: ["EUR", "USD"] }, gift: { type: "boolean" } },
    required: ["item", "qty", "currency"] } } },
  { type: "function", function: { name: 'say"hi', parameters: { type: "object",
      properties: { text: { type: "string", maxLength: 8 } }, required: ["text"] } } }];
const required = await sameBothWays("tool request (required, typed schema)", { ...greedy, max_tokens: 160,
  tools: typedTools, tool_choice: "required", messages: [{ role: "user", content: "Price of 3 apples?" }] });
check(required.finish === "tool_calls" && required.tools.length >= 1,
      "required tool_choice: at least one call", JSON.stringify(required.raw.choices[0]));
for (const call of required.tools) {
  const a = parseJson(call.function.arguments);
  const ok = call.function.name === "get_price"
    ? typeof a?.item === "string" && a.item.length <= 12 && Number.isInteger(a.qty) && a.qty >= 1 &&
      ["EUR", "USD"].includes(a.currency) && (a.gift === undefined || typeof a.gift === "boolean")
    : call.function.name === 'say"hi' && typeof a?.text === "string" && a.text.length <= 8;
  check(ok, `required tool_choice: ${call.function.name} arguments satisfy its schema`, call.function.arguments);
}

// 3b. Structured outputs: json_schema output parses and validates; json_object is an object.
const personSchema = { type: "object", properties: {
    name: { type: "string", maxLength: 10 }, age: { type: "integer", minimum: 0 },
    role: { enum: ["admin", "user"] }, tags: { type: "array", items: { type: "string", maxLength: 6 }, maxItems: 2 },
    nick: { anyOf: [{ type: "string", pattern: "^[a-z]{2,4}$" }, { type: "null" }] } },
  required: ["name", "age", "role", "tags", "nick"], additionalProperties: false };
const structured = await sameBothWays("response_format json_schema", { ...greedy, max_tokens: 200,
  messages: [{ role: "user", content: "Describe a user as JSON." }],
  response_format: { type: "json_schema", json_schema: { name: "person", strict: true, schema: personSchema } } });
const person = parseJson(structured.content);
check(structured.finish === "stop" && person !== undefined && typeof person.name === "string" &&
      person.name.length <= 10 && Number.isInteger(person.age) && person.age >= 0 &&
      ["admin", "user"].includes(person.role) && Array.isArray(person.tags) && person.tags.length <= 2 &&
      (person.nick === null || /^[a-z]{2,4}$/.test(person.nick)) && Object.keys(person).length === 5,
      "response_format json_schema: the content validates against the schema", structured.content);
// With thinking enabled the reasoning stays free text; the constraint starts after it closes.
const sumSchema = { type: "object", properties: { answer: { type: "integer" }, unit: { enum: ["none", "apples"] } },
  required: ["answer", "unit"], additionalProperties: false };
const thought = await sameBothWays("response_format after reasoning", { ...greedy, max_tokens: 200,
  messages: [{ role: "user", content: "What is 347 + 285?" }], chat_template_kwargs: { thinking_mode: "enabled" },
  response_format: { type: "json_schema", json_schema: { name: "sum", schema: sumSchema } } });
const sum = parseJson(thought.content);
check(thought.finish === "stop" && thought.reasoning.length > 0 && Number.isInteger(sum?.answer) &&
      ["none", "apples"].includes(sum?.unit) && Object.keys(sum).length === 2,
      "response_format after reasoning: free reasoning, then valid JSON", JSON.stringify([thought.reasoning, thought.content]));
const anyObject = await wholeChat({ ...greedy, max_tokens: 64, messages: [{ role: "user", content: "JSON please" }],
  response_format: { type: "json_object" } });
check(anyObject.content.startsWith("{") &&
      (anyObject.finish === "length" || typeof parseJson(anyObject.content) === "object"),
      "response_format json_object: an object (or its prefix when max_tokens cut it)", anyObject.content);
try {
  await client.chat.completions.create({ ...greedy, messages: [{ role: "user", content: "hi" }],
    response_format: { type: "json_schema", json_schema: { name: "x", schema: {
      type: "object", properties: { age: { type: "integer", maximum: 3 } } } } } });
  check(false, "an unsupported schema keyword is refused");
} catch (e) {
  check(e.status === 400 && e.param === "response_format.json_schema.schema.properties.age.maximum",
        "an unsupported schema keyword → 400 naming its path", `${e.status} ${e.param} ${e.message}`);
}
if (args.trained) {
  // The bundled model's tool task exactly as docs/tiny_model_tasks.md §5 specifies it (both
  // tools, their descriptions and key order): what it was trained on.
  const specTools = [
    { type: "function", function: { name: "get_weather", description: "Get the current weather in a city.",
      parameters: { type: "object", properties: { city: { type: "string", description: "City name" } }, required: ["city"] } } },
    { type: "function", function: { name: "get_price", description: "Get the price of an item in dollars.",
      parameters: { type: "object", properties: { item: { type: "string", description: "Item name" } }, required: ["item"] } } }];
  const specBody = { ...greedy, max_tokens: 64, tools: specTools,
    messages: [{ role: "user", content: "What is the weather in Paris?" }] };
  const first = await sameBothWays("trained: tool request", specBody);
  check(first.finish === "tool_calls" && first.tools.length === 1 &&
        first.tools[0].function.name === "get_weather",
        "trained: the model calls get_weather", JSON.stringify(first.raw.choices[0]));
  if (first.tools.length === 1) {
    const call = first.tools[0];
    check(JSON.parse(call.function.arguments).city === "Paris", "trained: with city Paris", call.function.arguments);
    const answer = await sameBothWays("trained: tool result round trip", {
      ...specBody, messages: [...specBody.messages,
        { role: "assistant", content: null, tool_calls: [call] },
        { role: "tool", tool_call_id: call.id, content: '{"city": "Paris", "temperature": 21, "condition": "sunny"}' }],
    });
    check(answer.finish === "stop" && answer.content === "It is sunny and 21 degrees in Paris.",
          "trained: the answer uses the tool result", answer.content);
  }
  const sum = await sameBothWays("trained: arithmetic",
    { ...greedy, messages: [{ role: "user", content: "What is 347 + 285?" }] });
  check(sum.content === "632" && sum.reasoning === "7+5+0=12, 4+8+1=13, 3+2+1=6.",
        "trained: 347 + 285 = 632, with the column reasoning", JSON.stringify([sum.reasoning, sum.content]));
  // Past its end of message (ignore_eos) the model goes on, and generates "[e~[" again: a special
  // token, spelled out only with skip_special_tokens false (vLLM's default is true).
  const pastEnd = { ...greedy, ignore_eos: true, messages: [{ role: "user", content: "What is 347 + 285?" }] };
  const skipped = await sameBothWays("trained: ignore_eos", pastEnd);
  const spelled = await client.chat.completions.create({ ...pastEnd, skip_special_tokens: false });
  const spelledContent = spelled.choices[0].message.content ?? "";
  check(spelledContent.startsWith("632[e~[") && !skipped.content.includes("[e~[") &&
        skipped.content === spelledContent.split("[e~[").join(""),
        "trained: skip_special_tokens hides the end-of-message token, false spells it",
        JSON.stringify([skipped.content, spelledContent]));
}

// 4. Completions with logprobs and usage.
const comp = await client.completions.create({ model, prompt: "red blue green", max_tokens: 8, temperature: 0, logprobs: 3 });
const lp = comp.choices[0].logprobs;
check(lp && lp.tokens.length === comp.usage.completion_tokens && lp.token_logprobs.every((x) => x <= 0 && Number.isFinite(x)),
      "completions: one finite logprob <= 0 per token", JSON.stringify(lp));
// (Positions whose top tokens share a spelling, e.g. two partial UTF-8 characters shown as
// U+FFFD, have fewer keys in the legacy {text: logprob} map; they are skipped.)
check(lp && lp.top_logprobs.every((top, i) => Object.keys(top).length < 3 ||
      Math.max(...Object.values(top)) <= lp.token_logprobs[i] + 1e-5),
      "completions: greedy token is the most probable of its top list", JSON.stringify(lp?.top_logprobs));
const chatLp = await client.chat.completions.create({ ...greedy, max_tokens: 6, logprobs: true, top_logprobs: 2,
  messages: [{ role: "user", content: "hello" }] });
const content = chatLp.choices[0].logprobs?.content ?? [];
check(content.length === chatLp.usage.completion_tokens &&
      content.every((t) => t.top_logprobs.length === 2 && t.top_logprobs[0].logprob >= t.top_logprobs[1].logprob &&
                           Math.abs(t.top_logprobs[0].logprob - t.logprob) < 1e-5),
      "chat logprobs: one entry per token, top-2 sorted, greedy token first", JSON.stringify(content.slice(0, 2)));

// 5. 16 concurrent greedy streams equal 16 sequential runs.
const prompts = Array.from({ length: 16 }, (_, i) => ({ ...greedy, max_tokens: 24,
  messages: [{ role: "user", content: `What is ${i * 7} + ${i + 3}? ` + "word ".repeat(i) }] }));
const together = await Promise.all(prompts.map((p) => streamChat(p)));
const alone = [];
for (const p of prompts) alone.push(await streamChat(p));
const same = together.every((t, i) => t.reasoning === alone[i].reasoning && t.content === alone[i].content);
check(same, "16 concurrent greedy streams equal 16 sequential runs",
      JSON.stringify(together.map((t, i) => [t.content, alone[i].content]).filter(([a, b]) => a !== b).slice(0, 2)));

// 6. A client that disconnects mid-stream frees its KV blocks.
const controller = new AbortController();
const long = await client.chat.completions.create(
  { model, temperature: 1, max_tokens: 1000, ignore_eos: true, stream: true, messages: [{ role: "user", content: "Tell a long story." }] },
  { signal: controller.signal });
let seen = 0, usedDuring = NaN;
try {
  for await (const _ of long) {
    if (++seen === 4) { usedDuring = await metric("minimax:kv_blocks_used"); controller.abort(); }
  }
} catch (e) { /* aborted */ }
let usedAfter = NaN, running = NaN;
for (let i = 0; i < 100; i++) {
  usedAfter = await metric("minimax:kv_blocks_used");
  running = await metric("vllm:num_requests_running");
  if (usedAfter === 0 && running === 0) break;
  await new Promise((r) => setTimeout(r, 100));
}
check(usedDuring > 0 && usedAfter === 0 && running === 0, "disconnect mid-stream frees the request's KV blocks",
      `used during ${usedDuring}, after ${usedAfter}, running ${running}`);

// 6b. A client that leaves before its non-streamed reply: the request is cancelled (finished
// "abort" in /metrics, its KV blocks freed), not generated to the end.
const abortsBefore = await metric("vllm:request_success_total", 'finished_reason="abort"');
const leaving = new AbortController();
const pending = client.chat.completions.create(
  { model, temperature: 1, max_tokens: 1800, ignore_eos: true, messages: [{ role: "user", content: "Tell a long story." }] },
  { signal: leaving.signal, maxRetries: 0 }).catch(() => null);
let runningBefore = NaN;
for (let i = 0; i < 100 && !(runningBefore > 0); i++) {
  await new Promise((r) => setTimeout(r, 20));
  runningBefore = await metric("vllm:num_requests_running");
}
leaving.abort();
await pending;
let abortsAfter = NaN, runningAfter = NaN, usedAfterLeave = NaN;
for (let i = 0; i < 100; i++) {
  abortsAfter = await metric("vllm:request_success_total", 'finished_reason="abort"');
  runningAfter = await metric("vllm:num_requests_running");
  usedAfterLeave = await metric("minimax:kv_blocks_used");
  if (abortsAfter === abortsBefore + 1 && runningAfter === 0 && usedAfterLeave === 0) break;
  await new Promise((r) => setTimeout(r, 50));
}
check(runningBefore === 1 && abortsAfter === abortsBefore + 1 && runningAfter === 0 && usedAfterLeave === 0,
      "a client that leaves a non-streamed request has it cancelled",
      `running before ${runningBefore}, aborts ${abortsBefore} -> ${abortsAfter}, running after ${runningAfter}, blocks ${usedAfterLeave}`);

// 7. Errors through the client: unknown model → 404, bad value → 400 naming the field.
try { await client.chat.completions.create({ ...greedy, model: "nope", messages: [{ role: "user", content: "x" }] });
      check(false, "unknown model is refused"); }
catch (e) { check(e.status === 404, "unknown model → 404", `${e.status}`); }
try { await client.chat.completions.create({ ...greedy, temperature: 9, messages: [{ role: "user", content: "x" }] });
      check(false, "temperature 9 is refused"); }
catch (e) { check(e.status === 400 && String(e.error?.param ?? e.param) === "temperature", "temperature 9 → 400 param temperature", `${e.status} ${JSON.stringify(e.error)}`); }

finish("all client checks passed", (n) => `${n} client check(s) failed`);
