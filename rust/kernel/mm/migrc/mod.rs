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
//! * `gen`: generations ([`Gen`], [`GenCounter`]). A global counter is
//!   bumped for each published batch; a free page keeps the generation it
//!   waits for; a *retired* watermark says up to which generation every
//!   flush is done.
//! * `percpu`: per CPU, the generation up to which it is known clean
//!   ([`CpuFlushGen`]).
//! * `request`: one request per deferred batch (its cpumask, generation,
//!   page count) in a fixed pool; never allocates after setup.
//! * `prune`: drops the CPUs that flushed since a request was published.
//! * `stats`: the events MIGRC counts ([`Stat`], debugfs `migrc/stats`).
//! * `engine`: ties them together ([`Engine`]): publish (and decide what a
//!   full pool costs), then one folded and pruned flush for every pending
//!   request when a waiting page is reused.
//! * `ffi`: the only module with `unsafe`: C storage, C services and the
//!   `#[export]`ed C API of `include/linux/migrc.h`.
//!
//! The modules are private to the kernel crate; this module re-exports what
//! the C glue's boundary and other Rust code may use.
//!
//! # What the safe API guarantees
//!
//! No safe code outside this module can make MIGRC skip a flush that a
//! stale translation still needs. The only ways to skip one are to record a
//! CPU as flushed, to move the retired watermark, or to publish a generation
//! without its request, and none is reachable:
//!
//! * Recording a CPU ([`CpuFlushGen`]'s `record` and `record_at_least`) and
//!   moving the counters ([`GenCounter`]'s `next`, `publish`, `retire_to`)
//!   are private to this module. Safe code can read them only.
//! * [`Platform`] is an `unsafe trait`: a platform promises that its
//!   counter and per-CPU records serve one engine only and that its flush
//!   really flushes. The kernel's platform, [`KernelPlatform`], cannot be
//!   constructed outside this module, and [`Engine`] does not hand it out,
//!   so no second engine can run on the kernel's records.
//! * What stays safe can only add flushing: [`Engine::publish`] records a
//!   request that stays pending until every CPU of its mask is covered;
//!   [`Engine::flush_upto`] and [`Engine::flush_all`] flush.
//!
//! Each property has a `compile_fail` example below. rustdoc cannot run
//! them in the kernel (they are marked `ignore`); `make test` compiles
//! every such example of this module against the kernel crate and fails
//! unless the compiler rejects it with the error code the example names.
//!
//! ```ignore,compile_fail,E0624
//! use kernel::mm::migrc::{CpuFlushGen, Gen};
//! use kernel::sync::atomic::Atomic;
//! // A safe caller cannot record a flush that did not happen.
//! fn forge(slot: &Atomic<u64>) {
//!     CpuFlushGen::from(slot).record(Gen::from_raw(u64::MAX));
//! }
//! ```
//!
//! ```ignore,compile_fail,E0624
//! use kernel::mm::migrc::{CpuFlushGen, Gen};
//! use kernel::sync::atomic::Atomic;
//! // Nor claim it on behalf of another CPU.
//! fn forge(slot: &Atomic<u64>) {
//!     CpuFlushGen::from(slot).record_at_least(Gen::from_raw(u64::MAX));
//! }
//! ```
//!
//! ```ignore,compile_fail,E0624
//! use kernel::mm::migrc::{Gen, GenCounter};
//! // Nor retire generations nobody flushed...
//! fn forge(gens: &GenCounter) {
//!     gens.retire_to(Gen::from_raw(u64::MAX));
//! }
//! ```
//!
//! ```ignore,compile_fail,E0624
//! use kernel::mm::migrc::{Gen, GenCounter};
//! // ...or publish a generation without its request.
//! fn forge(gens: &GenCounter) {
//!     gens.publish(Gen::from_raw(1 << 40));
//! }
//! ```
//!
//! ```ignore,compile_fail,E0451
//! use kernel::mm::migrc::KernelPlatform;
//! // A second engine cannot be built on the kernel's records.
//! fn forge() -> KernelPlatform {
//!     KernelPlatform { _private: () }
//! }
//! ```
//!
//! ```ignore,compile_fail,E0624
//! use kernel::mm::migrc;
//! // The kernel's engine does not hand its platform out.
//! fn forge() {
//!     if let Some(e) = migrc::global() {
//!         let _ = e.platform();
//!     }
//! }
//! ```
//!
//! ```ignore,compile_fail,E0200
//! use kernel::mm::migrc::{CpuFlushGen, GenCounter, Platform, Stat, StatSink};
//! use kernel::{cpu::CpuId, cpumask::Cpumask};
//! // A platform is a promise: implementing it needs `unsafe impl`.
//! struct Liar;
//! impl StatSink for Liar {
//!     fn add(&self, _: Stat, _: u64) {}
//! }
//! impl Platform for Liar {
//!     fn gens(&self) -> &GenCounter {
//!         loop {}
//!     }
//!     fn cpu(&self, _: CpuId) -> Option<CpuFlushGen<'_>> {
//!         None
//!     }
//!     fn flush(&self, _: &Cpumask) {}
//! }
//! ```
//!
//! ```ignore,compile_fail,E0603
//! use kernel::mm::migrc::request::RequestPool;
//! // The internal modules are private to the kernel crate.
//! fn forge(pool: &mut RequestPool) {
//!     pool.retire_where(|_, _| true);
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

pub(crate) mod engine;
mod ffi;
pub(crate) mod gen;
pub(crate) mod percpu;
pub(crate) mod prune;
pub(crate) mod request;
pub(crate) mod stats;

pub use engine::{Cause, Config, Engine, FlushReport, Flushed, Platform};
pub use ffi::{global, KernelPlatform};
pub use gen::{Gen, GenCounter};
pub use percpu::CpuFlushGen;
pub use request::Declined;
pub use stats::{Stat, StatCounters, StatSink};
