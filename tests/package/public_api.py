#!/usr/bin/env python3
"""Checks of libtfc's public API and ABI (tests api.* and abi.symbols; `make abi-update`).

    public_api.py umbrella  --src S --build B --cc CC
        every header under include/tfc/ (and the generated tfc/version.h) is reached from tfc/tfc.h
        (headers beside include/tfc/, such as TensorFlow's C API under include/tensorflow/c/, are public on their
        own: the checks below include them next to tfc/tfc.h)
    public_api.py declared  --src S --build B --cc CC --lib libtfc.so
        every function that libtfc.so exports is declared through tfc/tfc.h alone, and every function a
        public header declares is exported; then a generated program that includes only tfc/tfc.h takes the
        address of every exported symbol, compiled with -Werror=implicit-function-declaration, linked with
        libtfc.so and run
    public_api.py contracts  --src S --build B
        every TFC_API function in a public header carries its contract comment: a comment that ends right above
        it (or above the group of declarations it belongs to), or one on its own last line
    public_api.py abi-check  --src S --build B --cc CC --lib libtfc.so [--list F]
    public_api.py abi-update --src S --build B --cc CC --lib libtfc.so [--list F]
        the ABI list (tests/package/libtfc.abi): one line per exported symbol, a function with its prototype
        as the compiler reads it from the headers, a data object with its size. The check fails when a
        recorded symbol is gone or its line changed, unless the list was recorded for another major version
        (TFC_VERSION_MAJOR); new symbols pass and are listed. abi-update rewrites the list from the library.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

DEFAULT_LIST = os.path.join(os.path.dirname(os.path.abspath(__file__)), "libtfc.abi")


def include_dirs(a):
    return [os.path.join(a.src, "include"), os.path.join(a.build, "include")]


def public_headers(a):
    """{relative name 'tfc/x.h': absolute path} of every header under the include folders."""
    found = {}
    for root in include_dirs(a):
        for d, _, files in os.walk(root):
            for f in files:
                if f.endswith(".h"):
                    p = os.path.join(d, f)
                    found[os.path.relpath(p, root)] = os.path.realpath(p)
    return found


def other_headers(a):
    """Public headers outside tfc/ (their own API, not part of tfc/tfc.h), as #include lines."""
    return "".join('#include "%s"\n' % rel for rel in sorted(public_headers(a)) if not rel.startswith("tfc" + os.sep))


def run(cmd, **kw):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, **kw)
    if r.returncode != 0:
        sys.exit("FAILED: %s\n%s" % (" ".join(cmd), r.stdout))
    return r.stdout


def cflags(a):
    return ["-std=c11", "-Wall", "-Wextra", "-Werror", "-Werror=implicit-function-declaration"] + \
        ["-I" + d for d in include_dirs(a)]


def umbrella(a):
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "umbrella.c")
        with open(src, "w") as f:
            f.write('#include "tfc/tfc.h"\n')
        deps = run([a.cc] + cflags(a) + ["-M", src]).replace("\\\n", " ").split()[1:]
    reached = {os.path.realpath(d) for d in deps}
    missing = sorted(rel for rel, p in public_headers(a).items() if p not in reached and rel.startswith("tfc" + os.sep))
    for rel in missing:
        print("public header %s is not included by tfc/tfc.h: add `#include \"%s\"` there" % (rel, rel))
    if missing:
        sys.exit(1)
    print("tfc/tfc.h reaches all %d headers under include/tfc" % sum(r.startswith("tfc" + os.sep) for r in public_headers(a)))


def declarations(a, tmp):
    """{name: (header, prototype)} of the functions declared through tfc/tfc.h, from gcc -aux-info."""
    src, aux = os.path.join(tmp, "decl.c"), os.path.join(tmp, "aux.txt")
    with open(src, "w") as f:
        f.write('#include "tfc/tfc.h"\n' + other_headers(a))
    run([a.cc] + cflags(a) + ["-aux-info", aux, "-c", src, "-o", os.path.join(tmp, "decl.o")])
    roots = [os.path.realpath(d) + os.sep for d in include_dirs(a)]
    decls = {}
    line_re = re.compile(r"^/\* (\S+):(\d+):\w+ \*/ (.*);$")
    for line in open(aux):
        m = line_re.match(line.strip())
        if not m:
            continue
        path = os.path.realpath(m.group(1))
        root = next((r for r in roots if path.startswith(r)), None)
        proto = m.group(3)
        if root is None or proto.startswith("static"):
            continue
        name = re.search(r"(\w+) \(", proto)
        if name:
            decls[name.group(1)] = ("%s:%s" % (os.path.relpath(path, root), m.group(2)),
                                    re.sub(r"^extern ", "", proto))
    return decls


def contracts(a):
    missing = []
    for rel, path in sorted(public_headers(a).items()):
        lines = open(path).read().split("\n")
        i = 0
        while i < len(lines):
            if not lines[i].startswith("TFC_API"):
                i += 1
                continue
            j = i
            while j + 1 < len(lines) and ";" not in lines[j]:
                j += 1
            documented = "/*" in lines[j]
            k = i - 1
            while k >= 0 and not documented:  # up through the declarations grouped under one comment
                text = lines[k].strip()
                if text.endswith("*/"):
                    documented = True
                elif text and (lines[k].startswith(("TFC_API", " ", "#define"))):
                    k -= 1
                    continue
                break
            if not documented:
                missing.append("%s:%d: %s" % (rel, i + 1, lines[i].strip()))
            i = j + 1
    for m in missing:
        print("no contract comment: " + m)
    if missing:
        sys.exit("%d public functions lack a contract comment (shapes, dtypes, ownership, errors, the TensorFlow "
                 "API it implements)" % len(missing))
    print("every public function has a contract comment")


