// One dump, one identity, however it arrived (issue 22 item 1): a dump folder DIR holding xla_dump/ with a
// module in its root and one in host0/, ingested as a watched folder sees it (<watch>/<run>/xla_dump/…), as
// `xladb ingest DIR`, as `xladb ingest DIR/xla_dump`, and as .tar.zst archives made inside DIR (members
// xla_dump/…) and from DIR's parent (members run-7/xla_dump/…, the archive named run-7.tar.zst), stores the
// same (folder, identity_key) pairs: ("", …) and ("host0", …). Expected folders come from the layout.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <utility>

#include "ingest/dump_ingester.h"
#include "ingest/source/dump_source.h"
#include "store/sqlite/sqlite_connection.h"
#include "store/backend/database.h"
#include "store/write/run_writer.h"
#include "tests/ingest/archive_writer.h"
#include "tests/store/test_dirs.h"
#include "tests/store/test_ingest.h"

namespace xladb::store {
namespace {

namespace fs = std::filesystem;

constexpr const char* kRootModule = "module_0001.jit_f.sm_8.0_gpu_after_optimizations-buffer-assignment.txt";
constexpr const char* kRootText =
    "BufferAssignment:\n"
    "allocation 0: size 64, parameter 0, shape |f32[16]| at ShapeIndex {}:\n"
    " value: <0 Arg_0.1 @0> (size=64,offset=0): f32[16]{0}\n"
    "allocation 1: size 64, output shape is |f32[16]|, maybe-live-out:\n"
    " value: <1 exponential.2 @0> (size=64,offset=0): f32[16]{0}\n";
constexpr const char* kHostText =
    "BufferAssignment:\n"
    "allocation 0: size 32, parameter 0, shape |f32[8]| at ShapeIndex {}:\n"
    " value: <0 Arg_0.1 @0> (size=32,offset=0): f32[8]{0}\n"
    "allocation 1: size 32, output shape is |f32[8]|, maybe-live-out:\n"
    " value: <1 exponential.2 @0> (size=32,offset=0): f32[8]{0}\n";

void WriteText(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

using Identities = std::set<std::pair<std::string, std::string>>;  // (folder, identity_key)

Identities IdentitiesOf(Database& db, const std::string& run) {
  Identities out;
  SQLite::Statement q(SqliteOf(db), "SELECT m.folder, m.identity_key FROM modules m JOIN runs r USING (run_id) "
                                "WHERE r.name = ?");
  q.bind(1, run);
  while (q.executeStep()) out.emplace(q.getColumn(0).getString(), q.getColumn(1).getString());
  return out;
}

class ModuleArrival : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteText(dir() / "xla_dump" / kRootModule, kRootText);
    WriteText(dir() / "xla_dump" / "host0" / kRootModule, kHostText);
    auto db = Database::Open(tmp_ / "store.db");
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(db.value());
  }
  fs::path dir() const { return fs::path(tmp_.path().string()) / "watch" / "run-7"; }

  void Ingest(const std::string& path, const std::string& run) {
    auto summary = testing::IngestRun(*db_, path, run);
    ASSERT_TRUE(summary.ok()) << run << ": " << summary.status().ToString();
    ASSERT_EQ(summary->files_by_verdict["ingested"], 2) << run;
  }

  testing::TempDir tmp_;
  std::unique_ptr<Database> db_;
};

TEST_F(ModuleArrival, EveryArrivalStoresTheSameFoldersAndIdentities) {
  // The daemon's watched folder ingests <watch>/<run> through OpenBeneath.
  {
    auto source = ingest::DumpSource::OpenBeneath(tmp_.path().string() + "/watch", "run-7");
    ASSERT_TRUE(source.ok()) << source.status().ToString();
    RunWriter writer(db_.get());
    ingest::DumpIngester ingester(&writer);
    ingest::IngestOptions options;
    options.run_name = "watched";
    auto summary = ingester.Ingest(*source.value(), dir().string(), options);
    ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  }
  ASSERT_NO_FATAL_FAILURE(Ingest(dir().string(), "dir"));
  ASSERT_NO_FATAL_FAILURE(Ingest((dir() / "xla_dump").string(), "dir-xla-dump"));
  const std::string root_member = std::string("xla_dump/") + kRootModule;
  const std::string host_member = std::string("xla_dump/host0/") + kRootModule;
  const std::string inside = tmp_.path().string() + "/upload.tar.zst";  // tar -C run-7 -caf upload.tar.zst .
  ASSERT_EQ(testing::WriteArchive(inside, testing::Packing::kTarZst,
                                  {{"./" + root_member, kRootText}, {"./" + host_member, kHostText}}),
            "");
  ASSERT_NO_FATAL_FAILURE(Ingest(inside, "archive-inside"));
  const std::string parent = tmp_.path().string() + "/run-7.tar.zst";  // tar -C watch -caf run-7.tar.zst run-7
  ASSERT_EQ(testing::WriteArchive(parent, testing::Packing::kTarZst,
                                  {{"run-7/" + root_member, kRootText}, {"run-7/" + host_member, kHostText}}),
            "");
  ASSERT_NO_FATAL_FAILURE(Ingest(parent, "archive-parent"));

  const Identities want = IdentitiesOf(*db_, "dir");
  ASSERT_EQ(want.size(), 2u);
  std::set<std::string> folders;
  for (const auto& [folder, key] : want) folders.insert(folder);
  EXPECT_EQ(folders, (std::set<std::string>{"", "host0"}));  // xla_dump/ is not part of it; host0/ is
  for (const char* run : {"watched", "dir-xla-dump", "archive-inside", "archive-parent"}) {
    EXPECT_EQ(IdentitiesOf(*db_, run), want) << run;
  }
}

}  // namespace
}  // namespace xladb::store
