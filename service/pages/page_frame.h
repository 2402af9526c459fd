// The frame of every page and the links between pages.
//
//   * PageFrame: a whole HTML document around `body`: the stylesheet and the script (page.css, page.js,
//     compiled in) inlined, and a Content-Security-Policy that allows no network request at all, so a page
//     opened from file:// or served by xladbd fetches nothing but itself.
//   * ContentSecurityPolicy: that policy (PageFrame puts it in a <meta>; xladbd also sends it as a header).
//     No 'unsafe-inline': the one inline style and the one inline script are allowed by their sha256
//     hashes, computed once from the embedded text, so markup that an escaping bug let through would not run
//     and no style="" attribute applies (pages style by class only). <script type="application/json"> data
//     blocks are not scripts and need no hash.
//   * PageLinks: a report written to a file stands alone, so it links only inside itself (Href returns "");
//     live pages (xladbd --http) link to each other by URL: /run?name=R, /module?run=R&name=M&…, /diff?….
//
// Pure functions; thread-safe.
#ifndef XLADB_SERVICE_PAGES_PAGE_FRAME_H_
#define XLADB_SERVICE_PAGES_PAGE_FRAME_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace xladb::service::pages {

std::string PageFrame(std::string_view title, std::string_view body);
const std::string& ContentSecurityPolicy();

class PageLinks {
 public:
  enum class Mode { kFile, kLive };
  explicit PageLinks(Mode mode) : mode_(mode) {}
  bool live() const { return mode_ == Mode::kLive; }

  // URLs of the live pages; "" in a file.
  std::string Runs() const;
  std::string Run(std::string_view run) const;
  std::string Module(std::string_view run, std::string_view module, std::string_view stage, int64_t xla_module_id,
                     std::string_view folder) const;
  std::string Diff(std::string_view run, std::string_view baseline) const;

  // `<a href="url">text</a>` (text already HTML), or the text alone when url is "".
  static std::string Anchor(const std::string& url, const std::string& html_text);

 private:
  Mode mode_;
};

}  // namespace xladb::service::pages

#endif  // XLADB_SERVICE_PAGES_PAGE_FRAME_H_
