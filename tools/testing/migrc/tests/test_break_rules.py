# SPDX-License-Identifier: GPL-2.0
"""The safety rules the migrc-knobs stage breaks come from the one list."""

import re
import unittest

from migrc_harness import vm


class BreakRulesTest(unittest.TestCase):
    def test_rules_not_aids(self) -> None:
        defs = ("MIGRC_BREAK_RULE(ALLOC, alloc)\t/* x */\n"
                "MIGRC_TEST_AID(HOLD_SRC, hold_src)\n"
                " * MIGRC_BREAK_RULE(NAME, name) in a comment\n"
                "MIGRC_BREAK_RULE(NUMA_RO, numa_ro) /* y */\n")
        self.assertEqual(vm.break_rules(defs), ["alloc", "numa_ro"])

    def test_every_rule_has_a_test_that_catches_it(self) -> None:
        rules = vm.break_rules(vm.BREAK_DEFS.read_text())
        self.assertIn("alloc", rules)
        self.assertNotIn("hold_src", rules)
        wrapper = (vm.REPO / "tools/testing/selftests/migrc/"
                   "run_migrc_safety.sh").read_text()
        m = re.search(r'^knob_tests="([^"]*)"', wrapper, re.M)
        self.assertIsNotNone(m)
        pairs = m.group(1).split() if m else []
        covered = {r for p in pairs for r in p.split(":")[0].split("+")}
        self.assertEqual(sorted(set(rules) - covered), [])
        self.assertEqual(sorted(covered - set(rules)), [])
