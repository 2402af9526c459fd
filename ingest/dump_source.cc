#include "ingest/dump_source.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string_view>
#include <vector>

namespace xladb::ingest {
namespace fs = std::filesystem;

namespace {

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

enum class Compression { kNone, kGzip, kZstd };

Compression CompressionOf(std::string_view name) {
  if (EndsWith(name, ".gz")) return Compression::kGzip;
  if (EndsWith(name, ".zst")) return Compression::kZstd;
  return Compression::kNone;
}

std::string StripCompression(std::string name) {
  if (EndsWith(name, ".gz")) name.resize(name.size() - 3);
  else if (EndsWith(name, ".zst")) name.resize(name.size() - 4);
  return name;
}

bool IsArchiveName(std::string_view name) {
  return EndsWith(name, ".tar") || EndsWith(name, ".tar.gz") || EndsWith(name, ".tgz") ||
         EndsWith(name, ".tar.zst") || EndsWith(name, ".zip");
}

std::string BaseName(std::string_view path) {
  size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

std::unique_ptr<ByteSource> Decompressing(std::unique_ptr<ByteSource> raw, Compression c) {
  switch (c) {
    case Compression::kGzip: return MakeGzipSource(std::move(raw));
    case Compression::kZstd: return MakeZstdSource(std::move(raw));
    case Compression::kNone: break;
  }
  return raw;
}

int64_t MtimeUs(const struct stat& st) {
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000 + st.st_mtim.tv_nsec / 1000;
}

DumpEntry FileEntry(const std::string& full_path, std::string rel_path, const struct stat& st) {
  DumpEntry e;
  e.path = std::move(rel_path);
  e.name = StripCompression(BaseName(e.path));
  e.size_bytes = st.st_size;
  e.mtime_us = MtimeUs(st);
  Compression c = CompressionOf(e.path);
  e.Open = [full_path, c]() -> StatusOr<std::unique_ptr<ByteSource>> {
    auto raw = OpenFileSource(full_path);
    if (!raw.ok()) return raw.status();
    return Decompressing(std::move(raw.value()), c);
  };
  return e;
}

// ---------------------------------------------------------------------------------------------------

class FolderSource : public DumpSource {
 public:
  explicit FolderSource(fs::path root) : root_(std::move(root)) {}
  Type type() const override { return Type::kFolder; }
  std::string DefaultRunName() const override {
    fs::path p = root_;
    if (p.filename().empty()) p = p.parent_path();
    return p.filename().string();
  }

  Status ForEach(const std::function<void(DumpEntry&)>& visit) override {
    struct Found {
      std::string key, rel, full;
      struct stat st;
      Status unreadable;  // non-OK: reported as an unreadable entry instead of read
    };
    std::vector<Found> files;
    std::error_code ec;
    // Symlinks are not followed: a link to a folder is not descended into, so loops cannot happen.
    // No skip_permission_denied: it would turn an unreadable root into an empty run; unreadable subfolders are
    // caught below before the iterator tries to enter them.
    fs::recursive_directory_iterator it(root_, fs::directory_options::none, ec);
    if (ec) return Status::IoError("cannot read folder " + root_.string() + ": " + ec.message());
    for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (ec) return Status::IoError("walking " + root_.string() + ": " + ec.message());
      const fs::directory_entry& de = *it;
      struct stat st;
      if (::lstat(de.path().c_str(), &st) != 0 || S_ISLNK(st.st_mode)) continue;
      // Bad-input catalog (tests/store/bad_input_test.cc): a subfolder that cannot be opened, or a FIFO, socket
      // or device, is reported as an unreadable entry (an error verdict naming it) instead of being skipped
      // without a word (skip_permission_denied) or, for a FIFO, blocking the ingest in read().
      Status unreadable;
      if (S_ISDIR(st.st_mode)) {
        DIR* dir = ::opendir(de.path().c_str());
        if (dir != nullptr) {
          ::closedir(dir);
          continue;
        }
        unreadable = Status::IoError("cannot read folder " + de.path().string() + ": " + std::strerror(errno) +
                                     "; the files in it are not ingested");
        it.disable_recursion_pending();
      } else if (!S_ISREG(st.st_mode)) {
        unreadable = Status::InvalidArgument(de.path().string() + " is not a regular file (" +
                                             (S_ISFIFO(st.st_mode) ? "a FIFO" : S_ISSOCK(st.st_mode) ? "a socket"
                                                                                                  : "a device") +
                                             "): not read");
      }
      // Lexical, not fs::relative(): the iterator's paths all start with root_, and fs::relative() resolves
      // both paths through the file system (about ten readlink calls per file).
      std::string rel = de.path().lexically_relative(root_).generic_string();
      if (rel.empty()) continue;
      files.push_back({DumpEntryOrderKey(rel), rel, de.path().string(), st, unreadable});
    }
    std::sort(files.begin(), files.end(), [](const Found& a, const Found& b) { return a.key < b.key; });
    for (auto& f : files) {
      DumpEntry e = FileEntry(f.full, f.rel, f.st);
      if (!f.unreadable.ok()) {
        e.size_bytes = -1;
        e.open_error = f.unreadable;
        e.Open = [error = f.unreadable]() -> StatusOr<std::unique_ptr<ByteSource>> { return error; };
      }
      visit(e);
    }
    return Status::Ok();
  }

 private:
  fs::path root_;
};

class SingleFileSource : public DumpSource {
 public:
  SingleFileSource(std::string path, struct stat st) : path_(std::move(path)), st_(st) {}
  Type type() const override { return Type::kFile; }
  std::string DefaultRunName() const override {
    std::string name = StripCompression(BaseName(path_));
    if (EndsWith(name, ".txt")) name.resize(name.size() - 4);
    return name;
  }
  Status ForEach(const std::function<void(DumpEntry&)>& visit) override {
    DumpEntry e = FileEntry(path_, BaseName(path_), st_);
    visit(e);
    return Status::Ok();
  }

