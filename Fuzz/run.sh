#!/usr/bin/env bash
# Builds and runs the libFuzzer targets (Fuzz/<Target>/main.swift, in Package.swift only when
# CG_FUZZ is set) with address sanitizer, each for SECONDS, starting from the committed seeds in
# Fuzz/corpus/<Target>/. New inputs go to .build-fuzz/corpus/<Target>/, kept between runs (with
# --fresh: to .build-fuzz/fresh-corpus/<Target>/, emptied first, so a smoke run starts from the
# seeds alone); crashes to .build-fuzz/artifacts/. Prints one summary line per target and exits
# non-zero if any target found a crash, a leak or an oracle failure.
#
#   Fuzz/run.sh [--fresh] [--no-build] SECONDS Target...
set -uo pipefail
cd "$(dirname "$0")/.."

fresh=0; build=1
while [[ "${1:-}" == --* ]]; do
  case "$1" in
    --fresh) fresh=1 ;;
    --no-build) build=0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
seconds=${1:?usage: Fuzz/run.sh [--fresh] [--no-build] SECONDS Target...}; shift
scratch=.build-fuzz
bin=$scratch/debug

if (( build )); then
  for t in "$@"; do
    # lld: SwiftPM points `main` at the target's own entry point with --defsym, which gold
    # cannot reconcile with the main in libFuzzer's whole archive.
    CG_FUZZ=1 swift build -c debug --scratch-path "$scratch" --product "$t" \
      -Xswiftc -sanitize=fuzzer,address -Xswiftc -use-ld=lld 2>&1 \
      | grep -v "Cannot export local symbol" | grep -E "error|warning: |Compiling|Build" >&2
    [[ -x $bin/$t ]] || { echo "fuzz: build of $t failed" >&2; exit 1; }
  done
fi

mkdir -p "$scratch/artifacts"
# The executing targets' demo catalog, written afresh by the first of them in this run.
export CG_FUZZ_CATALOG=$scratch/fuzz-demo-60.sqlite
rm -f "$CG_FUZZ_CATALOG" "$CG_FUZZ_CATALOG-journal"
status=0
for t in "$@"; do
  corpus=$scratch/corpus/$t
  if (( fresh )); then corpus=$scratch/fresh-corpus/$t; rm -rf "$corpus"; fi
  mkdir -p "$corpus"
  log=$scratch/$t.log
  # detect_leaks=0: LeakSanitizer cannot see pointers that Swift stores in enum payloads with
  # tag bits (indirect enums, multi-payload enums) and reports them as direct leaks.
  ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 "$bin/$t" -dict=Fuzz/graphql.dict \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=3072 -print_final_stats=1 \
    -artifact_prefix="$scratch/artifacts/$t-" "$corpus" "Fuzz/corpus/$t" >"$log" 2>&1
  rc=$?
  done_line=$(grep -E '^#[0-9]+\s+(DONE|pulse|NEW|REDUCE)' "$log" | tail -1)
  runs=$(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}')
  speed=$(grep -E '^stat::average_exec_per_sec' "$log" | awk '{print $2}')
  cov=$(sed -nE 's/.*cov: ([0-9]+).*/\1/p' <<<"$done_line")
  ft=$(sed -nE 's/.*ft: ([0-9]+).*/\1/p' <<<"$done_line")
  corp=$(sed -nE 's/.*corp: ([0-9]+\/[0-9]+[a-zA-Z]+).*/\1/p' <<<"$done_line")
  if (( rc == 0 )); then
    printf '%-16s ok     %ss  runs %-9s exec/s %-6s cov %-5s ft %-6s corpus %s\n' "$t" "$seconds" "${runs:-?}" "${speed:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}"
  else
    status=1
    printf '%-16s FAILED (exit %s) after %s runs; see %s\n' "$t" "$rc" "${runs:-?}" "$log"
    grep -E 'ERROR|fuzz oracle failed|Fatal error|Test unit written' "$log" | head -5
  fi
done
exit $status
