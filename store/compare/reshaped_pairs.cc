#include "store/compare/reshaped_pairs.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <map>
#include <string>
#include <system_error>
#include <tuple>
#include <unordered_set>

#include "store/compare/module_match.h"

namespace xladb::store {
namespace {

struct Shape {
  std::string dtype;
  std::vector<int64_t> dims;

  int64_t elements() const {
    int64_t n = 1;
    for (int64_t d : dims) n = d > 0 && n > INT64_MAX / d ? INT64_MAX : n * std::max<int64_t>(d, 0);
    return n;
  }
};

// The `dtype[d,d,…]` shapes of a signature part, left to right (tuples flattened; `<=` bounds read as the
// bound, `?` as 0).
std::vector<Shape> Shapes(std::string_view text) {
  std::vector<Shape> out;
  size_t i = 0;
  while (i < text.size()) {
    const size_t open = text.find('[', i);
    if (open == std::string_view::npos) break;
    size_t start = open;
    while (start > 0 && std::isalnum(static_cast<unsigned char>(text[start - 1]))) --start;
    const size_t close = text.find(']', open);
    if (close == std::string_view::npos) break;
    if (start == open) {  // no dtype before the bracket: not a shape
      i = open + 1;
      continue;
    }
    Shape s;
    s.dtype = std::string(text.substr(start, open - start));
    std::string_view dims = text.substr(open + 1, close - open - 1);
    while (!dims.empty()) {
      const size_t comma = dims.find(',');
      std::string_view d = dims.substr(0, comma);
      while (!d.empty() && !std::isdigit(static_cast<unsigned char>(d.front()))) d.remove_prefix(1);
      int64_t extent = 0;  // "" or no digits: 0; too many: the largest
      if (std::from_chars(d.data(), d.data() + d.size(), extent).ec == std::errc::result_out_of_range) {
        extent = INT64_MAX;
      }
      s.dims.push_back(extent);
      if (comma == std::string_view::npos) break;
      dims.remove_prefix(comma + 1);
    }
    out.push_back(std::move(s));
    i = close + 1;
  }
  return out;
}

struct Signature {
  std::vector<Shape> parameters, outputs;
};

Signature Parse(std::string_view text) {
  const size_t arrow = text.find("->");
  Signature s;
  s.parameters = Shapes(text.substr(0, arrow));
  if (arrow != std::string_view::npos) s.outputs = Shapes(text.substr(arrow + 2));
  return s;
}

int64_t DifferingDimensions(const std::vector<Shape>& a, const std::vector<Shape>& b) {
  int64_t n = 0;
  for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    if (i >= a.size() || i >= b.size()) {
      n += static_cast<int64_t>((i < a.size() ? a[i] : b[i]).dims.size());
      continue;
    }
    if (a[i].dims.size() != b[i].dims.size()) {
      n += static_cast<int64_t>(std::max(a[i].dims.size(), b[i].dims.size()));
      continue;
    }
    for (size_t d = 0; d < a[i].dims.size(); ++d) n += a[i].dims[d] != b[i].dims[d];
  }
  return n;
}

int64_t Elements(const std::vector<Shape>& shapes) {
  int64_t n = 0;
  for (const Shape& s : shapes) n += s.elements();
  return n;
}

SignatureDistance Distance(const Signature& x, const Signature& y) {
  SignatureDistance d;
  bool same = x.parameters.size() == y.parameters.size();
  for (size_t i = 0; same && i < x.parameters.size(); ++i) same = x.parameters[i].dtype == y.parameters[i].dtype;
  d.mismatched_parameters = same ? 0 : 1;
  d.differing_dimensions = DifferingDimensions(x.parameters, y.parameters) + DifferingDimensions(x.outputs, y.outputs);
  d.element_difference = std::llabs(Elements(x.parameters) + Elements(x.outputs) -
                                    (Elements(y.parameters) + Elements(y.outputs)));
  return d;
}

}  // namespace

SignatureDistance EntrySignatureDistance(std::string_view a, std::string_view b) {
  return Distance(Parse(a), Parse(b));
}

std::vector<std::pair<const ModuleRow*, const ModuleRow*>> PairReshaped(
    const std::vector<const ModuleRow*>& baseline_leftovers, const std::vector<const ModuleRow*>& current_leftovers) {
  using Key = std::tuple<std::string, std::string, std::string>;
  std::map<Key, std::pair<std::vector<const ModuleRow*>, std::vector<const ModuleRow*>>> groups;
  for (const ModuleRow* r : baseline_leftovers) groups[{r->name, r->stage, r->folder}].first.push_back(r);
  for (const ModuleRow* r : current_leftovers) groups[{r->name, r->stage, r->folder}].second.push_back(r);
  std::vector<std::pair<const ModuleRow*, const ModuleRow*>> pairs;
  for (auto& [key, sides] : groups) {
    auto& [base, cur] = sides;
    if (base.empty() || cur.empty()) continue;
    struct Candidate {
      SignatureDistance distance;
      const ModuleRow* base;
      const ModuleRow* cur;
    };
    std::vector<Signature> cur_signatures;
    for (const ModuleRow* c : cur) cur_signatures.push_back(Parse(c->entry_signature));
    std::vector<Candidate> candidates;
    for (const ModuleRow* b : base) {
      const Signature b_signature = Parse(b->entry_signature);
      for (size_t i = 0; i < cur.size(); ++i) {
        candidates.push_back({Distance(b_signature, cur_signatures[i]), b, cur[i]});
      }
    }
    std::stable_sort(candidates.begin(), candidates.end(), [](const Candidate& x, const Candidate& y) {
      if (x.distance < y.distance || y.distance < x.distance) return x.distance < y.distance;
      return std::tie(x.base->xla_module_id, x.base->module_id, x.cur->xla_module_id, x.cur->module_id) <
             std::tie(y.base->xla_module_id, y.base->module_id, y.cur->xla_module_id, y.cur->module_id);
    });
    std::unordered_set<const ModuleRow*> used;
    for (const Candidate& c : candidates) {
      if (used.count(c.base) || used.count(c.cur)) continue;
      used.insert(c.base);
      used.insert(c.cur);
      pairs.emplace_back(c.base, c.cur);
    }
  }
  return pairs;
}

}  // namespace xladb::store