 private:
  std::string path_;
  struct stat st_;
};

// An archive member spooled to memory or to an unlinked temporary file.
class SpooledContent {
 public:
  Status Append(const char* data, size_t n) {
    if (file_ == nullptr && static_cast<int64_t>(memory_.size() + n) <= kSpoolInMemoryBytes) {
      memory_.append(data, n);
      return Status::Ok();
    }
    if (file_ == nullptr) {
      file_ = std::tmpfile();
      if (file_ == nullptr) return Status::IoError(std::string("tmpfile: ") + std::strerror(errno));
      if (!memory_.empty() && std::fwrite(memory_.data(), 1, memory_.size(), file_) != memory_.size()) {
        return Status::IoError("writing spool file");
      }
      memory_.clear();
      memory_.shrink_to_fit();
    }
    if (std::fwrite(data, 1, n, file_) != n) return Status::IoError("writing spool file (disk full?)");
    return Status::Ok();
  }
  ~SpooledContent() {
    if (file_) std::fclose(file_);
  }
  std::unique_ptr<ByteSource> Open() {
    if (file_ == nullptr) return MakeMemorySource(memory_);
    std::fflush(file_);
    return std::make_unique<SpoolReader>(file_);
  }

 private:
  class SpoolReader : public ByteSource {
   public:
    explicit SpoolReader(FILE* f) : f_(f) { std::rewind(f_); }
    StatusOr<size_t> Read(char* buffer, size_t capacity) override {
      size_t n = std::fread(buffer, 1, capacity, f_);
      if (n == 0 && std::ferror(f_)) return Status::IoError("reading spool file");
      return n;
    }

   private:
    FILE* f_;
  };
  std::string memory_;
  FILE* file_ = nullptr;
};

bool SafeArchivePath(std::string_view p) {
  if (p.empty() || p.front() == '/') return false;
  size_t start = 0;
  while (start <= p.size()) {
    size_t end = p.find('/', start);
    if (end == std::string_view::npos) end = p.size();
    if (p.substr(start, end - start) == "..") return false;
    start = end + 1;
  }
  return true;
}

class ArchiveSource : public DumpSource {
 public:
  explicit ArchiveSource(std::string path) : path_(std::move(path)) {}
  Type type() const override { return Type::kArchive; }
  std::string DefaultRunName() const override {
    std::string name = BaseName(path_);
    for (std::string_view ext : {".tar.gz", ".tar.zst", ".tgz", ".tar", ".zip"}) {
      if (EndsWith(name, ext)) {
        name.resize(name.size() - ext.size());
        break;
      }
    }
    return name;
  }

