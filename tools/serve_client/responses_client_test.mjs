// Drives a running `minimax serve` with the official OpenAI Node client's Responses API
// (client.responses.create / .stream) and checks what Codex-style clients rely on: the response
// object and its items, a streamed response whose events the client folds into the same output as
// the non-streamed one (sequence numbers in order, created first, completed last), a named
// tool_choice that makes a function_call (constrained decoding), a function call and its output
// sent back as items, a previous_response_id follow-up, 400 / 404 errors naming the field, and a
// stored response retrieved (GET /v1/responses/{id}) and deleted (DELETE).
//
//   node responses_client_test.mjs --url http://127.0.0.1:PORT --key KEY --model NAME
//                                  [--trained]   (also check the answers of the bundled model)
import OpenAI from "openai";
import { args, check, finish, setCheckPrefix } from "./test_support.mjs";

setCheckPrefix("responses: ");

const client = new OpenAI({ baseURL: `${args.url}/v1`, apiKey: args.key, maxRetries: 0 });
const model = args.model;

// The items without their random ids and what the client's stream helper adds (parsed,
// parsed_arguments), to compare two runs.
const withoutIds = (output) => output.map(({ id, call_id, parsed_arguments, content, ...rest }) =>
  content === undefined ? rest : { ...rest, content: content.map(({ parsed, ...part }) => part) });
// What response.output_text is (the stream helper's final response does not add it).
const outputText = (r) => r.output.filter((i) => i.type === "message")
  .flatMap((i) => i.content).filter((c) => c.type === "output_text").map((c) => c.text).join("");
const reasoningText = (r) => r.output.filter((i) => i.type === "reasoning")
  .map((i) => (i.content ?? []).map((c) => c.text).join("")).join("");
const calls = (r) => r.output.filter((i) => i.type === "function_call");

// Streams `body` through the client's ResponseStream helper (it throws on events out of order)
// and returns the final response and what the deltas add up to.
async function streamed(body) {
  const stream = client.responses.stream(body);
  const out = { types: [], sequence: [], text: "", reasoning: "", args: {}, final: null };
  for await (const event of stream) {
    out.types.push(event.type);
    out.sequence.push(event.sequence_number);
    if (event.type === "response.output_text.delta") out.text += event.delta;
    if (event.type === "response.reasoning_text.delta") out.reasoning += event.delta;
    if (event.type === "response.function_call_arguments.delta")
      out.args[event.item_id] = (out.args[event.item_id] ?? "") + event.delta;
  }
  out.final = await stream.finalResponse();
  return out;
}

async function sameBothWays(what, body) {
  const whole = await client.responses.create(body);
  check(whole.object === "response" && whole.id.startsWith("resp_") && whole.model === model &&
        typeof whole.created_at === "number" && ["completed", "incomplete"].includes(whole.status),
        `${what}: a response object`, JSON.stringify(whole).slice(0, 400));
  check(whole.usage && whole.usage.total_tokens === whole.usage.input_tokens + whole.usage.output_tokens &&
        whole.usage.output_tokens > 0, `${what}: usage adds up`, JSON.stringify(whole.usage));
  const s = await streamed({ ...body, stream: undefined });
  const n = s.sequence.length;
  check(s.types[0] === "response.created" && s.types[1] === "response.in_progress" &&
        s.types[n - 1] === "response.completed" && s.sequence.every((x, i) => x === i),
        `${what}: streamed events from response.created to response.completed, numbered 0..${n - 1}`,
        JSON.stringify(s.types));
  check(s.text === whole.output_text && outputText(s.final) === whole.output_text &&
        outputText(whole) === whole.output_text,
        `${what}: streamed output_text deltas equal the non-streamed output_text`,
        JSON.stringify([s.text, outputText(s.final), whole.output_text]));
  check(JSON.stringify(withoutIds(s.final.output)) === JSON.stringify(withoutIds(whole.output)),
        `${what}: the streamed response's items equal the non-streamed ones`,
        JSON.stringify([s.final.output, whole.output]));
  check(s.reasoning === reasoningText(whole), `${what}: reasoning_text deltas equal the reasoning item`);
  for (const call of calls(s.final))
    check(s.args[call.id] === call.arguments, `${what}: function_call_arguments deltas equal the arguments`,
          JSON.stringify([s.args, call]));
  return whole;
}

const greedy = { model, temperature: 0, max_output_tokens: 64 };
const tools = [
  { type: "function", name: "get_weather", description: "Get the current weather in a city.",
    parameters: { type: "object", properties: { city: { type: "string", description: "City name" } }, required: ["city"] } },
  { type: "function", name: "get_price", description: "Get the price of an item in dollars.",
    parameters: { type: "object", properties: { item: { type: "string", description: "Item name" } }, required: ["item"] } }];
const weather = "What is the weather in Paris?";
const result = '{"city": "Paris", "temperature": 21, "condition": "sunny"}';

// 1. Plain, and with instructions; a string input.
const plain = await sameBothWays("plain", { ...greedy, input: "What is 347 + 285?" });
await sameBothWays("instructions and message items", {
  ...greedy, instructions: "Answer briefly.",
  input: [{ role: "user", content: [{ type: "input_text", text: "Repeat after me: red blue green" }] }] });

// 2. A named tool_choice makes exactly one call of that tool whose arguments follow its schema.
const named = await sameBothWays("named tool_choice", {
  ...greedy, tools, tool_choice: { type: "function", name: "get_weather" }, input: weather });
