#include "ingest/text/dump_name.h"

#include <array>
#include <optional>

#include "ingest/text/printed_number.h"

namespace xladb::ingest {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!IsDigit(c)) return false;
  }
  return true;
}

// Exact non-negative decimal; nullopt for anything else, including overflow past int64.
std::optional<int64_t> ParseDigits(std::string_view s) {
  if (!AllDigits(s)) return std::nullopt;
  return ParseInt64(s);
}

// Length of the run of decimal digits at the start of `s`.
size_t LeadingDigits(std::string_view s) {
  size_t n = 0;
  while (n < s.size() && IsDigit(s[n])) ++n;
  return n;
}

// Compression suffixes a dump folder can carry (XLA writes `.hlo.pb.gz` itself; CI artifacts add the rest).
constexpr std::array<std::string_view, 4> kCompressionSuffixes = {".gz", ".zst", ".bz2", ".xz"};

// Artifact suffixes that a plain last-extension match would cut short, most specific first. Anything else is
// its last `.<ext>` (".txt", ".ll", ".ptx", ".pb", ".dot", ".html", ".url", ".debug_options", ".flagfile", …).
constexpr std::array<std::string_view, 14> kMultiPartArtifacts = {
    "-buffer-assignment-values.txt", "-buffer-assignment.txt",   "-live-range.txt",
    "-memory-usage-report.txt",      "-memory-usage-report.pb",  ".thunk_sequence.txt",
    ".autotune_results.pbtxt",       ".gpu_target_config.pbtxt", ".ir-no-opt.noinline.ll",
    ".ir-with-opt.noinline.ll",      ".ir-no-opt.ll",            ".ir-with-opt.ll",
    ".hlo.pb",                       ".top_level.html",
};

// Suffixes passed to FilenameFor by assorted call sites that are neither optimization stages nor pass dumps
// (§1.2, and the libtpu names of openxla/xla#7193). Matched as the whole last component.
constexpr std::array<std::string_view, 8> kOtherStages = {
    "after_spmd_partitioner", "before_config_assignment", "after_optimization",  "tpu_comp_env",
    "execution_options",      "hlo_module_config",        "target_arguments",    "before_mpmd_preprocess",
};

// The artifact at the end of `name`: a known multi-part suffix, else the last `.<ext>` when it looks like an
// extension (starts with a letter, 1-31 more of [A-Za-z0-9_-]); "" otherwise.
std::string_view MatchArtifact(std::string_view name) {
  for (std::string_view a : kMultiPartArtifacts) {
    if (name.ends_with(a)) return a;
  }
  size_t dot = name.rfind('.');
  if (dot == std::string_view::npos) return {};
  std::string_view ext = name.substr(dot + 1);
  if (ext.empty() || ext.size() > 32 || !IsLetter(ext.front())) return {};
  for (char c : ext) {
    if (!IsLetter(c) && !IsDigit(c) && c != '_' && c != '-') return {};
  }
  return name.substr(dot);
}

// In the stage matchers below, `r` is the part of the name after `module_<ID>` and before the artifact, and
// it starts with the '.' that follows the ID (".jit_f.sm_8.0_gpu_after_optimizations"). A component starts
// right after a '.'.
bool AtComponentStart(std::string_view r, size_t pos) { return pos > 0 && pos <= r.size() && r[pos - 1] == '.'; }

struct StageMatch {
  size_t start = 0;            // offset of the stage in r
  std::string_view backend;
  bool is_pass_dump = false;
};

