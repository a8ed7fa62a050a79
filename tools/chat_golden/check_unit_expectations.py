#!/usr/bin/env python3
"""Re-checks the expected strings of tests/unit/jinja/*_test.cc against Python jinja2 configured
as transformers configures it: every `render(R"j(TEMPLATE)j"[, R"j(CONTEXT)j"]), R"j(EXPECTED)j"`
in those files is rendered and compared.

    python3 tools/chat_golden/check_unit_expectations.py     (needs Debian's python3-jinja2)
"""
import glob
import json
import os
import re
import sys

import jinja2.ext
from jinja2.sandbox import ImmutableSandboxedEnvironment

sys.path.insert(0, os.path.dirname(__file__))
from render_jinja2 import raise_exception, strftime_now, tojson  # noqa: E402

RAW = r'R"j\(((?:(?!\)j").)*)\)j"'
CASE = re.compile(r"render\(" + RAW + r"(?:,\s*" + RAW + r")?\),\s*" + RAW, re.S)


def main():
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    root = os.path.join(os.path.dirname(__file__), "../../tests/unit/jinja")
    checked = failed = 0
    for path in sorted(glob.glob(os.path.join(root, "*_test.cc"))):
        for match in CASE.finditer(open(path, encoding="utf-8").read()):
            template, context, expected = match.group(1), match.group(2), match.group(3)
            try:
                got = env.from_string(template).render(**json.loads(context or "{}"))
            except Exception as error:  # report, keep checking the rest
                got = f"<error {error}>"
            checked += 1
            if got != expected:
                failed += 1
                print(f"{os.path.basename(path)}: {template!r}\n  jinja2:   {got!r}\n  expected: {expected!r}")
    print(f"{checked} expectations checked, {failed} differ")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
