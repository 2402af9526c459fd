// A file whose start fails (its module cannot be stored) is recorded with the error verdict by AbortFile, on
// both backends, in a run another writer created (so its path is looked up, not taken for new). BeginFile sends
// the file row's insert beside the module's lookup (RunTogether): on PostgreSQL the insert's answer, a file id
// the failure rolls back, is waiting on the cached statement when the module's insert fails; the error
// verdict's insert must run, not read that answer (the cache hands statements out reset).
#include <gtest/gtest.h>

#include <string>

#include "ingest/records/ingest_target.h"
#include "store/backend/database.h"
#include "store/write/run_writer.h"
#include "tests/postgres/both_backends.h"
#include "tests/store/writer_specs.h"

namespace xladb {
namespace {

class FailedBeginFileOnBothBackends : public testing::BothBackends {};

TEST_F(FailedBeginFileOnBothBackends, IsRecordedAsAnErrorByAbortFile) {
  for (store::Database* db : {sqlite_.get(), postgres_.get()}) {
    SCOPED_TRACE(Name(db->connection()));
    store::SqlConnection& sql = db->connection();
    const ingest::RunSpec run_spec = testing::RunNamed("nightly");
    {
      store::RunWriter creator(db);
      auto run = creator.BeginRun(run_spec);
      ASSERT_TRUE(run.ok()) << run.status().ToString();
      ASSERT_TRUE(creator.FinishRun(*run, -1).ok());
    }
    if (sql.dialect() == store::SqlDialect::kSqlite) {
      sql.Exec("CREATE TRIGGER no_modules BEFORE INSERT ON modules BEGIN SELECT RAISE(ABORT, 'no modules'); END");
    } else {
      sql.Exec("CREATE FUNCTION no_modules() RETURNS trigger LANGUAGE plpgsql AS "
               "$$ BEGIN RAISE EXCEPTION 'no modules'; END $$");
      sql.Exec("CREATE TRIGGER no_modules BEFORE INSERT ON modules FOR EACH ROW EXECUTE FUNCTION no_modules()");
    }
    store::RunWriter writer(db);
    auto run = writer.BeginRun(run_spec);  // found, not created
    ASSERT_TRUE(run.ok()) << run.status().ToString();
    const ingest::FileSpec spec =
        testing::ModuleFileOf(*run, "module_0001.jit_f.after_optimizations.txt", "hlo_module", "h");
    auto sink = writer.BeginFile(spec);
    ASSERT_FALSE(sink.ok());
    EXPECT_NE(sink.status().message().find("no modules"), std::string::npos) << sink.status().ToString();
    ASSERT_TRUE(writer.AbortFile({ingest::FileVerdict::kError, "its module could not be stored", 0, 0}).ok());
    ASSERT_TRUE(writer.FinishRun(*run, -1).ok());
    EXPECT_EQ(testing::Rows(sql, "SELECT path, verdict, reason FROM dump_files"),
              spec.path + "|error|its module could not be stored\n");
  }
}

}  // namespace
}  // namespace xladb
