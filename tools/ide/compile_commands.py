#!/usr/bin/env python3
"""compile_commands.json for clangd and VS Code, from Bazel's action graph.

Reads `bazel aquery --output=jsonproto` (every C++ compile action of the
build) on stdin and writes a compilation database (clang's JSON format) in
which every path is absolute: the workspace's sources as they are, Bazel's
external repositories under its output base, generated files under its
execution root. So an editor opening a file of the workspace finds the
command Bazel compiles it with, and the includes resolve as in the build.

Usage (what `./course ide` runs):
  bazel aquery 'mnemonic("CppCompile", //...)' --output=jsonproto |
    compile_commands.py --workspace W --output-base O --execroot E > F
"""

import argparse
import json
import os
import sys

# Flags that only make sense to the build itself: dependency files, object
# files, reproducibility seeds; -Werror (CI's: GCC decides what fails the
# build, and clang warns about other things, which an editor should show
# as warnings); and GCC's flags that clang does not know (stage 5's
# instrumentation excludes files by name, clang does not).
DROP_WITH_VALUE = {"-MF", "-o"}
DROP = {"-MD", "-c", "-fno-canonical-system-headers", "-Werror"}
DROP_PREFIX = ("-frandom-seed=", "-finstrument-functions-exclude-")
# Flags whose value (joined or separate) is a path.
PATH_FLAGS = ("-iquote", "-isystem", "-I", "-include")


def absolute(path, args):
    """A path of the build made absolute."""
    if path.startswith("external/"):
        return os.path.join(args.output_base, path)
    if path.startswith("bazel-out/"):
        return os.path.join(args.execroot, path)
    return os.path.normpath(os.path.join(args.workspace, path))


def command(arguments, args):
    """(source, the command clangd should use) for one compile action."""
    out, source, i = [], None, 0
    while i < len(arguments):
        a = arguments[i]
        if a in DROP_WITH_VALUE:
            i += 2
            continue
        if a == "-c":
            source = arguments[i + 1]
            i += 2
            continue
        if a in DROP or a.startswith(DROP_PREFIX):
            i += 1
            continue
        if a in PATH_FLAGS and i + 1 < len(arguments):
            out += [a, absolute(arguments[i + 1], args)]
            i += 2
            continue
        joined = next((f for f in PATH_FLAGS if a.startswith(f) and a != f), None)
        if joined is not None:
            out.append(joined + absolute(a[len(joined):], args))
        else:
            out.append(a)
        i += 1
    return source, out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--workspace", required=True)
    p.add_argument("--output-base", required=True)
    p.add_argument("--execroot", required=True)
    args = p.parse_args()
    graph = json.load(sys.stdin)
    entries, seen = [], set()
    for action in graph.get("actions", []):
        source, cmd = command(action["arguments"], args)
        # The workspace's own sources only, each once (a file compiled by
        # two targets gets the first target's command).
        if source is None or source.startswith(("external/", "bazel-out/")):
            continue
        if source in seen:
            continue
        seen.add(source)
        entries.append({
            "directory": args.workspace,
            "file": os.path.join(args.workspace, source),
            "arguments": cmd + [os.path.join(args.workspace, source)],
        })
    if not entries:
        sys.exit("compile_commands.py: Bazel reported no C++ compile action")
    entries.sort(key=lambda e: e["file"])
    json.dump(entries, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
