#include "store/shape_text.h"

namespace xladb::store {

std::string ShapeWithoutLayout(std::string_view shape) {
  std::string out;
  out.reserve(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape.compare(i, 2, "/*") == 0) {  // `/*index=5*/` in long tuples
      const size_t end = shape.find("*/", i + 2);
      if (end == std::string_view::npos) break;
      i = end + 1;
      continue;
    }
    if (shape[i] == '{' && i > 0 && shape[i - 1] == ']') {
      int depth = 0;
      for (; i < shape.size(); ++i) {
        if (shape[i] == '{') ++depth;
        if (shape[i] == '}' && --depth == 0) break;
      }
      continue;
    }
    out.push_back(shape[i]);
  }
  return out;
}

std::string CompactSignature(std::string_view signature) {
  std::string out;
  for (char c : ShapeWithoutLayout(signature)) {
    if (c != ' ') out.push_back(c);
  }
  return out;
}

}  // namespace xladb::store
