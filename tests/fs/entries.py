#!/usr/bin/env python3
"""The independent reader of a cache directory, both stores, for the tests of
tests/fs/ (cache_fault_test.sh, fault_fs_test.sh): entry files (<key>.toml and
<key>.wgsl, or one-file entries <key>.entry) and the rows of entries.sqlite3,
opened read-only (a hot journal left by a killed writer is rolled back in a
private copy first). Where the database is, its rows are the entries; files
beside it (written by a process that could not open it: docs/cache.md,
"Stores") are not served, and are checked and counted apart.

  entries.py count DIR       the entries served
  entries.py has DIR KEY     exit 0 when KEY is among them
  entries.py check DIR       every entry, and every file beside the database:
                             its metadata names its key and records its
                             content's size and SHA-256; prints the count of
                             entries served and of files beside the database
"""
import hashlib, os, re, shutil, sqlite3, sys, tempfile, tomllib

def read(d, n):
    try:
        return open(os.path.join(d, n), "rb").read()
    except OSError as e:
        return e

def unframe(data):
    """(metadata, content) of a one-file entry: "vyre-remote 1 KIND M C\\n" METADATA CONTENT"""
    if isinstance(data, Exception):
        return data, data
    head, _, rest = data.partition(b"\n")
    f = head.split(b" ")
    try:
        ok = len(f) == 5 and f[:2] == [b"vyre-remote", b"1"] and int(f[3]) + int(f[4]) == len(rest)
    except ValueError:
        ok = False
    if not ok:
        e = ValueError(f"not an entry frame: {head[:80]!r}")
        return e, e
    return rest[:int(f[3])], rest[int(f[3]):]

def files(d):
    """(key, metadata bytes or exception, content bytes or exception) for each entry
    file pair (<key>.toml, <key>.wgsl) and one-file entry (<key>.entry)"""
    try:
        names = sorted(os.listdir(d))
    except FileNotFoundError:
        names = []
    for name in names:
        m = re.fullmatch(r"([0-9a-f]{64})\.(toml|entry)", name)
        if m and m.group(2) == "toml":
            yield m.group(1), read(d, name), read(d, m.group(1) + ".wgsl")
        elif m:
            yield (m.group(1), *unframe(read(d, name)))

def rows(d):
    db = os.path.join(d, "entries.sqlite3")
    journal = db + "-journal"
    if os.path.isfile(journal) and os.path.getsize(journal) > 0:
        # A writer killed mid-transaction leaves a hot journal: the next
        # connection that can write rolls it back, and a read-only one cannot
        # open the database at all. Read what that next writer would see, from
        # a private copy, so the directory under test is left as it was.
        with tempfile.TemporaryDirectory() as t:
            for path in (db, journal):
                shutil.copyfile(path, os.path.join(t, os.path.basename(path)))
            c = sqlite3.connect(os.path.join(t, "entries.sqlite3"), timeout=20)
            yield from c.execute("SELECT key, metadata, content FROM entries ORDER BY key").fetchall()
            c.close()
        return
    c = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=20)
    yield from c.execute("SELECT key, metadata, content FROM entries ORDER BY key")
    c.close()

def has_db(d):
    return os.path.isfile(os.path.join(d, "entries.sqlite3"))

def served(d):
    return rows(d) if has_db(d) else files(d)

def problem(key, meta, content):
    for part in (meta, content):
        if isinstance(part, Exception):
            return f"unreadable: {part}"
    try:
        m = tomllib.loads(bytes(meta).decode())
    except Exception as e:
        return f"metadata does not parse: {e}"
    content = bytes(content)
    if m.get("key") != key:
        return f"metadata names key {m.get('key')}"
    if m.get("wgsl_bytes") != len(content):
        return f"{len(content)} bytes of content, metadata says {m.get('wgsl_bytes')}"
    if m.get("content_sha256") != hashlib.sha256(content).hexdigest():
        return "content SHA-256 differs from content_sha256"
    return None

what, d = sys.argv[1], sys.argv[2]
if what == "count":
    print(sum(1 for _ in served(d)))
elif what == "has":
    sys.exit(0 if any(k == sys.argv[3] for k, _, _ in served(d)) else 1)
elif what == "check":
    bad, good, beside = [], 0, 0
    for key, meta, content in served(d):
        p = problem(key, meta, content)
        if p:
            bad.append(f"{key}: {p}")
        else:
            good += 1
    if has_db(d):
        for key, meta, content in files(d):
            beside += 1
            p = problem(key, meta, content)
            if p:
                bad.append(f"{key} (a file beside the database): {p}")
    for b in bad:
        print("   torn or wrong entry:", b, file=sys.stderr)
    if bad:
        sys.exit(1)
    print(good, beside)
