// SPDX-License-Identifier: GPL-2.0

//! The boundary with C: the kernel platform, the kernel's engine, the C API.
//!
//! This is the only MIGRC module with `unsafe` code. It turns C-owned
//! storage (`struct migrc_gens`, the per-CPU `migrc_cpu_flushed_gen`) into
//! references, calls the C services (`migrc_flush_cpus()`,
//! `migrc_stat_add()`, the trace events), and exports the functions declared in
//! `include/linux/migrc.h`. Every export is checked against its C prototype
//! at build time by `#[export]`.

use super::{
    engine::{Cause, Config, Engine, FlushReport, Flushed, Platform},
    gen::{Gen, GenCounter},
    percpu::CpuFlushGen,
    request::Declined,
    stats::{Stat, StatSink},
};
use crate::{
    bindings,
    cpu::CpuId,
    cpumask::Cpumask,
    error::code::EBUSY,
    prelude::*,
    sync::{atomic::Atomic, SetOnce},
};

// `GenCounter` is `#[repr(C)]` over two 64-bit atomics, like the C struct.
const _: () = assert!(
    core::mem::size_of::<GenCounter>() == core::mem::size_of::<bindings::migrc_gens>()
        && core::mem::align_of::<GenCounter>() <= core::mem::align_of::<bindings::migrc_gens>()
);

/// The kernel: C-owned generations and per-CPU data, the arch flush, counters.
///
/// # Invariants
///
/// Only `migrc_rust_init()` creates a value (the field is private), and only
/// the engine it installs as the kernel's keeps one: the kernel's generations
/// and per-CPU records belong to that engine alone.
pub(super) struct KernelPlatform {
    _private: (),
}

impl KernelPlatform {
    /// The kernel's generation counter (`migrc_gens` in `mm/migrc.c`).
    fn counter() -> &'static GenCounter {
        // Static C object, only accessed atomically, same layout (asserted above).
        // SAFETY: Valid and aligned for `'static`; all accesses are atomic.
        unsafe { &*(&raw const bindings::migrc_gens).cast::<GenCounter>() }
    }
}

impl StatSink for KernelPlatform {
    fn add(&self, stat: Stat, n: u64) {
        if n == 0 {
            return;
        }
        // SAFETY: Callable from any context with any item of the enum.
        unsafe { bindings::migrc_stat_add(stat.c_event(), n) };
    }
}

// SAFETY: The three promises of `Platform`:
// 1. By the type invariant, the C generations and per-CPU slots are used by
//    the kernel's engine only.
// 2. `cpu()` returns the static per-CPU slot of `cpu`, written only by that
//    engine and by the architecture's flush records
//    (`migrc_record_local_flush()`, after a completed flush).
// 3. `migrc_flush_cpus()` returns once every CPU of `mask` brought its loaded
//    mm up to date with the `tlb_gen` that every published request bumped
//    before publication.
unsafe impl Platform for KernelPlatform {
    fn gens(&self) -> &GenCounter {
        Self::counter()
    }

    fn cpu(&self, cpu: CpuId) -> Option<CpuFlushGen<'_>> {
        // SAFETY: Callable from any context; `CpuId` guarantees `cpu < nr_cpu_ids`.
        let ptr = unsafe { bindings::migrc_cpu_flushed_gen(cpu.as_u32()) };
        if ptr.is_null() {
            return None;
        }
        // SAFETY: `ptr` is a static per-CPU `atomic64_t`: aligned, `'static`, atomic-only.
        let slot: &'static Atomic<u64> = unsafe { Atomic::from_ptr(ptr.cast::<u64>()) };
        Some(CpuFlushGen::from(slot))
    }

    fn flush(&self, mask: &Cpumask) {
        // The engine calls `flush()` in task context with interrupts enabled.
        // SAFETY: `mask` is valid for the call, and the context is the one required.
        unsafe { bindings::migrc_flush_cpus(mask.as_raw()) };
    }

    fn published(&self, gen: Gen, pages: u64, cpus: u32) {
        // SAFETY: Callable from any context.
        unsafe { bindings::migrc_trace_publish(gen.as_raw(), pages, cpus) };
    }

    fn report(&self, flush: &FlushReport) {
        // SAFETY: Callable from any context with any value of the enum.
        unsafe {
            bindings::migrc_trace_flush(
                flush.cause.c_event(),
                flush.need.as_raw(),
                flush.clean_to.as_raw(),
                flush.cpus,
                flush.pruned,
            )
        };
    }
}

