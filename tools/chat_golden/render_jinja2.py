#!/usr/bin/env python3
"""Renders every case of tests/data/chat/conversations.json with Python jinja2 set up the way
transformers' apply_chat_template sets it up (ImmutableSandboxedEnvironment, trim_blocks,
lstrip_blocks, loopcontrols, json.dumps-based tojson, raise_exception, strftime_now).

    python3 render_jinja2.py TEMPLATE.jinja CONVERSATIONS.json  > renderings.json

Prints {"jinja2_version": ..., "cases": {name: {"output": str} | {"error": str}}}. Called by
make_golden.mjs; needs Debian's python3-jinja2 (nothing from PyPI).
"""
import json
import sys
from datetime import datetime

import jinja2
import jinja2.ext
from jinja2.sandbox import ImmutableSandboxedEnvironment


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    # transformers replaces jinja2's HTML-escaping tojson with plain json.dumps.
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                      sort_keys=sort_keys)


def strftime_now(fmt):
    return datetime.now().strftime(fmt)


def main():
    template_path, conversations_path = sys.argv[1], sys.argv[2]
    with open(template_path, encoding="utf-8") as f:
        source = f.read()
    with open(conversations_path, encoding="utf-8") as f:
        conversations = json.load(f)
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    template = env.from_string(source)
    results = {}
    for case in conversations["cases"]:
        context = dict(case["context"])
        tools = context.get("tools")
        if isinstance(tools, str) and tools.startswith("@"):
            context["tools"] = conversations["tool_sets"][tools[1:]]
        try:
            results[case["name"]] = {"output": template.render(**context)}
        except Exception as error:  # the golden records the message of any failure
            results[case["name"]] = {"error": str(error)}
    json.dump({"jinja2_version": jinja2.__version__, "cases": results}, sys.stdout,
              ensure_ascii=False)


if __name__ == "__main__":
    main()
