// SPDX-License-Identifier: GPL-2.0

//! Statistics: the events MIGRC counts, and where they go.
//!
//! The kernel sends them to vmstat event counters (`/proc/vmstat`
//! `migrc_*`), through the boundary module, which maps each to its C event
//! by name: the list of events and their `/proc/vmstat` names is
//! `include/linux/migrc_event_defs.h`. [`StatCounters`] is an in-memory
//! sink for tests and the sample.

use crate::sync::atomic::{Atomic, Relaxed};

/// An event MIGRC counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stat {
    /// Source pages freed with their flush deferred.
    PagesDeferred,
    /// Requests published (migration batches deferred).
    RequestsPublished,
    /// Requests retired (flushed or pruned on every CPU).
    RequestsRetired,
    /// Batches flushed at once because MIGRC was off.
    DeclinedDisabled,
    /// Batches flushed at once because the request pool has no slots.
    DeclinedPoolFull,
    /// Batches flushed at once because of the pending-page cap.
    DeclinedPendingCap,
    /// Deferred flushes that sent IPIs.
    FlushesSent,
    /// Deferred flushes skipped because pruning emptied the cpumask.
    FlushesPruned,
    /// CPUs a deferred flush was sent to.
    CpusFlushed,
    /// CPUs dropped from a deferred flush by pruning.
    CpusPruned,
    /// Batches folded into the newest request because no slot was free.
    RequestsFolded,
}

impl Stat {
    /// Number of events.
    pub const COUNT: usize = 11;

    /// Every event, in declaration order.
    pub const ALL: [Stat; Stat::COUNT] = [
        Stat::PagesDeferred,
        Stat::RequestsPublished,
        Stat::RequestsRetired,
        Stat::DeclinedDisabled,
        Stat::DeclinedPoolFull,
        Stat::DeclinedPendingCap,
        Stat::FlushesSent,
        Stat::FlushesPruned,
        Stat::CpusFlushed,
        Stat::CpusPruned,
        Stat::RequestsFolded,
    ];

    /// Position in [`Stat::ALL`].
    pub const fn index(self) -> usize {
        self as usize
    }
}

/// Where counted events go.
pub trait StatSink {
    /// Adds `n` to the counter of `stat`.
    fn add(&self, stat: Stat, n: u64);
}

/// Counters in memory.
pub struct StatCounters {
    counts: [Atomic<u64>; Stat::COUNT],
}

impl StatCounters {
    /// All counters at zero.
    pub const fn new() -> Self {
        StatCounters {
            counts: [const { Atomic::new(0) }; Stat::COUNT],
        }
    }

    /// The value of one counter.
    pub fn get(&self, stat: Stat) -> u64 {
        self.counts.get(stat.index()).map_or(0, |c| c.load(Relaxed))
    }
}

impl Default for StatCounters {
    fn default() -> Self {
        Self::new()
    }
}

impl StatSink for StatCounters {
    fn add(&self, stat: Stat, n: u64) {
        if let Some(c) = self.counts.get(stat.index()) {
            c.fetch_add(n, Relaxed);
        }
    }
}

#[cfg(CONFIG_MIGRC_KUNIT_TEST)]
#[macros::kunit_tests(rust_migrc_stats)]
mod tests {
    use super::*;

    #[test]
    fn all_lists_every_event_in_index_order() {
        for (i, s) in Stat::ALL.iter().enumerate() {
            assert_eq!(s.index(), i);
        }
    }

    #[test]
    fn counters_add_up() {
        let c = StatCounters::new();
        c.add(Stat::PagesDeferred, 512);
        c.add(Stat::PagesDeferred, 3);
        c.add(Stat::FlushesPruned, 1);
        assert_eq!(c.get(Stat::PagesDeferred), 515);
        assert_eq!(c.get(Stat::FlushesPruned), 1);
        assert_eq!(c.get(Stat::FlushesSent), 0);
    }
}