/// The kernel's MIGRC engine: what kernel code outside MIGRC may do with it.
///
/// # Invariants
///
/// `engine` runs on the only `KernelPlatform`: it is the engine
/// `migrc_rust_init()` built, and no method hands it out.
pub struct KernelEngine {
    engine: Pin<KBox<Engine<KernelPlatform>>>,
}

impl KernelEngine {
    /// Defers the flush of one migration batch whose invalidation the caller
    /// already made visible (see the C `migrc_publish()`); `Gen::NONE` for
    /// an empty `mask`, [`Declined`] when the caller must flush now.
    pub fn publish(&self, mask: &Cpumask, pages: u64) -> Result<Gen, Declined> {
        self.engine.publish(mask, pages)
    }

    /// Makes sure no CPU can use a stale entry of any request up to `need`,
    /// for `cause`. Task context, interrupts enabled.
    pub fn flush_upto(&self, need: Gen, cause: Cause) -> Flushed {
        self.engine.flush_upto(need, cause)
    }

    /// Flushes everything published so far, for `cause`. Task context,
    /// interrupts enabled.
    pub fn flush_all(&self, cause: Cause) -> Flushed {
        self.engine.flush_all(cause)
    }

    /// Whether every request up to `gen` is flushed or pruned.
    pub fn is_retired(&self, gen: Gen) -> bool {
        self.engine.is_retired(gen)
    }

    /// Pending requests and the pages waiting on them.
    pub fn pending(&self) -> (usize, u64) {
        self.engine.pending()
    }

    /// The current total of `stat`, as debugfs `migrc/stats` shows it.
    pub fn stat(&self, stat: Stat) -> u64 {
        // SAFETY: Callable from any context with any item of the enum.
        unsafe { bindings::migrc_stat_read(stat.c_event()) }
    }
}

/// The kernel's engine, set up once by [`migrc_rust_init`].
static ENGINE: SetOnce<KernelEngine> = SetOnce::new();

/// The kernel's MIGRC engine, or `None` before setup (or if it failed).
pub fn global() -> Option<&'static KernelEngine> {
    ENGINE.as_ref()
}

/// Sets up the kernel's engine.
///
/// # Safety
///
/// Always safe to call (`unsafe` only because of `#[export]`); meant to be
/// called once, from `mm/migrc.c` at boot.
#[export]
pub(crate) unsafe extern "C" fn migrc_rust_init(slots: u32, max_pending_pages: usize) -> i32 {
    let config = Config {
        slots: usize::try_from(slots).unwrap_or(0),
        max_pending_pages: u64::try_from(max_pending_pages).unwrap_or(u64::MAX),
    };
    if ENGINE.as_ref().is_some() {
        return EBUSY.to_errno();
    }
    // INVARIANT: The only `KernelPlatform` ever made; the engine that owns it
    // is installed below, or dropped unused if another call won the race.
    let platform = KernelPlatform { _private: () };
    let engine = match Engine::new(platform, config, GFP_KERNEL)
        .and_then(|init| KBox::pin_init(init, GFP_KERNEL))
    {
        Ok(e) => e,
        Err(e) => return e.to_errno(),
    };
    // INVARIANT: `engine` runs on the only `KernelPlatform`.
    if ENGINE.populate(KernelEngine { engine }) {
        0
    } else {
        EBUSY.to_errno()
    }
}

