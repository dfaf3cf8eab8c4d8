#include <jansson.h>

// json_decref is a static inline with a refcount macro; wrap it so Swift calls one function.
static inline void cg_json_decref(json_t *json) { json_decref(json); }
// json_typeof is a macro reading a struct field.
static inline int cg_json_typeof(const json_t *json) { return (int)json_typeof(json); }
