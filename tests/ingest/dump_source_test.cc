// DumpSource: bounded expansion of archives and compressed files (issue 10, item 5), and reading beneath the
// root at the time of use, never through a symlink swapped in after the listing (item 8).

#include "ingest/source/dump_source.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ingest/source/path_beneath.h"
#include "tests/ingest/archive_writer.h"
#include "tests/store/test_dirs.h"

namespace xladb::ingest {
namespace {

namespace fs = std::filesystem;
using testing::ArchiveMember;
using testing::Packing;
using testing::ReadFile;
using testing::SeedFile;
using testing::TempDir;
using testing::WriteArchive;
using testing::WriteFile;

constexpr int64_t kMiB = int64_t{1} << 20;
constexpr int64_t kGiB = int64_t{1} << 30;
const std::string kSeedName = "module_0001.jit_seed.after_optimizations-buffer-assignment.txt";

// The whole content of an entry, or the error that stopped reading it.
StatusOr<std::string> ReadAll(DumpEntry& entry) {
  auto source = entry.Open();
  if (!source.ok()) return source.status();
  std::string out;
  std::string buf(kMiB, '\0');
  for (;;) {
    auto n = source.value()->Read(buf.data(), buf.size());
    if (!n.ok()) return n.status();
    if (*n == 0) return out;
    out.append(buf, 0, *n);
  }
}

struct Visited {
  Status open_error;
  std::string content;  // when readable
  Status read_error;    // when open_error is OK but reading failed
};

// Opens `path` and visits every entry, reading each; returns ForEach's status.
Status VisitAll(const std::string& path, const SourceLimits& limits, std::map<std::string, Visited>* out) {
  auto source = DumpSource::Open(path, limits);
  if (!source.ok()) return source.status();
  return source.value()->ForEach([&](DumpEntry& e) {
    Visited& v = (*out)[e.path];
    v.open_error = e.open_error;
    if (!e.open_error.ok()) return;
    auto content = ReadAll(e);
    if (content.ok()) {
      v.content = std::move(content.value());
    } else {
      v.read_error = content.status();
    }
  });
}

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// Sizes of the files this process holds open in `dir` (spool files are unlinked, so only their descriptors
// show them).
std::vector<int64_t> OpenFileSizesIn(const std::string& dir) {
  std::vector<int64_t> sizes;
  for (const auto& fd : fs::directory_iterator("/proc/self/fd")) {
    char target[4096];
    ssize_t n = ::readlink(fd.path().c_str(), target, sizeof target - 1);
    if (n <= 0) continue;
    target[n] = '\0';
    struct stat st;
    if (std::string(target).rfind(dir + "/", 0) == 0 && ::stat(fd.path().c_str(), &st) == 0) {
      sizes.push_back(st.st_size);
    }
  }
  return sizes;
}

// While alive, no file this process writes may grow past `bytes` (RLIMIT_FSIZE; SIGXFSZ ignored, so such a
// write fails with EFBIG instead of killing the test).
class FileSizeLimit {
 public:
  explicit FileSizeLimit(int64_t bytes) {
    ::getrlimit(RLIMIT_FSIZE, &saved_);
    saved_handler_ = std::signal(SIGXFSZ, SIG_IGN);
    struct rlimit limit = saved_;
    limit.rlim_cur = static_cast<rlim_t>(bytes);
    ok_ = ::setrlimit(RLIMIT_FSIZE, &limit) == 0;
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &saved_);
    std::signal(SIGXFSZ, saved_handler_);
  }
  bool ok() const { return ok_; }

