// The chat page's behaviour (docs/api.md "Chat page"): conversations kept in this browser
// (conversations.js), each reply streamed from /v1/chat/completions (server-sent events read
// through fetch) and drawn as it arrives (message_views.js), regenerate and edit-and-resend, the
// server's state in the header (server_status.js), and the settings and chat list as drawers on a
// narrow screen.
import { ConversationStore, requestMessages } from "./conversations.js";
import { AssistantView, button, element, messageNode, toolResultView, userView } from "./message_views.js";
import { ServerStatus, unreachableText } from "./server_status.js";

const $ = (id) => document.getElementById(id);
const SETTINGS = ["api_key", "system", "temperature", "top_p", "max_tokens", "tools"];
const SETTINGS_PREFIX = "minimax-chat.";

const store = new ConversationStore();
let current = store.lastOpen(); // the open conversation; null until a new chat's first message
let controller = null; // aborts the reply being streamed
const status = new ServerStatus($("status"), headers);

function scrollToEnd() {
  const messages = $("messages");
  messages.scrollTop = messages.scrollHeight;
}

function showError(text) {
  const node = messageNode("error", "Error");
  node.append(element("div", "error-text", text));
  $("messages").append(node);
  scrollToEnd();
}

function save(conversation) {
  try {
    store.touch(conversation);
  } catch (error) {
    showError(error.message);
  }
  renderList();
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

function numberSetting(body, id, integer) {
  const text = $(id).value.trim();
  if (text === "") return; // the server's default
  const value = Number(text);
  if (!Number.isFinite(value) || (integer && !Number.isInteger(value)))
    throw new Error(`${id}: "${text}" is not ${integer ? "an integer" : "a number"}`);
  body[id] = value;
}

function requestBody(conversation) {
  const system = $("system").value.trim();
  const messages = requestMessages(conversation.messages);
  if (system) messages.unshift({ role: "system", content: system });
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

// Yields {data, time} for each server-sent event of `response` as it arrives; `time` is when the
// read that brought it completed (events that came in one read share it).
async function* serverEvents(response) {
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    const time = performance.now();
    buffer += value.replaceAll("\r\n", "\n");
    for (let end; (end = buffer.indexOf("\n\n")) >= 0; ) {
      const lines = buffer.slice(0, end).split("\n");
      buffer = buffer.slice(end + 2);
      const data = lines.filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trimStart());
      if (data.length) yield { data: data.join("\n"), time };
    }
  }
}

// Streams the assistant's reply to `conversation` and appends it there. Returns null, or the
// error's text when the request failed before any reply (the caller takes its turn back and
// shows it). Times: TTFT from the request to the first reasoning, content or tool-call delta;
// tok/s over the tokens after the first, from the first delta's arrival to the last's. When they
// all came in one read (a fast model, or a proxy that buffers the stream) that span timed nothing,
// and tok/s is over the whole request instead: a lower bound.
async function generate(conversation) {
  let body;
  try {
    body = requestBody(conversation);
  } catch (error) {
    return error.message;
  }
  setBusy(true);
  const started = performance.now();
  let first = null, last = null, view = null, finishReason = null, usage = null;
  try {
    const response = await fetch("v1/chat/completions", {
      method: "POST", headers: headers(), body: JSON.stringify(body), signal: controller.signal,
    });
    if (!response.ok) return await failureText(response);
    view = new AssistantView();
    $("messages").append(view.node);
    for await (const { data, time } of serverEvents(response)) {
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
      if (reasoning || delta.content || delta.tool_calls?.length) {
        last = time;
        first ??= time;
      }
      if (choice.finish_reason) finishReason = choice.finish_reason;
      scrollToEnd();
    }
  } catch (error) {
    let text = error.message;
    if (error.name === "AbortError") {
      finishReason = "abort";
      text = "Stopped before the reply began.";
    }
    else if (error instanceof TypeError) { // fetch's "Failed to fetch": no connection
      status.markUnreachable();
      text = `${unreachableText()[0].toUpperCase()}${unreachableText().slice(1)}: is minimax serve running?`;
    }
    if (!view) return text;
    if (finishReason !== "abort") showError(text);
  } finally {
    setBusy(false);
  }
  const stats = { finish_reason: finishReason, seconds: (performance.now() - started) / 1000 };
  if (first !== null) stats.ttft_seconds = (first - started) / 1000;
  if (usage) stats.completion_tokens = usage.completion_tokens;
  if (usage?.completion_tokens > 0) {
    const timed = usage.completion_tokens > 1 && last > first; // deltas came in more than one read
    stats.tokens_per_second = timed ? (usage.completion_tokens - 1) / ((last - first) / 1000)
                                    : usage.completion_tokens / stats.seconds;
    stats.rate_over = timed ? "generation" : "request";
  }
  view.finish(stats);
  conversation.messages.push(view.message(stats));
  view.node.dataset.index = conversation.messages.length - 1;
  save(conversation);
  if (conversation === current) renderActions();
  return null;
}

