// SPDX-License-Identifier: GPL-2.0

//! Requests: one per published migration batch, kept in a fixed pool.
//!
//! A request holds the CPUs that may cache a stale read-only translation of
//! the batch's source pages (taken from the architecture's unmap batch), the
//! generation it was published under and how many freed pages wait on it.
//! All memory is allocated when the pool is created; recording a request
//! never allocates, so it is usable in any context that may take a spinlock.
//! When no slot is free, the batch joins the newest pending request: the
//! union of the two cpumasks under the newer generation, which retires only
//! when every CPU of the union flushed at or after it. Only the cap on
//! pending pages fails with [`Declined`]; what to do then is the engine's
//! decision.

use super::gen::Gen;
use crate::{
    alloc::{Flags, KBox, KVec},
    cpumask::{Cpumask, CpumaskVar},
    error::{code::EINVAL, Result},
};

/// Why a batch could not be deferred. The caller must flush it now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Declined {
    /// Deferring would exceed the cap on pending deferred pages.
    PendingCap,
    /// The generation counter reached its end. Not in a kernel's life (a
    /// billion publications a second take 584 years), but a counter may be
    /// set up to start near it.
    Exhausted,
}

/// What a pending request records besides its cpumask.
///
/// # Invariants
///
/// `oldest <= gen`: a request holds the batches published from `oldest` to
/// `gen` that were folded into it (one batch: both are its generation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Request {
    /// The newest generation the request holds: a CPU that flushed at or
    /// after it is clean for the whole request.
    gen: Gen,
    /// The oldest generation the request holds: the retired watermark must
    /// stay below it.
    oldest: Gen,
    /// Freed source pages that wait on this request.
    pages: u64,
}

impl Request {
    /// One batch published under `gen` with `pages` source pages.
    pub(super) fn new(gen: Gen, pages: u64) -> Self {
        // INVARIANT: `oldest` and `gen` are the same generation.
        Request {
            gen,
            oldest: gen,
            pages,
        }
    }

    /// The newest generation the request holds.
    pub(super) fn gen(&self) -> Gen {
        self.gen
    }

    /// `self` with a newer batch `new` folded in. `pages` is the already
    /// checked sum of both.
    fn fold(self, new: Request, pages: u64) -> Self {
        let gen = self.gen.max(new.gen);
        // INVARIANT: the minimum of two generations is at most the maximum
        // of two, each `oldest` being at most its own `gen`.
        Request {
            gen,
            oldest: self.oldest.min(new.oldest),
            pages,
        }
    }
}

/// How a request was recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Recorded {
    /// In a free slot of its own.
    New,
    /// Folded into the newest pending request, the pool being full.
    Folded,
}

struct Slot {
    req: Option<Request>,
    mask: CpumaskVar,
}

impl Slot {
    fn new(flags: Flags) -> Result<Self> {
        Ok(Slot {
            req: None,
            mask: CpumaskVar::new_zero(flags)?,
        })
    }

    /// How well the slot suits a new request: a free slot first, else the
    /// newest pending request, which the new one can fold into.
    fn fitness(&self) -> (bool, Gen) {
        match self.req {
            None => (true, Gen::NONE),
            Some(req) => (false, req.gen),
        }
    }
}

/// A fixed-size pool of requests.
///
/// # Invariants
///
/// * `first` and `rest` are the slots: a pool is never without one.
/// * `pending_pages` is the sum of `pages` over occupied slots, and never
///   exceeds `max_pending_pages`.
/// * The `[oldest, gen]` ranges of occupied slots do not overlap: a fold
///   joins the newest request and takes the new, larger generation.
pub(super) struct RequestPool {
    first: KBox<Slot>,
    rest: KVec<Slot>,
    pending_pages: u64,
    max_pending_pages: u64,
}

impl RequestPool {
    /// Allocates a pool of `nr_slots` requests (each with its own cpumask)
    /// admitting at most `max_pending_pages` pending pages. Fails with
    /// `EINVAL` for no slots and `ENOMEM`.
    pub(super) fn new(nr_slots: usize, max_pending_pages: u64, flags: Flags) -> Result<Self> {
        let more = nr_slots.checked_sub(1).ok_or(EINVAL)?;
        let mut rest = KVec::with_capacity(more, flags)?;
        for _ in 0..more {
            rest.push(Slot::new(flags)?, flags)?;
        }
        // INVARIANT: `nr_slots` slots, none occupied, nothing pending.
        Ok(RequestPool {
            first: KBox::new(Slot::new(flags)?, flags)?,
            rest,
            pending_pages: 0,
            max_pending_pages,
        })
    }

