// The options jemalloc reads at start (its `malloc_conf`, a weak symbol it lets the program define), for the
// xladb command only (linked when XLADB_JEMALLOC is on: cli/CMakeLists.txt).
//
// thp:always, metadata_thp:always: jemalloc asks the kernel for transparent huge pages (madvise
// MADV_HUGEPAGE, which Debian's default "madvise" mode honours) for what it maps, its own metadata included,
// so a fresh 2 MiB of heap costs one page fault instead of 512. A page fault on a virtual machine costs tens
// of microseconds (the machine of docs/PERFORMANCE.md: 52 ms of `xladb --version` for 1,244 faults), and an
// ingest touches fresh memory throughout: a 10 MiB buffer assignment took 10,400 faults and 0.29-0.32 s,
// with the option 3,400 faults and 0.23-0.26 s; 100 MiB 23,500 faults, 1.60 s, with it 4,000 and 1.50 s;
// the real run folder 0.45-0.53 s, with it 0.44-0.47 s (alternating runs, 2026-11-30). Peak RSS grows by
// the pages' rounding: 56 to 72 MB, 106 to 127 MB, the 1 GiB file's 234 to 256 MB (under the 256 MiB its
// target allows). Not for xladbd: a daemon that lives for weeks keeps its footprint small instead, and its
// gate and diff answers measured no faster with it.
extern "C" {
extern const char* malloc_conf;
const char* malloc_conf = "thp:always,metadata_thp:always";
}
