/* The exit shim: interposes the calls that end or replace a process without exit() and runs the
 * collector's hook first (ExitShim.h says what and why). Plain C on libc alone. */
#define _GNU_SOURCE
#include "ExitShim.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define SHIM_EXPORT __attribute__((visibility("default")))

typedef void (*exit_fn)(int);
typedef long (*syscall_fn)(long, ...);
typedef int (*execve_fn)(const char*, char* const[], char* const[]);
typedef int (*execv_fn)(const char*, char* const[]);
typedef int (*fexecve_fn)(int, char* const[], char* const[]);
typedef int (*execveat_fn)(int, const char*, char* const[], char* const[], int);

/* The next definitions (libc's, or another preloaded library's), looked up once at load time so
 * that an exit path (possibly a vfork child or a signal handler) never has to call dlsym. */
static _Atomic(exit_fn) real_exit, real_Exit;
static _Atomic(syscall_fn) real_syscall;
static _Atomic(execve_fn) real_execve, real_execvpe;
static _Atomic(execv_fn) real_execv, real_execvp;
static _Atomic(fexecve_fn) real_fexecve;
static _Atomic(execveat_fn) real_execveat;

static void* next_symbol(const char* name) { return dlsym(RTLD_NEXT, name); }

#define SHIM_REAL(var, type, name)       \
  (atomic_load(&var) ? atomic_load(&var) \
                     : (atomic_store(&var, (type)next_symbol(name)), atomic_load(&var)))

__attribute__((constructor)) static void resolve_all(void) {
  atomic_store(&real_exit, (exit_fn)next_symbol("_exit"));
  atomic_store(&real_Exit, (exit_fn)next_symbol("_Exit"));
  atomic_store(&real_syscall, (syscall_fn)next_symbol("syscall"));
  atomic_store(&real_execve, (execve_fn)next_symbol("execve"));
  atomic_store(&real_execvpe, (execve_fn)next_symbol("execvpe"));
  atomic_store(&real_execv, (execv_fn)next_symbol("execv"));
  atomic_store(&real_execvp, (execv_fn)next_symbol("execvp"));
  atomic_store(&real_fexecve, (fexecve_fn)next_symbol("fexecve"));
  atomic_store(&real_execveat, (execveat_fn)next_symbol("execveat"));
}

/* The registration and the once-only state. */
static _Atomic(fuselens_exit_hook) g_hook;
static atomic_int g_owner;  /* the pid that registered */
static atomic_int g_state;  /* 0: hook not run, 1: running, 2: done */
static atomic_int g_runner; /* the thread (tid) running it */

SHIM_EXPORT int fuselens_exit_shim_register(fuselens_exit_hook hook) {
  atomic_store(&g_hook, (fuselens_exit_hook)NULL);
  atomic_store(&g_state, 0);
  atomic_store(&g_runner, 0);
  atomic_store(&g_owner, (int)getpid());
  atomic_store(&g_hook, hook);
  return FUSELENS_EXIT_SHIM_VERSION;
}

/* The hook when one is registered by this very process, else NULL. Reads nothing but the two
 * atomics and getpid(), so that a vfork child (sharing the parent's memory) changes nothing. */
static fuselens_exit_hook armed_hook(void) {
  const fuselens_exit_hook hook = atomic_load(&g_hook);
  if (hook == NULL || (int)getpid() != atomic_load(&g_owner)) return NULL;
  return hook;
}

/* Waits until the hook running on another thread is done, at most kFuselensExitShimWaitSeconds.
 * Async-signal-safe. */
static void wait_for_hook(void) {
  struct timespec start, now;
  const struct timespec tick = {0, 1000000}; /* 1 ms */
  clock_gettime(CLOCK_MONOTONIC, &start);
  while (atomic_load(&g_state) != 2) {
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (now.tv_sec - start.tv_sec >= kFuselensExitShimWaitSeconds) return;
    nanosleep(&tick, NULL);
  }
}

/* Runs the hook for `kind` if it was not run yet; returns 1 when this call ran it. */
static int run_hook(fuselens_exit_hook hook, int kind) {
  const int self = (int)gettid();
  int expected = 0;
  if (atomic_compare_exchange_strong(&g_state, &expected, 1)) {
    atomic_store(&g_runner, self);
    const int saved_errno = errno;
    hook(kind);
    errno = saved_errno;
    atomic_store(&g_state, 2);
    return 1;
  }
  /* Another thread runs it: wait, so the process does not end in the middle of its flush. The
   * thread running it (an exit path taken inside the hook) goes on at once. */
  if (expected == 1 && atomic_load(&g_runner) != self) wait_for_hook();
  return 0;
}

