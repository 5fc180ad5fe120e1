# SPDX-License-Identifier: GPL-2.0
"""Kernel builds from config fragments, out of tree, side by side.

A build is named ARCH-FLAVOR-VARIANT: flavor 'test' (debug options) or
'bench' (none), variant 'migrc' (build/linux), 'nomigrc' (build/linux with
CONFIG_MIGRC=n) or 'vanilla' (pristine upstream).  Each lives in build/kbuild/<name>, outside git; the source trees
stay clean because every build uses O=.
"""

import hashlib
import json
import os
import re
import subprocess
from collections.abc import Sequence
from pathlib import Path

from . import arches, hostsetup, tree
from .common import BUILD, HARNESS, HarnessError, log, run

CONFIGS = HARNESS / "configs"
FLAVORS = ("test", "bench")
VARIANTS = ("migrc", "vanilla", "nomigrc")


def jobs() -> str:
    return str(int(os.environ.get("MIGRC_JOBS", os.cpu_count() or 2)) + 1)


def make_vars(arch: str = "x86_64") -> list[str]:
    """Toolchain variables for every kernel make invocation."""
    v = {
        "ARCH": arch,
        "LLVM": "-22",
        # rustup's rustc comes first in PATH and has no rust-src.
        "RUSTC": "/usr/bin/rustc",
        "RUSTDOC": "/usr/bin/rustdoc",
        "HOSTRUSTC": "/usr/bin/rustc",
        "RUSTFMT": "/usr/bin/rustfmt",
        "CLIPPY_DRIVER": "/usr/bin/clippy-driver",
        "BINDGEN": str(hostsetup.BINDGEN),
    }
    return [f"{k}={val}" for k, val in v.items()]


def config_value(outdir: Path, sym: str) -> str | None:
    """A symbol's value in outdir/.config; None when it is not set."""
    for line in (outdir / ".config").read_text().splitlines():
        if line.startswith(sym + "="):
            return line.split("=", 1)[1]
    return None


def config_lines(text: str) -> dict[str, str]:
    """{CONFIG_X: value} of a config text ('n' for 'is not set')."""
    have = {}
    for line in text.splitlines():
        m = re.match(r"(CONFIG_\w+)=(.*)", line.strip())
        if m:
            have[m.group(1)] = m.group(2)
        m = re.match(r"# (CONFIG_\w+) is not set", line.strip())
        if m:
            have[m.group(1)] = "n"
    return have


def lost_options(wanted: str, config: str) -> list[str]:
    """The options of the fragment wanted that .config text lost."""
    have = config_lines(config)
    return [f"{k}={v} (got {have.get(k, 'unset')})"
            for k, v in config_lines(wanted).items()
            if have.get(k, "n") != v]


def make_env() -> dict[str, str]:
    return {"LIBCLANG_PATH": hostsetup.LLVM_LIB}


