#!/usr/bin/env python3
"""scripts/check_layers.py catches what it is there to catch: upward includes (also from a
subfolder, also through a relative path), includes between independent layers, and gates reaching
past base; it ignores system includes and comments, and refuses a src/ folder the map does not
name. Run as `check_layers_test.py REPO_ROOT` (ctest passes the source tree)."""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(sys.argv.pop(1) if len(sys.argv) > 1 else
                       os.path.join(os.path.dirname(__file__), "..", ".."))
CHECKER = os.path.join(ROOT, "scripts", "check_layers.py")


def run_checker(root):
    done = subprocess.run([sys.executable, CHECKER, "--root", root], capture_output=True,
                          text=True, check=False)
    return done.returncode, done.stdout + done.stderr


class FakeTree(unittest.TestCase):
    """A tree of a few files, one folder per layer, built fresh for each test."""

    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="check_layers_")
        self.addCleanup(shutil.rmtree, self.root)
        self.write("src/base/error.h", "#pragma once\n")
        self.write("src/model/model.h", '#pragma once\n#include "kernels/ops.h"\n')
        self.write("src/kernels/ops.h", '#pragma once\n#include "base/error.h"\n')
        self.write("src/kernels/cpu/cpu_ops.h", '#include "kernels/ops.h"\n#include "local.h"\n')
        self.write("src/kernels/cpu/local.h", "#pragma once\n")

    def write(self, rel, text):
        path = os.path.join(self.root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)

    def assert_caught(self, path, line, layer, target):
        rc, out = run_checker(self.root)
        self.assertEqual(rc, 1, out)
        self.assertIn(f"{path}:{line}: layer {layer} includes", out)
        self.assertIn(f"of layer {target}", out)

    def test_clean_tree_passes(self):
        rc, out = run_checker(self.root)
        self.assertEqual(rc, 0, out)

    def test_upward_include_is_named_with_file_line_and_layers(self):
        self.write("src/kernels/x.cc", '// one\n#include <vector>\n#include "model/model.h"\n')
        self.assert_caught("src/kernels/x.cc", 3, "kernels", "model")

    def test_upward_include_in_a_subfolder(self):
        self.write("src/kernels/cpu/y.h", '#pragma once\n  #  include "model/model.h"\n')
        self.assert_caught("src/kernels/cpu/y.h", 2, "kernels", "model")

    def test_relative_path_counts_as_the_folder_it_reaches(self):
        self.write("src/kernels/cpu/z.cc", '#include "../../model/model.h"\n')
        self.assert_caught("src/kernels/cpu/z.cc", 1, "kernels", "model")

    def test_system_includes_and_comments_are_ignored(self):
        self.write("src/kernels/w.cc",
                   '#include <model/model.h>\n// #include "model/model.h"\n#include "base/error.h"\n')
        rc, out = run_checker(self.root)
        self.assertEqual(rc, 0, out)

    def test_independent_layers_include_neither_way(self):
        self.write("src/text/t.cc", '#include "checkpoint/model_config.h"\n')
        self.write("src/checkpoint/c.cc", '#include "text/utf8.h"\n')
        rc, out = run_checker(self.root)
        self.assertEqual(rc, 1, out)
        self.assertIn("src/text/t.cc:1: layer text includes", out)
        self.assertIn("src/checkpoint/c.cc:1: layer checkpoint includes", out)
        self.assertIn("of layer text (beside it, independent)", out)

    def test_gates_reaches_base_only(self):
        self.write("src/gates/g.cc", '#include "base/error.h"\n#include "runtime/engine.h"\n')
        self.assert_caught("src/gates/g.cc", 2, "gates", "runtime")

    def test_a_folder_outside_the_map_is_refused(self):
        self.write("src/extra/e.cc", "\n")
        rc, out = run_checker(self.root)
        self.assertEqual(rc, 2, out)
        self.assertIn("src/extra/", out)


class RealTree(unittest.TestCase):
    """A copy of the real src/: it passes, and one planted include makes it fail."""

    def test_planted_include_in_a_copy_of_src(self):
        root = tempfile.mkdtemp(prefix="check_layers_real_")
        self.addCleanup(shutil.rmtree, root)
        shutil.copytree(os.path.join(ROOT, "src"), os.path.join(root, "src"))
        rc, out = run_checker(root)
        self.assertEqual(rc, 0, out)
        with open(os.path.join(root, "src", "kernels", "cpu", "planted.cc"), "w",
                  encoding="utf-8") as f:
            f.write('#include "kernels/ops.h"\n#include "serve/http_server.h"\n')
        rc, out = run_checker(root)
        self.assertEqual(rc, 1, out)
        self.assertIn("src/kernels/cpu/planted.cc:2: layer kernels includes", out)
        self.assertIn("of layer serve (above it)", out)


if __name__ == "__main__":
    unittest.main(verbosity=2)
