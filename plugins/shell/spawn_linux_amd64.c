//go:build cgo

// A spawn that skips what Go's runtime does in every child it forks.
//
// Between its vfork and the exec, a child started by os/exec or syscall.ForkExec resets every
// signal handler the Go runtime installed, one rt_sigaction each: 55 system calls in every
// command the shell plugin runs, ~25% of the plugin's CPU per /bin/true together with the exec
// (docs/performance.md, issue 20 item 2). The reset is needed because a vfork child shares the
// parent's memory: a signal reaching it before its exec must not run the parent's handler.
// Linux 5.5 added CLONE_CLEAR_SIGHAND to clone3, which gives the child default dispositions in
// the clone itself (ignored signals stay ignored, as across an exec).
//
// fsc_spawn does the same job as Go's forkExec for the plugin's one use: a new process group,
// SIGKILL when the forking thread dies, an optional working directory, three standard streams,
// a pidfd, execve. The child runs this file's code on a stack of its own inside the parent's
// memory while the parent's thread waits (CLONE_VM | CLONE_VFORK, as glibc's posix_spawn does),
// with every signal blocked from before the clone until it restores the mask the process
// started with, just before execve. It makes raw system calls only: no libc function, no errno,
// no lock. A failure before or in execve is written into the parent's memory and the child
// exits with 127; the caller reaps it.

#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <linux/sched.h>

#include "spawn_linux_amd64.h"

#ifndef CLONE_CLEAR_SIGHAND
#define CLONE_CLEAR_SIGHAND 0x100000000ULL
#endif
// The fields used here are clone3's first version (flags to tls): every kernel with clone3 takes
// that size, whatever the headers this is built with know.
#ifndef CLONE_ARGS_SIZE_VER0
#define CLONE_ARGS_SIZE_VER0 64
#endif
#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif

// The signal mask the process started with, which Go's forkExec also gives every child (the
// runtime's initial mask). Written once by the constructor, before any Go code runs; only read
// after that.
static uint64_t initial_mask;

static long sys3(long n, long a, long b, long c) {
	long ret;
	__asm__ volatile("syscall" : "=a"(ret) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
	return ret;
}

static long sys4(long n, long a, long b, long c, long d) {
	long ret;
	register long r10 __asm__("r10") = d;
	__asm__ volatile("syscall" : "=a"(ret) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10) : "rcx", "r11", "memory");
	return ret;
}

__attribute__((constructor)) static void fsc_record_initial_mask(void) {
	// With no new set, rt_sigprocmask only reads the mask.
	sys4(SYS_rt_sigprocmask, SIG_BLOCK, 0, (long)&initial_mask, 8);
}

struct child_args {
	const char *path;
	char *const *argv;
	char *const *envp;
	const char *dir; // NULL: the plugin's own
	int fds[3];      // each >= 3 (the Go side sees to it), so no dup2 below clobbers another
	long ppid;
	int err; // written by the child: the errno that stopped it
};

// child runs in the new process, on its own stack, in the parent's memory.
static int child(void *p) {
	struct child_args *a = p;
	long r;
	if ((r = sys3(SYS_setpgid, 0, 0, 0)) < 0)
		goto fail;
	if ((r = sys3(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0)) < 0)
		goto fail;
	// The forking thread may have died between the clone and the prctl: then no signal
	// would ever come, so the child kills itself as Go's forkExec does.
	if (sys3(SYS_getppid, 0, 0, 0) != a->ppid)
		sys3(SYS_kill, sys3(SYS_getpid, 0, 0, 0), SIGKILL, 0);
	if (a->dir && (r = sys3(SYS_chdir, (long)a->dir, 0, 0)) < 0)
		goto fail;
	for (int i = 0; i < 3; i++) // dup2 clears close-on-exec on the new descriptor
		if ((r = sys3(SYS_dup2, a->fds[i], i, 0)) < 0)
			goto fail;
	if ((r = sys4(SYS_rt_sigprocmask, SIG_SETMASK, (long)&initial_mask, 0, 8)) < 0)
		goto fail;
	r = sys3(SYS_execve, (long)a->path, (long)a->argv, (long)a->envp);
fail:
	a->err = (int)-r;
	sys3(SYS_exit_group, 127, 0, 0);
	return 0;
}

