# SPDX-License-Identifier: GPL-2.0
"""The series resplit.py builds: (id, subject, message), in order."""

DATE = "2026-11-24T08:00:00+0000"

PATCHES = [
    ("cpumask", "rust: cpumask: add iteration, union and clearing", """
MIGRC prunes and folds cpumasks in Rust. Without iteration, union and
clearing every user would open-code bit loops over raw bindings.

Add Cpumask::iter() (for_each_cpu), or() and clear_all(), each a thin
wrapper of the C helper, with a KUnit suite. CpumaskVar owns its mask
exclusively, so it is Send and Sync; this lets it live inside a
SpinLock.
"""),
    ("events", "mm/migrc: add the MIGRC option and its /proc/vmstat events", """
Migrating a folio sends a TLB-shootdown IPI to every CPU that may cache
one of its translations. When every mapping of the source was read-only
and clean, a CPU that keeps a stale translation can only read data equal
to the new copy, so the flush can wait until the source page is used
again. MIGRC ("Migration Read Copy") defers it that long, folds many
deferred flushes into one and leaves out the CPUs that flushed on their
own meanwhile. This series adds it, with its core in Rust.

Start with the option and the counters everything else reports into.
The events have one list, include/linux/migrc_event_defs.h, included
where each form is generated (as lsm_hook_defs.h is): enum migrc_event,
a range of vm_event_item sized by it, and the /proc/vmstat names
migrc_*. Later patches add their events to the list; this one has those
of the Rust core.

MIGRC needs 64-bit (a free page will carry a whole generation in one
word), the batched unmap TLB flush and vm event counters. Nothing uses
the option yet.
"""),
    ("gen", "rust: mm: migrc: add generations, per-CPU flush records and statistics", """
The core keeps three kinds of state: a global generation counter bumped
for each published batch of deferred flushes, with a retired watermark
below which every flush is done; per CPU, the generation up to which the
CPU is known to hold no stale translation; and counters of what it did.

Add them under rust/kernel/mm/migrc/ (gen.rs, percpu.rs, stats.rs). The
generation state is #[repr(C)] so that C can own the storage and read it
on fast paths; everything that could make a flush look done (publishing
a generation, moving the watermark, recording a CPU) is private to the
module. Each Stat takes its value from the C enum migrc_event through
bindgen, and a build-time assertion checks every Stat against its
position in Stat::ALL, so no number is kept on both sides.

CONFIG_MIGRC_KUNIT_TEST builds the rust_migrc_* KUnit suites.
"""),
    ("pool", "rust: mm: migrc: add the request pool and cpumask pruning", """
A deferred migration batch becomes a request: the cpumask of the CPUs
that may cache a stale read-only translation, the generation it was
published under and the pages waiting on it. Requests live in a fixed
pool allocated once, so that recording one never allocates. A batch
that finds the pool full joins the newest request (the union of both
cpumasks, the newer generation, the older one kept for the watermark)
instead of forcing a flush; only the cap on pending pages declines. A
pool without slots is refused at creation.

Pruning drops from a flush the CPUs whose own flushes since the request
was published already cover it.
"""),
    ("engine", "rust: mm: migrc: add the engine that publishes, folds and prunes flushes", """
The engine ties generations, requests and pruning together.
Engine::publish() records a batch and returns the generation its freed
pages carry. It alone decides what a full pool costs: a batch first
takes the slot of a request whose CPUs all flushed since, else folds
into the newest request, and when the pending pages would exceed the
cap, everything pending is flushed in one folded flush and the batch is
published into the emptied pool. Engine::flush_upto() is called before
a page carrying a generation leaves the allocator: it returns at once
when the watermark covers it, and otherwise sends one flush for every
pending request, to the CPUs pruning could not drop, then retires what
that flush covered. Engine::flush_cpus_upto() does the same for the
CPUs of one address space.

The architecture is reached through the Platform trait, an unsafe trait:
a platform promises that its counter and per-CPU records serve one
engine only and that its flush really flushes. The module documentation
states the ordering rules between publisher, recording CPU, flusher and
the fast path that skips a flush.
"""),
    ("enginetest", "rust: mm: migrc: test the engine with KUnit", """
Test the engine on a platform double whose flush only counts: the
generations and pages a publication records, folding several requests
into one flush, pruning CPUs that flushed on their own, a watermark that
stays below the oldest pending request, a full pool that folds without a
flush, the pending cap that flushes everything once and defers the
batch, a batch over the cap on its own, allocation failure, exhausted
generations, and concurrent publishers and flushers on several CPUs with
the invariants checked at the end.
"""),
    ("capi", "mm/migrc: set the Rust core up at boot and give C its API", """
Give the C side of MIGRC its boundary with the Rust core.

rust/kernel/mm/migrc/ffi.rs is the only module of the core with unsafe
code. It turns the C-owned storage (struct migrc_gens, the per-CPU
flushed generation) into references, calls the C services (the flush,
the vmstat counters) and exports the functions include/linux/migrc.h
declares, each checked against its C prototype by #[export]. The
kernel's platform cannot be built outside the module and the engine does
not hand it out, so no second engine can run on the kernel's records;
compile_fail examples in the module documentation state what safe code
cannot do, one per property.

mm/migrc.c owns the storage C fast paths read without calling Rust,
counts the events, provides the default flush (flush_tlb_all()) that an
architecture overrides, and sets the core up at boot: 64 request slots,
at most 65536 pages pending. If that fails, every migration flushes at
once. migrc_publish() returns the generation to free the batch's pages
with, or 0: flush now.
"""),
    ("switch", "mm/migrc: switch deferral off at boot or at run time", """
migrc=off on the kernel command line sets MIGRC up but defers nothing;
/sys/kernel/mm/migrc/enabled switches it at run time, and switching it
off flushes everything pending. /sys/kernel/debug/migrc/state shows the
generations and each CPU's flushed generation, for debugging and for
the tests of the architecture hooks.
"""),
    ("sample", "samples: rust: add a MIGRC sample", """
Show the Rust API of MIGRC as a kernel developer uses it: publish a
request for a batch on the kernel's engine, flush what a freed page
carrying its generation waits for, as the allocator does before the
page is used again, and read the statistics.
"""),
    ("alloc", "mm/migrc: carry flush generations through the page allocator", """
A page freed by a migration whose TLB flush MIGRC deferred must not leave
the allocator while some CPU may still read it through a stale entry.
Make the generation it waits for travel with the free page, without
growing struct page, and flush at every exit.

The generation lives in the head page's __folio_index of a free block:
the allocator keeps its own state in lru, private and page_type, so the
field is unused while the page is free. Every free stores 0, a merge
keeps the newer of both blocks, and expand(), split_large_buddy(),
break_down_buddy_pages() and compaction's split copy it to every new
head. post_alloc_hook() (every allocation, bulk, compaction's free
scanner and capture) performs the flush before the page can be written
and forgets the generation; so do hwpoison take-off and each block of an
isolated contiguous range (migrc_isolated_blocks_leave()).

A flush sends IPIs and waits for them. Allocations that may enter direct
reclaim already may (reclaim flushes the same way). The others get
ALLOC_MIGRC_CLEAN and skip blocks whose flush is pending: a bounded scan
of the pcp list, a buddy block put back at the tail; then they fail over
as atomic allocations may, and a worker performs the pending flushes.
Bulk allocation prepares pages under the pcp lock and takes clean pages
only.

Pending blocks stay at the tail of the buddy lists, and
__rmqueue_smallest() splits a clean larger block before it takes a
pending one, so that deferred flushes can wait until the CPUs flush on
their own. No page is held outside the free lists, so free page counts
and watermarks are unchanged. Nothing frees a page with a generation
yet.
"""),
    ("knobs", "mm/migrc: add debugfs knobs that break a safety rule on purpose", """
A test that hunts for stale translations proves little unless it is
seen to fail when MIGRC misses a flush. With CONFIG_MIGRC_DEBUG,
/sys/kernel/debug/migrc/break takes the names of safety rules to break
on purpose, and of test aids that break nothing but widen a window.
Each rule and aid is one line of MIGRC_BREAKS() in
include/linux/migrc.h, the one list the bits and the debugfs names come
from; the patches that add a rule add its line. This one has

  alloc        no flush when a page leaves the allocator; atomic
               allocations take pending pages too
  reuse_first  (aid) pages with a pending flush are handed out before
               clean ones, so that a test reaches the allocator exit at
               once

Setting a rule warns in the kernel log: such a kernel leaks data.
"""),
    ("range", "mm/migrc: flush what is pending before offlining and page reporting", """
Offlining takes a whole isolated range out of the allocator at once, and
free page reporting hands free pages to the host, which may discard
them: neither goes through an allocator exit. Flush everything pending
first (migrc_flush_pending(), counted in migrc_forced_range); both are
rare and may sleep.
"""),
    ("robatch", "mm/migrc: give each migration its own read-only unmap batch", """
Give each migration a second unmap batch of its own, for the PTEs whose
flush may be deferred: current->migrc_ro_ubc, owned by one
migrate_pages_batch() call at a time through a struct migrc_scope on its
stack. Only the owner unmaps into it and only the owner publishes or
flushes it; a migration nested in the owner (direct reclaim demoting,
direct compaction, both entered while the owner allocates a
destination) is not an owner and cannot publish the owner's entries
under its own generation. try_to_unmap_flush() does not touch it.

migrc_scope_publish() hands the batch's cpumask to the Rust core once
every folio of the batch is unmapped, and returns the generation to free
the sources with, or flushes the batch at once and returns 0 when the
architecture cannot defer (the generic migrc_arch_batch_cpus() returns
NULL; arm64 keeps it: it broadcasts its TLBIs and sends no IPI to
defer), when freeing would touch the page (poisoning, init_on_free,
debug_pagealloc, hardware tag-based KASAN), or when the core declines.
The test aid publish_hold widens the window between the last unmap and
the publication.

set_tlb_ubc_flush_pending() learns which batch a PTE goes to; every
caller still passes false, so nothing changes yet.
"""),
    ("x86", "x86/tlb: add MIGRC's targeted flush and per-CPU flush records", """
Give MIGRC a flush that reaches only the CPUs pruning left, done exactly
as arch_tlbbatch_flush() does for a batch (factored out into
tlbbatch_flush_cpus()), and let CPUs record the MIGRC generation up to
which they can no longer use a stale user translation.

A CPU can use a stale translation of an mm only while that mm is loaded
and its ASID has not caught up with the mm's tlb_gen, which every
deferred unmap bumped before its generation was published. So the
generation is sampled before the tlb_gen read, and recorded:

 - in switch_mm_irqs_off() when switching to another mm (the old mm's
   ASID is checked against its tlb_gen before reuse) and when leaving
   lazy mode after the ASID check; not on a thread switch within one
   process, which checks nothing;
 - in flush_tlb_func() once the loaded mm is up to date.

Global ASIDs are only kept up to date by INVLPGB, so nothing is recorded
and nothing deferred while INVLPGB is in use. The cost on a context
switch is one load of a read-mostly global and one per-CPU store.
"""),
    ("mmgen", "mm/migrc: track the deferred entries of each mm", """
flush_tlb_batched_pending() flushes every CPU of an mm while one of its
batched unmaps is unflushed. A read-only batch whose flush MIGRC defers
would stay "unflushed" in mm->tlb_flush_batched until the next munmap,
mprotect, mremap or madvise of the mm, however long ago the allocator
exits flushed it.

Mark the mm by generation instead. Under the PTE lock, the owner's scope
records each mm of its read-only batch (up to MIGRC_SCOPE_MMS, with
mmgrab(); further mms fall back to tlb_flush_batched) and raises
mm->migrc_ro_unpublished. The publication raises each mm's migrc_ro_gen
to the batch's generation, then drops the count with release; a batch
flushed at once only drops it, after the flush.

migrc_flush_mm_deferred() reads the count with acquire. While a batch is
unpublished it flushes every CPU of the mm, once per new read-only PTE:
each PTE also raises mm->migrc_ro_added, and a complete flush stores the
value it read in migrc_ro_flushed, as upstream marks tlb_flush_batched.
Otherwise it sends nothing once the generation is retired, and else
flushes only the CPUs of mm_cpumask whose flush record does not cover
it (counted in migrc_forced_mm).

Fault injection: batched (the read-only batch marks no mm) and
unpublished (the count is ignored).
"""),
    ("write", "mm/migrc: flush an mm's deferred entries before a PTE becomes writable", """
Making a read-only PTE writable sends no TLB flush, so a CPU that still
reads the source of a migration whose flush MIGRC deferred would miss
the writes. Flush first where an anonymous page becomes writable in
place: write-fault reuse (wp_page_reuse()), swap-in of an exclusive
page, and a FOLL_FORCE write through a read-only PTE.

Only the writer's CPUs can cache a stale translation of the page it
writes: MIGRC defers anonymous folios only, the page is exclusive to
the writer, and any other mm that mapped it at migration time flushed
that address when it stopped mapping it. So flush the writer's mm only
(migrc_flush_mm_deferred(), then a batch that had to mark
tlb_flush_batched), and only when something is pending: the check is
one acquire load of each of two globals. Counted in migrc_forced_write;
the fault-injection rule write skips the flush.
"""),
    ("defer", "mm/migrc: defer the TLB flush of read-only anonymous migrations", """
Put it to work. When a migration unmaps a PTE that is read-only, clean
(or maps an exclusive page) and not under an unflushed write protection
of its mm, no CPU can write through a stale entry of it:
try_to_migrate_one() sends it to the read-only batch
(migrc_pte_deferrable(), each refusal counted by reason). Only
anonymous, non-hugetlb folios opt in (TTU_MIGRC), and not for memory
failure, hotplug, contiguous ranges or longterm pinning; a PMD-mapped
THP is flushed as it is unmapped.

migrate_pages_batch() publishes the read-only batch once every folio is
unmapped, and the generation goes down the migration's calls, as an
argument, to the free of each source: migrate_put_src() freezes the
reference count and frees the folio with it (folio_free_migrated(),
free_frozen_pages_migrated(), which bypass the pcp lists). If someone
else still holds a reference, a speculative one (KSM, the swap cache,
page_idle, DAMON), they would free the page without the generation: the
flush is done first (migrc_forced_src_busy). The synchronous retries of
migrate_pages_sync() batch their single folio's flush too, so that they
can defer it.

Fault injection: dirty defers writable and dirty PTEs too.

In the tiered QEMU guest, migrating a 16 MiB read-only region 32 times
between the nodes with readers on three CPUs sends 15 TLB shootdowns
instead of 239; a writable region defers nothing.
"""),
    ("zap", "mm/migrc: keep deferring under a zap of the same mm", """
A read-only migration may not defer its flush while a flush of its mm is
pending: an unflushed write protection may have left a writable TLB
entry behind a read-only PTE, and a store through it after the copy
would be lost. But a zap raises tlb_flush_pending too, for as long as it
clears PTEs, although it write-protects nothing: the entries its pending
flush may hide map pages that are no longer mapped at those addresses,
and the gather keeps a reference to each of them until after the flush,
so no migration passes its reference-count check and copies one before
then.

Keep a second count next to tlb_flush_pending, mm->migrc_wp_pending,
raised and lowered with it by inc/dec_tlb_flush_pending(), and test it
instead. A gather that write-protects nothing leaves it with
migrc_tlb_no_writable(), before it changes a PTE, and records that in
the mmu_gather; it stays out until tlb_finish_mmu() has flushed, where
migrc_tlb_finish() counts it again just before dec_tlb_flush_pending()
lowers both. The gathers of unmap_region() and of MADV_DONTNEED leave;
MADV_FREE stays in, it cleans PTEs that may still be written through.

The vma userland tests get a stub of the hook.
"""),
    ("numa", "mm/migrc: keep deferring under NUMA hinting scans", """
On tiered memory most promotions follow the NUMA hinting scan that
marked the page, and a scan raises its mm's pending-flush count for as
long as it changes a VMA: every read-only migration of the mm was
refused meanwhile. The entries a scan may leave behind are entries of
the VMA it scans, and none is writable if the VMA cannot be written.

Take every scan out of mm->migrc_wp_pending (migrc_numa_scan_begin()),
and count a scan of a VMA that may be written (VM_WRITE or a shadow
stack) in its vma_numab_state instead, raised before the scan changes a
PTE and lowered after tlb_finish_mmu(). try_to_migrate_one() reads it
for the cleared PTE's VMA only. A scan of a read-only VMA is counted
nowhere: the mprotect() that took VM_WRITE away flushed before it
released mmap_lock, which the scan holds for read.

A scan only takes access away, so change_pte_range() with
MM_CP_PROT_NUMA leaves the mm's deferred entries alone
(flush_tlb_batched_pending_numa()). What makes such a PTE writable again
without a flush must not leave them behind: do_numa_page() rebuilds it
read-only while migrc_mm_maybe_stale() says a CPU may still cache a
deferred entry of the mm, so that a write takes the write fault and its
flush and a read costs nothing; the rebuild, where it still makes the
PTE writable, and the userfaultfd read-write-protect resolution flush
first.

Fault injection: numa_ro counts every scan as read-only; the test aid
numa_hold makes each scan sleep before its flush, as a preempted scan
would.
"""),
    ("shadow", "mm/migrc: add a shadow debug mode that checks pages leaving the allocator", """
The tests find a missed flush only when a stale read happens to be
observed. Add a debug mode that checks every page instead, from a shadow
of MIGRC's books built from other events than the generations it checks:
rmap marks each frame unmapped into a read-only batch (page_ext: a
shadow clock stamp and the batch's CPUs), and the architecture's flush
records and batch-flush completions say up to which stamp each CPU is
clean. It reports, with a WARN naming the page and a CPU and in
migrc_debug_stale:

 - a marked frame that leaves the page allocator;
 - a copy of one that becomes writable;
 - a writable PTE that was deferred;
 - a migrated source whose data changed between the copy and its exit
   from the allocator (a crc32 of the copy): a writable entry that
   survived into the read-only batch shows up there, where every flush
   the books expect still happens.

With a rule broken on purpose the reports are rate-limited warnings, not
WARNs. page_ext grows by 40 bytes per page under CONFIG_MIGRC_DEBUG.
"""),
    ("shadowmm", "mm/migrc: check in the shadow that an mm's flush leaves no CPU behind", """
flush_tlb_batched_pending() and the flush before a write must leave no
CPU running the mm behind a deferred unmap of one of its PTEs: the mm's
page tables change next. The shadow records, per mm, the stamp and the
architecture's generation (x86: tlb_gen) of its latest deferred unmap;
after such a flush each CPU of the mm is asked, in an IPI where no switch
or flush can run halfway, whether it still runs the mm with its ASID
behind that generation (migrc_arch_cpu_behind()). Each mark is checked
once.
"""),
    ("shadow2", "mm/migrc: add a test aid that holds migrated sources", """
A speculative reference (KSM, GUP-fast, page_idle) may be the last one
on a migrated source: its final put then frees the page without any
MIGRC generation. The test aid hold_src takes such a reference on each
source and drops it as soon as it is the last one, frees the page and
takes it back at once with an allocation on the same CPU, so that a
migration that let go of its own reference before its deferred flush
leaves a stale entry on a page somebody writes.
"""),
    ("doc1", "Documentation/mm: describe MIGRC", """
Describe MIGRC: what it defers and when, its status on each
architecture, the life of one migrated page from unmap to reuse in ten
steps, the mechanism (generations, requests, folding and pruning), which
folios and PTEs qualify, how the deferred entries of one mm are tracked,
NUMA hinting scans, who owns the read-only batch, publishing, and the
allocator side.
"""),
    ("doc2", "Documentation/mm/migrc: the safety argument, counters and tests", """
Describe where flushes are forced and why each path is covered, the
ordering rules, what the Rust core's safe API guarantees, how a free
page keeps its generation, the /proc/vmstat counters, how to switch
MIGRC off, the shadow debug mode and its fault injection, and the
tests.
"""),
    ("st1", "selftests/migrc: hunt for stale translations after deferred flushes", """
Readers pinned to every CPU but 0 check a read-only region while CPU 0
migrates it between NUMA nodes 0 and 1 and then does what would expose
a missed flush. The data goes through declared phases: a word older
than the published phase is a stale read, anything else but the current
data a wrong one. Each test reports pages migrated and deferred,
flushes sent and forced and words checked, and fails on a MIGRC kernel
if nothing was deferred; with CONFIG_MIGRC_DEBUG each one also runs with
its rule broken on purpose and must fail then.

  integrity           ping-pong only
  zap_keeps_deferral  munmap() and MADV_DONTNEED between migrations
                      refuse no deferral
"""),
    ("st2", "selftests/migrc: reuse and writes after a deferred flush", """
  reuse_leak         another process fills the old pages with a marker
  kernel_reuse       the page cache takes the old pages (memfd write())
  write_fault_reuse  soft-dirty write-protected PTEs, written in place
  write_other_mm     a write of another mm forces no flush
  proc_mem_write     /proc/self/mem writes (GUP FOLL_FORCE)
  vm_writev          process_vm_writev() from another process
  mprotect_upgrade   PROT_READ -> PROT_READ | PROT_WRITE, then writes
  uffd_unprotect     UFFDIO_WRITEPROTECT before, unprotect after

The reuse and write tests repeat their scenario: a reader CPU loses its
stale entries whenever it catches up with the mm's tlb_gen on its own.
"""),
    ("st3", "selftests/migrc: fork, contiguous ranges and the unmap windows", """
  fork_cow           fork(), then the parent copies every page
  range_reuse        MAP_FIXED file and mremap() over the range
  range_race         MAP_FIXED over pages that are migration entries
  window_munmap, window_map_fixed, window_mprotect
                     part of the region replaced or made writable
                     between a batch's last unmap and its publication
                     (the test aid publish_hold)
"""),
    ("st4", "selftests/migrc: file folios, lost writes and NUMA scans", """
  file_shared         a shared memfd mapping: nothing may be deferred;
                      another process writes and punches a hole
  lost_write          writers on a writable region lose no increment
  numa_scan_writable  two writers store into a page migrated back and
                      forth while NUMA balancing scans it (test aid
                      numa_hold); no increment may be lost
"""),
    ("st5", "selftests/migrc: gigantic pages, nested reclaim, held sources", """
  gigantic_reuse   a 1 GiB page allocated at run time takes frames of
                   pending free blocks
  nested_reclaim   direct reclaim demotes while a migration allocates:
                   the nested migration must not publish the outer batch
  src_held         a speculative reference on each source (test aid
                   hold_src)
"""),
    ("h1", "selftests/migrc: harness: host setup, configs and shared helpers", """
The selftests and KUnit suites need a kernel built with the right
options and a machine with two memory tiers. tools/testing/migrc holds
the harness that provides both ('make test', 'make bench' from the
MIGRC repository). Start with the configuration fragments, the shared
helpers, the per-architecture data (one table, arches.py) and the host
setup: Debian's linux-source-7.3, LLVM 22, the Rust toolchain and a
pinned bindgen.
"""),
    ("h2", "selftests/migrc: harness: build kernels and boot them in QEMU", """
Build each kernel flavor (test, bench; MIGRC, vanilla, MIGRC compiled
out) out of tree from the config fragments, remembering each crate's
clippy findings, and boot a kernel in QEMU with two NUMA nodes, node 1 a
CPU-less, slower tier described by ACPI HMAT, an initramfs of static
guest programs and a serial console the harness reads.
"""),
    ("h3", "selftests/migrc: harness: materialize the tree from the series", """
The repository is an overlay of the kernel tree plus a patch series.
tree.py materializes it on Linux 7.3 as a git repository with one commit
per patch (overlay files may change across patches) and turns the
commits back into overlay, patches and series.
"""),
    ("h4", "selftests/migrc: harness: run guest stages and judge them", """
Run guest stages and judge them: the KUnit results (KTAP), each stage's
begin and end lines, the kernel log (a WARN, a BUG or a lockdep splat
fails the run) and QEMU's exit status. The probe stages show that the
harness catches a failing stage, a hang and a kernel WARN.
"""),
    ("h5", "selftests/migrc: harness: the test stages", """
The guest stages of 'make test': the topology of the two tiers, the core
(KUnit, the Rust sample, the counters against migrc_event_defs.h), the
per-CPU records, the runtime switch, deferral counted end to end, the
safety suite with its fault-injection knobs, demotion, and the mm
migration selftests on the MIGRC kernel; on a kernel without MIGRC the
same tests must pass and nothing may be deferred.
"""),
    ("h6", "selftests/migrc: harness: the guest benchmark program", """
bench is the guest program of 'make bench': the migrate, tiering
(read-only and with writes), demote and alloc scenarios, each with its
readers or lookups pinned to CPUs and a report of throughput and of the
kernel's counters.
"""),
    ("h7", "selftests/migrc: harness: the benchmark scenarios in the guest", """
The benchmark's guest side: pingpong (migration with readers on other
CPUs), memfill, and the stage that runs a scenario and records where
every TLB shootdown came from (a histogram of kernel stacks per IPI).
"""),
    ("h8", "selftests/migrc: harness: run the benchmark", """
'make bench' boots the vanilla and the MIGRC kernel alternately,
REPS times each, runs the scenarios and keeps medians, spreads and the
shootdowns per 1000 migrated pages in results/.
"""),
    ("h9", "selftests/migrc: harness: attribute every shootdown, report", """
Attribute every TLB shootdown of a run to its cause (migration,
reclaim, an mm change, MIGRC's own flushes and so on) from the recorded
stacks, and render the results as the README's tables.
"""),
    ("h10", "selftests/migrc: harness: export and check the series", """
'make patches' exports the series with a cover letter that carries the
benchmark results and the checkpatch findings kept; 'make
check-patches' applies it to a pristine tree one patch at a time and
builds each with CONFIG_MIGRC=y and =n.
"""),
    ("h11", "selftests/migrc: harness: static checks", """
The static checks of 'make test' ('make lint'): rustfmt, clippy, W=1
and kernel-doc compared with pristine upstream, rustdoc and htmldocs,
the documented events against migrc_event_defs.h, the compile_fail
examples of the Rust core, and mypy over the harness itself.
"""),
    ("h12", "selftests/migrc: harness: the command line and parser tests", """
The command line (tools/testing/migrc/migrc), and unit tests of the
console and KTAP parser, the judge, the tree's claims and round trip,
the per-architecture QEMU command lines, the event documentation check
and the safety rules the knob stage breaks ('make unit', run by 'make
test').
"""),
    ("h13", "selftests/migrc: harness: tests of the benchmark statistics", """
Unit tests of the benchmark's statistics, its shootdown attribution and
the tables it renders from a committed run.
"""),
]

