# SPDX-License-Identifier: GPL-2.0
"""Paths, logging and subprocess helpers shared by the harness modules."""

import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

# tools/testing/migrc/migrc_harness/common.py -> repository root
REPO = Path(__file__).resolve().parents[4]
HARNESS = REPO / "tools/testing/migrc"

# Downloads, the bindgen install and the pristine upstream git repository are
# shared by every checkout on the machine; build trees belong to one checkout.
CACHE = Path(os.environ.get("MIGRC_CACHE", Path.home() / ".cache/migrc"))
BUILD = Path(os.environ.get("MIGRC_BUILD", REPO / "build"))

# Kernel series we track (Debian package name suffix).
KVER_SERIES = "7.3"

_T0 = time.monotonic()


class HarnessError(Exception):
    """A failure the user can act on; the message says what to do."""


def log(msg):
    """Print a progress line with the elapsed time since the harness started."""
    el = time.monotonic() - _T0
    print(f"[migrc {int(el // 60):3d}:{int(el % 60):02d}] {msg}", flush=True)


def run(cmd, cwd=None, env=None, check=True, capture=False, quiet=False,
        logfile=None, input=None):
    """Run a command; raise HarnessError with its output tail on failure.

    With logfile, stdout and stderr go to that file and the last lines are
    shown on failure, which keeps long kernel builds readable.
    """
    if not quiet:
        log("$ " + " ".join(shlex.quote(str(c)) for c in cmd))
    full_env = None
    if env:
        full_env = dict(os.environ)
        full_env.update(env)
    if logfile:
        Path(logfile).parent.mkdir(parents=True, exist_ok=True)
        with open(logfile, "w") as f:
            p = subprocess.run(cmd, cwd=cwd, env=full_env, stdout=f,
                               stderr=subprocess.STDOUT, input=input,
                               text=True)
        if check and p.returncode != 0:
            tail = Path(logfile).read_text(errors="replace").splitlines()[-40:]
            raise HarnessError(
                f"command failed ({p.returncode}): {' '.join(map(str, cmd))}\n"
                f"--- last lines of {logfile} ---\n" + "\n".join(tail))
        return p
    p = subprocess.run(cmd, cwd=cwd, env=full_env, text=True, input=input,
                       stdout=subprocess.PIPE if capture else None,
                       stderr=subprocess.PIPE if capture else None)
    if check and p.returncode != 0:
        detail = ""
        if capture:
            detail = "\n" + (p.stdout or "")[-3000:] + (p.stderr or "")[-3000:]
        raise HarnessError(
            f"command failed ({p.returncode}): "
            f"{' '.join(map(str, cmd))}{detail}")
    return p


def out(cmd, cwd=None, env=None):
    """Run a command quietly and return its stripped stdout."""
    return run(cmd, cwd=cwd, env=env, capture=True, quiet=True).stdout.strip()


def die(msg):
    print(f"migrc: error: {msg}", file=sys.stderr, flush=True)
    sys.exit(1)
