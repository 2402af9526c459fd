// ArchiveSource: the members of a .tar, .tar.gz, .tar.zst, .tgz or .zip read with libarchive from the
// archive's open descriptor, within the expansion caps of SourceLimits (ingest/source/dump_source.h).

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string_view>
#include <vector>

#include "ingest/source/dump_source_kinds.h"
#include "ingest/source/run_name.h"

namespace xladb::ingest::source_kinds {
namespace {

// An archive member spooled to memory, or past kSpoolInMemoryBytes to an unlinked temporary file in the
// spool folder.
class SpooledContent {
 public:
  explicit SpooledContent(const std::string* spool_dir) : spool_dir_(spool_dir) {}
  SpooledContent(const SpooledContent&) = delete;
  SpooledContent& operator=(const SpooledContent&) = delete;
  ~SpooledContent() { Clear(); }

  Status Append(const char* data, size_t n) {
    if (file_ == nullptr && static_cast<int64_t>(memory_.size() + n) <= kSpoolInMemoryBytes) {
      memory_.append(data, n);
      return Status::Ok();
    }
    if (file_ == nullptr) {
      if (Status st = CreateFile(); !st.ok()) return st;
      if (!memory_.empty() && std::fwrite(memory_.data(), 1, memory_.size(), file_) != memory_.size()) {
        return Status::IoError("writing spool file in " + SpoolDirName() + " (disk full?)");
      }
      memory_.clear();
      memory_.shrink_to_fit();
    }
    if (std::fwrite(data, 1, n, file_) != n) {
      return Status::IoError("writing spool file in " + SpoolDirName() + " (disk full?)");
    }
    return Status::Ok();
  }

  // Drops what was spooled (a member refused part way).
  void Clear() {
    memory_.clear();
    memory_.shrink_to_fit();
    if (file_) std::fclose(file_);
    file_ = nullptr;
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

  std::string SpoolDirName() const { return spool_dir_->empty() ? "the temp folder" : *spool_dir_; }

  // An unlinked file: O_TMPFILE in the spool folder, or mkstemp() and unlink() where the file system has no
  // O_TMPFILE; std::tmpfile() when no spool folder is set.
  Status CreateFile() {
    if (spool_dir_->empty()) {
      file_ = std::tmpfile();
      if (file_ == nullptr) return Status::IoError(std::string("tmpfile: ") + std::strerror(errno));
      return Status::Ok();
    }
    int fd = ::open(spool_dir_->c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
      std::string name = *spool_dir_ + "/xladb-spool-XXXXXX";
      fd = ::mkostemp(name.data(), O_CLOEXEC);
      if (fd >= 0) ::unlink(name.c_str());
    }
    if (fd < 0) {
      return Status::IoError("cannot create a spool file in " + *spool_dir_ + ": " + std::strerror(errno));
    }
    file_ = ::fdopen(fd, "w+b");
    if (file_ == nullptr) {
      ::close(fd);
      return Status::IoError("fdopen of a spool file: " + std::string(std::strerror(errno)));
    }
    return Status::Ok();
  }

  const std::string* spool_dir_;
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

std::string ErrorString(struct archive* a) {
  const char* s = archive_error_string(a);
  return s ? s : "";
}

class ArchiveSource : public DumpSource {
 public:
  ArchiveSource(SharedFd file, std::string display, SourceLimits limits)
      : file_(std::move(file)),
        display_(std::move(display)),
        archive_name_("archive " + display_),
        limits_(std::move(limits)) {}
  Type type() const override { return Type::kArchive; }
  std::string DefaultRunName() const override { return DefaultRunNameFor(display_, false); }
  std::string WrapperFolderName() const override {
    const size_t slash = display_.rfind('/');
    std::string name = slash == std::string::npos ? display_ : display_.substr(slash + 1);
    name.resize(name.size() - ArchiveSuffix(name).size());
    return name;
  }

  Status ForEach(const std::function<void(DumpEntry&)>& visit) override {
    if (::lseek(file_->get(), 0, SEEK_SET) < 0) {
      return Status::IoError("cannot read archive " + display_ + ": " + std::strerror(errno));
    }
    struct archive* a = archive_read_new();
    archive_read_support_filter_all(a);
    archive_read_support_format_all(a);
    if (archive_read_open_fd(a, file_->get(), 1 << 16) != ARCHIVE_OK) {
      Status st = Status::DataLoss("cannot open archive " + display_ + ": " + ErrorString(a));
      archive_read_free(a);
      return st;
    }
    expanded_bytes_ = 0;
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
        if (damaged_headers++ == 0) first_damage = ErrorString(a);
        continue;
      }
      if (rc < ARCHIVE_WARN) {
        result = Status::DataLoss("archive " + display_ + " is corrupt: " + ErrorString(a));
        break;
      }
      if (archive_entry_filetype(entry) != AE_IFREG) {
        // Not listed, but what it holds is read through the caps rather than skipped unchecked.
        result = ReadMember(a, "", nullptr);
        if (!result.ok()) break;
        continue;
      }
      auto held = std::make_unique<Held>(&limits_.spool_dir);
      Status stop = ReadEntry(a, entry, held.get());
      Held* h = held.get();
      h->entry.Open = [h, limits = &limits_, display = "archive member " + h->entry.path + " of " + display_]()
          -> StatusOr<std::unique_ptr<ByteSource>> {
        if (!h->entry.open_error.ok()) return h->entry.open_error;
        return Decompressing(h->content.Open(), h->entry.path, *limits, display);
      };
      batch_bytes += std::min<int64_t>(h->entry.size_bytes, kSpoolInMemoryBytes);
      delayed.emplace_back(DumpEntryOrderKey(h->entry.path), std::move(held));
      if (!stop.ok()) {
        result = stop;
        break;
      }
      if (delayed.size() >= 64 || batch_bytes >= kSpoolInMemoryBytes) {
        Flush(&delayed, visit);
        batch_bytes = 0;
      }
    }
    Flush(&delayed, visit);
    archive_read_free(a);
    if (result.ok() && damaged_headers > 0) {
      result = Status::DataLoss("archive " + display_ + " is damaged: " + first_damage + " (" +
                                std::to_string(damaged_headers) +
                                " blocks skipped to find the next member; members may be missing)");
    }
    return result;
  }

