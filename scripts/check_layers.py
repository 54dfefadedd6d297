#!/usr/bin/env python3
"""The walls between the rooms (docs/conventions.md, Rooms), checked from the
include lines of every C++ file; reads files only, builds nothing (< 1 s).

Rooms, lowest first; a room may include headers of its own room and of rooms
below it, never of a room above:
  errors.hpp <- core <- io, formats, device <- ioperm <- layouts
    <- dataset <- modes <- the Job (job.hpp, run_result.hpp) <- driver <- mpi
    <- cli (tools/cli: the code the front ends share)
    <- tools, python (tests, bench and fuzz may include any room).
io, formats and device sit side by side: one may include another, as long as
no circle forms. Besides:
  - a header private to the walk (src/ioperm/*.hpp) is included only by the
    walk itself, by the record layouts that implement its RecordLayout
    (src/layouts) and by their tests and benchmarks;
  - no two rooms include each other, no header includes itself back through
    other headers (a circle of files), and no circle runs through units (a
    header and its .cpp taken as one: a.cpp including b.hpp while b.cpp or
    b.hpp includes a.hpp is a circle of units a and b);
  - the rooms below the Job (dataset, modes) take only their own slice of
    its options and give back only what they fill in: the Job ranking above
    them, none can include job.hpp or run_result.hpp;
  - the front ends (tools/extshuffle, tools/extshuffle-mpi, python) share
    code through tools/cli alone, and name its folder ("cli/options.hpp"):
    none includes another's file, nor a file of tools/ by its bare name
    (found only through another folder's include path);
  - the library prints nothing (its warnings go back in its results): no
    file of src/ or include/ calls spdlog::warn, spdlog::error or
    spdlog::critical.
Prints one line per violation and exits 1, else prints nothing and exits 0.
usage: scripts/check_layers.py [repository root]
"""
import os
import re
import sys

RANKS = {
    "errors": 0, "core": 1, "io": 2, "formats": 2, "device": 2,
    "ioperm": 3, "layouts": 4, "dataset": 5, "modes": 6, "job": 7,
    "driver": 8, "mpi": 9, "cli": 10, "tools": 11, "python": 11,
}
SIDE_BY_SIDE_RANK = 2  # io, formats, device
UNCHECKED = ("tests", "bench", "fuzz")  # may include any room
WALK_PRIVATE_USERS = ("src/ioperm/", "src/layouts/", "tests/ioperm/", "tests/layouts/", "bench/")
SOURCE_SUFFIXES = (".hpp", ".cpp", ".cuh", ".cu", ".h")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
FRONT_ENDS = ("tools/extshuffle/", "tools/extshuffle-mpi/", "python/")
LIBRARY_PRINTS = re.compile(r"\bspdlog::(warn|error|critical)\b")
LINE_COMMENT = re.compile(r"//.*")


def room_of(path):
    """The room of a repository-relative path, or None outside every room."""
    parts = path.split("/")
    if parts[0] == "include" and len(parts) >= 3 and parts[1] == "extshuffle":
        if len(parts) == 3:
            return "errors" if parts[2] == "errors.hpp" else "job"
        return parts[2]
    if parts[0] == "src" and len(parts) >= 3:
        return parts[1]
    if parts[0] == "tools" and len(parts) >= 3 and parts[1] == "cli":
        return "cli"
    if parts[0] in ("tools", "python") or parts[0] in UNCHECKED:
        return parts[0]
    return None


def source_files(root):
    for top in ("include", "src", "tools", "python", "tests", "bench", "fuzz"):
        for directory, _, names in os.walk(os.path.join(root, top)):
            for name in sorted(names):
                if name.endswith(SOURCE_SUFFIXES):
                    yield os.path.relpath(os.path.join(directory, name), root)


