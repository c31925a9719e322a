// fsc_spawn starts a command as described in spawn_linux_amd64.c. strs holds NUL-terminated
// strings: argv[i] at argv_off[i] (argv[0] is also the path executed), the environment at
// env_off, the working directory at dir_off (< 0: none). fds are the child's stdin, stdout and
// stderr, each >= 3. It returns the pid, or -1 with *err set when no process was made; a pid
// with *err != 0 is a child that failed before its program ran (exited with 127, not reaped).
int fsc_spawn(const char *strs, const int *argv_off, int argc, const int *env_off, int envc, int dir_off,
	      const int *fds, int *pidfd, int *err);