    fn slots(&self) -> impl Iterator<Item = &Slot> {
        core::iter::once(&*self.first).chain(self.rest.iter())
    }

    fn slots_mut(&mut self) -> impl Iterator<Item = &mut Slot> {
        core::iter::once(&mut *self.first).chain(self.rest.iter_mut())
    }

    /// Number of occupied slots.
    pub(super) fn pending(&self) -> usize {
        self.slots().filter(|s| s.req.is_some()).count()
    }

    /// Pages waiting on pending requests.
    pub(super) fn pending_pages(&self) -> u64 {
        self.pending_pages
    }

    /// Whether a slot is free, so that [`RequestPool::record`] would not
    /// have to fold.
    pub(super) fn has_free_slot(&self) -> bool {
        self.slots().any(|s| s.req.is_none())
    }

    /// Whether `pages` more pending pages stay within the cap.
    pub(super) fn admits(&self, pages: u64) -> bool {
        self.new_total(pages).is_some()
    }

    fn new_total(&self, pages: u64) -> Option<u64> {
        self.pending_pages
            .checked_add(pages)
            .filter(|t| *t <= self.max_pending_pages)
    }

    /// Records `req`, a batch published after every pending one, with a
    /// copy of `mask`: in a free slot, or else folded into the newest
    /// pending request. Declines when the pending-page cap would be
    /// exceeded (nothing changes then).
    pub(super) fn record(&mut self, req: Request, mask: &Cpumask) -> Result<Recorded, Declined> {
        let total = self.new_total(req.pages).ok_or(Declined::PendingCap)?;
        // A free slot if there is one, else the newest pending request.
        let slot = self.rest.iter_mut().fold(&mut *self.first, |best, s| {
            if s.fitness() > best.fitness() {
                s
            } else {
                best
            }
        });
        let how = match slot.req {
            Some(old) => {
                slot.mask.or(mask);
                slot.req = Some(old.fold(req, old.pages.saturating_add(req.pages)));
                Recorded::Folded
            }
            None => {
                mask.copy(&mut slot.mask);
                slot.req = Some(req);
                Recorded::New
            }
        };
        // INVARIANT: `req.pages` was added to one occupied slot and to the
        // sum, which stays within the cap as checked above. A fold went to
        // the newest request and `req` is newer than all, so the ranges
        // still do not overlap.
        self.pending_pages = total;
        Ok(how)
    }

    /// Calls `f` for every pending request with its cpumask.
    pub(super) fn for_each_pending(&self, mut f: impl FnMut(&Request, &Cpumask)) {
        for s in self.slots() {
            if let Some(req) = &s.req {
                f(req, &s.mask);
            }
        }
    }

    /// Frees every pending request for which `done` returns true; returns
    /// how many requests and pages were retired.
    pub(super) fn retire_where(
        &mut self,
        mut done: impl FnMut(&Request, &Cpumask) -> bool,
    ) -> (u64, u64) {
        let (mut reqs, mut pages) = (0u64, 0u64);
        for s in self.slots_mut() {
            if let Some(req) = s.req {
                if done(&req, &s.mask) {
                    s.req = None;
                    reqs = reqs.saturating_add(1);
                    pages = pages.saturating_add(req.pages);
                }
            }
        }
        // INVARIANT: `pages` is the sum over the slots just freed, a part of
        // `pending_pages`, so the subtraction cannot underflow.
        self.pending_pages = self.pending_pages.saturating_sub(pages);
        (reqs, pages)
    }

    /// The oldest generation any pending request holds.
    pub(super) fn oldest(&self) -> Option<Gen> {
        self.slots().filter_map(|s| s.req.map(|r| r.oldest)).min()
    }
}

#[cfg(CONFIG_MIGRC_KUNIT_TEST)]
#[macros::kunit_tests(rust_migrc_request)]
mod tests {
    use super::*;
    use crate::{cpu::CpuId, prelude::*};

    fn mask_of(cpus: &[u32]) -> Result<CpumaskVar> {
        let mut m = CpumaskVar::new_zero(GFP_KERNEL)?;
        for c in cpus {
            if let Some(id) = CpuId::from_u32(*c) {
                m.set(id);
            }
        }
        Ok(m)
    }

    fn req(gen: u64, pages: u64) -> Request {
        Request::new(Gen::from_raw(gen), pages)
    }

