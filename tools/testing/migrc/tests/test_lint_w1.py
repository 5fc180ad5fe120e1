# SPDX-License-Identifier: GPL-2.0
"""The W=1 lint: which compiler warnings of a build log it counts."""

import unittest
from pathlib import Path

from migrc_harness import lint


class W1Warnings(unittest.TestCase):
    def test_every_directory_the_series_changes_counts(self) -> None:
        """A W=1 warning in fs/ or drivers/ is found, as one in mm/."""
        src = Path("/src/linux")
        log = "\n".join(
            f"{src}/{f}:12:3: warning: no previous prototype [-Wmissing]"
            for f in ("fs/ext4/super.c", "drivers/iommu/iommufd/pages.c",
                      "mm/migrc.c", "include/linux/fs.h"))
        warnings, errors = lint._warnings(log, src)
        self.assertEqual(sorted(f for f, _ in warnings),
                         ["drivers/iommu/iommufd/pages.c",
                          "fs/ext4/super.c", "include/linux/fs.h",
                          "mm/migrc.c"])
        self.assertFalse(errors)


if __name__ == "__main__":
    unittest.main()