// clone3_call makes the clone3 system call; in the child it calls fn(arg) on the new stack and
// exits with its result, never returning here.
static long clone3_call(struct clone_args *cl, int (*fn)(void *), void *arg) {
	long ret;
	register long r12 __asm__("r12") = (long)fn;  // callee-saved: the child still has them
	register long r13 __asm__("r13") = (long)arg;
	__asm__ volatile(
		"syscall\n\t"
		"test %%rax, %%rax\n\t"
		"jnz 1f\n\t"
		// The child: the kernel has put the stack pointer at the top of cl->stack.
		"xor %%ebp, %%ebp\n\t"
		"and $-16, %%rsp\n\t"
		"mov %%r13, %%rdi\n\t"
		"call *%%r12\n\t"
		"mov %%rax, %%rdi\n\t"
		"mov %[exit], %%eax\n\t"
		"syscall\n\t"
		"hlt\n"
		"1:\n\t"
		: "=a"(ret)
		: "a"(SYS_clone3), "D"(cl), "S"(CLONE_ARGS_SIZE_VER0), "r"(r12), "r"(r13), [exit] "i"(SYS_exit_group)
		: "rcx", "r11", "memory");
	return ret;
}

// The child's stack: its code above makes system calls and nothing else.
#define CHILD_STACK 16384

int fsc_spawn(const char *strs, const int *argv_off, int argc, const int *env_off, int envc, int dir_off,
	      const int *fds, int *pidfd, int *err) {
	*pidfd = -1;
	*err = 0;
	// argv and envp point into strs (Go memory, pinned for this call).
	char **ptrs = malloc(sizeof(char *) * ((size_t)argc + (size_t)envc + 2));
	if (!ptrs) {
		*err = 12; // ENOMEM
		return -1;
	}
	for (int i = 0; i < argc; i++)
		ptrs[i] = (char *)strs + argv_off[i];
	ptrs[argc] = 0;
	for (int i = 0; i < envc; i++)
		ptrs[argc + 1 + i] = (char *)strs + env_off[i];
	ptrs[argc + 1 + envc] = 0;

	char stack[CHILD_STACK] __attribute__((aligned(16)));
	struct child_args a = {
		.path = strs + argv_off[0],
		.argv = ptrs,
		.envp = ptrs + argc + 1,
		.dir = dir_off < 0 ? 0 : strs + dir_off,
		.fds = {fds[0], fds[1], fds[2]},
		.ppid = sys3(SYS_getpid, 0, 0, 0),
		.err = 0,
	};
	int fd = -1;
	struct clone_args cl;
	memset(&cl, 0, sizeof cl);
	cl.flags = CLONE_VM | CLONE_VFORK | CLONE_CLEAR_SIGHAND | CLONE_PIDFD;
	cl.pidfd = (uint64_t)(uintptr_t)&fd;
	cl.exit_signal = SIGCHLD;
	cl.stack = (uint64_t)(uintptr_t)stack;
	cl.stack_size = sizeof stack;

	uint64_t all = ~(uint64_t)0, old;
	sys4(SYS_rt_sigprocmask, SIG_SETMASK, (long)&all, (long)&old, 8);
	long pid = clone3_call(&cl, child, &a);
	sys4(SYS_rt_sigprocmask, SIG_SETMASK, (long)&old, 0, 8);
	free(ptrs);
	if (pid < 0) {
		*err = (int)-pid;
		return -1;
	}
	// CLONE_VFORK: the child has called execve successfully, or exited, by now.
	*pidfd = fd;
	*err = a.err;
	return (int)pid;
}
