// SPDX-License-Identifier: GPL-2.0

//! Per-CPU flushed generations.
//!
//! For each CPU, the generation up to which it holds no usable stale
//! translation: it sampled the global generation, then completed a flush
//! (or an address-space switch) that the architecture guarantees removes
//! every such entry. Pruning drops a CPU from a flush when its value covers
//! the request's generation.
//!
//! # Why the storage is C per-CPU data
//!
//! The value is written on the context-switch and TLB-flush paths of the
//! architecture, where a call into Rust (never inlined across the language
//! boundary) on every switch is not acceptable, and Rust in 7.3 has no
//! per-CPU abstraction. So the storage is a C `DEFINE_PER_CPU(atomic64_t)`
//! that the arch code updates inline, and Rust gets a [`CpuFlushGen`] view
//! of one CPU's slot through the boundary module (the only place that turns
//! the C pointer into a reference). Tests use plain arrays of atomics.
//!
//! # Ordering rules
//!
//! * A CPU records with [`CpuFlushGen::record`] (release) the generation it
//!   sampled *before* its flush, after that flush completed. The value may
//!   move backwards when that CPU's own record races with a remote
//!   [`CpuFlushGen::record_at_least`]; a smaller value only causes an extra
//!   flush, never a missed one.
//! * Readers load with acquire ordering (pairs with the release store), so a
//!   pruning decision based on the value observes the flush as complete.

use super::gen::Gen;
use crate::sync::atomic::{Acquire, Atomic, Relaxed, Release};

/// A view of one CPU's flushed generation.
///
/// Borrowed from storage that outlives it: the C per-CPU `atomic64_t` in the
/// kernel (see the boundary module), a plain array in tests.
#[derive(Clone, Copy)]
pub(super) struct CpuFlushGen<'a>(&'a Atomic<u64>);

impl<'a> From<&'a Atomic<u64>> for CpuFlushGen<'a> {
    fn from(slot: &'a Atomic<u64>) -> Self {
        CpuFlushGen(slot)
    }
}

impl CpuFlushGen<'_> {
    /// The generation this CPU is known to have flushed up to.
    pub(super) fn get(self) -> Gen {
        Gen::from_raw(self.0.load(Acquire))
    }

    /// Records a flush by this CPU: `gen` was sampled before the flush.
    ///
    /// Private to MIGRC: a record that no flush backs would let pruning skip
    /// a CPU that still holds stale entries.
    pub(super) fn record(self, gen: Gen) {
        self.0.store(gen.as_raw(), Release);
    }

    /// Records, from another CPU, that this CPU flushed at `gen` or later
    /// (after a flush the caller sent it). Never lowers the value.
    ///
    /// Private to MIGRC, like [`CpuFlushGen::record`].
    pub(super) fn record_at_least(self, gen: Gen) {
        let mut cur = self.0.load(Relaxed);
        while cur < gen.as_raw() {
            match self.0.cmpxchg(cur, gen.as_raw(), Release) {
                Ok(_) => break,
                Err(now) => cur = now,
            }
        }
    }
}

#[cfg(CONFIG_MIGRC_KUNIT_TEST)]
#[macros::kunit_tests(rust_migrc_percpu)]
mod tests {
    use super::*;

    #[test]
    fn starts_never_flushed() {
        let slot = Atomic::new(0u64);
        assert_eq!(CpuFlushGen::from(&slot).get(), Gen::NONE);
    }

    #[test]
    fn record_at_least_never_lowers() {
        let slot = Atomic::new(0u64);
        let c = CpuFlushGen::from(&slot);
        c.record_at_least(Gen::from_raw(7));
        c.record_at_least(Gen::from_raw(3));
        assert_eq!(c.get(), Gen::from_raw(7));
        c.record_at_least(Gen::from_raw(9));
        assert_eq!(c.get(), Gen::from_raw(9));
    }

    #[test]
    fn own_record_may_lower_which_only_adds_flushes() {
        // A CPU's own record can land after a remote, newer one. The value
        // then covers less, which can only keep the CPU in future flushes.
        let slot = Atomic::new(0u64);
        let c = CpuFlushGen::from(&slot);
        c.record_at_least(Gen::from_raw(10));
        c.record(Gen::from_raw(8));
        assert!(!c.get().covers(Gen::from_raw(9)));
        assert!(c.get().covers(Gen::from_raw(8)));
    }
}
