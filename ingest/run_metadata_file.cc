#include "ingest/run_metadata_file.h"

#include <toml++/toml.h>

#include "ingest/dump_ingester.h"
#include "ingest/source/run_name.h"

namespace xladb::ingest {
namespace {

std::string LinePrefix(const toml::source_region& where) {
  return "line " + std::to_string(where.begin.line) + ": ";
}

}  // namespace

StatusOr<RunMetadata> ParseRunMetadata(std::string_view text) {
  if (text.size() > kMaxRunMetadataBytes) {
    return Status::DataLoss("larger than " + std::to_string(kMaxRunMetadataBytes) + " bytes");
  }
  toml::table root;
  try {  // this toml++ reports parse errors as exceptions; none leaves this function
    root = toml::parse(text);
  } catch (const toml::parse_error& e) {
    return Status::DataLoss(LinePrefix(e.source()) + std::string(e.description()));
  }
  RunMetadata meta;
  for (const auto& [key, node] : root) {
    if (key == "time") {
      std::string when;
      if (node.is_string()) when = *node.value<std::string>();
      else if (node.is_integer()) when = std::to_string(*node.value<int64_t>());
      else return Status::DataLoss(LinePrefix(node.source()) + "time must be a string or Unix seconds");
      auto t = ParseTimeToUs(when);
      if (!t.ok()) return Status::DataLoss(LinePrefix(node.source()) + t.status().message());
      meta.time_us = *t;
    } else if (key == "labels") {
      const toml::table* labels = node.as_table();
      if (labels == nullptr) return Status::DataLoss(LinePrefix(node.source()) + "labels must be a table");
      for (const auto& [name, value] : *labels) {
        std::string text_value;
        if (value.is_string()) text_value = *value.value<std::string>();
        else if (value.is_integer()) text_value = std::to_string(*value.value<int64_t>());
        else if (value.is_boolean()) text_value = *value.value<bool>() ? "true" : "false";
        else return Status::DataLoss(LinePrefix(value.source()) + "label " + std::string(name.str()) +
                                     " must be a string, number or boolean");
        if (Status valid = ValidateRunLabel(name.str(), text_value); !valid.ok()) {
          meta.refused_labels.push_back(LinePrefix(value.source()) + valid.message());
          continue;
        }
        meta.labels.emplace_back(std::string(name.str()), std::move(text_value));
      }
    } else {
      return Status::DataLoss(LinePrefix(node.source()) + "unknown key '" + std::string(key.str()) +
                              "' (the keys are time and [labels])");
    }
  }
  return meta;
}

}  // namespace xladb::ingest
