# SPDX-License-Identifier: GPL-2.0
"""Static checks of 'make test', run on the already built MIGRC test kernel.

  rustfmt     'make rustfmtcheck' over every Rust file of the tree.
  clippy      the test kernel is built with CLIPPY=1; no crate may warn
              (kbuild.Build keeps the findings of each crate's last
              compile, so a warm build that compiles nothing still knows).
  W=1         every C file the series touches, compiled with W=1 (to .s,
              so the objects stay as they are) in the MIGRC tree and in
              pristine upstream with the same config: no warning that
              upstream does not have.
  kernel-doc  scripts/kernel-doc -Wall on the same files and on our
              headers, compared the same way.
  rustdoc     'make rustdoc': no warning, and the MIGRC pages exist.
  htmldocs    'make SPHINXDIRS=mm htmldocs': no warning about migrc.rst,
              and the mm index links it.
  event_docs  the tables of Documentation/mm/migrc.rst list exactly the
              events of include/linux/migrc_event_defs.h (debugfs
              migrc/stats), in its order, and the /proc/vmstat totals
              they add to.
  kselftest_config  defconfig merged with tools/testing/selftests/migrc/
              config as 'make kselftest-merge' merges it: every line of
              the fragment must survive olddefconfig.
  compile_fail  every 'ignore,compile_fail,EXXXX' example in the docs of
              rust/kernel/mm/migrc (what safe code must not be able to do)
              is compiled against the built kernel crate, as the Rust
              sample is: rustc must reject each with its error code, and a
              control example using the public API must compile.
"""

from __future__ import annotations

import collections
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from . import kbuild, tree
from .arches import ARCHES
from .common import BUILD, HARNESS, REPO, log, run
from .kbuild import Build

if TYPE_CHECKING:
    from .runner import Tally

# What a check returns: (clean, one-line summary, lines to show).
Check = tuple[bool, str, list[str]]
# Diagnostics counted by (file, message).
Findings = collections.Counter[tuple[str, str]]


def run_all(build: Build, tally: Tally) -> None:
    # An architecture without full_lint (arm64) keeps clippy's record.
    checks = (harness_tests, mypy, event_docs, kselftest_config, rustfmt,
              clippy, compile_fail, w1, kerneldoc, rustdoc, htmldocs) \
        if ARCHES[build.arch].full_lint else \
        (harness_tests, mypy, event_docs, clippy, compile_fail)
    for check in checks:
        ok, summary, details = check(build)
        log(f"lint {check.__name__}: {'clean' if ok else 'FAILED'}: "
            f"{summary}")
        for line in details[:40]:
            print(f"    {line}")
        tally.add("pass" if ok else "fail", name=f"lint {check.__name__}",
                  what=f"lint {check.__name__}: "
                  f"{summary}")


def unit() -> int:
    """'make unit': the harness's unit tests alone; the exit status."""
    ok, summary, details = harness_tests(None)
    for line in details:
        print(f"    {line}")
    log(f"harness unit tests: {'clean' if ok else 'FAILED'}: {summary}")
    return 0 if ok else 1


def mypy(build: Build | None) -> Check:
    """The harness's types (mypy.ini): every function body, and the
    signature of every function in the modules the file lists."""
    p = subprocess.run(["/usr/bin/python3", "-m", "mypy", "--config-file",
                        "mypy.ini", "--cache-dir", str(BUILD / "mypy-cache"),
                        "migrc_harness", "tests"], cwd=HARNESS,
                       capture_output=True, text=True)
    lines = (p.stdout + p.stderr).strip().splitlines()
    details = [] if p.returncode == 0 else lines[-40:]
    return p.returncode == 0, lines[-1] if lines else "no output", details


def harness_tests(build: Build | None) -> Check:
    """The harness's own unit tests (tools/testing/migrc/tests)."""
    p = subprocess.run([sys.executable, "-m", "unittest", "discover", "-s",
                        "tests"], cwd=HARNESS, capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(HARNESS)})
    lines = p.stderr.strip().splitlines()
    ran = next((l for l in lines if l.startswith("Ran ")), "no tests ran")
    details = [] if p.returncode == 0 else lines[-40:]
    return p.returncode == 0, f"{ran}, {lines[-1] if lines else ''}", details


