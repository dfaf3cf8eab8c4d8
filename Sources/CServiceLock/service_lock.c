#undef _FORTIFY_SOURCE
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "cg_service_lock.h"

struct cg_service_lock {
    pthread_mutex_t mutex;
    atomic_ulong polls;
};

/* The lock the calling thread is the service thread of, if any. */
static __thread cg_service_lock *current;

cg_service_lock *cg_service_lock_create(void) {
    cg_service_lock *l = calloc(1, sizeof *l);
    if (!l) return NULL;
    pthread_mutex_init(&l->mutex, NULL);
    atomic_init(&l->polls, 0);
    return l;
}

void cg_service_lock_destroy(cg_service_lock *l) {
    if (!l) return;
    pthread_mutex_destroy(&l->mutex);
    free(l);
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

int poll(struct pollfd *fds, nfds_t nfds, int timeout) {
    cg_service_lock *l = current;
    if (!l) return wait_fds(fds, nfds, timeout);
    atomic_fetch_add(&l->polls, 1);
    pthread_mutex_unlock(&l->mutex);
    int r = wait_fds(fds, nfds, timeout);
    int e = errno;
    pthread_mutex_lock(&l->mutex);
    errno = e;
    return r;
}
