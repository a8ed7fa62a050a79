// Markdown → DOM nodes for the chat page's replies (docs/api.md "Chat page"). Every node is made
// with createElement and every piece of model text goes in as a text node, so nothing the model
// writes is ever parsed as HTML; links keep http(s) targets only, anything else stays text.
// A subset on purpose: headings, paragraphs, emphasis, strikethrough, lists (nested by
// indentation), block quotes, rules, inline code, fenced code blocks with a copy button, and
// GitHub-style tables. A fence that is not closed yet (a reply still streaming) runs to the end.

const MAX_DEPTH = 8; // nested lists and quotes deeper than this stay text: no runaway recursion
const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)/;
const HEADING = /^ {0,3}(#{1,6})\s+(.*?)(\s+#+)?\s*$/;
const RULE = /^ {0,3}([-*_])(\s*\1){2,}\s*$/;
const LIST_ITEM = /^( *)([-*+]|\d{1,9}[.)])(\s+(.*))?$/;
const QUOTE = /^ {0,3}>\s?(.*)$/;
const TABLE_RULE = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

const indentOf = (line) => line.length - line.trimStart().length;
const isTableStart = (lines, i) =>
  lines[i].includes("|") && i + 1 < lines.length && lines[i + 1].includes("|") &&
  lines[i + 1].includes("-") && TABLE_RULE.test(lines[i + 1]);
const startsBlock = (lines, i) =>
  FENCE.test(lines[i]) || HEADING.test(lines[i]) || RULE.test(lines[i]) || QUOTE.test(lines[i]) ||
  (LIST_ITEM.test(lines[i]) && LIST_ITEM.exec(lines[i])[4]) || isTableStart(lines, i);

// The nodes for `text` as a DocumentFragment.
export function renderMarkdown(text, depth = 0) {
  const out = document.createDocumentFragment();
  const lines = text.replaceAll("\r\n", "\n").replaceAll("\t", "    ").split("\n");
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    let m;
    if (!line.trim()) i++;
    else if ((m = FENCE.exec(line))) i = codeBlock(lines, i, m, out);
    else if ((m = HEADING.exec(line))) {
      out.append(inline(el(`h${m[1].length}`), m[2]));
      i++;
    } else if (RULE.test(line)) {
      out.append(el("hr"));
      i++;
    } else if (isTableStart(lines, i)) i = table(lines, i, out);
    else if (depth < MAX_DEPTH && QUOTE.test(line)) i = quote(lines, i, out, depth);
    else if (depth < MAX_DEPTH && LIST_ITEM.test(line)) i = list(lines, i, out, depth);
    else i = paragraph(lines, i, out);
  }
  return out;
}

function paragraph(lines, start, out) {
  let i = start + 1;
  while (i < lines.length && lines[i].trim() && !startsBlock(lines, i)) i++;
  out.append(inline(el("p"), lines.slice(start, i).map((l) => l.trim()).join("\n")));
  return i;
}

function codeBlock(lines, start, open, out) {
  const close = new RegExp(`^ {0,3}${open[1][0] === "`" ? "`" : "~"}{${open[1].length},}\\s*$`);
  let i = start + 1;
  while (i < lines.length && !close.test(lines[i])) i++;
  out.append(codeView(lines.slice(start + 1, i).join("\n"), open[2]));
  return i + 1; // past the closing fence (or the end)
}

// A code block: its language, a copy button, and the code in monospace.
function codeView(code, language) {
  const block = el("div", "code-block");
  const head = el("div", "code-head");
  const copy = el("button", "copy", "Copy");
  copy.type = "button";
  copy.addEventListener("click", () => {
    copyText(code).then(
      () => flash(copy, "Copied"),
      () => flash(copy, "Copy failed"));
  });
  head.append(el("span", "code-language", language || "code"), copy);
  const pre = el("pre");
  pre.append(el("code", language ? `language-${language}` : "", code));
  block.append(head, pre);
  return block;
}

function flash(button, text) {
  button.textContent = text;
  setTimeout(() => (button.textContent = "Copy"), 1500);
}

// The clipboard API needs a secure context (https or loopback); a page opened over plain http from
// another machine falls back to the older copy command on a hidden text box.
async function copyText(text) {
  if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
  const area = el("textarea", "offscreen");
  area.value = text;
  document.body.append(area);
  area.select();
  const copied = document.execCommand("copy");
  area.remove();
  if (!copied) throw new Error("the browser refused to copy");
}

function quote(lines, start, out, depth) {
  let i = start;
  const inner = [];
  while (i < lines.length && QUOTE.test(lines[i])) inner.push(QUOTE.exec(lines[i++])[1]);
  const node = el("blockquote");
  node.append(renderMarkdown(inner.join("\n"), depth + 1));
  out.append(node);
  return i;
}

// One list: items at the first item's indentation; lines indented past the marker (nested lists
// included) belong to the item above them.
function list(lines, start, out, depth) {
  const first = LIST_ITEM.exec(lines[start]);
  const indent = first[1].length, ordered = /\d/.test(first[2]);
  const node = el(ordered ? "ol" : "ul");
  if (ordered && parseInt(first[2], 10) !== 1) node.start = parseInt(first[2], 10);
  let i = start;
  for (;;) {
    const m = i < lines.length ? LIST_ITEM.exec(lines[i]) : null;
    if (!m || m[1].length !== indent || /\d/.test(m[2]) !== ordered) break;
    const contentIndent = indent + m[2].length + 1;
    const body = [m[4] ?? ""];
    for (i++; i < lines.length; i++) {
      const line = lines[i];
      if (!line.trim()) { // a blank line continues the item only when indented text follows
        let next = i + 1;
        while (next < lines.length && !lines[next].trim()) next++;
        if (next < lines.length && indentOf(lines[next]) >= contentIndent) { body.push(""); continue; }
        break;
      }
      const item = LIST_ITEM.exec(line);
      if (item && item[1].length <= indent) break; // the next item, or an outer list's
      if (indentOf(line) < contentIndent && !item && startsBlock(lines, i)) break;
      body.push(line.slice(Math.min(indentOf(line), contentIndent)));
    }
    const li = el("li");
    li.append(renderMarkdown(body.join("\n"), depth + 1));
    node.append(li);
  }
  out.append(node);
  return i;
}

