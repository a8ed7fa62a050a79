// The chat page's behaviour (docs/api.md "Chat page"): keeps the conversation as OpenAI messages,
// streams each reply from /v1/chat/completions (server-sent events read through fetch), and draws
// reasoning, answer and tool calls apart as their deltas arrive. Model text is only ever set as
// textContent, never parsed as HTML.

const $ = (id) => document.getElementById(id);
const SETTINGS = ["api_key", "system", "temperature", "top_p", "max_tokens", "tools"];
const STORAGE_PREFIX = "minimax-chat.";

const conversation = []; // the OpenAI messages so far, without the system prompt
let chatNumber = 0; // counts "New chat"s: a reply still arriving from an earlier chat is dropped
let controller = null; // aborts the reply being streamed

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function scrollToEnd() {
  const messages = $("messages");
  messages.scrollTop = messages.scrollHeight;
}

function addMessage(role, title) {
  const node = element("div", `message ${role}`);
  node.append(element("div", "role", title));
  $("messages").append(node);
  scrollToEnd();
  return node;
}

function showError(text) {
  addMessage("error", "Error").append(element("div", "answer", text));
}

function headers() {
  const result = { "Content-Type": "application/json" };
  const key = $("api_key").value.trim();
  if (key) result.Authorization = `Bearer ${key}`;
  return result;
}

// The text of a failed reply: the OpenAI error's message, and for 401 what to do about it.
async function failureText(response) {
  let message = `${response.status} ${response.statusText}`;
  try {
    const body = await response.json();
    if (body?.error?.message) message = `${response.status}: ${body.error.message}`;
  } catch {}
  if (response.status === 401)
    return `${message}\nThis server needs an API key: type it in Settings → API key, then send again.`;
  return message;
}

// Reads the model's name from /v1/models into the header: also tells at once whether the key works.
async function showModel() {
  const status = $("model");
  try {
    const response = await fetch("v1/models", { headers: headers() });
    if (response.status === 401) {
      status.textContent = "API key needed: enter it in Settings";
      status.classList.add("bad");
      return;
    }
    const body = await response.json();
    status.textContent = `model: ${body.data.map((m) => m.id).join(", ")}`;
    status.classList.remove("bad");
  } catch (error) {
    status.textContent = `server unreachable (${error.message})`;
    status.classList.add("bad");
  }
}

function numberSetting(body, id, integer) {
  const text = $(id).value.trim();
  if (text === "") return; // the server's default
  const value = Number(text);
  if (!Number.isFinite(value) || (integer && !Number.isInteger(value)))
    throw new Error(`${id}: "${text}" is not ${integer ? "an integer" : "a number"}`);
  body[id] = value;
}

function requestBody() {
  const system = $("system").value.trim();
  const messages = system ? [{ role: "system", content: system }, ...conversation] : [...conversation];
  const body = { messages, stream: true, stream_options: { include_usage: true } };
  numberSetting(body, "temperature", false);
  numberSetting(body, "top_p", false);
  numberSetting(body, "max_tokens", true);
  const tools = $("tools").value.trim();
  if (tools) {
    try {
      body.tools = JSON.parse(tools);
    } catch (error) {
      throw new Error(`Tools: not valid JSON (${error.message})`);
    }
  }
  return body;
}

// Yields the data of each server-sent event of `response` as it arrives.
async function* serverEvents(response) {
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value.replaceAll("\r\n", "\n");
    for (let end; (end = buffer.indexOf("\n\n")) >= 0; ) {
      const lines = buffer.slice(0, end).split("\n");
      buffer = buffer.slice(end + 2);
      const data = lines.filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trimStart());
      if (data.length) yield data.join("\n");
    }
  }
}

// The parts of one assistant message on screen, filled in as deltas arrive.
class AssistantView {
  constructor() {
    this.node = addMessage("assistant", "Assistant");
    this.reasoning = element("details", "reasoning");
    this.reasoning.hidden = true;
    this.summary = element("summary", "", "Thinking…");
    this.reasoningText = element("div", "reasoning-text");
    this.reasoning.append(this.summary, this.reasoningText);
    this.answer = element("div", "answer");
    this.tools = element("div", "tool-calls");
    this.node.append(this.reasoning, this.answer, this.tools);
    this.calls = []; // {id, name, arguments, view}
  }
  addReasoning(text) {
    this.reasoning.hidden = false;
    this.reasoningText.textContent += text;
  }
  addContent(text) {
    this.answer.textContent += text;
  }
  addToolDelta(delta) {
    let call = this.calls[delta.index];
    if (!call) {
      call = { id: delta.id, name: delta.function?.name ?? "", arguments: "" };
      call.view = element("div", "tool-call");
      call.nameView = element("div", "tool-name", `${call.name}(…)`);
      call.argsView = element("pre", "tool-args");
      call.view.append(call.nameView, call.argsView);
      this.tools.append(call.view);
      this.calls[delta.index] = call;
    }
    call.arguments += delta.function?.arguments ?? "";
    call.argsView.textContent = call.arguments;
  }
  finish(finishReason, usage, seconds) {
    this.summary.textContent = `Reasoning (${this.reasoningText.textContent.length} characters)`;
    for (const call of this.calls) {
      call.nameView.textContent = call.name;
      try {
        call.argsView.textContent = JSON.stringify(JSON.parse(call.arguments), null, 2);
      } catch {} // left as sent
    }
    const parts = [];
    if (usage) parts.push(`${usage.completion_tokens} tokens in ${seconds.toFixed(1)} s`);
    if (finishReason === "length") parts.push("cut at max_tokens");
    if (finishReason === "abort") parts.push("stopped");
    if (parts.length) this.node.append(element("div", "stats", parts.join(" · ")));
  }
}