  Status ForEach(const std::function<void(DumpEntry&)>& visit) override {
    struct archive* a = archive_read_new();
    archive_read_support_filter_all(a);
    archive_read_support_format_all(a);
    if (archive_read_open_filename(a, path_.c_str(), 1 << 16) != ARCHIVE_OK) {
      Status st = Status::DataLoss("cannot open archive " + path_ + ": " + archive_error_string(a));
      archive_read_free(a);
      return st;
    }
    // Members are read in stream order and visited in small batches sorted by DumpEntryOrderKey, so a
    // module's split siblings (usually adjacent in the archive) follow its buffer assignment while at most
    // kSpoolInMemoryBytes of members are held in memory (larger ones spool to a temporary file).
    int64_t batch_bytes = 0;
    std::vector<std::pair<std::string, std::unique_ptr<Held>>> delayed;
    Status result;
    struct archive_entry* entry;
    int64_t damaged_headers = 0;  // ARCHIVE_RETRY: a damaged header libarchive skipped to resynchronise
    std::string first_damage;
    for (;;) {
      int rc = archive_read_next_header(a, &entry);
      if (rc == ARCHIVE_EOF) break;
      if (rc == ARCHIVE_RETRY) {
        // Bad-input catalog: a member whose header declares fewer bytes than it holds leaves data where the
        // next header should be. libarchive skips ahead block by block; go on with it, but say at the end
        // that the archive is damaged (members may be missing), instead of taking the retry as a header.
        if (damaged_headers++ == 0) first_damage = archive_error_string(a) ? archive_error_string(a) : "";
        continue;
      }
      if (rc < ARCHIVE_WARN) {
        result = Status::DataLoss("archive " + path_ + " is corrupt: " + archive_error_string(a));
        break;
      }
      if (archive_entry_filetype(entry) != AE_IFREG) continue;
      const char* raw_name = archive_entry_pathname(entry);
      std::string rel = raw_name ? raw_name : "";
      while (rel.rfind("./", 0) == 0) rel.erase(0, 2);
      auto held = std::make_unique<Held>();
      held->entry.path = rel;
      held->entry.name = StripCompression(BaseName(rel));
      held->entry.size_bytes = archive_entry_size_is_set(entry) ? archive_entry_size(entry) : -1;
      held->entry.mtime_us = archive_entry_mtime_is_set(entry)
                                 ? static_cast<int64_t>(archive_entry_mtime(entry)) * 1000000 +
                                       archive_entry_mtime_nsec(entry) / 1000
                                 : -1;
      if (!SafeArchivePath(rel)) {
        held->entry.open_error = Status::PermissionDenied("archive member path '" + rel +
                                                          "' is absolute or contains '..': refused, not extracted");
      } else {
        char buf[1 << 16];
        int64_t total = 0;
        for (;;) {
          la_ssize_t n = archive_read_data(a, buf, sizeof buf);
          if (n == 0) break;
          if (n < 0) {
            held->entry.open_error = Status::DataLoss("archive member " + rel + " is corrupt or truncated: " +
                                                      archive_error_string(a));
            break;
          }
          total += n;
          Status st = held->content.Append(buf, static_cast<size_t>(n));
          if (!st.ok()) {
            held->entry.open_error = st;
            break;
          }
        }
        if (held->entry.open_error.ok() && held->entry.size_bytes >= 0 && total != held->entry.size_bytes) {
          held->entry.open_error = Status::DataLoss("archive member " + rel + " declares " +
                                                    std::to_string(held->entry.size_bytes) + " bytes but holds " +
                                                    std::to_string(total));
        }
        held->entry.size_bytes = total;
      }
      Held* h = held.get();
      Compression c = CompressionOf(rel);
      Status open_error = h->entry.open_error;
      h->entry.Open = [h, c, open_error]() -> StatusOr<std::unique_ptr<ByteSource>> {
        if (!open_error.ok()) return open_error;
        return Decompressing(h->content.Open(), c);
      };
      batch_bytes += std::min<int64_t>(h->entry.size_bytes, kSpoolInMemoryBytes);
      delayed.emplace_back(DumpEntryOrderKey(rel), std::move(held));
      if (delayed.size() >= 64 || batch_bytes >= kSpoolInMemoryBytes) {
        Flush(&delayed, visit);
        batch_bytes = 0;
      }
    }
    Flush(&delayed, visit);
    archive_read_free(a);
    if (result.ok() && damaged_headers > 0) {
      result = Status::DataLoss("archive " + path_ + " is damaged: " + first_damage + " (" +
                                std::to_string(damaged_headers) +
                                " blocks skipped to find the next member; members may be missing)");
    }
    return result;
  }

 private:
  struct Held {
    DumpEntry entry;
    SpooledContent content;
  };
  static void Flush(std::vector<std::pair<std::string, std::unique_ptr<Held>>>* batch,
                    const std::function<void(DumpEntry&)>& visit) {
    std::stable_sort(batch->begin(), batch->end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (auto& [key, held] : *batch) visit(held->entry);
    batch->clear();
  }
  std::string path_;
};

}  // namespace

std::string DumpEntryOrderKey(const std::string& path) {
  // Within one module base name, order: buffer assignment, values, live range, anything else.
  static constexpr std::pair<std::string_view, char> kOrder[] = {
      {"-buffer-assignment.txt", '0'}, {"-buffer-assignment-values.txt", '1'}, {"-live-range.txt", '2'}};
  std::string name = StripCompression(path);
  for (const auto& [suffix, rank] : kOrder) {
    if (EndsWith(name, suffix)) {
      return name.substr(0, name.size() - suffix.size()) + '\x01' + rank;
    }
  }
  return name + '\x01' + '9';
}

StatusOr<std::unique_ptr<DumpSource>> DumpSource::Open(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    return Status::NotFound("cannot read " + path + ": " + std::strerror(errno));
  }
  if (S_ISDIR(st.st_mode)) return std::unique_ptr<DumpSource>(new FolderSource(fs::path(path)));
  if (!S_ISREG(st.st_mode)) return Status::InvalidArgument(path + " is neither a folder nor a regular file");
  if (IsArchiveName(path)) return std::unique_ptr<DumpSource>(new ArchiveSource(path));
  return std::unique_ptr<DumpSource>(new SingleFileSource(path, st));
}

}  // namespace xladb::ingest
