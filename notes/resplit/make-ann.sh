#!/bin/sh
# The annotations of files with more than one patch, regenerated from the
# final tree (build/linux branch 'final'); run after the final tree changes.
set -e
cd "$(dirname "$0")"
R=./regions.py U=./upregions.py T=./tilde.py

$R rust/kernel/mm/migrc/mod.rs gen 23-25=pool 27-29=engine 30-31=capi 36-138=capi 139-171=engine 172-183=capi 185-185=engine 186-186=capi 189-190=pool 193-193=engine 194-194=capi 197-197=pool
N=$(git -C ../../build/linux cat-file blob final:rust/kernel/mm/migrc/engine.rs | wc -l)
$R rust/kernel/mm/migrc/engine.rs engine 340-$N=enginetest
for f in gen percpu stats; do $R rust/kernel/mm/migrc/$f.rs gen; done
$R rust/kernel/mm/migrc/request.rs pool 63-67=engine
$R rust/kernel/mm/migrc/prune.rs pool
$R rust/kernel/mm/migrc/ffi.rs capi
$R samples/rust/rust_migrc.rs sample
$R include/linux/migrc_event_defs.h events 26-27=alloc 28-28=write 29-29=defer 30-30=range 31-32=mmgen 33-35=alloc 36-39=robatch 40-41=alloc 42-42=shadow 43-45=robatch 46-54=defer
$R include/linux/migrc_events.h events

$R mm/migrc.c capi 38-38=alloc 14-14=switch 15-15=knobs 17-17=robatch 18-19=switch 26-26=switch 27-28=knobs 29-29=switch 31-31=alloc 39-42=knobs 41-42=alloc 51-116=alloc 117-131=range 132-147=defer 148-163=robatch 164-176=knobs 177-250=numa 251-278=robatch 337-354=switch 355-460=knobs 461-465=switch 466-468=knobs 469-472=switch 473-522=switch 533-538=switch
$T mm/migrc.c < tilde/mm_migrc.c

$R include/linux/migrc.h capi 207-207=robatch 23-23=knobs 30-30=robatch 45-81=knobs 82-84=mmgen 85-88=robatch 89-92=mmgen 93-98=robatch 99-100=mmgen 101-102=robatch 103-163=shadow 122-122=shadow2 157-157=shadow2 119-119=shadowmm 123-123=shadowmm 131-138=shadowmm 142-142=shadowmm 153-153=shadowmm 164-173=x86 167-167=shadow 171-171=shadow 174-180=numa 201-204=robatch 205-205=write 206-206=numa 208-209=knobs 210-217=numa 218-219=alloc 220-220=range 221-221=defer 222-222=robatch 223-223=alloc 224-225=robatch 226-226=alloc 227-260=x86 232-233=shadow 242-242=shadow 256-257=shadow 261-274=alloc 275-289=range 290-349=alloc 343-344=knobs 347-347=shadow 350-368=write 366-366=shadow 369-385=zap 386-395=mmgen 389-389=zap 396-410=zap 411-432=numa 435-447=robatch 448-453=x86 454-454=alloc 455-455=range 456-468=alloc 469-470=write 471-471=range 473-473=zap 474-474=mmgen 475-491=numa
$T include/linux/migrc.h < tilde/include_linux_migrc.h

$U mm/rmap.c robatch d2635-2635=robatch m814-829 d814-829=mmgen 725-741=shadow 742-773=defer 774-878=mmgen 888-888=mmgen 900-900=mmgen 939-939=mmgen 989-993=shadow 994-1004=mmgen 1005-1009=defer 1058-1058=shadow 1063-1069=mmgen 1075-1079=shadow 1083-1086=mmgen 1085-1085=shadow 1092-1094=mmgen 1094-1094=shadow 1116-1117=shadow 1147-1187=mmgen 1181-1183=shadowmm 1186-1186=shadowmm 1188-1188=write 1189-1204=numa 1205-1249=write 1229-1230=shadowmm 1246-1247=shadowmm 1250-1278=numa 1279-1279=write 1290-1295=defer 2997-3000=defer 3096-3100=defer 3264-3264=defer 766-766=numa
$T mm/rmap.c < tilde/mm_rmap.c
$U arch/x86/mm/tlb.c x86 1718-1719=shadow 1746-1746=shadow 1792-1827=shadow 1793-1815=shadowmm
$U mm/page_alloc.c alloc 1026-1027=knobs 1944-1945=knobs 3049-3077=defer 3345-3347=knobs 7931-7937=range
$T mm/page_alloc.c < tilde/mm_page_alloc.c
$U mm/migrate.c defer 1245-1247=shadow2 1491-1492=shadow
$R mm/migrc_debug.c shadow 148-148=shadowmm 156-156=shadowmm 205-207=shadowmm 386-427=shadowmm 456-469=shadowmm 50-50=shadow2 61-61=shadow2 483-561=shadow2
$R tools/testing/selftests/migrc/migrc_safety.c st1 125-130=st2 210-240=st2 382-388=st2 517-537=st2 389-406=st4 665-1196=st2 1197-1606=st3 1607-1883=st4 1884-$(( $(git -C ../../build/linux cat-file blob final:tools/testing/selftests/migrc/migrc_safety.c | wc -l) - 2 ))=st5
$R Documentation/mm/migrc.rst doc1 619-1221=doc2
$U mm/Kconfig events 714-714=knobs 715-715=shadow 716-716=knobs 717-718=shadow 719-719=knobs 720-735=shadow 736-736=knobs 737-748=gen
$T mm/Kconfig < tilde/mm_Kconfig
for p in Documentation/admin-guide/kernel-parameters.txt:1=switch include/linux/vm_event_item.h:1=events,2=events mm/vmstat.c:1=events include/linux/sched.h:1=robatch,2=robatch rust/kernel/mm.rs:1=gen mm/page_ext.c:1=shadow,2=shadow kernel/fork.c:1=shadowmm,2=shadowmm mm/compaction.c:1=alloc,2=alloc mm/folio.c:1=defer,2=defer,3=defer,4=defer mm/page_alloc.h:1=alloc,2=defer mm/page_reporting.c:1=range,2=shadow,3=range,4=range mm/gup.c:1=write,2=write mm/memory.c:1=write,2=write,3=write,4=numa,5=numa,6=numa mm/internal.h:1=numa,2=numa include/linux/mm_inline.h:1=mmgen,2=mmgen,3=zap,4=zap include/asm-generic/tlb.h:1=zap,2=zap,3=zap mm/mmu_gather.c:1=zap,2=zap mm/mempolicy.c:1=numa,2=numa,3=numa,4=numa include/linux/rmap.h:1=robatch mm/madvise.c:1=zap mm/mprotect.c:1=numa rust/helpers/cpumask.c:1=cpumask rust/kernel/cpumask.rs:1=cpumask,2=cpumask,3=cpumask tools/testing/selftests/Makefile:1=st1 tools/testing/vma/include/stubs.h:1=zap samples/rust/Kconfig:1=sample samples/rust/Makefile:1=sample Documentation/mm/index.rst:1=doc1 MAINTAINERS:1=events; do
	f=${p%%:*}; ./upregions.py $f x >/dev/null
	./tag.py $f $(echo ${p#*:} | tr , ' ')
done
$U mm/Makefile capi 100-100=shadow
$R include/linux/migrc_break_defs.h knobs 12-12=write 13-13=defer 14-14=mmgen 16-16=shadow2 17-18=numa 19-19=mmgen 20-20=robatch
