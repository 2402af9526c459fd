// Fuzz entry points: one function per input-facing piece of ingest/, shared by the libFuzzer targets
// (tests/fuzz/fuzz_target_main.cc, built only with -DXLADB_FUZZ=ON under clang) and by the regression replay
// (tests/ingest/fuzz_regression_test.cc, every build), so a crash found once is replayed by the plain suite.
//
// What each entry point does with its bytes
//   * The seven format parsers (parser_registry.cc): the bytes are a whole file, fed through the real
//     LineReader over MakeMemorySource into the parser with a counting sink, then Finish().
//   * sniff: the bytes up to the first '\n' are the file name, the rest is the head (at most kSniffBytes of
//     it, as the driver passes); SniffFile, KindClaimedByName, BackendHintFromContent.
//   * dump_name: the bytes are a base name; ParseDumpName and IsModuleTextStage.
//   * hlo_instruction_text: the bytes are one instruction line; ParseHloInstructionText,
//     SplitHloInstructionText, TopLevelItems, BracketTracker, UnescapeCString.
//
// Contract
//   * Every entry point accepts any bytes (NULs, invalid UTF-8, any length) and must never crash, leak, hit
//     undefined behaviour or run longer than linear-ish time: those are bugs the sanitizers report.
//   * Beyond not crashing, each checks a few contracts of the code under test that hold for EVERY input (a
//     Finish() error has a message, issue line numbers lie within the file, the sniffer always gives a reason
//     for what it does not parse, the name parser only returns pieces of the name, …). A broken contract is
//     returned as a message; an empty string means all held. The libFuzzer main aborts on a non-empty one.
//   * Stateless and thread-safe; no I/O.
#ifndef XLADB_TESTS_FUZZ_FUZZ_ENTRY_POINTS_H_
#define XLADB_TESTS_FUZZ_FUZZ_ENTRY_POINTS_H_

#include <span>
#include <string>
#include <string_view>

namespace xladb::fuzz {

// Returns "" when every checked contract held, else what broke.
using FuzzEntryPoint = std::string (*)(std::string_view data);

struct FuzzTarget {
  std::string_view name;  // the libFuzzer binary is `<name>_fuzzer`; regressions live in regressions/<name>/
  FuzzEntryPoint run;
};

// Every target, in a fixed order.
std::span<const FuzzTarget> AllFuzzTargets();

// The target called `name`, or nullptr.
const FuzzTarget* FindFuzzTarget(std::string_view name);

}  // namespace xladb::fuzz

#endif  // XLADB_TESTS_FUZZ_FUZZ_ENTRY_POINTS_H_