EVENT_DEFS = "include/linux/migrc_event_defs.h"
EVENT_DOC = "Documentation/mm/migrc.rst"


EVENT_LINE = re.compile(r'^MIGRC_EVENT\(\w+, "(\w+)", (\w+)\)', re.M)


def defined_events(defs: str) -> list[str]:
    """The names of MIGRC_EVENT(NAME, "text", VMSTAT) lines, in order, as
    debugfs migrc/stats shows them (migrc_<text>)."""
    return ["migrc_" + text for text, _ in EVENT_LINE.findall(defs)]


def defined_totals(defs: str) -> list[str]:
    """The /proc/vmstat totals the events add to (VMSTAT other than NONE),
    in the order of their first event."""
    totals = ["migrc_" + vm.lower() for _, vm in EVENT_LINE.findall(defs)
              if vm != "NONE"]
    return list(dict.fromkeys(totals))


def documented_tables(rst: str) -> list[list[str]]:
    """The first column (migrc_* rows) of each table of the "Statistics"
    section: the /proc/vmstat totals, then the events of debugfs."""
    section = rst.split("\nStatistics\n", 1)[-1].split("\n", 1)[-1]
    # Up to the next section title (a line underlined by "=" alone).
    section = re.split(r"^\S.*\n=+$", section, maxsplit=1, flags=re.M)[0]
    parts = re.split(r"^=+ +=+$", section, flags=re.M)
    # Border, header-less rows, border: the rows are every other part.
    return [re.findall(r"^(migrc_\w+) ", rows, re.M)
            for rows in parts[1::2]]


def _disagree(what: str, defined: list[str],
              documented: list[str]) -> list[str]:
    details = [f"{what} missing from {EVENT_DOC}: {e}"
               for e in defined if e not in documented]
    details += [f"{what} not in {EVENT_DEFS}: {e}"
                for e in documented if e not in defined]
    if not details and defined != documented:
        details = [f"{what}: order differs from {EVENT_DEFS}"]
    return details


def event_docs(build: Build | None) -> Check:
    defs = (REPO / EVENT_DEFS).read_text()
    tables = documented_tables((REPO / EVENT_DOC).read_text()) + [[], []]
    events, totals = defined_events(defs), defined_totals(defs)
    details = (_disagree("/proc/vmstat total", totals, tables[0])
               + _disagree("event", events, tables[1]))
    if not details:
        return True, (f"{len(events)} events and {len(totals)} vmstat "
                      "totals, documented in order"), []
    return False, f"{EVENT_DOC} and {EVENT_DEFS} disagree", details


def kselftest_config(build: Build) -> Check:
    out = BUILD / "kbuild" / "kselftest-merge"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    cmd = ["make", "-C", str(build.src), f"O={out}",
           *kbuild.make_vars(build.arch)]
    logfile = BUILD / "logs" / "kselftest-merge"
    frag = build.src / "tools/testing/selftests/migrc/config"
    # What 'make kselftest-merge' does for this one target (all targets
    # would bring in other suites' options, BTF among them, which drops
    # Rust without pahole).
    run(cmd + ["defconfig"], env=kbuild.make_env(),
        logfile=f"{logfile}-defconfig.log", quiet=True)
    run([str(build.src / "scripts/kconfig/merge_config.sh"), "-m", "-O",
         str(out), str(out / ".config"), str(frag)],
        logfile=f"{logfile}-merge.log", quiet=True)
    run(cmd + ["olddefconfig"], env=kbuild.make_env(),
        logfile=f"{logfile}-olddefconfig.log", quiet=True)
    want = frag.read_text()
    lost = kbuild.lost_options(want, (out / ".config").read_text())
    return (not lost, f"{len(kbuild.config_lines(want))} options, "
            f"{len(lost)} lost to defconfig + the fragment "
            f"(kselftest-merge's merge_config.sh -m, olddefconfig)", lost)


def _logtext(name: str) -> str:
    return (BUILD / "logs" / f"{name}.log").read_text(errors="replace")


