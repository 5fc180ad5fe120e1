// SPDX-License-Identifier: GPL-2.0

//! Statistics: the events MIGRC counts, and where they go.
//!
//! The one list of events and their names is
//! `include/linux/migrc_event_defs.h`; each [`Stat`] takes its value from
//! that list's C enum through bindgen, and a build-time check keeps the
//! values equal to their positions in [`Stat::ALL`]. The kernel sends
//! events to its counters (debugfs `migrc/stats`, and a few `/proc/vmstat`
//! totals) through the boundary module; [`StatCounters`] is an in-memory
//! sink for tests.

use crate::{
    bindings,
    sync::atomic::{Atomic, Relaxed},
};

/// Defines [`Stat`] with each variant's value taken from the C event of the
/// same meaning (bindgen), and [`Stat::ALL`] from the same list.
macro_rules! events {
    ($($(#[$doc:meta])* $name:ident = $c_event:ident,)*) => {
        /// An event MIGRC counts: the value is the C `enum migrc_event`
        /// constant, so the Rust core counts exactly the C event it names.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[repr(u32)]
        pub enum Stat {
            $($(#[$doc])* $name = bindings::$c_event,)*
        }

        impl Stat {
            /// Every event, in the order of the C list.
            pub const ALL: [Stat; [$(Stat::$name),*].len()] = [$(Stat::$name),*];
        }
    };
}

events! {
    /// Source pages freed with their flush deferred.
    PagesDeferred = migrc_event_MIGRC_EV_PAGES_DEFERRED,
    /// Requests published (migration batches deferred).
    RequestsPublished = migrc_event_MIGRC_EV_REQUESTS_PUBLISHED,
    /// Requests retired (flushed or pruned on every CPU).
    RequestsRetired = migrc_event_MIGRC_EV_REQUESTS_RETIRED,
    /// Batches flushed at once because no generation was left.
    DeclinedExhausted = migrc_event_MIGRC_EV_DECLINED_EXHAUSTED,
    /// Publications that reached the pending-page cap: everything pending
    /// was flushed, and the batch too if the cap was still reached then.
    DeclinedPendingCap = migrc_event_MIGRC_EV_DECLINED_PENDING_CAP,
    /// Deferred flushes that sent IPIs.
    FlushesSent = migrc_event_MIGRC_EV_FLUSHES_SENT,
    /// Deferred flushes skipped because pruning emptied the cpumask.
    FlushesPruned = migrc_event_MIGRC_EV_FLUSHES_PRUNED,
    /// CPUs a deferred flush was sent to.
    CpusFlushed = migrc_event_MIGRC_EV_CPUS_FLUSHED,
    /// CPUs dropped from a deferred flush by pruning.
    CpusPruned = migrc_event_MIGRC_EV_CPUS_PRUNED,
    /// Batches folded into the newest request because no slot was free.
    RequestsFolded = migrc_event_MIGRC_EV_REQUESTS_FOLDED,
}

// The in-memory counters index by value: the core's events must be the
// first ones of the C list, each at its position in `Stat::ALL`.
const _: () = {
    let mut i = 0;
    while i < Stat::COUNT {
        assert!(Stat::ALL[i].index() == i);
        i += 1;
    }
};

impl Stat {
    /// Number of events the core counts.
    pub const COUNT: usize = Stat::ALL.len();

    /// Position in [`Stat::ALL`], and the C event number.
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The C event.
    pub const fn c_event(self) -> bindings::migrc_event {
        self as bindings::migrc_event
    }
}

/// Where counted events go.
pub(super) trait StatSink {
    /// Adds `n` to the counter of `stat`.
    fn add(&self, stat: Stat, n: u64);
}

/// Counters in memory.
pub(super) struct StatCounters {
    counts: [Atomic<u64>; Stat::COUNT],
}

impl StatCounters {
    /// All counters at zero.
    pub(super) const fn new() -> Self {
        StatCounters {
            counts: [const { Atomic::new(0) }; Stat::COUNT],
        }
    }

    /// The value of one counter.
    pub(super) fn get(&self, stat: Stat) -> u64 {
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
    fn events_are_the_c_events() {
        assert_eq!(
            Stat::PagesDeferred.c_event(),
            bindings::migrc_event_MIGRC_EV_PAGES_DEFERRED
        );
        assert_eq!(
            Stat::RequestsFolded.c_event(),
            bindings::migrc_event_MIGRC_EV_REQUESTS_FOLDED
        );
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
