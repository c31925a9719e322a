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

#if defined(__x86_64__) || defined(__aarch64__)

#define _GNU_SOURCE
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

// heapChunk is the Go runtime's smallest heap growth (a palloc chunk): smaller fixed mappings
// are the runtime's metadata, not the heap.
#define heapChunk ((size_t)4 << 20)

// fuscia_huge_heap is set, before the Go runtime starts, when the command is apply.
int fuscia_huge_heap;

__attribute__((constructor)) static void fuscia_apply_heap(int argc, char **argv, char **envp) {
	(void)envp;
	if (argv != NULL && argc >= 2 && argv[1] != NULL && strcmp(argv[1], "apply") == 0) {
		fuscia_huge_heap = 1;
	}
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off) {
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
