// SPDX-License-Identifier: GPL-2.0

//! Cpumask pruning: flush only CPUs that may still hold a stale entry.
//!
//! A CPU of a request's cpumask needs the deferred flush only while its
//! flushed generation is older than the request's generation. A CPU that
//! flushed since (a context switch to another address space, a full flush,
//! an earlier MIGRC flush) is dropped. When every CPU is dropped, the flush
//! is skipped entirely.

use super::gen::Gen;
use crate::{cpu::CpuId, cpumask::Cpumask};

/// Adds to `target` every CPU of `mask` whose flushed generation (from
/// `flushed`) does not cover `gen`. Returns how many CPUs of `mask` were
/// pruned (already clean).
pub(super) fn add_stale_cpus(
    target: &mut Cpumask,
    mask: &Cpumask,
    gen: Gen,
    flushed: impl Fn(CpuId) -> Gen,
) -> u32 {
    let mut pruned = 0u32;
    for cpu in mask.iter() {
        if flushed(cpu).covers(gen) {
            pruned = pruned.saturating_add(1);
        } else {
            target.set(cpu);
        }
    }
    pruned
}

/// Whether no CPU of `mask` can still hold a stale entry for `gen`.
pub(super) fn all_clean(mask: &Cpumask, gen: Gen, flushed: impl Fn(CpuId) -> Gen) -> bool {
    mask.iter().all(|cpu| flushed(cpu).covers(gen))
}

#[cfg(CONFIG_MIGRC_KUNIT_TEST)]
#[macros::kunit_tests(rust_migrc_prune)]
mod tests {
    use super::*;
    use crate::{cpu::nr_cpu_ids, cpumask::CpumaskVar, prelude::*};

    // Flushed generation of CPU n in these tests: 10 * (n + 1).
    fn flushed(cpu: CpuId) -> Gen {
        Gen::from_raw(10 * (u64::from(cpu.as_u32()) + 1))
    }

    fn all_cpus() -> Result<CpumaskVar> {
        let mut m = CpumaskVar::new_zero(GFP_KERNEL)?;
        for n in 0..nr_cpu_ids() {
            if let Some(c) = CpuId::from_u32(n) {
                m.set(c);
            }
        }
        Ok(m)
    }

    #[test]
    fn keeps_cpus_that_are_behind() -> Result {
        let mask = all_cpus()?;
        let mut target = CpumaskVar::new_zero(GFP_KERNEL)?;
        // Every CPU flushed at 10 or later, the request is newer than all.
        let newest = Gen::from_raw(10 * u64::from(nr_cpu_ids()) + 1);
        let pruned = add_stale_cpus(&mut target, &mask, newest, flushed);
        assert_eq!(pruned, 0);
        assert_eq!(target.weight(), mask.weight());
        assert!(!all_clean(&mask, newest, flushed));
        Ok(())
    }

    #[test]
    fn empties_when_every_cpu_flushed() -> Result {
        let mask = all_cpus()?;
        let mut target = CpumaskVar::new_zero(GFP_KERNEL)?;
        let pruned = add_stale_cpus(&mut target, &mask, Gen::from_raw(10), flushed);
        assert_eq!(pruned, mask.weight());
        assert!(target.empty());
        assert!(all_clean(&mask, Gen::from_raw(10), flushed));
        Ok(())
    }

    #[test]
    fn boundary_at_equal_generation() -> Result {
        // CPU 0 flushed at exactly 10: clean for 10, stale for 11.
        let c0 = CpuId::from_u32(0).ok_or(EINVAL)?;
        let mut mask = CpumaskVar::new_zero(GFP_KERNEL)?;
        mask.set(c0);
        let mut target = CpumaskVar::new_zero(GFP_KERNEL)?;
        assert_eq!(
            add_stale_cpus(&mut target, &mask, Gen::from_raw(10), flushed),
            1
        );
        assert!(target.empty());
        assert_eq!(
            add_stale_cpus(&mut target, &mask, Gen::from_raw(11), flushed),
            0
        );
        assert!(target.test(c0));
        Ok(())
    }

    #[test]
    fn partial_prune_keeps_only_stale_cpus() -> Result {
        if nr_cpu_ids() < 2 {
            return Ok(());
        }
        let mask = all_cpus()?;
        let mut target = CpumaskVar::new_zero(GFP_KERNEL)?;
        // Generation 15: CPU 0 (flushed at 10) is stale, the others clean.
        let pruned = add_stale_cpus(&mut target, &mask, Gen::from_raw(15), flushed);
        assert_eq!(pruned, mask.weight() - 1);
        assert_eq!(target.weight(), 1);
        assert!(target.test(CpuId::from_u32(0).ok_or(EINVAL)?));
        Ok(())
    }

    #[test]
    fn empty_request_mask_is_clean() -> Result {
        let mask = CpumaskVar::new_zero(GFP_KERNEL)?;
        let mut target = CpumaskVar::new_zero(GFP_KERNEL)?;
        assert_eq!(
            add_stale_cpus(&mut target, &mask, Gen::from_raw(99), flushed),
            0
        );
        assert!(target.empty());
        assert!(all_clean(&mask, Gen::from_raw(99), flushed));
        Ok(())
    }
}
