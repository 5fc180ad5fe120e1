// SPDX-License-Identifier: GPL-2.0

//! The engine: publish deferred flushes, then perform them folded and pruned.
//!
//! [`Engine::publish`] records one migration batch as a request and returns
//! the generation its freed source pages carry. [`Engine::flush_upto`] is
//! called before a page carrying a generation leaves the allocator: it
//! returns at once when the retired watermark already covers the page, and
//! otherwise performs one flush for *every* pending request, sent only to
//! the CPUs pruning could not drop, then retires what that flush covered.
//! The architecture is reached through [`Platform`], so the same engine runs
//! on the kernel's per-CPU data and arch flush, and on test doubles.

use super::{
    gen::{Gen, GenCounter},
    percpu::CpuFlushGen,
    prune,
    request::{Declined, Recorded, Request, RequestPool},
    stats::{Stat, StatSink},
};
use crate::{
    alloc::Flags,
    bindings,
    cpu::CpuId,
    cpumask::{Cpumask, CpumaskVar},
    prelude::*,
    sync::{new_spinlock, SpinLock},
};

/// What the engine needs from the architecture and the rest of the kernel.
///
/// # Safety
///
/// Implementers guarantee, and an `unsafe impl` cites by number, that:
///
/// 1. the [`GenCounter`] returned by [`Platform::gens`] and the per-CPU
///    slots returned by [`Platform::cpu`] are used by at most one [`Engine`]
///    (the one built on this platform), so that no other engine can retire
///    its requests or record its CPUs as flushed;
/// 2. [`Platform::cpu`] returns the same slot for a CPU every time, and only
///    the engine and that CPU's own completed flushes write it;
/// 3. [`Platform::flush`] returns only once every CPU of `mask` can no
///    longer use a stale translation of any request published before the
///    call.
///
/// The pruning and retiring decisions of the engine rely on these: a
/// platform that broke one of them could make the engine skip a flush.
pub(super) unsafe trait Platform: StatSink + Send + Sync {
    /// The generation counter.
    fn gens(&self) -> &GenCounter;

    /// The flushed generation of `cpu`, or `None` for a CPU the platform
    /// does not track (treated as never flushed).
    fn cpu(&self, cpu: CpuId) -> Option<CpuFlushGen<'_>>;

    /// Flushes every CPU of `mask` of any stale translation of every request
    /// published so far, and returns once all of them completed.
    ///
    /// Called in task context with interrupts enabled, never with `mask`
    /// empty.
    fn flush(&self, mask: &Cpumask);

    /// Learns that a batch was deferred under `gen`, with `pages` source
    /// pages and `cpus` CPUs to flush (the kernel traces it).
    fn published(&self, _gen: Gen, _pages: u64, _cpus: u32) {}

    /// Learns of one flush the engine sent, or avoided because pruning
    /// dropped every CPU (the kernel traces it). Nothing is decided by it.
    fn report(&self, _flush: &FlushReport) {}
}

/// Why a flush is asked for: the C `enum migrc_event` its caller counts it
/// under. The engine decides nothing by it; it hands it on with the
/// flush, which the kernel traces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cause(bindings::migrc_event);

impl Cause {
    /// The cause the C event `ev` names.
    pub const fn new(ev: bindings::migrc_event) -> Self {
        Cause(ev)
    }

    /// The C event.
    pub const fn c_event(self) -> bindings::migrc_event {
        self.0
    }
}

impl From<Stat> for Cause {
    fn from(stat: Stat) -> Self {
        Cause(stat.c_event())
    }
}

/// One flush the engine sent or avoided, for [`Platform::report`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct FlushReport {
    /// Why it was asked for.
    pub cause: Cause,
    /// The generation the caller needed flushed.
    pub need: Gen,
    /// The generation every CPU of the flush is clean up to afterwards.
    pub clean_to: Gen,
    /// CPUs the flush was sent to (zero: avoided).
    pub cpus: u32,
    /// CPUs left out because their own flushes covered a request (counted
    /// once per pending request they belong to).
    pub pruned: u32,
}

impl FlushReport {
    /// A flush for `cause` of what `need` waits for, after which the CPUs
    /// sent to are clean up to `clean_to`, with `pruned` CPUs left out and
    /// none sent to yet.
    fn new(cause: Cause, need: Gen, clean_to: Gen, pruned: u32) -> Self {
        FlushReport {
            cause,
            need,
            clean_to,
            cpus: 0,
            pruned,
        }
    }
}