# Default tags for 'init': the old commit that added a line -> new patch.
OLD_TO_NEW = {
    "rust: cpumask: add iteration and set operations": "cpumask",
    "mm/migrc: add the flush-generation core in Rust": "capi",
    "samples: rust: add a MIGRC sample": "sample",
    "x86/tlb: add MIGRC's targeted flush and per-CPU flush records": "x86",
    "arm64/tlb: decline MIGRC deferral, the batch is already broadcast": "x86",
    "mm/migrc: carry flush generations through the page allocator": "alloc",
    "mm/migrc: flush deferred migrations before a PTE becomes writable": "write",
    "mm/migrc: defer the TLB flush of read-only anonymous migrations": "defer",
    "mm/migrc: add debugfs knobs that break each safety rule": "knobs",
    "Documentation/mm: describe MIGRC": "doc1",
    "mm/migrc: scope the read-only batch, free sources with their generation, add a shadow debug mode": "robatch",
    "mm/migrc: one list of events": "events",
    "mm/migrc: count every refusal to defer, by reason": "defer",
    "mm/migrc: flush only the writer's mm before a write": "write",
    "mm/migrc: check in the shadow that a migrated source keeps its data": "shadow2",
    "mm/migrc: defer under NUMA hinting scans of read-only VMAs": "numa",
    "mm/migrc: flush one mm's deferred entries by generation, pruned": "mmgen",
    "mm/migrc: defer under a zap of the same mm": "zap",
    "mm/migrc: count a NUMA hinting scan of a writable VMA in that VMA": "numa",
}

# Default tag of a file's lines (new files; upstream lines blame cannot place).
DEFAULT = {
    "rust/kernel/mm/migrc/gen.rs": "gen",
    "rust/kernel/mm/migrc/percpu.rs": "gen",
    "rust/kernel/mm/migrc/stats.rs": "gen",
    "rust/kernel/mm/migrc/mod.rs": "gen",
    "rust/kernel/mm/migrc/request.rs": "pool",
    "rust/kernel/mm/migrc/prune.rs": "pool",
    "rust/kernel/mm/migrc/engine.rs": "engine",
    "rust/kernel/mm/migrc/ffi.rs": "capi",
    "include/linux/migrc.h": "capi",
    "include/linux/migrc_events.h": "events",
    "include/linux/migrc_event_defs.h": "events",
    "mm/migrc.c": "capi",
    "mm/migrc_debug.c": "shadow",
    "samples/rust/rust_migrc.rs": "sample",
    "Documentation/mm/migrc.rst": "doc1",
    "tools/testing/selftests/migrc/migrc_safety.c": "st1",
    "tools/testing/selftests/migrc/Makefile": "st1",
    "tools/testing/selftests/migrc/config": "st1",
    "tools/testing/selftests/Makefile": "st1",
}
