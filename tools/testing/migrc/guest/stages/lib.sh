# SPDX-License-Identifier: GPL-2.0
# Helpers for guest stages (sourced, busybox sh).

fail() { echo "FAIL: $*"; exit 1; }
note() { echo "  $*"; }
# vmstat VALUE: print a /proc/vmstat counter, 0 when absent.
vmstat() { awk -v k="$1" '$1 == k { print $2; f = 1 } END { if (!f) print 0 }' /proc/vmstat; }
# vmstat_sum PREFIX: sum of every /proc/vmstat counter starting with PREFIX.
vmstat_sum() { awk -v p="$1" 'index($1, p) == 1 { s += $2 } END { print s + 0 }' /proc/vmstat; }
