# SPDX-License-Identifier: GPL-2.0
# Helpers for guest stages (sourced, busybox sh).

fail() { echo "FAIL: $*"; exit 1; }
note() { echo "  $*"; }
# vmstat VALUE: print a /proc/vmstat counter, 0 when absent.
vmstat() { awk -v k="$1" '$1 == k { print $2; f = 1 } END { if (!f) print 0 }' /proc/vmstat; }
# vmstat_sum PREFIX: sum of every /proc/vmstat counter starting with PREFIX.
vmstat_sum() { awk -v p="$1" 'index($1, p) == 1 { s += $2 } END { print s + 0 }' /proc/vmstat; }

# The MIGRC safety suite and its fault-injection knobs (migrc-safety,
# migrc-knobs). KNOB_TESTS pairs each rule (or rules joined by +, broken
# together) with a test that must catch it.
KNOB=/sys/kernel/debug/migrc/break
# The safety rules of include/linux/migrc_break_defs.h (the harness
# writes them), not its test aids.
KNOBS=$(cat /migrc/break-rules)
KNOB_TESTS="alloc:reuse_leak alloc:kernel_reuse write:write_fault_reuse
write:proc_mem_write write:vm_writev dirty:lost_write
batched:range_race numa_ro:numa_scan_writable
unpublished:window_munmap unpublished+write:window_mprotect
file_open:file_write file_open:file_mmap_write_ext4 alloc:file_reuse
file_writers:file_two_mappings file_writers:file_window
file_trunc:memfd_sealed_truncate"
# knob_set RULES: break RULES ("none" restores all); fails without the knob.
knob_set() { [ -w $KNOB ] && echo "$*" > $KNOB; }
# safety_run LOG [ARGS]: run migrc_safety into LOG; its exit status.
safety_run() { log=$1; shift; migrc_safety "$@" > "$log" 2>&1; }
# safety_summary LOG: each test's result and counts.
SAFETY_COUNTS='# [0-9]+ (pages|words|increments)|# forced|# shared file'
SAFETY_COUNTS="$SAFETY_COUNTS|# (/dev/shm|/mnt/ext4|two mappings|window|sealed memfd)"
SAFETY_COUNTS="$SAFETY_COUNTS|# [0-9]+ tries;"
SAFETY_RESULTS='# writable region|# pages [0-9]|ok |not ok |# (FAIL|PASS|Totals)'
safety_summary() {
	grep -E "^($SAFETY_COUNTS|$SAFETY_RESULTS)" "$1" | sed 's/^/  /'
}
# failing LOG: the names of the tests that failed.
failing() { sed -n 's/^not ok [0-9]* migrc\.\([a-z_]*\).*/\1/p' "$1" | tr '\n' ' ' | sed 's/ $//'; }

# 'make bench': the TLB shootdown interrupts of every CPU (/proc/interrupts).
tlb_ipis() {
	awk '$1 == "TLB:" { for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) s += $i }
	     END { print s + 0 }' /proc/interrupts
}
# bench_snapshot: the counters of results.json, in the order of BENCH_NAMES.
bench_snapshot() {
	echo "$(tlb_ipis) $(vmstat nr_tlb_remote_flush) $(vmstat nr_tlb_remote_flush_received)" \
	     "$(vmstat nr_tlb_local_flush_all) $(vmstat nr_tlb_local_flush_one)" \
	     "$(vmstat pgmigrate_success) $(vmstat_sum pgdemote_) $(vmstat pgpromote_success)" \
	     "$(vmstat numa_hint_faults) $(vmstat pgpromote_candidate)" \
	     "$(vmstat pgmigrate_fail) $(vmstat pgscan_kswapd)" \
	     "$(vmstat migrc_pages_deferred)" \
	     "$(awk '/^migrc_/ { printf "%s ", $2 }' /proc/vmstat)"
}
BENCH_NAMES="tlb_shootdowns nr_tlb_remote_flush nr_tlb_remote_flush_received"
BENCH_NAMES="$BENCH_NAMES nr_tlb_local_flush_all nr_tlb_local_flush_one"
BENCH_NAMES="$BENCH_NAMES pgmigrate_success pgdemote pgpromote"
# What drives the migration volume of the tiering scenarios.
BENCH_NAMES="$BENCH_NAMES numa_hint_faults pgpromote_candidate"
BENCH_NAMES="$BENCH_NAMES pgmigrate_fail pgscan_kswapd migrc_deferred"
# and every migrc_* event (refusals by reason, MIGRC's own flushes).
BENCH_NAMES="$BENCH_NAMES $(awk '/^migrc_/ { printf "%s ", $1 }' /proc/vmstat)"
