// SPDX-License-Identifier: GPL-2.0

//! MIGRC: deferred TLB flushes for the migration of read-only folios.
//!
//! C header: [`include/linux/migrc.h`](srctree/include/linux/migrc.h)
//!
//! Migrating a folio unmaps it, flushes the TLBs of every CPU that may cache
//! a translation, copies it and maps the copy. When every mapping of the
//! source was read-only and clean, a CPU that keeps a stale translation can
//! only read the old copy, whose content equals the new one. MIGRC therefore
//! defers that flush until the source page leaves the page allocator again
//! (or the data could change), and then flushes only the CPUs that have not
//! flushed on their own in the meantime.
//!
//! # Pieces
//!
//! * `gen`: generations ([`Gen`], `GenCounter`). A global counter is
//!   bumped for each published batch; a free page keeps the generation it
//!   waits for; a *retired* watermark says up to which generation every
//!   flush is done.
//! * `percpu`: per CPU, the generation up to which it is known clean
//!   (`CpuFlushGen`).
//! * `request`: one request per deferred batch (its cpumask, generation,
//!   page count) in a fixed pool; never allocates after setup.
//! * `prune`: drops the CPUs that flushed since a request was published.
//! * `stats`: the events MIGRC counts ([`Stat`], debugfs `migrc/stats`).
//! * `engine`: ties them together (`Engine`): publish (and decide what a
//!   full pool costs), then one folded and pruned flush for every pending
//!   request when a waiting page is reused.
//! * `ffi`: the only module with `unsafe`: C storage, C services, the
//!   kernel's engine ([`KernelEngine`]) and the `#[export]`ed C API of
//!   `include/linux/migrc.h`.
//!
//! The modules are private. Outside the kernel crate, MIGRC is the
//! kernel's engine, [`KernelEngine`] (from [`global`]), and the values its
//! methods take and return: [`Gen`], [`Cause`], [`Stat`], [`Flushed`] and
//! [`Declined`].
//!
//! # What the safe API guarantees
//!
//! No safe code outside this module can make MIGRC skip a flush that a
//! stale translation still needs. The only ways to skip one are to record a
//! CPU as flushed, to move the retired watermark, or to publish a generation
//! without its request, and none is reachable:
//!
//! * Recording a CPU (`CpuFlushGen::record()` and `record_at_least()`) and
//!   moving the counters (`GenCounter::next()`, `publish()`,
//!   `retire_to()`) are private to this module, and outside the kernel
//!   crate neither type can even be named.
//! * `Platform` is an `unsafe trait`: a platform promises that its counter
//!   and per-CPU records serve one engine only and that its flush really
//!   flushes. Outside the kernel crate no platform or engine can be built
//!   at all; inside, `KernelPlatform` cannot be constructed outside this
//!   module, and no engine hands its platform out, so no second engine can
//!   run on the kernel's records.
//! * What [`KernelEngine`] offers can only add flushing:
//!   [`KernelEngine::publish`] records a request that stays pending until
//!   every CPU of its mask is covered; [`KernelEngine::flush_upto`] and
//!   [`KernelEngine::flush_all`] flush. It does not hand its engine out.
//!
//! Each property has a `compile_fail` example below. rustdoc cannot run
//! them in the kernel (they are marked `ignore`); `make test` compiles
//! every such example of this module as a crate of its own against the
//! kernel crate and fails unless the compiler rejects it with the error
//! code the example names.
//!
//! ```ignore,compile_fail,E0603
//! use kernel::mm::migrc::percpu::CpuFlushGen;
//! use kernel::mm::migrc::Gen;
//! use kernel::sync::atomic::Atomic;
//! // A safe caller cannot record a flush that did not happen: the per-CPU
//! // records are private.
//! fn forge(slot: &Atomic<u64>) {
//!     CpuFlushGen::from(slot).record(Gen::from_raw(u64::MAX));
//! }
//! ```
//!
//! ```ignore,compile_fail,E0603
//! use kernel::mm::migrc::gen::GenCounter;
//! use kernel::mm::migrc::Gen;
//! // Nor retire generations nobody flushed, or publish one without its
//! // request: the counter is private.
//! fn forge(gens: &GenCounter) {
//!     gens.retire_to(Gen::from_raw(u64::MAX));
//! }
//! ```
//!
//! ```ignore,compile_fail,E0603
//! use kernel::mm::migrc::engine::{Engine, Platform};
//! // Nor build an engine of its own, on a platform that lies.
//! fn forge<P: Platform>(e: &Engine<P>) {}
//! ```
//!
//! ```ignore,compile_fail,E0603
//! use kernel::mm::migrc::ffi::KernelPlatform;
//! // Nor reach the kernel's platform.
//! fn forge(_: KernelPlatform) {}
//! ```
//!
//! ```ignore,compile_fail,E0616
//! use kernel::mm::migrc;
//! // The kernel's engine does not hand its engine (or platform) out.
//! fn forge() {
//!     if let Some(k) = migrc::global() {
//!         let _ = &k.engine;
//!     }
//! }
//! ```
//!
//! ```ignore,compile_fail,E0451
//! use kernel::mm::migrc::KernelEngine;
//! // Nor can a second one be made.
//! fn forge() -> KernelEngine {
//!     KernelEngine { engine: loop {} }
//! }
//! ```
//!
//! # Ordering rules
//!
//! Four parties touch the state: the *publisher* (migration, after it
//! cleared the PTEs of a batch), a *CPU recording* that it flushed (arch
//! context-switch and flush paths), the *flusher* (the allocator, before a
//! page carrying a generation is reused), and the *skipper* (the allocator
//! fast path, which only reads the retired watermark).
//!
//! 1. (P) The publisher's architecture code makes the invalidation visible
//!    first (x86: `arch_tlbbatch_add_pending()` bumps each mm's `tlb_gen`
//!    with a fully ordered atomic). Under the pool lock, the publisher stores
//!    the request, then stores the new generation with **release**. The
//!    freed pages get the generation only after that.
//! 2. (S) A CPU that records a flush samples the generation with **acquire**
//!    (pairs with P) *before* the flush or switch that makes it clean, and
//!    stores the sample with **release** afterwards. Because of P, every
//!    request at or below the sample has its `tlb_gen` bump visible to that
//!    flush, which therefore removes (x86: brings the loaded mm up to date
//!    with) every stale entry those requests could leave.
//! 3. (F) The flusher samples the generation (`g0`, acquire, pairs with P),
//!    then collects, under the pool lock, the CPUs of requests up to `g0`
//!    whose recorded generation (acquire, pairs with S) does not cover them,
//!    sends one flush to those CPUs and, once it returned, records `g0` for
//!    each of them.
//! 4. (R) A request leaves the pool only when all its CPUs cover it. The
//!    retired watermark is then moved to just below the oldest pending
//!    request (or to the latest generation) with **release**; the skipper
//!    loads it with **acquire**, so a page skipped because of it observes
//!    the flushes that retired it.
//!
//! Why a recorded value may move backwards, and why that is harmless, is in
//! the `percpu` module.
//!
//! # Example
//!
//! ```
//! use kernel::mm::migrc::{self, Gen};
//!
//! // The kernel's engine exists once MIGRC is set up at boot.
//! if let Some(engine) = migrc::global() {
//!     // A page that stores no generation waits for nothing.
//!     assert!(engine.is_retired(Gen::NONE));
//!     let why = migrc::Cause::from(migrc::Stat::FlushesSent);
//!     assert_eq!(engine.flush_upto(Gen::NONE, why), migrc::Flushed::Retired);
//! }
//! ```

mod engine;
mod ffi;
mod gen;
mod percpu;
mod prune;
mod request;
mod stats;

pub use engine::{Cause, Flushed};
pub use ffi::{global, KernelEngine};
pub use gen::Gen;
pub use request::Declined;
pub use stats::Stat;
