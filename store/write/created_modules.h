// CreatedModules: the modules a RunWriter created in the run it created, by their key, so that the next file of
// such a module (its HLO text after its buffer assignment, in the same group mostly) takes its id without
// looking it up, and a file of a module not listed inserts it without looking first (a new run's modules are
// new: the insert's ON CONFLICT finds the rare one that is not, FindOrCreateModule). A lookup a module file was
// one statement in ten of a real run folder's.
//
// What is kept follows the transaction: a module the open file created is dropped when the file rolls back,
// one its group created when the group rolls back. A module whose row may have been removed or renamed is
// never listed: modules named by number only (ModuleKey::name_is_placeholder, renamed by their HLO text) and
// names of that form are not kept, and the writer forgets everything when it replaces a stored file (which
// may drop a module) or rebuilds modules for a second pass.
//
// Known limit: another writer adding files to the same run (a second daemon on one PostgreSQL store) may remove
// a module this one keeps, by replacing its only file with an unreadable one; this writer's next file of that
// module would then write rows under the removed id. Two writers replacing each other's files in one run while
// both ingest it is not otherwise guarded either.
//
// Contract: keys are FileSpec::module of files of the writer's created run (the caller checks the run). A
// module's backend is the one it was created with (a later file's fills the row, not the entry). Not
// thread-safe: the writer's thread.
#ifndef XLADB_STORE_WRITE_CREATED_MODULES_H_
#define XLADB_STORE_WRITE_CREATED_MODULES_H_

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "ingest/records/ingest_target.h"

namespace xladb::store {

class CreatedModules {
 public:
  struct Module {
    int64_t module_id = 0;
    std::string backend;  // as created ('' = unknown)
  };

  // The module listed under `key`, or null.
  Module* Find(const ingest::ModuleKey& key);
  // Lists a module the open file created (a key this class does not keep is ignored).
  void Created(const ingest::ModuleKey& key, int64_t module_id);

  void FileKept();         // the open file's modules join its group's
  void FileRolledBack();   // the open file's modules are gone
  void GroupCommitted();   // the group's modules are stored
  void GroupRolledBack();  // the group's modules are gone
  void Forget();           // a new run, a replaced file, a rebuild

 private:
  static bool Kept(const ingest::ModuleKey& key);
  static std::string KeyOf(const ingest::ModuleKey& key);
  void Erase(std::vector<std::string>& keys);

  std::unordered_map<std::string, Module> modules_;
  std::vector<std::string> by_file_, by_group_;  // keys the open file and the open group's other files listed
};

}  // namespace xladb::store

#endif  // XLADB_STORE_WRITE_CREATED_MODULES_H_
