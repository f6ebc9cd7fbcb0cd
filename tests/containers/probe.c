/* A command a fooled policy would let run, inside a workspace container: every attempt is a
 * raw system call (no program the policy reads), and each prints one line, "NAME: refused
 * (ERRNO)" when the kernel said no, "NAME: DONE" when the effect may have happened, or a
 * description. tests/containers/fleet_test.py checks the lines and then the effects from
 * outside.
 *
 * Usage: probe TOKEN_FILE HOST:PORT... (the other workspaces and the host, to connect to) */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

static void report(const char *what, long rc, int err) {
  if (rc < 0)
    printf("%s: refused (%s)\n", what, strerror(err));
  else
    printf("%s: DONE\n", what);
  fflush(stdout);
}

/* Write outside the workspace (or into a file the sandbox keeps read-only). */
static void write_to(const char *label, const char *path, int flags) {
  long fd = syscall(SYS_openat, AT_FDCWD, path, flags, 0644);
  int err = errno;
  if (fd >= 0) {
    long n = syscall(SYS_write, fd, "pwned\n", 6);
    err = errno;
    syscall(SYS_close, fd);
    report(label, n, err);
    return;
  }
  report(label, fd, err);
}

/* execve in a child: "refused (ERRNO)" when execve failed, "refused (exit N)" when what it
 * started (ld.so) failed before the program did anything, "DONE" when the program succeeded. */
static void exec_child(const char *label, const char *path, char *const argv[]) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return;
  pid_t pid = fork();
  if (pid == 0) {
    char *envp[] = {"PATH=/usr/bin:/bin", NULL};
    syscall(SYS_execve, path, argv, envp);
    int err = errno;
    if (write(fds[1], &err, sizeof err) != sizeof err) _exit(126);
    _exit(126);
  }
  close(fds[1]);
  int err = 0;
  long got = read(fds[0], &err, sizeof err);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (got == sizeof err)
    printf("%s: refused (%s)\n", label, strerror(err));
  else if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
    printf("%s: DONE\n", label);
  else
    printf("%s: refused (exit %d)\n", label, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  fflush(stdout);
}

static void connect_to(const char *target) {
  char host[64];
  char label[128];
  const char *colon = strrchr(target, ':');
  if (!colon || (size_t)(colon - target) >= sizeof host) return;
  memcpy(host, target, colon - target);
  host[colon - target] = 0;
  snprintf(label, sizeof label, "connect %s", target);
  long fd = syscall(SYS_socket, AF_INET, SOCK_STREAM, 0);
  if (fd < 0) {
    report(label, fd, errno);
    return;
  }
  struct timeval tv = {2, 0};
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  struct sockaddr_in addr = {0};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(atoi(colon + 1));
  inet_pton(AF_INET, host, &addr.sin_addr);
  long rc = syscall(SYS_connect, fd, &addr, sizeof addr);
  report(label, rc, errno);
  syscall(SYS_close, fd);
}

/* Any process whose command line is the server's (`sneaky-mcp … --http …`). */
static void other_processes(void) {
  DIR *proc = opendir("/proc");
  int seen = 0, server = 0;
  struct dirent *entry;
  while (proc && (entry = readdir(proc))) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    char path[300], buf[4096];
    snprintf(path, sizeof path, "/proc/%s/cmdline", entry->d_name);
    long fd = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY, 0);
    if (fd < 0) continue;
    long n = syscall(SYS_read, fd, buf, sizeof buf - 1);
    syscall(SYS_close, fd);
    if (n <= 0) continue;
    for (long i = 0; i < n; i++)
      if (buf[i] == 0) buf[i] = ' ';
    buf[n] = 0;
    seen++;
    if (strstr(buf, "--http") || strstr(buf, "sneaky-mcp")) {
      printf("proc: SAW the server: pid %s: %s\n", entry->d_name, buf);
      server++;
    }
  }
  if (proc) closedir(proc);
  if (!server) printf("proc: %d processes, none of them the server\n", seen);
  fflush(stdout);
}

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  write_to("write /pwned", "/pwned", O_WRONLY | O_CREAT | O_TRUNC);
  write_to("write /ws/../pwned", "/ws/../pwned", O_WRONLY | O_CREAT | O_TRUNC);
  write_to("write ~/pwned", "/home/sneaky/pwned", O_WRONLY | O_CREAT | O_TRUNC);
  write_to("write /usr/local/bin", "/usr/local/bin/pwned", O_WRONLY | O_CREAT | O_TRUNC);
  write_to("write the configuration", "/etc/xdg/sneaky/config.toml", O_WRONLY | O_APPEND);
  write_to("append .git/config", ".git/config", O_WRONLY | O_APPEND);
  report("rename .git/config", syscall(SYS_renameat, AT_FDCWD, ".git/config", AT_FDCWD, "gitconfig-moved"), errno);

  char *rm[] = {"rm", "-f", "victim.txt", NULL};
  exec_child("exec /usr/bin/rm", "/usr/bin/rm", rm);
  char *ld[] = {"ld.so", "/usr/bin/rm", "-f", "victim.txt", NULL};
  exec_child("exec ld.so /usr/bin/rm", "/lib64/ld-linux-x86-64.so.2", ld);

  for (int i = 2; i < argc; i++) connect_to(argv[i]);
  other_processes();

  long fd = syscall(SYS_openat, AT_FDCWD, argv[1], O_RDONLY, 0);
  if (fd < 0) {
    report("read the token", fd, errno);
  } else {
    char buf[256];
    long n = syscall(SYS_read, fd, buf, sizeof buf);
    syscall(SYS_close, fd);
    if (n > 0)
      printf("read the token: DONE (%ld bytes)\n", n);
    else
      printf("read the token: empty (%ld)\n", n);
  }
  return 0;
}
