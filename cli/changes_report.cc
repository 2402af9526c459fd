#include "cli/changes_report.h"

#include <cstdlib>

#include "cli/attribution_report.h"
#include "cli/markdown_text.h"
#include "ingest/text/visible_text.h"
#include "service/human_bytes.h"

namespace xladb::cli {
namespace {

using service::HumanBytes;
using service::PercentChange;
using service::SignatureWithSharding;
using Change = v1::ChangePoint;


std::string Shown(const std::string& s) { return ingest::EscapeControlCharacters(s); }

std::string LevelName(Change::Level level) { return level == Change::NAME ? "name" : "identity"; }

std::string ModuleLabel(const Change& c) {
  std::string s = c.folder().empty() ? c.module() : c.folder() + "/" + c.module();
  if (c.level() == Change::IDENTITY && c.xla_module_id() >= 0) s += "#" + std::to_string(c.xla_module_id());
  return s;
}

// "10.0 MiB → 12.0 MiB (+2.0 MiB, +20%)".
std::string ValueChange(const Change& c) {
  return HumanBytes(c.before()) + " → " + HumanBytes(c.after()) + " (" + HumanBytes(c.delta(), true) + ", " +
         PercentChange(c.before(), c.delta()) + ")";
}

// What else changed with the value: the signature of the largest compile, the number of compiles. `code`
// writes a name or signature (a code span in Markdown), `text` xladb's own words.
template <typename Code, typename Text>
std::string Context(const Change& c, Code code, Text text) {
  const std::string was = SignatureWithSharding(c.previous_entry_signature(), c.previous_entry_sharding());
  const std::string now = SignatureWithSharding(c.entry_signature(), c.entry_sharding());
  std::string out;
  if (c.level() == Change::NAME && was != now) out = text("signature ") + code(was) + text(" → ") + code(now);
  if (c.compiles() > 1 || c.previous_compiles() > 1) {
    if (!out.empty()) out += text("; ");
    out += text((c.level() == Change::NAME ? "the largest of " : "the largest of this identity's ") +
                std::to_string(c.compiles()) + (c.compiles() == 1 ? " compile" : " compiles") + " (was " +
                std::to_string(c.previous_compiles()) + ")");
  }
  return out;
}

std::string TableContext(const Change& c) { return Context(c, Shown, [](const std::string& s) { return s; }); }
std::string MarkdownContext(const Change& c) {
  return Context(c, [](const std::string& s) { return MarkdownCode(s); }, [](const std::string& s) { return MarkdownText(s); });
}

std::string Headline(const v1::ListChangesResponse& r, const ChangesAsked& asked, bool markdown) {
  auto code = [&](const std::string& s) { return markdown ? MarkdownCode(s) : Shown(s); };
  const int64_t n = r.change_count();
  std::string line = std::to_string(n) + (n == 1 ? " change" : " changes");
  if (!asked.module.empty()) line += " of " + code(asked.module);
  if (!asked.since_run.empty()) {
    line += " since " + code(asked.since_run);
  } else if (asked.last_n > 0) {
    line += " in the last " + std::to_string(r.runs()) + (r.runs() == 1 ? " run" : " runs");
  } else {
    line += " in " + std::to_string(r.runs()) + (r.runs() == 1 ? " run" : " runs");
  }
  if (!r.first_run().empty()) {
    line += r.first_run() == r.last_run() ? " (" + code(r.first_run()) + ")"
                                          : " (" + code(r.first_run()) + " … " + code(r.last_run()) + ")";
  }
  return line;
}

// "12 smaller change points not listed" (the later ones, for one module's history, which runs oldest first).
std::string NotListed(const v1::ListChangesResponse& r, const ChangesAsked& asked) {
  const int64_t n = r.change_count() - r.changes_size();
  return std::to_string(n) + (asked.module.empty() ? " smaller" : " later") +
         (n == 1 ? " change point" : " change points") + " not listed";
}

std::string FirstAboveLine(const v1::FirstAbove& a, bool markdown) {
  auto code = [&](const std::string& s) { return markdown ? MarkdownCode(s) : Shown(s); };
  std::string module = a.folder().empty() ? a.module() : a.folder() + "/" + a.module();
  std::string line = code(module) + " (" + code(a.stage()) + ") " + a.metric() + " above " + HumanBytes(a.bytes());
  if (!a.since_run().empty()) {
    line += " since " + code(a.since_run()) + " (" + HumanBytes(a.since_value()) + ")";
    if (a.first_run() != a.since_run()) line += ", first at " + code(a.first_run()) + " (" + HumanBytes(a.first_value()) + ")";
  } else {
    line += " first at " + code(a.first_run()) + " (" + HumanBytes(a.first_value()) + "), not now";
  }
  return line + "; " + HumanBytes(a.latest_value()) + " at " + code(a.latest_run());
}

// ---------------------------------------------------------------------------------------------------
// JSON (docs/changes-json.md)

std::string RenderJson(const v1::ListChangesResponse& r) {
  Json j;
  j["changes"] = Json::array();
  for (const Change& c : r.changes()) {
    Json o;
    o["run"] = c.run_name();
    o["previous_run"] = c.previous_run_name();
    o["level"] = LevelName(c.level());
    o["module"] = c.module();
    o["stage"] = c.stage();
    o["folder"] = c.folder();
    o["xla_module_id"] = OrNull(c.xla_module_id());
    o["previous_xla_module_id"] = OrNull(c.previous_xla_module_id());
    o["metric"] = c.metric();
    o["before"] = c.before();
    o["after"] = c.after();
    o["delta"] = c.delta();
    AddAttributionJson(AttributionOf(c), &o);
    o["run_time_us"] = c.run_time_us();
    o["previous_run_time_us"] = c.previous_run_time_us();
    o["entry_signature"] = c.entry_signature();
    o["previous_entry_signature"] = c.previous_entry_signature();
    o["entry_sharding"] = c.entry_sharding();
    o["previous_entry_sharding"] = c.previous_entry_sharding();
    o["compiles"] = c.compiles();
    o["previous_compiles"] = c.previous_compiles();
    j["changes"].push_back(std::move(o));
  }
  j["change_count"] = r.change_count();
  j["runs"] = r.runs();
  j["first_run"] = OrNull(r.first_run());
  j["last_run"] = OrNull(r.last_run());
  j["metrics"] = Json::array();
  for (const auto& m : r.metrics()) j["metrics"].push_back(m);
  j["first_above"] = Json::array();
  for (const auto& a : r.first_above()) {
    j["first_above"].push_back({{"module", a.module()},
                                {"stage", a.stage()},
                                {"folder", a.folder()},
                                {"metric", a.metric()},
                                {"bytes", a.bytes()},
                                {"first_run", a.first_run()},
                                {"first_value", a.first_value()},
                                {"since_run", OrNull(a.since_run())},
                                {"since_value", a.since_run().empty() ? Json(nullptr) : Json(a.since_value())},
                                {"latest_run", a.latest_run()},
                                {"latest_value", a.latest_value()}});
  }
  j["notes"] = Json::array();
  for (const auto& n : r.notes()) j["notes"].push_back(n);
  return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

// ---------------------------------------------------------------------------------------------------
// Table

std::string RenderTable(const v1::ListChangesResponse& r, const ChangesAsked& asked) {
  std::string out = "xladb changes: " + Headline(r, asked, false) + "\n";
  for (const Change& c : r.changes()) {
    out += '\n';
    out += Shown(c.run_name()) + "  " + Shown(ModuleLabel(c)) + "  " + Shown(c.stage()) +
           (c.level() == Change::NAME ? "  (jit name)" : "") + "\n";
    out += "    " + c.metric() + ": " + ValueChange(c) + " since " + Shown(c.previous_run_name()) + "\n";
    if (std::string context = TableContext(c); !context.empty()) out += "    " + context + "\n";
    if (AttributionOf(c).explained()) out += AttributionText(AttributionOf(c), "    ");
  }
  if (r.change_count() > r.changes_size()) {
    out += '\n' + NotListed(r, asked) + " (--limit 0 lists all)\n";
  }
  if (r.first_above_size() > 0) out += "\n";
  for (const auto& a : r.first_above()) out += FirstAboveLine(a, false) + "\n";
  return out;
}

// ---------------------------------------------------------------------------------------------------
// Markdown

std::string RenderMarkdown(const v1::ListChangesResponse& r, const ChangesAsked& asked, size_t max_bytes) {
  std::string out = "**xladb changes: " + Headline(r, asked, true) + "**\n\n";
  std::string left_out;
  const size_t budget = max_bytes - std::min(max_bytes, size_t{4096});
  if (r.changes_size() > 0) {
    out += "| run | module | stage | metric | before → after | since |\n|---|---|---|---|---|---|\n";
    int rows = 0;
    for (const Change& c : r.changes()) {
      std::string row = "| " + MarkdownCodeInCell(c.run_name()) + " | " + MarkdownCodeInCell(ModuleLabel(c)) +
                        (c.level() == Change::NAME ? " (jit name)" : "") + " | " + MarkdownCodeInCell(c.stage()) +
                        " | " + c.metric() + " | " + ValueChange(c) + " | " + MarkdownCodeInCell(c.previous_run_name()) +
                        " |\n";
      if (out.size() + row.size() > budget / 2 && rows > 0) break;
      out += row;
      ++rows;
    }
    if (rows < r.changes_size()) left_out += std::to_string(r.changes_size() - rows) + " more change points; ";
    out += "\n";
    int details = 0, explained = 0;
    for (const Change& c : r.changes()) {
      if (!AttributionOf(c).explained()) continue;
      ++explained;
      std::string block = "<details><summary>" + HtmlCodeInMarkdown(ModuleLabel(c)) + " (" +
                          HtmlCodeInMarkdown(c.stage()) + ") " + c.metric() + " at " +
                          HtmlCodeInMarkdown(c.run_name()) + ": " + HumanBytes(c.delta(), true) + "</summary>\n\n";
      if (std::string context = MarkdownContext(c); !context.empty()) block += context + "\n\n";
      block += AttributionMarkdown(AttributionOf(c), "--attribution N") + "\n</details>\n\n";
      if (out.size() + block.size() > budget) continue;
      out += block;
      ++details;
    }
    if (details < explained) left_out += std::to_string(explained - details) + " explanations; ";
  }
  if (r.change_count() > r.changes_size()) {
    out += NotListed(r, asked) + " (`--limit 0` lists all).\n\n";
  }
  for (const auto& a : r.first_above()) {
    std::string line = "- " + FirstAboveLine(a, true) + "\n";
    if (out.size() + line.size() > budget) {
      left_out += "some first-above lines; ";
      break;
    }
    out += line;
  }
  if (r.first_above_size() > 0) out += "\n";
  for (const auto& n : r.notes()) {
    std::string line = '_' + MarkdownText(n) + "_\n\n";
    if (out.size() + line.size() > budget) break;
    out += line;
  }
  if (!left_out.empty()) {
    left_out.resize(left_out.size() - 2);
    out += "Left out to stay under " + std::to_string(max_bytes / 1024) + " KiB: " + left_out +
           " (`xladb changes --format json` has everything).\n";
  }
  return out;
}

}  // namespace

std::string RenderChangesReport(const v1::ListChangesResponse& changes, const ChangesAsked& asked,
                                ChangesReportFormat format, size_t max_markdown_bytes) {
  switch (format) {
    case ChangesReportFormat::kJson: return RenderJson(changes);
    case ChangesReportFormat::kMarkdown: return RenderMarkdown(changes, asked, max_markdown_bytes);
    case ChangesReportFormat::kTable: break;
  }
  return RenderTable(changes, asked);
}

}  // namespace xladb::cli
