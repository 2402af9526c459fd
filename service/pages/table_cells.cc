#include "service/pages/table_cells.h"

#include <ctime>

#include "service/human_bytes.h"
#include "service/pages/html_text.h"

namespace xladb::service::pages {

std::string BytesCell(int64_t bytes) {
  if (bytes < 0) return "<td class=\"n\" data-v=\"-1\">–</td>";
  return "<td class=\"n b\" data-v=\"" + std::to_string(bytes) + "\">" + Html(HumanBytes(bytes)) + "</td>";
}

std::string DeltaCell(int64_t delta) {
  const char* cls = delta > 0 ? "n b up" : delta < 0 ? "n b down" : "n b";
  return std::string("<td class=\"") + cls + "\" data-v=\"" + std::to_string(delta) + "\">" +
         Html(HumanBytes(delta, true)) + "</td>";
}

std::string IntCell(int64_t n) {
  if (n < 0) return "<td class=\"n\" data-v=\"-1\">–</td>";
  return "<td class=\"n\" data-v=\"" + std::to_string(n) + "\">" + std::to_string(n) + "</td>";
}

std::string TextCell(std::string_view text, bool code) {
  return std::string(code ? "<td class=\"code\">" : "<td>") + Html(text) + "</td>";
}

std::string HeaderCell(std::string_view label, bool sortable, bool numeric) {
  std::string th = "<th";
  if (numeric) th += " class=\"n\"";
  if (sortable) th += " data-sort=\"1\"";
  return th + ">" + Html(label) + "</th>";
}

std::string RunTimeText(int64_t us) {
  if (us == 0) return "";
  const std::time_t seconds = static_cast<std::time_t>(us / 1000000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%SZ", &tm);
  return buf;
}

std::string LeftOutNote(int64_t shown, int64_t total, std::string_view what, std::string_view how_to_see_all) {
  if (shown >= total) return "";
  return "<p class=\"note left-out\">Showing " + std::to_string(shown) + " of " + std::to_string(total) + " " +
         Html(what) + " (the largest first); " + Html(how_to_see_all) + ".</p>\n";
}

}  // namespace xladb::service::pages
