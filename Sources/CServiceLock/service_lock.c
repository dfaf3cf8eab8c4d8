#undef _FORTIFY_SOURCE
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cg_service_lock.h"

/*
 * The epoll wait (cg_service_lock_use_epoll). lws 4.1 hands poll() its whole pollfd array at
 * every wait, and the kernel's poll() visits every socket twice (to register, to collect), so a
 * wait costs O(sockets): 1.5–3 ms at 8,000 idle connections here. The service thread's poll()
 * instead keeps an epoll set in step with the array — one pass over it in user space, one
 * epoll_ctl per entry whose events changed — and waits in epoll_wait, which costs O(ready).
 *
 * Keeping in step: each descriptor's registered events are in `fd_state` (process-wide: the
 * descriptor numbers are). A registration dies with the socket's last descriptor, and the
 * number may be reused at once by the next accept, which would then look registered when it is
 * not; so this target also defines close(): it deletes a registered descriptor from its epoll
 * set before closing it (libwebsockets.so binds to the executable's close(), as to its poll()).
 * An entry the array no longer holds is deleted when it next reports. Whatever epoll_ctl
 * refuses (a regular file, a descriptor past the table) makes that wait a plain ppoll(), and
 * once a second the kernel checks the whole array as well (the sweep, in slices after the epoll
 * waits), and a ready descriptor the waits did not report is reported and registered again: a
 * registration lost some way not foreseen here costs a second's delay, not a connection.
 */

/* fd_state[fd]: 0, or FD_REGISTERED | (epoll descriptor << 32) | the events registered. */
#define FD_REGISTERED (1ull << 31)
static _Atomic(uint64_t) *fd_state;
static size_t fd_state_count;
/* fd_state_count once the table is set up, published for close() on any thread (pthread_once
   publishes the table only to the threads that call it). */
static atomic_size_t fd_state_published;
static pthread_once_t fd_state_once = PTHREAD_ONCE_INIT;

/* poll()'s event bits are epoll's on Linux (POLLIN == EPOLLIN, ..., POLLRDHUP == EPOLLRDHUP). */
#define WAIT_EVENTS (POLLIN | POLLPRI | POLLOUT | POLLRDHUP)
/* The sweep: at least this often (ms), the kernel checks the whole array too, in slices of
   SWEEP_SLICE entries with no timeout, one after each epoll wait until the array is covered. */
#define SWEEP_MS 1000
#define SWEEP_SLICE 512

/* The fd_state value of a descriptor registered in `epfd` for `want`. */
static uint64_t registration(int epfd, uint32_t want) {
    return FD_REGISTERED | ((uint64_t)(uint32_t)epfd << 32) | want;
}

/* Whether fd_state value `v` is a registration in `epfd`'s set. */
static int registered_in(uint64_t v, int epfd) {
    return (v & FD_REGISTERED) && (int)(v >> 32) == epfd;
}

static void fd_state_init(void) {
    struct rlimit rl;
    size_t n = 65536;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_max != RLIM_INFINITY && rl.rlim_max > n) n = (size_t)rl.rlim_max;
    if (n > (1u << 22)) n = 1u << 22;
    /* Untouched pages are never resident: 8 bytes per descriptor actually used. */
    void *p = mmap(NULL, n * sizeof(uint64_t), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return;
    fd_state = p;
    fd_state_count = n;
    atomic_store_explicit(&fd_state_published, n, memory_order_release);
}

struct cg_service_lock {
    pthread_mutex_t mutex;
    atomic_ulong polls;
    /* The epoll wait: -1 when off. The rest is the service thread's alone. */
    int epfd;
    uint32_t generation;
    /* Per descriptor: its index in this wait's array, and the wait that saw it. */
    int32_t *index;
    uint32_t *seen;
    struct epoll_event *events;
    size_t events_count;
    uint64_t last_sweep_ms;
    int sweeping;
    nfds_t sweep_pos;
    struct pollfd *slice;
    atomic_ulong epoll_waits;
    atomic_ulong plain_waits;
    atomic_ulong healed;
};

