// What tools/browser_test/chat_page_test.mjs measures inside the page: WCAG contrast ratios of
// the page's key texts from their computed colours, markdown cases rendered by the page's own
// markdown.js, and a canned reply in markdown (the bundled model writes none) streamed to the page
// in place of /v1/chat/completions, paced, as the server would stream it.

// The texts whose contrast must reach WCAG AA (4.5:1) against what is behind them.
export const CONTRAST_TARGETS = {
  "answer text": ".message.assistant .answer p",
  "user text": ".message.user .user-text",
  "role label": ".message .role",
  "numbers under a reply": ".message .stats",
  "reasoning summary": ".reasoning summary",
  "link": ".answer a",
  "inline code": ".answer :not(pre) > code",
  "code block": ".code-block pre code",
  "code language": ".code-language",
  "copy button": ".code-block .copy",
  "table header": ".answer th",
  "header status": ".status-text",
  "settings label": "#settings label",
  "note": ".note",
  "conversation title": "#conversation_list .open-conversation",
  "Send button": "#send",
  "New chat button": "#new_chat",
  "Regenerate button": ".regenerate",
};

// {name: ratio} for each target (null where the page has no such element), computed in the page:
// the text colour over the first opaque background behind it, translucent layers blended in.
export function contrastRatios(page) {
  return page.evaluate((targets) => {
    const rgba = (text) => {
      const parts = text.match(/[\d.]+/g)?.map(Number) ?? [0, 0, 0, 0];
      return [parts[0], parts[1], parts[2], parts[3] ?? 1];
    };
    const over = (top, bottom) => top.slice(0, 3).map((c, i) => c * top[3] + bottom[i] * (1 - top[3])).concat(1);
    const background = (node) => {
      const layers = [];
      for (let n = node; n; n = n.parentElement) {
        const color = rgba(getComputedStyle(n).backgroundColor);
        if (color[3] > 0) layers.push(color);
        if (color[3] === 1) break;
      }
      return layers.reduceRight((below, layer) => over(layer, below), [255, 255, 255, 1]);
    };
    const luminance = ([r, g, b]) => [r, g, b].map((c) => {
      const s = c / 255;
      return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    }).reduce((sum, c, i) => sum + c * [0.2126, 0.7152, 0.0722][i], 0);
    const result = {};
    for (const [name, selector] of Object.entries(targets)) {
      const node = document.querySelector(selector);
      if (!node) { result[name] = null; continue; }
      const behind = background(node);
      const text = over(rgba(getComputedStyle(node).color), behind);
      const [light, dark] = [luminance(text), luminance(behind)].sort((a, b) => b - a);
      result[name] = (light + 0.05) / (dark + 0.05);
    }
    return result;
  }, CONTRAST_TARGETS);
}

// A reply a coding model writes: every kind of markdown the page renders, and two traps.
export const CODE = 'words = ["pear", "fig", "apple"]\nprint(sorted(words, key=len))  # a comment long enough to pass the width of any phone screen';
export const MARKDOWN_REPLY = `## Sorting in Python

Use **\`sorted()\`** for a *new* list; ~~never~~ \`list.sort()\` sorts in place:

\`\`\`python
${CODE}
\`\`\`

| method | returns | stable |
|:--|:-:|--:|
| \`sorted()\` | a new list | yes |
| \`list.sort()\` | None | yes |

1. Read the [sorting how-to](https://docs.python.org/3/howto/sorting.html).
2. Then:
   - keys
   - reverse=True

<img src=x onerror="window.__pwned=1"> and [a trap](javascript:window.__pwned=2) stay text.`;

