# SPDX-License-Identifier: GPL-2.0
#
# MIGRC: the developer entry points.  Every target sets the host up first
# (idempotent), so a fresh clone needs nothing but 'make test'.
# See README.md.

MIGRC := python3 tools/testing/migrc/migrc

.PHONY: all test setup tree sync kernel kernel-vanilla check-harness help

all: help

help:
	@echo "make test           build the test kernel, boot the tiered VM, run all tests"
	@echo "make setup          install packages, bindgen and the Linux 7.3 source"
	@echo "make tree           materialize build/linux (upstream + patches + overlay)"
	@echo "make sync           turn commits made in build/linux back into the repo"
	@echo "make kernel         build the test kernel only (FLAVOR=test|bench)"
	@echo "make check-harness  show that a failing test, a WARN and a hang fail the run"

test:
	$(MIGRC) test $(if $(PROBE),--probe $(PROBE)) $(if $(filter undefined,$(origin STAGES)),,--stages "$(STAGES)")

setup:
	$(MIGRC) setup

tree:
	$(MIGRC) tree $(if $(FORCE),--force)

sync:
	$(MIGRC) sync

FLAVOR ?= test
kernel:
	$(MIGRC) build --flavor $(FLAVOR) --variant migrc

kernel-vanilla:
	$(MIGRC) build --flavor $(FLAVOR) --variant vanilla

check-harness:
	$(MIGRC) check-harness