/* The lock the calling thread is the service thread of, if any. */
static __thread cg_service_lock *current;

cg_service_lock *cg_service_lock_create(void) {
    cg_service_lock *l = calloc(1, sizeof *l);
    if (!l) return NULL;
    pthread_mutex_init(&l->mutex, NULL);
    atomic_init(&l->polls, 0);
    atomic_init(&l->epoll_waits, 0);
    atomic_init(&l->plain_waits, 0);
    atomic_init(&l->healed, 0);
    l->epfd = -1;
    return l;
}

static uint64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

int cg_service_lock_use_epoll(cg_service_lock *l) {
    if (l->epfd >= 0) return 1;
    pthread_once(&fd_state_once, fd_state_init);
    if (!fd_state) return 0;
    size_t n = fd_state_count;
    void *index = mmap(NULL, n * sizeof(int32_t), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    void *seen = mmap(NULL, n * sizeof(uint32_t), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    int epfd = epoll_create1(EPOLL_CLOEXEC);
    if (index == MAP_FAILED || seen == MAP_FAILED || epfd < 0) {
        if (index != MAP_FAILED) munmap(index, n * sizeof(int32_t));
        if (seen != MAP_FAILED) munmap(seen, n * sizeof(uint32_t));
        if (epfd >= 0) syscall(SYS_close, epfd);
        return 0;
    }
    l->index = index;
    l->seen = seen;
    l->epfd = epfd;
    l->last_sweep_ms = now_ms();
    return 1;
}

/* Forgets every registration made in `epfd` (it is about to close). */
static void forget_registrations(int epfd) {
    for (size_t fd = 0; fd < fd_state_count; fd++) {
        uint64_t v = atomic_load_explicit(&fd_state[fd], memory_order_relaxed);
        if (registered_in(v, epfd)) atomic_compare_exchange_strong(&fd_state[fd], &v, 0);
    }
}

void cg_service_lock_destroy(cg_service_lock *l) {
    if (!l) return;
    if (l->epfd >= 0) {
        forget_registrations(l->epfd);
        syscall(SYS_close, l->epfd);
        munmap(l->index, fd_state_count * sizeof(int32_t));
        munmap(l->seen, fd_state_count * sizeof(uint32_t));
        free(l->events);
        free(l->slice);
    }
    pthread_mutex_destroy(&l->mutex);
    free(l);
}

void cg_service_lock_wait_counts(cg_service_lock *l, unsigned long *epoll_waits, unsigned long *plain_waits, unsigned long *healed) {
    *epoll_waits = atomic_load(&l->epoll_waits);
    *plain_waits = atomic_load(&l->plain_waits);
    *healed = atomic_load(&l->healed);
}

int cg_close_unseen(int fd) {
    return (int)syscall(SYS_close, fd);
}

int close(int fd) {
    if (fd >= 0 && (size_t)fd < atomic_load_explicit(&fd_state_published, memory_order_acquire)) {
        uint64_t v = atomic_exchange(&fd_state[fd], 0);
        if (v & FD_REGISTERED) epoll_ctl((int)(v >> 32), EPOLL_CTL_DEL, fd, NULL);
    }
    return (int)syscall(SYS_close, fd);
}

void cg_service_lock_enter(cg_service_lock *l) {
    pthread_mutex_lock(&l->mutex);
    current = l;
}

void cg_service_lock_leave(cg_service_lock *l) {
    current = NULL;
    pthread_mutex_unlock(&l->mutex);
}

int cg_service_lock_try(cg_service_lock *l) {
    return pthread_mutex_trylock(&l->mutex) == 0;
}

void cg_service_lock_release(cg_service_lock *l) {
    pthread_mutex_unlock(&l->mutex);
}

unsigned long cg_service_lock_polls(cg_service_lock *l) {
    return atomic_load(&l->polls);
}

static int wait_fds(struct pollfd *fds, nfds_t nfds, int timeout) {
    struct timespec ts, *tp = NULL;
    if (timeout >= 0) {
        ts.tv_sec = timeout / 1000;
        ts.tv_nsec = (long)(timeout % 1000) * 1000000L;
        tp = &ts;
    }
    return ppoll(fds, nfds, tp, NULL);
}

/* Registers `fd` in l's epoll set for `want` unless it already is: 0, or -1 (errno set). */
static int watch(cg_service_lock *l, int fd, uint32_t want) {
    uint64_t desired = registration(l->epfd, want);
    uint64_t v = atomic_load_explicit(&fd_state[fd], memory_order_relaxed);
    if (v == desired) return 0;
    struct epoll_event ev = { .events = want, .data.fd = fd };
    int r = epoll_ctl(l->epfd, registered_in(v, l->epfd) ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd, &ev);
    if (r < 0 && errno == ENOENT) r = epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev);
    else if (r < 0 && errno == EEXIST) r = epoll_ctl(l->epfd, EPOLL_CTL_MOD, fd, &ev);
    if (r < 0) return -1;
    atomic_store_explicit(&fd_state[fd], desired, memory_order_relaxed);
    return 0;
}

/* Registers `fd` again in l's set, where `fd_state` says it is: 1 when the registration had
   been lost (epoll_ctl MOD says ENOENT) and is restored, else 0. */
static int rewatch(cg_service_lock *l, int fd, uint32_t want) {
    if ((size_t)fd >= fd_state_count) return 0;
    uint64_t v = atomic_load_explicit(&fd_state[fd], memory_order_relaxed);
    if (!registered_in(v, l->epfd)) return 0;
    struct epoll_event ev = { .events = want, .data.fd = fd };
    int r = epoll_ctl(l->epfd, EPOLL_CTL_MOD, fd, &ev), lost = 0;
    if (r < 0 && errno == ENOENT) lost = (r = epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev)) == 0;
    atomic_store_explicit(&fd_state[fd], r == 0 ? registration(l->epfd, want) : 0, memory_order_relaxed);
    return lost;
}

