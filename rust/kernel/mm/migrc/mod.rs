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
//! * [`gen`]: generations. A global counter is bumped for each published
//!   batch; a free page keeps (possibly truncated) the generation it waits
//!   for; a *retired* watermark says up to which generation every flush is
//!   done.
//! * [`percpu`]: per CPU, the generation up to which it is known clean.
//! * [`request`]: one request per deferred batch (its cpumask, generation,
//!   page count) in a fixed pool; never allocates after setup.
//! * [`prune`]: drops the CPUs that flushed since a request was published.
//! * [`stats`]: the events MIGRC counts (`/proc/vmstat` `migrc_*`).
//! * [`engine`]: ties them together: publish, then one folded and pruned
//!   flush for every pending request when a waiting page is reused.
//! * `ffi`: the only module with `unsafe`: C storage, C services and the
//!   `#[export]`ed C API of `include/linux/migrc.h`.
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
//! [`percpu`]; why a truncated page generation can only ask for more
//! flushing is in [`gen::PageGenCodec`].
//!
//! # Example
//!
//! ```
//! use kernel::mm::migrc::{self, Gen};
//!
//! // The kernel's engine exists once MIGRC is set up at boot.
//! if let Some(engine) = migrc::global() {
//!     // A page that stores no generation waits for nothing.
//!     assert!(engine.decode(0).is_none());
//!     assert!(engine.is_retired(Gen::NONE));
//! }
//! ```

pub mod engine;
mod ffi;
pub mod gen;
pub mod percpu;
pub mod prune;
pub mod request;
pub mod stats;

pub use engine::{Config, Engine, Flushed, Platform};
pub use ffi::{global, KernelPlatform};
pub use gen::{Gen, GenCounter, PageGenCodec};
pub use request::Declined;
pub use stats::Stat;