static void before_exit(int kind) {
  const fuselens_exit_hook hook = armed_hook();
  if (hook != NULL) run_hook(hook, kind);
}

/* Before an exec whose file resolves (`resolves` is evaluated only when a hook is armed): runs
 * the hook; returns it when this call ran it, for after_exec. */
static fuselens_exit_hook before_exec(int (*resolves)(const void*), const void* what) {
  const fuselens_exit_hook hook = armed_hook();
  if (hook == NULL || !resolves(what)) return NULL;
  return run_hook(hook, FUSELENS_EXIT_SHIM_EXEC) ? hook : NULL;
}

/* After an exec returned (it failed), when before_exec ran the hook: tells it, errno kept. */
static void after_exec(fuselens_exit_hook ran) {
  if (ran == NULL) return;
  const int saved_errno = errno;
  ran(FUSELENS_EXIT_SHIM_EXEC_FAILED);
  errno = saved_errno;
}

/* --- which execs can succeed: a file that does not resolve fails with the same error anyway. */

static int path_resolves(const void* what) {
  const char* path = (const char*)what;
  struct stat st;
  return path != NULL && stat(path, &st) == 0;
}

/* execvp's search (glibc posix/execvpe.c): a name with a slash is a path; else every entry of
 * PATH (unset: "/bin:/usr/bin"; an empty entry is the current folder) joined with it. */
static int search_resolves(const void* what) {
  const char* file = (const char*)what;
  if (file == NULL || *file == '\0') return 0;
  if (strchr(file, '/') != NULL) return path_resolves(file);
  const char* path = getenv("PATH");
  if (path == NULL) path = "/bin:/usr/bin";
  const size_t file_len = strlen(file);
  char candidate[PATH_MAX];
  for (const char* p = path;; ++p) {
    const char* end = strchr(p, ':');
    const size_t dir_len = end ? (size_t)(end - p) : strlen(p);
    if (dir_len + 1 + file_len < sizeof candidate) {
      size_t n = 0;
      if (dir_len > 0) {
        memcpy(candidate, p, dir_len);
        n = dir_len;
        candidate[n++] = '/';
      }
      memcpy(candidate + n, file, file_len + 1);
      if (path_resolves(candidate)) return 1;
    }
    if (end == NULL) return 0;
    p = end;
  }
}

static int fd_resolves(const void* what) { return fcntl(*(const int*)what, F_GETFD) != -1; }

struct at_path {
  int dirfd;
  const char* path;
  int flags;
};

static int at_resolves(const void* what) {
  const struct at_path* at = (const struct at_path*)what;
  struct stat st;
  return at->path != NULL &&
         fstatat(at->dirfd, at->path, &st, at->flags & (AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW)) == 0;
}

/* --- the interposed calls */

static int no_next(void) {
  errno = ENOSYS;
  return -1;
}

static _Noreturn void exit_now(exit_fn real, int status) {
  if (real != NULL) real(status);
  const syscall_fn sc = SHIM_REAL(real_syscall, syscall_fn, "syscall");
  if (sc != NULL) sc(SYS_exit_group, (long)status);
  abort(); /* not reached: libc has no _exit */
}

SHIM_EXPORT _Noreturn void _exit(int status) {
  before_exit(FUSELENS_EXIT_SHIM_EXIT);
  exit_now(SHIM_REAL(real_exit, exit_fn, "_exit"), status);
}

SHIM_EXPORT _Noreturn void _Exit(int status) {
  before_exit(FUSELENS_EXIT_SHIM_EXIT);
  exit_now(SHIM_REAL(real_Exit, exit_fn, "_Exit"), status);
}

/* Every number but exit_group goes straight on, with six arguments read as glibc's own syscall
 * reads them (the kernel takes at most six; the unused ones are ignored). */
SHIM_EXPORT long syscall(long number, ...) {
  va_list ap;
  va_start(ap, number);
  const long a1 = va_arg(ap, long), a2 = va_arg(ap, long), a3 = va_arg(ap, long);
  const long a4 = va_arg(ap, long), a5 = va_arg(ap, long), a6 = va_arg(ap, long);
  va_end(ap);
  if (number == SYS_exit_group) before_exit(FUSELENS_EXIT_SHIM_EXIT_GROUP);
  const syscall_fn real = SHIM_REAL(real_syscall, syscall_fn, "syscall");
  if (real == NULL) return no_next();
  return real(number, a1, a2, a3, a4, a5, a6);
}

/* The bodies of execve, execv and execvp, shared with the execl* forms that build their argv. */
static int shim_execve(const char* path, char* const argv[], char* const envp[]) {
  const fuselens_exit_hook ran = before_exec(&path_resolves, path);
  const execve_fn real = SHIM_REAL(real_execve, execve_fn, "execve");
  const int rc = real != NULL ? real(path, argv, envp) : no_next();
  after_exec(ran);
  return rc;
}

