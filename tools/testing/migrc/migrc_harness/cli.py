# SPDX-License-Identifier: GPL-2.0
"""Command line of the MIGRC harness (called by the top-level GNUmakefile)."""

import argparse

from . import (arches, bench, hostsetup, kbuild, lint, patches, report,
               runner, shell, tree)
from .common import HarnessError, die, ensure_build_dir, log


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="migrc", description=__doc__)
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("setup", help="install packages, bindgen, kernel source")
    t = sub.add_parser("tree", help="materialize build/linux")
    t.add_argument("--force", action="store_true",
                   help="discard local changes in build/linux")
    sub.add_parser("sync", help="turn build/linux commits back into "
                   "overlay files, patches and the series")
    b = sub.add_parser("build", help="build a kernel")
    b.add_argument("--flavor", default="test", choices=kbuild.FLAVORS)
    b.add_argument("--variant", default="migrc", choices=kbuild.VARIANTS)
    te = sub.add_parser("test", help="build, boot and run the tests")
    te.add_argument("--probe", choices=sorted(runner.PROBES),
                    help="run one harness self-check probe instead")
    te.add_argument("--timeout", type=int, help="guest timeout, seconds")
    te.add_argument("--flavor", default="test", choices=kbuild.FLAVORS)
    te.add_argument("--variant", default="migrc", choices=kbuild.VARIANTS)
    te.add_argument("--arch", default="x86_64", choices=list(arches.ARCHES))
    te.add_argument("--stages", help="comma-separated guest stages to run "
                    "instead of the default plan ('' = KUnit only)")
    ku = sub.add_parser("kunit", help="MIGRC's Rust KUnit suites with "
                        "the kernel's kunit.py (a kernel of its own)")
    ku.add_argument("--suite", help="only the suites (or suite.case) "
                    "matching this glob, e.g. rust_migrc_gen")
    ru = sub.add_parser("run", help="boot a kernel in the tiered test VM "
                        "with a shell, or run one command")
    ru.add_argument("--kernel", help="the kernel image (default: the "
                    "flavor/variant's, built if needed)")
    ru.add_argument("--cmd", dest="command", help="a shell command to run in the guest, "
                    "then power off (default: an interactive shell)")
    ru.add_argument("--flavor", default="test", choices=kbuild.FLAVORS)
    ru.add_argument("--variant", default="migrc", choices=kbuild.VARIANTS)
    ru.add_argument("--arch", default="x86_64", choices=list(arches.ARCHES))
    be = sub.add_parser("bench", help="vanilla vs MIGRC on the tiered VM")
    be.add_argument("--quick", action="store_true")
    be.add_argument("--micro", action="store_true",
                    help="the fast paths, one scenario per boot, 10 + 10 "
                    "boots, 95%% confidence interval of the ratio")
    be.add_argument("--reps", type=int)
    be.add_argument("--workload", help="a static binary to run as well")
    be.add_argument("--args", default="", help="its arguments")
    be.add_argument("--scenarios", help="comma-separated scenarios to run "
                    "(default: all)")
    be.add_argument("--kernels", help="comma-separated kernels to boot "
                    "(default: vanilla,migrc)")
    be.add_argument("--append", default="", help="kernel command line "
                    "added to every boot (migrc=off: the MIGRC kernel with "
                    "deferral off)")
    sub.add_parser("lint", help="build the test kernel and run the static "
                   "checks of 'make test' (clippy, rustfmt, W=1, kernel-doc, "
                   "rustdoc, htmldocs)")
    sub.add_parser("unit", help="the harness's own unit tests")
    sub.add_parser("results", help="regenerate the README's benchmark "
                   "tables from results/")
    sub.add_parser("patches", help="export the series with a cover letter "
                   "into build/patches")
    c = sub.add_parser("check-patches", help="checkpatch --strict, git am "
                       "on pristine upstream, build every patch with "
                       "MIGRC=y and =n")
    c.add_argument("--from", dest="first", type=int, default=1,
                   help="build from this patch on (the ones before are "
                   "checked and applied, not built)")
    sub.add_parser("check-harness", help="show that a failing test, a "
                   "kernel WARN and a hung guest each fail the run")
    args = ap.parse_args(argv)
    try:
        # Every command needs the host set up; setup is idempotent and fast
        # when nothing is missing.
        hostsetup.setup()
        ensure_build_dir()
        if args.cmd == "tree":
            tree.materialize(force=args.force)
        elif args.cmd == "sync":
            tree.sync()
        elif args.cmd == "build":
            kbuild.Build(args.flavor, args.variant).build()
        elif args.cmd == "test":
            stages = None
            if args.stages is not None:
                stages = [x for x in args.stages.split(",") if x]
            return runner.test(probe=args.probe, timeout=args.timeout,
                               stages=stages, flavor=args.flavor,
                               variant=args.variant, arch=args.arch)
        elif args.cmd == "kunit":
            return runner.kunit_only(args.suite)
        elif args.cmd == "run":
            return shell.run_vm(kernel=args.kernel, cmd=args.command,
                                flavor=args.flavor, variant=args.variant,
                                arch=args.arch)
        elif args.cmd == "bench":
            return bench.bench(quick=args.quick, reps=args.reps,
                               workload=args.workload, args=args.args,
                               scenarios=args.scenarios,
                               kernels=args.kernels, micro=args.micro,
                               append=args.append)
        elif args.cmd == "lint":
            return runner.lint_only()
        elif args.cmd == "unit":
            return lint.unit()
        elif args.cmd == "results":
            report.update_readme()
        elif args.cmd == "patches":
            patches.export()
        elif args.cmd == "check-patches":
            return patches.check(args.first)
        elif args.cmd == "check-harness":
            return runner.check_harness()
    except HarnessError as e:
        die(str(e))
    except KeyboardInterrupt:
        log("interrupted")
        return 130
    return 0
