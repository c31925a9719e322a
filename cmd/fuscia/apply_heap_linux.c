// Huge pages for the Go heap of `fuscia apply`.
//
// On the test VM a minor page fault costs ~25 µs (shadow paging), and a one-shot apply of a
// few nodes faulted ~770 of its ~1,200 pages in the Go heap: every 4 KiB the heap grows into
// is a fault, ~18 ms of a ~57 ms apply, and ~14 faults per node of a long chain
// (docs/performance.md, issue 20 items 3 and 2). With transparent huge pages in their usual
// "madvise" mode, a region advised MADV_HUGEPAGE is faulted in 2 MiB at a time instead (~0.3 µs
// per 4 KiB here). Go does not advise its heap: it maps each growth of the heap (4 MiB or more,
// anonymous, read-write, MAP_FIXED over the address space it reserved) with a fresh mmap, which
// would drop advice given earlier. With cgo linked, the runtime makes those mmap calls through
// C (runtime/cgo's x_cgo_mmap calls mmap), so this file defines mmap for the executable: it
// makes the system call and, for such a heap mapping in an `apply` process, advises huge
// pages. Everything else — other commands, other mappings, the libc's own calls (glibc calls
// its internal __mmap) — is the plain system call. GODEBUG=disablethp=1 still wins: the runtime
// advises MADV_NOHUGEPAGE after this mmap returns.
//
// The runtime's own metadata — span sets, spans, itabs, profiling buckets: what it allocates
// with persistentalloc, outside the heap — comes from small anonymous mappings (256 KiB chunks
// and less) that cannot be huge pages, and each 4 KiB of them it touches is a fault: ~105 of an
// apply's ~360 (docs/performance.md, issue 20 item 3, session 9). In an apply process this file
// therefore serves those mappings from one 2 MiB region advised for huge pages, reserved by the
// constructor: a request (no address, read-write, private and anonymous, 256 KiB or less) gets
// the region's next unused page-aligned part, never handed out before and so still zero as the
// caller expects; when the region is used up, the system call as before. A part is never
// reused, so a caller's munmap or mprotect of it only splits the region.
//
// The binary's own writable data is faulted in the same way, 4 KiB at a time: ~50 copy-on-write
// faults in .data and .noptrdata and ~30 first touches of the runtime's variables at the start
// of the bss (mheap_, sched, m0, g0, semtable, memstats) per apply. The constructor prefaults
// both ranges with one MADV_POPULATE_WRITE, which maps every page of them in one system call
// for a fraction of what a fault costs each (docs/performance.md, issue 20 item 3, session 10).

#if defined(__x86_64__) || defined(__aarch64__)

#define _GNU_SOURCE
#include <malloc.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

// heapChunk is the Go runtime's smallest heap growth (a palloc chunk): smaller fixed mappings
// are the runtime's metadata, not the heap.
#define heapChunk ((size_t)4 << 20)

// hugePage is the size of a transparent huge page on x86-64 and on arm64 with 4 KiB pages.
#define hugePage ((size_t)2 << 20)

// metaMaxRequest is the largest mapping served from the metadata region: the runtime's
// persistentalloc chunk.
#define metaMaxRequest ((size_t)256 << 10)

// fuscia_huge_heap is set, before the Go runtime starts, when the command is apply.
int fuscia_huge_heap;

// meta_region is the 2 MiB-aligned metadata region of an apply process (NULL otherwise), and
// meta_used how much of it has been handed out.
static char *meta_region;
static size_t meta_used;

// The GNU toolchain's symbols for the executable's writable data: __data_start (glibc's crt1)
// is the start of .data, after the data that is read-only after relocation; _edata its end;
// __bss_start the start of the bss and _end its end (the linker's). Go's linker puts .data and
// .noptrdata between the first two, and the bss with pointers, then the one without, after the
// third; what the runtime touches at start-up is in the bss's first 256 KiB, while its end holds
// large buffers that are rarely touched (32 MiB for crypto's DRBG in Go 1.26), so only that
// start is prefaulted. They are weak: a C library or linker that does not define one leaves it
// NULL, and nothing is prefaulted.
extern char __data_start[] __attribute__((weak)), __bss_start[] __attribute__((weak)), _end[] __attribute__((weak));

