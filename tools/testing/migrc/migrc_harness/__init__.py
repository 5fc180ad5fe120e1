# SPDX-License-Identifier: GPL-2.0
"""Host-side harness for MIGRC: setup, kernel tree, builds, VM and tests."""
