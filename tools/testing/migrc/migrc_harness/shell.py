# SPDX-License-Identifier: GPL-2.0
"""'make run': a kernel in the tiered test VM, with a shell or one command.

The VM is the one 'make test' boots (same QEMU line, same initramfs: the
guest programs under /migrc/bin, the stages, the installed kselftests under
/kselftest), but /init runs no stage: it starts a shell on the serial
console, or runs the command and powers the VM off.
"""

import re
import shlex
import subprocess
from pathlib import Path

from . import kbuild, runner, vm
from .arches import ARCHES, NODES
from .common import HarnessError, StrPath, log


# /init's last word on the command (guest/init).
RUN_EXIT = re.compile(r"migrc-guest: run exited with (\d+)")


def qemu_line(image: StrPath, initrd: StrPath, flavor: str = "test",
              arch: str = "x86_64", shell: bool = True) -> list[str]:
    """The QEMU command line of 'make run' (README.md shows it)."""
    a = ARCHES[arch]
    # The boot of 'make test', KUnit run included: the suites churn memory,
    # and the placement tests of the safety suite (gigantic_reuse, the
    # shadow's view of numa_ro) were seen to need that churn.
    append = vm.kernel_cmdline([], arch, " ".join(filter(None, (
        a.test_append if flavor == "test" else "",
        "harness.shell" if shell else ""))))
    return vm.qemu_args(image, initrd, append, arch,
                        a.test_nodes if flavor == "test" else NODES)


def run_vm(kernel: str | None, cmd: str | None, flavor: str = "test",
           variant: str = "migrc", arch: str = "x86_64") -> int:
    """Boot; return the exit status of QEMU."""
    build = kbuild.Build(flavor, variant, arch)
    if kernel:
        image = Path(kernel).resolve()
        if not image.is_file():
            raise HarnessError(f"no kernel image {image}")
        # The guest programs still need a kernel's uapi headers.
        if not (build.out / "usr/include").is_dir():
            build.build()
    else:
        image = build.build()
    initrd = runner.test_initramfs(
        build, files={"/migrc/run-cmd": cmd + "\n"} if cmd else None)
    args = qemu_line(image, initrd, flavor, arch, shell=not cmd)
    print("QEMU command line:\n" + shlex.join(args), flush=True)
    if not cmd:
        log("booting with a shell (exit powers the VM off)")
        return subprocess.run(args).returncode
    log("booting to run: " + cmd)
    # The console, shown as it comes; the status is the command's.
    p = subprocess.Popen(args, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, text=True, errors="replace")
    status = None
    for line in p.stdout or ():
        print(line, end="", flush=True)
        m = RUN_EXIT.search(line)
        if m:
            status = int(m.group(1))
    if p.wait() or status is None:
        log(f"QEMU exited with {p.returncode} before the command ended")
        return 1
    return status
