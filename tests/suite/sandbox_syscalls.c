/* The kernel-surface probe of tests/suite/sandbox_syscalls.rs: raw system calls, one line per
 * call, "NAME RESULT", where RESULT is "ok" or the errno's name.
 *
 *   probe raw NAME...     make each call for real. Only calls whose arguments do nothing even
 *                         as root (the table's `raw` column) are made; the others print
 *                         "NAME skipped".
 *   probe caught NAME...  make each call under a seccomp filter of the probe's own that hands
 *                         the call to the probe (a user notification) instead of the kernel;
 *                         the probe answers EHWPOISON, printed as "reached". A filter installed
 *                         before (the sandbox's) that refuses the call wins over the
 *                         notification (an errno outranks it), so RESULT is that filter's
 *                         errno. Either way the kernel never runs the call: this tells the
 *                         sandbox's refusal from the kernel's own (a missing capability gives
 *                         EPERM too) and is safe for any call.
 *
 * Each call is made in a child process of its own, so that a call that changes the process
 * (a namespace, a personality) leaves the next one alone.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/perf_event.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Newer than the C library's headers; the number is the same on every architecture. */
#ifndef SYS_open_tree_attr
#define SYS_open_tree_attr 467
#endif
#if defined(__x86_64__)
#define ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define ARCH AUDIT_ARCH_AARCH64
#else
#error "probe: unknown architecture"
#endif

/* What the probe answers a caught call with: no call here fails this way by itself. */
#define MARKER EHWPOISON
#define NO_SUCH "sneaky-no-such-file"
#define NS_FLAGS_CLONE 0x7E020000L

static long fork_like(long ret) {
    if (ret == 0)
        _exit(0);
    if (ret > 0)
        waitpid((pid_t)ret, NULL, 0);
    return ret;
}

static long p_unshare(long flags) { return syscall(SYS_unshare, flags); }
static long p_clone(long flags) { return fork_like(syscall(SYS_clone, flags | SIGCHLD, 0, 0, 0, 0)); }
static long p_clone3(long flags) {
    struct clone_args args;
    memset(&args, 0, sizeof args);
    args.flags = (uint64_t)flags;
    args.exit_signal = SIGCHLD;
    return fork_like(syscall(SYS_clone3, &args, sizeof args));
}
static long p_setns(long unused) {
    (void)unused;
    int fd = open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);
    return syscall(SYS_setns, fd, CLONE_NEWUSER);
}
static long p_x32(long unused) {
    (void)unused;
#if defined(__x86_64__)
    /* The x32 ABI's getpid: the same audit architecture, the number with bit 30 set. */
    return syscall(0x40000000L | SYS_getpid);
#else
    errno = ENOSYS;
    return -1;
#endif
}
static long p_personality(long persona) { return syscall(SYS_personality, persona); }

static long p_reboot(long unused) {
    (void)unused;
    /* The second magic number is wrong: even with CAP_SYS_BOOT this is EINVAL. */
    return syscall(SYS_reboot, 0xfee1deadL, 0L, 0L, NULL);
}
static long p_kexec_load(long unused) { (void)unused; return syscall(SYS_kexec_load, 0L, 0L, NULL, -1L); }
static long p_kexec_file_load(long unused) {
    (void)unused;
    return syscall(SYS_kexec_file_load, -1L, -1L, 0L, NULL, -1L);
}
static long p_init_module(long unused) { (void)unused; return syscall(SYS_init_module, NULL, 0L, ""); }
static long p_finit_module(long unused) { (void)unused; return syscall(SYS_finit_module, -1L, "", 0L); }
static long p_delete_module(long unused) {
    (void)unused;
    return syscall(SYS_delete_module, "sneaky_no_such_module", (long)O_NONBLOCK);
}
static long p_swapon(long unused) { (void)unused; return syscall(SYS_swapon, "/" NO_SUCH, 0L); }
static long p_swapoff(long unused) { (void)unused; return syscall(SYS_swapoff, "/" NO_SUCH); }
static long p_acct(long unused) { (void)unused; return syscall(SYS_acct, "/" NO_SUCH); }
static long p_quotactl(long unused) {
    (void)unused;
    char buf[64];
    /* QCMD(Q_GETFMT, USRQUOTA) */
    return syscall(SYS_quotactl, (0x800004L << 8) | 0L, "/" NO_SUCH, 0L, buf);
}
static long p_quotactl_fd(long unused) {
    (void)unused;
    char buf[64];
    return syscall(SYS_quotactl_fd, -1L, (0x800004L << 8) | 0L, 0L, buf);
}
static long p_syslog(long unused) {
    (void)unused;
    return syscall(SYS_syslog, 10L /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0L);
}
static long p_settimeofday(long unused) {
    (void)unused;
    struct timeval tv = {0, 2000000}; /* invalid microseconds */
    return syscall(SYS_settimeofday, &tv, NULL);
}
static long p_clock_settime(long unused) {
    (void)unused;
    struct timespec ts = {0, 0};
    return syscall(SYS_clock_settime, 0x7fffffffL, &ts);
}
static long p_sethostname(long unused) { (void)unused; return syscall(SYS_sethostname, NULL, -1L); }
static long p_setdomainname(long unused) { (void)unused; return syscall(SYS_setdomainname, NULL, -1L); }
static long p_vhangup(long unused) { (void)unused; return syscall(SYS_vhangup); }
static long p_lookup_dcookie(long unused) { (void)unused; return syscall(SYS_lookup_dcookie, 0L, NULL, 0L); }
static long p_nfsservctl(long unused) { (void)unused; return syscall(SYS_nfsservctl, -1L, NULL, NULL); }
#if defined(__x86_64__)
static long p_iopl(long unused) { (void)unused; return syscall(SYS_iopl, 4L); }
static long p_ioperm(long unused) { (void)unused; return syscall(SYS_ioperm, 0L, 0L, 0L); }
static long p_uselib(long unused) { (void)unused; return syscall(SYS_uselib, "/" NO_SUCH); }
#endif