static int shim_execv(const char* path, char* const argv[]) {
  const fuselens_exit_hook ran = before_exec(&path_resolves, path);
  const execv_fn real = SHIM_REAL(real_execv, execv_fn, "execv");
  const int rc = real != NULL ? real(path, argv) : no_next();
  after_exec(ran);
  return rc;
}

static int shim_execvp(const char* file, char* const argv[]) {
  const fuselens_exit_hook ran = before_exec(&search_resolves, file);
  const execv_fn real = SHIM_REAL(real_execvp, execv_fn, "execvp");
  const int rc = real != NULL ? real(file, argv) : no_next();
  after_exec(ran);
  return rc;
}

SHIM_EXPORT int execve(const char* path, char* const argv[], char* const envp[]) {
  return shim_execve(path, argv, envp);
}

SHIM_EXPORT int execv(const char* path, char* const argv[]) { return shim_execv(path, argv); }

SHIM_EXPORT int execvp(const char* file, char* const argv[]) { return shim_execvp(file, argv); }

SHIM_EXPORT int execvpe(const char* file, char* const argv[], char* const envp[]) {
  const fuselens_exit_hook ran = before_exec(&search_resolves, file);
  const execve_fn real = SHIM_REAL(real_execvpe, execve_fn, "execvpe");
  const int rc = real != NULL ? real(file, argv, envp) : no_next();
  after_exec(ran);
  return rc;
}

SHIM_EXPORT int fexecve(int fd, char* const argv[], char* const envp[]) {
  const fuselens_exit_hook ran = before_exec(&fd_resolves, &fd);
  const fexecve_fn real = SHIM_REAL(real_fexecve, fexecve_fn, "fexecve");
  const int rc = real != NULL ? real(fd, argv, envp) : no_next();
  after_exec(ran);
  return rc;
}

SHIM_EXPORT int execveat(int dirfd, const char* path, char* const argv[], char* const envp[],
                         int flags) {
  const struct at_path at = {dirfd, path, flags};
  const fuselens_exit_hook ran = before_exec(&at_resolves, &at);
  const execveat_fn real = SHIM_REAL(real_execveat, execveat_fn, "execveat");
  const int rc = real != NULL ? real(dirfd, path, argv, envp, flags) : no_next();
  after_exec(ran);
  return rc;
}

/* The list forms, as glibc builds their argument vector (posix/execl.c): count up to the NULL,
 * then copy onto the stack (no malloc: they may run in a vfork child or a signal handler). */
#define SHIM_COUNT_ARGS(first, argc)                     \
  do {                                                   \
    va_list count;                                       \
    va_start(count, first);                              \
    for (argc = 1; va_arg(count, const char*); ++argc) { \
      if (argc == INT_MAX) {                             \
        va_end(count);                                   \
        errno = E2BIG;                                   \
        return -1;                                       \
      }                                                  \
    }                                                    \
    va_end(count);                                       \
  } while (0)

/* argv[0] = first, then the next argc - 1 arguments of *ap and the NULL that ends them. */
static void shim_fill_args(char** argv, const char* first, ptrdiff_t argc, va_list* ap) {
  argv[0] = (char*)first;
  for (ptrdiff_t i = 1; i <= argc; ++i) argv[i] = va_arg(*ap, char*);
}

SHIM_EXPORT int execl(const char* path, const char* arg, ...) {
  ptrdiff_t argc;
  SHIM_COUNT_ARGS(arg, argc);
  char* argv[argc + 1];
  va_list ap;
  va_start(ap, arg);
  shim_fill_args(argv, arg, argc, &ap);
  va_end(ap);
  return shim_execv(path, argv);
}

SHIM_EXPORT int execlp(const char* file, const char* arg, ...) {
  ptrdiff_t argc;
  SHIM_COUNT_ARGS(arg, argc);
  char* argv[argc + 1];
  va_list ap;
  va_start(ap, arg);
  shim_fill_args(argv, arg, argc, &ap);
  va_end(ap);
  return shim_execvp(file, argv);
}

SHIM_EXPORT int execle(const char* path, const char* arg, ...) {
  ptrdiff_t argc;
  SHIM_COUNT_ARGS(arg, argc);
  char* argv[argc + 1];
  va_list ap;
  va_start(ap, arg);
  shim_fill_args(argv, arg, argc, &ap);
  char** envp = va_arg(ap, char**); /* after the NULL that ends the arguments */
  va_end(ap);
  return shim_execve(path, argv, envp);
}