def rustfmt(build: Build) -> Check:
    p = build.make("rustfmtcheck", logname=f"{build.name}-rustfmtcheck",
                   check=False)
    if p.returncode == 0:
        return True, "every Rust file is rustfmt-clean", []
    tail = _logtext(f"{build.name}-rustfmtcheck").splitlines()[-40:]
    return False, "Rust code is not rustfmt-clean", tail


def clippy(build: Build) -> Check:
    if not build.clippy:
        return True, "not a CLIPPY=1 build", []
    found = build.rust_warnings()
    crates = len(build.rust_crates())
    if not crates:
        return False, "no record of any crate compiled with clippy", []
    lines = [f"{crate}: {w}" for crate, ws in sorted(found.items())
             for w in ws]
    if lines:
        return False, f"{len(lines)} warnings in {len(found)} crates", lines
    return True, f"{crates} crates, 0 warnings", []


def _touched_c(build: Build) -> list[str]:
    """C files of the kernel proper that the series adds or changes."""
    names = subprocess.run(
        ["git", "-C", str(tree.TREE), "diff", "--name-only",
         "refs/tags/upstream", "HEAD", "--", "*.c"],
        capture_output=True, text=True, check=True).stdout.split()
    files = [f for f in names if not f.startswith(("tools/", "samples/"))]
    # rust/helpers/*.c are compiled as one unit, helpers.c.
    units = sorted({"rust/helpers/helpers.c" if f.startswith("rust/helpers/")
                    else f for f in files})
    # Only what this config builds.
    return [u for u in units if (build.out / (u[:-2] + ".o")).exists()]


# Every top-level directory the series changes C files in (fs/ext4,
# drivers/iommu/iommufd, ...), and the headers they include.
WARN = re.compile(r"^(?:.*?/)?((?:arch|block|drivers|fs|include|init|ipc|"
                  r"kernel|lib|mm|net|rust|security|virt)/\S+?):"
                  r"\d+:(?:\d+:)? (warning|error): (.*)$")


def _warnings(text: str, src: Path) -> tuple[Findings, Findings]:
    """(warnings, errors): multisets of (file, message) in a build log."""
    found: dict[str, Findings] = {
        "warning": collections.Counter(), "error": collections.Counter()}
    for line in text.splitlines():
        line = line.replace(str(src) + "/", "")
        m = WARN.match(line)
        if m:
            found[m.group(2)][(m.group(1), m.group(3))] += 1
    return found["warning"], found["error"]


def _compile_w1(b: Build, units: list[str]) -> str:
    """Compile units with W=1 to .s files in build b; the log text."""
    for u in units:
        (b.out / (u[:-2] + ".s")).unlink(missing_ok=True)
    b.make("W=1", *[u[:-2] + ".s" for u in units],
           logname=f"{b.name}-w1", check=False)
    return _logtext(f"{b.name}-w1")


def _vanilla_build(build: Build) -> Build:
    van = kbuild.Build(build.flavor, "vanilla", build.arch)
    tree.vanilla_tree()
    van.configure()
    return van


def w1(build: Build) -> Check:
    units = _touched_c(build)
    mine, errors = _warnings(_compile_w1(build, units), tree.TREE)
    # Upstream is the baseline of the files that warn here, and only of
    # those (all of them if a header warns): with no warning, nothing can
    # be new, and configuring and preparing the vanilla tree takes minutes.
    warned = {f for f, _ in mine}
    base = units if warned - set(units) else \
        [u for u in units if u in warned]
    theirs: Findings = collections.Counter()
    unbuilt: Findings = collections.Counter()
    if base:
        van = _vanilla_build(build)
        # A file that upstream's config does not build (mm/page_ext.c
        # without PAGE_EXTENSION) fails to compile there: it has no
        # baseline, so each of its warnings counts as new.
        theirs, unbuilt = _warnings(_compile_w1(
            van, [u for u in base if (tree.VANILLA / u).exists()]),
            tree.VANILLA)
    new = mine - theirs
    lines = [f"{f}: {msg}" + (f" (x{n})" if n > 1 else "")
             for (f, msg), n in sorted((new + errors).items())]
    nobase = sorted({f for f, _ in unbuilt})
    summary = (f"{len(units)} files, {sum(mine.values())} W=1 warnings, "
               f"{sum(theirs.values())} in upstream, {sum(new.values())} new"
               + (f", {sum(errors.values())} ERRORS" if errors else "")
               + (f" (no upstream baseline: {', '.join(nobase)})"
                  if nobase else ""))
    return not new and not errors, summary, lines


