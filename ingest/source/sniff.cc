#include "ingest/source/sniff.h"

#include <array>
#include <bit>
#include <cstdint>
#include <string>
#include <vector>

#include "ingest/text/blank_text.h"
#include "ingest/text/printed_number.h"

namespace xladb::ingest {
namespace {

// How many leading lines of the head the rules look at (the longest rule needs the first few non-blank ones).
constexpr size_t kMaxSniffLines = 32;

// True for a line of nothing but spaces and tabs (or nothing).
bool IsBlankLine(std::string_view line) { return StripBlanks(line).empty(); }

bool IsUpper(char c) { return c >= 'A' && c <= 'Z'; }
bool IsLower(char c) { return c >= 'a' && c <= 'z'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsIdentChar(char c) { return IsUpper(c) || IsLower(c) || IsDigit(c) || c == '_'; }

bool StartsWithNoCase(std::string_view s, std::string_view lower_prefix) {
  if (s.size() < lower_prefix.size()) return false;
  for (size_t i = 0; i < lower_prefix.size(); ++i) {
    char c = s[i];
    if (IsUpper(c)) c = static_cast<char>(c - 'A' + 'a');
    if (c != lower_prefix[i]) return false;
  }
  return true;
}

// The first lines of `head` ('\r' removed), at most kMaxSniffLines. The last one may be cut by the head's end,
// which only prefix rules rely on.
std::vector<std::string_view> FirstLines(std::string_view head) {
  std::vector<std::string_view> lines;
  while (!head.empty() && lines.size() < kMaxSniffLines) {
    size_t nl = head.find('\n');
    std::string_view line = head.substr(0, nl);
    if (line.ends_with('\r')) line.remove_suffix(1);
    lines.push_back(line);
    if (nl == std::string_view::npos) break;
    head.remove_prefix(nl + 1);
  }
  return lines;
}

// Index of the first non-blank line at or after `from`, or lines.size().
size_t NextNonBlank(const std::vector<std::string_view>& lines, size_t from) {
  while (from < lines.size() && IsBlankLine(lines[from])) ++from;
  return from;
}

// At most 60 bytes of `line`, not cutting a UTF-8 sequence, for reasons.
std::string Excerpt(std::string_view line) {
  constexpr size_t kMax = 60;
  if (line.size() <= kMax) return std::string(line);
  size_t cut = kMax;
  while (cut > 0 && (static_cast<unsigned char>(line[cut]) & 0xC0) == 0x80) --cut;
  return std::string(line.substr(0, cut)) + "…";
}

std::string_view KindDescription(FileKind kind) {
  switch (kind) {
    case FileKind::kBufferAssignment: return "a buffer assignment (`BufferAssignment:`)";
    case FileKind::kBufferAssignmentValues:
      return "buffer-assignment values (empty line, `Total bytes used:`, `Used values:`)";
    case FileKind::kLiveRange: return "an HloLiveRange (`HloLiveRange (max …):`)";
    case FileKind::kMemoryUsageReport:
      return "a memory-usage report (`Total bytes used:` + `Allocations sorted by size:`, or `Memory Space:`)";
    case FileKind::kHloModule: return "HLO module text (`HloModule …`)";
    case FileKind::kTpuBundleProfile: return "a TPU bundle profile (`HLO: …`)";
    case FileKind::kTpuPerBundleUtilization: return "a TPU per-bundle utilization report (`== CAPACTIY:`)";
    case FileKind::kOomReport: return "an OOM report (`BufferAssignment OOM Debugging.`)";
    case FileKind::kUnknown:
    case FileKind::kNotIngested: break;
  }
  return "an unknown kind";
}

struct Verdict {
  FileKind kind = FileKind::kUnknown;
  std::string reason;  // for kNotIngested; for kUnknown a description of what the content is
};

Verdict NotIngested(std::string reason) { return Verdict{FileKind::kNotIngested, std::move(reason)}; }

// Control bytes other than \t \n \v \f \r and ESC (which colored logs carry) mean the data is not text.
bool LooksBinary(std::string_view head) {
  for (char ch : head) {
    auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 && c != '\t' && c != '\n' && c != '\v' && c != '\f' && c != '\r' && c != 0x1b) return true;
    if (c == 0x7f) return true;
  }
  return false;
}

std::string_view CompressionMagic(std::string_view head) {
  if (head.starts_with("\x1f\x8b")) return "gzip";
  if (head.starts_with("\x28\xb5\x2f\xfd")) return "zstd";
  if (head.starts_with(std::string_view("\xfd" "7zXZ\0", 6))) return "xz";
  if (head.starts_with("BZh") && head.size() > 3 && IsDigit(head[3])) return "bzip2";
  return {};
}

// `kKernel\t, kernel = …`, `kCopy   \t`, `kCommandBuffer\t`: a thunk kind, padding spaces, a TAB
// (ThunkSequence::ToString, xla/service/gpu/runtime).
bool IsThunkLine(std::string_view line) {
  if (line.size() < 2 || line[0] != 'k' || !IsUpper(line[1])) return false;
  size_t i = 2;
  while (i < line.size() && IsIdentChar(line[i])) ++i;
  while (i < line.size() && line[i] == ' ') ++i;
  return i == line.size() || line[i] == '\t';
}

// `\tBuffer 13:` / `        Buffer 13:` — a block of ToVerboseString's `Peak buffers:` list.
bool IsPeakBufferHeader(std::string_view line) {
  line = StripBlanks(line);
  if (!line.starts_with("Buffer ") || !line.ends_with(':')) return false;
  std::string_view number = line.substr(7, line.size() - 8);
  return !number.empty() && IsDigit(number.front()) && ParseInt64(number).has_value();
}

// `name {` or `name: value` with a lower_snake_case field name: text-format protobuf.
bool IsTextProtoLine(std::string_view line) {
  if (line.empty() || !IsLower(line[0])) return false;
  size_t i = 1;
  while (i < line.size() && (IsLower(line[i]) || IsDigit(line[i]) || line[i] == '_')) ++i;
  std::string_view rest = line.substr(i);
  return rest == " {" || (rest.starts_with(": ") && rest.size() > 2);
}

// The verdict of the content (the name is used only where the content is ambiguous, or to say what binary
// data is). `head` is not empty.
Verdict ClassifyContent(std::string_view head, const DumpName& name, FileKind claimed) {
  if (std::string_view magic = CompressionMagic(head); !magic.empty()) {
    return NotIngested(std::string(magic) + "-compressed data (not decompressed)");
  }
  if (LooksBinary(head)) {
    if (name.artifact.ends_with(".pb")) return NotIngested("binary protobuf");
    if (name.artifact == ".riegeli") return NotIngested("riegeli records (binary protobufs)");
    return NotIngested("binary data");
  }

  const std::vector<std::string_view> lines = FirstLines(head);
  const size_t first = NextNonBlank(lines, 0);
  if (first == lines.size()) return NotIngested("blank file (whitespace only)");
  const std::string_view line = lines[first];
  const std::string_view trimmed = StripBlanks(line);

  // Ingested kinds.
  if (trimmed == "BufferAssignment:") return {FileKind::kBufferAssignment, {}};
  if (line.starts_with("HloLiveRange (max ") || line.starts_with("HloLiveRange not available")) {
    return {FileKind::kLiveRange, {}};
  }
  if (line.starts_with("Memory Space: ")) return {FileKind::kMemoryUsageReport, {}};
  if (line.starts_with("Total bytes used:")) {
    const size_t next = NextNonBlank(lines, first + 1);
    if (next < lines.size()) {
      if (lines[next] == "Used values:") return {FileKind::kBufferAssignmentValues, {}};
      if (lines[next].starts_with("Allocations sorted by size:")) return {FileKind::kMemoryUsageReport, {}};
      return {FileKind::kUnknown, "`Total bytes used:` followed by neither `Used values:` nor "
                                  "`Allocations sorted by size:` but \"" + Excerpt(lines[next]) + "\""};
    }
    // Only the total line: trust a name that claims one of the two, else the leading empty line (§3).
    if (claimed == FileKind::kBufferAssignmentValues || claimed == FileKind::kMemoryUsageReport) return {claimed, {}};
    return {first > 0 ? FileKind::kBufferAssignmentValues : FileKind::kMemoryUsageReport, {}};
  }
  if (line.starts_with("HloModule ")) return {FileKind::kHloModule, {}};
  if (line.starts_with("HLO: ")) return {FileKind::kTpuBundleProfile, {}};
  if (line.starts_with("== CAPACTIY:") || line.starts_with("== CAPACITY:")) {
    return {FileKind::kTpuPerBundleUtilization, {}};
  }
  if (head.find("BufferAssignment OOM Debugging.") != std::string_view::npos) return {FileKind::kOomReport, {}};
  if (trimmed == "Peak buffers:") return {FileKind::kOomReport, {}};
  if (IsPeakBufferHeader(line)) {
    const size_t next = NextNonBlank(lines, first + 1);
    if (next < lines.size() && StripBlanks(lines[next]).starts_with("Size: ")) return {FileKind::kOomReport, {}};
  }

  // Known artifacts that are not memory data.
  if (IsThunkLine(line)) return NotIngested("GPU thunk sequence: not memory data");
  if (line.starts_with("; ModuleID = ") || line.starts_with("target datalayout = ") ||
      line.starts_with("target triple = ")) {
    return NotIngested("LLVM IR");
  }
  if (line.starts_with(".version ") || line.starts_with(".target ") ||
      (line.starts_with("//") && head.find("\n.version ") != std::string_view::npos)) {
    return NotIngested("PTX assembly");
  }
  if (line.starts_with("digraph ") || line.starts_with("strict digraph ")) return NotIngested("Graphviz DOT graph");
  if (StartsWithNoCase(trimmed, "<!doctype html") || StartsWithNoCase(trimmed, "<html")) {
    return NotIngested("HTML page");
  }
  if (line.starts_with("http://") || line.starts_with("https://")) return NotIngested("URL");
  if (line.starts_with("buffer_id,buffer_name,")) return NotIngested("buffer info CSV (BufferInfoString)");
  if (line.starts_with("module @") || line.starts_with("module {") || line.starts_with("module attributes") ||
      line.starts_with("#loc") || line.starts_with("func.func")) {
    return NotIngested("MLIR");
  }
  if (line.starts_with("--xla_")) return NotIngested("XLA flag file");
  if (IsTextProtoLine(line)) return NotIngested("text protobuf");
  if (trimmed.starts_with('{') || trimmed.starts_with('[')) return NotIngested("JSON");
  return {FileKind::kUnknown, "unrecognised content; first line \"" + Excerpt(line) + "\""};
}

// Reasons for known non-memory artifacts, from the name alone (used when the content says nothing).
std::string NameReason(const DumpName& name) {
  std::string_view a = name.artifact;
  if (a == ".thunk_sequence.txt") return "GPU thunk sequence: not memory data";
  if (a.ends_with(".ll")) return "LLVM IR";
  if (a == ".ptx") return "PTX assembly";
  if (a.ends_with(".pbtxt") || a == ".textproto") return "text protobuf";
  if (a.ends_with(".pb")) return "binary protobuf";
  if (a == ".riegeli") return "riegeli records (binary protobufs)";
  if (a == ".dot") return "Graphviz DOT graph";
  if (a.ends_with(".html")) return "HTML page";
  if (a == ".url") return "URL";
  if (a == ".debug_options") return "non-default debug options";
  if (a == ".flagfile") return "XLA flag file";
  if (a == ".fdo_profile") return "FDO profile";
  if (a == ".mlir") return "MLIR";
  if (a == ".json") return "JSON";
  if (name.stage == "tpu_comp_env" || name.stage == "execution_options" || name.stage == "hlo_module_config" ||
      name.stage == "target_arguments") {
    return "compilation config (" + name.stage + ")";
  }
  return {};
}

// The content markers of each backend (BackendHintFromContent). Every marker holds a '_' or a '(' (its anchor:
// the first of them), so one pass that stops at those bytes alone finds every marker: an occurrence at p has its
// anchor at p + anchor. At a stop, the byte after it (or, for a marker that ends at its anchor, the byte before
// it) picks the few markers that could be there, from a table; only those are compared whole. `sm_` counts only
// as a CUDA architecture: followed by a digit, not preceded by an identifier character (`sm_80`, `sm_8.0`).
enum class MarkerClass : uint8_t { kGpu, kTpu, kCpu, kWeakTpu };
struct BackendMarker {
  std::string_view text;
  MarkerClass backend;
};
constexpr std::string_view kCudaArch = "sm_";
constexpr BackendMarker kBackendMarkers[] = {
    {"__cublas$", MarkerClass::kGpu},
    {"__cudnn$", MarkerClass::kGpu},
    {"__triton", MarkerClass::kGpu},
    {"operation_queue_id", MarkerClass::kGpu},
    {"gemm_backend_config", MarkerClass::kGpu},
    {"fusion_backend_config", MarkerClass::kGpu},
    {"force_earliest_schedule", MarkerClass::kGpu},
    {kCudaArch, MarkerClass::kGpu},
    {"tpu_custom_call", MarkerClass::kTpu},
    {":T(", MarkerClass::kTpu},
    {"scoped_memory_configs", MarkerClass::kTpu},
    {"outer_dimension_partitions", MarkerClass::kCpu},
    {"__xla_cpu_", MarkerClass::kCpu},
    {":S(1)", MarkerClass::kWeakTpu},
    {":S(2)", MarkerClass::kWeakTpu},
    {")S(1)", MarkerClass::kWeakTpu},
    {")S(2)", MarkerClass::kWeakTpu},
};
constexpr size_t AnchorOf(std::string_view marker) { return marker.find_first_of("_("); }

// For each anchor byte ('_' = 0, '(' = 1), the markers (bits of their index in kBackendMarkers) that may lie at
// a stop, by the byte after it and by the byte before it.
struct MarkerTables {
  std::array<std::array<uint32_t, 256>, 2> by_next{}, by_previous{};
};
constexpr MarkerTables BuildMarkerTables() {
  static_assert(std::size(kBackendMarkers) <= 32, "one bit a marker");
  MarkerTables t;
  for (size_t k = 0; k < std::size(kBackendMarkers); ++k) {
    const std::string_view m = kBackendMarkers[k].text;
    const size_t anchor = AnchorOf(m);
    const size_t which = m[anchor] == '_' ? 0 : 1;
    if (anchor + 1 < m.size()) {
      t.by_next[which][static_cast<uint8_t>(m[anchor + 1])] |= 1u << k;
    } else {
      t.by_previous[which][static_cast<uint8_t>(m[anchor - 1])] |= 1u << k;
    }
  }
  return t;
}
static_assert([] {
  for (const BackendMarker& m : kBackendMarkers) {
    const size_t anchor = AnchorOf(m.text);
    if (anchor == std::string_view::npos || (anchor == 0 && m.text.size() == 1)) return false;
  }
  return true;
}(), "every backend marker holds a '_' or a '(', and a byte beside it");
constexpr MarkerTables kMarkerTables = BuildMarkerTables();

// Whether `m` occurs in `text` with its anchor at `at`.
bool MarkerAt(std::string_view text, size_t at, std::string_view m) {
  const size_t anchor = AnchorOf(m);
  if (at < anchor) return false;
  const size_t begin = at - anchor;
  if (text.compare(begin, m.size(), m) != 0) return false;  // also when the text ends first
  if (m == kCudaArch) {
    const size_t digit = begin + kCudaArch.size();
    return (begin == 0 || !IsIdentChar(text[begin - 1])) && digit < text.size() && IsDigit(text[digit]);
  }
  return true;
}

}  // namespace

std::string_view BackendHintFromContent(std::string_view text) {
  bool found[4] = {false, false, false, false};
  for (size_t i = 0; i < text.size(); ++i) {
    size_t which;
    if (text[i] == '_') {
      which = 0;
    } else if (text[i] == '(') {
      which = 1;
    } else {
      continue;
    }
    uint32_t candidates = 0;
    if (i + 1 < text.size()) candidates |= kMarkerTables.by_next[which][static_cast<uint8_t>(text[i + 1])];
    if (i > 0) candidates |= kMarkerTables.by_previous[which][static_cast<uint8_t>(text[i - 1])];
    for (; candidates != 0; candidates &= candidates - 1) {
      const BackendMarker& m = kBackendMarkers[std::countr_zero(candidates)];
      if (!found[static_cast<size_t>(m.backend)] && MarkerAt(text, i, m.text)) {
        if (m.backend == MarkerClass::kGpu) return "gpu";  // gpu markers win over every other
        found[static_cast<size_t>(m.backend)] = true;
      }
    }
  }
  if (found[static_cast<size_t>(MarkerClass::kTpu)]) return "tpu";
  if (found[static_cast<size_t>(MarkerClass::kCpu)]) return "cpu";
  if (found[static_cast<size_t>(MarkerClass::kWeakTpu)]) return "tpu";
  return {};
}

FileKind KindClaimedByName(const DumpName& name) {
  std::string_view a = name.artifact;
  if (a == "-buffer-assignment.txt") return FileKind::kBufferAssignment;
  if (a == "-buffer-assignment-values.txt") return FileKind::kBufferAssignmentValues;
  if (a == "-live-range.txt") return FileKind::kLiveRange;
  if (a == "-memory-usage-report.txt") return FileKind::kMemoryUsageReport;
  if (a.ends_with("hlo-static-bundle-profile.txt")) return FileKind::kTpuBundleProfile;
  if (a.ends_with("hlo-static-per-bundle-utilization.txt")) return FileKind::kTpuPerBundleUtilization;
  if (a == ".txt" && name.xla_naming && IsModuleTextStage(name)) return FileKind::kHloModule;
  return FileKind::kUnknown;
}

SniffResult SniffFile(std::string_view file_name, std::string_view head) {
  SniffResult result;
  const DumpName name = ParseDumpName(file_name);
  const FileKind claimed = KindClaimedByName(name);
  result.name_claims_ingested_kind = IsIngestedKind(claimed);
  if (head.empty()) {
    result.kind = FileKind::kNotIngested;  // whatever the name says: an empty file holds nothing to ingest,
    result.reason = "empty file";          // and it is not a format error
    return result;
  }
  result.backend_hint = std::string(BackendHintFromContent(head));

  Verdict content = ClassifyContent(head, name, claimed);
  if (IsIngestedKind(content.kind)) {
    if (result.name_claims_ingested_kind && content.kind != claimed) {
      result.kind = FileKind::kUnknown;
      result.reason = "name says " + std::string(KindDescription(claimed)) + ", but the content is " +
                      std::string(KindDescription(content.kind));
    } else if (content.kind == FileKind::kHloModule && name.is_pass_dump) {
      result.kind = FileKind::kNotIngested;
      result.reason = "per-pass HLO dump (intermediate pass state)";
    } else if (content.kind == FileKind::kHloModule && name.xla_naming && !name.stage.empty() &&
               !IsModuleTextStage(name)) {
      result.kind = FileKind::kNotIngested;
      result.reason =
          "intermediate HLO stage '" + name.stage + "' (not the module's before/after-optimizations text)";
    } else {
      result.kind = content.kind;
    }
    return result;
  }
  if (result.name_claims_ingested_kind) {
    result.kind = FileKind::kUnknown;
    result.reason = "name says " + std::string(KindDescription(claimed)) + ", but the content is not: " +
                    content.reason;
    return result;
  }
  if (content.kind == FileKind::kNotIngested) {
    result.kind = FileKind::kNotIngested;
    result.reason = std::move(content.reason);
    return result;
  }
  if (std::string by_name = NameReason(name); !by_name.empty()) {
    result.kind = FileKind::kNotIngested;
    result.reason = std::move(by_name);
    return result;
  }
  result.kind = FileKind::kUnknown;
  result.reason = std::move(content.reason);
  return result;
}

}  // namespace xladb::ingest