/// Sizes of an engine.
#[derive(Clone, Copy, Debug)]
pub(super) struct Config {
    /// Request slots (migration batches that can be pending at once, before
    /// new ones fold into the newest); at least one.
    pub slots: usize,
    /// Cap on pages waiting on pending requests.
    pub max_pending_pages: u64,
}

/// What a flush for a generation did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flushed {
    /// The generation was already retired: nothing to do.
    Retired,
    /// Pruning dropped every CPU: the flush was skipped.
    Pruned,
    /// A flush was sent to this many CPUs.
    Sent(u32),
}

/// The MIGRC engine.
///
/// # Invariants
///
/// * Every published generation is either held by a request in `pool`
///   (folded requests hold a range) or retired: the watermark of
///   `platform.gens()` only passes a generation after its request left the
///   pool, and a request leaves the pool only when no CPU of its cpumask
///   can still use a stale entry for it.
/// * Lock order: `flusher` before `pool`, never both taken the other way.
#[pin_data]
pub(super) struct Engine<P: Platform> {
    platform: P,
    #[pin]
    pool: SpinLock<RequestPool>,
    /// Scratch cpumask of the flush being built. Holding this lock across
    /// the flush serialises flushers, so a flusher that waited usually finds
    /// its generation retired by the flush it waited for.
    #[pin]
    flusher: SpinLock<KBox<CpumaskVar>>,
}

impl<P: Platform> Engine<P> {
    /// Creates an engine. All memory it will ever use is allocated here.
    ///
    /// Fails with `EINVAL` for a [`Config`] without slots, and with `ENOMEM`.
    pub(super) fn new(
        platform: P,
        config: Config,
        flags: Flags,
    ) -> Result<impl PinInit<Self, Error>> {
        let pool = RequestPool::new(config.slots, config.max_pending_pages, flags)?;
        let scratch = KBox::new(CpumaskVar::new_zero(flags)?, flags)?;
        Ok(try_pin_init!(Self {
            platform,
            pool <- new_spinlock!(pool, "migrc_pool"),
            flusher <- new_spinlock!(scratch, "migrc_flusher"),
        }))
    }

    /// The platform the engine runs on (its per-CPU records are MIGRC's own).
    fn platform(&self) -> &P {
        &self.platform
    }

    /// Pending requests and the pages waiting on them.
    pub(super) fn pending(&self) -> (usize, u64) {
        let pool = self.pool.lock();
        (pool.pending(), pool.pending_pages())
    }

    /// Whether every request up to `gen` is flushed or pruned.
    pub(super) fn is_retired(&self, gen: Gen) -> bool {
        self.platform.gens().is_retired(gen)
    }

    fn flushed(&self, cpu: CpuId) -> Gen {
        self.platform.cpu(cpu).map_or(Gen::NONE, |c| c.get())
    }

    /// Defers the flush of one migration batch.
    ///
    /// `mask` holds the CPUs that may cache stale read-only translations of
    /// the batch, `pages` the source pages that will be freed carrying the
    /// returned generation. The caller must already have made the
    /// invalidation visible to the architecture (on x86, the mm's `tlb_gen`
    /// bump in `arch_tlbbatch_add_pending()`), so that a CPU which observes
    /// the generation also observes the invalidation.
    ///
    /// A full pool is the engine's business, not the caller's: the batch
    /// first takes the slot of a request whose CPUs all flushed since, or
    /// else folds into the newest request. When the pages would exceed the
    /// cap, everything pending is flushed in one folded flush and the batch
    /// is published into the emptied pool: cheaper than flushing this batch
    /// and every next one while the cap stays reached. So, like the flushes,
    /// this must be called in task context with interrupts enabled.
    ///
    /// Returns [`Gen::NONE`] when `mask` is empty (no CPU may hold an entry,
    /// nothing to flush). On [`Declined`] nothing was recorded and the
    /// caller must flush the batch now.
    pub(super) fn publish(&self, mask: &Cpumask, pages: u64) -> Result<Gen, Declined> {
        let mut res = self.try_publish(mask, pages);
        if res == Err(Declined::PendingCap) {
            self.platform.add(Stat::DeclinedPendingCap, 1);
            self.flush_all(Cause::from(Stat::DeclinedPendingCap));
            res = self.try_publish(mask, pages);
        }
        match res {
            Ok(gen) if !gen.is_none() => {
                self.platform.add(Stat::PagesDeferred, pages);
                self.platform.add(Stat::RequestsPublished, 1);
                self.platform.published(gen, pages, mask.weight());
            }
            Ok(_) | Err(Declined::PendingCap) => {}
            Err(Declined::Exhausted) => self.platform.add(Stat::DeclinedExhausted, 1),
        }
        res
    }

