#!/usr/bin/env python3
"""The layer map of docs/architecture.md, checked against the build and the sources.

docs/architecture.md holds the map as a table between `<!-- layer map -->` and `<!-- end of layer map -->`:
one row per library, its folder, and the libraries it may link. This check fails when

  * a product library of the build (layer_links.txt, written by CMakeLists.txt at generate time from each
    target's LINK_LIBRARIES) is not in the map, or the map names one the build does not have;
  * a library links an xladb library the map does not allow it;
  * a library the map marks `neutral` reaches SQLiteCpp or libpq through any chain of links, or one of its
    files includes their headers;
  * a source file includes a header of a library outside its own library's allowed links (followed through:
    A may include what the libraries it may link may include);
  * a C++ file lies directly in a folder that is not a library's (each file belongs to exactly one library).

usage: check_layers.py SOURCE_DIR LAYER_LINKS_FILE
"""
import os
import re
import sys

# xladb_store_postgres by name: it loads libpq when a store is opened (store/postgres/libpq_functions.h) instead
# of linking it, so reaching it is reaching libpq.
BACKEND_LIBRARIES = {"SQLiteCpp", "PostgreSQL::PostgreSQL", "sqlite3", "pq", "xladb_store_postgres"}
BACKEND_HEADERS = re.compile(r'^\s*#\s*include\s+<(SQLiteCpp/[^>]*|sqlite3\.h|libpq-fe\.h|postgresql/[^>]*)>', re.M)


def read_map(source_dir):
    text = open(os.path.join(source_dir, "docs", "architecture.md")).read()
    m = re.search(r"<!-- layer map -->(.*?)<!-- end of layer map -->", text, re.S)
    if not m:
        sys.exit("docs/architecture.md has no `<!-- layer map -->` table")
    libraries = {}
    for line in m.group(1).splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 4 or not cells[0].startswith("`xladb"):
            continue
        name = cells[0].strip("`")
        folders = [f.strip("` ") for f in cells[1].split(",") if f.strip("` ")]
        allowed = set(re.findall(r"`(xladb\w*)`", cells[2]))
        neutral = cells[3].lower().startswith("neutral")
        libraries[name] = {"folders": folders, "allowed": allowed, "neutral": neutral}
    return libraries


def read_links(path):
    links, folders = {}, {}
    for line in open(path):
        name, folder, deps = line.rstrip("\n").split("\t")
        deps = re.sub(r"\$<LINK_ONLY:([^>]*)>", r"\1", deps)
        links[name] = {d for d in deps.split(";") if d}
        folders[name] = folder
    return links, folders


def closure(start, edges):
    seen, todo = set(), list(start)
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        seen.add(n)
        todo.extend(edges.get(n, ()))
    return seen


def main():
    source_dir, links_file = sys.argv[1], sys.argv[2]
    layer_map = read_map(source_dir)
    links, built_folders = read_links(links_file)
    errors = []

    for name in sorted(set(links) - set(layer_map)):
        errors.append(f"{name} ({built_folders[name]}) is built but not in docs/architecture.md's layer map")
    for name in sorted(set(layer_map) - set(links)):
        errors.append(f"{name} is in docs/architecture.md's layer map but the build has no such library")

    for name, deps in sorted(links.items()):
        if name not in layer_map:
            continue
        for dep in sorted(d for d in deps if d.startswith("xladb") and d != name):
            if dep not in layer_map[name]["allowed"]:
                errors.append(f"{name} links {dep}, which the layer map does not allow")
        if layer_map[name]["neutral"]:
            reached = closure(deps, links)
            bad = sorted(reached & BACKEND_LIBRARIES)
            if bad:
                errors.append(f"{name} is backend-neutral but reaches {', '.join(bad)} through its links")

    # Which library owns each folder; includes are checked against the map's allowed links, followed through.
    owner = {}
    for name, lib in layer_map.items():
        for folder in lib["folders"]:
            owner[folder.rstrip("/")] = name
    allowed_edges = {n: lib["allowed"] for n, lib in layer_map.items()}

    def owner_of(path):
        folder = os.path.dirname(path)
        return owner.get(folder)

    include_re = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
    for top in ("base", "ingest", "store", "service", "cli", "proto", "bench"):
        for root, _, files in os.walk(os.path.join(source_dir, top)):
            for f in sorted(files):
                if not f.endswith((".h", ".cc")):
                    continue
                path = os.path.relpath(os.path.join(root, f), source_dir)
                lib = owner_of(path)
                if lib is None:
                    errors.append(f"{path} lies in a folder that is no library's in the layer map")
                    continue
                reachable = closure({lib}, allowed_edges)
                text = open(os.path.join(source_dir, path)).read()
                if layer_map[lib]["neutral"]:
                    for header in BACKEND_HEADERS.findall(text):
                        errors.append(f"{path} ({lib}, backend-neutral) includes <{header}>")
                for inc in include_re.findall(text):
                    target = owner_of(inc)
                    if target is None:
                        if os.path.exists(os.path.join(source_dir, inc)):
                            errors.append(f"{path} includes {inc}, which belongs to no library of the map")
                        continue  # generated (e.g. xladb/v1/xladb.pb.h) or system
                    if target not in reachable:
                        errors.append(f"{path} ({lib}) includes {inc} ({target}): an arrow the map does not allow")

    if errors:
        print("\n".join(errors))
        print(f"{len(errors)} arrows or files break docs/architecture.md's layer map")
        return 1
    print(f"layer map holds: {len(layer_map)} libraries, their links and every include of {source_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