function tableCells(line) {
  let text = line.trim();
  if (text.startsWith("|")) text = text.slice(1);
  if (text.endsWith("|") && !text.endsWith("\\|")) text = text.slice(0, -1);
  return text.split(/(?<!\\)\|/).map((cell) => cell.trim().replaceAll("\\|", "|"));
}

function table(lines, start, out) {
  const alignments = tableCells(lines[start + 1]).map((rule) =>
    rule.startsWith(":") && rule.endsWith(":") ? "align-center" : rule.endsWith(":") ? "align-right" : "");
  const row = (cells, tag) => {
    const tr = el("tr");
    alignments.forEach((align, column) => tr.append(inline(el(tag, align), cells[column] ?? "")));
    return tr;
  };
  const head = el("thead"), body = el("tbody");
  head.append(row(tableCells(lines[start]), "th"));
  let i = start + 2;
  for (; i < lines.length && lines[i].trim() && lines[i].includes("|"); i++)
    body.append(row(tableCells(lines[i]), "td"));
  const tableNode = el("table");
  tableNode.append(head, body);
  const wrap = el("div", "table-wrap"); // wide tables scroll inside the message, not the page
  wrap.append(tableNode);
  out.append(wrap);
  return i;
}

// Inline spans, earliest match first; each kind's next match is cached so that a long text is
// scanned once per kind, not once per span.
const INLINE = [
  ["escape", /\\([\\`*_{}[\]()#+\-.!|~>])/g],
  ["code", /(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)/g],
  ["link", /\[([^\]\n]*)\]\(\s*<?([^\s()<>]*(?:\([^\s()]*\)[^\s()<>]*)*)>?(?:\s+"[^"\n]*")?\s*\)/g],
  ["url", /https?:\/\/[^\s<>"]*[^\s<>"'.,;:!?)\]}*_~]/g],
  ["strong", /\*\*(?=\S)([\s\S]*?\S)\*\*|(?<!\w)__(?=\S)([\s\S]*?\S)__(?!\w)/g],
  ["strike", /~~(?=\S)([\s\S]*?\S)~~/g],
  ["em", /\*(?=[^\s*])([\s\S]*?[^\s*\\])\*(?!\*)|(?<!\w)_(?=[^\s_])([\s\S]*?[^\s_\\])_(?!\w)/g],
];
const MAX_INLINE_DEPTH = 6;

// Appends `text`'s inline spans to `parent` and returns it; newlines become <br>. Inside a link's
// label `links` is false: a link inside a link is not allowed in HTML.
function inline(parent, text, depth = 0, links = true) {
  const next = new Map(); // kind → its next match at or after `position` (null: none left)
  let position = 0;
  for (;;) {
    let best = null;
    for (const [kind, pattern] of INLINE) {
      if ((depth >= MAX_INLINE_DEPTH && kind !== "escape") || (!links && (kind === "link" || kind === "url")))
        continue;
      let match = next.get(kind);
      if (match === undefined || (match && match.index < position)) {
        pattern.lastIndex = position;
        match = pattern.exec(text);
        next.set(kind, match);
      }
      if (match && (!best || match.index < best.match.index)) best = { kind, match };
    }
    if (!best) break;
    plain(parent, text.slice(position, best.match.index));
    span(parent, best.kind, best.match, depth, links);
    position = best.match.index + best.match[0].length;
  }
  plain(parent, text.slice(position));
  return parent;
}

function plain(parent, text) {
  text.split("\n").forEach((line, i) => {
    if (i > 0) parent.append(el("br"));
    if (line) parent.append(document.createTextNode(line));
  });
}

function span(parent, kind, match, depth, links) {
  switch (kind) {
    case "escape": parent.append(document.createTextNode(match[1])); break;
    case "code": parent.append(el("code", "", match[2].replace(/^ (.*) $/s, "$1"))); break;
    case "link": link(parent, match[1], match[2], match[0], depth); break;
    case "url": link(parent, match[0], match[0], match[0], depth); break;
    case "strong": parent.append(inline(el("strong"), match[1] ?? match[2], depth + 1, links)); break;
    case "strike": parent.append(inline(el("del"), match[1], depth + 1, links)); break;
    case "em": parent.append(inline(el("em"), match[1] ?? match[2], depth + 1, links)); break;
  }
}

// A link to an http(s) address opens in a new tab without a handle back to this page; any other
// target (javascript:, data:, a relative path) is shown as the text the model wrote.
function link(parent, label, target, source, depth) {
  let url = null;
  try {
    url = new URL(target);
  } catch {}
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) {
    parent.append(document.createTextNode(source));
    return;
  }
  const a = el("a");
  a.href = url.href;
  a.rel = "noopener noreferrer";
  a.target = "_blank";
  if (label === target) a.textContent = label;
  else inline(a, label, depth + 1, false);
  parent.append(a);
}