    fn try_publish(&self, mask: &Cpumask, pages: u64) -> Result<Gen, Declined> {
        if mask.empty() {
            return Ok(Gen::NONE);
        }
        let mut pool = self.pool.lock();
        let gens = self.platform.gens();
        // Only computed: nothing is published until the request is recorded.
        let req = Request::new(gens.next().ok_or(Declined::Exhausted)?, pages);
        if !pool.has_free_slot() || !pool.admits(pages) {
            // Requests whose CPUs all flushed on their own free room; only
            // if none did does the batch fold into the newest request.
            self.retire_locked(&mut pool);
        }
        if pool.record(req, mask)? == Recorded::Folded {
            self.platform.add(Stat::RequestsFolded, 1);
        }
        let gen = req.gen();
        // Rule (P): the request is in the pool and the caller's invalidation
        // is visible before the generation is.
        gens.publish(gen);
        Ok(gen)
    }

    /// Makes sure no CPU can use a stale entry of any request up to `need`;
    /// `cause` says why, for the report.
    ///
    /// Must be called in task context with interrupts enabled (the platform
    /// may send IPIs); it may spin while another CPU flushes.
    pub(super) fn flush_upto(&self, need: Gen, cause: Cause) -> Flushed {
        let gens = self.platform.gens();
        // Rule (R): a retired watermark covering `need` means the flushes
        // that retired it are complete.
        if gens.is_retired(need) {
            return Flushed::Retired;
        }
        let mut target = self.flusher.lock();
        if gens.is_retired(need) {
            return Flushed::Retired;
        }
        target.clear_all();
        let mut pruned = 0u32;
        let g0 = {
            let pool = self.pool.lock();
            // Rule (S): publishers hold the pool lock, so every request up
            // to `g0` is in the pool or retired, none newer is, and every
            // invalidation up to `g0` is visible to the CPUs flushed below:
            // each of them is clean up to `g0` afterwards.
            let g0 = gens.latest();
            pool.for_each_pending(|req, mask| {
                let p = prune::add_stale_cpus(&mut target, mask, req.gen(), |c| self.flushed(c));
                pruned = pruned.saturating_add(p);
            });
            g0
        };
        self.send_and_retire(&mut target, FlushReport::new(cause, need, g0, pruned))
    }

    /// Makes sure no CPU of `mask` can use a stale entry of any request up
    /// to `need`, leaving the other CPUs alone.
    ///
    /// For a flush that one address space needs before its page tables
    /// change: `mask` holds the CPUs that may run it, `need` the newest
    /// generation that deferred one of its entries. Only the CPUs of `mask`
    /// whose flushed generation does not cover `need` are flushed; requests
    /// whose CPUs are then all clean retire. Same context as
    /// [`Engine::flush_upto`].
    pub(super) fn flush_cpus_upto(&self, mask: &Cpumask, need: Gen, cause: Cause) -> Flushed {
        let gens = self.platform.gens();
        // Rule (R), as in `flush_upto`.
        if gens.is_retired(need) {
            return Flushed::Retired;
        }
        // Mostly the CPUs of an address space switched or flushed since:
        // no need to wait for the flusher lock to find that out.
        if prune::all_clean(mask, need, |c| self.flushed(c)) {
            self.platform.add(Stat::FlushesPruned, 1);
            let avoided = FlushReport::new(cause, need, need, mask.weight());
            self.platform.report(&avoided);
            return Flushed::Pruned;
        }
        let mut target = self.flusher.lock();
        if gens.is_retired(need) {
            return Flushed::Retired;
        }
        target.clear_all();
        // Rule (S), as in `flush_upto`: no request above `g0` is published,
        // every invalidation up to it is visible to the CPUs flushed below.
        let g0 = {
            let _pool = self.pool.lock();
            gens.latest()
        };
        let pruned = prune::add_stale_cpus(&mut target, mask, need, |c| self.flushed(c));
        self.send_and_retire(&mut target, FlushReport::new(cause, need, g0, pruned))
    }