// `…_gpu_after_optimizations`: sm_<maj>.<min>[a|f] (CUDA, contains a dot), gfx<arch> (ROCm), or another or
// empty capability (plain "gpu").
std::optional<StageMatch> MatchGpuStage(std::string_view r) {
  constexpr std::string_view kGpu = "_gpu_after_optimizations";
  if (!r.ends_with(kGpu)) return std::nullopt;
  const size_t h = r.size() - kGpu.size();
  // sm_<digits>.<digits>[af], read backwards from h.
  size_t p = h;
  if (p > 0 && (r[p - 1] == 'a' || r[p - 1] == 'f')) --p;
  size_t q = p;
  while (q > 0 && IsDigit(r[q - 1])) --q;
  if (q < p && q > 0 && r[q - 1] == '.') {
    size_t m = q - 1;
    size_t n = m;
    while (n > 0 && IsDigit(r[n - 1])) --n;
    if (n < m && n >= 3 && r.substr(n - 3, 3) == "sm_" && AtComponentStart(r, n - 3)) {
      return StageMatch{n - 3, "cuda", false};
    }
  }
  if (AtComponentStart(r, h)) return StageMatch{h, "gpu", false};  // "_gpu_after_optimizations" alone
  size_t dot = h == 0 ? std::string_view::npos : r.rfind('.', h - 1);
  if (dot == std::string_view::npos) return std::nullopt;
  std::string_view capability = r.substr(dot + 1, h - dot - 1);
  return StageMatch{dot + 1, capability.starts_with("gfx") ? "rocm" : "gpu", false};
}

// A whole-component stage ending `r`.
std::optional<StageMatch> MatchSuffixStage(std::string_view r, std::string_view stage, std::string_view backend) {
  if (r.size() <= stage.size() || !r.ends_with(stage)) return std::nullopt;
  size_t start = r.size() - stage.size();
  if (!AtComponentStart(r, start)) return std::nullopt;
  return StageMatch{start, backend, false};
}

// NNNN.<pipeline>.after_<pass>.before_<pass>: the leftmost component of 4+ digits followed by a dot-free
// pipeline name, `.after_`, and later `.before_` (pass names may contain dots, so the rest is taken whole).
std::optional<StageMatch> MatchBetweenPassesStage(std::string_view r) {
  for (size_t pos = 1; pos < r.size(); ++pos) {
    if (r[pos - 1] != '.') continue;
    size_t digits = LeadingDigits(r.substr(pos));
    if (digits < 4 || pos + digits >= r.size() || r[pos + digits] != '.') continue;
    size_t pipeline = pos + digits + 1;
    size_t pipeline_end = r.find('.', pipeline);
    if (pipeline_end == std::string_view::npos || pipeline_end == pipeline) continue;
    std::string_view tail = r.substr(pipeline_end);
    if (!tail.starts_with(".after_")) continue;
    if (tail.find(".before_", 7) == std::string_view::npos) continue;
    return StageMatch{pos, "", true};
  }
  return std::nullopt;
}

// NNNN.<pass>.<step> (DumpHloModuleDuringPassIfEnabled): the last three components are 4+ digits, a pass
// name and a step name (neither of which may look like `cl_<CL>`).
std::optional<StageMatch> MatchDuringPassStage(std::string_view r) {
  size_t d1 = r.rfind('.');
  if (d1 == std::string_view::npos || d1 == 0 || d1 + 1 == r.size()) return std::nullopt;
  size_t d2 = r.rfind('.', d1 - 1);
  if (d2 == std::string_view::npos || d2 == 0 || d2 + 1 == d1) return std::nullopt;
  size_t d3 = r.rfind('.', d2 - 1);
  if (d3 == std::string_view::npos) return std::nullopt;
  std::string_view step_number = r.substr(d3 + 1, d2 - d3 - 1);
  std::string_view step = r.substr(d1 + 1);
  if (step_number.size() < 4 || !AllDigits(step_number)) return std::nullopt;
  if (step.starts_with("cl_") && AllDigits(step.substr(3))) return std::nullopt;
  return StageMatch{d3 + 1, "", true};
}

std::optional<StageMatch> MatchStage(std::string_view r) {
  if (auto m = MatchGpuStage(r)) return m;
  if (auto m = MatchSuffixStage(r, "cpu_after_optimizations", "cpu")) return m;
  for (std::string_view stage : {"after_optimizations_after_buffer_assignment",
                                 "after_optimizations_before_buffer_assignment", "after_optimizations",
                                 "before_optimizations"}) {
    if (auto m = MatchSuffixStage(r, stage, "")) return m;
  }
  for (std::string_view stage : kOtherStages) {
    if (auto m = MatchSuffixStage(r, stage, "")) return m;
  }
  if (auto m = MatchBetweenPassesStage(r)) return m;
  return MatchDuringPassStage(r);
}