const namedCalls = calls(named);
check(namedCalls.length === 1 && namedCalls[0].name === "get_weather" &&
      namedCalls[0].call_id.startsWith("call_") &&
      typeof JSON.parse(namedCalls[0].arguments).city === "string" &&
      !named.output.some((i) => i.type === "message"),
      "named tool_choice: one get_weather function_call with a string city, no message",
      JSON.stringify(named.output));

// 3. Errors: 400 naming the field, 404 naming previous_response_id.
async function refused(what, body, status, param) {
  try {
    await client.responses.create(body);
    check(false, what, "accepted");
  } catch (e) {
    check(e.status === status && e.error?.param === param, what, `${e.status} ${JSON.stringify(e.error)}`);
  }
}
await refused("temperature out of range → 400 naming it", { ...greedy, input: "hi", temperature: 5 }, 400, "temperature");
await refused("an image part → 400 naming it",
  { ...greedy, input: [{ role: "user", content: [{ type: "input_image", image_url: "x" }] }] }, 400,
  "input[0].content[0].type");
await refused("unknown previous_response_id → 404 naming it",
  { ...greedy, input: "hi", previous_response_id: "resp_nothing" }, 404, "previous_response_id");
const unstored = await client.responses.create({ ...greedy, input: "hi", store: false, max_output_tokens: 4 });
await refused("a response made with store: false cannot be continued",
  { ...greedy, input: "hi", previous_response_id: unstored.id }, 404, "previous_response_id");

// 4. previous_response_id: the stored conversation continues (the bundled model was trained on
// single turns, so only the prompt is checked here; the trained weather round trip below checks
// an answer through it).
const follow = await client.responses.create({ ...greedy, input: "What is 12 + 7?", previous_response_id: plain.id });
check(follow.status === "completed" && follow.previous_response_id === plain.id &&
      follow.usage.input_tokens > plain.usage.input_tokens,
      "previous_response_id: the follow-up's prompt holds the earlier turn",
      JSON.stringify([follow.usage, plain.usage]));

// 5. A stored response comes back whole from GET /v1/responses/{id}; DELETE forgets it, after which
// GET, DELETE and previous_response_id all get 404 in OpenAI's error shape. (The client's create
// adds output_text, which is not part of the response on the wire.)
const wire = ({ output_text, ...rest }) => JSON.stringify(rest);
const retrieved = await client.responses.retrieve(follow.id);
check(wire(retrieved) === wire(follow), "retrieve returns the stored response object as created",
      JSON.stringify([retrieved, follow]).slice(0, 600));
// openai 4.x calls it del(), 5.x delete(); asResponse() gives the body the client throws away.
const remove = (id) => (client.responses.delete ?? client.responses.del).call(client.responses, id);
const deleted = await (await remove(follow.id).asResponse()).json();
check(JSON.stringify(deleted) === JSON.stringify({ id: follow.id, object: "response", deleted: true }),
      "delete answers {id, object: \"response\", deleted: true}", JSON.stringify(deleted));
async function notFound(what, call) {
  try {
    await call();
    check(false, what, "accepted");
  } catch (e) {
    // The error object as for every route (docs/api.md "Errors": type follows vLLM's names).
    check(e.status === 404 && e.error?.type === "NotFoundError" && e.error?.message?.includes(follow.id),
          what, `${e.status} ${JSON.stringify(e.error)}`);
  }
}
await notFound("retrieve after delete → 404", () => client.responses.retrieve(follow.id));
await notFound("delete after delete → 404", () => remove(follow.id));
await notFound("previous_response_id after delete → 404",
  () => client.responses.create({ ...greedy, input: "hi", previous_response_id: follow.id }));
try {
  await client.responses.retrieve(unstored.id);
  check(false, "a store: false response cannot be retrieved", "found");
} catch (e) {
  check(e.status === 404, "a store: false response cannot be retrieved", `${e.status}`);
}

if (args.trained) {
  // The bundled model's tasks (docs/tiny_model_tasks.md): arithmetic with reasoning, the
  // weather tool and its result.
  check(plain.output_text === "632" && reasoningText(plain) === "7+5+0=12, 4+8+1=13, 3+2+1=6." &&
        plain.output[0].type === "reasoning" && plain.usage.output_tokens_details.reasoning_tokens > 0,
        "trained: 347 + 285 = 632, the reasoning as a reasoning item", JSON.stringify(plain.output));
  const first = await sameBothWays("trained: tool request", { ...greedy, tools, input: weather });
  const call = calls(first)[0];
  check(calls(first).length === 1 && call.name === "get_weather" && JSON.parse(call.arguments).city === "Paris",
        "trained: the model calls get_weather with city Paris", JSON.stringify(first.output));
  if (call) {
    // The call and its output sent back as items, the way the client's own examples do it.
    const answer = await sameBothWays("trained: function_call_output sent back", {
      ...greedy, tools,
      input: [{ role: "user", content: weather }, ...first.output,
              { type: "function_call_output", call_id: call.call_id, output: result }] });
    check(answer.output_text === "It is sunny and 21 degrees in Paris.",
          "trained: the answer uses the tool result", answer.output_text);
    // The same through previous_response_id: only the output is sent.
    const chained = await client.responses.create({
      ...greedy, tools, previous_response_id: first.id,
      input: [{ type: "function_call_output", call_id: call.call_id, output: result }] });
    check(chained.output_text === "It is sunny and 21 degrees in Paris.",
          "trained: previous_response_id + function_call_output gives the same answer", chained.output_text);
  }
}

finish("responses client: all passed", (n) => `responses client: ${n} failed`);
