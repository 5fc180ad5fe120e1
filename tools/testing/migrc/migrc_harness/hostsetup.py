# SPDX-License-Identifier: GPL-2.0
"""Idempotent host setup: Debian packages, bindgen and the Linux 7.3 source.

Everything a fresh Debian 12 machine lacks is installed here and nowhere
else, so that a green run never depends on something installed by hand.
The kernel source comes from Debian's trixie-backports suite through a
private apt configuration: the system's apt sources are never touched.
"""

import hashlib
import re
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from .common import (CACHE, KVER_SERIES, HarnessError, StrPath, log, out,
                     run)

# Packages from the machine's own suites (bookworm, bookworm-security).
DEB_PACKAGES = [
    # Rust for the kernel, with matching library source, clippy and rustfmt.
    "rustc-web", "rust-web-src", "rust-web-clippy", "rustfmt-web",
    # LLVM 22: Linux 7.3 needs LLVM >= 17, Rust + KASAN needs a clang build.
    "clang-22", "lld-22", "llvm-22", "libclang-22-dev",
    # Kernel build.
    "make", "flex", "bison", "bc", "libelf-dev", "libssl-dev", "cpio",
    "xz-utils", "kmod", "git", "python3", "perl", "rsync",
    # checkpatch.pl's SPDX check; Sphinx for 'make htmldocs' (lint).
    "python3-ply", "python3-sphinx", "python3-yaml",
    # VM and its userspace: busybox, static libc and libnuma for selftests.
    "qemu-system-x86", "busybox-static", "libc6-dev", "libnuma-dev", "gcc",
    # mkfs.ext4 for the guest's ext4 image (/mnt/ext4).
    "e2fsprogs",
    # The chart of 'make bench' (build/bench/results.png).
    "python3-matplotlib",
    # The harness's type checks ('make lint').
    "python3-mypy",
    # Needed by apt-get download of the source package.
    "debian-archive-keyring", "ca-certificates",
]

BINDGEN_VERSION = "0.72.1"
TOOLS = CACHE / "tools"
BINDGEN = TOOLS / "bin/bindgen"
LLVM_LIB = "/usr/lib/llvm-22/lib"

# 'make test ARCH=arm64' only: a cross compiler for the guest programs,
# QEMU for arm64, and busybox-static's arm64 build, unpacked (the host gets
# no foreign architecture).
ARM64_PACKAGES = ["gcc-aarch64-linux-gnu", "qemu-system-arm"]
ARM64_BUSYBOX = CACHE / "arm64/busybox"
ARM64_SUITE = "bookworm"

SOURCE_PKG = f"linux-source-{KVER_SERIES}"
SOURCE_SUITE = "trixie-backports"
DEBIAN_MIRROR = "http://deb.debian.org/debian"
DL = CACHE / "downloads"
UPSTREAM = CACHE / f"upstream-{KVER_SERIES}"  # git repo, one commit
UPSTREAM_STAMP = UPSTREAM / ".git/migrc-upstream-ok"


def _missing_packages(pkgs: list[str] = DEB_PACKAGES) -> list[str]:
    fmt = "${Package} ${db:Status-Abbrev}\n"
    p = subprocess.run(["dpkg-query", "-W", "-f", fmt] + pkgs,
                       capture_output=True, text=True)
    installed = {l.split()[0] for l in p.stdout.splitlines()
                 if len(l.split()) > 1 and l.split()[1].startswith("ii")}
    return [pkg for pkg in pkgs if pkg not in installed]


def install_packages() -> None:
    missing = _missing_packages()
    if not missing:
        return
    log(f"installing Debian packages: {' '.join(missing)}")
    env = {"DEBIAN_FRONTEND": "noninteractive"}
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    logs = CACHE / "logs"
    run(sudo + ["apt-get", "update"], env=env, logfile=logs / "apt-update.log")
    run(sudo + ["apt-get", "install", "-y", "--no-install-recommends"]
        + missing, env=env, logfile=logs / "apt-install.log")
    still = _missing_packages()
    if still:
        raise HarnessError(f"packages still missing after apt-get install: "
                           f"{' '.join(still)}")


