// Drives the chat page of a running `minimax serve` (started with --api-key) in Debian's headless
// Chromium, as a person would, at desktop width and then at 375 px: without a key the header says
// so and a send gets the 401 explained; with it the header shows the model's short name, the
// bundled model's "What is 347 + 285?" streams its reasoning (folded) and 632 with tokens, tok/s
// and time to first token; Regenerate and edit-and-resend; a tool call answered; a markdown reply
// drawn as DOM nodes (code block with a working copy button, table, list, links; HTML and a
// javascript: link stay text); conversations kept over a reload, renamed and deleted; a server
// that cannot be reached said so in the header and the error; contrast of the key texts (WCAG AA)
// in light and dark; the phone layout with its drawers and no horizontal overflow. No request
// leaves the server and no script error is thrown.
//
//   node chat_page_test.mjs --url http://127.0.0.1:PORT --key KEY --model NAME
//                           [--chromium /usr/bin/chromium] [--screenshots DIR]
// --screenshots writes DIR/chat_page_desktop.png (1280x800) and DIR/chat_page_phone.png (375x740).
import { chromium } from "playwright-core";
import { answerNextChatWith, CODE, contrastRatios, MARKDOWN_TOKENS, markdownEvents, renderCases } from "./page_measures.mjs";

const args = Object.fromEntries(
  process.argv.slice(2).reduce((pairs, a, i, all) => {
    if (a.startsWith("--")) pairs.push([a.slice(2), all[i + 1]?.startsWith("--") ? true : all[i + 1] ?? true]);
    return pairs;
  }, []));
const origin = new URL(args.url).origin;
const host = new URL(args.url).host;
const shortName = args.model.split("/").pop();
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

const stored = (page) => page.evaluate(() => JSON.parse(localStorage.getItem("minimax-chat.conversations") ?? "[]"));
const titles = async (page) => page.locator("#conversation_list .open-conversation").allTextContents();

// Waits for the reply after `count` assistant messages to finish (its numbers are drawn last).
async function nextReply(page, count) {
  const reply = page.locator(".message.assistant").nth(count);
  await reply.locator(".stats").waitFor(WAIT);
  return reply;
}

