/* The escape probes of tests/sandbox/test_escapes.py: run inside the sandbox, each tries
 * one thing and prints ALLOWED (and exits 0) when the kernel let it through, or REFUSED
 * with the error when it said no. Compiled by the tests at run time (gcc).
 *
 *   escape socket64            socket() with AF_UNIX in the low 32 bits of a 64-bit family
 *   escape dgram PATH          a datagram to the host's socket PATH from a socketpair()
 *   escape vsock               socket(AF_VSOCK), a virtual machine's way to its host
 *   escape clone64             clone() with CLONE_NEWUSER and a bit above 32 set
 *   escape io_uring            io_uring_setup()
 *   escape keyring             the id of the user's key ring (keyctl)
 *   escape setuid FILE         chmod(FILE, 04755)
 *   escape reach [PID...]      ptrace, process_vm_writev, /proc/PID/mem, /proc/PID/environ
 *                              and pidfd_getfd on each PID (default: every visible process
 *                              without a seccomp filter); prints "TARGETS n" first
 *   escape caps                the capability sets and no_new_privs, from /proc/self/status
 *   escape umount PATH         umount2(PATH, MNT_DETACH)
 *   escape remount-rw PATH     remount PATH read-write
 *   escape write PATH          open(PATH, O_WRONLY) and write one line
 *   escape truncate PATH       truncate(PATH, 0)
 *   escape rename FROM TO      rename(FROM, TO)
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif
#ifndef SYS_io_uring_setup
#define SYS_io_uring_setup 425
#endif
#define HIGH (1UL << 32)

static int verdict(long result, const char *what) {
    if (result >= 0) {
        printf("ALLOWED %s\n", what);
        return 0;
    }
    printf("REFUSED %s: %s\n", what, strerror(errno));
    return 1;
}

static int socket64(void) {
    return verdict(syscall(SYS_socket, HIGH | AF_UNIX, SOCK_STREAM, 0), "socket64");
}

static int dgram(const char *path) {
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_DGRAM, 0, pair) != 0)
        return verdict(-1, "dgram");
    struct sockaddr_un to = {.sun_family = AF_UNIX};
    strncpy(to.sun_path, path, sizeof to.sun_path - 1);
    return verdict(sendto(pair[0], "escaped", 7, 0, (struct sockaddr *)&to, sizeof to), "dgram");
}

static int clone64(void) {
    long pid = syscall(SYS_clone, HIGH | CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
    if (pid == 0)
        _exit(0);
    if (pid > 0)
        waitpid((pid_t)pid, NULL, 0);
    return verdict(pid, "clone64");
}

static int io_uring(void) {
    unsigned char params[120] = {0}; /* struct io_uring_params, zeroed */
    return verdict(syscall(SYS_io_uring_setup, 4, params), "io_uring");
}

static int unfiltered(pid_t pid) {
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", pid);
    FILE *f = fopen(path, "r");
    int found = 0;
    if (!f)
        return 0;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "Seccomp:\t0", 10) == 0)
            found = 1;
    fclose(f);
    return found;
}

/* One way of reaching into ``pid``; 1 when it worked (nothing is written: the writes go
 * to an unmapped address, a seized process is never stopped and is let go at our exit). */
static int reach_one(pid_t pid) {
    int reached = 0;
    char byte = 0, path[64];
    if (syscall(SYS_ptrace, PTRACE_SEIZE, pid, 0, 0) == 0) {
        printf("REACHED %d ptrace\n", pid);
        reached = 1;
    }
    struct iovec local = {&byte, 1}, remote = {(void *)0x1000, 1};
    if (syscall(SYS_process_vm_writev, pid, &local, 1, &remote, 1, 0) >= 0 || errno == EFAULT) {
        printf("REACHED %d process_vm_writev\n", pid);
        reached = 1;
    }
    snprintf(path, sizeof path, "/proc/%d/mem", pid);
    int fd = open(path, O_RDWR);
    if (fd >= 0) {
        printf("REACHED %d /proc/PID/mem\n", pid);
        close(fd);
        reached = 1;
    }
    snprintf(path, sizeof path, "/proc/%d/environ", pid); /* the agent's keys, say */
    fd = open(path, O_RDONLY);
    if (fd >= 0) {
        printf("REACHED %d /proc/PID/environ\n", pid);
        close(fd);
        reached = 1;
    }
    int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (pidfd >= 0) {
        for (int target = 0; target < 8; target++) {
            int got = (int)syscall(SYS_pidfd_getfd, pidfd, target, 0);
            if (got >= 0) {
                printf("REACHED %d pidfd_getfd\n", pid);
                close(got);
                reached = 1;
                break;
            }
        }
        close(pidfd);
    }
    return reached;
}

static int reach(int argc, char **argv) {
    pid_t targets[4096];
    int n = 0, reached = 0;
    if (argc > 0) {
        for (int i = 0; i < argc && n < 4096; i++)
            targets[n++] = (pid_t)atoi(argv[i]);
    } else {
        DIR *proc = opendir("/proc");
        struct dirent *entry;
        while (proc && (entry = readdir(proc)) && n < 4096) {
            pid_t pid = (pid_t)atoi(entry->d_name);
            if (pid > 0 && pid != getpid() && unfiltered(pid))
                targets[n++] = pid;
        }
        if (proc)
            closedir(proc);
    }
    printf("TARGETS %d\n", n);
    for (int i = 0; i < n; i++)
        reached |= reach_one(targets[i]);
    puts(reached ? "ALLOWED reach" : "REFUSED reach");
    return reached ? 0 : 1;
}

static int caps(void) {
    char line[256];
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return 2;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "Cap", 3) == 0 || strncmp(line, "NoNewPrivs", 10) == 0)
            fputs(line, stdout);
    fclose(f);
    return 0;
}

static int write_line(const char *path) {
    int fd = open(path, O_WRONLY | O_APPEND);
    if (fd < 0)
        return verdict(-1, "write");
    long wrote = write(fd, "escaped\n", 8);
    close(fd);
    return verdict(wrote, "write");
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc < 2)
        return 2;
    const char *what = argv[1], *arg = argc > 2 ? argv[2] : "";
    if (!strcmp(what, "socket64"))
        return socket64();
    if (!strcmp(what, "dgram"))
        return dgram(arg);
    if (!strcmp(what, "vsock")) /* AF_VSOCK */
        return verdict(socket(40, SOCK_STREAM, 0), "vsock");
    if (!strcmp(what, "clone64"))
        return clone64();
    if (!strcmp(what, "io_uring"))
        return io_uring();
    if (!strcmp(what, "keyring")) /* KEYCTL_GET_KEYRING_ID, KEY_SPEC_USER_KEYRING */
        return verdict(syscall(SYS_keyctl, 0, -4, 0), "keyring");
    if (!strcmp(what, "setuid"))
        return verdict(chmod(arg, 04755), "setuid");
    if (!strcmp(what, "reach"))
        return reach(argc - 2, argv + 2);
    if (!strcmp(what, "caps"))
        return caps();
    if (!strcmp(what, "umount"))
        return verdict(umount2(arg, MNT_DETACH), "umount");
    if (!strcmp(what, "remount-rw"))
        return verdict(mount(NULL, arg, NULL, MS_REMOUNT | MS_BIND, NULL), "remount-rw");
    if (!strcmp(what, "write"))
        return write_line(arg);
    if (!strcmp(what, "truncate"))
        return verdict(truncate(arg, 0), "truncate");
    if (!strcmp(what, "rename") && argc > 3)
        return verdict(rename(arg, argv[3]), "rename");
    return 2;
}