    /// Flushes the CPUs of `target`, records them clean up to `report.clean_to`,
    /// retires the requests that are clean then and reports the flush.
    /// Called with the flusher lock held (`target` is its scratch mask).
    fn send_and_retire(&self, target: &mut Cpumask, mut report: FlushReport) -> Flushed {
        let g0 = report.clean_to;
        self.platform
            .add(Stat::CpusPruned, u64::from(report.pruned));
        let outcome = match target.weight() {
            0 => {
                self.platform.add(Stat::FlushesPruned, 1);
                Flushed::Pruned
            }
            n => {
                self.platform.flush(target);
                for cpu in target.iter() {
                    if let Some(c) = self.platform.cpu(cpu) {
                        c.record_at_least(g0);
                    }
                }
                self.platform.add(Stat::FlushesSent, 1);
                self.platform.add(Stat::CpusFlushed, u64::from(n));
                report.cpus = n;
                Flushed::Sent(n)
            }
        };
        {
            let mut pool = self.pool.lock();
            self.retire_locked(&mut pool);
        }
        self.platform.report(&report);
        outcome
    }

    /// Flushes everything published so far; `cause` says why.
    pub(super) fn flush_all(&self, cause: Cause) -> Flushed {
        self.flush_upto(self.platform.gens().latest(), cause)
    }

    /// Retires every request whose CPUs are all clean, without flushing.
    pub(super) fn reap(&self) {
        let mut pool = self.pool.lock();
        self.retire_locked(&mut pool);
    }

    fn retire_locked(&self, pool: &mut RequestPool) {
        let gens = self.platform.gens();
        let (reqs, _pages) =
            pool.retire_where(|req, mask| prune::all_clean(mask, req.gen(), |c| self.flushed(c)));
        // Publishers hold the pool lock, so `latest` is stable here and every
        // generation up to it is either in the pool or retired.
        let watermark = pool.oldest().map_or_else(|| gens.latest(), Gen::prev);
        gens.retire_to(watermark);
        if reqs > 0 {
            self.platform.add(Stat::RequestsRetired, reqs);
        }
    }
}

#[cfg(CONFIG_MIGRC_KUNIT_TEST)]
#[macros::kunit_tests(rust_migrc_engine)]
mod tests {
    use super::*;
    use crate::{
        cpu::nr_cpu_ids,
        mm::migrc::stats::StatCounters,
        sync::{
            atomic::{Atomic, Full, Relaxed},
            Arc, Completion,
        },
        workqueue,
    };

    /// A platform with in-memory per-CPU generations and a flush that only
    /// counts. Only the engine writes the per-CPU values, so none regress.
    struct TestPlatform {
        gens: GenCounter,
        cpus: KVec<Atomic<u64>>,
        flushes: Atomic<u64>,
        /// Bit n set: CPU n was in some flush (CPUs below 64).
        flushed_bits: Atomic<u64>,
        stats: StatCounters,
        /// Flushes reported, and the cause, CPUs and pruned CPUs of the last.
        reports: Atomic<u64>,
        last_cause: Atomic<u32>,
        last_cpus: Atomic<u32>,
        last_pruned: Atomic<u32>,
    }

    impl TestPlatform {
        fn new(start: u64) -> Result<Self> {
            let mut cpus = KVec::new();
            for _ in 0..nr_cpu_ids() {
                cpus.push(Atomic::new(0u64), GFP_KERNEL)?;
            }
            Ok(TestPlatform {
                gens: GenCounter::starting_at(start),
                cpus,
                flushes: Atomic::new(0),
                flushed_bits: Atomic::new(0),
                stats: StatCounters::new(),
                reports: Atomic::new(0),
                last_cause: Atomic::new(0),
                last_cpus: Atomic::new(0),
                last_pruned: Atomic::new(0),
            })
        }
    }

    impl StatSink for TestPlatform {
        fn add(&self, stat: Stat, n: u64) {
            self.stats.add(stat, n);
        }
    }

    // SAFETY: The three promises of `Platform`:
    // 1. Each test builds one engine on its own `TestPlatform`, whose counter
    //    and per-CPU values nothing else touches.
    // 2. `cpu()` returns element `cpu` of `cpus`, which only the engine
    //    writes.
    // 3. A test has no translations to flush: `flush` only records the call.
    unsafe impl Platform for TestPlatform {
        fn gens(&self) -> &GenCounter {
            &self.gens
        }

        fn cpu(&self, cpu: CpuId) -> Option<CpuFlushGen<'_>> {
            let i = usize::try_from(cpu.as_u32()).ok()?;
            self.cpus.get(i).map(CpuFlushGen::from)
        }

