// The server's state in the chat page's header: a dot and a short text. /health (open, it needs
// no key) says whether the server answers; /v1/models then gives the model's name and tells whether
// the API key works. Polled, so that a stopped server shows as "cannot reach the server at
// HOST:PORT" before anyone sends, instead of a request failing with the browser's "Failed to fetch".

const POLL_MS = 5000, POLL_DOWN_MS = 2000; // faster while down, to notice the server come back

export const unreachableText = () => `cannot reach the server at ${location.host}`;

// The model id's last path component: "MiniMaxAI/MiniMax-M2" → "MiniMax-M2".
export const shortModelName = (id) => id.split("/").filter(Boolean).pop() ?? id;

export class ServerStatus {
  // `node` holds the dot and the text; `headers()` gives the request headers (the API key).
  constructor(node, headers) {
    this.node = node;
    this.text = node.querySelector(".status-text");
    this.headers = headers;
    this.timer = null;
    this.state = "connecting";
  }

  show(state, text, title = text) {
    this.state = state;
    this.node.dataset.state = state; // the dot's colour (chat.css)
    this.text.textContent = text;
    this.node.title = title;
  }

  // Says at once that the server is gone (a request just failed to connect) and polls sooner.
  markUnreachable() {
    this.show("down", unreachableText());
    this.schedule(POLL_DOWN_MS);
  }

  async refresh() {
    clearTimeout(this.timer);
    try {
      const health = await fetch("health", { cache: "no-store" });
      if (!health.ok) {
        this.show("down", `server at ${location.host} answers ${health.status}`);
      } else {
        const models = await fetch("v1/models", { headers: this.headers(), cache: "no-store" });
        if (models.status === 401) {
          this.show("key", "API key needed: enter it in Settings");
        } else if (!models.ok) {
          this.show("down", `server at ${location.host} answers ${models.status}`);
        } else {
          const ids = (await models.json()).data.map((m) => m.id);
          this.show("ok", ids.map(shortModelName).join(", "), `model: ${ids.join(", ")} at ${location.host}`);
        }
      }
    } catch {
      this.show("down", unreachableText());
    }
    this.schedule(this.state === "down" ? POLL_DOWN_MS : POLL_MS);
  }

  schedule(ms) {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.refresh(), ms);
  }
}
