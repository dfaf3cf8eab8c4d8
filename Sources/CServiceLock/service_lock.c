#undef _FORTIFY_SOURCE
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
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

/* The descriptors whose registration close() deleted, for the pass over the array
   (wait_epoll): a ring that each service thread replays from where it last stopped, and the
   count of all of them. lws closes its sockets under the service lock, as the pass runs, so a
   slot is written before the pass that reads it; a close elsewhere of a descriptor the array
   holds is what the sweep is for. The slots are atomic all the same: a process with several
   servers (the test suites) has several service threads, each closing under its own lock and
   replaying the ring under its own, and a plain int there was a data race (ThreadSanitizer,
   stop 40). A slot another server is still writing can only be one of that server's
   descriptors: looking at an entry again for it costs nothing. */
#define CLOSED_RING 1024
static _Atomic int closed_ring[CLOSED_RING];
static atomic_ulong closed_count;

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
    /* Per descriptor: its index in the array when the pass last looked at it. */
    int32_t *index;
    /* The array as the last pass left it (fd and events; revents 0), `shadow_count` entries:
       an entry equal to its shadow is registered as it is and was not reported, so the pass
       skips it in one comparison. Room for `events_count` entries, as `events`. */
    uint64_t *shadow;
    nfds_t shadow_count;
    /* closed_count when the pass last replayed the ring. */
    unsigned long closed_seen;
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
    int epfd = epoll_create1(EPOLL_CLOEXEC);
    if (index == MAP_FAILED || epfd < 0) {
        if (index != MAP_FAILED) munmap(index, n * sizeof(int32_t));
        if (epfd >= 0) syscall(SYS_close, epfd);
        return 0;
    }
    l->index = index;
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
        free(l->shadow);
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
        if (v & FD_REGISTERED) {
            epoll_ctl((int)(v >> 32), EPOLL_CTL_DEL, fd, NULL);
            unsigned long k = atomic_fetch_add(&closed_count, 1);
            atomic_store_explicit(&closed_ring[k % CLOSED_RING], fd, memory_order_release);
        }
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

/* An entry of the array as one word, for the shadow: fd and events, revents 0. */
static uint64_t entry_word(const struct pollfd *f) {
    struct pollfd e = { .fd = f->fd, .events = f->events, .revents = 0 };
    uint64_t w;
    memcpy(&w, &e, sizeof w);
    return w;
}

/* Room for `nfds` entries in `events` and `shadow` (doubling: lws's array grows by one entry
   per connection, and a realloc per entry left the heap's free chunks behind at every size on
   the way): 0, or -1. */
static int reserve(cg_service_lock *l, nfds_t nfds) {
    if (l->events_count >= nfds && l->events && l->shadow) return 0;
    size_t n = l->events_count < 64 ? 64 : l->events_count;
    while (n < nfds) n *= 2;
    struct epoll_event *e = realloc(l->events, n * sizeof *e);
    if (!e) return -1;
    l->events = e;
    uint64_t *w = realloc(l->shadow, n * sizeof *w);
    if (!w) return -1;
    l->shadow = w;
    l->events_count = n;
    return 0;
}

/* The service thread's wait through epoll, with the lock released meanwhile: poll()'s result,
   or -2 when this wait must be a plain one. The pass over the array compares each entry with
   its shadow and goes further only for those that differ: new, moved, changed (lws, or the
   drainer while this thread waited) or reported by the last wait. At 8,000 idle connections
   a pass that looked up every entry's registration took a third of the service thread's time
   under sequential requests. */
static int wait_epoll(cg_service_lock *l, struct pollfd *fds, nfds_t nfds, int timeout) {
    if (reserve(l, nfds) < 0) return -2;
    /* A closed descriptor's number may be back at the same place with the same events, equal
       to its shadow but no longer registered: the entry where it was is looked at again. */
    unsigned long closed = atomic_load(&closed_count);
    if (closed - l->closed_seen > CLOSED_RING) {
        l->shadow_count = 0;  /* too many to replay: every entry is looked at */
    } else {
        for (unsigned long k = l->closed_seen; k != closed; k++) {
            int32_t i = l->index[atomic_load_explicit(&closed_ring[k % CLOSED_RING], memory_order_acquire)];
            if (i >= 0 && (nfds_t)i < l->shadow_count) l->shadow[i] = ~0ull;
        }
    }
    l->closed_seen = closed;
    nfds_t known = l->shadow_count < nfds ? l->shadow_count : nfds;
    uint64_t *shadow = l->shadow;
    for (nfds_t i = 0; i < nfds;) {
        /* Eight entries at a time while all equal their shadows: a few instructions each. */
        if (i + 8 <= known) {
            uint64_t diff = 0;
            for (int j = 0; j < 8; j++) {
                uint64_t w;
                memcpy(&w, &fds[i + j], sizeof w);
                diff |= w ^ shadow[i + j];
            }
            if (!diff) { i += 8; continue; }
        }
        for (nfds_t end = i + 8 < nfds ? i + 8 : nfds; i < end; i++) {
            uint64_t w;
            memcpy(&w, &fds[i], sizeof w);
            if (i < known && w == shadow[i]) continue;
            int fd = fds[i].fd;
            fds[i].revents = 0;
            if (fd >= 0) {
                if ((size_t)fd >= fd_state_count || watch(l, fd, (uint32_t)fds[i].events & WAIT_EVENTS) < 0) {
                    l->shadow_count = i;  /* what follows was not looked at */
                    return -2;
                }
                l->index[fd] = (int32_t)i;
            }
            shadow[i] = entry_word(&fds[i]);
        }
    }
    l->shadow_count = nfds;
    pthread_mutex_unlock(&l->mutex);
    int n = epoll_wait(l->epfd, l->events, (int)(nfds ? nfds : 1), timeout);
    int e = errno;
    pthread_mutex_lock(&l->mutex);
    if (n < 0) { errno = e; return -1; }
    int ready = 0;
    for (int k = 0; k < n; k++) {
        int fd = l->events[k].data.fd;
        int32_t i = l->index[fd];
        /* The drainer may have changed the array while this thread waited (it holds the lock
           then); an entry no longer where it was, or gone, is looked for again. */
        if (i < 0 || (nfds_t)i >= nfds || fds[i].fd != fd) {
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
