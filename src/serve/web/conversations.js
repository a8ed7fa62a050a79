// The chat page's conversations, kept in this browser's localStorage (docs/api.md "Chat page"):
// one key holds them all, most recently used first, each {id, title, updated, messages}; another
// names the open one, so that a reload returns to it. `messages` are OpenAI chat messages; an
// assistant message may carry `stats` (its tok/s and time to first token), which requests leave out.

const LIST_KEY = "minimax-chat.conversations";
const OPEN_KEY = "minimax-chat.open";
const TITLE_LENGTH = 60;

const isConversation = (c) =>
  c && typeof c.id === "string" && typeof c.title === "string" && Array.isArray(c.messages);

export class ConversationStore {
  constructor() {
    try {
      const saved = JSON.parse(localStorage.getItem(LIST_KEY) ?? "[]");
      this.list = Array.isArray(saved) ? saved.filter(isConversation) : [];
    } catch {
      this.list = []; // unreadable (edited by hand): start afresh rather than not at all
    }
  }

  get(id) {
    return this.list.find((c) => c.id === id) ?? null;
  }

  // The conversation open at the last visit, or null.
  lastOpen() {
    return this.get(localStorage.getItem(OPEN_KEY));
  }

  setOpen(conversation) {
    if (conversation) localStorage.setItem(OPEN_KEY, conversation.id);
    else localStorage.removeItem(OPEN_KEY);
  }

  // A new conversation titled after its first message, first in the list.
  create(firstMessage) {
    const title = firstMessage.trim().replace(/\s+/g, " ");
    const conversation = {
      id: `c${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`,
      title: title.length > TITLE_LENGTH ? `${title.slice(0, TITLE_LENGTH - 1)}…` : title,
      updated: Date.now(),
      messages: [],
    };
    this.list.unshift(conversation);
    return conversation;
  }

  // Writes `conversation` (changed) back, moved to the top of the list. Throws when the browser's
  // storage is full, for the caller to say so.
  touch(conversation) {
    conversation.updated = Date.now();
    const index = this.list.indexOf(conversation);
    if (index > 0) {
      this.list.splice(index, 1);
      this.list.unshift(conversation);
    }
    this.save();
  }

  rename(conversation, title) {
    conversation.title = title.trim() || conversation.title;
    this.save();
  }

  remove(conversation) {
    this.list = this.list.filter((c) => c !== conversation);
    this.save();
  }

  save() {
    try {
      localStorage.setItem(LIST_KEY, JSON.stringify(this.list));
    } catch (error) {
      throw new Error(`This browser's storage is full (${error.name}): delete old conversations to keep new ones.`);
    }
  }
}

// The messages as a request sends them: without what only the page keeps.
export function requestMessages(messages) {
  return messages.map(({ stats, ...message }) => message);
}
