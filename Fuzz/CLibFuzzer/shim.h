#ifndef CG_LIBFUZZER_SHIM_H
#define CG_LIBFUZZER_SHIM_H
#include <stddef.h>
#include <stdint.h>

// libFuzzer's driver (compiler-rt FuzzerInterface.h), declared here because no header ships
// with the toolchain: SwiftPM renames an executable's entry point to <Module>_main, so each
// fuzz target defines that function and hands control to libFuzzer through this call.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
