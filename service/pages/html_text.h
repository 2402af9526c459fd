// Text into HTML, the one escaping every page uses: names from dumps may hold `<script>`, quotes or bytes that
// are not UTF-8, and a page must show them as text, never run them.
//
//   Html("<a & 'b'>")  == "&lt;a &amp; &#39;b&#39;&gt;"  (valid UTF-8 out: invalid bytes become U+FFFD)
//   Html("a\u202eb")   == "a\\u202eb"  (bidi controls U+202A–U+202E, U+2066–U+2069 shown as text, not applied)
//   ScriptJson(json)   == the JSON text, safe inside <script type="application/json">: '<', '>' and '&' are
//                         written as \u003c, \u003e, \u0026, so no `</script>` or `<!--` can end the block.
//
// Pure functions; thread-safe.
#ifndef XLADB_SERVICE_PAGES_HTML_TEXT_H_
#define XLADB_SERVICE_PAGES_HTML_TEXT_H_

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace xladb::service::pages {

std::string Html(std::string_view text);
std::string ScriptJson(const nlohmann::json& value);
// A string for JSON that a page shows as text: valid UTF-8 (invalid bytes become U+FFFD), bidi controls
// written as the text \u202e like Html() does.
std::string JsonText(std::string_view text);
// A query-string component, percent-encoded (RFC 3986 unreserved characters kept).
std::string UrlComponent(std::string_view text);
// Exact bytes with thousands separators: 18629632 -> "18,629,632".
std::string GroupedNumber(int64_t n);

}  // namespace xladb::service::pages

#endif  // XLADB_SERVICE_PAGES_HTML_TEXT_H_