 private:
  struct rlimit saved_;
  void (*saved_handler_)(int);
  bool ok_ = false;
};

// ---------------------------------------------------------------------------------------------------------
// Bounded expansion

TEST(DumpSourceLimits, ZstdTarWithA4GiBMemberOfZerosIsStoppedQuicklyByTheRatioCap) {
  TempDir tmp;
  const std::string seed = ReadFile(SeedFile("000"));
  const std::string archive = tmp / "bomb.tar.zst";
  ASSERT_EQ(WriteArchive(archive, Packing::kTarZst,
                         {{"run/" + kSeedName, seed}, {"run/zeros-buffer-assignment.txt", "", 4 * kGiB}}),
            "");
  ASSERT_LT(fs::file_size(archive), 4 * kMiB) << "the point: a small file that expands to 4 GiB";
  fs::create_directory(tmp / "spool");
  SourceLimits limits;  // the defaults: the ratio cap of 1000 is checked once past 64 MiB
  limits.spool_dir = tmp / "spool";
  std::map<std::string, Visited> seen;
  auto start = std::chrono::steady_clock::now();
  Status walk = VisitAll(archive, limits, &seen);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(walk.code(), Status::Code::kResourceExhausted) << walk.ToString();
  EXPECT_TRUE(Contains(walk.message(), "past the ratio cap of 1000")) << walk.message();
  EXPECT_TRUE(Contains(walk.message(), "bomb.tar.zst")) << walk.message();
  // Stopped a little past 64 MiB of the 4 GiB: reading it all takes several seconds even on a fast machine.
  EXPECT_LT(seconds, 10.0);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen["run/" + kSeedName].content, seed) << "the member read before the bomb is visited whole";
  EXPECT_EQ(seen["run/zeros-buffer-assignment.txt"].open_error.code(), Status::Code::kResourceExhausted);
  EXPECT_EQ(seen["run/zeros-buffer-assignment.txt"].open_error.message(), walk.message());
}

TEST(DumpSourceLimits, AnArchivePast64MiBWithinTheRatioIsReadWhole) {
  TempDir tmp;
  const std::string archive = tmp / "plain.tar";  // compressed bytes = expanded bytes: a ratio of about 1
  ASSERT_EQ(WriteArchive(archive, Packing::kTar, {{"run/zeros.txt", "", 70 * kMiB}, {"run/tail.txt", "tail\n"}}),
            "");
  std::map<std::string, Visited> seen;
  Status walk = VisitAll(archive, {}, &seen);
  EXPECT_TRUE(walk.ok()) << walk.ToString();
  EXPECT_EQ(seen["run/zeros.txt"].content.size(), static_cast<size_t>(70 * kMiB));
  EXPECT_EQ(seen["run/tail.txt"].content, "tail\n");
}

TEST(DumpSourceLimits, AMemberPastTheMemberCapIsAnErrorAndTheNextMemberIsVisited) {
  TempDir tmp;
  const std::string seed = ReadFile(SeedFile("000"));
  const std::string archive = tmp / "run.tar.gz";
  ASSERT_EQ(WriteArchive(archive, Packing::kTarGz,
                         {{"run/big-buffer-assignment.txt", testing::Incompressible(2 * kMiB)},
                          {"run/" + kSeedName, seed}}),
            "");
  SourceLimits limits;
  limits.max_member_bytes = kMiB;
  std::map<std::string, Visited> seen;
  Status walk = VisitAll(archive, limits, &seen);
  EXPECT_TRUE(walk.ok()) << walk.ToString();
  ASSERT_EQ(seen.size(), 2u);
  const Visited& big = seen["run/big-buffer-assignment.txt"];
  EXPECT_EQ(big.open_error.code(), Status::Code::kResourceExhausted);
  EXPECT_TRUE(Contains(big.open_error.message(), "expands past the member cap of 1048576 bytes"))
      << big.open_error.message();
  EXPECT_EQ(seen["run/" + kSeedName].content, seed);
}

