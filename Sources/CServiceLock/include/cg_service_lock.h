#ifndef CG_SERVICE_LOCK_H
#define CG_SERVICE_LOCK_H

/*
 * The gateway's service lock: held by the libwebsockets service thread at all times except
 * while it sleeps in poll(). Another thread that takes it (cg_service_lock_try) therefore
 * knows that lws is not running and will not run until the lock is released, and may do what
 * the service thread does (write frames to sockets, call lws) in its place — without first
 * waking that thread, whose return from a poll() over every socket costs O(sockets).
 *
 * lws 4.1 calls poll() itself and offers no hook around it, so this target defines poll():
 * the executable's definition is the one libwebsockets.so binds to. On a thread that entered
 * a lock it releases the lock for the duration of the wait; on every other thread it is plain
 * ppoll(). cg_service_lock_polls tells whether lws's waits really came through here.
 */

typedef struct cg_service_lock cg_service_lock;

cg_service_lock *cg_service_lock_create(void);
void cg_service_lock_destroy(cg_service_lock *lock);

/* The calling thread becomes the lock's service thread and takes the lock. */
void cg_service_lock_enter(cg_service_lock *lock);
/* The calling thread stops being the service thread and releases the lock. */
void cg_service_lock_leave(cg_service_lock *lock);

/* Any other thread: 1 when it now holds the lock (release it with cg_service_lock_release). */
int cg_service_lock_try(cg_service_lock *lock);
void cg_service_lock_release(cg_service_lock *lock);

/* How many poll() waits of the service thread released the lock so far. */
unsigned long cg_service_lock_polls(cg_service_lock *lock);

/*
 * Before cg_service_lock_enter: the service thread's poll() waits in epoll_wait on a set kept
 * in step with lws's array (O(ready) per wait, not O(sockets)); a wait is a plain ppoll() where
 * epoll cannot watch a descriptor, and once a second the kernel checks the whole array too, in
 * slices after the waits. 1 when on (0: it could not be set up, and waits stay plain). This
 * target's close() keeps the registrations right; see service_lock.c.
 */
int cg_service_lock_use_epoll(cg_service_lock *lock);

/* Waits so far through epoll and plain, and lost registrations the sweeps restored. */
void cg_service_lock_wait_counts(cg_service_lock *lock, unsigned long *epoll_waits,
                                 unsigned long *plain_waits, unsigned long *healed);

/* close(2) itself, past this target's close(): for tests, a close the epoll set does not hear of. */
int cg_close_unseen(int fd);

#endif
