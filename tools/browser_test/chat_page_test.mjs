// Drives the chat page of a running `minimax serve` (started with --api-key) in Debian's headless
// Chromium, as a person would: the page loads without a key and says the key is missing, a message
// sent without it gets the 401 explained, then with the key and temperature 0 the bundled model's
// "What is 347 + 285?" streams its reasoning (folded in a <details>) and the answer 632; a tool
// call shows its name and arguments and its result is sent back; settings survive a reload; the
// page makes no request outside the server and throws no script error.
//
//   node chat_page_test.mjs --url http://127.0.0.1:PORT --key KEY --model NAME
//                           [--chromium /usr/bin/chromium] [--screenshot FILE.png]
import { chromium } from "playwright-core";

const args = Object.fromEntries(
  process.argv.slice(2).reduce((pairs, a, i, all) => {
    if (a.startsWith("--")) pairs.push([a.slice(2), all[i + 1]?.startsWith("--") ? true : all[i + 1] ?? true]);
    return pairs;
  }, []));
const origin = new URL(args.url).origin;
const WAIT = { timeout: 60_000 }; // the model's reply on a busy two-core machine
let failures = 0;

function check(ok, what, detail = "") {
  console.log(`${ok ? "ok  " : "FAIL"} ${what}${ok ? "" : "  " + detail}`);
  if (!ok) failures++;
}

// The same tools the bundled model was trained with (docs/tiny_model_tasks.md §5).
const TOOLS = [
  { type: "function", function: { name: "get_weather", description: "Get the current weather in a city.",
    parameters: { type: "object", properties: { city: { type: "string", description: "City name" } }, required: ["city"] } } },
  { type: "function", function: { name: "get_price", description: "Get the price of an item in dollars.",
    parameters: { type: "object", properties: { item: { type: "string", description: "Item name" } }, required: ["item"] } } }];

// Chromium's sandbox needs unprivileged user namespaces or a setuid helper; tests run as root in a
// container, where Chromium refuses to start with its sandbox ("Running as root without
// --no-sandbox is not supported"). The page is our own, served from loopback.
const browser = await chromium.launch({ executablePath: args.chromium ?? "/usr/bin/chromium", chromiumSandbox: false });
try {
  const page = await browser.newPage({ viewport: { width: 1000, height: 640 } });
  const foreign = [], scriptErrors = [], chatBodies = [];
  page.on("request", (request) => {
    if (new URL(request.url()).origin !== origin) foreign.push(request.url());
    if (request.url().endsWith("/v1/chat/completions")) chatBodies.push(request.postDataJSON());
  });
  page.on("pageerror", (error) => scriptErrors.push(error.message));

  // 1. Without a key: the page loads, and says what is missing.
  const index = await page.goto(`${args.url}/`);
  check(index.status() === 200 && index.headers()["content-type"] === "text/html; charset=utf-8",
        "GET / without a key: 200 text/html", `${index.status()} ${index.headers()["content-type"]}`);
  await page.locator("#model", { hasText: "API key needed" }).waitFor(WAIT);
  check(true, "the header says the API key is needed");
  await page.fill("#temperature", "0");
  await page.fill("#prompt", "What is 347 + 285?");
  await page.click("#send");
  const refusal = page.locator(".message.error").last();
  await refusal.waitFor(WAIT);
  const refusalText = await refusal.textContent();
  check(refusalText.includes("401") && refusalText.includes("API key"), "a send without the key shows the 401 and what to do", refusalText);
  check(await page.inputValue("#prompt") === "What is 347 + 285?", "the refused message is back in the input box");

  // 2. With the key: the model's name appears, and the sum streams its reasoning and the answer.
  await page.fill("#api_key", args.key);
  await page.press("#api_key", "Tab"); // a change event, as when a person leaves the field
  await page.locator("#model", { hasText: `model: ${args.model}` }).waitFor(WAIT);
  check(true, "with the key the header names the model");
  await page.click("#send");
  const reply = page.locator(".message.assistant").last();
  await reply.locator(".stats").waitFor(WAIT); // written when the stream has ended
  const reasoning = await reply.locator(".reasoning-text").textContent();
  const answer = await reply.locator(".answer").textContent();
  const folded = await reply.locator("details.reasoning").evaluate((d) => !d.open && !d.hidden);
  check(reasoning.length > 0 && folded, "the reasoning is shown folded in its own <details>", JSON.stringify(reasoning));
  check(answer.includes("632") && !answer.includes(reasoning), "the answer contains 632, apart from the reasoning",
        JSON.stringify(answer));
  const body = chatBodies.at(-1);
  check(body?.temperature === 0 && body?.stream === true && body.messages?.at(-1)?.content === "What is 347 + 285?",
        "the request streamed at temperature 0", JSON.stringify(body));
  if (folded) {
    await reply.locator("summary").click();
    check(await reply.locator(".reasoning-text").isVisible(), "a click unfolds the reasoning");
  }
  if (args.screenshot) await page.screenshot({ path: args.screenshot });

  // 3. A tool call: name and arguments shown; its result sent back gets the model's answer.
  await page.click("#new_chat");
  await page.fill("#tools", JSON.stringify(TOOLS, null, 1));
  await page.fill("#prompt", "What is the weather in Paris?");
  await page.press("#prompt", "Enter");
  const call = page.locator(".message.assistant .tool-call").last();
  await call.locator(".tool-result").waitFor(WAIT); // offered once the call is complete
  const name = await call.locator(".tool-name").textContent();
  const callArgs = await call.locator(".tool-args").textContent();
  let city = null;
  try { city = JSON.parse(callArgs).city; } catch {}
  check(name === "get_weather" && city === "Paris", "the tool call shows get_weather and its arguments", `${name} ${callArgs}`);
  await call.locator("textarea").fill('{"city": "Paris", "temperature": 21, "condition": "sunny"}');
  // The reply to the tool result is a new assistant message: wait for that one by index, since
  // `.last()` still means the tool call's own (finished) message until the page adds the new one.
  const before = await page.locator(".message.assistant").count();
  await call.locator("button").click();
  const after = page.locator(".message.assistant").nth(before);
  await after.locator(".stats").waitFor(WAIT);
  const toolAnswer = await after.locator(".answer").textContent();
  const sent = chatBodies.at(-1)?.messages ?? [];
  check(sent.at(-1)?.role === "tool" && sent.at(-2)?.tool_calls?.[0]?.function?.name === "get_weather",
        "the result goes back as a tool message after the assistant's call", JSON.stringify(sent.slice(-2)));
  // On failure show the whole message (reasoning, tool calls, stats).
  check(toolAnswer.includes("sunny") && toolAnswer.includes("21"), "the model answers from the tool result",
        JSON.stringify({ answer: toolAnswer, message: await after.textContent() }));

  // 4. Settings live in localStorage: a reload keeps them.
  await page.reload();
  check(await page.inputValue("#temperature") === "0" && await page.inputValue("#api_key") === args.key,
        "temperature and API key survive a reload");
  check(foreign.length === 0, "no request leaves the server", foreign.join(" "));
  check(scriptErrors.length === 0, "no script error", scriptErrors.join(" | "));
} catch (error) { // a step that timed out: the checks before it said what was missing
  check(false, "the page went through every step", error.message.split("\n")[0]);
} finally {
  await browser.close();
}
console.log(failures === 0 ? "all chat page checks passed" : `${failures} chat page check(s) failed`);
process.exit(failures === 0 ? 0 : 1);