TEST(DumpSourceLimits, AMemberPastTheCapIsNeverSpooledPastItAndSpoolsGoToTheSpoolDir) {
  TempDir tmp;
  const std::string seed = ReadFile(SeedFile("000"));
  const std::string archive = tmp / "run.tar.zst";
  // Archive order: 80 MiB (spooled to a file: past kSpoolInMemoryBytes, within the cap), 4 GiB, the seed.
  ASSERT_EQ(WriteArchive(archive, Packing::kTarZst,
                         {{"run/a-80mib.txt", "", 80 * kMiB},
                          {"run/b-4gib-buffer-assignment.txt", "", 4 * kGiB},
                          {"run/c/" + kSeedName, seed}}),
            "");
  const std::string spool = tmp / "spool";
  fs::create_directory(spool);
  SourceLimits limits;
  limits.max_member_bytes = 96 * kMiB;
  limits.max_ratio = 0;  // off: the member cap alone must stop the 4 GiB member
  limits.spool_dir = spool;
  auto source = DumpSource::Open(archive, limits);
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  std::map<std::string, Status> errors;
  std::map<std::string, int64_t> read_bytes;
  std::vector<int64_t> spool_sizes_in_first_visit;
  Status walk;
  {
    // Any spool write past the member cap would fail (EFBIG) and show as a write error instead of the cap.
    FileSizeLimit limit(96 * kMiB);
    ASSERT_TRUE(limit.ok());
    walk = source.value()->ForEach([&](DumpEntry& e) {
      if (e.path == "run/a-80mib.txt") spool_sizes_in_first_visit = OpenFileSizesIn(spool);
      errors[e.path] = e.open_error;
      if (!e.open_error.ok()) return;
      auto content = ReadAll(e);
      read_bytes[e.path] = content.ok() ? static_cast<int64_t>(content->size()) : -1;
    });
  }
  EXPECT_TRUE(walk.ok()) << walk.ToString();
  ASSERT_EQ(errors.size(), 3u);
  // The 80 MiB member was spooled to a file in the spool folder (unlinked: only its descriptor shows it).
  EXPECT_EQ(spool_sizes_in_first_visit, std::vector<int64_t>{80 * kMiB});
  EXPECT_EQ(read_bytes["run/a-80mib.txt"], 80 * kMiB);
  const Status& big = errors["run/b-4gib-buffer-assignment.txt"];
  EXPECT_EQ(big.code(), Status::Code::kResourceExhausted) << big.ToString();
  EXPECT_TRUE(Contains(big.message(), "expands past the member cap of 100663296 bytes")) << big.message();
  EXPECT_EQ(read_bytes["run/c/" + kSeedName], static_cast<int64_t>(seed.size()));
  EXPECT_TRUE(OpenFileSizesIn(spool).empty()) << "spool files are closed (and so gone) once visited";
}

TEST(DumpSourceLimits, PastTheArchiveCapTheWalkStopsWithItsError) {
  TempDir tmp;
  const std::string archive = tmp / "run.tar";
  ASSERT_EQ(WriteArchive(archive, Packing::kTar,
                         {{"run/1.txt", testing::Incompressible(3 * kMiB, 1)},
                          {"run/2.txt", testing::Incompressible(3 * kMiB, 2)},
                          {"run/3.txt", testing::Incompressible(3 * kMiB, 3)},
                          {"run/4.txt", "never reached"}}),
            "");
  SourceLimits limits;
  limits.max_archive_bytes = 8 * kMiB;
  std::map<std::string, Visited> seen;
  Status walk = VisitAll(archive, limits, &seen);
  EXPECT_EQ(walk.code(), Status::Code::kResourceExhausted) << walk.ToString();
  EXPECT_TRUE(Contains(walk.message(), "expands past the archive cap of 8388608 bytes")) << walk.message();
  EXPECT_EQ(seen["run/1.txt"].content, testing::Incompressible(3 * kMiB, 1));
  EXPECT_EQ(seen["run/2.txt"].content, testing::Incompressible(3 * kMiB, 2));
  EXPECT_EQ(seen["run/3.txt"].open_error.message(), walk.message()) << "the member in hand names the cap";
  EXPECT_EQ(seen.count("run/4.txt"), 0u);
}

