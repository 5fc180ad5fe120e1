// SPDX-License-Identifier: GPL-2.0

//! Generations: the global counter of published and retired flushes.
//!
//! A [`Gen`] names one published batch of deferred flushes. The
//! [`GenCounter`] holds the latest published generation and the *retired*
//! watermark (every request up to it is flushed or pruned). A free page
//! keeps the generation it waits for whole, in one 64-bit word of its
//! `struct page` (the C allocator's business; MIGRC needs 64-bit).

use crate::sync::atomic::{Acquire, Atomic, Relaxed, Release};

/// A MIGRC generation.
///
/// Generations are published in strictly increasing order by
/// the engine's counter; [`Gen::NONE`] (zero) means "no deferred flush".
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Gen(u64);

impl Gen {
    /// No generation: nothing is pending.
    pub const NONE: Gen = Gen(0);

    /// Wraps a raw 64-bit generation (as stored by C in `atomic64_t`).
    pub const fn from_raw(raw: u64) -> Self {
        Gen(raw)
    }

    /// The raw 64-bit value.
    pub const fn as_raw(self) -> u64 {
        self.0
    }

    /// Whether this is [`Gen::NONE`].
    pub const fn is_none(self) -> bool {
        self.0 == 0
    }

    /// Whether a CPU that completed a flush at generation `self` can no
    /// longer use a stale entry of a request published as `need`.
    pub const fn covers(self, need: Gen) -> bool {
        self.0 >= need.0
    }

    /// The generation just before `self` ([`Gen::NONE`] for the first).
    pub const fn prev(self) -> Gen {
        Gen(self.0.saturating_sub(1))
    }
}

/// The global generation state.
///
/// `latest` is the last published generation; `retired` is a watermark such
/// that every request with a generation at or below it has been flushed on
/// every CPU that could hold a stale entry (or pruned because those CPUs
/// flushed on their own).
///
/// # Ordering rules
///
/// * (P) Publishers store `latest` with release ordering, after the
///   architecture made the invalidation visible (x86 bumps the mm's
///   `tlb_gen` with a fully ordered atomic). Publishers are serialised by the
///   request pool lock, so `latest` has a single writer at a time.
/// * (S) A CPU that records a flush first samples `latest` with acquire
///   ordering (pairs with (P)): every request at or below the sample has its
///   invalidation visible to the flush that follows.
/// * (R) `retired` is stored with release ordering after the requests it
///   covers were flushed, and loaded with acquire ordering by anyone who
///   skips a flush because of it, so the skipping side observes those
///   flushes as complete.
///
/// The layout is `#[repr(C)]`, two 64-bit atomics, so C can own the storage
/// (`struct migrc_gens`) and read it on fast paths without calling Rust.
///
/// # Invariants
///
/// `latest` and `retired` never decrease, and `retired <= latest`: the
/// watermark only moves to a generation that was already published.
#[repr(C)]
pub(super) struct GenCounter {
    latest: Atomic<u64>,
    retired: Atomic<u64>,
}

impl GenCounter {
    /// A counter with nothing published.
    pub(super) const fn new() -> Self {
        GenCounter {
            latest: Atomic::new(0),
            retired: Atomic::new(0),
        }
    }

    /// A counter whose next generation will be `latest + 1`, for tests of
    /// exhaustion.
    pub(super) const fn starting_at(latest: u64) -> Self {
        GenCounter {
            latest: Atomic::new(latest),
            retired: Atomic::new(latest),
        }
    }

    /// The latest published generation (acquire: rule (S)).
    pub(super) fn latest(&self) -> Gen {
        Gen(self.latest.load(Acquire))
    }

    /// The retired watermark (acquire: rule (R)).
    pub(super) fn retired(&self) -> Gen {
        Gen(self.retired.load(Acquire))
    }

    /// Whether every request up to `gen` is known flushed.
    pub(super) fn is_retired(&self, gen: Gen) -> bool {
        self.retired().covers(gen)
    }

    /// The next generation to publish, or `None` when the 64-bit space is
    /// exhausted.
    ///
    /// Callers hold the request pool lock, which serialises publishers.
    pub(super) fn next(&self) -> Option<Gen> {
        Some(Gen(self.latest.load(Relaxed).checked_add(1)?))
    }

    /// Publishes `gen` (release: rule (P)).
    pub(super) fn publish(&self, gen: Gen) {
        self.latest.store(gen.0, Release);
    }

    /// Moves the retired watermark forward to `gen` (release: rule (R)).
    /// Never moves it backwards.
    pub(super) fn retire_to(&self, gen: Gen) {
        let mut cur = self.retired.load(Relaxed);
        while cur < gen.0 {
            match self.retired.cmpxchg(cur, gen.0, Release) {
                Ok(_) => break,
                Err(now) => cur = now,
            }
        }
    }
}

impl Default for GenCounter {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(CONFIG_MIGRC_KUNIT_TEST)]
#[macros::kunit_tests(rust_migrc_gen)]
mod tests {
    use super::*;
    use crate::prelude::*;

    #[test]
    fn counter_publishes_monotonically() -> Result {
        let counter = GenCounter::new();
        let mut last = Gen::NONE;
        for _ in 0..100 {
            let g = counter.next().ok_or(EINVAL)?;
            assert!(g > last);
            counter.publish(g);
            assert_eq!(counter.latest(), g);
            last = g;
        }
        Ok(())
    }

    #[test]
    fn counter_exhaustion_is_reported() {
        let counter = GenCounter::starting_at(u64::MAX);
        assert!(counter.next().is_none());
    }

    #[test]
    fn retired_watermark_never_goes_back() {
        let counter = GenCounter::new();
        counter.retire_to(Gen::from_raw(10));
        counter.retire_to(Gen::from_raw(4));
        assert_eq!(counter.retired(), Gen::from_raw(10));
        assert!(counter.is_retired(Gen::from_raw(10)));
        assert!(!counter.is_retired(Gen::from_raw(11)));
        assert!(counter.is_retired(Gen::NONE));
    }
}
