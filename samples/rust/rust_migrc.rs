// SPDX-License-Identifier: GPL-2.0

//! Rust MIGRC sample: the API a kernel developer uses.
//!
//! Publishes one request on the kernel's MIGRC engine, takes the generation
//! a freed source page would carry, flushes it the way the allocator does
//! before the page is used again, and prints the statistics.

use kernel::{bindings, cpu::CpuId, cpumask::CpumaskVar, mm::migrc, prelude::*};

module! {
    type: RustMigrc,
    name: "rust_migrc",
    authors: ["MIGRC developers"],
    description: "Rust MIGRC sample",
    license: "GPL",
}

struct RustMigrc;

impl kernel::Module for RustMigrc {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let Some(engine) = migrc::global() else {
            pr_info!("MIGRC is not set up: migrations flush at once\n");
            return Ok(RustMigrc);
        };

        // One migration batch whose source pages this CPU may have cached.
        // (A real caller passes the cpumask of the architecture's unmap
        // batch, after the invalidation was made visible.)
        let mut cpus = CpumaskVar::new_zero(GFP_KERNEL)?;
        cpus.set(CpuId::current());
        let gen = match engine.publish(&cpus, 1) {
            Ok(gen) => gen,
            Err(why) => {
                pr_info!("batch not deferred ({:?}): the caller flushes now\n", why);
                return Ok(RustMigrc);
            }
        };
        pr_info!(
            "published generation {}, retired: {}\n",
            gen.as_raw(),
            engine.is_retired(gen)
        );

        // The freed source page stores `gen` whole; before it leaves the
        // allocator again, the flushes it waits for are done (the cause
        // names the event the trace reports it under).
        let why = migrc::Cause::new(bindings::migrc_event_MIGRC_EV_ALLOC_WAITS);
        let outcome = engine.flush_upto(gen, why);
        pr_info!(
            "flush for generation {}: {:?}; retired: {}\n",
            gen.as_raw(),
            outcome,
            engine.is_retired(gen)
        );

        for stat in migrc::Stat::ALL {
            pr_info!("{:?} {}\n", stat, engine.stat(stat));
        }
        Ok(RustMigrc)
    }
}