/* After an epoll wait (lock held): the kernel checks the next slice of the array with no
   timeout. An entry ready there that the wait did not report — it became ready since, or its
   registration was lost — is reported now and registered again; a lost one is counted. */
static void sweep_slice(cg_service_lock *l, struct pollfd *fds, nfds_t nfds, int *ready) {
    if (!l->slice && !(l->slice = malloc(SWEEP_SLICE * sizeof *l->slice))) return;
    if (l->sweep_pos >= nfds) l->sweep_pos = 0;
    nfds_t start = l->sweep_pos, n = nfds - start < SWEEP_SLICE ? nfds - start : SWEEP_SLICE;
    for (nfds_t i = 0; i < n; i++) {
        l->slice[i] = fds[start + i];
        l->slice[i].revents = 0;
    }
    if (wait_fds(l->slice, n, 0) > 0) {
        for (nfds_t i = 0; i < n; i++) {
            struct pollfd *f = &fds[start + i];
            if (!l->slice[i].revents || f->revents) continue;
            if (rewatch(l, f->fd, (uint32_t)f->events & WAIT_EVENTS)) atomic_fetch_add(&l->healed, 1);
            f->revents = l->slice[i].revents;
            (*ready)++;
        }
    }
    l->sweep_pos = start + n;
    if (l->sweep_pos >= nfds) {
        l->sweep_pos = 0;
        l->sweeping = 0;
    }
}

/* The service thread's wait through epoll, with the lock released meanwhile: poll()'s result,
   or -2 when this wait must be a plain one. */
