// The bad-input catalog (bad_input_fixture.h), archives: members that lie about their sizes, reach outside
// the folder, or link; gzip trailers.
#include "tests/store/bad_input_fixture.h"

namespace xladb::testing {
namespace {

// ---------------------------------------------------------------------------------------------------------
// Archives that lie about sizes or reach outside

class BadArchive : public BadInput {
 protected:
  // Writes `tar` gzip-compressed as `name` under the temp folder; returns its path.
  std::string WriteTarGz(const std::string& name, const std::string& tar) {
    std::string tar_path = tmp_ / name.substr(0, name.size() - 3);
    WriteFile(tar_path, tar);
    EXPECT_EQ(std::system(("gzip -n -f " + tar_path).c_str()), 0);
    return tar_path + ".gz";
  }
  bool HasError(const ingest::IngestSummary& s, const std::string& needle) {
    for (const auto& e : s.errors) {
      if (e.reason.find(needle) != std::string::npos) return true;
    }
    return false;
  }
};

TEST_F(BadArchive, MemberDeclaringMoreBytesThanTheArchiveHolds) {
  TarBuilder tar;
  tar.Add(std::string("liar/") + kNeighbourName, ReadFile(SeedFile("002")));
  tar.Add("liar/module_0005.liar.after_optimizations-buffer-assignment.txt", ReadFile(SeedFile("000")).substr(0, 4096),
          '0', "", int64_t{1} << 30);  // says 1 GiB; the archive ends 4 KiB later
  ingest::IngestSummary s = Ingest(WriteTarGz("liar.tar.gz", tar.Unfinished()));
  FileRow row = File("liar", "liar/module_0005.liar.after_optimizations-buffer-assignment.txt");
  EXPECT_EQ(row.verdict, "error");
  EXPECT_NE(row.reason.find("is corrupt or truncated: Truncated tar archive"), std::string::npos) << row.reason;
  EXPECT_EQ(ModuleAllocations("liar", "liar/module_0005.liar.after_optimizations-buffer-assignment.txt"), 0);
  EXPECT_TRUE(HasError(s, "is corrupt: Truncated input file")) << "the archive-level error is returned";
  ExpectNeighbourIngestedAndEarlierUntouched("liar", std::string("liar/") + kNeighbourName);
}

TEST_F(BadArchive, MemberDeclaringFewerBytesThanItHolds) {
  TarBuilder tar;
  tar.Add(std::string("short/") + kNeighbourName, ReadFile(SeedFile("002")));
  tar.Add("short/module_0005.short.after_optimizations-buffer-assignment.txt", ReadFile(SeedFile("000")), '0', "",
          100);  // says 100 bytes; the other 60 KB sit where the next header should be
  ingest::IngestSummary s = Ingest(WriteTarGz("short.tar.gz", tar.Finish()));
  // What the header declared is what the member is: 100 bytes, a truncated buffer assignment, flagged so.
  const std::string member = "short/module_0005.short.after_optimizations-buffer-assignment.txt";
  EXPECT_EQ(File("short", member).verdict, "ingested");
  EXPECT_NE(Issues("short", member).find("truncated file: no newline at the end"), std::string::npos);
  // The bytes after it are no member at all: the archive is reported damaged rather than read as if whole.
  EXPECT_TRUE(HasError(s, "is damaged: Damaged tar archive")) << (s.errors.empty() ? "" : s.errors[0].reason);
  ExpectNeighbourIngestedAndEarlierUntouched("short", std::string("short/") + kNeighbourName);
}

TEST_F(BadArchive, ParentAbsoluteAndLinkMembersAreNeverWrittenOrFollowed) {
  const std::string seed = ReadFile(SeedFile("000"));
  const std::string absolute = "/tmp/xladb-bad-input-absolute-buffer-assignment.txt";
  std::error_code ec;
  fs::remove(absolute, ec);
  TarBuilder tar;
  tar.Add(std::string("evil/") + kNeighbourName, ReadFile(SeedFile("002")));
  tar.Add("../escape-buffer-assignment.txt", seed);
  tar.Add("evil/../../escape2-buffer-assignment.txt", seed);
  tar.Add(absolute, seed);
  tar.Add("evil/module_0006.symlink.after_optimizations-buffer-assignment.txt", "", '2', "/etc/passwd");
  tar.Add("evil/module_0007.hardlink.after_optimizations-buffer-assignment.txt", "", '1', "/etc/passwd");
  tar.Add("evil/module_0008.dirlink.after_optimizations-buffer-assignment.txt", "", '2', "../../..");
  ingest::IngestSummary s = Ingest(WriteTarGz("evil.tar.gz", tar.Finish()));
  EXPECT_EQ(s.files, 4);  // the neighbour and the three refused members; link members are not listed
  for (const std::string& path : {std::string("../escape-buffer-assignment.txt"),
                                  std::string("evil/../../escape2-buffer-assignment.txt"), absolute}) {
    FileRow row = File("evil", path);
    EXPECT_EQ(row.verdict, "error") << path;
    EXPECT_NE(row.reason.find("is absolute or contains '..': refused, not extracted"), std::string::npos)
        << row.reason;
  }
  // Nothing was written anywhere, and no link was followed.
  EXPECT_FALSE(fs::exists(tmp_.path().parent_path() / "escape-buffer-assignment.txt"));
  EXPECT_FALSE(fs::exists(tmp_.path().parent_path().parent_path() / "escape2-buffer-assignment.txt"));
  EXPECT_FALSE(fs::exists(fs::current_path() / "escape-buffer-assignment.txt"));
  EXPECT_FALSE(fs::exists(absolute));
  SQLite::Database db = Db();
  EXPECT_EQ(Scalar(db, "SELECT COUNT(*) FROM modules WHERE name IN ('symlink', 'hardlink', 'dirlink')"), 0);
  ExpectNeighbourIngestedAndEarlierUntouched("evil", std::string("evil/") + kNeighbourName);
}

TEST_F(BadArchive, GzipTrailersAreCheckedForSingleFilesButNotInsideTarGz) {
  TarBuilder tar;
  tar.Add(std::string("trailer/") + kNeighbourName, ReadFile(SeedFile("002")));
  std::string path = WriteTarGz("trailer.tar.gz", tar.Finish());
  std::string bytes = ReadFile(path);
  bytes[bytes.size() - 1] ^= 0x55;  // ISIZE, the last 4 bytes: the uncompressed size mod 2^32
  bytes[bytes.size() - 8] ^= 0x55;  // CRC-32, the 4 bytes before it
  WriteFile(path, bytes);
  ingest::IngestSummary s = Ingest(path);
  // libarchive stops at the tar end blocks and never checks the gzip trailer (its gzip filter's
  // consume_trailer() skips it: "XXX TODO: Verify the length and CRC-32"). The deflate stream and the tar
  // framing are intact, so the content is ingested with its exact numbers.
  EXPECT_TRUE(s.errors.empty()) << s.errors[0].reason;
  ExpectNeighbourIngestedAndEarlierUntouched("trailer", std::string("trailer/") + kNeighbourName);

  // A single .gz file is read by zlib, which checks the trailer: a wrong CRC is an error naming it.
  std::string run = NewRun("single_gz");
  const std::string gz_member = std::string(testing::kSeed000FileName) + ".gz";
  WriteFile(run + "/" + testing::kSeed000FileName, ReadFile(SeedFile("000")));
  ASSERT_EQ(std::system(("gzip -n -f " + run + "/" + testing::kSeed000FileName).c_str()), 0);
  bytes = ReadFile(run + "/" + gz_member);
  bytes[bytes.size() - 8] ^= 0x55;
  WriteFile(run + "/" + gz_member, bytes);
  Ingest(run);
  FileRow row = File("single_gz", gz_member);
  EXPECT_EQ(row.verdict, "error");
  EXPECT_NE(row.reason.find("gzip: incorrect data check"), std::string::npos) << row.reason;
  ExpectNeighbourIngestedAndEarlierUntouched("single_gz");
}

}  // namespace
}  // namespace xladb::testing
