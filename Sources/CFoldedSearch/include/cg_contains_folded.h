#ifndef CG_CONTAINS_FOLDED_H
#define CG_CONTAINS_FOLDED_H

#include <stddef.h>

/*
 * Search's substring test (Sources/Resolvers/Catalog/SearchWords.swift): whether `word`, whose
 * ASCII letters are already lowercase, occurs in `text`, ASCII letters compared
 * case-insensitively (LIKE's folding), every byte counted (LIKE stops at a NUL). Returns 1 or 0.
 * In C for SSE2: Swift's SIMD types did not compile to it.
 */
int cg_contains_folded(const unsigned char *text, size_t textLength, const unsigned char *word, size_t n);


/* ASCII 'A'..'Z' to lowercase, every other byte as it is: the folding of cg_contains_folded,
 * which the word it is given must already have (SearchWords.encode folds with this). */
static inline unsigned char cg_fold_ascii(unsigned char b) { return (unsigned char)(b - 'A') < 26 ? b | 0x20 : b; }

#endif
