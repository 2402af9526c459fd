// Database files (issue 26, item 5): a --db that names a FIFO hung every command forever in SQLite's open.
// Database::Open() and CheckDatabaseFile() refuse anything but a regular file (or a path not there yet) at
// once. Each open runs in a child process the test kills after a bound, so a hang fails the test instead of
// hanging it.

#include "store/backend/database.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "tests/store/test_dirs.h"

namespace xladb::store {
namespace {

// Runs Open(path, mode) in a child; its exit code: 0 opened, 1 kInvalidArgument naming `kind`, 2 another
// answer; -1 when it had not answered after 10 s (then it is killed).
int OpenInChild(const std::string& path, Database::Mode mode, const std::string& kind) {
  const pid_t child = ::fork();
  if (child == 0) {
    auto db = Database::Open(path, mode);
    const bool refused = !db.ok() && db.status().code() == Status::Code::kInvalidArgument &&
                         db.status().message().find(kind + ", not a regular file") != std::string::npos &&
                         db.status().message().find(path) != std::string::npos;
    ::_exit(db.ok() ? 0 : refused ? 1 : 2);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  int status = 0;
  while (::waitpid(child, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(child, SIGKILL);
      ::waitpid(child, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(DatabaseFile, AFifoADeviceAndAFolderAreRefusedAtOnce) {
  testing::TempDir tmp;
  const std::string fifo = tmp / "f.db";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::pair<std::string, std::string> refused[] = {
      {fifo, "a FIFO"}, {"/dev/null", "a device"}, {tmp.path().string(), "a folder"}};
  for (const auto& [path, kind] : refused) {
    for (auto mode : {Database::Mode::kReadWrite, Database::Mode::kReadOnly}) {
      const auto started = std::chrono::steady_clock::now();
      EXPECT_EQ(OpenInChild(path, mode, kind), 1) << path << (mode == Database::Mode::kReadOnly ? " read-only" : "");
      EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5)) << path;
    }
    Status checked = CheckDatabaseFile(path);
    EXPECT_EQ(checked.code(), Status::Code::kInvalidArgument) << path;
    EXPECT_NE(checked.message().find(kind), std::string::npos) << checked.message();
  }
}

TEST(DatabaseFile, AMissingFileIsCreatedAndALinkToAFileIsFollowed) {
  testing::TempDir tmp;
  const std::string file = tmp / "new.db";
  EXPECT_TRUE(CheckDatabaseFile(file).ok());
  ASSERT_TRUE(Database::Open(file).ok());
  struct stat st;
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  const std::string link = tmp / "link.db";
  ASSERT_EQ(::symlink(file.c_str(), link.c_str()), 0);
  EXPECT_TRUE(CheckDatabaseFile(link).ok());
  EXPECT_TRUE(Database::Open(link, Database::Mode::kReadOnly).ok());
  EXPECT_TRUE(CheckDatabaseFile("postgresql://u@127.0.0.1:1/db").ok()) << "a URI is not a file";
}

}  // namespace
}  // namespace xladb::store
