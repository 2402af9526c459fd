// FolderSource: a dump folder walked through file descriptors beneath its root (ingest/source/dump_source.h).

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "ingest/source/dump_source_kinds.h"
#include "ingest/source/run_name.h"

namespace xladb::ingest::source_kinds {
namespace {

const char* SpecialFileKind(mode_t mode) {
  return S_ISFIFO(mode) ? "a FIFO" : S_ISSOCK(mode) ? "a socket" : "a device";
}

class FolderSource : public DumpSource {
 public:
  FolderSource(SharedFd root, std::string display, SourceLimits limits)
      : root_(std::move(root)), display_(std::move(display)), limits_(std::move(limits)) {}
  Type type() const override { return Type::kFolder; }
  std::string DefaultRunName() const override { return DefaultRunNameFor(display_, true); }

  Status ForEach(const std::function<void(DumpEntry&)>& visit) override {
    std::vector<Found> files;
    if (Status st = List(&files); !st.ok()) return st;
    std::sort(files.begin(), files.end(),
              [](const Found& a, const Found& b) { return a.key != b.key ? a.key < b.key : a.rel < b.rel; });
    for (Found& f : files) {
      DumpEntry e = Entry(f);
      visit(e);
    }
    return Status::Ok();
  }

 private:
  struct Found {
    std::string key, rel;
    struct stat st;
    Status unreadable;  // non-OK: reported as an unreadable entry instead of read
  };

  // Every regular file below the root, and every folder, FIFO, socket or device that cannot be read, as an
  // unreadable entry. Each folder is opened beneath the root by its path (RESOLVE_NO_SYMLINKS), so a folder
  // swapped for a symlink during the walk is not entered, and no descriptor is held across folders.
  Status List(std::vector<Found>* files) const {
    std::vector<std::string> folders{""};
    while (!folders.empty()) {
      std::string folder = std::move(folders.back());
      folders.pop_back();
      int fd = OpenFdBeneath(root_->get(), folder, O_RDONLY | O_DIRECTORY);
      DIR* dir = fd >= 0 ? ::fdopendir(fd) : nullptr;
      if (dir == nullptr) {
        int error = fd >= 0 ? errno : -fd;
        if (fd >= 0) ::close(fd);
        if (folder.empty()) {
          return Status::IoError("cannot read folder " + display_ + ": " + std::strerror(error));
        }
        // Gone, or replaced by a symlink (not listed) or a file since its parent was listed.
        if (error == ENOENT || error == ELOOP || error == ENOTDIR) continue;
        // Bad-input catalog (tests/store/bad_input_test.cc): a subfolder that cannot be opened is reported as
        // an unreadable entry (an error verdict naming it) instead of being skipped without a word.
        files->push_back({DumpEntryOrderKey(folder), folder, {},
                          Status::IoError("cannot read folder " + JoinDisplay(display_, folder) + ": " +
                                          std::strerror(error) + "; the files in it are not ingested")});
        continue;
      }
      errno = 0;
      while (const struct dirent* de = ::readdir(dir)) {
        std::string_view name = de->d_name;
        if (name == "." || name == "..") continue;
        std::string rel = folder.empty() ? std::string(name) : folder + "/" + std::string(name);
        struct stat st;
        if (::fstatat(::dirfd(dir), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
          if (errno != ENOENT) {  // vanished since readdir(): nothing to report
            files->push_back({DumpEntryOrderKey(rel), rel, {},
                              Status::IoError("cannot read " + JoinDisplay(display_, rel) + ": " +
                                              std::strerror(errno))});
          }
        } else if (S_ISLNK(st.st_mode)) {
          // Symlinks are not followed (no loops, no escapes) and not listed.
        } else if (S_ISDIR(st.st_mode)) {
          folders.push_back(std::move(rel));
        } else if (S_ISREG(st.st_mode)) {
          files->push_back({DumpEntryOrderKey(rel), rel, st, Status::Ok()});
        } else {
          // A FIFO, socket or device is reported, never read: a FIFO would block the ingest in read().
          std::string message = JoinDisplay(display_, rel) + " is not a regular file (" +
                                SpecialFileKind(st.st_mode) + "): not read";
          files->push_back({DumpEntryOrderKey(rel), rel, st, Status::InvalidArgument(std::move(message))});
        }
        errno = 0;
      }
      int list_error = errno;
      ::closedir(dir);
      if (list_error != 0) {
        Status st = Status::IoError("cannot list folder " + JoinDisplay(display_, folder) + ": " +
                                    std::strerror(list_error) + "; the files in it may be missing");
        if (folder.empty()) return st;
        files->push_back({DumpEntryOrderKey(folder), folder, {}, st});
      }
    }
    return Status::Ok();
  }

  DumpEntry Entry(const Found& f) const {
    DumpEntry e;
    e.path = f.rel;
    size_t slash = f.rel.rfind('/');
    e.name = StripCompression(slash == std::string::npos ? f.rel : f.rel.substr(slash + 1));
    if (f.st.st_mode != 0) e.mtime_us = MtimeUs(f.st);  // a FIFO, socket or device has its stat()
    if (!f.unreadable.ok()) {
      e.open_error = f.unreadable;
      e.Open = [error = f.unreadable]() -> StatusOr<std::unique_ptr<ByteSource>> { return error; };
      return e;
    }
    e.size_bytes = f.st.st_size;
    e.Open = [root = root_, rel = f.rel, display = JoinDisplay(display_, f.rel),
              limits = &limits_]() -> StatusOr<std::unique_ptr<ByteSource>> {
      // At the time of use, beneath the root: a file swapped for a symlink since the listing is refused.
      int fd = OpenFdBeneath(root->get(), rel, O_RDONLY | O_NONBLOCK);
      if (fd == -ELOOP || fd == -EXDEV) {
        return Status::PermissionDenied("open " + display +
                                        ": refused: it is now a symlink or leads outside the run folder");
      }
      if (fd < 0) return Status::IoError("open " + display + ": " + std::strerror(-fd));
      return OpenContent(UniqueFd(fd), rel, *limits, display);
    };
    return e;
  }

  SharedFd root_;
  std::string display_;
  SourceLimits limits_;
};

}  // namespace

std::unique_ptr<DumpSource> MakeFolderSource(SharedFd folder, std::string display_path, SourceLimits limits) {
  return std::make_unique<FolderSource>(std::move(folder), std::move(display_path), std::move(limits));
}

}  // namespace xladb::ingest::source_kinds
