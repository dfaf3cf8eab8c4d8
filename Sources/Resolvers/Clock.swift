#if canImport(Glibc)
import Glibc
#endif

/// Nanoseconds on CLOCK_MONOTONIC: for deadlines and durations, which a change of the wall
/// clock must not move. The one reading of it for the gateway's modules.
public func monotonicNs() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// Milliseconds on CLOCK_MONOTONIC (`monotonicNs`).
public func monotonicMs() -> UInt64 { monotonicNs() / 1_000_000 }
