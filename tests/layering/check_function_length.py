"""Functions a reader can hold in mind (ctest: function_length; issue 24 item 4).

Every function defined in src/ (a block opened at namespace level, outside classes, by a line
that is not a namespace, class, struct, enum or an initializer) is at most LIMIT lines long,
counted from the line of its opening '{' to the line of its closing '}'. A long function is split
at its phase banners, each phase a named function.

The ones not split yet are in ALLOWED with their length today: the check fails when one grows,
and when one shrinks under the limit or goes away (take it off the list: the list only shrinks).
Files other work owns are in OWNED with why; their functions are listed, not checked.

Usage: check_function_length.py REPO_ROOT [--list]
"""
import os
import re
import sys

LIMIT = 120

# Files another piece of work is rewriting at the moment (none now); their
# functions are reported, never failed. Take a file off when its owner has landed.
OWNED = {}

# (file, function) -> its length when listed. Not split yet; shrink this list.
ALLOWED = {
}

BLOCK_KEYWORDS = re.compile(r"^\s*(?:template\s*<[^>]*>\s*)?(?:namespace|class|struct|enum|union|"
                            r"extern\s+\"C\")\b")
IDENT = re.compile(r"([A-Za-z_~][A-Za-z_0-9:~]*(?:operator\s*\S+)?)\s*\(")


def strip_code(text):
    """The text with comments, string and character literals blanked (newlines kept), and
    preprocessor lines (with their continuations) emptied."""
    out = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start:
            j = i
            while j < n and text[j] in " \t":
                j += 1
            if j < n and text[j] == "#":  # a directive: up to an unescaped newline
                while j < n and not (text[j] == "\n" and text[j - 1] != "\\"):
                    if text[j] == "\n":
                        out.append("\n")
                    j += 1
                i = j
                continue
            line_start = False
        if c == "\n":
            out.append(c)
            line_start = True
            i += 1
        elif text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append("\n" * text.count("\n", i, end))
            i = end
        elif c == "R" and i + 1 < n and text[i + 1] == '"' and (i == 0 or not (
                text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            close = ")" + m.group(1) + '"'
            end = text.find(close, i + m.end())
            end = n if end < 0 else end + len(close)
            out.append('""' + "\n" * text.count("\n", i, end))
            i = end
        elif c == '"' or (c == "'" and not (i > 0 and text[i - 1].isalnum())):
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(path):
    """(name, first line, length) of each function block at namespace level."""
    code = strip_code(open(path, encoding="utf-8", errors="replace").read())
    found = []
    stack = []  # per open brace: "ns" (namespace/extern), "fn" (counted), "other"
    head = []  # code since the last ';', '{' or '}' at namespace level: the signature
    line = 1
    fn_start = None
    for ch in code:
        if ch == "\n":
            line += 1
        if ch == "{":
            if all(k == "ns" for k in stack):
                text = "".join(head)
                stripped = text.strip()
                if BLOCK_KEYWORDS.match(stripped) and not re.match(r"^\s*enum\b", stripped) or \
                        re.match(r"^\s*namespace\b", stripped) or \
                        stripped.startswith('extern "C"'):
                    stack.append("ns" if re.match(r"^\s*(namespace|extern)", stripped)
                                 else "other")
                elif BLOCK_KEYWORDS.match(stripped) or re.search(r"=\s*$", stripped) or \
                        "(" not in stripped:
                    stack.append("other")
                else:
                    names = IDENT.findall(stripped)
                    name = names[0] if names else "?"
                    stack.append("fn")
                    fn_start = (name, line)
                head = []
            else:
                stack.append("inner")
            continue
        if ch == "}":
            kind = stack.pop() if stack else "ns"
            if kind == "fn" and fn_start:
                found.append((fn_start[0], fn_start[1], line - fn_start[1] + 1))
                fn_start = None
            if all(k == "ns" for k in stack):
                head = []
            continue
        if all(k == "ns" for k in stack):
            if ch == ";":
                head = []
            else:
                head.append(ch)
    return found


def owned(rel):
    return next((why for f, why in OWNED.items() if rel == f or (f.endswith("/") and
                                                                rel.startswith(f))), None)


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    root = sys.argv[1]
    listing = "--list" in sys.argv
    failures, long_ones, seen = [], [], set()
    for d, _, files in os.walk(os.path.join(root, "src")):
        for f in sorted(files):
            if not f.endswith((".cpp", ".h", ".cc")):
                continue
            path = os.path.join(d, f)
            rel = os.path.relpath(path, root)
            for name, first, length in functions(path):
                if length <= LIMIT:
                    continue
                long_ones.append((length, rel, first, name))
                key = (rel, name)
                if owned(rel):
                    continue
                seen.add(key)
                if key not in ALLOWED:
                    failures.append(f"{rel}:{first}: {name} is {length} lines (limit {LIMIT}): "
                                    "split it at its phases, each a named function")
                elif length > ALLOWED[key]:
                    failures.append(f"{rel}:{first}: {name} grew to {length} lines (listed at "
                                    f"{ALLOWED[key]}, limit {LIMIT}): split it, do not grow it")
    for key, length in sorted(ALLOWED.items()):
        if key not in seen:
            failures.append(f"{key[0]}: {key[1]} is listed in ALLOWED ({length} lines) but is no "
                            f"longer over {LIMIT} lines: take it off the list")
    for length, rel, first, name in sorted(long_ones, reverse=True):
        if listing:
            why = owned(rel)
            print(f"{length:5d} {rel}:{first} {name}" + (f"  (owned: {why})" if why else ""))
    for f in failures:
        print("FAIL", f)
    print(f"function length: {len(long_ones)} over {LIMIT} lines, {len(ALLOWED)} allowed, "
          f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
