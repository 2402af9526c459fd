#include "service/pages/page_frame.h"

#include "service/pages/html_text.h"

namespace xladb::service::pages {

extern const char kPageCss[];  // page.css, compiled in (service/CMakeLists.txt)
extern const char kPageJs[];   // page.js

std::string PageFrame(std::string_view title, std::string_view body) {
  std::string out;
  out.reserve(body.size() + 16384);
  out +=
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
      "script-src 'unsafe-inline'; img-src data:\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<meta name=\"generator\" "
      "content=\"xladb\">\n<title>";
  out += Html(title);
  out += "</title>\n<style>\n";
  out += kPageCss;
  out += "</style></head>\n<body>\n";
  out += body;
  out += "\n<script>\n";
  out += kPageJs;
  out += "</script>\n</body></html>\n";
  return out;
}

std::string PageLinks::Runs() const { return live() ? "/" : ""; }

std::string PageLinks::Run(std::string_view run) const {
  return live() ? "/run?name=" + UrlComponent(run) : "";
}

std::string PageLinks::Module(std::string_view run, std::string_view module, std::string_view stage,
                              int64_t xla_module_id, std::string_view folder) const {
  if (!live()) return "";
  std::string url = "/module?run=" + UrlComponent(run) + "&name=" + UrlComponent(module);
  if (!stage.empty()) url += "&stage=" + UrlComponent(stage);
  if (xla_module_id >= 0) url += "&xla_id=" + std::to_string(xla_module_id);
  if (!folder.empty()) url += "&folder=" + UrlComponent(folder);
  return url;
}

std::string PageLinks::Diff(std::string_view run, std::string_view baseline) const {
  return live() ? "/diff?run=" + UrlComponent(run) + "&baseline=" + UrlComponent(baseline) : "";
}

std::string PageLinks::Anchor(const std::string& url, const std::string& html_text) {
  if (url.empty()) return html_text;
  return "<a href=\"" + Html(url) + "\">" + html_text + "</a>";
}

}  // namespace xladb::service::pages