// The server-sent events of a streamed chat completion of MARKDOWN_REPLY, as `minimax serve`
// sends them: reasoning first, the content in pieces, then finish_reason and usage.
export const MARKDOWN_TOKENS = 120;
export function markdownEvents() {
  const event = (choices, extra = {}) => `data: ${JSON.stringify({
    id: "chatcmpl-canned", object: "chat.completion.chunk", created: 0, model: "canned", choices, ...extra })}\n\n`;
  const delta = (d) => event([{ index: 0, delta: d, finish_reason: null }]);
  const events = [delta({ role: "assistant", reasoning_content: "The user wants sorting explained." })];
  for (let i = 0; i < MARKDOWN_REPLY.length; i += 40) events.push(delta({ content: MARKDOWN_REPLY.slice(i, i + 40) }));
  events.push(event([{ index: 0, delta: {}, finish_reason: "stop" }]));
  events.push(event([], { usage: { prompt_tokens: 20, completion_tokens: MARKDOWN_TOKENS, total_tokens: 140 } }));
  return [...events, "data: [DONE]\n\n"];
}

// Makes the page's next POST to v1/chat/completions answer `events`, one every `gapMs`, from a
// stream inside the page (the browser's route interception delivers a body at once, and the
// page's pacing is what this checks). Before each event it notes in window.__drawnWhileStreaming
// whether the reply already shows a code block: the answer is drawn while it arrives.
export function answerNextChatWith(page, events, gapMs) {
  return page.evaluate(({ events, gapMs }) => {
    const realFetch = window.fetch;
    window.__drawnWhileStreaming = false;
    window.fetch = async (url, options) => {
      if (!String(url).endsWith("v1/chat/completions")) return realFetch(url, options);
      window.fetch = realFetch;
      const encoder = new TextEncoder();
      const body = new ReadableStream({
        async start(controller) {
          for (const event of events) {
            if (document.querySelector("#messages .message.assistant:last-child .code-block"))
              window.__drawnWhileStreaming = true;
            controller.enqueue(encoder.encode(event));
            await new Promise((resolve) => setTimeout(resolve, gapMs));
          }
          controller.close();
        },
      });
      return new Response(body, { status: 200, headers: { "Content-Type": "text/event-stream" } });
    };
  }, { events, gapMs });
}

// Markdown cases run through the page's renderMarkdown; each gives the rendered HTML to compare.
export const MARKDOWN_CASES = [
  ["an unclosed fence (a reply still streaming) is already code", "```js\nlet a = 1", "<div class=\"code-block\"><div class=\"code-head\"><span class=\"code-language\">js</span><button class=\"copy\" type=\"button\">Copy</button></div><pre><code class=\"language-js\">let a = 1</code></pre></div>"],
  ["snake_case is not emphasis", "call snake_case_name now", "<p>call snake_case_name now</p>"],
  ["emphasis, strong and a line break", "**a** and *b*\nnext", "<p><strong>a</strong> and <em>b</em><br>next</p>"],
  ["a data: link is text", "[x](data:text/html,hi)", "<p>[x](data:text/html,hi)</p>"],
  ["a bare address links without its full stop", "see https://example.com/a.",
    "<p>see <a href=\"https://example.com/a\" rel=\"noopener noreferrer\" target=\"_blank\">https://example.com/a</a>.</p>"],
  ["HTML is text", "<b onclick=x>hi</b>", "<p>&lt;b onclick=x&gt;hi&lt;/b&gt;</p>"],
  ["a heading and a rule", "# T\n---", "<h1>T</h1><hr>"],
  ["escapes", "\\*not em\\*", "<p>*not em*</p>"],
];

// Runs MARKDOWN_CASES in the page: [{what, expected, got}], plus the time two hostile inputs take.
export function renderCases(page) {
  return page.evaluate(async (cases) => {
    const { renderMarkdown } = await import("./markdown.js");
    const html = (text) => {
      const box = document.createElement("div");
      box.append(renderMarkdown(text));
      return box.innerHTML;
    };
    const results = cases.map(([what, text, expected]) => ({ what, expected, got: html(text) }));
    const started = performance.now();
    html("> ".repeat(5000) + "deep");
    html("*".repeat(20000) + "_".repeat(20000) + "[".repeat(5000));
    html("- a\n".repeat(300) + "  ".repeat(200) + "- deep");
    return { results, hostileMs: performance.now() - started };
  }, MARKDOWN_CASES);
}
