# SPDX-License-Identifier: GPL-2.0
# Sourced by the bench stage (after lib.sh), and by the workload's mark.
# Attribution, in every run: two histograms count, by kernel call chain,
# the shootdown rounds (tlb:tlb_flush with reason TLB_REMOTE_SEND_IPI, one
# per flush_tlb_multi(), as nr_tlb_remote_flush) and the IPIs (one
# csd:csd_queue_cpu per CPU asked to run flush_tlb_func(), as
# nr_tlb_remote_flush_received). The harness sorts the chains into causes.
# On a MIGRC kernel a third one counts MIGRC's own flushes by the reason
# its trace event migrc:migrc_flush gives (those that asked CPUs to flush).
T=/sys/kernel/tracing
mount -t tracefs none $T 2>/dev/null
FLUSH_FN=$(awk '$3 == "flush_tlb_func" { print "0x" $1; exit }' /proc/kallsyms)
[ -n "$FLUSH_FN" ] || fail "flush_tlb_func is not in /proc/kallsyms"
ROUNDS=$T/events/tlb/tlb_flush
IPIS=$T/events/csd/csd_queue_cpu
[ -f $ROUNDS/hist ] && [ -f $IPIS/hist ] ||
	fail "no hist triggers on tlb:tlb_flush and csd:csd_queue_cpu"
HIST_ROUNDS="hist:keys=common_stacktrace:size=8192 if reason == 4"
HIST_IPIS="hist:keys=common_stacktrace:size=8192 if func == $FLUSH_FN"
MIGRC_FLUSHES=$T/events/migrc/migrc_flush
# (128 entries: the smallest map a hist trigger takes, TRACING_MAP_BITS_MIN.)
HIST_MIGRC="hist:keys=reason:vals=hitcount,cpus:size=128 if cpus > 0"
# hist_reset: drop what the histograms counted and count again.
hist_reset() {
	echo "!$HIST_ROUNDS" > $ROUNDS/trigger 2>/dev/null
	echo "!$HIST_IPIS" > $IPIS/trigger 2>/dev/null
	echo "$HIST_ROUNDS" > $ROUNDS/trigger || fail "cannot set $HIST_ROUNDS"
	echo "$HIST_IPIS" > $IPIS/trigger || fail "cannot set $HIST_IPIS"
	[ -d $MIGRC_FLUSHES ] || return 0
	echo "!$HIST_MIGRC" > $MIGRC_FLUSHES/trigger 2>/dev/null
	echo "$HIST_MIGRC" > $MIGRC_FLUSHES/trigger ||
		fail "cannot set $HIST_MIGRC"
}
# hist_report SCENARIO: one line per call chain and histogram,
#   migrc-bench-chain: <scenario> <rounds|ipis> <count> <f1<f2<...>
# frames innermost first, without offsets, and the 'Dropped:' count; on a
# MIGRC kernel, one line per reason of its own flushes,
#   migrc-bench-flush: <scenario> <reason> <flushes> <cpus asked>
hist_report() {
	for h in "rounds $ROUNDS" "ipis $IPIS"; do
		set -- $h
		awk -v sc="$SCENARIO" -v kind="$1" '
			/common_stacktrace:/ { chain = ""; next }
			/^ +[A-Za-z_.$0-9]+\+0x/ { f = $1; sub(/\+0x.*/, "", f)
				chain = chain (chain == "" ? "" : "<") f; next }
			/hitcount:/ { print "migrc-bench-chain: " sc " " kind " " \
				$NF " " (chain == "" ? "-" : chain); next }
			/^ *Dropped:/ { print "migrc-bench-chain: " sc " " kind \
				"-dropped " $2 " -" }' $2/hist
	done
	[ -d $MIGRC_FLUSHES ] || return 0
	awk -v sc="$SCENARIO" '
		/^\{ reason:/ { r = $3; n = c = 0
			for (i = 1; i < NF; i++) {
				if ($i == "hitcount:") n = $(i + 1)
				if ($i == "cpus:") c = $(i + 1)
			}
			print "migrc-bench-flush: " sc " " r " " n " " c }' \
		$MIGRC_FLUSHES/hist
}
