// Writes tests/data/chat/golden_<template>.json: every case of tests/data/chat/conversations.json
// rendered with each chat template, for the byte-for-byte tests in tests/unit/jinja.
//
//   cd tools/chat_golden && npm ci && node make_golden.mjs
//
// Two references render every case:
//   - @huggingface/jinja, the JavaScript Jinja that Hugging Face uses for chat templates;
//   - Python jinja2 configured as transformers' apply_chat_template configures it
//     (render_jinja2.py, needs Debian's python3-jinja2): this is what real servers run.
// The expected text is Python's. Where @huggingface/jinja renders differently (it parses JSON
// numbers like 1.0 as integers, prints None as "null", differs in Python-specific string forms),
// the case keeps the JavaScript rendering under "huggingface_jinja" so the difference stays visible
// (docs/chat_template.md lists them).
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Template } from '@huggingface/jinja';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../..');
const dataDir = path.join(repo, 'tests/data/chat');
const conversationsPath = path.join(dataDir, 'conversations.json');
const templates = {
  minimax_m2: 'templates/minimax_m2.jinja',
  minimax_m2_unsloth: 'tests/data/chat/minimax_m2_unsloth.jinja',
  minimax_m3: 'templates/minimax_m3.jinja',
};
const hfVersion = JSON.parse(fs.readFileSync(
    path.join(here, 'node_modules/@huggingface/jinja/package.json'), 'utf8')).version;
// Debian's interpreter has python3-jinja2; a python3 earlier on PATH (pyenv) may not.
const python = process.env.PYTHON ?? (fs.existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3');
const conversations = JSON.parse(fs.readFileSync(conversationsPath, 'utf8'));

function contextOf(testCase) {
  const context = { ...testCase.context };
  if (typeof context.tools === 'string' && context.tools.startsWith('@')) {
    context.tools = conversations.tool_sets[context.tools.slice(1)];
  }
  return context;
}

function renderJs(source) {
  const template = new Template(source);
  const results = {};
  for (const testCase of conversations.cases) {
    try {
      results[testCase.name] = { output: template.render(contextOf(testCase)) };
    } catch (error) {
      results[testCase.name] = { error: String(error.message ?? error) };
    }
  }
  return results;
}

function renderPython(templatePath) {
  const stdout = execFileSync(python, [path.join(here, 'render_jinja2.py'), templatePath,
    conversationsPath], { encoding: 'utf8', maxBuffer: 64 << 20 });
  return JSON.parse(stdout);
}

const sameResult = (a, b) => a.output === b.output && (a.output !== undefined || a.error === b.error);

for (const [name, relative] of Object.entries(templates)) {
  const templatePath = path.join(repo, relative);
  const js = renderJs(fs.readFileSync(templatePath, 'utf8'));
  const python = renderPython(templatePath);
  const cases = [];
  let differing = 0;
  for (const testCase of conversations.cases) {
    const expected = python.cases[testCase.name];
    const entry = { name: testCase.name, ...expected };
    if (!sameResult(expected, js[testCase.name])) {
      entry.huggingface_jinja = js[testCase.name];
      differing += 1;
    }
    cases.push(entry);
  }
  const golden = {
    template: relative,
    generator: `tools/chat_golden/make_golden.mjs: Python jinja2 ${python.jinja2_version} as ` +
        `transformers sets it up (expected), @huggingface/jinja ${hfVersion} (where it differs)`,
    cases,
  };
  const out = path.join(dataDir, `golden_${name}.json`);
  fs.writeFileSync(out, JSON.stringify(golden, null, 1) + '\n');
  console.log(`${out}: ${cases.length} cases, ${differing} differ in @huggingface/jinja`);
}
