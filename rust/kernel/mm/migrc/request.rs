// SPDX-License-Identifier: GPL-2.0

//! Requests: one per published migration batch, kept in a fixed pool.
//!
//! A request holds the CPUs that may cache a stale read-only translation of
//! the batch's source pages (taken from the architecture's unmap batch), the
//! generation it was published under and how many freed pages wait on it.
//! All memory is allocated when the pool is created; recording a request
//! never allocates, so it is usable in any context that may take a spinlock.
//! When no slot is free or the pending-page cap would be exceeded, recording
//! fails with [`Declined`] and the caller flushes at once, exactly as
//! without MIGRC.

use super::gen::Gen;
use crate::{
    alloc::{AllocError, Flags, KVec},
    cpumask::{Cpumask, CpumaskVar},
};

/// Why a batch could not be deferred. The caller must flush it now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Declined {
    /// MIGRC is switched off (or was never set up).
    Disabled,
    /// Every request slot is in use.
    PoolFull,
    /// Deferring would exceed the cap on pending deferred pages.
    PendingCap,
    /// The 64-bit generation space is used up (not reachable in practice).
    Exhausted,
}

/// What a pending request records besides its cpumask.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Request {
    /// The generation the request was published under.
    pub(super) gen: Gen,
    /// Freed source pages that wait on this request.
    pub(super) pages: u64,
}

struct Slot {
    req: Option<Request>,
    mask: CpumaskVar,
}

/// A fixed-size pool of requests.
///
/// # Invariants
///
/// * `pending_pages` is the sum of `pages` over occupied slots, and never
///   exceeds `max_pending_pages`.
/// * Occupied slots hold distinct generations.
pub(super) struct RequestPool {
    slots: KVec<Slot>,
    pending_pages: u64,
    max_pending_pages: u64,
}

impl RequestPool {
    /// Allocates a pool of `nr_slots` requests (each with its own cpumask)
    /// admitting at most `max_pending_pages` pending pages.
    pub(super) fn new(
        nr_slots: usize,
        max_pending_pages: u64,
        flags: Flags,
    ) -> Result<Self, AllocError> {
        let mut slots = KVec::with_capacity(nr_slots, flags)?;
        for _ in 0..nr_slots {
            slots.push(
                Slot {
                    req: None,
                    mask: CpumaskVar::new_zero(flags)?,
                },
                flags,
            )?;
        }
        // INVARIANT: No slot is occupied and nothing is pending.
        Ok(RequestPool {
            slots,
            pending_pages: 0,
            max_pending_pages,
        })
    }

    /// Number of occupied slots.
    pub(super) fn pending(&self) -> usize {
        self.slots.iter().filter(|s| s.req.is_some()).count()
    }

    /// Pages waiting on pending requests.
    pub(super) fn pending_pages(&self) -> u64 {
        self.pending_pages
    }

    /// Records a pending request with a copy of `mask`, or declines when
    /// no slot is free or the pending-page cap would be exceeded (nothing
    /// changes then).
    pub(super) fn record(&mut self, req: Request, mask: &Cpumask) -> Result<(), Declined> {
        let total = self
            .pending_pages
            .checked_add(req.pages)
            .filter(|t| *t <= self.max_pending_pages)
            .ok_or(Declined::PendingCap)?;
        let slot = self
            .slots
            .iter_mut()
            .find(|s| s.req.is_none())
            .ok_or(Declined::PoolFull)?;
        mask.copy(&mut slot.mask);
        slot.req = Some(req);
        // INVARIANT: `req.pages` was added to a newly occupied slot and to
        // the sum, which stays within the cap as checked above.
        self.pending_pages = total;
        Ok(())
    }

    /// Calls `f` for every pending request with its cpumask.
    pub(super) fn for_each_pending(&self, mut f: impl FnMut(&Request, &Cpumask)) {
        for s in self.slots.iter() {
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
        for s in self.slots.iter_mut() {
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

    /// The generation of the oldest pending request.
    pub(super) fn oldest(&self) -> Option<Gen> {
        self.slots.iter().filter_map(|s| s.req.map(|r| r.gen)).min()
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
        Request {
            gen: Gen::from_raw(gen),
            pages,
        }
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
    fn pool_exhaustion_declines() -> Result {
        let mut pool = RequestPool::new(2, 1000, GFP_KERNEL)?;
        let m = mask_of(&[0])?;
        for g in 1..=2 {
            pool.record(req(g, 1), &m).map_err(|_| EBUSY)?;
        }
        assert_eq!(pool.record(req(3, 1), &m), Err(Declined::PoolFull));
        assert_eq!(pool.pending(), 2);
        // A retired slot can be used again.
        pool.retire_where(|r, _| r.gen == Gen::from_raw(1));
        assert!(pool.record(req(3, 1), &m).is_ok());
        Ok(())
    }

    #[test]
    fn pending_cap_declines() -> Result {
        let mut pool = RequestPool::new(8, 100, GFP_KERNEL)?;
        let m = mask_of(&[0])?;
        pool.record(req(1, 60), &m).map_err(|_| EBUSY)?;
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
