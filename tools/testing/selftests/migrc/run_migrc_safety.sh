#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The MIGRC safety kselftest: set the machine up, run migrc_safety, then
# show that the tests have teeth.
#
#   run_migrc_safety.sh            the whole suite, then the round trips
#   run_migrc_safety.sh -t NAME    one case (any migrc_safety option), alone
#   run_migrc_safety.sh --knobs    every safety rule against the whole suite
#
# Setup (undone on exit): NUMA balancing off (its scans flush and leave
# read-only PTEs of their own); tmpfs at /dev/shm and ext4 on a loop device
# at /mnt/ext4 for the page-cache tests, unless mounted already. The ext4
# image is $MIGRC_EXT4_IMAGE if set, else made by mkfs.ext4, else by
# busybox mke2fs (ext2 layout, mounted by the ext4 driver); it lives on a
# tmpfs bound to node 1 where the tests migrate from.
#
# Round trips (CONFIG_MIGRC_DEBUG kernels, /sys/kernel/debug/migrc/break):
# after the suite passed, with each safety rule broken on purpose, the
# test that covers it must fail, and the shadow debug check must report it
# (migrc_debug_stale, in debugfs migrc/stats); then the rule is restored.

ksft_skip=4
dir=$(cd "$(dirname "$0")" && pwd)
# Installed, or built in the tree: next to this script; built with O=
# ('make -C tools/testing/selftests O=... run_tests'): in $OUTPUT.
safety=$dir/migrc_safety
[ -x "$safety" ] || [ -z "$OUTPUT" ] || safety=$OUTPUT/migrc_safety
knob=/sys/kernel/debug/migrc/break
sw=/sys/kernel/mm/migrc/enabled

# Each rule (or rules joined by +, broken together) and a test that must
# catch it.
knob_tests="alloc:reuse_leak alloc:kernel_reuse write:write_fault_reuse
write:proc_mem_write write:vm_writev dirty:lost_write
batched:range_race numa_ro:numa_scan_writable
unpublished:window_munmap unpublished:window_map_fixed
unpublished+write:window_mprotect
file_open:file_write file_open:file_mmap_write_ext4 alloc:file_reuse
file_writers:file_two_mappings file_writers:file_window
file_trunc:memfd_sealed_truncate cold:cold_writable
cold:cold_scan"

skip() { echo "# SKIP: $*"; exit $ksft_skip; }
fail() { echo "# FAIL: $*"; exit 1; }
note() { echo "# $*"; }
# migrc_stat NAME: a counter of debugfs migrc/stats, 0 when absent.
migrc_stat() {
	cat /sys/kernel/debug/migrc/stats 2>/dev/null |
		awk -v k="$1" '$1 == k { print $2; f = 1 } END { if (!f) print 0 }'
}
knob_set() { [ -w $knob ] && echo "$*" > $knob; }
# broken RULE TEST LOG: run TEST once with RULE (rules joined by +) broken,
# its output in LOG; the test's status. A missed flush shows only if a
# reader reads before its stale entry goes (a CPU that switches to another
# task and back catches up with its mm; on a slow host, sooner): callers
# try up to TRIES times.
TRIES="1 2 3 4 5 6 7 8"
broken() {
	knob_set "$(echo "$1" | tr + ' ')" || fail "the kernel refuses rule '$1'"
	"$safety" -t "$2" > "$3" 2>&1
	set -- $?
	knob_set none
	return "$1"
}
# failing LOG: the names of the tests that failed.
failing() {
	sed -n 's/^not ok [0-9]* migrc\.\([a-z0-9_]*\).*/\1/p' "$1" | tr '\n' ' ' | sed 's/ $//'
}
# all_skipped LOG: migrc_safety ran nothing but skips (it exits 0 then).
all_skipped() { grep -q '^# Totals: pass:0 fail:0 .*skip:[1-9]' "$1"; }
# safety LOG [ARGS]: run migrc_safety, its output also in LOG; its status.
safety() {
	log=$1
	shift
	{ "$safety" "$@" 2>&1; echo $? > "$log.rc"; } | tee "$log"
	return "$(cat "$log.rc")"
}

[ "$(id -u)" = 0 ] || skip "must run as root"
[ -x "$safety" ] ||
	fail "no $safety: build it first (make -C tools/testing/selftests TARGETS=migrc)"
