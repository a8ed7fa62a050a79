// Drives a running `minimax serve` with the official Anthropic Node client (@anthropic-ai/sdk):
// /v1/messages streamed and not (the same content blocks both ways, Anthropic's event sequence on
// the wire), thinking blocks and the thinking budget, count_tokens, stop sequences, the error
// shape through the client's error classes, and a tool round trip (tool_choice any, then the
// tool_result sent back for a final answer).
//
//   node anthropic_client_test.mjs --url http://127.0.0.1:PORT --key KEY --model NAME [--trained]
//   (--trained: the bundled models/minimax-m3-tiny, whose answers are checked too)
import Anthropic from "@anthropic-ai/sdk";
import { args, check, finish, setCheckPrefix } from "./test_support.mjs";

setCheckPrefix("anthropic: ");

const client = new Anthropic({ baseURL: args.url, apiKey: args.key, maxRetries: 0 });
const model = args.model;

// The content with what is random per reply blanked: signatures and tool-use ids.
const unsigned = (content) => content.map((b) => (b.type === "thinking" ? { ...b, signature: "" }
                                                  : b.type === "tool_use" ? { ...b, id: "" } : b));
// Usage as it must repeat: the prefix cache serves more of a prompt the second time, so only the
// prompt's total and the output are compared.
const totals = (u) => [u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens, u.output_tokens];
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

// The raw SSE of a streamed request: [{event, data}], to check what the client library hides
// (pings, the event names).
async function rawEvents(body) {
  const response = await fetch(`${args.url}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": args.key, "anthropic-version": "2023-06-01" },
    body: JSON.stringify({ ...body, stream: true }),
  });
  const text = await response.text();
  return text.split("\n\n").filter((s) => s.trim()).map((block) => {
    const lines = block.split("\n");
    const event = lines.find((l) => l.startsWith("event: "))?.slice(7);
    const data = JSON.parse(lines.find((l) => l.startsWith("data: "))?.slice(6) ?? "null");
    return { event, data };
  });
}

// Anthropic's sequence: message_start, (ping), per block start / deltas / stop with indices
// 0, 1, … in order, one message_delta, message_stop last; event names equal the data's type.
function sequenceProblems(events) {
  const names = events.map((e) => e.event);
  if (names.some((n, i) => n !== events[i].data?.type)) return "an event name differs from its data type";
  if (names[0] !== "message_start" || names.at(-1) !== "message_stop") return `starts ${names[0]}, ends ${names.at(-1)}`;
  if (names.at(-2) !== "message_delta") return "message_delta is not right before message_stop";
  let open = -1, next = 0;
  for (const { event, data } of events.slice(1, -2)) {
    if (event === "ping") continue;
    if (event === "content_block_start") {
      if (open !== -1 || data.index !== next) return `block ${data.index} starts while ${open} is open`;
      open = next++;
    } else if (event === "content_block_delta") {
      if (data.index !== open) return `delta for block ${data.index} while ${open} is open`;
    } else if (event === "content_block_stop") {
      if (data.index !== open) return `stop of block ${data.index} while ${open} is open`;
      open = -1;
    } else return `unexpected event ${event}`;
  }
  return open === -1 ? "" : `block ${open} never stopped`;
}

// Non-streamed, streamed through the client's MessageStream, and raw: all must agree.
async function allWays(what, body) {
  const whole = await client.messages.create(body);
  const streamed = await client.messages.stream(body).finalMessage();
  const raw = await rawEvents(body);
  check(whole.type === "message" && whole.role === "assistant" && whole.model === model &&
        whole.id.startsWith("msg_"), `${what}: a message object`, JSON.stringify(whole));
  check(same(unsigned(whole.content), unsigned(streamed.content)) && whole.stop_reason === streamed.stop_reason &&
        whole.stop_sequence === streamed.stop_sequence && same(totals(whole.usage), totals(streamed.usage)),
        `${what}: streamed and non-streamed give the same message`, JSON.stringify([whole, streamed]));
  const problem = sequenceProblems(raw);
  check(problem === "" && raw.some((e) => e.event === "ping"), `${what}: the stream follows Anthropic's event sequence`,
        problem || raw.map((e) => e.event).join(","));
  for (const block of whole.content.filter((b) => b.type === "thinking"))
    check(block.signature.length > 0, `${what}: a thinking block has a signature`);
  return whole;
}

const text = (message) => message.content.filter((b) => b.type === "text").map((b) => b.text).join("");
const thinking = (message) => message.content.filter((b) => b.type === "thinking").map((b) => b.thinking).join("");
const greedy = { model, max_tokens: 64, temperature: 0 };
const sumMessages = [{ role: "user", content: "What is 347 + 285?" }];

// 1. A plain message, its usage and count_tokens.
const sum = await allWays("arithmetic", { ...greedy, messages: sumMessages });
check(sum.usage.output_tokens > 0 && sum.usage.cache_creation_input_tokens === 0,
      "usage counts the output", JSON.stringify(sum.usage));
const counted = await client.messages.countTokens({ model, messages: sumMessages });
check(counted.input_tokens === sum.usage.input_tokens + sum.usage.cache_read_input_tokens,
      "count_tokens equals the message's input plus cache-read tokens", JSON.stringify([counted, sum.usage]));
const withSystem = await client.messages.countTokens({ model, messages: sumMessages, system: "Answer in digits." });
check(withSystem.input_tokens > counted.input_tokens, "count_tokens counts the system prompt",
      JSON.stringify([withSystem, counted]));
const bearer = new Anthropic({ baseURL: args.url, apiKey: null, authToken: args.key, maxRetries: 0 });
check((await bearer.messages.countTokens({ model, messages: sumMessages })).input_tokens === counted.input_tokens,
      "Authorization: Bearer works as well as x-api-key");
