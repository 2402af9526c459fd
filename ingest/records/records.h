// Plain records: the seam between the parsers (ingest/) and the store (store/).
//
// Every parser turns printed lines into these structs and hands them to a RecordSink (record_sink.h). The
// records say what XLA printed, normalised (integers as integers, "no index" as "{}"), and nothing about how
// it is stored. They own their strings, so a sink may keep or move them.
//
// Conventions
//   * Sizes are exact bytes unless the field name says "approx" (parsed from a lossy human string, §6.4).
//   * -1 in an integer field means "not printed"; an empty string means "not printed".
//   * Shape indices are ShapeIndex text (§6.1): "{}", "{0}", "{1,3}". Where XLA omits the braces for a
//     non-tuple value, records carry "{}" and set index_printed = false.
#ifndef XLADB_INGEST_RECORDS_RECORDS_H_
#define XLADB_INGEST_RECORDS_RECORDS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace xladb::ingest {

// ---------------------------------------------------------------------------------------------------
// Buffer assignment (§2, §3)

// One `allocation <idx>: [0x…, ]size <bytes>{, <flag>}*:` header line (§2.2).
struct AllocationRecord {
  int64_t index = 0;
  int64_t size_bytes = 0;
  int32_t color = 0;                  // memory space; 0 when the `color N` flag is absent
  int64_t parameter_number = -1;      // `parameter N`; -1 if not an entry parameter
  std::string parameter_shape;        // text between |…| after `parameter N, shape` (may be "<unknown shape>")
  std::string parameter_shape_index;  // `at ShapeIndex {…}` text; empty if not a parameter
  bool is_output = false;             // `output shape is |…|`
  std::string output_shape;           // the |…| text (the whole entry root shape)
  bool is_constant = false;
  bool is_thread_local = false;
  bool is_maybe_live_out = false;
  bool is_preallocated_temp = false;
  std::string address;                // pre-2022-09 `0x…` object pointer, empty otherwise
};

// `<ID NAME[INDEX][ (phi)][ @COLOR]>`: HloValue::ToShortString (§2.4).
struct ValueRef {
  int64_t id = 0;
  std::string instruction;            // defining instruction name
  std::string shape_index = "{}";     // normalised: "{}" when no braces were printed
  bool index_printed = false;         // whether braces were printed (the defining shape is a tuple)
  bool is_phi = false;
  int32_t color = -1;                 // @COLOR; -1 if absent
};

// ` value: <…> (size=<bytes>,offset=<bytes>): <shape>` under an allocation header (§2.3).
struct AllocatedValueRecord {
  ValueRef value;
  int64_t allocation_index = 0;
  int64_t offset_bytes = 0;
  int64_t size_bytes = 0;
  std::string shape;                  // with layout, to the end of the line
};

// `  value: <…> (color=<int>)` inside ` reused by buffers of a different color:` (§2.3, 2026-06-17+).
struct CrossColorReuseRecord {
  int64_t allocation_index = 0;
  ValueRef value;
  int32_t color = 0;
};

// `Total bytes used: <int>[ (<human>)]` (§2.5).
struct TotalBytesRecord {
  int64_t total_bytes = 0;
};

// One block of `Used values:` (§2.5): value-short, positions, uses, from instruction.
struct ValueDetailRecord {
  struct Position {
    std::string instruction;
    std::string shape_index = "{}";   // normalised like ValueRef
  };
  struct Use {
    std::string instruction;
    int64_t operand = 0;
    std::string shape_index = "{}";
  };
  enum class UsesState {
    kListed,          // zero or more use lines (the pre-2026 way to say "none" is zero lines)
    kNone,            // `  (none)` (2026-06-02+)
    kNotInitialized,  // ` uses are not initialized yet.` (2024-01-14+)
  };
  ValueRef value;
  std::vector<Position> positions;
  std::vector<Use> uses;
  UsesState uses_state = UsesState::kListed;
  // Name of the instruction of the ` from instruction:` line (its InstructionRecord is emitted separately,
  // once per module); empty in eras before 2021-09-23.
  std::string defining_instruction;
};

// ---------------------------------------------------------------------------------------------------
// HLO instructions (§7, and the `from instruction:` / `HLO:` lines that embed the same long text)

