#!/usr/bin/env python3
"""The CI checks of scripts/ catch what they are for (docs/conventions.md,
Rooms): scripts/check_layers.py on small trees with one wall broken each, and
scripts/check_format.sh on a git repository with a changed line laid out
badly. Deterministic: no false failures.
usage: check_scripts_test.py REPOSITORY_ROOT"""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "../.."))
LAYERS = os.path.join(ROOT, "scripts", "check_layers.py")
FORMAT = os.path.join(ROOT, "scripts", "check_format.sh")


def write(root, path, text):
    full = os.path.join(root, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w") as f:
        f.write(text)


def layers(root):
    result = subprocess.run([sys.executable, LAYERS, root], capture_output=True, text=True)
    return result.returncode, result.stdout


class CheckLayers(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp()
        # A clean tree: each room includes only rooms below it.
        write(self.root, "include/extshuffle/errors.hpp", "#pragma once\n")
        write(self.root, "include/extshuffle/core/plan.hpp", '#include "extshuffle/errors.hpp"\n')
        write(self.root, "include/extshuffle/job.hpp", '#include "extshuffle/core/plan.hpp"\n')
        write(self.root, "src/ioperm/walk_private.hpp", '#include "extshuffle/core/plan.hpp"\n')
        write(self.root, "src/layouts/fixed.cpp", '#include "ioperm/walk_private.hpp"\n')
        write(self.root, "src/dataset/input.cpp", '#include "extshuffle/core/plan.hpp"\n#include <vector>\n')
        write(self.root, "src/driver/run.cpp", '#include "extshuffle/job.hpp"\n#include <vector>\n')

    def tearDown(self):
        shutil.rmtree(self.root)

    def test_clean_tree_passes(self):
        self.assertEqual(layers(self.root), (0, ""))

    def test_the_repository_passes(self):
        code, out = layers(ROOT)
        self.assertEqual(code, 0, out)

    def test_include_of_a_room_above_fails(self):
        write(self.root, "include/extshuffle/core/bad.hpp", '#include "extshuffle/job.hpp"\n')
        code, out = layers(self.root)
        self.assertEqual(code, 1)
        self.assertIn("include/extshuffle/core/bad.hpp: includes include/extshuffle/job.hpp: room job is above room core", out)

    def test_walk_private_header_outside_the_walk_fails(self):
        write(self.root, "src/modes/index.cpp", '#include "ioperm/walk_private.hpp"\n')
        code, out = layers(self.root)
        self.assertEqual(code, 1)
        self.assertIn("src/modes/index.cpp: includes src/ioperm/walk_private.hpp, private to the walk", out)

    def test_circle_of_units_fails(self):
        write(self.root, "src/ioperm/a.hpp", "#pragma once\n")
        write(self.root, "src/ioperm/a.cpp", '#include "a.hpp"\n#include "b.hpp"\n')
        write(self.root, "src/ioperm/b.hpp", '#include "a.hpp"\n')
        code, out = layers(self.root)
        self.assertEqual(code, 1)
        self.assertIn("circle of units (a header with its .cpp): src/ioperm/a -> src/ioperm/b -> src/ioperm/a", out)

    def test_the_job_ranks_above_dataset_and_modes(self):
        # The rooms below it take their own slices: the include rule keeps the wall.
        write(self.root, "include/extshuffle/job.hpp", '#include "extshuffle/dataset/split_part.hpp"\n')
        write(self.root, "include/extshuffle/dataset/split_part.hpp", "#pragma once\n")
        self.assertEqual(layers(self.root), (0, ""))
        write(self.root, "src/dataset/input.cpp", '#include "extshuffle/job.hpp"\n')
        write(self.root, "src/modes/run.hpp", '#include "extshuffle/run_result.hpp"\n')
        write(self.root, "include/extshuffle/run_result.hpp", "#pragma once\n")
        code, out = layers(self.root)
        self.assertEqual(code, 1)
        self.assertIn("src/dataset/input.cpp: includes include/extshuffle/job.hpp: room job is above room dataset", out)
        self.assertIn("src/modes/run.hpp: includes include/extshuffle/run_result.hpp: room job is above room modes", out)
        self.assertNotIn("src/driver/run.cpp", out)

    def test_rooms_including_each_other_fail(self):
        write(self.root, "src/io/x.cpp", '#include "extshuffle/formats/y.hpp"\n')
        write(self.root, "include/extshuffle/formats/y.hpp", "#pragma once\n")
        write(self.root, "src/formats/y.cpp", '#include "extshuffle/io/z.hpp"\n')
        write(self.root, "include/extshuffle/io/z.hpp", "#pragma once\n")
        code, out = layers(self.root)
        self.assertEqual(code, 1)
        self.assertIn("rooms formats and io include each other", out)

    def test_front_ends_share_code_through_tools_cli_alone(self):
        write(self.root, "tools/cli/options.hpp", '#include "extshuffle/job.hpp"\n')
        write(self.root, "tools/extshuffle/main.cpp", '#include "cli/options.hpp"\n')
        write(self.root, "python/src/bindings.cpp", '#include "cli/options.hpp"\n')
        self.assertEqual(layers(self.root), (0, ""))
        write(self.root, "tools/extshuffle/helper.hpp", "#pragma once\n")
        write(self.root, "python/src/shuffle.cpp", '#include "helper.hpp"\n#include "options.hpp"\n')
        write(self.root, "tools/extshuffle-mpi/main.cpp", '#include "../extshuffle/helper.hpp"\n')
        write(self.root, "tools/cli/run.cpp", '#include "../extshuffle/helper.hpp"\n')
        code, out = layers(self.root)
        self.assertEqual(code, 1)
        self.assertIn("python/src/shuffle.cpp: includes helper.hpp by its bare name (tools/extshuffle/helper.hpp)", out)
        self.assertIn("python/src/shuffle.cpp: includes options.hpp by its bare name (tools/cli/options.hpp)", out)
        self.assertIn("tools/extshuffle-mpi/main.cpp: includes tools/extshuffle/helper.hpp, another front end's", out)
        self.assertIn("tools/cli/run.cpp: includes tools/extshuffle/helper.hpp: room tools is above room cli", out)
        self.assertNotIn("tools/extshuffle/main.cpp:", out)

    def test_a_library_that_prints_a_warning_fails(self):
        # Debug lines (-v) and comments may name spdlog; a warning is the result's.
        write(self.root, "src/driver/run.cpp", 'void f() { spdlog::debug("plan"); }  // not spdlog::warn\n')
        self.assertEqual(layers(self.root), (0, ""))
        write(self.root, "src/mpi/commit.cpp", 'void g() { spdlog::warn("warning: {}", w); }\n')
        write(self.root, "include/extshuffle/io/x.hpp", 'inline void h() { spdlog::error("e"); }\n')
        write(self.root, "tools/extshuffle/main.cpp", 'void m() { spdlog::warn("the tool says it"); }\n')
        code, out = layers(self.root)
        self.assertEqual(code, 1)
        self.assertIn("src/mpi/commit.cpp: calls spdlog::warn/error: the library prints nothing", out)
        self.assertIn("include/extshuffle/io/x.hpp: calls spdlog::warn/error", out)
        self.assertNotIn("tools/extshuffle/main.cpp", out)


@unittest.skipUnless(shutil.which("clang-format-diff"), "clang-format-diff not installed")
class CheckFormat(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp()
        os.makedirs(os.path.join(self.root, "scripts"))
        shutil.copy(FORMAT, os.path.join(self.root, "scripts"))
        shutil.copy(os.path.join(ROOT, ".clang-format"), self.root)
        # An old file laid out by hand, against .clang-format: never flagged
        # unless its lines change.
        write(self.root, "src/old.cpp", "int old_function( int a ) { return a; }\n")
        self.git("init", "-q", "-b", "main")
        self.git("add", ".")
        self.git("commit", "-q", "-m", "base")
        self.git("checkout", "-q", "-b", "work")

    def tearDown(self):
        shutil.rmtree(self.root)

    def git(self, *args):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=self.root, check=True)

    def check(self):
        env = dict(os.environ)
        env.pop("FORMAT_BASE", None)
        result = subprocess.run(["bash", "scripts/check_format.sh"], cwd=self.root, capture_output=True, text=True,
                                env=env)
        return result.returncode, result.stdout + result.stderr

    def test_nothing_changed_passes(self):
        self.assertEqual(self.check()[0], 0)

    def test_a_well_laid_out_change_passes(self):
        write(self.root, "src/new.cpp", "int new_function(int a) { return a + 1; }\n")
        self.git("add", ".")
        self.git("commit", "-q", "-m", "new")
        code, out = self.check()
        self.assertEqual(code, 0, out)

    def test_a_badly_laid_out_change_fails(self):
        write(self.root, "src/new.cpp", "int new_function( int a ) {   return a + 1; }\n")
        self.git("add", ".")
        self.git("commit", "-q", "-m", "new")
        code, out = self.check()
        self.assertEqual(code, 1)
        self.assertIn("src/new.cpp", out)
        self.assertNotIn("src/old.cpp", out)

    def test_a_moved_file_is_checked_where_the_move_changed_it(self):
        # Its old lines, laid out by hand, are not the move's (a file of
        # some lines on main, so that git finds the move).
        self.git("checkout", "-q", "main")
        write(self.root, "src/old.cpp", "".join(f"int old_function{k}( int a ) {{ return a; }}\n" for k in range(8)))
        self.git("commit", "-q", "-am", "older")
        self.git("checkout", "-q", "work")
        self.git("merge", "-q", "main")
        os.makedirs(os.path.join(self.root, "src", "room"))
        self.git("mv", "src/old.cpp", "src/room/old.cpp")
        with open(os.path.join(self.root, "src", "room", "old.cpp"), "a") as f:
            f.write("int added(int a) { return a; }\n")
        self.git("add", ".")
        self.git("commit", "-q", "-m", "moved")
        code, out = self.check()
        self.assertEqual(code, 0, out)
        with open(os.path.join(self.root, "src", "room", "old.cpp"), "a") as f:
            f.write("int badly( int a ) {   return a; }\n")
        code, out = self.check()
        self.assertEqual(code, 1)
        self.assertIn("src/room/old.cpp", out)
        self.assertIn("badly(int a)", out)
        self.assertNotIn("old_function0(int a)", out)

    def test_an_uncommitted_change_counts(self):
        write(self.root, "src/old.cpp", "int old_function( int a ) { return a; }\nint  b;\n")
        code, out = self.check()
        self.assertEqual(code, 1)
        self.assertIn("int b;", out)


if __name__ == "__main__":
    unittest.main(verbosity=1)
