// SPDX-License-Identifier: GPL-2.0

//! Generations: the global counter and the truncated copy a free page carries.
//!
//! A [`Gen`] names one published batch of deferred flushes. The
//! [`GenCounter`] holds the latest published generation and the *retired*
//! watermark (every request up to it is flushed or pruned). A free page keeps
//! the generation it waits for in one machine word through [`PageGenCodec`],
//! which may truncate it; decoding is conservative, so a truncated value can
//! only ever ask for *more* flushing, never less (see [`PageGenCodec::decode`]).

use crate::sync::atomic::{Acquire, Atomic, Relaxed, Release};

/// A MIGRC generation.
///
/// Generations are published in strictly increasing order by
/// [`GenCounter`]; [`Gen::NONE`] (zero) means "no deferred flush".
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

/// How a free page stores the generation it waits for, in `bits` bits.
///
/// # Wrap-around argument
///
/// The page stores `g mod 2^bits`, with `0` reserved for "no generation":
/// the publisher never hands out a generation whose encoding is zero
/// ([`PageGenCodec::is_reserved`]). To decode, the caller passes `latest`,
/// the latest published generation, read *after* the page received its
/// value, so `latest >= g` for the true generation `g`. Decoding returns
/// the largest `g' <= latest` with `g' == g (mod 2^bits)`. Since `g` is one
/// such value, `g' >= g`: an old page whose true generation fell out of the
/// `2^bits` window decodes to a *newer* generation, never an older one.
///
/// Asking for a newer generation is always safe: a CPU whose flushed
/// generation covers `g'` also covers `g`, and a retired watermark at or
/// past `g'` is also past `g`. So no sequence of events (a counter that
/// advanced by millions, a page that sat in the buddy allocator for a long
/// time, a CPU that never flushes) makes an overdue flush look done. Every
/// value that cannot come from a valid encoding (bits set above the field,
/// or a value from the "future" relative to `latest`) decodes to `latest`:
/// flush everything published so far. Only a stored zero means "nothing
/// pending", and zero is never the encoding of a published generation.
///
/// # Invariants
///
/// `1 <= bits <= 64`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageGenCodec {
    bits: u32,
}

impl PageGenCodec {
    /// The codec for a full machine word (`unsigned long`), the field the C
    /// side uses in `struct page`.
    pub const NATIVE: PageGenCodec = PageGenCodec { bits: usize::BITS };

    /// A codec storing `bits` bits, or `None` unless `1 <= bits <= 64`.
    pub const fn new(bits: u32) -> Option<Self> {
        if bits >= 1 && bits <= 64 {
            // INVARIANT: `bits` was checked just above.
            Some(PageGenCodec { bits })
        } else {
            None
        }
    }

    /// Number of bits stored.
    pub const fn bits(&self) -> u32 {
        self.bits
    }

    const fn mask(&self) -> u64 {
        // By the type invariant `1 <= bits <= 64`, the shift cannot overflow.
        if self.bits >= 64 {
            u64::MAX
        } else {
            (1u64 << self.bits) - 1
        }
    }

    /// The value stored in a page for `gen` (zero for [`Gen::NONE`]).
    pub const fn encode(&self, gen: Gen) -> u64 {
        gen.0 & self.mask()
    }

    /// Whether `gen` must never be published: its encoding is the reserved
    /// "no generation" value.
    pub const fn is_reserved(&self, gen: Gen) -> bool {
        self.encode(gen) == 0
    }

    /// Recovers the generation a page waits for from its stored value.
    ///
    /// `latest` must have been read after the value was stored. The result is
    /// never older than the true generation, see the type documentation.
    pub const fn decode(&self, stored: u64, latest: Gen) -> Gen {
        if stored == 0 {
            return Gen::NONE;
        }
        let mask = self.mask();
        if stored & !mask != 0 {
            // Not a value this codec produces: any doubt means flush.
            return latest;
        }
        // (latest - stored) mod 2^bits: how far back the candidate lies.
        let back = latest.0.wrapping_sub(stored) & mask;
        match latest.0.checked_sub(back) {
            Some(g) if g != 0 => Gen(g),
            // The candidate would precede the first generation: the value
            // cannot be valid for this `latest`. Flush everything.
            _ => latest,
        }
    }