/// Defers the flush of one migration batch (see `Engine::publish`, which
/// decides everything, a full pool included).
///
/// Returns the generation the batch's source pages must carry, or zero:
/// the batch was not deferred and the caller flushes it now (the engine
/// counts its declines in debugfs `migrc/stats`).
///
/// # Safety
///
/// `mask` must be null (the batch is then not deferred) or point to a
/// valid `struct cpumask` for the duration of the call. The caller must
/// already have made the batch's invalidation visible (on x86,
/// `arch_tlbbatch_add_pending()` bumped each mm's `tlb_gen`), and call in
/// task context with interrupts enabled (a full pool is flushed).
#[export]
pub(crate) unsafe extern "C" fn migrc_publish(
    mask: *const bindings::cpumask,
    nr_pages: usize,
) -> u64 {
    let Some(engine) = global() else {
        return Gen::NONE.as_raw();
    };
    // SAFETY: `mask` is valid for the call (function safety requirements).
    let Some(mask) = (unsafe { cpumask_arg(mask) }) else {
        return Gen::NONE.as_raw();
    };
    let pages = u64::try_from(nr_pages).unwrap_or(u64::MAX);
    engine.publish(mask, pages).unwrap_or(Gen::NONE).as_raw()
}

/// Flushes what a page carrying `gen` waits for (see `Engine::flush_upto`).
///
/// Returns the number of CPUs a flush was sent to (zero when none was
/// needed).
///
/// # Safety
///
/// Must be called in task context with interrupts enabled: the flush may
/// send IPIs and wait for them.
#[export]
pub(crate) unsafe extern "C" fn migrc_flush_upto(gen: u64, cause: bindings::migrc_event) -> u32 {
    match global().map(|e| e.flush_upto(Gen::from_raw(gen), Cause::new(cause))) {
        Some(Flushed::Sent(n)) => n,
        _ => 0,
    }
}

/// Flushes the CPUs of `mask` that may still use a stale entry of a request
/// up to `gen` (see `Engine::flush_cpus_upto`): the deferred flush of one
/// mm, before its page tables change.
///
/// Returns the number of CPUs a flush was sent to (zero when none was
/// needed).
///
/// # Safety
///
/// `mask` must be null (every CPU is then flushed) or point to a valid
/// `struct cpumask` for the duration of the call. Same context requirement
/// as [`migrc_flush_upto`].
#[export]
pub(crate) unsafe extern "C" fn migrc_flush_cpus_upto(
    mask: *const bindings::cpumask,
    gen: u64,
    cause: bindings::migrc_event,
) -> u32 {
    let Some(engine) = global() else {
        return 0;
    };
    let (gen, cause) = (Gen::from_raw(gen), Cause::new(cause));
    // Without a mask, every CPU is flushed: a bad argument costs IPIs, never
    // a skipped flush.
    // SAFETY: `mask` is null or valid for the call (function safety requirements).
    let mask = unsafe { cpumask_arg(mask) };
    let flushed = match mask {
        Some(mask) => engine.engine.flush_cpus_upto(mask, gen, cause),
        None => engine.flush_upto(gen, cause),
    };
    match flushed {
        Flushed::Sent(n) => n,
        _ => 0,
    }
}

/// The cpumask a C caller passed, or `None` for a null pointer.
///
/// # Safety
///
/// A non-null `mask` must point to a valid `struct cpumask` for `'a`.
unsafe fn cpumask_arg<'a>(mask: *const bindings::cpumask) -> Option<&'a Cpumask> {
    if mask.is_null() {
        return None;
    }
    // SAFETY: `mask` is non-null and valid for `'a` (function safety requirements).
    Some(unsafe { Cpumask::from_raw(mask) })
}

/// Flushes every pending request, for `cause`.
///
/// # Safety
///
/// Same context requirement as [`migrc_flush_upto`].
#[export]
pub(crate) unsafe extern "C" fn migrc_flush_all(cause: bindings::migrc_event) {
    if let Some(e) = global() {
        e.flush_all(Cause::new(cause));
    }
}
