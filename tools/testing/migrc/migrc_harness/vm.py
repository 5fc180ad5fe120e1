# SPDX-License-Identifier: GPL-2.0
"""The tiered test VM: initramfs, QEMU (TCG) and console parsing.

Topology (mirrors a DRAM + slow-memory machine): node 0 holds every vCPU and
512 MiB, node 1 is CPU-less with 1536 MiB.  On x86_64, HMAT latency/bandwidth
entries make node 1 a lower memory tier, so Linux builds a demotion path
0 -> 1.  On arm64 ('virt' machine, device tree) the nodes are the same but
there is no HMAT, hence one tier: migration between the nodes works, demotion
does not.  KVM hangs on these hosts, so QEMU always runs with TCG.
"""

import gzip
import os
import re
import selectors
import shutil
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .arches import ARCHES, NODES, VCPUS, Node
from .common import BUILD, HARNESS, REPO, HarnessError, StrPath, log, run

GUEST = HARNESS / "guest"
# Called with each console line worth showing live.
Echo = Callable[[str], None]

# Lines of the console that mean the kernel is unhappy, whatever the tests say.
KERNEL_REPORT = re.compile(
    r"(------------\[ cut here \]------------|^WARNING:|^BUG:|"
    r"^kernel BUG at|^Oops|^Kernel panic|^general protection fault|"
    r"^UBSAN:|^INFO: task .* blocked for more than|"
    r"^watchdog: BUG: soft lockup|^RCU: .*stall|"
    r"^rcu: INFO: .*stall)")
TIMESTAMP = re.compile(r"^\[\s*\d+\.\d+\]\s?")
GUEST_LINE = re.compile(r"migrc-guest: (\w+)\s*(.*)$")


def qemu_args(kernel: StrPath, initrd: StrPath, append: str,
              arch: str = "x86_64", nodes: list[Node] = NODES,
              clock: tuple[str, ...] = ()) -> list[str]:
    """QEMU's command line; @clock: options of the guest's clock (the
    micro benchmarks' ICOUNT_CLOCK), none for the host's."""
    a = ARCHES[arch]
    args = list(a.qemu) + list(clock) + ["-smp", str(VCPUS),
                      "-m", f"{sum(n[0] for n in nodes)}M",
                      "-nographic", "-no-reboot", "-monitor", "none",
                      "-kernel", str(kernel), "-initrd", str(initrd),
                      "-append", append]
    cpus = f"0-{VCPUS - 1}"
    for i, (size, has_cpus, _, _) in enumerate(nodes):
        args += ["-object", f"memory-backend-ram,id=m{i},size={size}M"]
        node = f"node,nodeid={i},memdev=m{i}"
        if a.hmat:
            node += ",initiator=0"
        if has_cpus:
            node += f",cpus={cpus}"
        args += ["-numa", node]
    if not a.hmat:
        return args
    for i, (_, _, lat, bw) in enumerate(nodes):
        base = (f"hmat-lb,initiator=0,target={i},hierarchy=memory,"
                f"data-type=")
        args += ["-numa", base + f"access-latency,latency={lat}",
                 "-numa", base + f"access-bandwidth,bandwidth={bw}"]
    return args


BREAK_DEFS = REPO / "include/linux/migrc_break_defs.h"


def break_rules(defs: str) -> list[str]:
    """The debugfs names of the MIGRC_BREAK_RULE(NAME, name) lines of
    migrc_break_defs.h: the safety rules, not the test aids."""
    return re.findall(r"^MIGRC_BREAK_RULE\(\w+, (\w+)\)", defs, re.M)


# The ext4 file system the guest mounts on a loop device at /mnt/ext4, for
# the file-backed safety tests (one 4 MiB file at a time).
EXT4_IMAGE_MB = 16


def make_ext4_image(path: Path) -> None:
    """An empty ext4 file system in @path (sparse; gzip keeps it small)."""
    mkfs = shutil.which("mkfs.ext4") or "/usr/sbin/mkfs.ext4"
    run([mkfs, "-q", "-F", "-b", "4096", "-E", "root_owner=0:0", str(path),
         f"{EXT4_IMAGE_MB}M"], quiet=True)


