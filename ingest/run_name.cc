#include "ingest/run_name.h"

#include <sys/stat.h>

#include <cstdio>
#include <filesystem>

#include "ingest/dump_source.h"

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

}  // namespace

bool IsGenericDumpFolderName(std::string_view name) {
  for (std::string_view generic : kGenericDumpFolderNames) {
    if (EqualsIgnoringAsciiCase(name, generic)) return true;
  }
  return false;
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
  for (size_t i = 0; i < name.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(name[i]);
    if (c < 0x20 || c == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      return Status::InvalidArgument("the run name holds a control character (" + std::string(hex) + " at byte " +
                                     std::to_string(i) + "); run names may not hold bytes below 0x20 or 0x7f");
    }
  }
  if (name.size() > kMaxRunNameBytes) {
    return Status::InvalidArgument("the run name is " + std::to_string(name.size()) + " bytes long; at most " +
                                   std::to_string(kMaxRunNameBytes) + " are allowed");
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
