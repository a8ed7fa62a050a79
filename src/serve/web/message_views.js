// The chat page's messages on screen: a user's (plain text), an assistant's (reasoning folded,
// the answer as markdown, tool calls, and its numbers), a tool result. Model text reaches the page
// only as text nodes (markdown.js builds the answer's nodes).
import { renderMarkdown } from "./markdown.js";

export function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

export function button(className, text, title) {
  const node = element("button", className, text);
  node.type = "button";
  if (title) node.title = node.ariaLabel = title;
  return node;
}

export function messageNode(role, title) {
  const node = element("div", `message ${role}`);
  node.append(element("div", "role", title));
  return node;
}

export function userView(message) {
  const node = messageNode("user", "You");
  node.append(element("div", "user-text", message.content));
  return node;
}

export function toolResultView(message) {
  const node = messageNode("tool", "Tool result");
  node.append(element("pre", "tool-args", message.content));
  return node;
}

// One line of numbers under a reply: "34 tokens · 41.2 tok/s · first token 0.18 s · 1.0 s".
export function statsText(stats) {
  const parts = [];
  if (stats.completion_tokens !== undefined) parts.push(`${stats.completion_tokens} tokens`);
  if (stats.tokens_per_second) parts.push(`${stats.tokens_per_second.toFixed(1)} tok/s`);
  if (stats.ttft_seconds !== undefined) parts.push(`first token ${stats.ttft_seconds.toFixed(2)} s`);
  if (stats.seconds !== undefined) parts.push(`${stats.seconds.toFixed(1)} s`);
  if (stats.finish_reason === "length") parts.push("cut at max_tokens");
  if (stats.finish_reason === "abort") parts.push("stopped");
  return parts.join(" · ");
}

// An assistant message, filled in as deltas arrive (or at once from a saved message).
export class AssistantView {
  constructor() {
    this.node = messageNode("assistant", "Assistant");
    this.reasoning = element("details", "reasoning");
    this.reasoning.hidden = true;
    this.summary = element("summary", "", "Thinking…");
    this.reasoningText = element("div", "reasoning-text");
    this.reasoning.append(this.summary, this.reasoningText);
    this.answer = element("div", "answer");
    this.tools = element("div", "tool-calls");
    this.node.append(this.reasoning, this.answer, this.tools);
    this.content = "";
    this.calls = []; // {id, name, arguments, view, nameView, argsView}
    this.drawPending = false;
  }

  static fromMessage(message) {
    const view = new AssistantView();
    if (message.reasoning_content) view.addReasoning(message.reasoning_content);
    view.content = message.content ?? "";
    view.draw();
    (message.tool_calls ?? []).forEach((call, index) =>
      view.addToolDelta({ index, id: call.id, function: call.function }));
    view.finish(message.stats ?? {});
    return view;
  }

  addReasoning(text) {
    this.reasoning.hidden = false;
    this.reasoningText.textContent += text;
  }

  // The answer is drawn again from its whole text, at most once a frame: markdown read from a
  // prefix can change meaning when the rest arrives (a fence, a table's second line).
  addContent(text) {
    this.content += text;
    if (this.drawPending) return;
    this.drawPending = true;
    requestAnimationFrame(() => this.draw());
  }

  draw() {
    this.drawPending = false;
    this.answer.replaceChildren(renderMarkdown(this.content));
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

  finish(stats) {
    this.draw();
    this.summary.textContent = `Reasoning (${this.reasoningText.textContent.length} characters)`;
    for (const call of this.calls) {
      call.nameView.textContent = call.name;
      try {
        call.argsView.textContent = JSON.stringify(JSON.parse(call.arguments), null, 2);
      } catch {} // left as sent
    }
    const text = statsText(stats);
    if (!text) return;
    const line = element("div", "stats", text);
    if (stats.seconds !== undefined) line.dataset.seconds = stats.seconds;
    if (stats.ttft_seconds !== undefined) line.dataset.ttftSeconds = stats.ttft_seconds;
    if (stats.tokens_per_second) line.dataset.tokensPerSecond = stats.tokens_per_second;
    if (stats.rate_over) line.dataset.rateOver = stats.rate_over;
    if (stats.rate_over === "request") line.title = "tok/s over the whole request: the tokens arrived at once";
    this.node.append(line);
  }

  // The OpenAI message this view shows.
  message(stats) {
    const message = { role: "assistant", content: this.content || null };
    if (this.reasoningText.textContent) message.reasoning_content = this.reasoningText.textContent;
    if (this.calls.length) {
      message.tool_calls = this.calls.map((c) => ({
        id: c.id, type: "function", function: { name: c.name, arguments: c.arguments },
      }));
    } else {
      message.content ??= "";
    }
    message.stats = stats;
    return message;
  }
}
