// Archives and compressed files built with libarchive's write API, for DumpSource tests.
#ifndef XLADB_TESTS_INGEST_ARCHIVE_WRITER_H_
#define XLADB_TESTS_INGEST_ARCHIVE_WRITER_H_

#include <archive.h>
#include <archive_entry.h>

#include <cstdint>
#include <string>
#include <vector>

namespace xladb::testing {

struct ArchiveMember {
  std::string path;
  std::string data;    // written first
  int64_t zeros = 0;   // then this many zero bytes (cheap to write, and compressed to almost nothing)
};

enum class Packing { kTar, kTarGz, kTarZst, kGzFile, kZstFile };

// Writes `members` to `path`: a (compressed) pax tar, or for kGzFile / kZstFile the single member's content
// alone, compressed. Returns libarchive's error, or "" on success.
inline std::string WriteArchive(const std::string& path, Packing packing, const std::vector<ArchiveMember>& members) {
  struct archive* a = archive_write_new();
  if (packing == Packing::kTarGz || packing == Packing::kGzFile) archive_write_add_filter_gzip(a);
  if (packing == Packing::kTarZst || packing == Packing::kZstFile) {
    archive_write_add_filter_zstd(a);
    archive_write_set_filter_option(a, "zstd", "compression-level", "1");
  }
  bool raw = packing == Packing::kGzFile || packing == Packing::kZstFile;
  if (raw) {
    archive_write_set_format_raw(a);
  } else {
    archive_write_set_format_pax_restricted(a);
  }
  archive_write_set_bytes_per_block(a, 1 << 20);
  std::string error;
  auto check = [&](int rc) {
    if (rc < ARCHIVE_OK && error.empty()) error = archive_error_string(a) ? archive_error_string(a) : "error";
  };
  check(archive_write_open_filename(a, path.c_str()));
  const std::vector<char> zeros(1 << 20, '\0');
  for (const ArchiveMember& m : members) {
    struct archive_entry* e = archive_entry_new();
    archive_entry_set_pathname(e, m.path.c_str());
    archive_entry_set_size(e, static_cast<int64_t>(m.data.size()) + m.zeros);
    archive_entry_set_filetype(e, AE_IFREG);
    archive_entry_set_perm(e, 0644);
    archive_entry_set_mtime(e, 1767225600, 0);
    check(archive_write_header(a, e));
    if (!m.data.empty() && archive_write_data(a, m.data.data(), m.data.size()) < 0) check(ARCHIVE_FATAL);
    for (int64_t left = m.zeros; left > 0;) {
      size_t n = static_cast<size_t>(std::min<int64_t>(left, static_cast<int64_t>(zeros.size())));
      if (archive_write_data(a, zeros.data(), n) < 0) {
        check(ARCHIVE_FATAL);
        break;
      }
      left -= static_cast<int64_t>(n);
    }
    archive_entry_free(e);
  }
  check(archive_write_close(a));
  archive_write_free(a);
  return error;
}

// `n` bytes that do not compress (a linear congruential sequence).
inline std::string Incompressible(size_t n, uint32_t seed = 1) {
  std::string s(n, '\0');
  for (char& c : s) {
    seed = seed * 1664525u + 1013904223u;
    c = static_cast<char>(seed >> 24);
  }
  return s;
}

}  // namespace xladb::testing

#endif  // XLADB_TESTS_INGEST_ARCHIVE_WRITER_H_
