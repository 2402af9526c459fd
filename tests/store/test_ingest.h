// Ingesting a folder into a store in a test, with the real writer and ingester (what `xladb ingest --db`
// does), so tests do not each spell the writer-and-ingester set-up again.
#ifndef XLADB_TESTS_STORE_TEST_INGEST_H_
#define XLADB_TESTS_STORE_TEST_INGEST_H_

#include <string>

#include "ingest/dump_ingester.h"
#include "store/backend/database.h"
#include "store/write/run_writer.h"

namespace xladb::testing {

// `folder` as run `run` (options.run_name is set to it), its files committed in groups as `group` says.
inline StatusOr<ingest::IngestSummary> IngestRun(store::Database& db, const std::string& folder, const std::string& run,
                                                 ingest::IngestOptions options = {}, store::GroupCommit group = {}) {
  store::RunWriter writer(&db, group);
  ingest::DumpIngester ingester(&writer);
  options.run_name = run;
  return ingester.Ingest(folder, options);
}

}  // namespace xladb::testing

#endif  // XLADB_TESTS_STORE_TEST_INGEST_H_
