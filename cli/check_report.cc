#include "cli/check_report.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cli/attribution_report.h"
#include "cli/markdown_text.h"
#include "ingest/text/visible_text.h"
#include "service/human_bytes.h"

namespace xladb::cli {
namespace {

using Module = v1::CheckedModule;
using service::HumanBytes;

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string StatusName(Module::Status s) { return Lower(Module::Status_Name(s)); }
std::string VerdictName(v1::CheckRunResponse::Verdict v) { return Lower(v1::CheckRunResponse::Verdict_Name(v)); }

using service::PercentChange;
using service::SignatureWithSharding;

// Unchanged modules are listed only when they are a reshaped pair (judged unchanged: the signatures changed) or
// have a budget (their headroom).
bool Listed(const Module& m) {
  return (m.status() != Module::UNCHANGED || m.reshaped() || m.has_budget()) && m.status() != Module::IGNORED;
}
// Modules with an explanation: regressed, accepted, and reshaped pairs whose figures differ.
bool Explained(const Module& m) { return !m.attribution_scope().empty(); }

// Each side's signature, with its sharding when it has one (service/human_bytes.h).
std::string BaselineSignature(const Module& m) {
  return SignatureWithSharding(m.baseline_entry_signature(), m.baseline_entry_sharding());
}
std::string CurrentSignature(const Module& m) { return SignatureWithSharding(m.entry_signature(), m.entry_sharding()); }

// "total_bytes 10.0 KiB of 8.0 KiB (125%): over budget" for a budgeted module, else "".
std::string Headroom(const Module& m) {
  if (!m.has_budget()) return {};
  const v1::BudgetUse& b = m.budget();
  return service::BudgetHeadroom(b.metric(), b.current(), b.max_bytes(), b.percent(), b.over(), b.warn());
}

// "(f32[8]) -> f32[8] → (f32[4]) -> f32[4]" for a reshaped pair (shardings included), else "".
std::string SignatureChange(const Module& m) {
  if (!m.reshaped()) return {};
  return BaselineSignature(m) + " → " + CurrentSignature(m);
}

std::string ModuleLabel(const Module& m) {
  std::string s = m.folder().empty() ? m.module() : m.folder() + "/" + m.module();
  const int64_t id = m.xla_module_id() >= 0 ? m.xla_module_id() : m.baseline_xla_module_id();
  if (id >= 0) s += "#" + std::to_string(id);
  return s;
}

std::string MetricCell(const v1::MetricDelta& d) {
  if (d.baseline() < 0 && d.current() < 0) return "–";
  if (d.baseline() < 0) return HumanBytes(d.current());
  if (d.current() < 0) return HumanBytes(d.baseline()) + " → –";
  if (d.delta() == 0) return HumanBytes(d.current());
  return HumanBytes(d.baseline()) + " → " + HumanBytes(d.current()) + " (" + HumanBytes(d.delta(), true) + ", " +
         PercentChange(d.baseline(), d.delta()) + ")";
}

int64_t ChangeSize(const Module& m) {
  int64_t size = 0;
  for (const auto& d : m.metrics()) size = std::max(size, std::abs(d.delta()));
  return size;
}

// Listed modules: regressed first, then by size of change.
std::vector<const Module*> Ordered(const v1::CheckRunResponse& r) {
  std::vector<const Module*> out;
  for (const auto& m : r.modules()) {
    if (Listed(m)) out.push_back(&m);
  }
  std::stable_sort(out.begin(), out.end(), [](const Module* a, const Module* b) {
    const bool ra = a->status() == Module::REGRESSED, rb = b->status() == Module::REGRESSED;
    if (ra != rb) return ra;
    return ChangeSize(*a) > ChangeSize(*b);
  });
  return out;
}

std::string SourceLabel(const std::string& source) { return source.empty() ? "(no source line)" : source; }

std::string SummaryCounts(const v1::CheckRunResponse& r) {
  if (!r.summary_line().empty()) return r.summary_line();
  const auto& s = r.summary();
  std::string out = std::to_string(s.regressed()) + (s.regressed() == 1 ? " module" : " modules") + " regressed, " +
                    std::to_string(s.improved()) + " improved, " + std::to_string(s.unchanged()) + " unchanged";
  if (s.added()) out += ", " + std::to_string(s.added()) + " added";
  if (s.removed()) out += ", " + std::to_string(s.removed()) + " removed";
  if (s.ambiguous()) out += ", " + std::to_string(s.ambiguous()) + " ambiguous";
  if (s.accepted()) out += ", " + std::to_string(s.accepted()) + " accepted";
  if (s.ignored()) out += ", " + std::to_string(s.ignored()) + " ignored";
  return out;
}

// ---------------------------------------------------------------------------------------------------
// JSON (docs/check-json.md)


std::string RenderJson(const v1::CheckRunResponse& r) {
  Json j;
  j["verdict"] = VerdictName(r.verdict());
  j["reason"] = r.reason();
  j["run"] = r.run_name();
  j["baseline"] = OrNull(r.baseline_run_name());
  j["baseline_selected_by"] = r.baseline_selected_by();
  j["metrics"] = Json::array();
  for (const auto& m : r.metrics()) j["metrics"].push_back(m);
  const auto& s = r.summary();
  j["summary"] = {{"regressed", s.regressed()}, {"improved", s.improved()}, {"unchanged", s.unchanged()},
                  {"added", s.added()},         {"removed", s.removed()},   {"ambiguous", s.ambiguous()},
                  {"accepted", s.accepted()},   {"ignored", s.ignored()},   {"reshaped", s.reshaped()},
                  {"over_budget", s.over_budget()}, {"within_budget", s.within_budget()}};
  j["modules"] = Json::array();
  for (const auto& m : r.modules()) {
    Json o;
    o["module"] = m.module();
    o["stage"] = m.stage();
    o["folder"] = m.folder();
    o["entry_signature"] = m.entry_signature();
    o["xla_module_id"] = OrNull(m.xla_module_id());
    o["baseline_xla_module_id"] = OrNull(m.baseline_xla_module_id());
    o["fingerprint"] = m.fingerprint();
    o["baseline_fingerprint"] = m.baseline_fingerprint();
    o["matched_by"] = OrNull(m.matched_by());
    o["status"] = StatusName(m.status());
    if (m.status() == Module::ACCEPTED) o["accepted_reason"] = m.accepted_reason();
    Json metrics = Json::object();
    for (const auto& d : m.metrics()) {
      metrics[d.metric()] = {{"baseline", OrNull(d.baseline())}, {"current", OrNull(d.current())},
                             {"delta", d.delta()}, {"regressed", d.regressed()}};
    }
    o["metrics"] = std::move(metrics);
    AddAttributionJson(AttributionOf(m), &o);
    o["baseline_entry_signature"] = m.baseline_entry_signature();
    o["reshaped"] = m.reshaped();
    o["entry_sharding"] = m.entry_sharding();
    o["baseline_entry_sharding"] = m.baseline_entry_sharding();
    if (m.has_budget()) {
      const v1::BudgetUse& b = m.budget();
      o["budget"] = {{"metric", b.metric()},
                     {"max_bytes", b.max_bytes()},
                     {"current", OrNull(b.current())},
                     {"percent", b.current() < 0 ? Json(nullptr) : Json(std::round(b.percent() * 10) / 10)},
                     {"warn", b.warn()}};
    } else {
      o["budget"] = nullptr;
    }
    j["modules"].push_back(std::move(o));
  }
  j["retraces"] = Json::array();
  for (const auto& c : r.retraces()) {
    j["retraces"].push_back({{"module", c.module()},
                             {"stage", c.stage()},
                             {"folder", c.folder()},
                             {"baseline_compiles", c.baseline_compiles()},
                             {"current_compiles", c.current_compiles()},
                             {"failed", c.failed()}});
  }
  j["by_name"] = Json::array();
  for (const auto& n : r.by_name()) {
    Json metrics = Json::object();
    for (const auto& m : n.metrics()) {
      metrics[m.metric()] = {{"baseline_max", OrNull(m.baseline_max())}, {"current_max", OrNull(m.current_max())},
                             {"baseline_sum", OrNull(m.baseline_sum())}, {"current_sum", OrNull(m.current_sum())}};
    }
    j["by_name"].push_back({{"module", n.module()},
                            {"stage", n.stage()},
                            {"folder", n.folder()},
                            {"compiles", {{"baseline", n.baseline_compiles()}, {"current", n.current_compiles()}}},
                            {"metrics", std::move(metrics)}});
  }
  j["error_files"] = Json::array();
  for (const auto& f : r.error_files()) {
    j["error_files"].push_back({{"run", f.run_name()},
                                {"path", f.path()},
                                {"kind", f.kind()},
                                {"reason", f.reason()},
                                {"module", OrNull(f.module())},
                                {"xla_module_id", OrNull(f.xla_module_id())},
                                {"judged", f.judged()}});
  }
  j["budget_warnings"] = Json::array();
  for (const auto& w : r.budget_warnings()) j["budget_warnings"].push_back(w);
  return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

// ---------------------------------------------------------------------------------------------------
// Markdown

// Every value from a dump, a label or a run name goes through cli/markdown_text.h: code spans for names,
// escaped text for sentences (the server's reasons quote names too). Numbers and xladb's own words go as
// they are.
std::string VerdictLine(const v1::CheckRunResponse& r) {
  std::string verdict = v1::CheckRunResponse::Verdict_Name(r.verdict());
  std::string line = "**xladb check: " + verdict + "**: ";
  if (r.baseline_run_name().empty()) {  // a budgets-only gate, or no baseline found
    return line + (r.verdict() == v1::CheckRunResponse::INCONCLUSIVE ? MarkdownText(r.reason()) : SummaryCounts(r)) +
           "\n";
  }
  line += SummaryCounts(r) + " against " + MarkdownCode(r.baseline_run_name());
  if (r.verdict() == v1::CheckRunResponse::INCONCLUSIVE) line += " (" + MarkdownText(r.reason()) + ")";
  return line + "\n";
}

std::string DetailsBlock(const Module& m) {
  // The summary line is raw HTML, which Markdown does not parse: HTML-escaped, in <code> (no links or
  // mentions there on GitHub).
  std::string out = "<details><summary>" + HtmlCodeInMarkdown(ModuleLabel(m)) + " (" +
                    HtmlCodeInMarkdown(m.stage()) + "): " + StatusName(m.status()) + "</summary>\n\n";
  if (m.status() == Module::ACCEPTED) out += "Accepted: " + MarkdownText(m.accepted_reason()) + "\n\n";
  if (m.reshaped()) {
    out += "Reshaped: " + MarkdownCode(BaselineSignature(m)) + " → " + MarkdownCode(CurrentSignature(m)) + "\n\n";
  }
  out += AttributionMarkdown(AttributionOf(m), "--attribution N");
  return out + "\n</details>\n\n";
}

std::string RenderMarkdown(const v1::CheckRunResponse& r, size_t max_bytes) {
  std::string out = VerdictLine(r) + "\n";
  const std::vector<const Module*> listed = Ordered(r);
  std::string left_out;
  if (!listed.empty()) {
    std::string header = "| status | module | stage |";
    std::string rule = "|---|---|---|";
    for (const auto& m : r.metrics()) {
      header += " " + m + " |";
      rule += "---|";
    }
    header += " matched by |\n";
    rule += "---|\n";
    out += header + rule;
    size_t rows = 0;
    // Room kept for the details blocks' opening and the closing note.
    const size_t table_budget = max_bytes - std::min(max_bytes, size_t{4096});
    for (const Module* m : listed) {
      std::string row = "| " + StatusName(m->status()) + " | " + MarkdownCodeInCell(ModuleLabel(*m)) + " | " +
                        MarkdownCodeInCell(m->stage()) + " |";
      for (const auto& d : m->metrics()) row += " " + MetricCell(d) + " |";
      row += " " + MarkdownText(m->matched_by()) + " |\n";
      if (out.size() + row.size() > table_budget / 2 && rows > 0) break;
      out += row;
      ++rows;
    }
    out += "\n";
    if (rows < listed.size()) left_out += std::to_string(listed.size() - rows) + " table rows";
    size_t blocks = 0, wanted = 0;
    for (const Module* m : listed) {
      if (!Explained(*m)) continue;
      ++wanted;
      std::string block = DetailsBlock(*m);
      if (out.size() + block.size() > table_budget) continue;
      out += block;
      ++blocks;
    }
    if (blocks < wanted) {
      left_out += std::string(left_out.empty() ? "" : " and ") + std::to_string(wanted - blocks) + " module details";
    }
  }
  std::string budgets;
  for (const auto& m : r.modules()) {
    if (!m.has_budget()) continue;
    // Headroom is xladb's words, a known metric name and numbers: shown as they are.
    budgets += "- " + MarkdownCode(ModuleLabel(m)) + " (" + MarkdownCode(m.stage()) + "): " + Headroom(m) + "\n";
  }
  if (!budgets.empty() && out.size() + budgets.size() < max_bytes - std::min(max_bytes, size_t{2048})) {
    out += "**Budgets:**\n\n" + budgets + "\n";
  } else if (!budgets.empty()) {
    left_out += std::string(left_out.empty() ? "" : " and ") + "the budgets";
  }
  std::string reshaped;
  for (const auto& m : r.modules()) {
    if (!m.reshaped()) continue;
    reshaped += "- " + MarkdownCode(ModuleLabel(m)) + " (" + MarkdownCode(m.stage()) + "), was #" +
                std::to_string(m.baseline_xla_module_id()) + ": " + MarkdownCode(BaselineSignature(m)) + " → " +
                MarkdownCode(CurrentSignature(m)) + "\n";
  }
  if (!reshaped.empty() && out.size() + reshaped.size() < max_bytes - std::min(max_bytes, size_t{2048})) {
    out += "**Reshaped (same jit name, other entry signature or sharding):**\n\n" + reshaped + "\n";
  } else if (!reshaped.empty()) {
    left_out += std::string(left_out.empty() ? "" : " and ") + "the reshaped pairs";
  }
  if (r.by_name_size() > 0) {
    std::string section = "**By jit name:**\n\n";
    for (const auto& n : r.by_name()) {
      // The name in a code span; the rest is xladb's own words and numbers.
      const std::string name = n.folder().empty() ? n.module() : n.folder() + "/" + n.module();
      std::string line = RollupText(n, "\x01");
      line.replace(line.find('\x01'), 1, MarkdownCode(name));
      section += "- " + line + "\n";
      if (out.size() + section.size() > max_bytes - std::min(max_bytes, size_t{1536})) {
        section += "- …\n";
        break;
      }
    }
    out += section + "\n";
  }
  if (r.retraces_size() > 0) {
    std::string section = "**Compile counts that changed:**\n\n";
    for (const auto& c : r.retraces()) {
      section += "- " + MarkdownCode(c.module()) + " (" + MarkdownCode(c.stage()) + "): compiled " +
                 std::to_string(c.current_compiles()) + " times, was " + std::to_string(c.baseline_compiles()) +
                 (c.failed() ? " (fails the gate)" : "") + "\n";
      if (out.size() + section.size() > max_bytes - std::min(max_bytes, size_t{1024})) {
        section += "- …\n";
        break;
      }
    }
    out += section + "\n";
  }
  if (!left_out.empty()) {
    out += "_Truncated to stay under " + std::to_string(max_bytes / 1024) + " KiB: " + left_out +
           " left out; `xladb check --format json` has everything._\n";
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------
// JUnit

std::string Xml(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') break;  // not allowed in XML 1.0
        out += static_cast<char>(c);
    }
  }
  return out;
}

std::string MetricSummary(const Module& m) {
  std::string s;
  for (const auto& d : m.metrics()) s += (s.empty() ? "" : "; ") + d.metric() + " " + MetricCell(d);
  return s;
}

std::string RenderJunit(const v1::CheckRunResponse& r) {
  const std::string suite = "xladb check " + r.run_name() + " vs " +
                            (r.baseline_run_name().empty() ? std::string("(no baseline)") : r.baseline_run_name());
  std::string cases;
  int64_t tests = 0, failures = 0, errors = 0, skipped = 0;
  if (r.baseline_run_name().empty() && r.verdict() == v1::CheckRunResponse::INCONCLUSIVE) {
    ++tests;
    ++errors;
    cases += "    <testcase classname=\"xladb\" name=\"baseline\"><error message=\"" + Xml(r.reason()) + "\"/></testcase>\n";
  }
  for (const auto& m : r.modules()) {
    ++tests;
    std::string cls = "xladb." + (m.stage().empty() ? std::string("unknown") : m.stage()) +
                      (m.folder().empty() ? "" : "." + m.folder());
    std::string name = m.module() + "#" + std::to_string(m.xla_module_id() >= 0 ? m.xla_module_id() : m.baseline_xla_module_id());
    cases += "    <testcase classname=\"" + Xml(cls) + "\" name=\"" + Xml(name) + "\">";
    std::string system_out;
    switch (m.status()) {
      case Module::REGRESSED: {
        ++failures;
        std::string text = MetricSummary(m) + "\n";
        for (const auto& l : m.by_source()) {
          text += HumanBytes(l.delta(), true) + " from " + SourceLabel(l.source()) + " (" +
                  std::to_string(l.buffers()) + (l.buffers() == 1 ? " buffer)\n" : " buffers)\n");
        }
        if (m.reshaped()) text = "reshaped: " + SignatureChange(m) + "\n" + text;
        cases += "<failure message=\"" + Xml("regressed: " + MetricSummary(m)) + "\">" + Xml(text) + "</failure>";
        break;
      }
      case Module::AMBIGUOUS:
        ++errors;
        cases += "<error message=\"" + Xml("ambiguous match (by order): " + MetricSummary(m)) + "\"/>";
        break;
      case Module::RESHAPED:
        ++skipped;
        cases += "<skipped message=\"" + Xml("reshaped: " + SignatureChange(m) + "; " + MetricSummary(m)) + "\"/>";
        break;
      case Module::ADDED:
      case Module::REMOVED:
      case Module::IGNORED:
        ++skipped;
        cases += "<skipped message=\"" + StatusName(m.status()) + "\"/>";
        break;
      case Module::ACCEPTED:
        system_out = "accepted: " + m.accepted_reason() + "; " + MetricSummary(m);
        break;
      case Module::OVER_BUDGET:
        ++failures;
        cases += "<failure message=\"" + Xml("over budget: " + Headroom(m)) + "\">" + Xml(MetricSummary(m)) +
                 "</failure>";
        break;
      default:
        break;
    }
    // Every budgeted module's headroom, whatever its status (the over-budget one says it in its failure).
    if (m.has_budget() && m.status() != Module::OVER_BUDGET) {
      system_out += (system_out.empty() ? "" : "\n") + ("budget: " + Headroom(m));
    }
    if (!system_out.empty()) cases += "<system-out>" + Xml(system_out) + "</system-out>";
    cases += "</testcase>\n";
  }
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n  <testsuite name=\"" + Xml(suite) +
         "\" tests=\"" + std::to_string(tests) + "\" failures=\"" + std::to_string(failures) + "\" errors=\"" +
         std::to_string(errors) + "\" skipped=\"" + std::to_string(skipped) + "\">\n" + cases +
         "  </testsuite>\n</testsuites>\n";
}

// ---------------------------------------------------------------------------------------------------
// Table

// For a terminal: names with their control characters and bidi controls shown as escapes.
std::string Shown(const std::string& s) { return ingest::EscapeControlCharacters(s); }

std::string RenderTable(const v1::CheckRunResponse& r) {
  std::string out = "xladb check: " + v1::CheckRunResponse::Verdict_Name(r.verdict()) + ": " + Shown(r.reason()) + "\n";
  for (const Module* m : Ordered(r)) {
    out += "\n" + StatusName(m->status()) + "  " + Shown(ModuleLabel(*m)) + "  " + Shown(m->stage()) +
           (m->matched_by().empty() ? "" : "  (matched by " + Shown(m->matched_by()) + ")") + "\n";
    if (m->reshaped()) out += "    signature: " + Shown(SignatureChange(*m)) + "\n";
    if (m->has_budget()) out += "    budget: " + Headroom(*m) + "\n";
    for (const auto& d : m->metrics()) out += "    " + d.metric() + ": " + MetricCell(d) + (d.regressed() ? "  REGRESSED" : "") + "\n";
    if (!Explained(*m)) continue;
    if (m->status() == Module::ACCEPTED) out += "    accepted: " + Shown(m->accepted_reason()) + "\n";
    out += AttributionText(AttributionOf(*m), "    ");
  }
  for (const auto& c : r.retraces()) {
    out += "\ncompiles: " + Shown(c.module()) + " (" + Shown(c.stage()) + ") " + std::to_string(c.current_compiles()) +
           ", was " + std::to_string(c.baseline_compiles()) + (c.failed() ? "  FAILS" : "") + "\n";
  }
  if (r.by_name_size() > 0) out += "\nby jit name:\n";
  for (const auto& n : r.by_name()) {
    out += "  " + Shown(RollupText(n, n.folder().empty() ? n.module() : n.folder() + "/" + n.module())) + " (" +
           Shown(n.stage()) + ")\n";
  }
  for (const auto& f : r.error_files()) {
    const std::string module = f.module().empty() ? std::string() : " (" + f.module() + "#" +
                               std::to_string(f.xla_module_id()) + ")";
    out += "\n" + std::string(f.judged() ? "missing data: " : "error (not judged): ") + Shown(f.run_name()) + ": " +
           Shown(f.path()) + Shown(module) + ": " + Shown(f.reason()) + "\n";
  }
  return out;
}

}  // namespace

std::string RollupText(const v1::NameRollup& n, const std::string& shown_name) {
  for (const auto& m : n.metrics()) {
    if (m.metric() == n.headline_metric()) {
      return service::RollupLine(shown_name, n.baseline_compiles(), n.current_compiles(), m.metric(), m.baseline_max(),
                                 m.current_max());
    }
  }
  return shown_name + ": " + std::to_string(n.baseline_compiles()) + " → " + std::to_string(n.current_compiles()) +
         (n.current_compiles() == 1 ? " compile" : " compiles");
}

std::optional<CheckReportFormat> ParseCheckReportFormat(std::string_view name) {
  if (name == "table") return CheckReportFormat::kTable;
  if (name == "json") return CheckReportFormat::kJson;
  if (name == "markdown") return CheckReportFormat::kMarkdown;
  if (name == "junit") return CheckReportFormat::kJunit;
  return std::nullopt;
}

std::string RenderCheckReport(const v1::CheckRunResponse& report, CheckReportFormat format, size_t max_markdown_bytes) {
  switch (format) {
    case CheckReportFormat::kJson: return RenderJson(report);
    case CheckReportFormat::kMarkdown: return RenderMarkdown(report, max_markdown_bytes);
    case CheckReportFormat::kJunit: return RenderJunit(report);
    case CheckReportFormat::kTable: break;
  }
  return RenderTable(report);
}

}  // namespace xladb::cli
