/*
 * tcp_floor.c: the floor for message passing over loopback TCP on this machine, in C.
 * Two processes (this one and a fork), one socket with TCP_NODELAY, no library in between,
 * and the system's congestion control. A cross-check of the Rust floor
 * (crates/bench/src/bin/floor.rs), which measures the same in its one-figure form.
 *
 * Method: the OSU Micro-Benchmarks' (Network-Based Computing Laboratory, The Ohio State
 * University) ping-pong and streaming measures, on a bare socket:
 *
 *   pingpong  SIZE bytes there and back, blocking reads (the reader sleeps in the kernel);
 *             the figure is half the round trip, in us.
 *   spin      the same with non-blocking reads polled in a loop, as MPI over TCP reads.
 *   stream    SIZE-byte writes one way, then a 1-byte ack; MB/s = 10^6 bytes/s.
 *
 * ITERS timed iterations after ITERS/10 untimed ones. Prints one line, `MODE SIZE VALUE
 * UNIT` (e.g. `spin 8 4.05 us`).
 *
 * usage: tcp_floor pingpong|spin|stream SIZE ITERS
 * Built and run by `hypercube-bench` (`hypercube-bench c-floor [MODE SIZE ITERS]`).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void die(const char *what)
{
    perror(what);
    exit(1);
}

static double seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Write all N bytes; on a non-blocking socket, retry (spin) while the kernel refuses. */
static void send_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t k = write(fd, p, n);
        if (k < 0) {
            if (errno == EAGAIN || errno == EINTR)
                continue;
            die("tcp_floor: write");
        }
        p += k;
        n -= (size_t)k;
    }
}

/* Read exactly N bytes; on a non-blocking socket, poll in a loop. */
static void recv_all(int fd, char *p, size_t n)
{
    while (n > 0) {
        ssize_t k = read(fd, p, n);
        if (k < 0) {
            if (errno == EAGAIN || errno == EINTR)
                continue;
            die("tcp_floor: read");
        }
        if (k == 0) {
            fprintf(stderr, "tcp_floor: the peer closed the connection\n");
            exit(1);
        }
        p += k;
        n -= (size_t)k;
    }
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s pingpong|spin|stream SIZE ITERS\n", argv[0]);
        return 2;
    }
    const char *mode = argv[1];
    int stream = strcmp(mode, "stream") == 0, spin = strcmp(mode, "spin") == 0;
    if (!stream && !spin && strcmp(mode, "pingpong") != 0) {
        fprintf(stderr, "tcp_floor: MODE is pingpong, spin or stream, not \"%s\"\n", mode);
        return 2;
    }
    char *end;
    size_t size = strtoul(argv[2], &end, 10);
    long iters = *end == '\0' ? strtol(argv[3], &end, 10) : 0;
    if (*end != '\0' || iters < 1) {
        fprintf(stderr, "tcp_floor: SIZE and ITERS are numbers, ITERS at least 1\n");
        return 2;
    }
    long warm = iters / 10;
    char *buf = malloc(size > 0 ? size : 1);
    if (buf == NULL)
        die("tcp_floor: malloc");
    memset(buf, 1, size > 0 ? size : 1);

    int listener = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    struct sockaddr_in addr = {.sin_family = AF_INET};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (listener < 0 || bind(listener, (struct sockaddr *)&addr, sizeof addr) != 0 ||
        listen(listener, 1) != 0 ||
        getsockname(listener, (struct sockaddr *)&addr, &len) != 0)
        die("tcp_floor: listening on loopback");

    pid_t child = fork();
    if (child < 0)
        die("tcp_floor: fork");
    int fd;
    if (child == 0) {
        close(listener);
        fd = socket(AF_INET, SOCK_STREAM, 0);
        if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0)
            die("tcp_floor: connect");
    } else {
        fd = accept(listener, NULL, NULL);
        if (fd < 0)
            die("tcp_floor: accept");
        close(listener);
    }
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0)
        die("tcp_floor: TCP_NODELAY");
    if (spin && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) != 0)
        die("tcp_floor: O_NONBLOCK");

    if (child == 0) {
        /* The peer: echo (ping-pong) or drain then ack (stream), and leave. */
        for (long i = 0; i < warm + iters; i++) {
            recv_all(fd, buf, size);
            if (!stream)
                send_all(fd, buf, size);
        }
        if (stream)
            send_all(fd, buf, 1);
        return 0;
    }

    double start = 0.0;
    for (long i = 0; i < warm + iters; i++) {
        if (i == warm)
            start = seconds();
        send_all(fd, buf, size);
        if (!stream)
            recv_all(fd, buf, size);
    }
    if (stream) {
        recv_all(fd, buf, 1);
        printf("%s %zu %.2f MB/s\n", mode, size,
               (double)size * (double)iters / (seconds() - start) / 1e6);
    } else {
        printf("%s %zu %.2f us\n", mode, size,
               (seconds() - start) * 1e6 / (2.0 * (double)iters));
    }
    int status = 0;
    if (waitpid(child, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "tcp_floor: the peer process failed\n");
        return 1;
    }
    return 0;
}