static long p_perf_event_open(long unused) {
    (void)unused;
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.type = PERF_TYPE_SOFTWARE;
    attr.size = sizeof attr;
    attr.config = PERF_COUNT_SW_TASK_CLOCK;
    attr.disabled = 1;
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    return syscall(SYS_perf_event_open, &attr, 0L, -1L, -1L, 8L /* PERF_FLAG_FD_CLOEXEC */);
}
static long p_bpf(long unused) {
    (void)unused;
    /* BPF_MAP_CREATE of a one-entry array map: union bpf_attr's first four fields. */
    uint32_t attr[30];
    memset(attr, 0, sizeof attr);
    attr[0] = 2; /* BPF_MAP_TYPE_ARRAY */
    attr[1] = 4;
    attr[2] = 4;
    attr[3] = 1;
    return syscall(SYS_bpf, 0L /* BPF_MAP_CREATE */, attr, (long)sizeof attr);
}
static long p_userfaultfd(long unused) {
    (void)unused;
    return syscall(SYS_userfaultfd, (long)(O_CLOEXEC | 1 /* UFFD_USER_MODE_ONLY */));
}
static long p_fanotify_init(long unused) {
    (void)unused;
    /* FAN_CLASS_NOTIF | FAN_REPORT_FID: what an unprivileged caller may have. */
    return syscall(SYS_fanotify_init, 0x200L, (long)O_RDONLY);
}
static long p_io_uring_setup(long unused) {
    (void)unused;
    char params[120];
    memset(params, 0, sizeof params);
    return syscall(SYS_io_uring_setup, 1L, params);
}
static long p_io_uring_enter(long unused) {
    (void)unused;
    return syscall(SYS_io_uring_enter, -1L, 0L, 0L, 0L, NULL, 0L);
}
static long p_io_uring_register(long unused) {
    (void)unused;
    return syscall(SYS_io_uring_register, -1L, 0L, NULL, 0L);
}
static long p_name_to_handle_at(long unused) {
    (void)unused;
    struct { unsigned int bytes; int type; unsigned char f[128]; } handle = {128, 0, {0}};
    int mount_id;
    return syscall(SYS_name_to_handle_at, (long)AT_FDCWD, ".", &handle, &mount_id, 0L);
}
static long p_open_by_handle_at(long unused) {
    (void)unused;
    struct { unsigned int bytes; int type; unsigned char f[8]; } handle = {8, 1, {0}};
    return syscall(SYS_open_by_handle_at, (long)AT_FDCWD, &handle, (long)O_RDONLY);
}
static long p_ptrace(long unused) { (void)unused; return syscall(SYS_ptrace, 16L /* ATTACH */, 1L, 0L, 0L); }
static long p_keyctl(long unused) { (void)unused; return syscall(SYS_keyctl, 0L, -3L, 0L); }