static int wait_epoll(cg_service_lock *l, struct pollfd *fds, nfds_t nfds, int timeout) {
    uint32_t gen = ++l->generation;
    if (gen == 0) gen = l->generation = 1;
    for (nfds_t i = 0; i < nfds; i++) {
        int fd = fds[i].fd;
        fds[i].revents = 0;
        if (fd < 0) continue;
        if ((size_t)fd >= fd_state_count) return -2;
        if (watch(l, fd, (uint32_t)fds[i].events & WAIT_EVENTS) < 0) return -2;
        l->index[fd] = (int32_t)i;
        l->seen[fd] = gen;
    }
    if (l->events_count < nfds || !l->events) {
        /* Doubling: lws's array grows by one entry per connection, and a realloc per entry
           left the heap's free chunks behind at every size on the way. */
        size_t n = l->events_count < 64 ? 64 : l->events_count;
        while (n < nfds) n *= 2;
        struct epoll_event *e = realloc(l->events, n * sizeof *e);
        if (!e) return -2;
        l->events = e;
        l->events_count = n;
    }
    pthread_mutex_unlock(&l->mutex);
    int n = epoll_wait(l->epfd, l->events, (int)(nfds ? nfds : 1), timeout);
    int e = errno;
    pthread_mutex_lock(&l->mutex);
    if (n < 0) { errno = e; return -1; }
    int ready = 0;
    for (int k = 0; k < n; k++) {
        int fd = l->events[k].data.fd;
        int32_t i = l->seen[fd] == gen ? l->index[fd] : -1;
        /* The drainer may have changed the array while this thread waited (it holds the lock
           then); an entry no longer where it was, or gone, is looked for again. */
        if (i >= 0 && ((nfds_t)i >= nfds || fds[i].fd != fd)) {
            i = -1;
            for (nfds_t j = 0; j < nfds; j++) if (fds[j].fd == fd) { i = (int32_t)j; break; }
        }
        if (i < 0) {
            /* Not in the array any more: lws no longer waits for it. */
            uint64_t v = atomic_load_explicit(&fd_state[fd], memory_order_relaxed);
            if (registered_in(v, l->epfd)) atomic_compare_exchange_strong(&fd_state[fd], &v, 0);
            epoll_ctl(l->epfd, EPOLL_CTL_DEL, fd, NULL);
            continue;
        }
        short re = (short)(l->events[k].events & ((uint32_t)fds[i].events | POLLERR | POLLHUP));
        if (re && !fds[i].revents) ready++;
        fds[i].revents |= re;
    }
    return ready;
}

int poll(struct pollfd *fds, nfds_t nfds, int timeout) {
    cg_service_lock *l = current;
    /* Not a wait: lws also polls one descriptor with no timeout from inside its service pass
       (lws_poll_listen_fd, while accepting: "is another connection pending?";
       lws_send_pipe_choked). That is a question about that descriptor, answered by the kernel
       with the lock kept: lws is mid-pass, and the drainer must not run then. lws's own wait
       always has at least two entries (its cancel eventfd and the listening socket). */
    if (!l || (nfds <= 1 && timeout == 0)) return wait_fds(fds, nfds, timeout);
    atomic_fetch_add(&l->polls, 1);
    if (l->epfd >= 0) {
        int r = wait_epoll(l, fds, nfds, timeout);
        if (r >= 0) {
            atomic_fetch_add(&l->epoll_waits, 1);
            uint64_t now = now_ms();
            if (!l->sweeping && now - l->last_sweep_ms >= SWEEP_MS) {
                l->sweeping = 1;
                l->last_sweep_ms = now;
            }
            if (l->sweeping) sweep_slice(l, fds, nfds, &r);
            return r;
        }
        if (r == -1) return -1;
    }
    atomic_fetch_add(&l->plain_waits, 1);
    pthread_mutex_unlock(&l->mutex);
    int r = wait_fds(fds, nfds, timeout);
    int e = errno;
    pthread_mutex_lock(&l->mutex);
    errno = e;
    return r;
}
