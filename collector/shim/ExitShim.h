#ifndef FUSELENS_COLLECTOR_EXIT_SHIM_H
#define FUSELENS_COLLECTOR_EXIT_SHIM_H
/* The exit shim (libfuselens_exit_shim.so): a tiny library that prof-run puts first on LD_PRELOAD
 * so that a process ending in a way that runs no atexit handler and delivers no signal still has
 * its capture flushed (issue 22: a Python worker ending in os._exit kept 1 of 1,201 kernels).
 *
 * It interposes the calls that end or replace the process image without exit():
 *   _exit, _Exit                        (FUSELENS_EXIT_SHIM_EXIT)
 *   syscall(SYS_exit_group, ...)        (FUSELENS_EXIT_SHIM_EXIT_GROUP; every other number, and
 *                                        its six arguments, goes to libc's syscall untouched)
 *   execve, execv, execvp, execvpe, execl, execlp, execle, fexecve, execveat
 *                                       (FUSELENS_EXIT_SHIM_EXEC)
 * and, before forwarding each to the next definition (dlsym RTLD_NEXT: libc, or another preloaded
 * library), calls the hook that the collector registered. Nothing else changes: arguments, return
 * values, errno of a failed exec and exit statuses are the program's.
 *
 * Rules (ExitShim.c):
 * - No hook registered (a process without CUDA, or the collector not loaded): forwards at once.
 * - In another process than the one that registered (a fork or vfork child, which shares or
 *   copied the registration) the shim forwards at once and touches no state: a vfork child
 *   shares the parent's memory.
 * - The hook runs at most once per process, for the first exit path taken. A second thread that
 *   takes an exit path meanwhile waits for it (at most kFuselensExitShimWaitSeconds) before it
 *   forwards, so the process never ends in the middle of the flush; the thread running the hook
 *   that takes an exit path again forwards at once (no recursion).
 * - An exec that cannot succeed because its file does not resolve (stat() fails on the path, or
 *   on every candidate of execvp's PATH search; fexecve on a closed descriptor) is forwarded
 *   without the hook, so a program that tries several paths (Python's os.execvp) keeps its
 *   collector until the exec that works. An exec that calls the hook and then fails anyway
 *   (a file that is not executable, E2BIG, ...) is reported with FUSELENS_EXIT_SHIM_EXEC_FAILED,
 *   with errno set to the exec's error, which the shim then returns unchanged.
 * - errno is preserved across the hook.
 *
 * The shim depends on libc only (no libstdc++: it is loaded into every process prof-run starts,
 * CUDA or not) and is never built with sanitizers (a sanitized library cannot be preloaded ahead
 * of the sanitizer's runtime). */

#ifdef __cplusplus
extern "C" {
#endif

/* What the hook is told. */
enum {
  FUSELENS_EXIT_SHIM_EXIT = 1,       /* _exit or _Exit: the process ends now */
  FUSELENS_EXIT_SHIM_EXIT_GROUP = 2, /* syscall(SYS_exit_group): the process ends now */
  FUSELENS_EXIT_SHIM_EXEC = 3,       /* an exec family call is about to replace the image */
  FUSELENS_EXIT_SHIM_EXEC_FAILED = 4 /* that exec returned; errno holds its error */
};

/* The shim's interface version, returned by fuselens_exit_shim_register. */
enum { FUSELENS_EXIT_SHIM_VERSION = 1 };

/* The longest a second thread taking an exit path waits for the hook running on another. */
enum { kFuselensExitShimWaitSeconds = 60 };

/* Called with one of the kinds above, on the thread taking the exit path, which may be inside a
 * signal handler: it must be async-signal-safe or hand the work to another thread, and return in
 * bounded time. */
typedef void (*fuselens_exit_hook)(int kind);

/* Registers `hook` (NULL: none) for the calling process (getpid()), replacing any earlier one, and
 * re-arms the once-only flag. Returns FUSELENS_EXIT_SHIM_VERSION. The collector looks this symbol
 * up with dlsym(RTLD_DEFAULT, "fuselens_exit_shim_register"): absent, the shim is not loaded. */
int fuselens_exit_shim_register(fuselens_exit_hook hook);

#ifdef __cplusplus
}
#endif

#endif /* FUSELENS_COLLECTOR_EXIT_SHIM_H */
