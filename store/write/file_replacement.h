// FileReplacement: what storing a changed file (same run and path, new content) does to the rows of its old
// version, and to the modules that version wrote to.
//
//   * The old version's rows go, in every table that holds rows of a file (store/facts/store_tables.h), with its
//     dump_files row.
//   * Its module's rows merge the rows of all the module's files (a split buffer assignment, HLO text next to
//     it), and a merged row carries one file_id. So a module the old version shared with other files cannot
//     lose just that file's part: its rows are cleared whole (with what was derived from them), and its other
//     files marked to be read again (their content_hash prefixed with kRereadHashPrefix), so that the ingest
//     driver's second pass rebuilds the module from all of them in walk order (ScheduleSecondPass).
//   * The whole instruction texts the removed rows referred to are handed to the interned texts' sweep
//     (InternedTextCaches::TextReplaced), which deletes those no row refers to when the run finishes.
//   * A module the old version wrote alone keeps its row when the new version writes into it again, and goes
//     with it when the new version cannot be read (drop_lone_module), so no summary outlives its rows.
//
// Contract: runs on the writer's connection inside its open file savepoint, through its statement cache;
// throws SqlError on database errors (the writer rolls the file back). Remembers the modules it
// cleared until ScheduleSecondPass() or Forget(). Not thread-safe.
#ifndef XLADB_STORE_WRITE_FILE_REPLACEMENT_H_
#define XLADB_STORE_WRITE_FILE_REPLACEMENT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ingest/records/ingest_target.h"
#include "store/facts/interned_texts.h"
#include "store/facts/module_facts.h"
#include "store/backend/statement_cache.h"

namespace xladb::store {

// The prefix of the stored hash of a file that must be read again (its module was rebuilt): never a content
// hash, so the file is "changed"; replacing it then does not rebuild the module once more.
extern const std::string kRereadHashPrefix;

class FileReplacement {
 public:
  FileReplacement(StatementCache* statements, InternedTextCaches* interned)
      : statements_(statements), interned_(interned) {}

  // Removes the stored version of the file at `s`'s path, if any, with every row it wrote; see above for its
  // module. Returns what the removal changed for the new version's module facts, nullopt when nothing was
  // stored at that path.
  std::optional<FileFacts> RemoveStoredVersion(const ingest::FileSpec& s, bool drop_lone_module);

  // Whether a module was cleared for a rebuild since the last ScheduleSecondPass() or Forget().
  bool any_rebuilt() const { return !rebuilt_modules_.empty(); }
  // Merges are last-writer-wins, so a module is rebuilt right only when its files are read in walk order.
  // Siblings the walk met after the replaced file were read again in that order already; a module with a
  // sibling still marked (the walk had passed it) is cleared again and all its files marked, for the driver's
  // second pass to read them all in order. True when that pass is needed.
  bool ScheduleSecondPass();
  // Forgets the modules cleared so far (a new run starts).
  void Forget() { rebuilt_modules_.clear(); }

 private:
  bool RebuildModuleIfShared(int64_t module, int64_t replaced_file_id);
  void ExecForModule(const char* text, int64_t module);
  void ClearModuleRows(int64_t module);
  void DropModule(int64_t module);
  void DeleteFileRows(int64_t old_file_id);

  // Hands the texts of the instructions the statement `text` (its one `?` is `key`) selects to the sweep.
  void NoteTextsOfRemovedInstructions(const char* text, int64_t key);

  StatementCache* statements_;
  InternedTextCaches* interned_;
  std::vector<int64_t> rebuilt_modules_;  // modules RebuildModuleIfShared cleared in this run
};

}  // namespace xladb::store

#endif  // XLADB_STORE_WRITE_FILE_REPLACEMENT_H_