// libtpu LLO dump names: <timestamp_ns>-<unit>-<NN>-<what>. The unit is taken up to the first `-<digits>-`.
bool ParseLibtpuName(std::string_view name, DumpName* out) {
  size_t ts_len = LeadingDigits(name);
  if (ts_len == 0 || ts_len >= name.size() || name[ts_len] != '-') return false;
  std::optional<int64_t> ts = ParseDigits(name.substr(0, ts_len));
  if (!ts) return false;
  const size_t unit = ts_len + 1;
  for (size_t dash = name.find('-', unit + 1); dash != std::string_view::npos; dash = name.find('-', dash + 1)) {
    size_t digits = LeadingDigits(name.substr(dash + 1));
    size_t after = dash + 1 + digits;
    if (digits == 0 || after + 1 >= name.size() || name[after] != '-') continue;
    std::optional<int64_t> step = ParseDigits(name.substr(dash + 1, digits));
    if (!step) continue;
    out->timestamp_us = *ts / 1000;
    out->module_name = std::string(name.substr(unit, dash - unit));
    out->libtpu_step = *step;
    out->artifact = std::string(name.substr(after));
    out->xla_naming = true;
    return true;
  }
  return false;
}

}  // namespace

DumpName ParseDumpName(std::string_view file_name) {
  DumpName out;
  std::string_view name = file_name;
  for (std::string_view c : kCompressionSuffixes) {
    if (name.size() > c.size() && name.ends_with(c)) {
      out.compression = std::string(c);
      name.remove_suffix(c.size());
      break;
    }
  }

  // [<timestamp>.]module_<ID>.
  std::string_view rest = name;
  int64_t timestamp = -1;
  size_t ts_len = LeadingDigits(rest);
  if (ts_len > 0 && ts_len < rest.size() && rest[ts_len] == '.' &&
      rest.substr(ts_len + 1).starts_with("module_")) {
    timestamp = ParseDigits(rest.substr(0, ts_len)).value_or(-1);
    rest.remove_prefix(ts_len + 1);
  }
  std::optional<int64_t> id;
  size_t id_len = 0;
  if (rest.starts_with("module_")) {
    id_len = LeadingDigits(rest.substr(7));
    if (id_len >= 4 && 7 + id_len < rest.size() && rest[7 + id_len] == '.') id = ParseDigits(rest.substr(7, id_len));
  }
  if (!id) {
    if (ParseLibtpuName(name, &out)) return out;
    out.artifact = std::string(MatchArtifact(name));
    return out;
  }
  out.xla_naming = true;
  out.timestamp_us = timestamp;
  out.xla_module_id = *id;
  rest.remove_prefix(7 + id_len);  // keeps the '.' after the ID: ".<name>[.cl_<CL>].<suffix>"

  std::string_view artifact = MatchArtifact(rest);
  out.artifact = std::string(artifact);
  std::string_view r = rest.substr(0, rest.size() - artifact.size());

  std::string_view module_part = r;  // ".<name>[.cl_<CL>]" or "" when the name was dropped
  if (std::optional<StageMatch> stage = MatchStage(r)) {
    out.stage = std::string(r.substr(stage->start));
    out.backend = std::string(stage->backend);
    out.is_pass_dump = stage->is_pass_dump;
    module_part = r.substr(0, stage->start - 1);
  }
  if (module_part.starts_with('.')) module_part.remove_prefix(1);
  size_t cl = module_part.rfind("cl_");
  if (cl != std::string_view::npos && (cl == 0 || module_part[cl - 1] == '.') &&
      AllDigits(module_part.substr(cl + 3))) {
    out.changelist = std::string(module_part.substr(cl + 3));
    module_part = cl == 0 ? std::string_view() : module_part.substr(0, cl - 1);
  }
  out.module_name = std::string(module_part);
  return out;
}

bool IsModuleTextStage(const DumpName& name) {
  if (name.is_pass_dump) return false;
  return name.stage == "before_optimizations" || name.stage.ends_with("after_optimizations");
}

}  // namespace xladb::ingest
