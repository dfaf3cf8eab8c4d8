#include <sqlite3.h>

// SQLITE_TRANSIENT is a cast of -1 to a function pointer, which Swift cannot import.
static inline sqlite3_destructor_type cg_sqlite_transient(void) { return SQLITE_TRANSIENT; }

// sqlite3_config is variadic, which Swift cannot call. Turns off SQLite's memory statistics:
// with them on (the library's default), every allocation SQLite makes takes a global mutex
// to count it. The gateway never reads them (no sqlite3_status, no soft heap limit). Only
// takes effect before SQLite initializes; returns SQLITE_MISUSE after.
static inline int cg_sqlite_disable_memstatus(void) { return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); }

// sqlite3_db_config is variadic too. Turns off the "double-quoted string literal" misfeature for
// this connection's statements: a quoted column name that does not exist is then an error, not
// the string "name" (https://sqlite.org/quirks.html#dblquote).
static inline int cg_sqlite_disable_dqs(sqlite3 *db) {
    int rc = sqlite3_db_config(db, SQLITE_DBCONFIG_DQS_DML, 0, (int *)0);
    if (rc != SQLITE_OK) return rc;
    return sqlite3_db_config(db, SQLITE_DBCONFIG_DQS_DDL, 0, (int *)0);
}
