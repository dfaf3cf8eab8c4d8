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

// Search's substring test (Sources/Resolvers/Catalog/SearchWords.swift): whether `word`, whose
// ASCII letters are already lowercase, occurs in `text`, ASCII letters compared
// case-insensitively (LIKE's folding), every byte counted (LIKE stops at a NUL). With SSE2,
// sixteen positions at a time: a position is a candidate when the bytes there and n - 1 further
// on fold to the word's first and last bytes; only candidates are compared whole.
#include <stddef.h>
#include <stdint.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

static inline unsigned char cg_fold_ascii(unsigned char b) { return (unsigned char)(b - 'A') < 26 ? b | 0x20 : b; }

static inline int cg_matches_folded_at(const unsigned char *t, const unsigned char *w, size_t n) {
    for (size_t j = 0; j < n; j++) {
        if (cg_fold_ascii(t[j]) != w[j]) return 0;
    }
    return 1;
}

#if defined(__SSE2__)
static inline __m128i cg_fold_ascii16(__m128i v) {
    // Bytes 0x80-0xFF compare as negative, so they are never taken for 'A'..'Z'.
    __m128i upper = _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8('A' - 1)), _mm_cmpgt_epi8(_mm_set1_epi8('Z' + 1), v));
    return _mm_or_si128(v, _mm_and_si128(upper, _mm_set1_epi8(0x20)));
}
#endif

static inline int cg_contains_folded(const unsigned char *text, size_t textLength, const unsigned char *word, size_t n) {
    if (n == 0) return 1;
    if (textLength < n) return 0;
    size_t last = textLength - n, i = 0;
#if defined(__SSE2__)
    const __m128i first = _mm_set1_epi8((char)word[0]), final = _mm_set1_epi8((char)word[n - 1]);
    for (; i + 16 <= last + 1; i += 16) {
        __m128i a = cg_fold_ascii16(_mm_loadu_si128((const __m128i *)(text + i)));
        __m128i b = cg_fold_ascii16(_mm_loadu_si128((const __m128i *)(text + i + n - 1)));
        unsigned mask = (unsigned)_mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(a, first), _mm_cmpeq_epi8(b, final)));
        while (mask) {
            unsigned k = (unsigned)__builtin_ctz(mask);
            if (cg_matches_folded_at(text + i + k, word, n)) return 1;
            mask &= mask - 1;
        }
    }
#endif
    for (; i <= last; i++) {
        if (cg_matches_folded_at(text + i, word, n)) return 1;
    }
    return 0;
}