class Build:
    """One kernel build directory and how to (re)build it."""

    def __init__(self, flavor: str = "test", variant: str = "migrc",
                 arch: str = "x86_64") -> None:
        if flavor not in FLAVORS or variant not in VARIANTS or \
                arch not in arches.ARCHES:
            raise HarnessError(f"unknown build {arch}/{flavor}/{variant}")
        self.flavor, self.variant, self.arch = flavor, variant, arch
        self.name = f"{arch}-{flavor}-{variant}"
        self.out = BUILD / "kbuild" / self.name
        self.logs = BUILD / "logs"
        # The MIGRC test kernel is always built with clippy (same objects,
        # more lints), so that 'make test' lints every Rust crate it
        # compiles without a second build.
        self.clippy = flavor == "test" and variant == "migrc"

    @property
    def src(self) -> Path:
        return tree.VANILLA if self.variant == "vanilla" else tree.TREE

    def fragments(self) -> list[Path]:
        frags = [CONFIGS / "base.config", CONFIGS / f"{self.arch}.config",
                 CONFIGS / f"{self.flavor}.config"]
        if self.variant == "migrc":
            frags += [f for f in (CONFIGS / "migrc.config",
                                  CONFIGS / f"migrc-{self.flavor}.config")
                      if f.exists()]
        elif self.variant == "nomigrc":
            frags.append(CONFIGS / "nomigrc.config")
        return frags

    def make(self, *targets: str, logname: str | None = None,
             extra: Sequence[str] = (), check: bool = True,
             extra_env: dict[str, str] | None = None,
             drop: Sequence[str] = ()) -> subprocess.CompletedProcess[str]:
        """Run make in the tree for this build; drop: toolchain variables
        to leave out (Documentation/Makefile gives RUSTDOC a meaning of
        its own)."""
        tools = [v for v in make_vars(self.arch)
                 if v.split("=", 1)[0] not in drop]
        cmd = ["make", "-C", str(self.src), f"O={self.out}", f"-j{jobs()}",
               *tools, *(["CLIPPY=1"] if self.clippy else []),
               *extra, *targets]
        logfile = self.logs / f"{logname or self.name}.log"
        return run(cmd, env={**make_env(), **(extra_env or {})},
                   logfile=logfile, check=check)

    def configure(self) -> None:
        """(Re)generate .config when the fragments changed."""
        frags = self.fragments()
        text = "".join(f.read_text() for f in frags)
        digest = hashlib.sha256(text.encode()).hexdigest()
        stamp = self.out / ".migrc-config"
        if stamp.exists() and stamp.read_text().strip() == digest and \
                (self.out / ".config").exists():
            return
        log(f"configuring {self.name} from "
            f"{', '.join(f.name for f in frags)}")
        self.out.mkdir(parents=True, exist_ok=True)
        allconf = self.out / "migrc-fragments.config"
        allconf.write_text(text)
        self.make("alldefconfig", logname=f"{self.name}-config",
                  extra=[f"KCONFIG_ALLCONFIG={allconf}"])
        self.check_config(text)
        stamp.write_text(digest + "\n")

    def check_config(self, wanted_text: str) -> None:
        """Fail if a fragment line did not survive Kconfig dependencies."""
        lost = lost_options(wanted_text, (self.out / ".config").read_text())
        if lost:
            (self.out / ".migrc-config").unlink(missing_ok=True)
            raise HarnessError(
                f"{self.name}: config options lost to Kconfig dependencies "
                f"(a missing dependency or an unavailable toolchain):\n  "
                + "\n  ".join(lost))

    def build(self) -> Path:
        """Configure and build bzImage; return its path."""
        if self.variant == "vanilla":
            tree.vanilla_tree()
        else:
            tree.materialize(allow_local=True)
        self.configure()
        log(f"building {self.name} (log: {self.logs / self.name}.log)")
        image = self.out / arches.ARCHES[self.arch].image
        self.make(image.name, "headers")
        self._record_rust_warnings()
        if not image.exists():
            raise HarnessError(f"{self.name}: no {image} after the build")
        log(f"built {self.name}: {image}")
        return image

    # Rust warnings, per crate, from each crate's latest compile: kbuild
    # prints them only when it compiles the crate, and recompiles it
    # whenever one of its sources changed, so the record is always current.
    RUST_RECORD = ".migrc-rust-warnings.json"
    COMPILED = re.compile(r"^\s+(?:RUSTC|CLIPPY)(?: L| P| PL)?\s+(\S+)$")
    WARNING = re.compile(r"^(warning|error)(\[\w+\])?: (.*)$")
    WHERE = re.compile(r"^\s*--> (\S+?):\d+:\d+$")

    def _crate_of(self, path: str) -> str:
        """The object a Rust source file is compiled into."""
        path = path.replace(str(self.src) + "/", "")
        if path.startswith("rust/kernel/"):
            return "rust/kernel.o"
        if re.match(r"^(samples|drivers)/.*\.rs$", path):
            return path[:-3] + ".o"
        top = path.split("/")
        return f"rust/{top[1]}.o" if top[0] == "rust" and len(top) > 2 \
            else path

    def _record_rust_warnings(self) -> None:
        record = self.out / self.RUST_RECORD
        data = json.loads(record.read_text()) if record.exists() else {}
        lines = (self.logs / f"{self.name}.log").read_text(
            errors="replace").splitlines()
        compiled = {m.group(1) for m in map(self.COMPILED.match, lines) if m}
        crates = set(data.get("crates", [])) | compiled
        warnings = {c: w for c, w in data.get("warnings", {}).items()
                    if c not in compiled}
        msg = None
        for line in lines:
            m = self.WARNING.match(line)
            if m:
                msg = m.group(3)
                # The count line rustc prints at the end of a crate.
                if re.match(r"^`?\S+`? \(.*\) generated \d+ warning", msg) \
                        or re.match(r"^\d+ warnings? emitted", msg):
                    msg = None
                continue
            m = self.WHERE.match(line)
            if m and msg:
                path = m.group(1).replace(str(self.src) + "/", "")
                warnings.setdefault(self._crate_of(path), []).append(
                    f"{path}: {msg}")
                msg = None
        record.write_text(json.dumps({"crates": sorted(crates),
                                      "warnings": warnings}, indent=1))

    def rust_crates(self) -> list[str]:
        record = self.out / self.RUST_RECORD
        return json.loads(record.read_text())["crates"] if record.exists() \
            else []

    def rust_warnings(self) -> dict[str, list[str]]:
        """{crate object: [warning]} of the latest compile of each crate."""
        record = self.out / self.RUST_RECORD
        return json.loads(record.read_text())["warnings"] \
            if record.exists() else {}
