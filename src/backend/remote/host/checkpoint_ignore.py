import errno, fcntl, hashlib, json, os, re, secrets, shutil, stat as S, sys, time

# What checkpoints leave out by rule: directory names left out wherever they are (the same list as
# the local scan's), and the subset of .gitignore this program reads (see ignore_regex).
ALWAYS_LEFT_OUT = frozenset((".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv",
                             ".mypy_cache", ".pytest_cache", ".ruff_cache", ".tox", ".next",
                             ".turbo", ".gradle"))

def glob_regex(pat):
    # One gitignore glob as a regex: * and ? never cross "/", [..] classes ([!..] negated), a
    # backslash quotes the next character, "**/" leading, "/**" trailing and "/**/" inside span
    # directories (other "**" are "*").
    out, i, n = [], 0, len(pat)
    while i < n:
        c = pat[i]
        if c == "\\" and i + 1 < n:
            out.append(re.escape(pat[i + 1]))
            i += 2
        elif pat.startswith("**/", i) and (i == 0 or pat[i - 1] == "/"):
            out.append("(?:.*/)?")
            i += 3
        elif pat.startswith("**", i) and i + 2 == n and (i == 0 or pat[i - 1] == "/"):
            out.append(".*")
            i += 2
        elif c == "*":
            while i < n and pat[i] == "*":
                i += 1
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            j = i + 1
            if j < n and pat[j] in "!^":
                j += 1
            if j < n and pat[j] == "]":
                j += 1
            while j < n and pat[j] != "]":
                j += 1
            if j >= n:
                out.append(re.escape(c))
                i += 1
            else:
                body = pat[i + 1:j]
                neg = body[:1] in ("!", "^")
                body = body[1:] if neg else body
                out.append("[" + ("^" if neg else "") + body.replace("\\", "\\\\") + "]")
                i = j + 1
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)

def ignore_rules(text):
    # The rules of one .gitignore: (negated, dir_only, anchored, compiled) in file order; a line
    # that does not compile is skipped (the file is workspace content: it can only leave out).
    rules = []
    for line in text.split("\n"):
        line = line.rstrip("\r")
        if not line or line.startswith("#"):
            continue
        while line.endswith(" ") and not line.endswith("\\ "):
            line = line[:-1]
        neg = line.startswith("!")
        if neg:
            line = line[1:]
        elif line.startswith("\\!") or line.startswith("\\#"):
            line = line[1:]
        dir_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            continue
        anchored = "/" in line
        line = line.lstrip("/")
        try:
            rules.append((neg, dir_only, anchored, re.compile("^" + glob_regex(line) + "$", re.S)))
        except re.error:
            continue
    return rules

def left_out(chain, rel, name, is_dir):
    # chain: (base, rules) of each .gitignore in force, outermost first. Within one file the last
    # match wins; an entry any file leaves out is left out (as the local scan decides).
    if is_dir and name in ALWAYS_LEFT_OUT:
        return True
    for base, rules in chain:
        sub = rel if base == "" else rel[len(base) + 1:]
        verdict = False
        for neg, dir_only, anchored, rx in rules:
            if dir_only and not is_dir:
                continue
            if rx.match(sub if anchored else name):
                verdict = not neg
        if verdict:
            return True
    return False