static long p_mount(long unused) {
    (void)unused;
    return syscall(SYS_mount, "none", NO_SUCH, "tmpfs", 0L, NULL);
}
static long p_umount2(long unused) { (void)unused; return syscall(SYS_umount2, NO_SUCH, 0x80000000L); }
static long p_pivot_root(long unused) { (void)unused; return syscall(SYS_pivot_root, NO_SUCH, NO_SUCH); }
static long p_open_tree(long unused) { (void)unused; return syscall(SYS_open_tree, (long)AT_FDCWD, ".", 0L); }
static long p_open_tree_attr(long unused) {
    (void)unused;
    return syscall(SYS_open_tree_attr, (long)AT_FDCWD, ".", 0L, NULL, 0L);
}
static long p_move_mount(long unused) {
    (void)unused;
    return syscall(SYS_move_mount, -1L, NO_SUCH, -1L, NO_SUCH, 0L);
}
static long p_fsopen(long unused) { (void)unused; return syscall(SYS_fsopen, "sneaky-no-such-fs", 0L); }
static long p_fsconfig(long unused) {
    (void)unused;
    return syscall(SYS_fsconfig, -1L, 6L /* FSCONFIG_CMD_CREATE */, NULL, NULL, 0L);
}
static long p_fsmount(long unused) { (void)unused; return syscall(SYS_fsmount, -1L, 0L, 0L); }
static long p_fspick(long unused) { (void)unused; return syscall(SYS_fspick, (long)AT_FDCWD, NO_SUCH, 0L); }
static long p_mount_setattr(long unused) {
    (void)unused;
    return syscall(SYS_mount_setattr, (long)AT_FDCWD, NO_SUCH, 0L, NULL, 0L);
}

/* Reads a word of a process's memory with process_vm_readv: of a child of the probe's
 * ("child"), or of the PID namespace's first process (arg 1). */
static long p_process_vm_readv(long pid) {
    static volatile long word = 42;
    pid_t child = 0;
    if (pid == 0) {
        child = fork();
        if (child == 0) {
            pause();
            _exit(0);
        }
        pid = child;
    }
    long out = 0;
    struct iovec local = {&out, sizeof out};
    struct iovec remote = {(void *)&word, sizeof word};
    long ret = syscall(SYS_process_vm_readv, pid, &local, 1L, &remote, 1L, 0L);
    if (child > 0) {
        kill(child, SIGKILL);
        waitpid(child, NULL, 0);
    }
    return ret;
}

/* Lowers the core-size limit to 0 (the probe's own, in its child), naming RLIMIT_CORE with
 * bits above the 32 the kernel reads (`unsigned int resource`); with arg 1 through prlimit64. */
static long p_core_limit(long prlimit) {
    long resource = 0x100000000L | RLIMIT_CORE;
    struct rlimit zero = {0, 0};
    long ret = prlimit ? syscall(SYS_prlimit64, 0L, resource, &zero, NULL)
                       : syscall(SYS_setrlimit, resource, &zero);
    struct rlimit now;
    if (ret == 0 && (getrlimit(RLIMIT_CORE, &now) || now.rlim_max != 0)) {
        errno = EINVAL; /* the call said yes, but the limit did not change */
        return -1;
    }
    return ret;
}

static void *thread_body(void *arg) { return arg; }
static long p_thread(long unused) {
    (void)unused;
    pthread_t t;
    int err = pthread_create(&t, NULL, thread_body, NULL);
    if (err) {
        errno = err;
        return -1;
    }
    pthread_join(t, NULL);
    return 0;
}

struct probe {
    const char *name;
    long nr;
    long (*call)(long);
    long arg;
    int raw;
};