// Chromium's sandbox needs unprivileged user namespaces or a setuid helper; tests run as root in a
// container, where Chromium refuses to start with its sandbox ("Running as root without
// --no-sandbox is not supported"). The page is our own, served from loopback.
const browser = await chromium.launch({ executablePath: args.chromium ?? "/usr/bin/chromium", chromiumSandbox: false });
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 },
                                             permissions: ["clipboard-read", "clipboard-write"] });
  const page = await context.newPage();
  const foreign = [], scriptErrors = [], chatBodies = [];
  page.on("request", (request) => {
    if (new URL(request.url()).origin !== origin) foreign.push(request.url());
    if (request.url().endsWith("/v1/chat/completions")) chatBodies.push(request.postDataJSON());
  });
  page.on("pageerror", (error) => scriptErrors.push(error.message));
  page.on("dialog", (dialog) => dialog.accept()); // "Delete the conversation …?"

  // 1. Without a key: the page loads, and says what is missing.
  const index = await page.goto(`${args.url}/`);
  check(index.status() === 200 && index.headers()["content-type"] === "text/html; charset=utf-8",
        "GET / without a key: 200 text/html", `${index.status()} ${index.headers()["content-type"]}`);
  await page.locator("#status[data-state=key]", { hasText: "API key needed" }).waitFor(WAIT);
  check(true, "the header says the API key is needed");
  await page.fill("#temperature", "0");
  await page.fill("#prompt", "What is 347 + 285?");
  await page.click("#send");
  const refusal = page.locator(".message.error").last();
  await refusal.waitFor(WAIT);
  const refusalText = await refusal.textContent();
  check(refusalText.includes("401") && refusalText.includes("API key"), "a send without the key shows the 401 and what to do", refusalText);
  check(await page.inputValue("#prompt") === "What is 347 + 285?", "the refused message is back in the input box");
  check((await stored(page)).length === 0, "a conversation that got no reply is not kept");

  // 2. With the key: the model's short name, then the sum's reasoning, answer and numbers.
  await page.fill("#api_key", args.key);
  await page.press("#api_key", "Tab"); // a change event, as when a person leaves the field
  await page.locator("#status[data-state=ok]").waitFor(WAIT);
  const statusText = await page.textContent("#status .status-text");
  const statusTitle = await page.getAttribute("#status", "title");
  check(statusText === shortName && statusTitle.includes(args.model),
        `the header shows the model's short name "${shortName}", the full id in its title`, `${statusText} / ${statusTitle}`);
  await page.click("#send");
  let reply = await nextReply(page, 0);
  const reasoning = await reply.locator(".reasoning-text").textContent();
  const answer = await reply.locator(".answer").textContent();
  const folded = await reply.locator("details.reasoning").evaluate((d) => !d.open && !d.hidden);
  check(reasoning.length > 0 && folded, "the reasoning is shown folded in its own <details>", JSON.stringify(reasoning));
  check(answer.includes("632") && !answer.includes(reasoning), "the answer contains 632, apart from the reasoning",
        JSON.stringify(answer));
  const body = chatBodies.at(-1);
  check(body?.temperature === 0 && body?.stream === true && body?.stream_options?.include_usage === true &&
        body.messages?.at(-1)?.content === "What is 347 + 285?",
        "the request streamed at temperature 0 and asked for usage", JSON.stringify(body));
  const stats = reply.locator(".stats");
  const statsLine = await stats.textContent();
  const ttft = Number(await stats.getAttribute("data-ttft-seconds"));
  const rate = Number(await stats.getAttribute("data-tokens-per-second"));
  const total = Number(statsLine.match(/ ([\d.]+) s$/)?.[1]);
  const tokens = Number(statsLine.match(/^(\d+) tokens/)?.[1]);
  const rateOver = await stats.getAttribute("data-rate-over");
  check(/^\d+ tokens · [\d.]+ tok\/s · first token [\d.]+ s · [\d.]+ s$/.test(statsLine) &&
        ttft > 0 && rate > 0 && ttft <= total + 0.05 && tokens > 1,
        "the reply's numbers: tokens, tok/s, time to first token, total", statsLine);
  // The tiny model may finish before the page reads twice: then tok/s is over the whole request.
  const seconds = Number(await stats.getAttribute("data-seconds"));
  check(rateOver === "generation" || (rateOver === "request" && Math.abs(rate * seconds - tokens) < 0.01),
        `tok/s is over the generation, or over the request when the tokens came at once (${rateOver})`,
        `${rate} tok/s over ${rateOver}, ${tokens} tokens in ${seconds} s`);
  await reply.locator("summary").click();
  check(await reply.locator(".reasoning-text").isVisible(), "a click unfolds the reasoning");

  // 3. Regenerate: the reply is asked for again from the same turns and replaces the old one.
  await reply.locator(".regenerate").click();
  reply = await nextReply(page, 0);
  check((await reply.locator(".answer").textContent()).includes("632") &&
        chatBodies.at(-1).messages.length === 1 && await page.locator(".message.assistant").count() === 1,
        "Regenerate asks again without the old reply and shows the new one in its place",
        JSON.stringify(chatBodies.at(-1).messages));

  // 4. Edit and resend: the edited message replaces the turn and everything after it.
  await page.locator(".message.user .edit").click();
  await page.locator(".message.user .editor textarea").fill("What is 502 - 37?");
  await page.locator(".message.user .editor .resend").click();
  reply = await nextReply(page, 0);
  const edited = chatBodies.at(-1).messages;
  check(edited.length === 1 && edited[0].content === "What is 502 - 37?" &&
        (await reply.locator(".answer").textContent()).includes("465"),
        "an edited message is sent again alone and answered (465)", JSON.stringify(edited));
  const saved = (await stored(page))[0];
  check(saved?.messages.length === 2 && saved.messages[0].content === "What is 502 - 37?" &&
        saved.messages[1].stats?.ttft_seconds > 0 && saved.title === "What is 347 + 285?",
        "the conversation is kept in localStorage with the reply's numbers", JSON.stringify(saved));

  // 5. A tool call in a new chat: name and arguments shown; its result sent back gets the answer.
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
  await call.locator("button").click();
  const toolReply = await nextReply(page, 1);
  const toolAnswer = await toolReply.locator(".answer").textContent();
  const sent = chatBodies.at(-1)?.messages ?? [];
  check(sent.at(-1)?.role === "tool" && sent.at(-2)?.tool_calls?.[0]?.function?.name === "get_weather" &&
        sent.every((m) => m.stats === undefined),
        "the result goes back as a tool message after the assistant's call (the page's numbers left out)",
        JSON.stringify(sent.slice(-2)));
  check(toolAnswer.includes("sunny") && toolAnswer.includes("21"), "the model answers from the tool result",
        JSON.stringify({ answer: toolAnswer, message: await toolReply.textContent() }));
  await page.fill("#tools", "");

  // 6. Markdown: a canned coding reply streamed in pieces is drawn as DOM nodes, never as HTML.
  await page.click("#new_chat");
  const events = markdownEvents(), GAP_MS = 30;
  await answerNextChatWith(page, events, GAP_MS);
  await page.fill("#prompt", "How do I sort a list in Python?");
  await page.click("#send");
  const mdReply = await nextReply(page, 0);
  const md = mdReply.locator(".answer");
  check(await page.evaluate(() => window.__drawnWhileStreaming), "markdown: the code block is drawn while the reply streams");
  // The deltas span at least (pieces - 1) gaps, so tok/s can be no more than this; timers only run late.
  const pieces = events.filter((e) => e.includes('"content"') || e.includes('"reasoning_content"')).length;
  const mdRate = Number(await mdReply.locator(".stats").getAttribute("data-tokens-per-second"));
  const mdMost = (MARKDOWN_TOKENS - 1) / ((pieces - 1) * GAP_MS / 1000);
  check(await mdReply.locator(".stats").getAttribute("data-rate-over") === "generation" && mdRate > 0 && mdRate <= mdMost * 1.01,
        `tok/s of a paced stream is the tokens after the first over the deltas' span (≤ ${mdMost.toFixed(1)})`, `${mdRate}`);
  const shape = await md.evaluate((answer) => ({
    h2: answer.querySelector("h2")?.textContent,
    strongCode: answer.querySelector("strong > code")?.textContent,
    em: answer.querySelector("em")?.textContent,
    del: answer.querySelector("del")?.textContent,
    code: answer.querySelector(".code-block pre code")?.textContent,
    language: answer.querySelector(".code-language")?.textContent,
    headers: [...answer.querySelectorAll("th")].map((th) => `${th.textContent}:${th.className}`),
    cells: answer.querySelectorAll("td").length,
    items: answer.querySelectorAll("ol > li").length,
    nested: [...answer.querySelectorAll("ol > li ul > li")].map((li) => li.textContent),
    links: [...answer.querySelectorAll("a")].map((a) => `${a.href} ${a.rel} ${a.target}`),
    elements: [...answer.querySelectorAll("*")].map((n) => n.tagName.toLowerCase()),
    attributes: [...answer.querySelectorAll("*")].flatMap((n) => n.getAttributeNames()),
    text: answer.textContent,
  }));
  check(shape.h2 === "Sorting in Python" && shape.strongCode === "sorted()" && shape.em === "new" && shape.del === "never",
        "markdown: heading, strong code, emphasis, strikethrough", JSON.stringify(shape));
  check(shape.code === CODE && shape.language === "python", "markdown: the fenced code block in <pre><code>, with its language",
        JSON.stringify([shape.code, shape.language]));
  check(JSON.stringify(shape.headers) === JSON.stringify(["method:", "returns:align-center", "stable:align-right"]) &&
        shape.cells === 6, "markdown: the table with its alignments", JSON.stringify([shape.headers, shape.cells]));
  check(shape.items === 2 && JSON.stringify(shape.nested) === JSON.stringify(["keys", "reverse=True"]),
        "markdown: a numbered list with a nested list", JSON.stringify([shape.items, shape.nested]));
  check(JSON.stringify(shape.links) === JSON.stringify(["https://docs.python.org/3/howto/sorting.html noopener noreferrer _blank"]),
        "markdown: the one http(s) link, rel=noopener, in a new tab", JSON.stringify(shape.links));
  check(!shape.elements.includes("img") && !shape.attributes.some((a) => a.startsWith("on")) &&
        shape.text.includes('<img src=x onerror="window.__pwned=1">') && shape.text.includes("[a trap](javascript:window.__pwned=2)") &&
        await page.evaluate(() => window.__pwned === undefined),
        "markdown: HTML and a javascript: link from the model stay text", JSON.stringify(shape.elements));
  await md.locator(".code-block .copy").click();
  await page.locator(".code-block .copy", { hasText: "Copied" }).waitFor(WAIT);
  check(await page.evaluate(() => navigator.clipboard.readText()) === CODE, "the code block's Copy button copies the code");
  const cases = await renderCases(page);
  for (const c of cases.results) check(c.got === c.expected, `markdown: ${c.what}`, `got ${c.got}`);
  check(cases.hostileMs < 2000, "markdown: deep nesting and unclosed markers render in bounded time",
        `${cases.hostileMs.toFixed(0)} ms`);

  // 7. Contrast (WCAG AA, 4.5:1) of the key texts and buttons, in the light and the dark theme.
  for (const colorScheme of ["light", "dark"]) {
    await page.emulateMedia({ colorScheme });
    const ratios = await contrastRatios(page);
    const low = Object.entries(ratios).filter(([, r]) => r === null || r < 4.5)
      .map(([what, r]) => `${what} ${r === null ? "missing" : r.toFixed(2)}`);
    check(low.length === 0, `${colorScheme} theme: every key text and the Send button reach 4.5:1`, low.join(", "));
  }
  await page.emulateMedia({ colorScheme: "light" });
  await page.locator(".code-block .copy", { hasText: /^Copy$/ }).waitFor(WAIT); // "Copied" goes back
  if (args.screenshots) await page.screenshot({ path: `${args.screenshots}/chat_page_desktop.png` });

  // 8. Conversations survive a reload, in the list, renamed and deleted.
  await page.reload();
  await page.locator(".message.assistant .code-block").waitFor(WAIT);
  check(JSON.stringify(await titles(page)) ===
        JSON.stringify(["How do I sort a list in Python?", "What is the weather in Paris?", "What is 347 + 285?"]),
        "after a reload the open conversation is back and the list holds all three, newest first",
        JSON.stringify(await titles(page)));
  check(await page.inputValue("#temperature") === "0" && await page.inputValue("#api_key") === args.key,
        "temperature and API key survive a reload");
  await page.locator("#conversation_list li", { hasText: "What is 347 + 285?" }).locator(".open-conversation").click();
  check((await page.locator(".message.assistant .answer").textContent()).includes("465") &&
        await page.locator("#conversation_list li.current .open-conversation").textContent() === "What is 347 + 285?",
        "a click on a conversation in the list opens it");
  await page.locator("#conversation_list li.current .rename").click();
  await page.locator("#conversation_list .rename-input").fill("Arithmetic");
  await page.press("#conversation_list .rename-input", "Enter");
  await page.locator("#conversation_list li", { hasText: "What is the weather in Paris?" }).locator(".delete").click();
  await page.reload();
  await page.locator("#conversation_list li.current").waitFor(WAIT);
  check(JSON.stringify(await titles(page)) === JSON.stringify(["How do I sort a list in Python?", "Arithmetic"]) &&
        (await stored(page)).length === 2,
        "a rename and a delete are kept over a reload", JSON.stringify(await titles(page)));

  // 9. A server that cannot be reached: said in the header and in the error, then the recovery.
  const gone = (url) => url.pathname === "/health" || url.pathname.startsWith("/v1/");
  await page.route(gone, (route) => route.abort("connectionrefused"));
  await page.click("#new_chat");
  await page.fill("#prompt", "hello");
  await page.click("#send");
  await page.locator(".message.error").waitFor(WAIT);
  const goneText = await page.locator(".message.error").textContent();
  check(goneText.includes(`Cannot reach the server at ${host}`) && !goneText.includes("Failed to fetch"),
        "a send to a server that is gone says it cannot reach HOST:PORT", goneText);
  check(await page.textContent("#status .status-text") === `cannot reach the server at ${host}` &&
        await page.getAttribute("#status", "data-state") === "down", "the header shows the server as unreachable");
  await page.unroute(gone);
  await page.locator("#status[data-state=ok]").waitFor({ timeout: 10_000 });
  check(true, "the header shows the server again once it answers");

  // 10. A phone: 375 px, the settings and the chat list as drawers, nothing wider than the screen.
  await page.setViewportSize({ width: 375, height: 740 });
  await page.locator("#conversation_list li", { hasText: "How do I sort" }).locator(".open-conversation")
    .evaluate((b) => b.click()); // the list is a closed drawer now: a click from the script
  await page.locator(".message.assistant .code-block").waitFor(WAIT);
  const phone = await page.evaluate(() => {
    const inside = (id) => { const r = document.getElementById(id).getBoundingClientRect(); return r.left >= 0 && r.right <= 375 && r.width > 0; };
    return { width: document.scrollingElement.scrollWidth, messages: document.getElementById("messages").scrollWidth -
             document.getElementById("messages").clientWidth, buttons: ["show_chats", "show_settings", "new_chat", "send"].every(inside) };
  });
  check(phone.width <= 375 && phone.messages <= 0, "375 px: no horizontal overflow (code and tables scroll inside)", JSON.stringify(phone));
  check(phone.buttons && await page.textContent("#status .status-text") === shortName,
        "375 px: Chats, Settings, New chat and Send on screen, the model's short name in the header");
  check(!(await page.isVisible("#settings")) && !(await page.isVisible("#conversations")), "375 px: settings and chats start closed");
  await page.click("#show_settings");
  const drawer = await page.locator("#settings").boundingBox();
  check(await page.isVisible("#api_key") && drawer.x >= 0 && drawer.x + drawer.width <= 375,
        "375 px: Settings opens a drawer on screen", JSON.stringify(drawer));
  await page.keyboard.press("Escape");
  check(!(await page.isVisible("#settings")), "375 px: Escape closes the drawer");
  await page.click("#show_chats");
  await page.locator("#conversation_list li", { hasText: "Arithmetic" }).locator(".open-conversation").click();
  check(!(await page.isVisible("#conversations")) &&
        (await page.locator(".message.assistant .answer").textContent()).includes("465"),
        "375 px: the chat list drawer opens a conversation and closes");
  await page.locator("#conversation_list li", { hasText: "How do I sort" }).locator(".open-conversation").evaluate((b) => b.click());
  await page.locator(".message.assistant .code-block").waitFor(WAIT);
  await page.fill("#prompt", "");
  if (args.screenshots) await page.screenshot({ path: `${args.screenshots}/chat_page_phone.png` });

  check(foreign.length === 0, "no request leaves the server", foreign.join(" "));
  check(scriptErrors.length === 0, "no script error", scriptErrors.join(" | "));
} catch (error) { // a step that timed out: the checks before it said what was missing
  check(false, "the page went through every step", error.message.split("\n")[0]);
} finally {
  await browser.close();
}
console.log(failures === 0 ? "all chat page checks passed" : `${failures} chat page check(s) failed`);
process.exit(failures === 0 ? 0 : 1);
