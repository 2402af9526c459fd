#include "ingest/source/dump_source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>

#include "ingest/source/dump_source_kinds.h"
#include "ingest/source/path_beneath.h"
#include "ingest/source/run_name.h"

namespace xladb::ingest {

namespace source_kinds {

std::unique_ptr<ByteSource> Decompressing(std::unique_ptr<ByteSource> raw, const std::string& path,
                                          const SourceLimits& limits, const std::string& display) {
  ExpansionLimits expansion{limits.max_member_bytes, limits.max_ratio};
  if (path.ends_with(".gz")) return MakeLimitedDecompressor(std::move(raw), &MakeGzipSource, expansion, display);
  if (path.ends_with(".zst")) return MakeLimitedDecompressor(std::move(raw), &MakeZstdSource, expansion, display);
  return raw;
}

StatusOr<std::unique_ptr<ByteSource>> OpenContent(UniqueFd fd, const std::string& path, const SourceLimits& limits,
                                                  const std::string& display) {
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return Status::IoError("stat " + display + ": " + std::strerror(errno));
  // Opened with O_NONBLOCK, so that a FIFO swapped in since the listing cannot block the open; never read.
  if (!S_ISREG(st.st_mode)) return Status::InvalidArgument(display + " is no longer a regular file: not read");
  return Decompressing(MakeFdSource(fd.Release(), display), path, limits, display);
}

int64_t MtimeUs(const struct stat& st) {
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000 + st.st_mtim.tv_nsec / 1000;
}

std::string JoinDisplay(const std::string& display, const std::string& relative) {
  if (relative.empty()) return display;
  return display.ends_with('/') ? display + relative : display + "/" + relative;
}

}  // namespace source_kinds

namespace {

using source_kinds::SharedFd;

std::string BaseName(std::string_view path) {
  size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

class SingleFileSource : public DumpSource {
 public:
  SingleFileSource(SharedFd file, std::string display, struct stat st, SourceLimits limits)
      : file_(std::move(file)), display_(std::move(display)), st_(st), limits_(std::move(limits)) {}
  Type type() const override { return Type::kFile; }
  std::string DefaultRunName() const override { return DefaultRunNameFor(display_, false); }
  Status ForEach(const std::function<void(DumpEntry&)>& visit) override {
    DumpEntry e;
    e.path = BaseName(display_);
    e.name = StripCompression(e.path);
    e.size_bytes = st_.st_size;
    e.mtime_us = source_kinds::MtimeUs(st_);
    e.Open = [this]() -> StatusOr<std::unique_ptr<ByteSource>> {
      // A dup() per reader: FdSource reads with pread() from its own offset.
      UniqueFd fd(::fcntl(file_->get(), F_DUPFD_CLOEXEC, 0));
      if (!fd.valid()) return Status::IoError("dup " + display_ + ": " + std::strerror(errno));
      return source_kinds::OpenContent(std::move(fd), display_, limits_, display_);
    };
    visit(e);
    return Status::Ok();
  }

 private:
  SharedFd file_;
  std::string display_;
  struct stat st_;
  SourceLimits limits_;
};

// The source for the open descriptor `fd` of `display`: decided from fstat() and the name.
StatusOr<std::unique_ptr<DumpSource>> SourceFor(UniqueFd fd, std::string display, const SourceLimits& limits) {
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return Status::IoError("stat " + display + ": " + std::strerror(errno));
  auto shared = std::make_shared<const UniqueFd>(std::move(fd));
  if (S_ISDIR(st.st_mode)) return source_kinds::MakeFolderSource(std::move(shared), std::move(display), limits);
  if (!S_ISREG(st.st_mode)) return Status::InvalidArgument(display + " is neither a folder nor a regular file");
  if (!ArchiveSuffix(display).empty()) {
    return source_kinds::MakeArchiveSource(std::move(shared), std::move(display), limits);
  }
  return std::unique_ptr<DumpSource>(new SingleFileSource(std::move(shared), std::move(display), st, limits));
}

}  // namespace

std::string_view ArchiveSuffix(std::string_view name) {
  for (std::string_view suffix : {".tar.gz", ".tar.zst", ".tgz", ".tar", ".zip"}) {
    if (name.ends_with(suffix)) return suffix;
  }
  return {};
}

std::string StripCompression(std::string name) {
  if (name.ends_with(".gz")) name.resize(name.size() - 3);
  else if (name.ends_with(".zst")) name.resize(name.size() - 4);
  return name;
}

std::string DumpEntryOrderKey(const std::string& path) {
  // Within one module base name, order: buffer assignment, values, live range, anything else.
  static constexpr std::pair<std::string_view, char> kOrder[] = {
      {"-buffer-assignment.txt", '0'}, {"-buffer-assignment-values.txt", '1'}, {"-live-range.txt", '2'}};
  std::string name = StripCompression(path);
  for (const auto& [suffix, rank] : kOrder) {
    if (name.ends_with(suffix)) {
      return name.substr(0, name.size() - suffix.size()) + '\x01' + rank;
    }
  }
  return name + '\x01' + '9';
}

StatusOr<std::unique_ptr<DumpSource>> DumpSource::Open(const std::string& path, const SourceLimits& limits) {
  // O_NONBLOCK: a FIFO given as the path must not block the open (it is refused once fstat() shows it).
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (!fd.valid()) return Status::NotFound("cannot read " + path + ": " + std::strerror(errno));
  return SourceFor(std::move(fd), path, limits);
}

StatusOr<std::unique_ptr<DumpSource>> DumpSource::OpenBeneath(const std::string& root, const std::string& relative,
                                                              const SourceLimits& limits) {
  UniqueFd root_fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!root_fd.valid()) return Status::NotFound("cannot read " + root + ": " + std::strerror(errno));
  std::string display = source_kinds::JoinDisplay(root, relative);
  int fd = OpenFdBeneath(root_fd.get(), relative, O_RDONLY | O_NONBLOCK);
  if (fd == -ELOOP || fd == -EXDEV) {
    return Status::PermissionDenied(display + " is outside the allowed root or is a symlink");
  }
  if (fd < 0) return Status::NotFound("cannot read " + display + ": " + std::strerror(-fd));
  return SourceFor(UniqueFd(fd), std::move(display), limits);
}

}  // namespace xladb::ingest