static const struct probe PROBES[] = {
    {"unshare-user", SYS_unshare, p_unshare, CLONE_NEWUSER, 1},
    {"unshare-mount", SYS_unshare, p_unshare, CLONE_NEWNS, 1},
    {"unshare-pid", SYS_unshare, p_unshare, CLONE_NEWPID, 1},
    {"unshare-net", SYS_unshare, p_unshare, CLONE_NEWNET, 1},
    {"unshare-ipc", SYS_unshare, p_unshare, CLONE_NEWIPC, 1},
    {"unshare-uts", SYS_unshare, p_unshare, CLONE_NEWUTS, 1},
    {"unshare-cgroup", SYS_unshare, p_unshare, CLONE_NEWCGROUP, 1},
    {"unshare-time", SYS_unshare, p_unshare, 0x80 /* CLONE_NEWTIME */, 1},
    {"unshare-files", SYS_unshare, p_unshare, CLONE_FILES, 1},
    {"clone-user", SYS_clone, p_clone, CLONE_NEWUSER, 1},
    {"clone-mount", SYS_clone, p_clone, CLONE_NEWNS, 1},
    {"clone-pid", SYS_clone, p_clone, CLONE_NEWPID, 1},
    {"clone-net", SYS_clone, p_clone, CLONE_NEWNET, 1},
    {"clone-ipc", SYS_clone, p_clone, CLONE_NEWIPC, 1},
    {"clone-uts", SYS_clone, p_clone, CLONE_NEWUTS, 1},
    {"clone-cgroup", SYS_clone, p_clone, CLONE_NEWCGROUP, 1},
    {"fork", SYS_clone, p_clone, 0, 1},
    {"clone3", SYS_clone3, p_clone3, 0, 1},
    {"clone3-user", SYS_clone3, p_clone3, CLONE_NEWUSER, 1},
    {"setns", SYS_setns, p_setns, 0, 1},
    {"thread", -1, p_thread, 0, 1},
    {"x32", 0x40000000L | SYS_getpid, p_x32, 0, 1},
    {"personality-query", SYS_personality, p_personality, 0xffffffffL, 1},
    {"personality-linux32", SYS_personality, p_personality, PER_LINUX32, 1},
    {"personality-no-aslr", SYS_personality, p_personality, ADDR_NO_RANDOMIZE, 1},
    {"personality-read-implies-exec", SYS_personality, p_personality, READ_IMPLIES_EXEC, 1},
    {"reboot", SYS_reboot, p_reboot, 0, 0},
    {"kexec_load", SYS_kexec_load, p_kexec_load, 0, 0},
    {"kexec_file_load", SYS_kexec_file_load, p_kexec_file_load, 0, 0},
    {"init_module", SYS_init_module, p_init_module, 0, 0},
    {"finit_module", SYS_finit_module, p_finit_module, 0, 0},
    {"delete_module", SYS_delete_module, p_delete_module, 0, 0},
    {"swapon", SYS_swapon, p_swapon, 0, 0},
    {"swapoff", SYS_swapoff, p_swapoff, 0, 0},
    {"acct", SYS_acct, p_acct, 0, 0},
    {"quotactl", SYS_quotactl, p_quotactl, 0, 0},
    {"quotactl_fd", SYS_quotactl_fd, p_quotactl_fd, 0, 0},
    {"syslog", SYS_syslog, p_syslog, 0, 1},
    {"settimeofday", SYS_settimeofday, p_settimeofday, 0, 0},
    {"clock_settime", SYS_clock_settime, p_clock_settime, 0, 0},
    {"sethostname", SYS_sethostname, p_sethostname, 0, 0},
    {"setdomainname", SYS_setdomainname, p_setdomainname, 0, 0},
    {"vhangup", SYS_vhangup, p_vhangup, 0, 0},
    {"lookup_dcookie", SYS_lookup_dcookie, p_lookup_dcookie, 0, 0},
    {"nfsservctl", SYS_nfsservctl, p_nfsservctl, 0, 0},
#if defined(__x86_64__)
    {"iopl", SYS_iopl, p_iopl, 0, 0},
    {"ioperm", SYS_ioperm, p_ioperm, 0, 0},
    {"uselib", SYS_uselib, p_uselib, 0, 0},
#endif
    {"perf_event_open", SYS_perf_event_open, p_perf_event_open, 0, 1},
    {"bpf", SYS_bpf, p_bpf, 0, 1},
    {"userfaultfd", SYS_userfaultfd, p_userfaultfd, 0, 1},
    {"fanotify_init", SYS_fanotify_init, p_fanotify_init, 0, 1},
    {"io_uring_setup", SYS_io_uring_setup, p_io_uring_setup, 0, 1},
    {"io_uring_enter", SYS_io_uring_enter, p_io_uring_enter, 0, 1},
    {"io_uring_register", SYS_io_uring_register, p_io_uring_register, 0, 1},
    {"name_to_handle_at", SYS_name_to_handle_at, p_name_to_handle_at, 0, 1},
    {"open_by_handle_at", SYS_open_by_handle_at, p_open_by_handle_at, 0, 1},
    {"ptrace", SYS_ptrace, p_ptrace, 0, 0},
    {"keyctl", SYS_keyctl, p_keyctl, 0, 0},
    {"mount", SYS_mount, p_mount, 0, 1},
    {"umount2", SYS_umount2, p_umount2, 0, 1},
    {"pivot_root", SYS_pivot_root, p_pivot_root, 0, 0},
    {"open_tree", SYS_open_tree, p_open_tree, 0, 1},
    {"open_tree_attr", SYS_open_tree_attr, p_open_tree_attr, 0, 1},
    {"move_mount", SYS_move_mount, p_move_mount, 0, 0},
    {"fsopen", SYS_fsopen, p_fsopen, 0, 0},
    {"fsconfig", SYS_fsconfig, p_fsconfig, 0, 0},
    {"fsmount", SYS_fsmount, p_fsmount, 0, 0},
    {"fspick", SYS_fspick, p_fspick, 0, 0},
    {"mount_setattr", SYS_mount_setattr, p_mount_setattr, 0, 0},
    {"setrlimit-core", SYS_setrlimit, p_core_limit, 0, 1},
    {"prlimit64-core", SYS_prlimit64, p_core_limit, 1, 1},
    {"process_vm_readv-child", SYS_process_vm_readv, p_process_vm_readv, 0, 1},
    {"process_vm_readv-init", SYS_process_vm_readv, p_process_vm_readv, 1, 1},
};

