#!/usr/bin/env python3
"""Merges rules of several parnassus-rules/1 files into one set.

usage: merge_rules.py --name NAME [--description TEXT] -o OUT
                      FILE:PREFIX:RULE,RULE,... [FILE:PREFIX:RULE,...]

Each argument takes the named rules of FILE (all of them when the list is
empty) and renames them PREFIX + name. Every file must have the same space.
Used by scripts/make-presets.sh to build presets/mixed.json from the learned
major and minor sets.
"""
import argparse
import json
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--name", required=True)
    ap.add_argument("--description", default="")
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("parts", nargs="+", metavar="FILE:PREFIX:RULES")
    args = ap.parse_args()

    space = None
    rules = []
    sources = []
    for part in args.parts:
        try:
            path, prefix, names = part.split(":", 2)
        except ValueError:
            sys.exit(f"merge_rules.py: {part}: expected FILE:PREFIX:RULE,RULE,...")
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        if doc.get("format") != "parnassus-rules/1":
            sys.exit(f"merge_rules.py: {path}: not a parnassus-rules/1 file")
        doc_space = doc.get("space")
        if space is None:
            space = doc_space
        elif doc_space != space:
            sys.exit(f"merge_rules.py: {path}: its space differs from the first file's")
        wanted = [n for n in names.split(",") if n]
        by_name = {r["name"]: r for r in doc["rules"]}
        for n in wanted:
            if n not in by_name:
                sys.exit(f"merge_rules.py: {path}: no rule named {n!r}")
        for r in doc["rules"]:
            if wanted and r["name"] not in wanted:
                continue
            r = dict(r)
            r["name"] = prefix + r["name"]
            rules.append(r)
        sources.append(doc["name"])

    names = [r["name"] for r in rules]
    if len(set(names)) != len(names):
        sys.exit("merge_rules.py: two rules would have the same name; use prefixes")
    out = {"format": "parnassus-rules/1", "name": args.name}
    out["description"] = args.description or ("Rules merged from " + ", ".join(sources) + ".")
    if space is not None:
        out["space"] = space
    out["rules"] = rules
    with open(args.output, "w", encoding="utf-8") as f:
        write_compact(out, f)


def dumps(v):
    return json.dumps(v, ensure_ascii=False)


def write_compact(doc, f):
    """One rule per block, one context per line: diffable and readable."""
    f.write("{\n")
    for key in ("format", "name", "description", "space"):
        if key in doc:
            f.write(f'  "{key}": {dumps(doc[key])},\n')
    f.write('  "rules": [\n')
    for i, r in enumerate(doc["rules"]):
        f.write("    {\n")
        items = [(k, v) for k, v in r.items() if k != "contexts"]
        lines = [f"      {dumps(k)}: {dumps(v)}" for k, v in items]
        if "contexts" in r:
            ctx = r["contexts"]
            inner = ",\n".join(f"        {dumps(k)}: {dumps(v)}" for k, v in ctx.items())
            lines.append('      "contexts": {\n' + inner + "\n      }")
        f.write(",\n".join(lines))
        f.write("\n    }" + ("," if i + 1 < len(doc["rules"]) else "") + "\n")
    f.write("  ]\n}\n")


if __name__ == "__main__":
    main()