def resolve(root, including, target):
    """The file an include names: beside the including file first, then on
    the include paths the build gives (include/, src/, tests/, tools/...)."""
    candidates = [os.path.join(os.path.dirname(including), target)]
    candidates += [os.path.join(base, target) for base in ("include", "src", "tests")]
    top = including.split("/")[0]
    if top in ("tools", "bench"):
        candidates.append(os.path.join("/".join(including.split("/")[:2]), target))
    if top in ("tools", "python", "tests", "fuzz"):
        candidates.append(os.path.join("tools", target))  # tools/cli's headers, as "cli/x.hpp"
    for candidate in candidates:
        candidate = os.path.normpath(candidate)
        if os.path.isfile(os.path.join(root, candidate)):
            return candidate
    return None  # a system or generated header


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    problems = []
    edges = {}  # file -> files it includes
    room_edges = {}  # (room, room) -> an example (file, included)
    for path in source_files(root):
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            text = f.read()
        room = room_of(path)
        problems += library_prints(path, room, text)
        problems += front_end_includes(root, path, INCLUDE.findall(text))
        for target in INCLUDE.findall(text):
            included = resolve(root, path, target)
            if included is None:
                continue
            edges.setdefault(path, []).append(included)
            if room is None or room in UNCHECKED:
                continue
            other = room_of(included)
            if other is None or other == room:
                continue
            room_edges.setdefault((room, other), (path, included))
            if other not in RANKS or room not in RANKS:
                problems.append(f"{path}: includes {included}, of a room not in the order ({other})")
            elif RANKS[other] > RANKS[room]:
                problems.append(f"{path}: includes {included}: room {other} is above room {room}")
        for target in INCLUDE.findall(text):
            included = resolve(root, path, target)
            if (included and included.startswith("src/ioperm/") and included.endswith(".hpp")
                    and not path.startswith(WALK_PRIVATE_USERS)):
                problems.append(f"{path}: includes {included}, private to the walk (src/ioperm)")
    for (a, b), (path, included) in sorted(room_edges.items()):
        if a < b and (b, a) in room_edges:
            back = room_edges[(b, a)]
            problems.append(f"rooms {a} and {b} include each other: {path} -> {included}, "
                            f"{back[0]} -> {back[1]}")
    problems += ["include circle: " + " -> ".join(c) for c in circles(edges)]
    unit_edges = {}
    for path, included in edges.items():
        for other in included:
            if unit(other) != unit(path):
                unit_edges.setdefault(unit(path), set()).add(unit(other))
    problems += ["circle of units (a header with its .cpp): " + " -> ".join(c)
                 for c in circles({k: sorted(v) for k, v in unit_edges.items()})]
    for line in problems:
        print(f"check_layers: {line}")
    return 1 if problems else 0


def library_prints(path, room, text):
    """A file of the library that prints a warning or an error itself
    (docs/conventions.md, Rooms): its results carry them to the tools."""
    if not (path.startswith(("src/", "include/")) and LIBRARY_PRINTS.search(LINE_COMMENT.sub("", text))):
        return []
    return [f"{path}: calls spdlog::warn/error: the library prints nothing, its result carries the warning"]


def front_end(path):
    return next((f for f in FRONT_ENDS if path.startswith(f)), None)


def front_end_includes(root, path, targets):
    """A front end that includes another front end's file, or a file of
    tools/ by its bare name (through another folder's include path)."""
    mine = front_end(path)
    if mine is None:
        return []
    problems = []
    for target in targets:
        included = resolve(root, path, target)
        other = front_end(included) if included else None
        if other is not None and other != mine:
            problems.append(f"{path}: includes {included}, another front end's: share it through tools/cli")
        if included is None and "/" not in target and os.path.isdir(os.path.join(root, "tools")):
            found = sorted(os.path.join("tools", d, target) for d in os.listdir(os.path.join(root, "tools"))
                           if os.path.isfile(os.path.join(root, "tools", d, target)))
            if found:
                problems.append(f"{path}: includes {target} by its bare name ({found[0]}): name its folder")
    return problems


def unit(path):
    return os.path.splitext(path)[0]


def circles(edges):
    """The circles of a graph of includes, one per edge back (depth-first)."""
    found, state, stack = [], {}, []

    def visit(node):
        state[node] = 1
        stack.append(node)
        for nxt in edges.get(node, ()):
            if state.get(nxt) == 1:
                circle = stack[stack.index(nxt):] + [nxt]
                found.append(circle)
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    sys.setrecursionlimit(10000)
    for node in sorted(edges):
        if node not in state:
            visit(node)
    return found


if __name__ == "__main__":
    sys.exit(main())
