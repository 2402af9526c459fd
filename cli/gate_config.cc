#include "cli/gate_config.h"

#include <toml++/toml.h>

#include <cmath>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <sstream>
#include <utility>

#include "store/compare/check_run.h"
#include "store/facts/module_metrics.h"
#include "store/query/name_pattern.h"

namespace xladb::cli {
namespace {

// Reads one table, naming every problem by key and line.
class TableReader {
 public:
  TableReader(const toml::table& table, std::string prefix, const std::string& source)
      : table_(table), prefix_(std::move(prefix)), source_(source) {}

  std::string Where(const toml::node& node, const std::string& key) const {
    return source_ + ":" + std::to_string(node.source().begin.line) + ": " + prefix_ + key;
  }
  std::string WhereTable() const {
    return source_ + ":" + std::to_string(table_.source().begin.line) + ": " + (prefix_.empty() ? "top level" : prefix_.substr(0, prefix_.size() - 1));
  }

  // Every key must be one of `known`.
  Status OnlyKeys(std::initializer_list<std::string_view> known) const {
    for (const auto& [key, node] : table_) {
      bool ok = false;
      for (std::string_view k : known) ok |= key.str() == k;
      if (!ok) {
        std::string list;
        for (std::string_view k : known) list += (list.empty() ? "" : ", ") + std::string(k);
        return Status::InvalidArgument(Where(node, std::string(key.str())) + ": unknown key (known here: " + list + ")");
      }
    }
    return Status::Ok();
  }

  const toml::node* Get(std::string_view key) const { return table_.get(key); }

  Status Int(std::string_view key, int64_t min, int64_t* out, bool* present = nullptr) const {
    const toml::node* n = Get(key);
    if (present) *present = n != nullptr;
    if (!n) return Status::Ok();
    auto v = n->value<int64_t>();
    if (!n->is_integer() || !v) return Status::InvalidArgument(Where(*n, std::string(key)) + ": must be an integer");
    if (*v < min) {
      return Status::InvalidArgument(Where(*n, std::string(key)) + ": must be at least " + std::to_string(min));
    }
    *out = *v;
    return Status::Ok();
  }

  Status Number(std::string_view key, double* out, bool* present = nullptr) const {
    const toml::node* n = Get(key);
    if (present) *present = n != nullptr;
    if (!n) return Status::Ok();
    auto v = n->value<double>();
    if (!(n->is_integer() || n->is_floating_point()) || !v || std::isnan(*v) || std::isinf(*v)) {
      return Status::InvalidArgument(Where(*n, std::string(key)) + ": must be a number");
    }
    if (*v < 0) return Status::InvalidArgument(Where(*n, std::string(key)) + ": must not be negative");
    *out = *v;
    return Status::Ok();
  }

  Status Bool(std::string_view key, bool* out) const {
    const toml::node* n = Get(key);
    if (!n) return Status::Ok();
    if (!n->is_boolean()) return Status::InvalidArgument(Where(*n, std::string(key)) + ": must be true or false");
    *out = *n->value<bool>();
    return Status::Ok();
  }

  Status Text(std::string_view key, bool required, std::string* out) const {
    const toml::node* n = Get(key);
    if (!n) {
      return required ? Status::InvalidArgument(WhereTable() + ": needs `" + std::string(key) + "`") : Status::Ok();
    }
    if (!n->is_string()) return Status::InvalidArgument(Where(*n, std::string(key)) + ": must be a string");
    *out = *n->value<std::string>();
    if (required && out->empty()) return Status::InvalidArgument(Where(*n, std::string(key)) + ": must not be empty");
    return Status::Ok();
  }

  const toml::table& table() const { return table_; }