    /// The pending requests as (oldest, gen, pages, CPUs in the mask).
    fn pending_list(pool: &RequestPool) -> KVec<(u64, u64, u64, u32)> {
        let mut v = KVec::new();
        pool.for_each_pending(|r, m| {
            let _ = v.push(
                (r.oldest.as_raw(), r.gen.as_raw(), r.pages, m.weight()),
                GFP_KERNEL,
            );
        });
        v
    }

    #[test]
    fn records_and_retires() -> Result {
        let mut pool = RequestPool::new(4, 1000, GFP_KERNEL)?;
        let m = mask_of(&[0])?;
        pool.record(req(1, 10), &m).map_err(|_| EBUSY)?;
        assert_eq!(pool.pending(), 1);
        assert_eq!(pool.pending_pages(), 10);
        assert_eq!(pool.oldest(), Some(Gen::from_raw(1)));
        let mut seen = 0;
        pool.for_each_pending(|r, mask| {
            seen += 1;
            assert_eq!(r.gen, Gen::from_raw(1));
            assert_eq!(mask.weight(), 1);
        });
        assert_eq!(seen, 1);
        assert_eq!(pool.retire_where(|_, _| true), (1, 10));
        assert_eq!(pool.pending(), 0);
        assert_eq!(pool.pending_pages(), 0);
        assert_eq!(pool.oldest(), None);
        Ok(())
    }

    #[test]
    fn full_pool_folds_into_the_newest() -> Result {
        if crate::cpu::nr_cpu_ids() < 3 {
            return Ok(());
        }
        let mut pool = RequestPool::new(2, 1000, GFP_KERNEL)?;
        assert_eq!(pool.record(req(1, 1), &*mask_of(&[0])?), Ok(Recorded::New));
        assert_eq!(pool.record(req(2, 2), &*mask_of(&[1])?), Ok(Recorded::New));
        assert!(!pool.has_free_slot());
        assert_eq!(
            pool.record(req(3, 4), &*mask_of(&[2])?),
            Ok(Recorded::Folded)
        );
        // Generation 2's request now holds 2..=3 and both CPUs; 1 is alone.
        assert_eq!(pool.pending(), 2);
        assert_eq!(pool.pending_pages(), 7);
        assert_eq!(pending_list(&pool)[..], [(1, 1, 1, 1), (2, 3, 6, 2)]);
        // A second fold keeps the oldest generation of the first.
        assert_eq!(
            pool.record(req(4, 8), &*mask_of(&[2])?),
            Ok(Recorded::Folded)
        );
        assert_eq!(pending_list(&pool)[..], [(1, 1, 1, 1), (2, 4, 14, 2)]);
        // Once 1 retires, the oldest held generation is the folded 2.
        pool.retire_where(|r, _| r.gen == Gen::from_raw(1));
        assert_eq!(pool.oldest(), Some(Gen::from_raw(2)));
        // A retired slot is used again instead of folding.
        assert_eq!(pool.record(req(5, 1), &*mask_of(&[0])?), Ok(Recorded::New));
        Ok(())
    }

    #[test]
    fn pool_without_slots_is_refused() {
        assert_eq!(RequestPool::new(0, 1000, GFP_KERNEL).err(), Some(EINVAL));
    }

    #[test]
    fn pending_cap_declines() -> Result {
        let mut pool = RequestPool::new(8, 100, GFP_KERNEL)?;
        let m = mask_of(&[0])?;
        pool.record(req(1, 60), &m).map_err(|_| EBUSY)?;
        assert!(!pool.admits(41));
        assert_eq!(pool.record(req(2, 41), &m), Err(Declined::PendingCap));
        assert_eq!(pool.pending_pages(), 60);
        // Overflowing page counts are declined, not wrapped.
        assert_eq!(pool.record(req(2, u64::MAX), &m), Err(Declined::PendingCap));
        assert!(pool.record(req(2, 40), &m).is_ok());
        assert_eq!(pool.pending_pages(), 100);
        Ok(())
    }

    #[test]
    fn allocation_failure_is_reported() {
        // A pool too large to allocate: creation fails and no pool exists,
        // so nothing can be deferred (the caller flushes at once).
        assert!(RequestPool::new(usize::MAX / 2, 1, GFP_KERNEL).is_err());
    }

    #[test]
    fn oldest_is_the_minimum_generation() -> Result {
        let mut pool = RequestPool::new(4, 1000, GFP_KERNEL)?;
        let m = mask_of(&[0])?;
        for g in [5u64, 3, 9] {
            pool.record(req(g, 1), &m).map_err(|_| EBUSY)?;
        }
        assert_eq!(pool.oldest(), Some(Gen::from_raw(3)));
        Ok(())
    }
}