 private:
  struct Held {
    explicit Held(const std::string* spool_dir) : content(spool_dir) {}
    DumpEntry entry;
    SpooledContent content;
  };

  // Fills `held` from the member whose header is `entry`. A member that cannot be stored is an entry with
  // an open_error; a non-OK return (an archive cap) stops the archive, and is the member's error too.
  Status ReadEntry(struct archive* a, struct archive_entry* entry, Held* held) {
    const char* raw_name = archive_entry_pathname(entry);
    std::string rel = raw_name ? raw_name : "";
    while (rel.rfind("./", 0) == 0) rel.erase(0, 2);
    DumpEntry& e = held->entry;
    e.path = rel;
    size_t slash = rel.rfind('/');
    e.name = StripCompression(slash == std::string::npos ? rel : rel.substr(slash + 1));
    e.size_bytes = archive_entry_size_is_set(entry) ? archive_entry_size(entry) : -1;
    // A member's time is what its archive says, anything a time_t holds: past what µs in int64 can count it
    // is unknown (-1), never an overflow.
    const bool mtime_fits = archive_entry_mtime_is_set(entry) && archive_entry_mtime(entry) >= 0 &&
                            archive_entry_mtime(entry) < std::numeric_limits<int64_t>::max() / 1000000 - 1;
    e.mtime_us = mtime_fits ? static_cast<int64_t>(archive_entry_mtime(entry)) * 1000000 +
                                  archive_entry_mtime_nsec(entry) / 1000
                            : -1;
    const std::string member = "archive member " + rel;
    if (!SafeArchivePath(rel)) {
      e.open_error = Status::PermissionDenied("archive member path '" + rel +
                                              "' is absolute or contains '..': refused, not extracted");
    } else if (e.size_bytes > limits_.max_member_bytes) {
      e.open_error = ExpansionCapError(member, "member", limits_.max_member_bytes);  // as its header declares
    }
    Status stop = ReadMember(a, member, held);
    if (!stop.ok()) {
      e.open_error = stop;
      held->content.Clear();
    }
    return stop;
  }

  // Reads the current member's data, counting every byte against the archive cap and ratio, into
  // held->content while held->entry.open_error is OK and the member stays within the member cap (`held`
  // null: reads and drops it). Returns non-OK only when an archive cap stops the archive.
  Status ReadMember(struct archive* a, const std::string& member, Held* held) {
    char buf[1 << 16];
    int64_t total = 0;
    for (;;) {
      la_ssize_t n = archive_read_data(a, buf, sizeof buf);
      if (n == 0) break;
      if (n < 0) {
        if (held != nullptr && held->entry.open_error.ok()) {
          held->entry.open_error = Status::DataLoss(member + " is corrupt or truncated: " + ErrorString(a));
        }
        break;
      }
      total += n;
      expanded_bytes_ += n;
      // Before anything more is spooled: the caps on the whole archive, then the member's own.
      if (expanded_bytes_ > limits_.max_archive_bytes) {
        return ExpansionCapError(archive_name_, "archive", limits_.max_archive_bytes);
      }
      if (Status st = CheckExpansionRatio(archive_name_, expanded_bytes_, archive_filter_bytes(a, -1),
                                          limits_.max_ratio);
          !st.ok()) {
        return st;
      }
      if (held == nullptr || !held->entry.open_error.ok()) continue;  // refused: read only to pass the caps
      if (total > limits_.max_member_bytes) {
        held->entry.open_error = ExpansionCapError(member, "member", limits_.max_member_bytes);
        held->content.Clear();
        continue;
      }
      if (Status st = held->content.Append(buf, static_cast<size_t>(n)); !st.ok()) {
        held->entry.open_error = st;
        held->content.Clear();
      }
    }
    if (held == nullptr) return Status::Ok();
    DumpEntry& e = held->entry;
    if (e.open_error.ok() && e.size_bytes >= 0 && total != e.size_bytes) {
      e.open_error = Status::DataLoss(member + " declares " + std::to_string(e.size_bytes) + " bytes but holds " +
                                      std::to_string(total));
    }
    e.size_bytes = total;
    return Status::Ok();
  }

  static void Flush(std::vector<std::pair<std::string, std::unique_ptr<Held>>>* batch,
                    const std::function<void(DumpEntry&)>& visit) {
    std::stable_sort(batch->begin(), batch->end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (auto& [key, held] : *batch) visit(held->entry);
    batch->clear();
  }

  SharedFd file_;
  std::string display_;
  std::string archive_name_;  // "archive <display_>", for errors
  SourceLimits limits_;
  int64_t expanded_bytes_ = 0;  // of all members read so far by the ForEach() in progress
};

}  // namespace

std::unique_ptr<DumpSource> MakeArchiveSource(SharedFd file, std::string display_path, SourceLimits limits) {
  return std::make_unique<ArchiveSource>(std::move(file), std::move(display_path), std::move(limits));
}

}  // namespace xladb::ingest::source_kinds