 private:
  const toml::table& table_;
  std::string prefix_;
  const std::string& source_;
};

Status Pattern(const TableReader& r, std::string_view key, std::string* out) {
  if (Status st = r.Text(key, true, out); !st.ok()) return st;
  if (Status st = store::CheckGlobPattern(*out, key); !st.ok()) {
    return Status::InvalidArgument(r.Where(*r.Get(key), std::string(key)) + ": " + st.message());
  }
  return Status::Ok();
}

// The array of tables at `key`: each element checked with `read`.
template <typename Fn>
Status Tables(const TableReader& top, std::string_view key, const std::string& source, Fn read) {
  const toml::node* n = top.Get(key);
  if (!n) return Status::Ok();
  const toml::array* array = n->as_array();
  if (!array || !array->is_array_of_tables()) {
    return Status::InvalidArgument(top.Where(*n, std::string(key)) + ": must be tables ([[" + std::string(key) + "]])");
  }
  for (size_t i = 0; i < array->size(); ++i) {
    TableReader r(*array->get(i)->as_table(), std::string(key) + "[" + std::to_string(i + 1) + "].", source);
    if (Status st = read(r); !st.ok()) return st;
  }
  return Status::Ok();
}

Status Strings(const TableReader& r, std::string_view key, std::vector<std::string>* out) {
  const toml::node* n = r.Get(key);
  if (!n) return Status::Ok();
  const toml::array* array = n->as_array();
  if (!array) return Status::InvalidArgument(r.Where(*n, std::string(key)) + ": must be an array of strings");
  for (size_t i = 0; i < array->size(); ++i) {
    const toml::node& e = *array->get(i);
    if (!e.is_string()) {
      return Status::InvalidArgument(r.Where(e, std::string(key) + "[" + std::to_string(i + 1) + "]") +
                                     ": must be a string");
    }
    out->push_back(*e.value<std::string>());
  }
  return Status::Ok();
}

// One [[budget]]: pattern (optional), metric, max_bytes (an integer, or a string with a unit).
Status ReadBudget(const TableReader& r, v1::CheckRunRequest* req) {
  if (Status s = r.OnlyKeys({"pattern", "metric", "max_bytes"}); !s.ok()) return s;
  std::string pattern, metric;
  if (r.Get("pattern")) {
    if (Status s = Pattern(r, "pattern", &pattern); !s.ok()) return s;
  }
  if (Status s = r.Text("metric", true, &metric); !s.ok()) return s;
  if (!store::FindModuleMetric(metric)) {
    return Status::InvalidArgument(r.Where(*r.Get("metric"), "metric") + ": unknown metric '" + metric +
                                   "' (known: " + store::ModuleMetricNames() + ")");
  }
  const toml::node* size = r.Get("max_bytes");
  if (!size) return Status::InvalidArgument(r.WhereTable() + ": needs `max_bytes`");
  std::optional<int64_t> bytes;
  if (size->is_integer()) bytes = *size->value<int64_t>();
  if (size->is_string()) bytes = ParseByteSize(*size->value<std::string>());
  if (!bytes || *bytes <= 0) {
    return Status::InvalidArgument(r.Where(*size, "max_bytes") +
                                   ": must be a size above 0: bytes, or a number with a unit (\"15.5GiB\", \"512MB\")");
  }
  auto* budget = req->add_budgets();
  budget->set_pattern(pattern);
  budget->set_metric(metric);
  budget->set_max_bytes(*bytes);
  return Status::Ok();
}

Status Read(const toml::table& root, const std::string& source, v1::CheckRunRequest* req) {
  TableReader top(root, "", source);
  if (Status st = top.OnlyKeys({"metrics", "max_growth_bytes", "max_growth_percent", "fail_on_retrace_growth",
                                "ignore", "module", "accept", "on_added", "on_removed", "on_reshaped", "budget",
                                "warn_percent"});
      !st.ok()) {
    return st;
  }
  std::vector<std::string> metrics;
  if (Status st = Strings(top, "metrics", &metrics); !st.ok()) return st;
  for (const auto& m : metrics) {
    if (!store::FindModuleMetric(m)) {
      return Status::InvalidArgument(top.Where(*top.Get("metrics"), "metrics") + ": unknown metric '" + m +
                                     "' (known: " + store::ModuleMetricNames() + ")");
    }
  }
  if (!metrics.empty()) {
    req->clear_metrics();
    for (const auto& m : metrics) req->add_metrics(m);
  }
  int64_t bytes = 0;
  double percent = 0;
  bool has_bytes = false, has_percent = false;
  if (Status st = top.Int("max_growth_bytes", 0, &bytes, &has_bytes); !st.ok()) return st;
  if (Status st = top.Number("max_growth_percent", &percent, &has_percent); !st.ok()) return st;
  if (has_bytes) req->mutable_limit()->set_max_growth_bytes(bytes);
  if (has_percent) req->mutable_limit()->set_max_growth_percent(percent);
  bool fail_retraces = req->fail_on_retrace_growth();
  if (Status st = top.Bool("fail_on_retrace_growth", &fail_retraces); !st.ok()) return st;
  req->set_fail_on_retrace_growth(fail_retraces);
  for (const auto& [key, judge_allowed] : {std::pair<const char*, bool>{"on_added", false}, {"on_removed", false},
                                           {"on_reshaped", true}}) {
    std::string policy;
    if (Status st = top.Text(key, false, &policy); !st.ok()) return st;
    if (!top.Get(key)) continue;
    auto parsed = store::ParseUnmatchedPolicy(policy);
    if (!parsed || (*parsed == store::UnmatchedPolicy::kJudge && !judge_allowed)) {
      const char* known = judge_allowed ? "report, judge, fail or inconclusive" : "report, fail or inconclusive";
      return Status::InvalidArgument(top.Where(*top.Get(key), key) + ": unknown policy '" + policy + "' (" + known +
                                     ")");
    }
    if (std::string_view(key) == "on_added") req->set_on_added(policy);
    if (std::string_view(key) == "on_removed") req->set_on_removed(policy);
    if (std::string_view(key) == "on_reshaped") req->set_on_reshaped(policy);
  }
  std::vector<std::string> ignore;
  if (Status st = Strings(top, "ignore", &ignore); !st.ok()) return st;
  for (const auto& g : ignore) {
    if (Status st = store::CheckGlobPattern(g, "ignore"); !st.ok()) {
      return Status::InvalidArgument(top.Where(*top.Get("ignore"), "ignore") + ": " + st.message());
    }
    req->add_ignore(g);
  }
  Status st = Tables(top, "module", source, [&](const TableReader& r) {
    if (Status s = r.OnlyKeys({"pattern", "max_growth_bytes", "max_growth_percent"}); !s.ok()) return s;
    auto* limit = req->add_module_limits();
    std::string pattern;
    if (Status s = Pattern(r, "pattern", &pattern); !s.ok()) return s;
    limit->set_pattern(pattern);
    int64_t b = 0;
    double p = 0;
    bool hb = false, hp = false;
    if (Status s = r.Int("max_growth_bytes", 0, &b, &hb); !s.ok()) return s;
    if (Status s = r.Number("max_growth_percent", &p, &hp); !s.ok()) return s;
    if (!hb && !hp) return Status::InvalidArgument(r.WhereTable() + ": needs max_growth_bytes or max_growth_percent");
    limit->mutable_limit()->set_max_growth_bytes(b);
    limit->mutable_limit()->set_max_growth_percent(p);
    return Status::Ok();
  });
  if (!st.ok()) return st;
  double warn_percent = 0;
  bool has_warn = false;
  if (Status s = top.Number("warn_percent", &warn_percent, &has_warn); !s.ok()) return s;
  if (has_warn) req->set_warn_percent(warn_percent);
  st = Tables(top, "budget", source, [&](const TableReader& r) { return ReadBudget(r, req); });
  if (!st.ok()) return st;
  return Tables(top, "accept", source, [&](const TableReader& r) {
    if (Status s = r.OnlyKeys({"pattern", "metric", "up_to_bytes", "reason"}); !s.ok()) return s;
    auto* accepted = req->add_accepted();
    std::string pattern, metric, reason;
    if (Status s = Pattern(r, "pattern", &pattern); !s.ok()) return s;
    if (Status s = r.Text("metric", false, &metric); !s.ok()) return s;
    if (!metric.empty() && !store::FindModuleMetric(metric)) {
      return Status::InvalidArgument(r.Where(*r.Get("metric"), "metric") + ": unknown metric '" + metric +
                                     "' (known: " + store::ModuleMetricNames() + ")");
    }
    int64_t up_to = 0;
    if (Status s = r.Int("up_to_bytes", 1, &up_to); !s.ok()) return s;
    if (Status s = r.Text("reason", true, &reason); !s.ok()) return s;
    accepted->set_pattern(pattern);
    accepted->set_metric(metric);
    accepted->set_up_to_bytes(up_to);
    accepted->set_reason(reason);
    return Status::Ok();
  });
}

}  // namespace

std::optional<int64_t> ParseByteSize(std::string_view text) {
  static constexpr std::pair<std::string_view, double> kUnits[] = {
      {"", 1},     {"B", 1},      {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0},
      {"TiB", 1099511627776.0}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}};
  size_t i = 0;
  while (i < text.size() && ((text[i] >= '0' && text[i] <= '9') || text[i] == '.')) ++i;
  const std::string number(text.substr(0, i));
  if (number.empty() || number.front() == '.' || number.back() == '.' ||
      number.find('.') != number.rfind('.')) {
    return std::nullopt;
  }
  std::string_view unit = text.substr(i);
  if (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);
  for (const auto& [name, scale] : kUnits) {
    if (unit != name) continue;
    if (name.empty() && number.find('.') != std::string::npos) return std::nullopt;  // bytes are whole
    const double bytes = std::stod(number) * scale;
    if (!(bytes < 9.2e18)) return std::nullopt;
    return static_cast<int64_t>(std::llround(bytes));
  }
  return std::nullopt;
}

Status ParseGateConfig(std::string_view toml_text, const std::string& source_name, v1::CheckRunRequest* request) {
  toml::table root;
  try {
    root = toml::parse(toml_text, source_name);
  } catch (const toml::parse_error& e) {
    return Status::InvalidArgument(source_name + ":" + std::to_string(e.source().begin.line) + ": " +
                                   std::string(e.description()));
  }
  return Read(root, source_name, request);
}

Status LoadGateConfig(const std::string& path, v1::CheckRunRequest* request) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("cannot read the config file " + path);
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) return Status::IoError("reading the config file " + path);
  return ParseGateConfig(text.str(), path, request);
}

}  // namespace xladb::cli
