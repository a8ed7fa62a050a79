#!/usr/bin/env python3
"""Fails when a file under src/ includes a header of a layer it must not reach.

Every library's include path is all of src/, so the compiler accepts an upward include; the CMake
link graph only catches one that also calls code. This script is where the layer map lives
(docs/architecture.md explains it): LAYERS is the order, bottom to top, and a file in src/<L>/
(subfolders included) may write `#include "<M>/..."` only for M in allowed(L). System includes
<...> are not looked at.

    python3 scripts/check_layers.py [--root REPO] [--list]

Exit status: 0 when every include is allowed, 1 when one is not (each is printed as
`path:line: ...` naming both layers), 2 when the tree is not as expected (no src/, or a folder
in src/ that is not a layer: a new layer has to be placed in the map first).
"""

import argparse
import os
import re
import sys

# Bottom to top. A layer may include the layers below it and itself, except as restricted below.
LAYERS = [
    "base", "formats", "text", "checkpoint", "kernels", "parallel", "model", "runtime", "gates",
    "serve", "cli",
]

# Layers that sit beside each other although the order puts one above the other: neither may
# include the other. The tokenizer and templates (text) are independent of the checkpoint,
# kernels, collectives and model math; only runtime and above bring the two together.
INDEPENDENT = [("text", layer) for layer in ("checkpoint", "kernels", "parallel", "model")]

# Layers that may reach less than the order allows. gates is an HTTP client of running servers
# (it knows the OpenAI API, not the engine), so it stands above runtime only for the command line.
ONLY = {"gates": {"base"}}

SOURCE_SUFFIXES = (".h", ".hh", ".hpp", ".inc", ".c", ".cc", ".cpp", ".cu", ".cuh")
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def allowed(layer):
    """The layers a file of `layer` may include, itself among them."""
    below = set(LAYERS[: LAYERS.index(layer) + 1])
    for a, b in INDEPENDENT:
        if layer == a:
            below.discard(b)
        if layer == b:
            below.discard(a)
    if layer in ONLY:
        below &= ONLY[layer] | {layer}
    return below


def included_layer(src, source_dir, target):
    """The layer of the header `target` names, or None when it is not under src/<layer>/.

    Paths are taken as the compiler does: relative to the including file's folder first (so that
    "../model/x.h" counts as model), then relative to src/, the include path of every library.
    """
    local = os.path.normpath(os.path.join(source_dir, target))
    relative = target.startswith(("./", "../")) or os.path.exists(local)
    rel = os.path.relpath(local if relative else os.path.normpath(os.path.join(src, target)), src)
    first = rel.split(os.sep)[0]
    return first if first in LAYERS else None


def check(root):
    src = os.path.join(root, "src")
    if not os.path.isdir(src):
        print(f"check_layers: {src}: no such folder", file=sys.stderr)
        return 2
    unknown = sorted(d for d in os.listdir(src)
                     if os.path.isdir(os.path.join(src, d)) and d not in LAYERS)
    if unknown:
        print(f"check_layers: src/{unknown[0]}/ is not in the layer map "
              f"(scripts/check_layers.py LAYERS: {', '.join(LAYERS)})", file=sys.stderr)
        return 2

    violations, files, includes = [], 0, 0
    for layer in LAYERS:
        reach = allowed(layer)
        for dirpath, dirnames, filenames in os.walk(os.path.join(src, layer)):
            dirnames.sort()
            for name in sorted(filenames):
                if not name.endswith(SOURCE_SUFFIXES):
                    continue
                path = os.path.join(dirpath, name)
                files += 1
                with open(path, encoding="utf-8", errors="replace") as f:
                    for number, line in enumerate(f, 1):
                        match = INCLUDE.match(line)
                        if not match:
                            continue
                        includes += 1
                        target = included_layer(src, dirpath, match.group(1))
                        if target is None or target in reach:
                            continue
                        why = ("beside it, independent" if target in LAYERS[: LAYERS.index(layer)]
                               else "above it")
                        violations.append(
                            f"{os.path.relpath(path, root)}:{number}: layer {layer} includes "
                            f"\"{match.group(1)}\" of layer {target} ({why}); {layer} may include "
                            f"{', '.join(l for l in LAYERS if l in reach)}")
    for v in violations:
        print(v)
    if violations:
        print(f"check_layers: {len(violations)} include(s) against the layer map "
              "(docs/architecture.md)", file=sys.stderr)
        return 1
    print(f"check_layers: {files} files, {includes} quoted includes, all within the layer map")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."),
                        help="repository root (default: the one holding this script)")
    parser.add_argument("--list", action="store_true",
                        help="print what each layer may include and exit")
    args = parser.parse_args()
    if args.list:
        for layer in LAYERS:
            print(f"{layer}: {', '.join(l for l in LAYERS if l in allowed(layer))}")
        return 0
    return check(os.path.abspath(args.root))


if __name__ == "__main__":
    sys.exit(main())