TEST(DumpSourceLimits, ASingleZstFilePastTheMemberCapFailsToRead) {
  TempDir tmp;
  const std::string file = tmp / (kSeedName + ".zst");
  ASSERT_EQ(WriteArchive(file, Packing::kZstFile, {{"x", "", 16 * kMiB}}), "");
  SourceLimits limits;
  limits.max_member_bytes = 8 * kMiB;
  auto source = DumpSource::Open(file, limits);
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  int visits = 0;
  ASSERT_TRUE(source.value()->ForEach([&](DumpEntry& e) {
    ++visits;
    ASSERT_TRUE(e.open_error.ok());
    auto content = e.Open();
    ASSERT_TRUE(content.ok());
    int64_t bytes = 0;
    Status error;
    std::string buf(kMiB, '\0');
    for (;;) {
      auto n = content.value()->Read(buf.data(), buf.size());
      if (!n.ok()) {
        error = n.status();
        break;
      }
      if (*n == 0) break;
      bytes += static_cast<int64_t>(*n);
    }
    EXPECT_EQ(error.code(), Status::Code::kResourceExhausted) << error.ToString();
    EXPECT_TRUE(Contains(error.message(), "expands past the member cap of 8388608 bytes")) << error.message();
    EXPECT_EQ(bytes, 8 * kMiB) << "everything up to the cap, nothing past it";
  }).ok());
  EXPECT_EQ(visits, 1);

  // With the default caps, 100 MiB of zeros (a ratio far past 1000) stops once past 64 MiB.
  ASSERT_EQ(WriteArchive(file, Packing::kZstFile, {{"x", "", 100 * kMiB}}), "");
  std::map<std::string, Visited> seen;
  ASSERT_TRUE(VisitAll(file, {}, &seen).ok());
  EXPECT_TRUE(Contains(seen[kSeedName + ".zst"].read_error.message(), "past the ratio cap of 1000"))
      << seen[kSeedName + ".zst"].read_error.ToString();
}

TEST(DumpSourceLimits, ACompressedFileInAFolderPastTheMemberCapIsThatFilesError) {
  TempDir tmp;
  const std::string seed = ReadFile(SeedFile("000"));
  fs::create_directories(tmp / "run");
  ASSERT_EQ(WriteArchive(tmp / "run/big-buffer-assignment.txt.gz", Packing::kGzFile, {{"x", "", 16 * kMiB}}), "");
  WriteFile(tmp / ("run/" + kSeedName), seed);
  SourceLimits limits;
  limits.max_member_bytes = 8 * kMiB;
  std::map<std::string, Visited> seen;
  ASSERT_TRUE(VisitAll(tmp / "run", limits, &seen).ok());
  EXPECT_TRUE(Contains(seen["big-buffer-assignment.txt.gz"].read_error.message(),
                       "expands past the member cap of 8388608 bytes"))
      << seen["big-buffer-assignment.txt.gz"].read_error.ToString();
  EXPECT_EQ(seen[kSeedName].content, seed);
}

// ---------------------------------------------------------------------------------------------------------
// Reading beneath the root at the time of use