def _cargo() -> str:
    for c in (shutil.which("cargo"), str(Path.home() / ".cargo/bin/cargo"),
              "/usr/bin/cargo"):
        if c and Path(c).exists():
            return c
    # Debian's cargo for rustc-web.
    install_packages_named(["cargo-web"])
    return "/usr/bin/cargo"


def install_packages_named(pkgs: list[str]) -> None:
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    run(sudo + ["apt-get", "install", "-y", "--no-install-recommends"]
        + pkgs, env={"DEBIAN_FRONTEND": "noninteractive"},
        logfile=CACHE / "logs/apt-install.log")


def install_bindgen() -> None:
    if BINDGEN.exists():
        v = subprocess.run([str(BINDGEN), "--version"], capture_output=True,
                           text=True).stdout
        if BINDGEN_VERSION in v:
            return
    log(f"installing bindgen-cli {BINDGEN_VERSION} into {TOOLS}")
    run([_cargo(), "install", "--locked", "--root", str(TOOLS),
         "bindgen-cli", "--version", BINDGEN_VERSION],
        env={"LIBCLANG_PATH": LLVM_LIB},
        logfile=CACHE / "logs/cargo-install-bindgen.log")


def _apt_private_opts(root: StrPath) -> list[str]:
    """apt options that use only our own sources list, lists and cache."""
    return [
        "-o", f"Dir::Etc::sourcelist={root}/sources.list",
        "-o", "Dir::Etc::sourceparts=-",
        "-o", f"Dir::State::Lists={root}/lists",
        "-o", f"Dir::Cache={root}/cache",
        "-o", "Dir::Etc::preferences=/dev/null",
        "-o", "Dir::Etc::preferencesparts=-",
        "-o", "APT::Get::List-Cleanup=0",
        "-o", "Acquire::Languages=none",
    ]


def _download_deb(name: str, suite: str, pkg: str,
                  arch: str | None = None) -> Path:
    """apt-get download of pkg from Debian's suite with a private apt
    configuration under DL/name; return the .deb, moved into DL."""
    root = DL / name
    for d in ("lists/partial", "cache/archives/partial"):
        (root / d).mkdir(parents=True, exist_ok=True)
    (root / "sources.list").write_text(
        f"deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] "
        f"{DEBIAN_MIRROR} {suite} main\n")
    opts = _apt_private_opts(root)
    if arch:
        opts += ["-o", f"APT::Architecture={arch}",
                 "-o", f"APT::Architectures={arch}"]
    run(["apt-get"] + opts + ["update", "-qq"])
    with tempfile.TemporaryDirectory(dir=DL) as tmp:
        run(["apt-get"] + opts + ["download", pkg], cwd=tmp)
        debs = list(Path(tmp).glob(f"{pkg}_*.deb"))
        if len(debs) != 1:
            raise HarnessError(f"apt-get download left {debs}")
        final = DL / debs[0].name
        shutil.move(str(debs[0]), final)
    return final


def _sha256(path: StrPath) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _cached_deb() -> Path | None:
    """Return the cached source .deb if present and intact, else None."""
    for deb in sorted(DL.glob(f"{SOURCE_PKG}_*.deb")):
        side = deb.with_suffix(".sha256")
        if side.exists() and side.read_text().strip() == _sha256(deb):
            return deb
        log(f"cached {deb.name} is corrupt or unverified: removing it")
        deb.unlink()
        side.unlink(missing_ok=True)
    return None


def fetch_source_deb() -> Path:
    deb = _cached_deb()
    if deb:
        return deb
    log(f"downloading {SOURCE_PKG} from Debian {SOURCE_SUITE}")
    try:
        final = _download_deb("apt", SOURCE_SUITE, SOURCE_PKG)
    except HarnessError as e:
        raise HarnessError(
            f"could not download {SOURCE_PKG} from {DEBIAN_MIRROR} "
            f"{SOURCE_SUITE}: {e}\nCheck network access to Debian's "
            f"archive, then run 'make setup' again (cache: {DL}).")
    final.with_suffix(".sha256").write_text(_sha256(final) + "\n")
    return final