def exported(lib):
    """{name: (kind, size)}: the library's defined dynamic symbols, F for functions, O for data."""
    out = run(["nm", "-D", "--defined-only", "-S", lib])
    syms = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) < 3 or f[-1].startswith("_"):
            continue
        name, typ = f[-1], f[-2]
        size = int(f[1], 16) if len(f) == 4 else 0
        if typ in "TWi":
            syms[name] = ("F", 0)
        elif typ in "DBRGSV":
            syms[name] = ("O", size)
    return syms


def declared(a):
    with tempfile.TemporaryDirectory() as tmp:
        decls = declarations(a, tmp)
        syms = exported(a.lib)
        bad = 0
        for name, (kind, _) in sorted(syms.items()):
            if kind == "F" and name not in decls:
                print("%s: exported by libtfc but declared in no header tfc/tfc.h includes (a missing "
                      "prototype, or an internal function marked TFC_API / built with target_clones without "
                      "hidden visibility)" % name)
                bad += 1
        for name, (where, _) in sorted(decls.items()):
            if name not in syms:
                print("%s (%s): declared in a public header but not exported by libtfc (no definition, or "
                      "TFC_API missing on it)" % (name, where))
                bad += 1
        if bad:
            sys.exit(1)
        # The probe: only tfc/tfc.h, every exported symbol's address, built as a user would.
        probe = os.path.join(tmp, "probe.c")
        with open(probe, "w") as f:
            f.write('#include <stdio.h>\n#include "tfc/tfc.h"\n' + other_headers(a) + '\nint main(void) {\n'
                    '    const volatile void *syms[] = {\n')
            for name, (kind, _) in sorted(syms.items()):
                f.write("        (const volatile void *)%s%s,\n" % ("" if kind == "F" else "&", name))
            f.write('    };\n    size_t n = 0;\n    for (size_t i = 0; i < sizeof syms / sizeof *syms; i++) '
                    'n += syms[i] != NULL;\n    printf("%zu symbols, version %s\\n", n, tfc_version());\n'
                    '    return n != sizeof syms / sizeof *syms;\n}\n')
        libdir = os.path.dirname(os.path.abspath(a.lib))
        exe = os.path.join(tmp, "probe")
        run([a.cc] + cflags(a) + ["-Wno-pedantic", probe, "-o", exe, "-L" + libdir, "-ltfc",
                                  "-Wl,-rpath," + libdir])
        print(run([exe]).strip())
        print("%d exported functions, all declared through tfc/tfc.h; %d public declarations, all exported"
              % (sum(k == "F" for k, _ in syms.values()), len(decls)))


def abi_lines(a):
    with tempfile.TemporaryDirectory() as tmp:
        decls = declarations(a, tmp)
    lines = {}
    for name, (kind, size) in exported(a.lib).items():
        lines[name] = ("%s %s" % (name, decls[name][1]) if kind == "F" and name in decls
                       else "%s object %d" % (name, size) if kind == "O" else "%s function" % name)
    return lines


def current_major(a):
    text = open(os.path.join(a.build, "include", "tfc", "version.h")).read()
    return int(re.search(r"#define TFC_VERSION_MAJOR (\d+)", text).group(1))


HEADER = """# libtfc's ABI: every exported symbol, a function with its prototype, a data object with its size.
# tests/package/public_api.py (test abi.symbols) fails when a symbol listed here is gone or its line
# changed while TFC_VERSION_MAJOR is still the one below. New symbols pass; record them (and accept an
# intended break after raising the major version in CMakeLists.txt's project(VERSION)) with `make abi-update`.
"""


def abi_update(a):
    lines = abi_lines(a)
    tmp = a.list + ".tmp"
    with open(tmp, "w") as f:
        f.write(HEADER + "major %d\n" % current_major(a))
        for name in sorted(lines):
            f.write(lines[name] + "\n")
    os.replace(tmp, a.list)
    print("wrote %s: %d symbols" % (a.list, len(lines)))


def abi_check(a):
    recorded, major = {}, None
    for line in open(a.list):
        line = line.rstrip("\n")
        if not line or line.startswith("#"):
            continue
        if line.startswith("major "):
            major = int(line.split()[1])
            continue
        recorded[line.split(" ", 1)[0]] = line
    now, cur = abi_lines(a), current_major(a)
    gone = sorted(n for n in recorded if n not in now)
    changed = sorted(n for n in recorded if n in now and now[n] != recorded[n])
    added = sorted(n for n in now if n not in recorded)
    for n in gone:
        print("removed: %s" % recorded[n])
    for n in changed:
        print("changed: %s\n     now: %s" % (recorded[n], now[n]))
    if added:
        print("%d new symbols (not yet in %s; `make abi-update` records them): %s"
              % (len(added), os.path.basename(a.list), " ".join(added)))
    if (gone or changed) and major == cur:
        sys.exit("ABI break within major version %d: %d removed, %d changed. Keep the old symbols, or raise the "
                 "major version in CMakeLists.txt and run `make abi-update`" % (cur, len(gone), len(changed)))
    print("ABI of major version %d: %d recorded symbols kept%s" % (
        cur, len(recorded) - len(gone) - len(changed),
        "" if major == cur else " (the list is for major %s: the break is allowed)" % major))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("cmd", choices=["umbrella", "declared", "contracts", "abi-check", "abi-update"])
    p.add_argument("--src", required=True)
    p.add_argument("--build", required=True)
    p.add_argument("--cc", default="cc")
    p.add_argument("--lib")
    p.add_argument("--list", default=DEFAULT_LIST)
    a = p.parse_args()
    {"umbrella": umbrella, "declared": declared, "contracts": contracts, "abi-check": abi_check, "abi-update": abi_update}[a.cmd](a)


if __name__ == "__main__":
    main()
