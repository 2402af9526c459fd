// Run names (issue 10, item 12): generic dump folder names take their parent's name, and every run name is
// validated before an ingest touches its target.

#include "ingest/source/run_name.h"

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "ingest/dump_ingester.h"
#include "ingest/source/dump_source.h"
#include "tests/store/test_dirs.h"

namespace xladb::ingest {
namespace {

namespace fs = std::filesystem;

TEST(DefaultRunName, NamesTheFolderTheArchiveOrTheFileWithoutExtensions) {
  EXPECT_EQ(DefaultRunNameFor("/ci/nightly-42", true), "nightly-42");
  EXPECT_EQ(DefaultRunNameFor("/ci/nightly-42/", true), "nightly-42");
  EXPECT_EQ(DefaultRunNameFor("/ci/run.v1.tar.gz", true), "run.v1.tar.gz") << "a folder keeps its whole name";
  EXPECT_EQ(DefaultRunNameFor("/ci/run.v1.tar.gz", false), "run.v1");
  EXPECT_EQ(DefaultRunNameFor("/ci/run.tar.zst", false), "run");
  EXPECT_EQ(DefaultRunNameFor("/ci/run.tgz", false), "run");
  EXPECT_EQ(DefaultRunNameFor("/ci/run.tar", false), "run");
  EXPECT_EQ(DefaultRunNameFor("/ci/run.zip", false), "run");
  EXPECT_EQ(DefaultRunNameFor("/ci/module_0001.after_optimizations.txt", false), "module_0001.after_optimizations");
  EXPECT_EQ(DefaultRunNameFor("/ci/m-buffer-assignment.txt.gz", false), "m-buffer-assignment");
  EXPECT_EQ(DefaultRunNameFor("/ci/m.txt.zst", false), "m");
  EXPECT_EQ(DefaultRunNameFor("/ci/m.log", false), "m.log");
}

TEST(DefaultRunName, AGenericDumpFolderTakesItsParentsName) {
  EXPECT_EQ(DefaultRunNameFor("/ci/run-123/xla_dump", true), "run-123");
  EXPECT_EQ(DefaultRunNameFor("/ci/run-123/xla_dump/", true), "run-123");
  EXPECT_EQ(DefaultRunNameFor("/ci/run-123/XLA_Dumps", true), "run-123") << "case is ignored";
  for (const char* generic : {"xla_dump", "xla_dumps", "xla-dump", "xla-dumps", "xladump", "xla_dump_to", "dump",
                              "dumps", "hlo_dump", "hlo_dumps", "xla_hlo_dump", "DUMP"}) {
    EXPECT_EQ(DefaultRunNameFor(std::string("/ci/r7/") + generic, true), "r7") << generic;
    EXPECT_TRUE(IsGenericDumpFolderName(generic)) << generic;
  }
  EXPECT_EQ(DefaultRunNameFor("/ci/run-7/dumps/xla_dump", true), "run-7") << "up while the parent is generic too";
  EXPECT_EQ(DefaultRunNameFor("/ci/run-7/xla_dump.tar.zst", false), "run-7");
  EXPECT_EQ(DefaultRunNameFor("/ci/run-7/dump.txt", false), "run-7");
  EXPECT_EQ(DefaultRunNameFor("/xla_dump", true), "xla_dump") << "nothing above: the generic name stays";
  EXPECT_EQ(DefaultRunNameFor("/dump/xla_dump", true), "xla_dump");
  EXPECT_EQ(DefaultRunNameFor("/ci/xla_dump_old", true), "xla_dump_old") << "only whole names are generic";
  EXPECT_FALSE(IsGenericDumpFolderName("my_dump"));
}

TEST(DefaultRunName, RelativePathsAreNamedFromTheWorkingFolder) {
  testing::TempDir tmp;
  fs::create_directories(tmp / "proj-x");
  const fs::path saved = fs::current_path();
  fs::current_path(tmp / "proj-x");
  EXPECT_EQ(DefaultRunNameFor(".", true), "proj-x");
  EXPECT_EQ(DefaultRunNameFor("xla_dump", true), "proj-x");
  EXPECT_EQ(DefaultRunNameFor("./xla_dump/", true), "proj-x");
  EXPECT_EQ(DefaultRunNameFor("a/xla_dump.tar.zst", false), "a");
  EXPECT_EQ(DefaultRunNameFor("a/b/../xla_dump", true), "a");
  fs::current_path(saved);
}

TEST(DefaultRunName, ForPathAsksTheFileSystemAndDumpSourceUsesIt) {
  testing::TempDir tmp;
  fs::create_directories(tmp / "ci/run-5/xla_dump");
  testing::WriteFile(tmp / "ci/run-5/xla_dump/m.txt", "x\n");
  fs::create_directories(tmp / "ci/folder.tar");
  testing::WriteFile(tmp / "ci/file.tar", "");
  EXPECT_EQ(DefaultRunNameForPath(tmp / "ci/run-5/xla_dump"), "run-5");
  EXPECT_EQ(DefaultRunNameForPath(tmp / "ci/folder.tar"), "folder.tar");
  EXPECT_EQ(DefaultRunNameForPath(tmp / "ci/file.tar"), "file");
  auto source = DumpSource::Open(tmp / "ci/run-5/xla_dump");
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  EXPECT_EQ(source.value()->DefaultRunName(), "run-5");
}

TEST(ValidateRunName, RefusesBlankControlCharactersAndOverlongNames) {
  EXPECT_TRUE(ValidateRunName("run-1").ok());
  EXPECT_TRUE(ValidateRunName("caf\xc3\xa9 run").ok());
  EXPECT_TRUE(ValidateRunName("poison\xffrun").ok()) << "bytes that are not UTF-8 are allowed";
  EXPECT_TRUE(ValidateRunName(std::string(200, 'r')).ok());

  Status empty = ValidateRunName("");
  EXPECT_EQ(empty.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(empty.message().find("empty"), std::string::npos) << empty.message();
  for (const char* blank : {" ", "   ", "\t", " \n "}) {
    Status st = ValidateRunName(blank);
    EXPECT_EQ(st.code(), Status::Code::kInvalidArgument);
    EXPECT_NE(st.message().find("blank"), std::string::npos) << st.message();
  }
  Status newline = ValidateRunName("run\n1");
  EXPECT_EQ(newline.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(newline.message().find("control character (\\x0a at byte 3)"), std::string::npos) << newline.message();
  Status del = ValidateRunName("run\x7f");
  EXPECT_NE(del.message().find("\\x7f"), std::string::npos) << del.message();
  Status nul = ValidateRunName(std::string("a\0b", 3));
  EXPECT_NE(nul.message().find("\\x00 at byte 1"), std::string::npos) << nul.message();
  Status esc = ValidateRunName("x\x1b[31m");
  EXPECT_NE(esc.message().find("\\x1b"), std::string::npos) << esc.message();
  Status long_name = ValidateRunName(std::string(201, 'r'));
  EXPECT_EQ(long_name.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(long_name.message().find("201 bytes"), std::string::npos) << long_name.message();
  EXPECT_NE(long_name.message().find("at most 200"), std::string::npos) << long_name.message();
}

// Counts the calls that would change a store.
class TouchCountingTarget : public IngestTarget {
 public:
  int touches = 0;
  StatusOr<int64_t> BeginRun(const RunSpec&) override { return ++touches; }
  StatusOr<FileState> CheckFile(int64_t, const std::string&, const std::string&) override {
    return FileState::kNew;
  }
  StatusOr<RecordSink*> BeginFile(const FileSpec&) override {
    ++touches;
    return &ignored_;
  }
  StatusOr<FileWriteStats> CommitFile(const FileOutcome&) override {
    ++touches;
    return FileWriteStats{};
  }
  Status AbortFile(const FileOutcome&) override { return Count(); }
  Status RecordFileWithoutRows(const FileSpec&, const FileOutcome&) override { return Count(); }
  Status FinishRun(int64_t, int64_t) override { return Count(); }

 private:
  Status Count() {
    ++touches;
    return Status::Ok();
  }
  RecordSink ignored_;
};

TEST(ValidateRunName, IngestRefusesABadNameBeforeTouchingTheTarget) {
  testing::TempDir tmp;
  testing::WriteFile(tmp / "run/m.txt", "not a dump\n");
  TouchCountingTarget target;
  DumpIngester ingester(&target);
  IngestOptions options;
  options.run_name = "bad\nname";
  auto explicit_name = ingester.Ingest(tmp / "run", options);
  ASSERT_FALSE(explicit_name.ok());
  EXPECT_EQ(explicit_name.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(explicit_name.status().message().find("\\x0a"), std::string::npos);
  // A default name is checked too: a folder whose name holds a control character.
  testing::WriteFile(tmp / "tab\there/m.txt", "not a dump\n");
  auto default_name = ingester.Ingest(tmp / "tab\there", {});
  ASSERT_FALSE(default_name.ok());
  EXPECT_NE(default_name.status().message().find("\\x09"), std::string::npos) << default_name.status().message();
  EXPECT_EQ(target.touches, 0);

  // The same source with a good name is ingested (through the DumpSource overload the server uses).
  auto source = DumpSource::OpenBeneath(tmp.path().string(), "run");
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  auto good = ingester.Ingest(*source.value(), tmp / "run", {});
  ASSERT_TRUE(good.ok()) << good.status().ToString();
  EXPECT_EQ(good->run_name, "run");
  EXPECT_EQ(good->files, 1);
  EXPECT_GT(target.touches, 0);
}

// Labels (issue 26, item 3): one rule for the CLI, the RPCs and xladb-run.toml.
TEST(ValidateRunLabel, KeysAreLettersDigitsAndDotUnderscoreDashSlash) {
  for (const char* key : {"branch", "ci.job_id", "team/owner", "A-1", "x"}) {
    EXPECT_TRUE(ValidateRunLabel(key, "v").ok()) << key;
  }
  EXPECT_TRUE(ValidateRunLabel(std::string(kMaxLabelKeyBytes, 'k'), "v").ok());
  Status empty = ValidateRunLabel("", "v");
  EXPECT_EQ(empty.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(empty.message(), "label '=v': the key is empty");
  for (const char* key : {"bad key", "k=", "k\x1b", "é", "k:v", "a\tb"}) {
    Status st = ValidateRunLabel(key, "v");
    EXPECT_EQ(st.code(), Status::Code::kInvalidArgument) << key;
    EXPECT_NE(st.message().find("keys are ASCII letters, digits and . _ - /"), std::string::npos) << st.message();
  }
  Status esc = ValidateRunLabel("k\x1b", "v");
  EXPECT_NE(esc.message().find("label 'k\\x1b=v': the key holds '\\x1b' at byte 1"), std::string::npos)
      << esc.message();
  Status long_key = ValidateRunLabel(std::string(kMaxLabelKeyBytes + 1, 'k'), "v");
  EXPECT_NE(long_key.message().find("the key is 65 bytes long; at most 64"), std::string::npos) << long_key.message();
}

TEST(ValidateRunLabel, ValuesHoldNoControlCharacterAndAreBounded) {
  EXPECT_TRUE(ValidateRunLabel("note", "").ok());
  EXPECT_TRUE(ValidateRunLabel("note", "[a](b) **c** @d \xe2\x80\xae \xff").ok())
      << "Markdown, bidi controls and bytes that are not UTF-8 are text; outputs make them inert";
  EXPECT_TRUE(ValidateRunLabel("note", std::string(kMaxLabelValueBytes, 'v')).ok());
  const std::pair<std::string, std::string> bad[] = {
      {"\x1b]0;PWN\x07", "\\x1b at byte 0"}, {std::string("a\0b", 3), "\\x00 at byte 1"},
      {"ring\x07", "\\x07 at byte 4"},          {"two\nlines", "\\x0a at byte 3"},
      {"tab\there", "\\x09 at byte 3"},         {"del\x7f", "\\x7f at byte 3"}};
  for (const auto& [value, where] : bad) {
    Status st = ValidateRunLabel("note", value);
    EXPECT_EQ(st.code(), Status::Code::kInvalidArgument);
    EXPECT_NE(st.message().find("the value holds a control character (" + where + ")"), std::string::npos)
        << st.message();
    EXPECT_EQ(st.message().find_first_of(std::string("\x1b\x07\n\t\x7f\0", 6)), std::string::npos)
        << "the message shows the label with its controls escaped";
  }
  Status long_value = ValidateRunLabel("note", std::string(kMaxLabelValueBytes + 1, 'v'));
  EXPECT_NE(long_value.message().find("the value is 1025 bytes long; at most 1024"), std::string::npos);
  EXPECT_LT(long_value.message().size(), 300u) << "the label is cut short in the message";
  EXPECT_EQ(ValidateRunLabels({{"ok", "1"}, {"", "x"}, {"b c", "y"}}).message(), "label '=x': the key is empty");
}

TEST(ValidateRunLabel, IngestRefusesABadLabelBeforeTouchingTheTarget) {
  testing::TempDir tmp;
  testing::WriteFile(tmp / "run/m.txt", "not a dump\n");
  TouchCountingTarget target;
  DumpIngester ingester(&target);
  IngestOptions options;
  options.labels = {{"ok", "fine"}, {"note", "\x1b[2J"}};
  auto refused = ingester.Ingest(tmp / "run", options);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("label 'note=\\x1b[2J'"), std::string::npos);
  EXPECT_EQ(target.touches, 0);
}

TEST(ModuleFolderBelowDumpRoot, DropsLeadingGenericDumpFoldersAndTheWrapper) {
  EXPECT_EQ(ModuleFolderBelowDumpRoot(""), "");
  EXPECT_EQ(ModuleFolderBelowDumpRoot("xla_dump"), "");
  EXPECT_EQ(ModuleFolderBelowDumpRoot("XLA_DUMP/host0"), "host0") << "generic names ignore case";
  EXPECT_EQ(ModuleFolderBelowDumpRoot("dumps/xla_dump"), "") << "repeated generic levels";
  EXPECT_EQ(ModuleFolderBelowDumpRoot("dumps/xla_dump/host1"), "host1");
  EXPECT_EQ(ModuleFolderBelowDumpRoot("host0"), "host0");
  EXPECT_EQ(ModuleFolderBelowDumpRoot("host0/xla_dump"), "host0/xla_dump") << "only leading ones";
  EXPECT_EQ(ModuleFolderBelowDumpRoot("xla_dumps_old"), "xla_dumps_old") << "a whole component only";
  EXPECT_EQ(ModuleFolderBelowDumpRoot("run-7/xla_dump", "run-7"), "");
  EXPECT_EQ(ModuleFolderBelowDumpRoot("run-7/host0", "run-7"), "host0");
  EXPECT_EQ(ModuleFolderBelowDumpRoot("run-8/xla_dump", "run-7"), "run-8/xla_dump") << "another name is kept";
  EXPECT_EQ(ModuleFolderBelowDumpRoot("xla_dump/run-7", "run-7"), "run-7") << "the wrapper only at the top";
}

}  // namespace
}  // namespace xladb::ingest