def build_initramfs(programs: Mapping[str, StrPath],
                    name: str = "initramfs",
                    files: dict[str, str] | None = None,
                    arch: str = "x86_64",
                    trees: dict[str, Path] | None = None) -> Path:
    """Assemble the initramfs: busybox, /init, stages and static programs.

    programs: {name in /migrc/bin: host path of a static binary}.
    files: {path in the guest: text}, more files to add.
    trees: {directory in the guest: host directory to copy there}.
    """
    root = BUILD / name
    if root.exists():
        shutil.rmtree(root)
    for d in ("bin", "sbin", "proc", "sys", "dev", "tmp", "migrc/bin",
              "migrc/stages", "etc"):
        (root / d).mkdir(parents=True, exist_ok=True)
    busybox = ARCHES[arch].busybox
    if not busybox.exists():
        raise HarnessError(f"{busybox} missing: run 'make setup'")
    shutil.copy2(busybox, root / "bin/busybox")
    # The scripts are kept without execute permission (checkpatch: no
    # executable source files); the guest runs them.
    shutil.copy2(GUEST / "init", root / "init")
    (root / "init").chmod(0o755)
    for f in (GUEST / "stages").iterdir():
        shutil.copy2(f, root / "migrc/stages" / f.name)
        (root / "migrc/stages" / f.name).chmod(0o755)
    # The rules the migrc-knobs stage breaks in turn, from the one list.
    (root / "migrc/break-rules").write_text(
        " ".join(break_rules(BREAK_DEFS.read_text())) + "\n")
    make_ext4_image(root / "migrc/ext4.img")
    for prog, path in programs.items():
        shutil.copy2(path, root / "migrc/bin" / prog)
    for path, text in (files or {}).items():
        (root / path.lstrip("/")).write_text(text)
    for path, src in (trees or {}).items():
        shutil.copytree(src, root / path.lstrip("/"), symlinks=True)
    cpio = BUILD / f"{name}.cpio.gz"
    listing = subprocess.run(["find", "."], cwd=root, capture_output=True,
                             text=True, check=True).stdout
    p = subprocess.run(["cpio", "-o", "-H", "newc", "--quiet",
                        "--owner=0:0"], cwd=root, input=listing.encode(),
                       capture_output=True)
    if p.returncode != 0:
        raise HarnessError(f"cpio failed: {p.stderr.decode()}")
    cpio.write_bytes(gzip.compress(p.stdout, compresslevel=1))
    return cpio


@dataclass
class GuestRun:
    """What one boot of the VM produced."""
    console: list[str] = field(default_factory=list)
    # stage -> (verdict, rc)
    stages: dict[str, tuple[str, int]] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    # (line number, text)
    reports: list[tuple[int, str]] = field(default_factory=list)
    init_line: int = -1
    done: bool = False
    timed_out: bool = False
    stalled: bool = False   # silent before userspace: killed early
    rebooted: bool = False  # this is the second boot, after a stall
    silent: bool = False    # killed: nothing printed for STAGE_SILENCE
    poweroff_stuck: bool = False  # still up POWEROFF_GRACE after "done"
    exit_code: int = 0
    seconds: float = 0.0

    def kernel_log(self) -> list[str]:
        """Console lines before userspace started (KUnit's KTAP output)."""
        end = self.init_line if self.init_line >= 0 else len(self.console)
        return self.console[:end]

    def stage_output(self, stage: str) -> list[str]:
        out, inside = [], False
        for line in self.console:
            m = GUEST_LINE.search(line)
            if m and m.group(1) == "begin" and m.group(2) == stage:
                inside = True
                continue
            if m and m.group(1) == "end" and \
                    m.group(2).split()[0] == stage:
                break
            if inside:
                out.append(line)
        return out


# A boot that prints nothing this long (or a tenth of its timeout, for
# slower emulation) before userspace starts is stuck (seen once under TCG,
# right after the lockdep banner): boot again, once, unless it reported
# something first. The judge says so.
BOOT_SILENCE = 240
# A guest that prints nothing this long once userspace runs is hung: every
# stage prints as it goes, and no test of the safety suite may run longer
# than its own 300 s limit. The timeout of a whole boot is then generous
# (a busy host slows TCG), while a hang still ends the boot early.
STAGE_SILENCE = 600
# Once the guest says "done", its plan is complete and the boot's timeout
# no longer applies: what is left is sync and poweroff, which take a
# second. A guest that has not powered off this long later is stuck (a
# sync that never ends, a CPU that does not stop): stopped, and a failure.
POWEROFF_GRACE = 120