// Lets the user answer each tool call; the reply is requested once every call has its result
// (all of them are taken back, to be sent again, when that request fails).
function askForToolResults(view) {
  const results = new Map(); // call id → result text
  const fields = [];
  for (const call of view.calls) {
    const form = element("form", "tool-result");
    const input = element("textarea");
    input.rows = 1;
    input.placeholder = `result of ${call.name} (text or JSON)`;
    const button = element("button", "", "Send result");
    form.append(input, button);
    call.view.append(form);
    fields.push(input, button);
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      if (controller) return;
      results.set(call.id, input.value);
      input.disabled = button.disabled = true;
      if (results.size < view.calls.length) return;
      conversation.push(...view.calls.map((c) => ({ role: "tool", tool_call_id: c.id, content: results.get(c.id) })));
      if (!(await generate())) {
        conversation.splice(-view.calls.length);
        results.clear();
        for (const field of fields) field.disabled = false;
      }
    });
  }
}

// Streams the assistant's reply to the conversation so far. False when the request failed
// before any reply (the caller takes its turn back).
async function generate() {
  let body;
  try {
    body = requestBody();
  } catch (error) {
    showError(error.message);
    return false;
  }
  setBusy(true);
  const started = performance.now(), chat = chatNumber;
  let view = null, finishReason = null, usage = null;
  try {
    const response = await fetch("v1/chat/completions", {
      method: "POST", headers: headers(), body: JSON.stringify(body), signal: controller.signal,
    });
    if (!response.ok) {
      showError(await failureText(response));
      return false;
    }
    view = new AssistantView();
    for await (const data of serverEvents(response)) {
      if (data === "[DONE]") break;
      const chunk = JSON.parse(data);
      if (chunk.error) throw new Error(chunk.error.message);
      if (chunk.usage) usage = chunk.usage;
      const choice = chunk.choices?.[0];
      if (!choice) continue;
      const delta = choice.delta ?? {};
      const reasoning = delta.reasoning_content ?? delta.reasoning; // vLLM >= 0.11 sends the latter
      if (reasoning) view.addReasoning(reasoning);
      if (delta.content) view.addContent(delta.content);
      for (const call of delta.tool_calls ?? []) view.addToolDelta(call);
      if (choice.finish_reason) finishReason = choice.finish_reason;
      scrollToEnd();
    }
  } catch (error) {
    if (error.name === "AbortError") finishReason = "abort";
    else showError(error.message);
    if (!view) return false;
  } finally {
    setBusy(false);
  }
  view.finish(finishReason, usage, (performance.now() - started) / 1000);
  if (chat !== chatNumber) return true;
  const message = { role: "assistant", content: view.answer.textContent || null };
  if (view.reasoningText.textContent) message.reasoning_content = view.reasoningText.textContent;
  if (view.calls.length) {
    message.tool_calls = view.calls.map((c) => ({
      id: c.id, type: "function", function: { name: c.name, arguments: c.arguments },
    }));
  } else {
    message.content ??= "";
  }
  conversation.push(message);
  if (view.calls.length && finishReason === "tool_calls") askForToolResults(view);
  return true;
}

function setBusy(busy) {
  controller = busy ? new AbortController() : null;
  $("send").disabled = busy;
  $("stop").disabled = !busy;
}

async function send(event) {
  event.preventDefault();
  const text = $("prompt").value;
  if (controller || !text.trim()) return;
  const node = addMessage("user", "You");
  node.append(element("div", "user-text", text));
  conversation.push({ role: "user", content: text });
  $("prompt").value = "";
  if (!(await generate())) { // take the turn back, so that sending again retries it
    conversation.pop();
    node.remove();
    $("prompt").value = text;
  }
}

function newChat() {
  controller?.abort();
  chatNumber++;
  conversation.length = 0;
  $("messages").replaceChildren();
  $("prompt").focus();
}

for (const id of SETTINGS) {
  const saved = localStorage.getItem(STORAGE_PREFIX + id);
  if (saved !== null) $(id).value = saved;
  $(id).addEventListener("input", () => localStorage.setItem(STORAGE_PREFIX + id, $(id).value));
}
$("api_key").addEventListener("change", showModel);
$("composer").addEventListener("submit", send);
$("prompt").addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey && !event.isComposing) send(event);
});
$("stop").addEventListener("click", () => controller?.abort());
$("new_chat").addEventListener("click", newChat);
showModel();