[ -d /sys/devices/system/node/node1 ] || skip "needs NUMA node 1"
[ -r /proc/sys/kernel/numa_balancing ] || skip "no NUMA balancing sysctl"

# Setup, and its undoing. nested_reclaim changes min_free_kbytes and
# demotion, write_other_mm compaction's reach, the tests switch MIGRC off
# and on; a test killed by its timeout cannot restore them.
tmp=$(mktemp -d /tmp/migrc_safety.XXXXXX) || exit 1
numa=$(cat /proc/sys/kernel/numa_balancing)
min_free=$(cat /proc/sys/vm/min_free_kbytes)
demotion=$(cat /sys/kernel/mm/numa/demotion_enabled 2>/dev/null)
compact=$(cat /proc/sys/vm/compact_unevictable_allowed 2>/dev/null)
enabled=$(cat $sw 2>/dev/null)
mounted=""
made=""
restore() {
	echo "$numa" > /proc/sys/kernel/numa_balancing
	echo "$min_free" > /proc/sys/vm/min_free_kbytes
	[ -z "$demotion" ] || echo "$demotion" > /sys/kernel/mm/numa/demotion_enabled
	[ -z "$compact" ] || echo "$compact" > /proc/sys/vm/compact_unevictable_allowed
	[ -z "$enabled" ] || echo "$enabled" > $sw
	knob_set none
	for m in $mounted; do umount "$m"; done
	for d in $made; do rmdir "$d"; done
	rm -rf "$tmp"
}
trap restore EXIT
trap 'exit 1' INT TERM
echo 0 > /proc/sys/kernel/numa_balancing

is_mounted() { awk -v d="$1" '$2 == d { f = 1 } END { exit !f }' /proc/mounts; }
if ! is_mounted /sys/kernel/debug; then
	mount -t debugfs none /sys/kernel/debug && mounted="/sys/kernel/debug $mounted"
fi
if ! is_mounted /dev/shm; then
	mkdir -p /dev/shm && mount -t tmpfs shm /dev/shm && mounted="/dev/shm $mounted"
fi
mount_ext4() {
	[ -d /mnt/ext4 ] || { mkdir -p /mnt/ext4 && made="/mnt/ext4 $made"; } || return 1
	mkdir -p "$tmp/image" || return 1
	mount -t tmpfs -o mpol=bind:1,size=64m migrc-image "$tmp/image" 2>/dev/null ||
		mount -t tmpfs -o size=64m migrc-image "$tmp/image" || return 1
	mounted="$tmp/image $mounted"
	img=$tmp/image/ext4.img
	if [ -n "$MIGRC_EXT4_IMAGE" ]; then
		cp "$MIGRC_EXT4_IMAGE" "$img"
	elif command -v mkfs.ext4 > /dev/null; then
		mkfs.ext4 -q -F -b 4096 "$img" 16M
	else
		dd if=/dev/zero of="$img" bs=1M count=16 2>/dev/null &&
			mke2fs -q -F -b 4096 "$img" > /dev/null
	fi || return 1
	mount -t ext4 -o loop "$img" /mnt/ext4 || return 1
	mounted="/mnt/ext4 $mounted"
}
if ! is_mounted /mnt/ext4; then
	mount_ext4 || note "no ext4 at /mnt/ext4: the ext4 tests will skip"
fi