def boot(kernel: StrPath, initrd: StrPath, plan: list[str], timeout: int,
         logfile: StrPath, extra_append: str = "", echo: Echo | None = None,
         arch: str = "x86_64", nodes: list[Node] = NODES,
         clock: tuple[str, ...] = (),
         hang: int | None = STAGE_SILENCE) -> GuestRun:
    """Boot the VM, run the plan's stages, return a GuestRun.

    echo(line) is called for each console line worth showing live; clock:
    see qemu_args(); hang: seconds of silence after userspace started that
    end the boot (None: only the timeout does).
    """
    silence = max(BOOT_SILENCE, timeout // 10)
    stalled = Path(f"{logfile}.stalled")
    stalled.unlink(missing_ok=True)
    r = _boot_once(kernel, initrd, plan, timeout, logfile, extra_append,
                   echo, arch, nodes, silence, clock, hang)
    if not r.stalled or r.reports:
        return r
    log(f"the boot printed nothing for {silence}s before userspace "
        f"started: booting again (console kept in {stalled})")
    Path(logfile).replace(stalled)
    r = _boot_once(kernel, initrd, plan, timeout, logfile, extra_append,
                   echo, arch, nodes, silence, clock, hang)
    r.rebooted = True
    return r


def kernel_cmdline(plan: list[str], arch: str, extra: str = "") -> str:
    """The guest kernel's command line: console, the stages /init runs."""
    return (f"console={ARCHES[arch].console},115200 panic=-1 loglevel=7 "
            f"harness.plan={','.join(plan)} {extra}").strip()


def _boot_once(kernel: StrPath, initrd: StrPath, plan: list[str],
               timeout: int, logfile: StrPath, extra_append: str,
               echo: Echo | None, arch: str, nodes: list[Node],
               silence: int, clock: tuple[str, ...],
               hang: int | None) -> GuestRun:
    append = kernel_cmdline(plan, arch, extra_append)
    args = qemu_args(kernel, initrd, append, arch, nodes, clock)
    log(f"booting {Path(kernel).parent.parent.parent.parent.name} with "
        f"stages {','.join(plan) or '(none)'} (timeout {timeout}s)")
    r = GuestRun()
    t0 = time.monotonic()
    Path(logfile).parent.mkdir(parents=True, exist_ok=True)
    with open(logfile, "w") as lf:
        lf.write("# " + " ".join(args) + "\n")
        p = subprocess.Popen(args, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL)
        if p.stdout is None:
            raise HarnessError("QEMU started without its console pipe")
        console = p.stdout
        sel = selectors.DefaultSelector()
        sel.register(console, selectors.EVENT_READ)
        buf = b""
        heard = t0
        done_at = 0.0
        while True:
            now = time.monotonic()
            left = timeout - (now - t0)
            if r.done:
                done_at = done_at or now
                left = POWEROFF_GRACE - (now - done_at)
                if left <= 0:
                    r.poweroff_stuck = True
                    p.kill()
                    # What it printed before the kill still counts.
                    buf += console.read()
                    break
            elif left <= 0:
                r.timed_out = True
                p.kill()
                break
            if r.init_line < 0 and now - heard > silence:
                r.stalled = r.timed_out = True
                p.kill()
                break
            if (r.init_line >= 0 and not r.done and hang
                    and now - heard > hang):
                r.silent = r.timed_out = True
                p.kill()
                break
            if not sel.select(timeout=min(left, 1.0)):
                if p.poll() is not None:
                    break
                continue
            chunk = os.read(console.fileno(), 65536)
            if not chunk:
                break
            heard = time.monotonic()
            buf += chunk
            *lines, buf = buf.split(b"\n")
            for raw in lines:
                line = raw.decode("utf-8", "replace").rstrip("\r")
                lf.write(line + "\n")
                _take(r, line, echo)
        for raw in buf.split(b"\n") if buf else []:
            line = raw.decode("utf-8", "replace").rstrip("\r")
            lf.write(line + "\n")
            _take(r, line, echo)
        status = p.wait()
        console.close()
        # Killed after its plan: QEMU's status says only that.
        r.exit_code = 0 if r.poweroff_stuck else status
    r.seconds = time.monotonic() - t0
    return r


def _take(r: GuestRun, line: str, echo: Echo | None) -> None:
    n = len(r.console)
    r.console.append(line)
    msg = TIMESTAMP.sub("", line)
    if KERNEL_REPORT.search(msg):
        r.reports.append((n, line))
    m = GUEST_LINE.search(line)
    if m:
        what, rest = m.group(1), m.group(2)
        if what == "init":
            r.init_line = n
        elif what == "end":
            parts = rest.split()
            stage, verdict = parts[0], parts[1]
            rc = int(parts[2].split("=")[1]) if len(parts) > 2 else -1
            r.stages[stage] = (verdict, rc)
            r.order.append(stage)
        elif what == "done":
            r.done = True
    if echo:
        echo(line)


def report_title(ctx: list[str]) -> str:
    """The headline of a kernel report: its WARNING:/BUG:/... line."""
    msgs = [TIMESTAMP.sub("", l) for l in ctx]
    for m in msgs:
        if KERNEL_REPORT.search(m) and "cut here" not in m:
            return m.strip()
    return msgs[0].strip() if msgs else "?"


def report_context(r: GuestRun, n: int, before: int = 3,
                   after: int = 25) -> list[str]:
    """The console lines around a kernel report, for the failure message."""
    return r.console[max(0, n - before):n + after]
