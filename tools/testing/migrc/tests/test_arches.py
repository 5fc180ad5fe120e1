# SPDX-License-Identifier: GPL-2.0
"""The VM each architecture boots (migrc_harness.arches, vm.qemu_args):
the command lines are pinned, so a change of the per-architecture data
shows here first."""

import unittest

import shlex

from migrc_harness import arches, bench, shell, vm
from migrc_harness.common import REPO

X86 = ["qemu-system-x86_64", "-accel", "tcg", "-machine", "pc,hmat=on",
       "-cpu", "max,la57=off,pclmulqdq=off"]
ARM64 = ["qemu-system-aarch64", "-accel", "tcg", "-machine",
         "virt,gic-version=3", "-cpu", "cortex-a57"]
COMMON = ["-smp", "4", "-m", "2048M", "-nographic", "-no-reboot",
          "-monitor", "none", "-kernel", "K", "-initrd", "I", "-append", "A",
          "-object", "memory-backend-ram,id=m0,size=512M"]
HMAT = "hmat-lb,initiator=0,target={},hierarchy=memory,data-type=access-"


class QemuArgs(unittest.TestCase):
    def test_x86_64_has_tiers(self):
        args = vm.qemu_args("K", "I", "A", "x86_64")
        self.assertEqual(args, X86 + COMMON + [
            "-numa", "node,nodeid=0,memdev=m0,initiator=0,cpus=0-3",
            "-object", "memory-backend-ram,id=m1,size=1536M",
            "-numa", "node,nodeid=1,memdev=m1,initiator=0",
            "-numa", HMAT.format(0) + "latency,latency=10",
            "-numa", HMAT.format(0) + "bandwidth,bandwidth=10G",
            "-numa", HMAT.format(1) + "latency,latency=40",
            "-numa", HMAT.format(1) + "bandwidth,bandwidth=2G"])

    def test_arm64_has_two_plain_nodes(self):
        args = vm.qemu_args("K", "I", "A", "arm64")
        self.assertEqual(args, ARM64 + COMMON + [
            "-numa", "node,nodeid=0,memdev=m0,cpus=0-3",
            "-object", "memory-backend-ram,id=m1,size=1536M",
            "-numa", "node,nodeid=1,memdev=m1"])

    def test_x86_64_test_kernels_get_a_larger_node_1(self):
        args = vm.qemu_args("K", "I", "A", "x86_64",
                            arches.ARCHES["x86_64"].test_nodes)
        self.assertIn("memory-backend-ram,id=m1,size=1792M", args)
        self.assertIn("2304M", args)

    def test_micro_boots_count_instructions(self):
        args = vm.qemu_args("K", "I", "A", "x86_64",
                            clock=bench.ICOUNT_CLOCK)
        self.assertEqual(args[:len(X86) + 2],
                         X86 + ["-icount", "shift=0,sleep=off"])
        self.assertNotIn("-icount", vm.qemu_args("K", "I", "A", "x86_64"))


class ReadmeQemuLine(unittest.TestCase):
    def test_readme_gives_make_runs_qemu_line(self):
        """README.md shows the QEMU command line 'make run' uses."""
        readme = (REPO / "README.md").read_text()
        start = readme.index("\nqemu-system-x86_64 ") + 1
        block = readme[start:readme.index("\n```", start)]
        shown = shlex.split(block.replace("\\\n", " "))
        self.assertEqual(shown, shell.qemu_line(
            "build/kbuild/x86_64-test-migrc/arch/x86/boot/bzImage",
            "build/initramfs.cpio.gz"))


class Plans(unittest.TestCase):
    def test_arm64_runs_no_tiered_or_upstream_stage(self):
        a = arches.ARCHES["arm64"]
        self.assertFalse({"demotion", "mm-migration", "mm-selftests"}
                         & set(a.plan))
        self.assertFalse(a.hmat or a.host_userspace)

    def test_x86_64_runs_everything(self):
        a = arches.ARCHES["x86_64"]
        self.assertEqual(a.plan[-3:],
                         ("demotion", "mm-migration", "mm-selftests"))
        self.assertTrue(a.hmat and a.host_userspace)


if __name__ == "__main__":
    unittest.main()
