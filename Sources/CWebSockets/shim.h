#include <libwebsockets.h>

// LWS_PRE is a macro constant Swift cannot see through its expression.
static inline size_t cg_lws_pre(void) { return LWS_PRE; }

// LWS_SET_TIMER_USEC_CANCEL is a casted macro ((lws_usec_t)-1ll) that Swift does not import.
static inline lws_usec_t cg_lws_timer_cancel(void) { return LWS_SET_TIMER_USEC_CANCEL; }

// LWS_SERVER_OPTION_* are 64-bit shift macros; import them as one typed value each.
static inline uint64_t cg_lws_option_disable_ipv6(void) { return LWS_SERVER_OPTION_DISABLE_IPV6; }
// (see above) Closes text frames that are not valid UTF-8 with 1007, as RFC 6455 requires.
static inline uint64_t cg_lws_option_validate_utf8(void) { return LWS_SERVER_OPTION_VALIDATE_UTF8; }

// LWS_WRITE_RAW is a macro alias of an enum constant; raw-socket writes use it by name.
static inline enum lws_write_protocol cg_lws_write_raw(void) { return LWS_WRITE_RAW; }

// (see above) A request line lws cannot parse is handed to the vhost's listen-accept protocol as
// raw bytes instead of lws's fixed 403 page, so the gateway can answer 400/501 itself.
static inline uint64_t cg_lws_option_fallback_to_raw(void) { return LWS_SERVER_OPTION_FALLBACK_TO_APPLY_LISTEN_ACCEPT_CONFIG; }

// cg-load reads its fan-out sockets through epoll (Glibc's Swift module does not include it).
#include <sys/epoll.h>
// The subscription watcher wakes on the catalog file's writes through inotify.
#include <sys/inotify.h>

// The gateway's one repeating tick (keep-alive pings, per-connection protocol timers) is an lws
// sul with the server's pointer beside it: lws's timer list is sorted and inserting costs
// O(timers), so per-connection lws timers made 10,000 connections cost O(n^2) per interval.
typedef struct cg_tick { lws_sorted_usec_list_t sul; void *owner; } cg_tick;
static inline void *cg_tick_owner(lws_sorted_usec_list_t *sul) { return ((cg_tick *)sul)->owner; }

// --send-timeout: the bytes a socket's kernel send queue holds (SIOCOUTQ), -1 when unknown; lws
// says only whether it buffered a write itself, so progress is read from the socket.
#include <sys/ioctl.h>
#include <linux/sockios.h>
static inline int cg_socket_unsent(int fd) {
    int n = 0;
    return ioctl(fd, SIOCOUTQ, &n) == 0 ? n : -1;
}
