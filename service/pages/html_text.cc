#include "service/pages/html_text.h"

#include <cstdio>

#include "ingest/text/visible_text.h"
#include "proto/wire_text.h"

namespace xladb::service::pages {

std::string Html(std::string_view text) {
  // Bidi controls are shown as the text \u202e, not applied: applied, they reorder what follows (a module
  // name could read as another). A text marker, not a styled span: the pages allow no inline styles.
  const std::string valid = ingest::EscapeBidiControls(wire::ToValidUtf8(text));
  std::string out;
  out.reserve(valid.size() + valid.size() / 8);
  for (char c : valid) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out.push_back(c);
    }
  }
  return out;
}

// Chart data is shown by page.js as text (the hover card): bidi controls shown, not applied, as in Html().
std::string JsonText(std::string_view text) { return ingest::EscapeBidiControls(wire::ToValidUtf8(text)); }

std::string ScriptJson(const nlohmann::json& value) {
  const std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '<': out += "\\u003c"; break;
      case '>': out += "\\u003e"; break;
      case '&': out += "\\u0026"; break;
      default: out.push_back(c);
    }
  }
  return out;
}

std::string UrlComponent(std::string_view text) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
        c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

std::string GroupedNumber(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -(n + 1) + uint64_t{1} : static_cast<uint64_t>(n));
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return n < 0 ? "-" + out : out;
}

}  // namespace xladb::service::pages