def setup_arm64() -> None:
    """The extra host tools of an arm64 test run (idempotent)."""
    missing = _missing_packages(ARM64_PACKAGES)
    if missing:
        log(f"installing Debian packages for arm64: {' '.join(missing)}")
        install_packages_named(missing)
    if ARM64_BUSYBOX.exists():
        return
    log("downloading busybox-static for arm64")
    deb = _download_deb("apt-arm64", ARM64_SUITE, "busybox-static", "arm64")
    with tempfile.TemporaryDirectory(dir=DL) as tmp:
        run(["dpkg-deb", "-x", str(deb), tmp], quiet=True)
        ARM64_BUSYBOX.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(Path(tmp) / "bin/busybox", ARM64_BUSYBOX)
    deb.unlink()


def source_version(deb: StrPath) -> str:
    return out(["dpkg-deb", "-f", str(deb), "Version"])


# Debian's tarball ends .gitignore with a packaging block that ignores every
# top-level path; mainline has no such block, and it would hide every file a
# developer adds in the materialized tree.
DEBIAN_GITIGNORE = re.compile(
    r"\n#\n# Debian packaging: ignore everything at the top level.*\Z", re.S)
UPSTREAM_FORMAT = "2"  # bump when the way the upstream commit is made changes


def _drop_debian_gitignore(path: Path) -> str:
    text = path.read_text()
    new = DEBIAN_GITIGNORE.sub("\n", text)
    if new == text:
        return ""
    path.write_text(new)
    return ("\n\nDebian's packaging block at the end of .gitignore (which "
            "ignores every top-level path) was removed, as in mainline.")


def prepare_upstream() -> str:
    """Create the pristine upstream git repository (one commit, tag upstream).

    The stamp is written last, so an interrupted run is redone from scratch.
    """
    deb = fetch_source_deb()
    version = source_version(deb)
    stamp = f"{version} format={UPSTREAM_FORMAT}"
    if UPSTREAM_STAMP.exists() and UPSTREAM_STAMP.read_text().strip() == stamp:
        return version
    log(f"extracting {deb.name} ({version}) into {UPSTREAM}")
    if UPSTREAM.exists():
        shutil.rmtree(UPSTREAM)
    with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
        run(["dpkg-deb", "-x", str(deb), tmp])
        tars = list(Path(tmp).glob(f"usr/src/linux-source-{KVER_SERIES}.tar.*"))
        if len(tars) != 1:
            raise HarnessError(f"unexpected content in {deb}: {tars}")
        run(["tar", "-C", tmp, "-xf", str(tars[0])])
        top = Path(tmp) / f"linux-source-{KVER_SERIES}"
        if not (top / "Makefile").exists():
            raise HarnessError(f"no kernel Makefile in {tars[0]}")
        shutil.move(str(top), UPSTREAM)
    dropped = _drop_debian_gitignore(UPSTREAM / ".gitignore")
    git = ["git", "-C", str(UPSTREAM)]
    run(git + ["init", "-q", "-b", "pristine"])
    # Debian's tarball carries no .gitignore'd build outputs; add everything.
    run(git + ["add", "-A", "-f", "."], quiet=True)
    run(git + ["-c", "user.name=MIGRC harness",
               "-c", "user.email=migrc@localhost",
               "commit", "-q", "--no-verify", "-m",
               f"Linux {version} (Debian {SOURCE_PKG})\n\n"
               f"Pristine source from Debian's {SOURCE_PKG} {version} "
               f"({SOURCE_SUITE})." + dropped], quiet=True)
    run(git + ["tag", "-f", "upstream"], quiet=True)
    UPSTREAM_STAMP.write_text(stamp + "\n")
    return version


def setup() -> str:
    """Bring the host to a state where trees can be built and booted."""
    CACHE.mkdir(parents=True, exist_ok=True)
    install_packages()
    install_bindgen()
    version = prepare_upstream()
    log(f"setup complete: {SOURCE_PKG} {version}, bindgen {BINDGEN_VERSION}")
    return version