#define bssPrefault ((size_t)256 << 10)

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 // Linux 5.14; an older kernel answers EINVAL and nothing changes
#endif

// prefault_data maps every page from the start of .data to the first bssPrefault bytes of the
// bss, written (private copies of the file's pages, zeroed pages of the bss), as the runtime's
// first writes would; the contents do not change.
static void prefault_data(void) {
	if (__data_start == NULL || __bss_start == NULL || _end == NULL) {
		return;
	}
	size_t lo = (size_t)__data_start & ~(size_t)4095;
	size_t hi = (size_t)__bss_start + bssPrefault;
	if (hi > (size_t)_end) {
		hi = (size_t)_end;
	}
	hi = (hi + 4095) & ~(size_t)4095;
	if (hi > lo) {
		(void)madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE); // advice: on failure the faults come as before
	}
}

// reserve_meta_region maps twice a huge page and keeps its aligned half: an aligned 2 MiB is
// what the kernel can back with one huge page. The other half stays mapped and untouched.
static void reserve_meta_region(void) {
	long r = syscall(SYS_mmap, NULL, 2 * hugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r == -1) {
		return;
	}
	char *aligned = (char *)(((size_t)r + hugePage - 1) & ~(hugePage - 1));
	(void)madvise(aligned, hugePage, MADV_HUGEPAGE); // advice: a kernel without THP ignores it
	meta_region = aligned;
}

__attribute__((constructor)) static void fuscia_apply_heap(int argc, char **argv, char **envp) {
	(void)envp;
	if (argv != NULL && argc >= 2 && argv[1] != NULL && strcmp(argv[1], "apply") == 0) {
		fuscia_huge_heap = 1;
		// The region hands out 4 KiB pages, and the prefault rounds to them: on a kernel with
		// larger pages (arm64 with 16 or 64 KiB) the region's parts would not be page-aligned,
		// so the runtime keeps the system call and the faults come as they did.
		if (sysconf(_SC_PAGESIZE) == 4096) {
			reserve_meta_region();
			prefault_data();
		}
		// Every thread the runtime starts calls malloc once (pthread_getattr_np, for its stack
		// bounds), and glibc gave each of an apply's ~7 threads an arena of its own: a 64 MiB
		// reservation made with 2-3 mmap, munmap and mprotect calls and a fault. One arena
		// serves an apply's few C allocations as well.
		(void)mallopt(M_ARENA_MAX, 1);
	}
}

// from_meta_region returns the next len bytes (rounded up to 4 KiB pages) of the metadata region, or
// NULL when they do not fit. Threads may ask at once: the claim is one atomic add.
static void *from_meta_region(size_t len) {
	size_t size = (len + 4095) & ~(size_t)4095;
	size_t at = __atomic_fetch_add(&meta_used, size, __ATOMIC_RELAXED);
	if (at + size > hugePage) {
		return NULL;
	}
	return meta_region + at;
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off) {
	if (meta_region != NULL && addr == NULL && prot == (PROT_READ | PROT_WRITE) && flags == (MAP_PRIVATE | MAP_ANONYMOUS) &&
	    len > 0 && len <= metaMaxRequest) {
		void *p = from_meta_region(len);
		if (p != NULL) {
			return p;
		}
	}
	long r = syscall(SYS_mmap, addr, len, prot, flags, fd, off);
	if (r == -1) {
		return MAP_FAILED; // errno is set
	}
	if (fuscia_huge_heap && prot == (PROT_READ | PROT_WRITE) && flags == (MAP_ANONYMOUS | MAP_FIXED | MAP_PRIVATE) &&
	    len >= heapChunk) {
		(void)madvise((void *)r, len, MADV_HUGEPAGE); // advice: a kernel without THP ignores it
	}
	return (void *)r;
}

#endif
