#include "ingest/source/run_name.h"

#include <sys/stat.h>

#include <cstdio>
#include <filesystem>

#include "ingest/source/dump_source.h"
#include "ingest/text/visible_text.h"

namespace xladb::ingest {
namespace fs = std::filesystem;

namespace {

// The list in run_name.h.
constexpr std::string_view kGenericDumpFolderNames[] = {
    "xla_dump", "xla_dumps", "xla-dump",     "xla-dumps",     "xladump", "xladumps", "xla_dump_to", "hlo_dump",
    "hlo_dumps", "hlo-dump", "hlo-dumps",    "xla_hlo_dump",  "xla_hlo_dumps", "dump", "dumps", "dump_dir",
    "dumps_dir"};

bool EqualsIgnoringAsciiCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

bool IsBlankByte(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

bool IsControlByte(char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }

// "holds a control character (\x1b at byte 3)" for the first control byte of `text`, or "" when it has none.
std::string ControlCharacterProblem(std::string_view text) {
  for (size_t i = 0; i < text.size(); ++i) {
    if (!IsControlByte(text[i])) continue;
    char hex[8];
    std::snprintf(hex, sizeof hex, "\\x%02x", static_cast<unsigned char>(text[i]));
    return "holds a control character (" + std::string(hex) + " at byte " + std::to_string(i) + ")";
  }
  return {};
}

bool IsLabelKeyByte(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
         c == '-' || c == '/';
}

}  // namespace

bool IsGenericDumpFolderName(std::string_view name) {
  for (std::string_view generic : kGenericDumpFolderNames) {
    if (EqualsIgnoringAsciiCase(name, generic)) return true;
  }
  return false;
}

std::string ModuleFolderBelowDumpRoot(std::string_view folder, std::string_view wrapper) {
  // The first component of `rest`, and `rest` after it ("" when it was the last).
  auto first = [](std::string_view rest) { return rest.substr(0, rest.find('/')); };
  auto after_first = [](std::string_view rest) {
    const size_t slash = rest.find('/');
    return slash == std::string_view::npos ? std::string_view() : rest.substr(slash + 1);
  };
  if (!wrapper.empty() && first(folder) == wrapper) folder = after_first(folder);
  while (!folder.empty() && IsGenericDumpFolderName(first(folder))) folder = after_first(folder);
  return std::string(folder);
}

std::string DefaultRunNameFor(const std::string& path, bool is_folder) {
  std::error_code ec;
  fs::path p = fs::absolute(fs::path(path), ec);
  if (ec) p = fs::path(path);
  p = p.lexically_normal();
  if (!p.has_filename() && p.has_relative_path()) p = p.parent_path();  // "/a/b/" -> "/a/b"
  std::string name = p.filename().string();
  if (!is_folder) {
    if (std::string_view suffix = ArchiveSuffix(name); !suffix.empty()) {
      name.resize(name.size() - suffix.size());
    } else {
      name = StripCompression(std::move(name));
      if (name.ends_with(".txt")) name.resize(name.size() - 4);
    }
  }
  std::string chosen = name;
  for (fs::path folder = p.parent_path(); IsGenericDumpFolderName(chosen); folder = folder.parent_path()) {
    std::string parent = folder.filename().string();
    if (parent.empty()) return name;  // no folder above is left: keep the generic name
    chosen = std::move(parent);
  }
  return chosen;
}

std::string DefaultRunNameForPath(const std::string& path) {
  struct stat st;
  return DefaultRunNameFor(path, ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode));
}

Status ValidateRunName(std::string_view name) {
  bool blank = true;
  for (char c : name) blank = blank && IsBlankByte(c);
  if (blank) {
    return Status::InvalidArgument(name.empty() ? "the run name is empty"
                                                : "the run name is blank (white space only)");
  }
  if (std::string problem = ControlCharacterProblem(name); !problem.empty()) {
    return Status::InvalidArgument("the run name " + problem + "; run names may not hold bytes below 0x20 or 0x7f");
  }
  if (name.size() > kMaxRunNameBytes) {
    return Status::InvalidArgument("the run name is " + std::to_string(name.size()) + " bytes long; at most " +
                                   std::to_string(kMaxRunNameBytes) + " are allowed");
  }
  return Status::Ok();
}

Status ValidateRunLabel(std::string_view key, std::string_view value) {
  // Named with its controls escaped, and cut short: the message goes to terminals and logs.
  auto shown = [](std::string_view text) {
    return EscapeControlCharacters(text.substr(0, 64)) + (text.size() > 64 ? "…" : "");
  };
  const std::string named = "label '" + shown(key) + "=" + shown(value) + "': ";
  if (key.empty()) return Status::InvalidArgument(named + "the key is empty");
  if (key.size() > kMaxLabelKeyBytes) {
    return Status::InvalidArgument(named + "the key is " + std::to_string(key.size()) + " bytes long; at most " +
                                   std::to_string(kMaxLabelKeyBytes) + " are allowed");
  }
  for (size_t i = 0; i < key.size(); ++i) {
    if (IsLabelKeyByte(key[i])) continue;
    return Status::InvalidArgument(named + "the key holds '" + EscapeControlCharacters(key.substr(i, 1)) +
                                   "' at byte " + std::to_string(i) +
                                   "; keys are ASCII letters, digits and . _ - /");
  }
  if (std::string problem = ControlCharacterProblem(value); !problem.empty()) {
    return Status::InvalidArgument(named + "the value " + problem +
                                   "; label values may not hold bytes below 0x20 or 0x7f");
  }
  if (value.size() > kMaxLabelValueBytes) {
    return Status::InvalidArgument(named + "the value is " + std::to_string(value.size()) +
                                   " bytes long; at most " + std::to_string(kMaxLabelValueBytes) + " are allowed");
  }
  return Status::Ok();
}

Status ValidateRunLabels(const std::vector<std::pair<std::string, std::string>>& labels) {
  for (const auto& [key, value] : labels) {
    if (Status valid = ValidateRunLabel(key, value); !valid.ok()) return valid;
  }
  return Status::Ok();
}

std::string CanonicalSourcePath(const std::string& path) {
  std::error_code ec;
  std::string canonical = fs::weakly_canonical(path, ec).string();
  if (ec || canonical.empty()) canonical = fs::absolute(path, ec).lexically_normal().string();
  while (canonical.size() > 1 && canonical.back() == '/') canonical.pop_back();
  return canonical;
}

}  // namespace xladb::ingest
