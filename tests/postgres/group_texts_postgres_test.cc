// Whole instruction texts a writer's group met before are not looked up again (InternedTexts::Ids keeps them
// for the group, store/facts/interned_texts.h). What it keeps must never outlive the text's row, on both
// backends:
//   * a file rolled back takes the texts it stored with it on SQLite (they are in the writer's transaction):
//     the next file that prints one stores it again;
//   * a text the run's sweep removed (replaced by a later file, no row refers to it) is stored again by the
//     next run of the same writer.
// Each case ends with every instruction's text_id naming a stored text, the text it printed. And a module header
// written with the group's facts that PostgreSQL refuses fails its file, not its group.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "ingest/records/ingest_target.h"
#include "ingest/records/record_sink.h"
#include "ingest/records/records.h"
#include "store/backend/database.h"
#include "store/write/run_writer.h"
#include "tests/postgres/both_backends.h"
#include "tests/store/sql_rows.h"
#include "tests/store/writer_specs.h"

namespace xladb {
namespace {

ingest::InstructionRecord Instruction(std::string name, std::string text) {
  ingest::InstructionRecord r;
  r.name = std::move(name);
  r.opcode = "add";
  r.text = std::move(text);
  return r;
}

// Writes an HLO file of module `module` at `path`, its records sent by `records`; the commit's status (a
// refused file is aborted).
Status WriteHloFile(store::RunWriter& writer, int64_t run, const std::string& path, const std::string& module,
                    const std::function<void(ingest::RecordSink&)>& records) {
  auto sink = writer.BeginFile(testing::ModuleFileOf(run, path, "hlo_module", path, module));
  if (!sink.ok()) return sink.status();
  if (*sink == nullptr) return Status::Internal("taken for another writer's file");
  records(**sink);
  return testing::CommitOrAbort(writer);
}

// An HLO file of module `module` with `instructions`.
Status WriteFile(store::RunWriter& writer, int64_t run, const std::string& path, const std::string& module,
                 const std::vector<ingest::InstructionRecord>& instructions) {
  return WriteHloFile(writer, run, path, module, [&](ingest::RecordSink& sink) {
    for (ingest::InstructionRecord r : instructions) sink.OnInstruction(std::move(r));
  });
}

// An HLO file of module `module` whose header names it `header_name` and prints `sharding`.
Status WriteHeaderFile(store::RunWriter& writer, int64_t run, const std::string& path, const std::string& module,
                       const std::string& header_name, const std::string& sharding) {
  return WriteHloFile(writer, run, path, module, [&](ingest::RecordSink& sink) {
    ingest::HloModuleRecord header;
    header.name = header_name;
    header.entry_computation_layout = "(f32[8]{0})->f32[8]{0}";
    header.entry_sharding = sharding;
    sink.OnHloModule(std::move(header));
  });
}

// Each instruction with the text its text_id names ('?' for an id with no stored text).
constexpr const char* kInstructionTexts =
    "SELECT m.name || '.' || i.name || ' ' || COALESCE(l.text, '?') FROM instructions i "
    "JOIN modules m USING (module_id) LEFT JOIN long_texts l USING (text_id) ORDER BY 1";

constexpr const char* kAdd = "x = f32[8]{0} add(f32[8]{0} a, f32[8]{0} b)";
constexpr const char* kMultiply = "x = f32[8]{0} multiply(f32[8]{0} a, f32[8]{0} b)";

class GroupTextsOnBothBackends : public testing::BothBackends {};

TEST_F(GroupTextsOnBothBackends, ATextOfAFileRolledBackIsStoredAgainByTheNextFile) {
  for (store::Database* db : {sqlite_.get(), postgres_.get()}) {
    SCOPED_TRACE(Name(db->connection()));
    store::RunWriter writer(db, store::GroupCommit{3600, int64_t{1} << 40});  // one group
    auto run = writer.BeginRun(testing::RunNamed("nightly"));
    ASSERT_TRUE(run.ok()) << run.status().ToString();
    // Instruction x printed twice: the module is new, so its rows go without a conflict clause and the
    // database refuses the second, after the file's texts were stored.
    EXPECT_FALSE(WriteFile(writer, *run, "f.txt", "jit_f", {Instruction("x", kAdd), Instruction("x", kAdd)}).ok());
    ASSERT_TRUE(WriteFile(writer, *run, "g.txt", "jit_g", {Instruction("x", kAdd)}).ok());
    ASSERT_TRUE(writer.FinishRun(*run, -1).ok());
    EXPECT_EQ(testing::Rows(db->connection(), kInstructionTexts), std::string("jit_g.x ") + kAdd + "\n");
  }
}

TEST_F(GroupTextsOnBothBackends, ATextTheSweepRemovedIsStoredAgainByTheNextRun) {
  for (store::Database* db : {sqlite_.get(), postgres_.get()}) {
    SCOPED_TRACE(Name(db->connection()));
    store::RunWriter writer(db, store::GroupCommit{3600, int64_t{1} << 40});  // one group a run
    auto first = writer.BeginRun(testing::RunNamed("first"));
    ASSERT_TRUE(first.ok()) << first.status().ToString();
    // A second file of the module prints x otherwise: x's first text is referred to by nothing, and the run's
    // end sweeps it away.
    ASSERT_TRUE(WriteFile(writer, *first, "a.txt", "jit_f", {Instruction("x", kAdd)}).ok());
    ASSERT_TRUE(WriteFile(writer, *first, "b.txt", "jit_f", {Instruction("x", kMultiply)}).ok());
    ASSERT_TRUE(writer.FinishRun(*first, -1).ok());
    ASSERT_EQ(testing::Rows(db->connection(), "SELECT COUNT(*) FROM long_texts WHERE text = '" +
                                                  std::string(kAdd) + "'"),
              "0\n");
    auto second = writer.BeginRun(testing::RunNamed("second"));
    ASSERT_TRUE(second.ok()) << second.status().ToString();
    ASSERT_TRUE(WriteFile(writer, *second, "a.txt", "jit_f", {Instruction("x", kAdd)}).ok());
    ASSERT_TRUE(writer.FinishRun(*second, -1).ok());
    EXPECT_EQ(testing::Rows(db->connection(), kInstructionTexts),
              std::string("jit_f.x ") + kAdd + "\njit_f.x " + kMultiply + "\n");
  }
}

// Module headers are written with the group's derived facts (FileFacts::hlo_header). A header PostgreSQL
// refuses (a sharding that is not UTF-8) must fail its own file there, inside its savepoint, not the group
// whose COMMIT writes the headers; SQLite stores it byte for byte.
TEST_F(GroupTextsOnBothBackends, AHeaderPostgresqlRefusesFailsItsFileNotItsGroup) {
  const std::string not_utf8 = "({devices=[2]0,1 \xff}) -> {replicated}";
  for (store::Database* db : {sqlite_.get(), postgres_.get()}) {
    SCOPED_TRACE(Name(db->connection()));
    const bool postgresql = db->connection().dialect() == store::SqlDialect::kPostgresql;
    store::RunWriter writer(db, store::GroupCommit{3600, int64_t{1} << 40});  // one group
    auto run = writer.BeginRun(testing::RunNamed("nightly"));
    ASSERT_TRUE(run.ok()) << run.status().ToString();
    ASSERT_TRUE(WriteHeaderFile(writer, *run, "f.txt", "jit_f", "jit_f", "{replicated}").ok());
    EXPECT_EQ(WriteHeaderFile(writer, *run, "g.txt", "jit_g", "jit_g", not_utf8).ok(), !postgresql);
    ASSERT_TRUE(WriteHeaderFile(writer, *run, "h.txt", "jit_h", "jit_h", "").ok());
    ASSERT_TRUE(writer.FinishRun(*run, -1).ok()) << "the group is committed";
    EXPECT_EQ(testing::Rows(db->connection(), "SELECT path, verdict FROM dump_files ORDER BY path"),
              postgresql ? "f.txt|ingested\ng.txt|error\nh.txt|ingested\n"
                         : "f.txt|ingested\ng.txt|ingested\nh.txt|ingested\n");
    EXPECT_EQ(testing::Rows(db->connection(), "SELECT name, hlo_entry_sharding, hlo_entry_signature FROM modules "
                                              "WHERE name <> 'jit_g' ORDER BY name"),
              "jit_f|{replicated}|(f32[8]) -> f32[8]\njit_h||(f32[8]) -> f32[8]\n");
  }
}

// A module whose file names it `module_<ID>` (its number, as a file name without the module's name gives it)
// takes its HloModule line's name, as the placeholder does; another name stays.
TEST_F(GroupTextsOnBothBackends, AModuleNamedByItsNumberTakesItsHloModuleName) {
  for (store::Database* db : {sqlite_.get(), postgres_.get()}) {
    SCOPED_TRACE(Name(db->connection()));
    store::RunWriter writer(db);
    auto run = writer.BeginRun(testing::RunNamed("nightly"));
    ASSERT_TRUE(run.ok()) << run.status().ToString();
    for (const char* name : {"module_1", "jit_g"}) {  // testing::ModuleFileOf: module number 1
      ASSERT_TRUE(WriteHeaderFile(writer, *run, std::string(name) + ".txt", name, "jit_named_inside", "").ok());
    }
    ASSERT_TRUE(writer.FinishRun(*run, -1).ok());
    EXPECT_EQ(testing::Rows(db->connection(), "SELECT name FROM modules ORDER BY name"),
              "jit_g\njit_named_inside\n");
  }
}

}  // namespace
}  // namespace xladb
