// cg_contains_folded (include/cg_contains_folded.h). With SSE2, sixteen positions at a time: a
// position is a candidate when the bytes there and n - 1 further on fold to the word's first and
// last bytes; only candidates are compared whole.
#include "cg_contains_folded.h"

#include <stdint.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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

int cg_contains_folded(const unsigned char *text, size_t textLength, const unsigned char *word, size_t n) {
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