def _kdoc(src: Path, files: list[str]) -> Findings:
    found: Findings = collections.Counter()
    seen: set[tuple[str, str, str]] = set()
    for f in files:
        if not (src / f).exists():
            continue
        p = subprocess.run(["/usr/bin/python3", "-B",
                            str(src / "scripts/kernel-doc"), "-none",
                            "-Wall", f], cwd=src, capture_output=True,
                           text=True)
        for line in (p.stdout + p.stderr).splitlines():
            m = re.match(r"^(?:warning|error): (\S+?):\d+ (.*)$", line,
                         re.I)
            if m:
                seen.add((m.group(1), m.group(2), line))
    for f, msg, _ in seen:
        found[(f, msg)] += 1
    return found


def kerneldoc(build: Build) -> Check:
    headers = subprocess.run(
        ["git", "-C", str(tree.TREE), "diff", "--name-only",
         "--diff-filter=A", "refs/tags/upstream", "HEAD", "--",
         "include/*.h", "mm/*.h"],
        capture_output=True, text=True, check=True).stdout.split()
    files = _touched_c(build) + headers
    tree.vanilla_tree()
    mine, theirs = _kdoc(tree.TREE, files), _kdoc(tree.VANILLA, files)
    new = mine - theirs
    lines = [f"{f}: {msg}" for (f, msg), n in sorted(new.items())]
    summary = (f"{len(files)} files, {sum(mine.values())} warnings, "
               f"{sum(theirs.values())} in upstream, {sum(new.values())} new")
    return not new, summary, lines


def rustdoc(build: Build) -> Check:
    p = build.make("rustdoc", logname=f"{build.name}-rustdoc", check=False)
    text = _logtext(f"{build.name}-rustdoc")
    warns = [l for l in text.splitlines() if re.match(r"^(warning|error)", l)]
    page = build.out / "Documentation/output/rust/rustdoc/kernel/mm/migrc"
    missing = [] if (page / "index.html").exists() else \
        [f"{page}/index.html was not generated"]
    ok = p.returncode == 0 and not warns and not missing
    details = warns + missing + ([] if p.returncode == 0 else
                                 text.splitlines()[-30:])
    n = len(list(page.glob("*.html"))) if page.exists() else 0
    return ok, f"{len(warns)} warnings, {n} pages for kernel::mm::migrc", \
        details


def htmldocs(build: Build) -> Check:
    # Sphinx output goes under O=; the html of mm/ only.
    outdir = build.out / "Documentation/output/mm"
    if outdir.exists():
        shutil.rmtree(outdir)
    p = build.make("SPHINXDIRS=mm", "htmldocs",
                   logname=f"{build.name}-htmldocs", check=False,
                   extra_env={"PATH": "/usr/bin:/bin"}, drop=("RUSTDOC",))
    text = _logtext(f"{build.name}-htmldocs")
    ours = [l for l in text.splitlines()
            if re.search(r"WARNING|ERROR", l) and "migrc" in l]
    total = sum(1 for l in text.splitlines() if "WARNING" in l) - len(ours)
    page = outdir / "migrc.html"
    index = outdir / "index.html"
    problems = list(ours)
    if not page.exists():
        problems.append(f"{page} was not generated")
    elif 'href="migrc.html"' not in index.read_text(errors="replace"):
        problems.append("Documentation/mm/index.rst does not link migrc")
    if p.returncode != 0:
        problems += text.splitlines()[-20:]
    built = "built" if page.exists() else "NOT built"
    return not problems, (f"mm/migrc.html {built}, {len(ours)} warnings "
                          f"about it ({total} elsewhere)"), problems