TEST(DumpSourcePaths, FilesAndFoldersSwappedForSymlinksAfterTheListingAreRefused) {
  TempDir tmp;
  const std::string seed = ReadFile(SeedFile("000"));
  const std::string run = tmp / "run";
  WriteFile(run + "/a.txt", seed);
  WriteFile(run + "/b.txt", seed);
  WriteFile(run + "/c.txt", seed);
  WriteFile(run + "/sub/d.txt", seed);
  WriteFile(tmp / "outside/secret.txt", "SECRET\n");
  WriteFile(tmp / "outside/d.txt", "SECRET\n");
  auto source = DumpSource::Open(run);
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  std::map<std::string, Visited> seen;
  Status walk = source.value()->ForEach([&](DumpEntry& e) {
    if (e.path == "a.txt") {
      // Listed already; now swapped: a file for a symlink out, a file for a FIFO, a folder for a symlink out.
      fs::remove(run + "/b.txt");
      fs::create_symlink(tmp / "outside/secret.txt", run + "/b.txt");
      fs::remove(run + "/c.txt");
      ASSERT_EQ(::mkfifo((run + "/c.txt").c_str(), 0644), 0);
      fs::rename(run + "/sub", tmp / "sub_moved");
      fs::create_directory_symlink(tmp / "outside", run + "/sub");
    }
    Visited& v = seen[e.path];
    auto content = ReadAll(e);
    if (content.ok()) {
      v.content = content.value();
    } else {
      v.read_error = content.status();
    }
  });
  ASSERT_TRUE(walk.ok()) << walk.ToString();
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(seen["a.txt"].content, seed);
  for (const std::string path : {"b.txt", "sub/d.txt"}) {
    const Status& st = seen[path].read_error;
    EXPECT_EQ(st.code(), Status::Code::kPermissionDenied) << path << ": " << st.ToString();
    EXPECT_TRUE(Contains(st.message(), "is now a symlink or leads outside the run folder")) << st.message();
    EXPECT_FALSE(Contains(st.message(), "outside/")) << "the link's target is not echoed: " << st.message();
    EXPECT_EQ(seen[path].content, "");
  }
  EXPECT_EQ(seen["c.txt"].read_error.code(), Status::Code::kInvalidArgument) << "a FIFO is never read (or waited on)";
}

// root/ holds a folder, a plain file, a .tar.zst, and symlinks to outside and inside; outside/ is beside it.
class OpenBeneathTest : public ::testing::Test {
 protected:
  void SetUp() override {
    seed_ = ReadFile(SeedFile("000"));
    root_ = tmp_ / "root";
    WriteFile(root_ + "/ci/run-9/xla_dump/" + kSeedName, seed_);
    WriteFile(root_ + "/single-buffer-assignment.txt", seed_);
    ASSERT_EQ(WriteArchive(root_ + "/pack.tar.zst", Packing::kTarZst, {{"p/" + kSeedName, seed_}}), "");
    WriteFile(tmp_ / ("outside/" + kSeedName), "SECRET\n");
    fs::create_directory_symlink(tmp_ / "outside", root_ + "/out");
    fs::create_directory_symlink("ci", root_ + "/ci_link");  // inside the root, but a symlink all the same
    fs::create_symlink(root_ + "/single-buffer-assignment.txt", root_ + "/file_link");
  }

  // The entries' contents, by path, or the first error.
  StatusOr<std::map<std::string, std::string>> Read(const std::string& relative, DumpSource::Type* type = nullptr,
                                                    std::string* run_name = nullptr) {
    auto source = DumpSource::OpenBeneath(root_, relative);
    if (!source.ok()) return source.status();
    if (type) *type = source.value()->type();
    if (run_name) *run_name = source.value()->DefaultRunName();
    std::map<std::string, std::string> contents;
    Status first;
    Status walk = source.value()->ForEach([&](DumpEntry& e) {
      auto content = ReadAll(e);
      if (content.ok()) {
        contents[e.path] = content.value();
      } else if (first.ok()) {
        first = content.status();
      }
    });
    if (!walk.ok()) return walk;
    if (!first.ok()) return first;
    return contents;
  }

  TempDir tmp_;
  std::string root_, seed_;
};