// Every parser emits at most one InstructionRecord per name in a file (the HLO module text reports a repeated
// name as an issue; the buffer assignment and bundle profile emit an instruction where it is first named), so
// a file that creates its module never replaces a text it wrote itself (store/write/rows/hlo_module_rows.cc).
struct InstructionRecord {
  std::string name;                   // without '%'
  std::string computation;            // enclosing computation; empty when only seen in a from-instruction line
  std::string opcode;                 // e.g. "fusion", "custom-call", "get-tuple-element"
  std::string shape;                  // result shape with layout as printed
  std::string op_type;                // metadata op_type, unescaped
  std::string op_name;                // metadata op_name, unescaped
  std::string source_file;            // metadata source_file, unescaped
  int64_t source_line = -1;           // metadata source_line
  std::string fusion_kind;            // `kind=` attribute as printed, e.g. "kLoop"; fusions only
  std::string custom_call_target;     // custom_call_target="…", unescaped
  bool is_root = false;               // printed with ROOT
  int64_t sequence_index = -1;        // position within its computation in the printed order (HLO text only)
  std::string text;                   // the whole printed instruction text (without leading "ROOT "),
                                      // stored once per distinct text by the store

  // Where `text` prints a field byte for byte: its offset in `text` and length (at == kNotPrinted when the
  // field is absent or printed otherwise, e.g. C-escaped). The store keeps such a part once, in the table
  // that interns the field, and cuts it out of the stored text (store/facts/long_text.h).
  struct TextSpan {
    static constexpr size_t kNotPrinted = static_cast<size_t>(-1);
    size_t at = kNotPrinted;
    size_t size = 0;
  };
  TextSpan shape_in_text, op_name_in_text, source_file_in_text;
};

// A computation block of HLO module text (§7.2).
struct ComputationRecord {
  std::string name;
  bool is_entry = false;
  int64_t instruction_count = 0;
  std::string execution_thread;       // `}, execution_thread="…"`; empty if not printed
};

// The `HloModule <name>, attrs…` header of HLO module text, emitted once at its end of file.
struct HloModuleRecord {
  std::string name;
  bool is_scheduled = false;
  std::string entry_computation_layout;  // text inside {…}; empty if absent
  // The ENTRY computation's signature as its long-form line prints it, parameter names dropped, shapes as
  // printed, spaced like entry_computation_layout: `ENTRY %m (a: f32[2]{0}, b: s32[]) -> f32[2]{0} {` gives
  // "(f32[2]{0}, s32[])->f32[2]{0}".
  // Empty when the line has none (ShortParsable era). Old dumps (≤ 2020) print no entry_computation_layout.
  std::string entry_signature;
  // The ENTRY parameters' and ROOT's `sharding={…}` (ingest/text/entry_sharding.h): "(none, {devices=[2]0,1}) ->
  // {replicated}"; empty when none of them has one.
  std::string entry_sharding;
  int64_t replica_count = -1;
  int64_t num_partitions = -1;
  std::string header_text;            // the whole header line (may be hundreds of KB)
  // Fingerprint of the program: XXH3-64 of the instruction lines with names and metadata stripped, so the
  // same program matches across runs even when XLA renumbers the module. 0 when not computed.
  uint64_t program_fingerprint = 0;
  int64_t computation_count = 0;
  int64_t instruction_count = 0;
};

// ---------------------------------------------------------------------------------------------------
// HloLiveRange (§4)

// `HloLiveRange (max <T>):`.
struct LiveRangeHeaderRecord {
  int64_t schedule_end_time = 0;      // T
};

// `    <i>:<NAME>` of InstructionSequence.
struct ScheduleEntryRecord {
  int64_t time = 0;
  std::string instruction;
};

// `    <NAME><INDEX>:<start>-<end>` of BufferLiveRange.
struct LiveRangeRecord {
  std::string instruction;
  std::string shape_index = "{}";
  int64_t start = 0;
  int64_t end = 0;
};

// `  Live ranges at <t> (peak):`.
struct PeakMomentRecord {
  int64_t time = 0;
};

// One line of the peak list (§4.1, V1/V2/V3).
struct PeakBufferRecord {
  int64_t ordinal = 0;                // 0-based position in the printed list
  std::string instruction;
  std::string shape_index = "{}";     // printed in V2/V3; in V1 recovered by aligning with BufferLiveRange
  bool index_printed = false;         // V2/V3
  int64_t logical_bytes = 0;
  int64_t cumulative_bytes = -1;      // V3 only
};

// One node of `Stack trace breakdown for peak usage:` (§4.2).
struct StackTraceNodeRecord {
  int64_t ordinal = 0;                // 0-based, in printed order
  int32_t depth = 0;                  // 0 for top-level nodes
  std::string name;
  double percent = 0;
  int64_t total_bytes = 0;
  int64_t current_bytes = 0;
  int64_t remaining_bytes = 0;
};

// `  Stack trace breakdown for peak usage: <N> bytes`.
struct StackTraceHeaderRecord {
  int64_t peak_bytes = 0;
};