if (args.trained) {
  check(thinking(sum) === "7+5+0=12, 4+8+1=13, 3+2+1=6." && text(sum) === "632" && sum.stop_reason === "end_turn" &&
        sum.content.map((b) => b.type).join(",") === "thinking,text",
        "trained: a thinking block with the column reasoning, then the answer 632", JSON.stringify(sum.content));
}

// 2. Thinking: disabled has no thinking block; a budget ends the reasoning early (the server
// closes it) and the answer follows; greedy, the cut reasoning is the start of the full one.
const off = await allWays("thinking disabled", { ...greedy, messages: sumMessages, thinking: { type: "disabled" } });
check(off.content.every((b) => b.type !== "thinking"), "thinking disabled: no thinking block", JSON.stringify(off.content));
const full = await allWays("thinking enabled", { ...greedy, messages: sumMessages, thinking: { type: "enabled", budget_tokens: 60 } });
const cut = await allWays("thinking budget", { ...greedy, messages: sumMessages, thinking: { type: "enabled", budget_tokens: 3 } });
check(thinking(full).length > thinking(cut).length && thinking(full).startsWith(thinking(cut)) &&
      thinking(cut).length > 0 && cut.content.at(-1).type === "text" && cut.usage.output_tokens > 4,
      "thinking budget: the reasoning stops after 3 tokens, closed by the server, and the answer follows",
      JSON.stringify([full.content, cut.content, cut.usage]));

// 3. max_tokens and stop sequences.
const short = await allWays("max_tokens", { ...greedy, max_tokens: 3, messages: sumMessages });
check(short.stop_reason === "max_tokens" && short.usage.output_tokens === 3, "max_tokens: stop_reason max_tokens",
      JSON.stringify(short));
if (args.trained) {
  const stopped = await allWays("stop sequence", { ...greedy, messages: sumMessages, stop_sequences: ["32"] });
  check(stopped.stop_reason === "stop_sequence" && stopped.stop_sequence === "32" && text(stopped) === "6",
        "stop_sequences: the answer stops before 32", JSON.stringify(stopped));
}

// 4. Errors in Anthropic's shape, through the client's error classes.
async function expectError(what, call, status, type) {
  try {
    await call();
    check(false, `${what} is refused`);
  } catch (e) {
    check(e.status === status && e.error?.type === "error" && e.error?.error?.type === type &&
          typeof e.error?.error?.message === "string",
          `${what} → ${status} ${type}`, `${e.status} ${JSON.stringify(e.error)}`);
  }
}
await expectError("temperature 5", () => client.messages.create({ ...greedy, temperature: 5, messages: sumMessages }),
                  400, "invalid_request_error");
await expectError("an image block", () => client.messages.create({ ...greedy, messages: [{ role: "user", content: [
  { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } }] }] }),
                  400, "invalid_request_error");
await expectError("an unknown model", () => client.messages.create({ ...greedy, model: "claude-x", messages: sumMessages }),
                  404, "not_found_error");
const wrongKey = new Anthropic({ baseURL: args.url, apiKey: "wrong", maxRetries: 0 });
await expectError("a wrong key", () => wrongKey.messages.create({ ...greedy, messages: sumMessages }),
                  401, "authentication_error");
await expectError("count_tokens without messages", () => client.messages.countTokens({ model }),
                  400, "invalid_request_error");

// 5. Tools: tool_choice any makes a call of one of the tools (constrained decoding); the
// tool_result sent back gets the final answer.
const tools = [
  { name: "get_weather", description: "Get the current weather in a city.",
    input_schema: { type: "object", properties: { city: { type: "string", description: "City name" } }, required: ["city"] } },
  { name: "get_price", description: "Get the price of an item in dollars.",
    input_schema: { type: "object", properties: { item: { type: "string", description: "Item name" } }, required: ["item"] } }];
const ask = [{ role: "user", content: "What is the weather in Paris?" }];
const call = await allWays("tool_choice any", { ...greedy, tools, tool_choice: { type: "any" }, messages: ask });
const uses = call.content.filter((b) => b.type === "tool_use");
check(call.stop_reason === "tool_use" && uses.length >= 1 && uses.every((u) => u.id.startsWith("toolu_")) &&
      uses.every((u) => (u.name === "get_weather" && typeof u.input.city === "string") ||
                        (u.name === "get_price" && typeof u.input.item === "string")),
      "tool_choice any: stop_reason tool_use, calls whose input fits their schema", JSON.stringify(call.content));
const named = await allWays("tool_choice tool", { ...greedy, tools, tool_choice: { type: "tool", name: "get_price" }, messages: ask });
check(named.content.filter((b) => b.type === "tool_use").map((b) => b.name).join() === "get_price",
      "tool_choice tool: exactly one call of the named tool", JSON.stringify(named.content));
if (args.trained) {
  check(uses.length === 1 && uses[0].name === "get_weather" && same(uses[0].input, { city: "Paris" }),
        "trained: the call is get_weather for Paris", JSON.stringify(call.content));
  const answer = await allWays("tool result round trip", { ...greedy, tools, messages: [...ask,
    { role: "assistant", content: call.content },
    { role: "user", content: uses.map((u) => ({ type: "tool_result", tool_use_id: u.id,
                                                 content: '{"city": "Paris", "temperature": 21, "condition": "sunny"}' })) }] });
  check(answer.stop_reason === "end_turn" && text(answer) === "It is sunny and 21 degrees in Paris.",
        "trained: the final answer uses the tool result", JSON.stringify(answer.content));
}

finish("all anthropic client checks passed", (n) => `${n} anthropic client check(s) failed`);