MIGRC_RUST = "rust/kernel/mm/migrc"
# The sample's compile command is the model: a crate outside the kernel
# crate, linked against it, with every flag of the build.
SAMPLE_CMD = "samples/rust/.rust_migrc.o.cmd"
FENCE = re.compile(r"^```(.*)$")
# Must compile, or the command itself is broken and proves nothing.
CONTROL = """use kernel::mm::migrc::{self, Gen};
fn allowed() -> bool {
    migrc::global().is_some_and(|e| e.is_retired(Gen::NONE))
}
"""


def compile_fail_examples(
        src: Path) -> list[tuple[str, str | None, str]]:
    """(file:line, error code, code) of each compile_fail doc example."""
    found: list[tuple[str, str | None, str]] = []
    for path in sorted((src / MIGRC_RUST).glob("*.rs")):
        # (error code, lines) of the example being read, if any.
        code: tuple[str | None, list[str]] | None = None
        start = 0
        for n, line in enumerate(path.read_text().splitlines(), 1):
            m = re.match(r"^\s*//[/!] ?(.*)$", line)
            if not m:
                continue
            text = m.group(1)
            fence = FENCE.match(text)
            if fence and code is None:
                info = fence.group(1).split(",")
                if "compile_fail" in info:
                    err = next((i for i in info if re.match(r"E\d{4}$", i)),
                               None)
                    code, start = (err, []), n
            elif fence and code is not None:
                found.append((f"{path.relative_to(src)}:{start}", code[0],
                              "\n".join(code[1]) + "\n"))
                code = None
            elif code is not None:
                code[1].append(text[2:] if text.startswith("# ") else text)
    return found


def _rustc_command(build: Build) -> str:
    """The sample's rustc command line, with {src} and {obj} to fill in."""
    text = (build.out / SAMPLE_CMD).read_text()
    cmd = text.split(" := ", 1)[1].splitlines()[0]
    cmd = re.sub(r"--emit=dep-info=\S+ ", "", cmd)
    cmd = re.sub(r"--emit=obj=\S+", "--emit=metadata -o {obj}", cmd)
    cmd = re.sub(r"--out-dir \S+ ", "", cmd)
    return re.sub(r"\S+/samples/rust/rust_migrc\.rs", "{src}", cmd)


def _try_compile(build: Build, cmd: str, name: str,
                 code: str) -> str | None:
    """rustc's diagnostics for code as a crate of its own (None: compiled)."""
    work = build.out / "migrc-compile-fail"
    work.mkdir(exist_ok=True)
    src = work / f"{name}.rs"
    src.write_text("// SPDX-License-Identifier: GPL-2.0\n"
                   "//! compile_fail check\n"
                   "#![allow(dead_code, unused_imports, missing_docs)]\n"
                   + code)
    p = subprocess.run(cmd.format(src=src, obj=work / f"{name}.rmeta"),
                       shell=True, cwd=build.out, capture_output=True,
                       text=True, env={**os.environ, "RUSTC_BOOTSTRAP": "1"})
    return None if p.returncode == 0 else p.stdout + p.stderr


def compile_fail(build: Build) -> Check:
    if not (build.out / SAMPLE_CMD).exists():
        return False, f"no {SAMPLE_CMD}: the Rust sample was not built", []
    cmd = _rustc_command(build)
    control = _try_compile(build, cmd, "control", CONTROL)
    if control is not None:
        return False, "the control example does not compile", \
            control.splitlines()[:30]
    examples = compile_fail_examples(tree.TREE)
    if not examples:
        return False, f"no compile_fail example in {MIGRC_RUST}", []
    problems = []
    for i, (where, err, code) in enumerate(examples):
        diag = _try_compile(build, cmd, f"example{i}", code)
        if diag is None:
            problems.append(f"{where}: compiled, but safe code must not be "
                            f"able to do this")
        elif err and f"error[{err}]" not in diag:
            got = sorted(set(re.findall(r"error\[(E\d{4})\]", diag)))
            problems.append(f"{where}: rejected with {got or 'no code'}, "
                            f"not {err}")
            problems += ["    " + l for l in diag.splitlines()[:8]]
    return not problems, (f"{len(examples)} examples rejected as expected "
                          f"(control compiles)" if not problems else
                          f"{len(problems)} problems in {len(examples)} "
                          f"examples"), problems