// ---------------------------------------------------------------------------------------------------
// Memory-usage report (§5)

struct MemoryReportRowRecord {
  enum class Section {
    kAllocationsBySize,   // V1 "Allocations sorted by size:" rows
    kAllocationValues,    // V1 per-allocation table rows (§5.3)
    kMemorySpace,         // V2 per-allocation table rows inside a `Memory Space:` group
  };
  Section section = Section::kAllocationsBySize;
  int64_t ordinal = 0;                // 0-based row number within the file
  int64_t allocation_index = -1;      // from the allocation header where printed (V1), else -1
  int32_t memory_space = -1;          // V2 `(color=N)`; -1 in V1
  std::string memory_space_name;      // V2 name as printed
  int64_t table_ordinal = -1;         // V2: which table within the memory space (0-based); V1 section 2: same
  int64_t cumulative_bytes_approx = 0;  // parsed from the human string
  double cumulative_percent = 0;
  int64_t remaining_bytes_approx = -1;  // section 1 only
  int64_t size_bytes_approx = 0;      // section 1: allocation size; tables: per-offset max value size
  int64_t offset_bytes = -1;          // tables only
  int64_t value_count = -1;           // tables only
  std::string shapes;                 // tables: shapes_list as printed; section 1: the allocation header
};

// `Total bytes used: <int>` (V1) or `Total bytes: <int>` of one memory space (V2).
struct MemoryReportTotalRecord {
  int32_t memory_space = -1;          // -1 for V1's all-spaces total
  int64_t total_bytes = 0;
};

// `The rest <k> allocations/values are less than <p>% …` truncation notes.
struct MemoryReportOmittedRecord {
  int64_t after_ordinal = -1;         // ordinal of the last row printed before the note
  int64_t omitted_count = 0;
  double threshold_percent = 0;
  bool values = false;                // true: "values", false: "allocations"
};

// ---------------------------------------------------------------------------------------------------
// TPU utilization (§8 and the per-bundle report)

// `HLO: <no-hlo-instruction>` or `HLO: <instruction text>` block header. The instruction text, when present,
// is also emitted as an InstructionRecord.
struct UtilizationBlockRecord {
  int64_t ordinal = 0;                // 0-based block number within the file
  std::string kernel;                 // HLO instruction name, or "<no-hlo-instruction>" as printed
};

// ` - <COUNTER>: (<num>/<den>) - <ratio>`.
struct UtilizationCounterRecord {
  int64_t block_ordinal = 0;
  std::string kernel;
  std::string counter;                // may contain a space (`MXU_0 matpush`)
  int64_t numerator = 0;
  int64_t denominator = 0;
  std::string ratio_text;             // as printed (`%g`)
  double ratio = 0;
};

// ---------------------------------------------------------------------------------------------------
// OOM report (§9)

// Two stats the OOM parser reads from the log text around a report (not from its `BufferAssignment stats:`):
// the allocation that failed, `… Out of memory while trying to allocate N bytes.`, and the BFC allocator's
// `Limit: N` (its stats dump). Both exact bytes, bytes_text "N bytes".
inline constexpr char kOomFailedAllocationLabel[] = "failed allocation";
inline constexpr char kOomLimitLabel[] = "memory limit";

struct OomStatRecord {
  std::string label;                  // e.g. "parameter allocation", "total fragmentation"
  int64_t bytes_approx = 0;
  std::string bytes_text;
  double percent = -1;                // fragmentation lines only
};

struct OomBufferRecord {
  int64_t buffer_number = 0;          // `Buffer <i>:`
  int64_t size_bytes_approx = 0;
  std::string size_text;
  std::string op_metadata;            // `Operator:` text, raw
  std::string op_name;                // op_name="…" inside it, unescaped
  std::string source_file;
  int64_t source_line = -1;
  std::string xla_label;              // opcode
  std::string shape;
  bool is_entry_parameter = false;
};

// ---------------------------------------------------------------------------------------------------
// Problems found while parsing (never fatal to the file unless the parser says so in Finish()).

struct IssueRecord {
  enum class Severity {
    kUnknownLine,   // a line inside a known format that no rule matched (counted; first few recorded)
    kInvariant,     // an invariant of §2-§8 does not hold (e.g. offset+size beyond the allocation)
    kWarning,       // readable but suspicious (truncated file, missing section)
    kError,         // the file cannot be read as its kind; the parser also returns an error from Finish()
  };
  int64_t line = 0;                   // 1-based line number, 0 when not tied to one line
  Severity severity = Severity::kWarning;
  std::string reason;
};

}  // namespace xladb::ingest

#endif  // XLADB_INGEST_RECORDS_RECORDS_H_
