#!/usr/bin/env python3
"""Numbers about the shape of the code, for before/after tables (issue 24): files and lines per folder, the
longest file and function, [[nodiscard]] counts, and C++ files directly in store/.

    python3 scripts/house_metrics.py [SOURCE_DIR]

A function is counted from a line at column 0 that opens a definition (ends with `{` after a `)`, or the
lines down to one that does) to the `}` at column 0 that closes it: top-level functions and methods defined
out of line, LevelDB style; a lambda counts as part of the function that holds it."""
import os
import re
import sys

STAGES = ("base", "ingest", "store", "service", "cli", "proto", "bench")


def cxx_files(root):
    for stage in STAGES:
        for folder, _, files in os.walk(os.path.join(root, stage)):
            for f in files:
                if f.endswith((".h", ".cc")):
                    yield os.path.join(folder, f)


def functions(path):
    lines = open(path, errors="replace").read().split("\n")
    out, start, name = [], None, None
    for i, line in enumerate(lines):
        if start is None:
            if re.match(r"[A-Za-z_].*\(", line) and not line.startswith(("namespace", "class", "struct", "enum",
                                                                          "using", "template", "#", "static_assert")):
                j = i
                while j < len(lines) and j < i + 8 and not lines[j].rstrip().endswith(("{", ";")):
                    j += 1
                if j < len(lines) and lines[j].rstrip().endswith("{") and ")" in " ".join(lines[i:j + 1]):
                    start, name = i, re.match(r"[^(]*?([\w:~]+)\s*\(", line)
                    name = name.group(1) if name else line.strip()
        elif line.startswith("}"):
            out.append((i - start + 1, name, f"{path}:{start + 1}"))
            start = None
    return out


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    per_folder, longest_file, all_functions, nodiscard = {}, (0, ""), [], 0
    for path in cxx_files(root):
        rel = os.path.relpath(path, root)
        text = open(path, errors="replace").read()
        n = text.count("\n")
        folder = os.path.dirname(rel)
        files, lines = per_folder.get(folder, (0, 0))
        per_folder[folder] = (files + 1, lines + n)
        longest_file = max(longest_file, (n, rel))
        nodiscard += text.count("[[nodiscard]]")
        all_functions += [(length, name, where.replace(root + "/", "")) for length, name, where in functions(path)]
    print("| folder | C++ files | lines |")
    print("|---|---:|---:|")
    for folder in sorted(per_folder):
        files, lines = per_folder[folder]
        print(f"| `{folder}` | {files} | {lines} |")
    print()
    print(f"longest file: {longest_file[1]} ({longest_file[0]} lines)")
    print("longest functions:")
    for length, name, where in sorted(all_functions, reverse=True)[:8]:
        print(f"  {length:4d}  {name}  {where}")
    print(f"[[nodiscard]] written: {nodiscard}")
    print(f"C++ files directly in store/: {per_folder.get('store', (0, 0))[0]}")


if __name__ == "__main__":
    main()
