#include "store/facts/shape_text.h"

#include <cctype>

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

std::string ShapeWithoutComments(std::string_view shape) {
  std::string out;
  out.reserve(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape.compare(i, 2, "/*") == 0) {
      const size_t end = shape.find("*/", i + 2);
      if (end == std::string_view::npos) break;
      i = end + 1;
      continue;
    }
    out.push_back(shape[i]);
  }
  return out;
}

std::string StoredEntrySignature(std::string_view printed) {
  std::string signature = ShapeWithoutLayout(printed);
  if (size_t arrow = signature.find("->"); arrow != std::string::npos) signature.replace(arrow, 2, " -> ");
  return signature;
}

std::string CompactSignature(std::string_view signature) {
  std::string out;
  for (char c : ShapeWithoutLayout(signature)) {
    if (c != ' ') out.push_back(c);
  }
  return out;
}

namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// Top-level elements of a tuple's text inside its parentheses ("" has none).
int64_t TupleElements(std::string_view inner) {
  if (Trim(inner).empty()) return 0;
  int64_t elements = 1;
  int depth = 0;
  for (size_t i = 0; i < inner.size(); ++i) {
    const char c = inner[i];
    if (inner.compare(i, 2, "/*") == 0) {
      const size_t end = inner.find("*/", i + 2);
      if (end == std::string_view::npos) break;
      i = end + 1;
    } else if (c == '(' || c == '[' || c == '{') {
      ++depth;
    } else if (c == ')' || c == ']' || c == '}') {
      --depth;
    } else if (c == ',' && depth == 0) {
      ++elements;
    }
  }
  return elements;
}

// Bits of an element type: "pred" 8, "bf16" 16, "f8e4m3fn" 8, "c64" 64, "s4" 4; 0 for a token; -1 unknown.
int ElementBits(std::string_view type) {
  if (type == "pred") return 8;
  if (type == "token") return 0;
  size_t i = 0;
  while (i < type.size() && std::islower(static_cast<unsigned char>(type[i]))) ++i;
  if (i == 0 || i == type.size() || !std::isdigit(static_cast<unsigned char>(type[i]))) return -1;
  int bits = 0;
  for (; i < type.size() && std::isdigit(static_cast<unsigned char>(type[i])) && bits < 1024; ++i) {
    bits = bits * 10 + (type[i] - '0');
  }
  return bits > 0 ? bits : -1;
}

}  // namespace

std::optional<int64_t> LogicalByteSize(std::string_view shape) {
  shape = Trim(shape);
  if (shape.empty()) return std::nullopt;
  if (shape.front() == '(') {
    if (shape.back() != ')') return std::nullopt;
    return 8 * TupleElements(shape.substr(1, shape.size() - 2));
  }
  const size_t open = shape.find('[');
  const std::string_view type = shape.substr(0, open);
  const int bits = ElementBits(type);
  if (bits < 0) return std::nullopt;
  if (open == std::string_view::npos) return bits == 0 ? std::optional<int64_t>(0) : std::nullopt;
  const size_t close = shape.find(']', open);
  if (close == std::string_view::npos) return std::nullopt;
  int64_t elements = 1;
  std::string_view dims = shape.substr(open + 1, close - open - 1);
  while (!dims.empty()) {
    const size_t comma = dims.find(',');
    std::string_view dim = Trim(dims.substr(0, comma));
    dims = comma == std::string_view::npos ? std::string_view() : dims.substr(comma + 1);
    if (dim.substr(0, 2) == "<=") dim.remove_prefix(2);
    if (dim.empty()) return std::nullopt;
    int64_t n = 0;
    for (char c : dim) {
      if (!std::isdigit(static_cast<unsigned char>(c)) || n > (int64_t{1} << 50)) return std::nullopt;
      n = n * 10 + (c - '0');
    }
    if (n != 0 && elements > (int64_t{1} << 52) / n) return std::nullopt;  // would overflow
    elements *= n;
  }
  int element_bits = bits;
  // A layout's `E(n)`: elements packed at n bits (sub-byte types).
  if (close + 1 < shape.size() && shape[close + 1] == '{') {
    const size_t packed = shape.find("E(", close);
    const size_t layout_end = shape.find('}', close);
    if (packed != std::string_view::npos && packed < layout_end) {
      int n = 0;
      for (size_t i = packed + 2; i < shape.size() && std::isdigit(static_cast<unsigned char>(shape[i])); ++i) {
        n = n * 10 + (shape[i] - '0');
      }
      if (n > 0 && n < 64) return (elements * n + 7) / 8;
    }
  }
  return elements * ((element_bits + 7) / 8);
}

}  // namespace xladb::store