        fn flush(&self, mask: &Cpumask) {
            assert!(!mask.empty());
            self.flushes.fetch_add(1, Relaxed);
            let mut bits = 0u64;
            for cpu in mask.iter() {
                if let Some(bit) = 1u64.checked_shl(cpu.as_u32()) {
                    bits |= bit;
                }
            }
            let mut cur = self.flushed_bits.load(Relaxed);
            while let Err(now) = self.flushed_bits.cmpxchg(cur, cur | bits, Relaxed) {
                cur = now;
            }
        }

        fn report(&self, flush: &FlushReport) {
            self.last_cause.store(flush.cause.c_event(), Relaxed);
            self.last_cpus.store(flush.cpus, Relaxed);
            self.last_pruned.store(flush.pruned, Relaxed);
            self.reports.fetch_add(1, Relaxed);
        }
    }

    /// The cause the tests flush for: a page leaving the allocator.
    const WHY: Cause = Cause::new(bindings::migrc_event_MIGRC_EV_ALLOC_WAITS);

    fn config(slots: usize, cap: u64) -> Config {
        Config {
            slots,
            max_pending_pages: cap,
        }
    }

    fn engine(slots: usize, cap: u64) -> Result<Pin<KBox<Engine<TestPlatform>>>> {
        KBox::pin_init(
            Engine::new(TestPlatform::new(0)?, config(slots, cap), GFP_KERNEL)?,
            GFP_KERNEL,
        )
    }

    fn cpu(n: u32) -> Result<CpuId> {
        CpuId::from_u32(n % nr_cpu_ids()).ok_or(EINVAL)
    }

    fn mask_of(cpus: &[u32]) -> Result<CpumaskVar> {
        let mut m = CpumaskVar::new_zero(GFP_KERNEL)?;
        for c in cpus {
            m.set(cpu(*c)?);
        }
        Ok(m)
    }

    fn publish(e: &Engine<TestPlatform>, cpus: &[u32], pages: u64) -> Result<Gen> {
        e.publish(&*mask_of(cpus)?, pages).map_err(|_| EBUSY)
    }

    fn count(e: &Engine<TestPlatform>, s: Stat) -> u64 {
        e.platform().stats.get(s)
    }

    fn flushes(e: &Engine<TestPlatform>) -> u64 {
        e.platform().flushes.load(Relaxed)
    }

    #[test]
    fn empty_mask_defers_nothing() -> Result {
        let e = engine(4, 1000)?;
        assert_eq!(e.publish(&*mask_of(&[])?, 10), Ok(Gen::NONE));
        assert_eq!(e.pending(), (0, 0));
        assert_eq!(count(&e, Stat::PagesDeferred), 0);
        Ok(())
    }

    #[test]
    fn publish_records_generation_and_pages() -> Result {
        let e = engine(4, 1000)?;
        let g1 = publish(&e, &[0], 512)?;
        let g2 = publish(&e, &[0], 3)?;
        assert!(g2 > g1 && !g1.is_none());
        assert_eq!(e.pending(), (2, 515));
        assert!(!e.is_retired(g1));
        assert_eq!(count(&e, Stat::PagesDeferred), 515);
        assert_eq!(count(&e, Stat::RequestsPublished), 2);
        Ok(())
    }

    #[test]
    fn requests_fold_into_one_flush() -> Result {
        let e = engine(8, 1000)?;
        let _g1 = publish(&e, &[0], 1)?;
        let _g2 = publish(&e, &[1], 1)?;
        let g3 = publish(&e, &[0], 1)?;
        let expect = mask_of(&[0, 1])?.weight();
        assert_eq!(e.flush_upto(g3, WHY), Flushed::Sent(expect));
        assert_eq!(flushes(&e), 1);
        assert_eq!(e.pending(), (0, 0));
        assert!(e.is_retired(g3));
        // Later pages of any of them need nothing more.
        assert_eq!(e.flush_upto(g3, WHY), Flushed::Retired);
        assert_eq!(flushes(&e), 1);
        Ok(())
    }

    #[test]
    fn flush_for_an_older_page_folds_newer_requests() -> Result {
        let e = engine(8, 1000)?;
        let g1 = publish(&e, &[0], 1)?;
        let g2 = publish(&e, &[1], 1)?;
        // A page of g1 leaves the allocator: the flush covers g2 as well.
        assert!(matches!(e.flush_upto(g1, WHY), Flushed::Sent(_)));
        assert!(e.is_retired(g2));
        assert_eq!(e.flush_upto(g2, WHY), Flushed::Retired);
        assert_eq!(flushes(&e), 1);
        Ok(())
    }

    #[test]
    fn flushed_cpus_are_recorded() -> Result {
        let e = engine(4, 1000)?;
        let g = publish(&e, &[0], 1)?;
        e.flush_upto(g, WHY);
        let c0 = e.platform().cpu(cpu(0)?).ok_or(EINVAL)?;
        assert!(c0.get().covers(g));
        assert!(e.platform().flushed_bits.load(Relaxed) & 1 == 1);
        Ok(())
    }

    #[test]
    fn pruned_flush_is_skipped() -> Result {
        let e = engine(4, 1000)?;
        let g = publish(&e, &[0], 1)?;
        // CPU 0 switched address space after the publication.
        e.platform().cpu(cpu(0)?).ok_or(EINVAL)?.record(g);
        assert_eq!(e.flush_upto(g, WHY), Flushed::Pruned);
        assert_eq!(flushes(&e), 0);
        assert!(e.is_retired(g));
        assert_eq!(count(&e, Stat::FlushesPruned), 1);
        assert_eq!(count(&e, Stat::CpusPruned), 1);
        Ok(())
    }

    #[test]
    fn pruning_sends_only_to_stale_cpus() -> Result {
        if nr_cpu_ids() < 2 {
            return Ok(());
        }
        let e = engine(4, 1000)?;
        let g = publish(&e, &[0, 1], 1)?;
        e.platform().cpu(cpu(1)?).ok_or(EINVAL)?.record(g);
        assert_eq!(e.flush_upto(g, WHY), Flushed::Sent(1));
        assert_eq!(e.platform().flushed_bits.load(Relaxed), 1);
        Ok(())
    }

    #[test]
    fn flushes_are_reported_with_their_cause() -> Result {
        if nr_cpu_ids() < 2 {
            return Ok(());
        }
        let e = engine(4, 1000)?;
        let p = e.platform();
        let g1 = publish(&e, &[0, 1], 1)?;
        p.cpu(cpu(1)?).ok_or(EINVAL)?.record(g1);
        // Sent to CPU 0, CPU 1 pruned: one report with the caller's cause.
        assert_eq!(e.flush_upto(g1, WHY), Flushed::Sent(1));
        assert_eq!(p.reports.load(Relaxed), 1);
        assert_eq!(p.last_cause.load(Relaxed), WHY.c_event());
        assert_eq!(
            (p.last_cpus.load(Relaxed), p.last_pruned.load(Relaxed)),
            (1, 1)
        );
        // Retired: nothing to report.
        assert_eq!(e.flush_upto(g1, WHY), Flushed::Retired);
        assert_eq!(p.reports.load(Relaxed), 1);
        // Avoided by pruning: reported with no CPU sent.
        let g2 = publish(&e, &[0], 1)?;
        p.cpu(cpu(0)?).ok_or(EINVAL)?.record(g2);
        let mm = Cause::from(Stat::FlushesPruned);
        assert_eq!(e.flush_cpus_upto(&*mask_of(&[0])?, g2, mm), Flushed::Pruned);
        assert_eq!(p.reports.load(Relaxed), 2);
        assert_eq!(p.last_cause.load(Relaxed), mm.c_event());
        assert_eq!(
            (p.last_cpus.load(Relaxed), p.last_pruned.load(Relaxed)),
            (0, 1)
        );
        // The engine's own flush, for the pending-page cap, names its cause.
        let e = engine(8, 10)?;
        publish(&e, &[0], 6)?;
        publish(&e, &[0], 6)?;
        let cap = Cause::from(Stat::DeclinedPendingCap).c_event();
        assert_eq!(e.platform().last_cause.load(Relaxed), cap);
        Ok(())
    }

    #[test]
    fn watermark_stays_below_the_oldest_pending() -> Result {
        if nr_cpu_ids() < 2 {
            return Ok(());
        }
        let e = engine(4, 1000)?;
        let g1 = publish(&e, &[0], 1)?;
        let g2 = publish(&e, &[1], 1)?;
        // CPU 1 flushed by itself; CPU 0 did not.
        e.platform().cpu(cpu(1)?).ok_or(EINVAL)?.record(g2);
        e.reap();
        assert_eq!(e.pending(), (1, 1));
        // g2's request is gone, but g1 still pends: neither is retired.
        assert!(!e.is_retired(g1));
        assert!(!e.is_retired(g2));
        assert_eq!(e.platform().gens().retired(), g1.prev());
        Ok(())
    }

    #[test]
    fn full_pool_folds_without_a_flush() -> Result {
        let e = engine(2, 1000)?;
        publish(&e, &[0], 1)?;
        publish(&e, &[0], 1)?;
        let g3 = publish(&e, &[0], 1)?;
        assert_eq!(count(&e, Stat::RequestsFolded), 1);
        assert_eq!(count(&e, Stat::DeclinedPendingCap), 0);
        assert_eq!(flushes(&e), 0);
        assert_eq!(e.pending(), (2, 3));
        assert!(matches!(e.flush_upto(g3, WHY), Flushed::Sent(_)));
        assert_eq!(e.pending(), (0, 0));
        Ok(())
    }

    #[test]
    fn folded_request_waits_for_its_newest_generation() -> Result {
        if nr_cpu_ids() < 3 {
            return Ok(());
        }
        let e = engine(2, 1000)?;
        let g1 = publish(&e, &[0], 1)?;
        let g2 = publish(&e, &[1], 1)?;
        let g3 = publish(&e, &[2], 1)?;
        // g3 joined g2's request. CPU 1 flushed after g2 but before g3,
        // CPU 2 after g3: the request still waits for CPU 1.
        e.platform().cpu(cpu(1)?).ok_or(EINVAL)?.record(g2);
        e.platform().cpu(cpu(2)?).ok_or(EINVAL)?.record(g3);
        e.reap();
        assert_eq!(e.pending(), (2, 3));
        assert!(!e.is_retired(g2));
        // g1 alone is flushed now; the watermark stops below g2.
        e.platform().cpu(cpu(0)?).ok_or(EINVAL)?.record(g1);
        e.reap();
        assert_eq!(e.pending(), (1, 2));
        assert!(e.is_retired(g1) && !e.is_retired(g2));
        // A page of g2 leaves: only CPU 1 is still stale.
        assert_eq!(e.flush_upto(g2, WHY), Flushed::Sent(1));
        assert_eq!(e.platform().flushed_bits.load(Relaxed), 1 << 1);
        assert!(e.is_retired(g3));
        Ok(())
    }

    #[test]
    fn flush_of_some_cpus_prunes_and_retires() -> Result {
        if nr_cpu_ids() < 3 {
            return Ok(());
        }
        let e = engine(4, 1000)?;
        let g1 = publish(&e, &[0, 1], 1)?;
        let g2 = publish(&e, &[2], 1)?;
        // CPU 1 switched address space after g1.
        e.platform().cpu(cpu(1)?).ok_or(EINVAL)?.record(g1);
        // An mm that runs on CPUs 0-1 and deferred up to g1: only CPU 0.
        assert_eq!(
            e.flush_cpus_upto(&*mask_of(&[0, 1])?, g1, WHY),
            Flushed::Sent(1)
        );
        assert_eq!(e.platform().flushed_bits.load(Relaxed), 1);
        // g1 retired; g2's CPU 2 was left alone.
        assert!(e.is_retired(g1) && !e.is_retired(g2));
        assert_eq!(e.pending(), (1, 1));
        // Asked again: nothing to do.
        assert_eq!(
            e.flush_cpus_upto(&*mask_of(&[0, 1])?, g1, WHY),
            Flushed::Retired
        );
        // CPU 0 is clean up to the latest generation now: pruned for g2.
        assert_eq!(
            e.flush_cpus_upto(&*mask_of(&[0])?, g2, WHY),
            Flushed::Pruned
        );
        assert_eq!(flushes(&e), 1);
        Ok(())
    }

    #[test]
    fn engine_without_slots_is_refused() -> Result {
        let res = Engine::new(TestPlatform::new(0)?, config(0, 1000), GFP_KERNEL);
        assert_eq!(res.err(), Some(EINVAL));
        Ok(())
    }

    #[test]
    fn full_pool_reclaims_requests_of_clean_cpus() -> Result {
        let e = engine(1, 1000)?;
        let g1 = publish(&e, &[0], 1)?;
        e.platform().cpu(cpu(0)?).ok_or(EINVAL)?.record(g1);
        // The only slot is taken, but its CPU is clean: no decline.
        let g2 = publish(&e, &[0], 1)?;
        assert!(e.is_retired(g1));
        assert!(!e.is_retired(g2));
        assert_eq!(count(&e, Stat::RequestsFolded), 0);
        Ok(())
    }

    #[test]
    fn pending_cap_flushes_everything_then_defers() -> Result {
        let e = engine(8, 100)?;
        let g1 = publish(&e, &[0], 60)?;
        // 110 pages would exceed the cap: g1 is flushed, the batch deferred.
        let g2 = publish(&e, &[1], 50)?;
        assert!(e.is_retired(g1) && !e.is_retired(g2));
        assert_eq!(flushes(&e), 1);
        assert_eq!(e.pending(), (1, 50));
        assert_eq!(count(&e, Stat::DeclinedPendingCap), 1);
        assert_eq!(count(&e, Stat::RequestsPublished), 2);
        Ok(())
    }

    #[test]
    fn batch_over_the_cap_alone_is_declined() -> Result {
        let e = engine(8, 100)?;
        publish(&e, &[0], 60)?;
        assert_eq!(e.publish(&*mask_of(&[0])?, 101), Err(Declined::PendingCap));
        // Counted once; what was pending got flushed on the way.
        assert_eq!(count(&e, Stat::DeclinedPendingCap), 1);
        assert_eq!(e.pending(), (0, 0));
        assert_eq!(count(&e, Stat::RequestsPublished), 1);
        Ok(())
    }

    #[test]
    fn allocation_failure_means_no_engine() -> Result {
        // The caller gets an error and no engine: with nothing to publish
        // to, every batch is flushed at once (the C side's rule).
        let res = Engine::new(TestPlatform::new(0)?, config(usize::MAX / 2, 1), GFP_KERNEL);
        assert!(res.is_err());
        Ok(())
    }

    #[test]
    fn exhausted_generations_decline() -> Result {
        let p = TestPlatform::new(u64::MAX)?;
        let e = KBox::pin_init(Engine::new(p, config(4, 1000), GFP_KERNEL)?, GFP_KERNEL)?;
        assert_eq!(e.publish(&*mask_of(&[0])?, 1), Err(Declined::Exhausted));
        assert_eq!(count(&e, Stat::DeclinedExhausted), 1);
        Ok(())
    }

    /// Shared state of the concurrency test.
    #[pin_data]
    struct Stress {
        #[pin]
        engine: Engine<TestPlatform>,
        #[pin]
        done: Completion,
        remaining: Atomic<u32>,
        violations: Atomic<u32>,
        published: Atomic<u64>,
    }

    const WORKERS: u32 = 4;
    const ROUNDS: u32 = 300;

    fn stress_worker(s: Arc<Stress>, id: u32) {
        let mut last = Gen::NONE;
        for round in 0..ROUNDS {
            let Ok(c) = cpu(id + round) else { continue };
            let Ok(mut mask) = CpumaskVar::new_zero(GFP_KERNEL) else {
                continue;
            };
            mask.set(c);
            let Ok(g) = s.engine.publish(&mask, 1) else {
                continue;
            };
            s.published.fetch_add(1, Relaxed);
            // Generations of one publisher only increase.
            if g <= last {
                s.violations.fetch_add(1, Relaxed);
            }
            last = g;
            // Every few rounds this worker's page leaves the allocator.
            if round % 3 == 0 {
                s.engine.flush_upto(g, WHY);
                // After the flush: retired, and its CPU clean.
                let clean = s
                    .engine
                    .platform()
                    .cpu(c)
                    .is_some_and(|f| f.get().covers(g));
                if !s.engine.is_retired(g) || !clean {
                    s.violations.fetch_add(1, Relaxed);
                }
            }
        }
        if s.remaining.fetch_sub(1, Full) == 1 {
            s.done.complete_all();
        }
    }

    #[test]
    fn concurrent_publishers_and_flushers() -> Result {
        let engine = Engine::new(TestPlatform::new(0)?, config(16, 1 << 20), GFP_KERNEL)?;
        let s = Arc::pin_init(
            try_pin_init!(Stress {
                engine <- engine,
                done <- Completion::new(),
                remaining: Atomic::new(WORKERS),
                violations: Atomic::new(0),
                published: Atomic::new(0),
            }),
            GFP_KERNEL,
        )?;
        for id in 0..WORKERS {
            let w = s.clone();
            workqueue::system_unbound().try_spawn(GFP_KERNEL, move || stress_worker(w, id))?;
        }
        s.done.wait_for_completion();
        assert_eq!(s.violations.load(Relaxed), 0);
        // Everything published is pending or retired; flush what is left.
        s.engine.flush_all(WHY);
        assert_eq!(s.engine.pending(), (0, 0));
        let gens = s.engine.platform().gens();
        assert_eq!(gens.retired(), gens.latest());
        let published = s.published.load(Relaxed);
        assert!(published > 0);
        assert_eq!(count(&s.engine, Stat::PagesDeferred), published);
        assert_eq!(count(&s.engine, Stat::RequestsRetired), published);
        Ok(())
    }
}
