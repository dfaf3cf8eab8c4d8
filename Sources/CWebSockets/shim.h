#include <libwebsockets.h>

// LWS_PRE is a macro constant Swift cannot see through its expression.
static inline size_t cg_lws_pre(void) { return LWS_PRE; }