static int notify_fd = -1;
static int ready[2], done[2];

/* Answers every call the probe's own filter hands over with MARKER, until told to stop. */
static void *listener(void *arg) {
    (void)arg;
    if (read(ready[0], &notify_fd, sizeof notify_fd) != sizeof notify_fd)
        return NULL;
    for (;;) {
        struct pollfd fds[2] = {{notify_fd, POLLIN, 0}, {done[0], POLLIN, 0}};
        if (poll(fds, 2, -1) < 0 || (fds[1].revents & POLLIN))
            return NULL;
        struct seccomp_notif req;
        memset(&req, 0, sizeof req);
        if (ioctl(notify_fd, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
            continue;
        struct seccomp_notif_resp resp;
        memset(&resp, 0, sizeof resp);
        resp.id = req.id;
        resp.error = -MARKER;
        ioctl(notify_fd, SECCOMP_IOCTL_NOTIF_SEND, &resp);
    }
}

/* A filter that hands `nr` to the listener and lets everything else through. */
static int catch_calls(long nr) {
    struct sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)nr, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {sizeof code / sizeof code[0], code};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        return -1;
    return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER,
                        &prog);
}

static void print_result(const char *name, long ret, int err) {
    if (ret >= 0)
        printf("%s ok\n", name);
    else if (err == MARKER)
        printf("%s reached\n", name);
    else
        printf("%s %s\n", name, strerrorname_np(err) ? strerrorname_np(err) : "unknown");
}

static void run(const struct probe *p, int caught) {
    if (!caught && !p->raw) {
        printf("%s skipped\n", p->name);
        return;
    }
    if (caught && p->nr < 0) {
        printf("%s n/a\n", p->name);
        return;
    }
    pthread_t t;
    if (caught) {
        if (pipe(ready) || pipe(done) || pthread_create(&t, NULL, listener, NULL)) {
            printf("%s setup-failed %s\n", p->name, strerrorname_np(errno));
            return;
        }
        int fd = catch_calls(p->nr);
        if (fd < 0) {
            printf("%s setup-failed %s\n", p->name, strerrorname_np(errno));
            return;
        }
        if (write(ready[1], &fd, sizeof fd) != sizeof fd)
            return;
    }
    errno = 0;
    long ret = p->call(p->arg);
    int err = errno;
    if (caught) {
        char c = 1;
        if (write(done[1], &c, 1) != 1)
            return;
        pthread_join(t, NULL);
    }
    print_result(p->name, ret, err);
}

int main(int argc, char **argv) {
    if (argc < 2 || (strcmp(argv[1], "raw") && strcmp(argv[1], "caught"))) {
        fprintf(stderr, "usage: probe raw|caught NAME...\n");
        return 2;
    }
    int caught = !strcmp(argv[1], "caught");
    setvbuf(stdout, NULL, _IONBF, 0);
    for (int i = 2; i < argc; i++) {
        const struct probe *p = NULL;
        for (size_t k = 0; k < sizeof PROBES / sizeof PROBES[0]; k++)
            if (!strcmp(PROBES[k].name, argv[i]))
                p = &PROBES[k];
        if (!p) {
            printf("%s unknown\n", argv[i]);
            continue;
        }
        pid_t child = fork();
        if (child == 0) {
            run(p, caught);
            _exit(0);
        }
        int status = 0;
        waitpid(child, &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            printf("%s died %d\n", p->name, status);
    }
    return 0;
}