if [ $# -gt 0 ] && [ "$1" != --knobs ]; then
	safety "$tmp/case.log" "$@" || exit
	! all_skipped "$tmp/case.log" || exit $ksft_skip
	exit 0
fi

if [ "$1" = --knobs ]; then
	# Every rule the kernel has (MIGRC_BREAK_RULES, from the harness) or,
	# by default, every rule a test above covers.
	knob_set none || skip "no $knob (not a CONFIG_MIGRC_DEBUG kernel)"
	rules=${MIGRC_BREAK_RULES:-$(for p in $knob_tests; do echo "${p%%:*}"; done |
		tr + '\n' | sort -u)}
	"$safety" > "$tmp/none.log" 2>&1 ||
		{ tail -30 "$tmp/none.log"; fail "migrc_safety fails with no rule broken"; }
	printf '# %-12s %s\n' rule "failing tests"
	printf '# %-12s %s\n' none "$(failing "$tmp/none.log")"
	bad=""
	for rule in $rules; do
		echo "# breaking '$rule', the whole suite runs..."
		knob_set "$rule" || fail "the kernel refuses rule '$rule'"
		"$safety" > "$tmp/rule.log" 2>&1
		knob_set none
		failed=$(failing "$tmp/rule.log")
		# A test that covers the rule gets the tries of a round trip.
		for pair in $knob_tests; do
			[ "${pair%%:*}" = "$rule" ] || continue
			t=${pair#*:}
			for try in $TRIES; do
				case " $failed " in *" $t "*) break ;; esac
				broken "$rule" "$t" "$tmp/rule.log" ||
					failed="$failed $t"
			done
		done
		printf '# %-12s %s\n' "$rule" "${failed:-(none: undetected)}"
		[ -n "$failed" ] || bad="$bad $rule"
		for pair in $knob_tests; do
			[ "${pair%%:*}" = "$rule" ] || continue
			case " $failed " in
			*" ${pair#*:} "*) ;;
			*) bad="$bad $rule(${pair#*:} passed)" ;;
			esac
		done
	done
	[ -z "$bad" ] || fail "rules not caught:$bad"
	note "every rule is caught by at least one test"
	exit 0
fi

d0=$(migrc_stat migrc_pages_deferred) a0=$(migrc_stat migrc_declined_arch)
g0=$(migrc_stat migrc_declined_debug)
safety "$tmp/suite.log" || fail "migrc_safety failed"
! all_skipped "$tmp/suite.log" || skip "migrc_safety skipped every test"
deferred=$(( $(migrc_stat migrc_pages_deferred) - d0 ))
declined=$(( $(migrc_stat migrc_declined_arch) - a0 ))
debug=$(( $(migrc_stat migrc_declined_debug) - g0 ))
note "pages deferred during the suite: $deferred; read-only batches declined" \
	"by the architecture: $declined, by the debug options: $debug"
[ -d /sys/kernel/mm/migrc ] || {
	note "no MIGRC in this kernel: the suite checked that migration alone leaks nothing"
	exit 0
}
if [ "$deferred" -eq 0 ]; then
	note "nothing was deferred (MIGRC enabled: $enabled): no flush to break, no round trip"
	exit 0
fi
knob_set none || {
	note "no $knob (not a CONFIG_MIGRC_DEBUG kernel): no round trip"
	exit 0
}

done_trips=0 trips=0
for pair in $knob_tests; do
	rule=${pair%%:*} t=${pair#*:}
	trips=$(( trips + 1 ))
	# A case this machine cannot run (no ext4, too few CPUs) has no
	# round trip here; the summary line below counts them.
	why=$(sed -n "s/^ok [0-9]* migrc\.$t # SKIP *//p" "$tmp/suite.log")
	if [ -n "$why" ]; then
		note "round trip skipped: $t does not run here ($why)"
		continue
	fi
	s0=$(migrc_stat migrc_debug_stale)
	# Until both the test and the shadow see it.
	caught=0
	for try in $TRIES; do
		broken "$rule" "$t" "$tmp/broken.log"
		rc=$?
		[ $rc -eq 1 ] && caught=1
		shadow=$(( $(migrc_stat migrc_debug_stale) - s0 ))
		[ $caught -ne 0 ] && [ "$shadow" -gt 0 ] && break
		note "$t with rule '$rule' broken, try $try: rc $rc, shadow $shadow"
	done
	grep -E '^(ok|not ok) |^# (FAIL|[0-9]+ (pages|words))' "$tmp/broken.log" |
		sed "s/^/# $rule broken: /"
	[ $caught -ne 0 ] || fail "$t passed with rule '$rule' broken: the test has no teeth"
	[ "$shadow" -gt 0 ] || fail "the shadow debug check missed rule '$rule' broken in $t"
	# The suite above passed with no rule broken: the test fails only
	# while the rule is.
	[ "$(cat $knob)" = none ] || fail "rule '$rule' still broken: $(cat $knob)"
	note "round trip: $t caught rule '$rule' (the shadow $shadow times)"
	done_trips=$(( done_trips + 1 ))
done
note "round trips: $done_trips of $trips"
