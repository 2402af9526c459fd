#include "service/pages/page_frame.h"

#include <openssl/evp.h>
#include <openssl/sha.h>

#include "service/pages/html_text.h"

namespace xladb::service::pages {

extern const char kPageCss[];  // page.css, compiled in (service/CMakeLists.txt)
extern const char kPageJs[];   // page.js

namespace {

// The exact text between <style> and </style>, and between <script> and </script>: what the hashes cover.
const std::string& InlineStyle() {
  static const std::string text = std::string("\n") + kPageCss;
  return text;
}

const std::string& InlineScript() {
  static const std::string text = std::string("\n") + kPageJs;
  return text;
}

// 'sha256-<base64>' of `text`, a CSP hash source.
std::string HashSource(const std::string& text) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest);
  unsigned char base64[4 * ((SHA256_DIGEST_LENGTH + 2) / 3) + 1];
  const int n = EVP_EncodeBlock(base64, digest, SHA256_DIGEST_LENGTH);
  return "'sha256-" + std::string(reinterpret_cast<const char*>(base64), static_cast<size_t>(n)) + "'";
}

}  // namespace

const std::string& ContentSecurityPolicy() {
  // Computed once from the embedded text, so an edit of page.css or page.js can never leave a stale hash.
  static const std::string policy = "default-src 'none'; style-src " + HashSource(InlineStyle()) +
                                    "; script-src " + HashSource(InlineScript()) +
                                    "; img-src data:; form-action 'self'; base-uri 'none'";
  return policy;
}

std::string PageFrame(std::string_view title, std::string_view body) {
  std::string out;
  out.reserve(body.size() + 16384);
  out += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
         "<meta http-equiv=\"Content-Security-Policy\" content=\"";
  out += ContentSecurityPolicy();  // no " or & in it: safe in the attribute as it is
  out +=
      "\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<meta name=\"generator\" "
      "content=\"xladb\">\n<title>";
  out += Html(title);
  out += "</title>\n<style>";
  out += InlineStyle();
  out += "</style></head>\n<body>\n";
  out += body;
  out += "\n<script>";
  out += InlineScript();
  out += "</script>\n</body></html>\n";
  return out;
}

std::string PageLinks::Runs() const { return live() ? "/runs" : ""; }

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