function setBusy(busy) {
  controller = busy ? new AbortController() : null;
  $("send").disabled = busy;
  $("stop").disabled = !busy;
  renderActions();
}

// Draws the open conversation from its messages.
function renderConversation() {
  const box = $("messages");
  box.replaceChildren();
  if (!current) {
    box.append(element("p", "empty", "Start a conversation: type a message below."));
    return;
  }
  current.messages.forEach((message, index) => {
    let node;
    if (message.role === "user") node = userView(message);
    else if (message.role === "assistant") node = AssistantView.fromMessage(message).node;
    else node = toolResultView(message);
    node.dataset.index = index;
    box.append(node);
  });
  renderActions();
  scrollToEnd();
}

// The buttons that change the conversation: Edit on each user message, Regenerate on the last
// reply, and a result box for each tool call the last reply made. None while a reply streams.
function renderActions() {
  for (const old of document.querySelectorAll("#messages .actions, #messages .tool-result")) old.remove();
  if (!current || controller) return;
  const messages = current.messages;
  for (const node of document.querySelectorAll("#messages .message.user[data-index]")) {
    const index = Number(node.dataset.index);
    const bar = element("div", "actions");
    const edit = button("edit", "Edit", "Edit this message and send it again");
    edit.addEventListener("click", () => editMessage(node, index));
    bar.append(edit);
    node.append(bar);
  }
  const lastNode = $("messages").querySelector(".message.assistant:last-child");
  if (!lastNode || messages.at(-1)?.role !== "assistant") return;
  const bar = element("div", "actions");
  const again = button("regenerate", "Regenerate", "Ask for this reply again");
  again.addEventListener("click", regenerate);
  bar.append(again);
  lastNode.append(bar);
  if (messages.at(-1).tool_calls?.length) askForToolResults(lastNode, messages.at(-1).tool_calls);
}

// Lets the user answer each tool call; the reply is requested once every call has its result.
function askForToolResults(node, calls) {
  const results = new Map(); // call id → result text
  calls.forEach((call, i) => {
    const form = element("form", "tool-result");
    const input = element("textarea");
    input.rows = 1;
    input.placeholder = `result of ${call.function.name} (text or JSON)`;
    const send = element("button", "", "Send result");
    form.append(input, send);
    node.querySelectorAll(".tool-call")[i]?.append(form);
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      if (controller) return;
      results.set(call.id, input.value);
      input.disabled = send.disabled = true;
      if (results.size < calls.length) return;
      const conversation = current;
      const answers = calls.map((c) => ({ role: "tool", tool_call_id: c.id, content: results.get(c.id) }));
      conversation.messages.push(...answers);
      renderConversation();
      const error = await generate(conversation);
      if (error) takeBack(conversation, answers.length, error);
    });
  });
}

// Undoes the last `count` messages after a request that got no reply, and says why.
function takeBack(conversation, count, error) {
  conversation.messages.splice(-count);
  save(conversation);
  if (conversation !== current) return;
  renderConversation();
  showError(error);
}

async function send(event) {
  event.preventDefault();
  const text = $("prompt").value;
  if (controller || !text.trim()) return;
  if (!current) openConversation(store.create(text));
  const conversation = current;
  conversation.messages.push({ role: "user", content: text });
  $("prompt").value = "";
  renderConversation();
  const error = await generate(conversation);
  if (!error) return;
  const wasOpen = conversation === current;
  takeBack(conversation, 1, error);
  if (!conversation.messages.length) { // a new chat whose first message got no reply: not kept
    store.remove(conversation);
    if (wasOpen) {
      current = null;
      store.setOpen(null);
    }
    renderList();
  }
  if (wasOpen) $("prompt").value = text; // sending again retries it
}

