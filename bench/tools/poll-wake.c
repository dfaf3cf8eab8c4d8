/*
 * poll-wake: how long a thread blocked in poll() over N idle sockets takes to return once
 * another thread makes one of them readable (an eventfd write, as lws_cancel_service does).
 * The gateway's service thread pays this on every wake-up; with 10,000 subscribers it sits
 * on the fan-out's critical path (bench/README.md, "Fan-out").
 *
 *   cc -O2 -o /tmp/poll-wake bench/tools/poll-wake.c -lpthread && /tmp/poll-wake 10000
 *
 * Prints one line per wake-up (6 by default) and the median. Needs N + 16 open files.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { rounds = 7 };
static int count;
static struct pollfd *fds;
static int efd;
static double sent_at, woke[rounds];

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void *poller(void *arg) {
    (void)arg;
    for (int i = 0; i < rounds; i++) {
        if (poll(fds, (nfds_t)count + 1, -1) < 0) { perror("poll"); exit(1); }
        woke[i] = now_ms() - sent_at;
        uint64_t v;
        if (read(efd, &v, sizeof v) != sizeof v) { perror("read"); exit(1); }
    }
    return NULL;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    count = argc > 1 ? atoi(argv[1]) : 10000;
    if (count < 2) { fprintf(stderr, "usage: poll-wake SOCKETS (at least 2)\n"); return 2; }
    struct rlimit rl = { (rlim_t)count + 64, (rlim_t)count + 64 };
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0) { perror("setrlimit (raise the hard limit)"); return 1; }
    fds = calloc((size_t)count + 1, sizeof *fds);
    efd = eventfd(0, 0);
    fds[0] = (struct pollfd){ .fd = efd, .events = POLLIN };
    for (int i = 1; i <= count; i += 2) {
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) { perror("socketpair"); return 1; }
        fds[i] = (struct pollfd){ .fd = sv[0], .events = POLLIN };
        if (i + 1 <= count) fds[i + 1] = (struct pollfd){ .fd = sv[1], .events = POLLIN };
        else close(sv[1]);
    }
    pthread_t t;
    pthread_create(&t, NULL, poller, NULL);
    for (int i = 0; i < rounds; i++) {
        usleep(200000);
        sent_at = now_ms();
        uint64_t one = 1;
        if (write(efd, &one, sizeof one) != sizeof one) { perror("write"); return 1; }
    }
    pthread_join(t, NULL);
    /* The first round includes the poller's start-up: left out. */
    for (int i = 1; i < rounds; i++) printf("poll() over %d sockets returned %.3f ms after the wake-up\n", count, woke[i]);
    qsort(woke + 1, rounds - 1, sizeof woke[0], cmp);
    printf("median %.3f ms\n", (woke[3] + woke[4]) / 2);
    return 0;
}
