# SPDX-License-Identifier: GPL-2.0
# Helpers for guest stages (sourced, busybox sh).

fail() { echo "FAIL: $*"; exit 1; }
note() { echo "  $*"; }
# MIGRC's events, every one (a few totals of them are in /proc/vmstat too).
MIGRC_STATS=/sys/kernel/debug/migrc/stats
# counters: /proc/vmstat, then MIGRC's events (where the kernel has them).
counters() { cat /proc/vmstat; cat $MIGRC_STATS 2>/dev/null; }
# vmstat NAME: print a counter of /proc/vmstat or a MIGRC event, 0 when absent.
vmstat() { counters | awk -v k="$1" '$1 == k { v = $2; f = 1 } END { print f ? v : 0 }'; }
# vmstat_sum PREFIX: sum of every /proc/vmstat counter starting with PREFIX.
vmstat_sum() { awk -v p="$1" 'index($1, p) == 1 { s += $2 } END { print s + 0 }' /proc/vmstat; }
# migrc_events FIELD: field 1 (names) or 2 (values) of every MIGRC event.
migrc_events() { cat $MIGRC_STATS 2>/dev/null | awk -v f="$1" '{ printf "%s ", $f }'; }

# MIGRC's trace events (include/trace/events/migrc.h).
TRACING=/sys/kernel/tracing
MIGRC_TRACE=$TRACING/events/migrc
# migrc_trace_start [EVENT...]: record MIGRC's trace events (or only the
# ones named) from now on, and nothing else.
migrc_trace_start() {
	mount -t tracefs none $TRACING 2>/dev/null
	for e in migrc_publish migrc_flush migrc_refuse; do
		[ -w $MIGRC_TRACE/$e/enable ] || fail "no trace event migrc:$e"
	done
	echo 0 > $TRACING/tracing_on
	echo > $TRACING/set_event
	# Node 0 is small: 1 MiB per CPU holds thousands of records.
	echo 1024 > $TRACING/buffer_size_kb
	echo > $TRACING/trace
	if [ $# -eq 0 ]; then
		echo 1 > $MIGRC_TRACE/enable
	else
		for e; do echo 1 > $MIGRC_TRACE/$e/enable; done
	fi
	echo 1 > $TRACING/tracing_on
}
# migrc_trace_stop FILE: stop, and keep the records in FILE; fails if the
# ring buffer lost any (the counts would be short).
migrc_trace_stop() {
	echo 0 > $TRACING/tracing_on
	echo 0 > $MIGRC_TRACE/enable
	lost=$(cat $TRACING/per_cpu/cpu*/stats | awk '$1 == "overrun:" { s += $2 } END { print s + 0 }')
	[ "$lost" -eq 0 ] || fail "the trace buffer lost $lost records"
	grep -v '^#' $TRACING/trace > "$1"
	echo > $TRACING/trace
	echo 4 > $TRACING/buffer_size_kb
}
# migrc_gen latest|retired: MIGRC's generations (debugfs migrc/state).
migrc_gen() { awk -v k="$1" '$1 == k { print $2 }' /sys/kernel/debug/migrc/state; }

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
	     "$(vmstat migrc_pages_deferred) $(vmstat pgfault)" \
	     "$(migrc_events 2)"
}
BENCH_NAMES="tlb_shootdowns nr_tlb_remote_flush nr_tlb_remote_flush_received"
BENCH_NAMES="$BENCH_NAMES nr_tlb_local_flush_all nr_tlb_local_flush_one"
BENCH_NAMES="$BENCH_NAMES pgmigrate_success pgdemote pgpromote"
# What drives the migration volume of the tiering scenarios.
BENCH_NAMES="$BENCH_NAMES numa_hint_faults pgpromote_candidate"
BENCH_NAMES="$BENCH_NAMES pgmigrate_fail pgscan_kswapd migrc_deferred"
# Faults of every kind: what write-protecting cold pages would add.
BENCH_NAMES="$BENCH_NAMES pgfault"
# and every migrc_* event (refusals by reason, MIGRC's own flushes).
BENCH_NAMES="$BENCH_NAMES $(migrc_events 1)"