    /// The newer of two stored values, as a stored value (for merging the
    /// generations of two free blocks). Both are decoded against `latest`.
    pub const fn newer(&self, a: u64, b: u64, latest: Gen) -> u64 {
        let ga = self.decode(a, latest);
        let gb = self.decode(b, latest);
        if ga.0 >= gb.0 {
            self.encode(ga)
        } else {
            self.encode(gb)
        }
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
pub struct GenCounter {
    latest: Atomic<u64>,
    retired: Atomic<u64>,
}

impl GenCounter {
    /// A counter with nothing published.
    pub const fn new() -> Self {
        GenCounter {
            latest: Atomic::new(0),
            retired: Atomic::new(0),
        }
    }

    /// A counter whose next generation will be `latest + 1`, for tests of
    /// wrap-around and exhaustion.
    pub const fn starting_at(latest: u64) -> Self {
        GenCounter {
            latest: Atomic::new(latest),
            retired: Atomic::new(latest),
        }
    }

    /// The latest published generation (acquire: rule (S)).
    pub fn latest(&self) -> Gen {
        Gen(self.latest.load(Acquire))
    }

    /// The retired watermark (acquire: rule (R)).
    pub fn retired(&self) -> Gen {
        Gen(self.retired.load(Acquire))
    }

    /// Whether every request up to `gen` is known flushed.
    pub fn is_retired(&self, gen: Gen) -> bool {
        self.retired().covers(gen)
    }

    /// The next generation to publish, skipping reserved encodings, or
    /// `None` when the 64-bit space is exhausted.
    ///
    /// Callers hold the request pool lock, which serialises publishers.
    pub(super) fn next(&self, codec: &PageGenCodec) -> Option<Gen> {
        let mut g = Gen(self.latest.load(Relaxed).checked_add(1)?);
        // At most one step: two consecutive values cannot both encode to 0.
        if codec.is_reserved(g) {
            g = Gen(g.0.checked_add(1)?);
        }
        Some(g)
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

    fn codec(bits: u32) -> Result<PageGenCodec> {
        PageGenCodec::new(bits).ok_or(EINVAL)
    }

    #[test]
    fn codec_rejects_bad_widths() {
        assert!(PageGenCodec::new(0).is_none());
        assert!(PageGenCodec::new(65).is_none());
        assert!(PageGenCodec::new(1).is_some());
        assert!(PageGenCodec::new(64).is_some());
    }

    #[test]
    fn native_codec_is_identity() {
        let c = PageGenCodec::NATIVE;
        for raw in [1u64, 2, 511, 1 << 32, u64::MAX - 1] {
            let latest = Gen::from_raw(raw);
            assert_eq!(c.decode(c.encode(latest), latest), latest);
        }
    }

    #[test]
    fn zero_means_nothing_pending() -> Result {
        for bits in [8, 16, 32, 64] {
            let c = codec(bits)?;
            assert_eq!(c.decode(0, Gen::from_raw(12345)), Gen::NONE);
            assert_eq!(c.encode(Gen::NONE), 0);
        }
        Ok(())
    }

    #[test]
    fn publisher_skips_reserved_encodings() -> Result {
        let c = codec(8)?;
        // The next value after 255 is 256, which encodes to 0 in 8 bits.
        let counter = GenCounter::starting_at(255);
        let g = counter.next(&c).ok_or(EINVAL)?;
        assert_eq!(g.as_raw(), 257);
        assert!(c.encode(g) != 0);
        Ok(())
    }

    #[test]
    fn wrap_at_every_truncation_boundary() -> Result {
        for bits in [8u32, 16, 32] {
            let c = codec(bits)?;
            let span = 1u64 << bits;
            // Around each boundary k * 2^bits, for several k.
            for k in [1u64, 2, 1000] {
                let edge = k * span;
                for g in [edge - 2, edge - 1, edge + 1, edge + 2] {
                    let stored = c.encode(Gen::from_raw(g));
                    // Decoded right away and just before the window closes.
                    for latest in [g, g + 1, g + span - 1] {
                        let d = c.decode(stored, Gen::from_raw(latest));
                        assert_eq!(d, Gen::from_raw(g));
                    }
                }
            }
        }
        Ok(())
    }

    #[test]
    fn stale_page_decodes_newer_never_older() -> Result {
        // A page that waited for 2^bits or more publications: the decoded
        // generation is newer than the true one, so more is flushed.
        for bits in [8u32, 16, 32] {
            let c = codec(bits)?;
            let span = 1u64 << bits;
            let g = 5 * span + 7;
            let stored = c.encode(Gen::from_raw(g));
            for latest in [g + span, g + span + 1, g + 3 * span + 99] {
                let d = c.decode(stored, Gen::from_raw(latest));
                assert!(d.as_raw() > g);
                assert!(d.as_raw() <= latest);
                assert_eq!(c.encode(d), stored);
            }
        }
        Ok(())
    }

    #[test]
    fn decode_is_conservative_exhaustively() -> Result {
        // Every (true generation, latest) pair in a small space.
        let c = codec(4)?;
        for latest in 1u64..200 {
            for g in 1..=latest {
                if c.is_reserved(Gen::from_raw(g)) {
                    continue;
                }
                let d = c.decode(c.encode(Gen::from_raw(g)), Gen::from_raw(latest));
                assert!(d.as_raw() >= g);
                assert!(d.as_raw() <= latest);
                assert!(latest - d.as_raw() < 16);
            }
        }
        Ok(())
    }

    #[test]
    fn ambiguous_values_resolve_to_flush() -> Result {
        let c = codec(8)?;
        let latest = Gen::from_raw(1000);
        // Bits above the field: not produced by this codec.
        assert_eq!(c.decode(0x1_05, latest), latest);
        // A value from the "future": latest is 3, stored 200.
        assert_eq!(c.decode(200, Gen::from_raw(3)), Gen::from_raw(3));
        // Native width: a stored value above latest is not a valid encoding.
        let n = PageGenCodec::NATIVE;
        assert_eq!(n.decode(5000, latest), latest);
        Ok(())
    }

    #[test]
    fn merge_keeps_the_newest() -> Result {
        let c = codec(8)?;
        let latest = Gen::from_raw(1000);
        let older = c.encode(Gen::from_raw(990));
        let newer = c.encode(Gen::from_raw(999));
        assert_eq!(c.newer(older, newer, latest), newer);
        assert_eq!(c.newer(newer, older, latest), newer);
        assert_eq!(c.newer(0, older, latest), older);
        // Across an 8-bit wrap: 990 is 0xde, 1000 is 0xe8 ... 770 is 0x02.
        let a = c.encode(Gen::from_raw(770));
        assert_eq!(c.newer(a, older, latest), older);
        Ok(())
    }

    #[test]
    fn counter_publishes_monotonically() -> Result {
        let c = PageGenCodec::NATIVE;
        let counter = GenCounter::new();
        let mut last = Gen::NONE;
        for _ in 0..100 {
            let g = counter.next(&c).ok_or(EINVAL)?;
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
        assert!(counter.next(&PageGenCodec::NATIVE).is_none());
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
