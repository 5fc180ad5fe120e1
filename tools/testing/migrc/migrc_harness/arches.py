# SPDX-License-Identifier: GPL-2.0
"""What differs between the architectures the harness builds and boots,
as data, in one place: the rest of the harness asks ARCHES[name]."""

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from . import hostsetup

# The tiered VM: 4 vCPUs on node 0; node 1 is memory only.
VCPUS = 4
# A NUMA node: (size MiB, has CPUs, latency ns, bandwidth).
Node = tuple[int, bool, int, str]
NODES: list[Node] = [
    (512, True, 10, "10G"),
    (1536, False, 40, "2G"),
]
# The test kernels (x86_64) get a larger node 1, [512 MiB, 4 GiB) less the
# PCI hole: its range [2 GiB, 3 GiB) is then free at boot (QEMU loads the
# initrd just below 2 GiB, and node 1's KASAN shadow goes to its top), so
# 'hugepagesz=1G hugepages=1:1' gets a 1 GiB page there, which
# migrc_safety's gigantic_reuse gives back and allocates again at run time.
TEST_NODES: list[Node] = [NODES[0], (1792,) + NODES[1][1:]]


@dataclass(frozen=True)
class Arch:
    """One architecture of 'make test ARCH=...' and its VM."""
    name: str
    # The boot image, under the build directory.
    image: str
    # QEMU: the binary, the accelerator, the machine and the CPU.
    qemu: tuple[str, ...]
    console: str
    # A static busybox for the guest.
    busybox: Path
    # Compiler of the static guest programs.
    guest_cc: str
    # HMAT tables (memory tiers: demotion, NUMA tiering) in the VM.
    hmat: bool
    # The default 'make test' plan.
    plan: tuple[str, ...]
    # Added to a test kernel's command line.
    test_append: str
    # The NUMA nodes of a test kernel's VM.
    test_nodes: list[Node]
    # Seconds a test boot may take: about three times an unloaded boot
    # (a busy host slows TCG); a hang ends it sooner (vm.STAGE_SILENCE).
    test_timeout: int
    # The host's libnuma and the upstream mm selftests (mm-migration,
    # mm-selftests) can be built for it.
    host_userspace: bool
    # Every static check of 'make lint' (else clippy and compile_fail).
    full_lint: bool
    # What 'make test' installs on the host first, beyond 'make setup'.
    host_setup: Callable[[], None] | None = None


# Stages of the default 'make test' plan, in order.
DEFAULT_PLAN = ("topology", "migrc-core", "migrc-records", "migrc-switch",
                "migrc-defer", "migrc-safety", "demotion", "mm-migration",
                "mm-selftests")
# 'make test ARCH=arm64': the Rust KUnit suites at boot, then the core, what
# MIGRC does with a read-only migration there (migrc-defer: the architecture
# declines), and the safety kselftests.  No tiers without HMAT, so no
# demotion stage; the upstream selftests stay x86_64's (TCG time).
ARM64_PLAN = ("topology", "migrc-core", "migrc-switch", "migrc-defer",
              "migrc-safety")

ARCHES = {
    "x86_64": Arch(
        name="x86_64", image="arch/x86/boot/bzImage",
        # Without PCLMULQDQ the kernel's crc32 is its C code, which KASAN
        # instruments: the shadow debug mode checksums pages as they leave
        # the allocator, and a read of a page still poisoned as free must
        # be reported whatever the host CPU (-cpu max has PCLMULQDQ, whose
        # crc32 assembly KASAN does not see).
        qemu=("qemu-system-x86_64", "-accel", "tcg", "-machine",
              "pc,hmat=on", "-cpu", "max,la57=off,pclmulqdq=off"),
        console="ttyS0", busybox=Path("/bin/busybox"), guest_cc="gcc",
        hmat=True, plan=DEFAULT_PLAN,
        # A 1 GiB page on node 1 from boot, for migrc_safety's
        # gigantic_reuse (TEST_NODES). With KASLR the kernel image lands in
        # that range now and then.
        test_append="nokaslr hugepagesz=1G hugepages=1:1",
        test_nodes=TEST_NODES, test_timeout=3000, host_userspace=True,
        full_lint=True),
    "arm64": Arch(
        name="arm64", image="arch/arm64/boot/Image",
        # cortex-a57: no SVE/MTE/PAC to emulate, so TCG runs faster than
        # with -cpu max.
        qemu=("qemu-system-aarch64", "-accel", "tcg", "-machine",
              "virt,gic-version=3", "-cpu", "cortex-a57"),
        console="ttyAMA0", busybox=hostsetup.ARM64_BUSYBOX,
        guest_cc="aarch64-linux-gnu-gcc", hmat=False, plan=ARM64_PLAN,
        test_append="", test_nodes=NODES,
        test_timeout=4800,      # TCG emulates arm64 more slowly
        host_userspace=False, full_lint=False,
        host_setup=hostsetup.setup_arm64),
}