TEST_F(OpenBeneathTest, ReadsAFolderAPlainFileAndATarZst) {
  DumpSource::Type type;
  std::string name;
  auto folder = Read("ci/run-9/xla_dump", &type, &name);
  ASSERT_TRUE(folder.ok()) << folder.status().ToString();
  EXPECT_EQ(type, DumpSource::Type::kFolder);
  EXPECT_EQ(name, "run-9");
  EXPECT_EQ(folder.value(), (std::map<std::string, std::string>{{kSeedName, seed_}}));

  auto file = Read("single-buffer-assignment.txt", &type, &name);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ(type, DumpSource::Type::kFile);
  EXPECT_EQ(name, "single-buffer-assignment");
  EXPECT_EQ(file.value(), (std::map<std::string, std::string>{{"single-buffer-assignment.txt", seed_}}));

  auto archive = Read("pack.tar.zst", &type, &name);
  ASSERT_TRUE(archive.ok()) << archive.status().ToString();
  EXPECT_EQ(type, DumpSource::Type::kArchive);
  EXPECT_EQ(name, "pack");
  EXPECT_EQ(archive.value(), (std::map<std::string, std::string>{{"p/" + kSeedName, seed_}}));

  auto whole = Read("", &type);
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  EXPECT_EQ(type, DumpSource::Type::kFolder);
  EXPECT_EQ(whole->count("ci/run-9/xla_dump/" + kSeedName), 1u);
  EXPECT_EQ(whole->count("out/" + kSeedName), 0u) << "symlinks are not listed";
  EXPECT_EQ(whole->size(), 3u);  // the seed, the single file and the archive (read as a file)
}

TEST_F(OpenBeneathTest, RefusesSymlinksAndEscapesWithoutNamingWhereTheyLead) {
  const std::vector<std::string> refused = {"out", "out/" + kSeedName, "ci_link/run-9/xla_dump", "file_link",
                                            "..",  "../outside",        "ci/../../outside",         "/etc",
                                            "/"};
  for (const std::string& relative : refused) {
    auto source = DumpSource::OpenBeneath(root_, relative);
    ASSERT_FALSE(source.ok()) << relative;
    EXPECT_EQ(source.status().code(), Status::Code::kPermissionDenied) << relative;
    EXPECT_TRUE(Contains(source.status().message(), "is outside the allowed root or is a symlink"))
        << source.status().message();
    EXPECT_FALSE(Contains(source.status().message(), tmp_ / "outside")) << source.status().message();
  }
  auto missing = DumpSource::OpenBeneath(root_, "no_such_run");
  EXPECT_EQ(missing.status().code(), Status::Code::kNotFound) << missing.status().ToString();
  // ".." that stays inside the root is only a path.
  EXPECT_TRUE(DumpSource::OpenBeneath(root_, "ci/../single-buffer-assignment.txt").ok());
}

TEST_F(OpenBeneathTest, TheWalkWithoutOpenat2RefusesTheSameWay) {
  UniqueFd root(::open(root_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  ASSERT_TRUE(root.valid());
  const std::vector<std::string> links = {"out", "out/" + kSeedName, "ci_link/run-9", "file_link"};
  for (const std::string& relative : links) {
    EXPECT_EQ(OpenFdBeneathByWalk(root.get(), relative, O_RDONLY), -ELOOP) << relative;
  }
  for (const std::string relative : {"..", "../outside", "ci/../single-buffer-assignment.txt", "/etc"}) {
    EXPECT_EQ(OpenFdBeneathByWalk(root.get(), relative, O_RDONLY), -EXDEV) << relative;
  }
  EXPECT_EQ(OpenFdBeneathByWalk(root.get(), "nothing/here", O_RDONLY), -ENOENT);
  const std::vector<std::string> inside = {"", "ci/run-9/xla_dump", "./ci//run-9/xla_dump/" + kSeedName};
  for (const std::string& relative : inside) {
    UniqueFd fd(OpenFdBeneathByWalk(root.get(), relative, O_RDONLY));
    EXPECT_TRUE(fd.valid()) << relative << ": " << std::strerror(-fd.get());
  }
  UniqueFd file(OpenFdBeneathByWalk(root.get(), "ci/run-9/xla_dump/" + kSeedName, O_RDONLY));
  ASSERT_TRUE(file.valid());
  std::string head(6, '\0');
  ASSERT_EQ(::read(file.get(), head.data(), head.size()), 6);
  EXPECT_EQ(head, seed_.substr(0, 6));
}

}  // namespace
}  // namespace xladb::ingest