async function regenerate() {
  if (controller) return;
  const conversation = current;
  const old = conversation.messages.pop();
  renderConversation();
  const error = await generate(conversation);
  if (!error) return;
  conversation.messages.push(old);
  takeBack(conversation, 0, error);
}

function editMessage(node, index) {
  const text = node.querySelector(".user-text");
  const editor = element("form", "editor");
  const area = element("textarea");
  area.value = current.messages[index].content;
  area.rows = Math.min(10, area.value.split("\n").length + 1);
  const resend = element("button", "resend", "Send");
  const cancel = button("", "Cancel");
  editor.append(area, resend, cancel);
  text.replaceWith(editor);
  node.querySelector(".actions")?.remove();
  area.focus();
  cancel.addEventListener("click", renderConversation);
  editor.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (controller || !area.value.trim()) return;
    const conversation = current;
    const removed = conversation.messages.splice(index);
    conversation.messages.push({ role: "user", content: area.value });
    renderConversation();
    const error = await generate(conversation);
    if (!error) return;
    conversation.messages.splice(index, 1, ...removed); // the conversation as it was
    takeBack(conversation, 0, error);
  });
}

function openConversation(conversation) {
  controller?.abort(); // a reply still arriving is kept in its own conversation
  current = conversation;
  store.setOpen(conversation);
  renderConversation();
  renderList();
  closeDrawers();
}

function deleteConversation(conversation) {
  if (!confirm(`Delete the conversation "${conversation.title}"?`)) return;
  store.remove(conversation);
  if (conversation === current) openConversation(null);
  renderList();
}

function renameConversation(item, conversation) {
  const input = element("input", "rename-input");
  input.value = conversation.title;
  input.ariaLabel = "New title";
  item.querySelector(".open-conversation").replaceWith(input);
  input.focus();
  input.select();
  let done = false;
  const finish = (keep) => {
    if (done) return;
    done = true;
    if (keep) store.rename(conversation, input.value);
    renderList();
  };
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter") finish(true);
    if (event.key === "Escape") finish(false);
  });
  input.addEventListener("blur", () => finish(true));
}

function renderList() {
  const list = $("conversation_list");
  list.replaceChildren();
  for (const conversation of store.list) {
    const item = element("li", conversation === current ? "current" : "");
    const open = button("open-conversation", conversation.title);
    if (conversation === current) open.ariaCurrent = "page";
    open.addEventListener("click", () => openConversation(conversation));
    const rename = button("rename", "✎", `Rename "${conversation.title}"`);
    rename.addEventListener("click", () => renameConversation(item, conversation));
    const remove = button("delete", "×", `Delete "${conversation.title}"`);
    remove.addEventListener("click", () => deleteConversation(conversation));
    item.append(open, rename, remove);
    list.append(item);
  }
  if (!store.list.length) list.append(element("li", "empty", "No conversations yet"));
}

// On a narrow screen the chat list and the settings are drawers over the conversation.
function toggleDrawer(id) {
  const open = !$(id).classList.contains("open");
  closeDrawers();
  $(id).classList.toggle("open", open);
  $("backdrop").hidden = !open;
}

function closeDrawers() {
  for (const id of ["conversations", "settings"]) $(id).classList.remove("open");
  $("backdrop").hidden = true;
}

for (const id of SETTINGS) {
  const saved = localStorage.getItem(SETTINGS_PREFIX + id);
  if (saved !== null) $(id).value = saved;
  $(id).addEventListener("input", () => localStorage.setItem(SETTINGS_PREFIX + id, $(id).value));
}
$("api_key").addEventListener("change", () => status.refresh());
$("composer").addEventListener("submit", send);
$("prompt").addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey && !event.isComposing) send(event);
});
$("stop").addEventListener("click", () => controller?.abort());
$("new_chat").addEventListener("click", () => openConversation(null));
$("show_chats").addEventListener("click", () => toggleDrawer("conversations"));
$("show_settings").addEventListener("click", () => toggleDrawer("settings"));
for (const close of document.querySelectorAll(".close-drawer")) close.addEventListener("click", closeDrawers);
$("backdrop").addEventListener("click", closeDrawers);
document.addEventListener("keydown", (event) => event.key === "Escape" && closeDrawers());
renderConversation();
renderList();
status.refresh();
