// The rows a file begins with: its dump_files row, and the modules row of the module it writes (found, or
// created); and the ingest_issues rows it ends with. RunWriter (store/write/run_writer.h) runs them at
// BeginFile, CommitFile and RecordFile; on PostgreSQL the file row's insert and the module's lookup or insert
// go together (RunTogether), so they are built bound and not run, and read afterwards.
//
// Contract: the statements come from the writer's StatementCache and run on its connection inside the
// file's savepoint; the cache hands each out reset and unbound, so an answer one still held when the call that
// sent it threw (RunTogether, then a failed module insert) is never read as the next file's. Errors throw
// SqlError. Not thread-safe: the writer's thread.
#ifndef XLADB_STORE_WRITE_FILE_ROWS_H_
#define XLADB_STORE_WRITE_FILE_ROWS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "ingest/records/ingest_target.h"
#include "store/backend/bulk_batch.h"
#include "store/backend/statement_cache.h"
#include "store/write/rows/file_context.h"

namespace xladb::store {

// The lookup of the module of `s`, bound, not run: (module_id, backend) when it exists. A placeholder name
// (ingest_target.h) finds the module by number: its HLO text may have renamed it.
SqlStatement& ModuleFind(StatementCache& statements, const ingest::FileSpec& s);

// The insert of the module of `s` (ON CONFLICT DO NOTHING RETURNING module_id), bound, not run.
SqlStatement& ModuleInsert(StatementCache& statements, const ingest::FileSpec& s);

// The module of `s`, created when it is new: (module_id, created). A created module's summary row comes with
// its derived facts, at the group's COMMIT (DerivedModuleFacts::UpdateAfterFiles). A module
// another writer creates at the same moment is found after its insert commits (the unique modules_by_key).
// A module found with no backend takes the file's (SetModuleBackend). `sent`: ModuleFind(s), bound and given
// to RunTogether (on PostgreSQL sent), for the first lookup.
std::pair<int64_t, bool> FindOrCreateModule(StatementCache& statements, const ingest::FileSpec& s,
                                            SqlStatement& sent);

// The same, trying the insert first, for a module most likely new (a run the writer created): `sent` is
// ModuleInsert(s), bound and given to RunTogether; a module that exists is looked up after it.
std::pair<int64_t, bool> CreateOrFindModule(StatementCache& statements, const ingest::FileSpec& s,
                                            SqlStatement& sent);

// Sets the backend of a module stored without one, when `backend` is not '' (a later file knows it).
void SetModuleBackend(StatementCache& statements, int64_t module_id, const std::string& backend);

// The insert of the file's dump_files row (no module: CommitFile sets it), with `verdict` (FileVerdictName),
// the rest of `outcome` and `rows_written` (nullopt: NULL, a file whose rows are being written), bound, not
// run; StoredFileId runs it.
SqlStatement& FileRowInsert(StatementCache& statements, const ingest::FileSpec& s, std::string_view verdict,
                            const ingest::FileOutcome& outcome, int64_t issue_count,
                            std::optional<int64_t> rows_written);

// The dump_files row of a file that has nothing else to write (RecordFile: a verdict without rows or issues,
// for a path the writer's new run has not stored), added to `batch` (which must hold kLoneFileRowInsert) to
// be written with the group's other such rows: no savepoint and no statement of its own. A path another
// writer recorded meanwhile keeps that writer's row (ON CONFLICT DO NOTHING), as FileRowInsert's would.
extern const BulkInsert kLoneFileRowInsert;
void AddLoneFileRow(BulkBatch& batch, SqlConnection& sql, const ingest::FileSpec& s, std::string_view verdict,
                    const ingest::FileOutcome& outcome, int64_t issue_count);

// The id of the row FileRowInsert's `insert` stored; nullopt when another writer has stored a row for this
// path since the writer's CheckFile.
std::optional<int64_t> StoredFileId(SqlStatement& insert);

// After FileRowInsert met another writer's row: throws SqlError unless that row holds this content.
void CheckOtherWritersFile(StatementCache& statements, const ingest::FileSpec& s);

// The ingest_issues rows of the file `file_id`: the issues `issues` kept (sent, not awaited).
void WriteFileIssues(StatementCache& statements, int64_t file_id, const FileIssues& issues);

}  // namespace xladb::store

#endif  // XLADB_STORE_WRITE_FILE_ROWS_H_
