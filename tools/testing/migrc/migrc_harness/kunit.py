# SPDX-License-Identifier: GPL-2.0
"""MIGRC's Rust KUnit suites through the kernel's own kunit.py.

'make kunit' runs 'kunit.py run': kunit.py configures and builds a kernel
of its own from rust/kernel/mm/migrc/.kunitconfig, boots it and parses it.
'make test' has built a test kernel already; it checks the .kunitconfig
with 'kunit.py config' (Kconfig must keep every option of it) and runs the
suites on the test kernel with 'kunit.py exec'.

The command is what a kernel developer types in the materialized tree,
plus what this machine needs: the toolchain as make options, and QEMU kept
on TCG. kunit.py asks QEMU for '-accel kvm' first; KVM opens here but its
guests hang, so /dev/kvm is hidden from kunit.py in a private mount
namespace and QEMU falls back to TCG.
"""

import json
import re
import shlex
from pathlib import Path
from typing import Any

from . import tree
from .common import BUILD, log, run
from .kbuild import jobs, make_env, make_vars

# The directory of rust/kernel/mm/migrc/.kunitconfig.
KUNITCONFIG = "rust/kernel/mm/migrc"
BUILD_DIR = BUILD / "kunit"
# kunit.py's own JSON; the verdicts go to build/results/kunit.*.
JSON = BUILD / "logs" / "kunit.py.json"
SUMMARY = re.compile(r"=+ \[(PASSED|FAILED|SKIPPED|CRASHED)\] |Testing complete")
# Hides /dev/kvm, then runs the command given after it.
NO_KVM = ["unshare", "-m", "sh", "-c",
          'mount --bind /dev/null /dev/kvm 2>/dev/null; exec "$@"', "no-kvm"]


# Seconds kunit.py exec may take: a KASAN test kernel boots slowly under
# TCG on a busy host.
EXEC_TIMEOUT = 1200


def command(action: str = "run", suite: str | None = None,
            build_dir: Path = BUILD_DIR) -> list[str]:
    """kunit.py ACTION (run, config or exec) for MIGRC's suites (or the
    suites matching suite) in build_dir."""
    cmd = ["./tools/testing/kunit/kunit.py", action,
           f"--kunitconfig={KUNITCONFIG}", "--arch", "x86_64",
           f"--build_dir={build_dir}"]
    for v in make_vars("x86_64"):
        cmd += ["--make_options", v]
    if action == "config":
        return cmd
    if action == "run":
        cmd.append(f"--jobs={jobs()}")
    if action == "exec":
        cmd.append(f"--timeout={EXEC_TIMEOUT}")
    return cmd + ["--qemu_args=-smp 4", f"--json={JSON}"] + \
        ([suite] if suite else [])


def cases(doc: dict[str, Any], prefix: str | None = None
          ) -> list[tuple[str, str]]:
    """(suite.case, PASS|FAIL|SKIP|ERROR) of every case in kunit.py's JSON
    (its top group, "KUnit Test Group", names no suite)."""
    name = "" if prefix is None else f"{prefix}{doc['name']}."
    out = [(name + c["name"], c["status"]) for c in doc.get("test_cases", [])]
    for g in doc.get("sub_groups", []):
        out += cases(g, name)
    return out


def config() -> tuple[int, list[str]]:
    """kunit.py config in kunit.py's own build directory: whether Kconfig
    keeps every option of the .kunitconfig; its status and last lines."""
    tree.materialize(allow_local=True)
    # kunit.py keeps a .config that holds the options already, whatever
    # Kconfig would make of them now: start from the .kunitconfig.
    (BUILD_DIR / ".config").unlink(missing_ok=True)
    cmd = command("config")
    log("in build/linux: " + " ".join(shlex.quote(c) for c in cmd))
    logfile = BUILD / "logs" / "kunit-config.log"
    p = run(cmd, cwd=tree.TREE, env=make_env(), check=False, quiet=True,
            logfile=logfile)
    lines = Path(logfile).read_text(errors="replace").splitlines()
    return p.returncode, lines[-20:]


def kunit(suite: str | None = None, kernel_dir: Path | None = None
          ) -> tuple[int, list[tuple[str, str]]]:
    """kunit.py run (or, given the build directory of a kernel built
    already, kunit.py exec on it); its exit status and the cases it
    reported."""
    tree.materialize(allow_local=True)
    cmd = command("run", suite) if kernel_dir is None else \
        command("exec", suite, kernel_dir)
    log("in build/linux: " + " ".join(shlex.quote(c) for c in NO_KVM + cmd))
    JSON.unlink(missing_ok=True)
    JSON.parent.mkdir(parents=True, exist_ok=True)
    logfile = BUILD / "logs" / "kunit.log"
    p = run(NO_KVM + cmd, cwd=tree.TREE, env=make_env(), check=False,
            quiet=True, logfile=logfile)
    found = cases(json.loads(JSON.read_text())) if JSON.exists() else []
    lines = Path(logfile).read_text(errors="replace").splitlines()
    # kunit.py's own summary: a line per suite, and the totals.
    for line in lines:
        if SUMMARY.search(line):
            print(f"    {line}")
    if p.returncode:
        print("\n".join(f"    {l}" for l in lines[-30:]))
    log(f"kunit.py: exit {p.returncode}, {len(found)} cases "
        f"(log: {logfile}, JSON: {JSON})")
    return p.returncode, found
