#include "store/write/file_replacement.h"

#include <span>
#include <string>
#include <utility>
#include <vector>

#include "store/backend/row_binding.h"
#include "store/facts/store_tables.h"

namespace xladb::store {

const std::string kRereadHashPrefix = "reread:";

namespace {

// "DELETE FROM <table> WHERE <key> = ?" for each table (store/facts/store_tables.h).
std::vector<std::string> DeleteTexts(std::span<const char* const> tables, const char* key) {
  std::vector<std::string> texts;
  for (const char* t : tables) texts.push_back(std::string("DELETE FROM ") + t + " WHERE " + key + " = ?");
  return texts;
}

// The statements that remove a module's parsed rows with what was derived from them, and a file's rows with
// its dump_files row (last: the others name it). Built once: the strings live for the
// program, so the StatementCache (keyed by the text's address) prepares each statement once.
const std::vector<std::string>& ModuleRowDeletes() {
  static const std::vector<std::string> texts = [] {
    std::vector<std::string> all = DeleteTexts(kModuleRowTables, "module_id");
    for (std::string& t : DeleteTexts(kModuleDerivedTables, "module_id")) all.push_back(std::move(t));
    return all;
  }();
  return texts;
}
const std::vector<std::string>& FileRowDeletes() {
  static const std::vector<std::string> texts = [] {
    std::vector<std::string> all = DeleteTexts(kModuleRowTables, "file_id");
    for (std::string& t : DeleteTexts(kFileRowTables, "file_id")) all.push_back(std::move(t));
    all.push_back("DELETE FROM dump_files WHERE file_id = ?");
    return all;
  }();
  return texts;
}

// The whole texts of a module's instructions, and of a file's (a merged row carries the file that first wrote
// it).
constexpr char kTextsOfModule[] =
    "SELECT DISTINCT text_id FROM instructions WHERE module_id = ? AND text_id IS NOT NULL";
constexpr char kTextsOfFile[] = "SELECT DISTINCT text_id FROM instructions WHERE file_id = ? AND text_id IS NOT NULL";

}  // namespace

void FileReplacement::NoteTextsOfRemovedInstructions(const char* text, int64_t key) {
  SqlStatement& texts = statements_->Get(text);
  texts.Bind(1, key);
  while (texts.Step()) interned_->TextReplaced(texts.Int(0));
  texts.Reset();
}

// A module other files also wrote to: its merged rows carry one file id each, so they all go, and the
// other files are marked (their hash prefixed) to be read again in the driver's second pass. False when
// the replaced file is the module's only one.
bool FileReplacement::RebuildModuleIfShared(int64_t module, int64_t replaced_file_id) {
  SqlStatement& siblings =
      statements_->Get("SELECT COUNT(*) FROM dump_files WHERE module_id = ? AND file_id <> ?");
  BindRow(siblings, module, replaced_file_id);
  const bool shared = siblings.Step() && siblings.Int(0) > 0;
  siblings.Reset();
  if (!shared) return false;
  ClearModuleRows(module);
  SqlStatement& mark = statements_->Get("UPDATE dump_files SET content_hash = 'reread:' || content_hash "
                                             "WHERE module_id = ? AND file_id <> ?");
  BindRow(mark, module, replaced_file_id);
  mark.Execute();
  rebuilt_modules_.push_back(module);
  return true;
}

bool FileReplacement::ScheduleSecondPass() {
  bool needed = false;
  for (int64_t module : rebuilt_modules_) {
    SqlStatement& left = statements_->Get("SELECT COUNT(*) FROM dump_files WHERE module_id = ? "
                                               "AND content_hash LIKE 'reread:%'");
    left.Bind(1, module);
    const bool pending = left.Step() && left.Int(0) > 0;
    left.Reset();
    if (!pending) continue;
    ClearModuleRows(module);
    SqlStatement& mark = statements_->Get("UPDATE dump_files SET content_hash = 'reread:' || content_hash "
                                               "WHERE module_id = ? AND content_hash NOT LIKE 'reread:%'");
    mark.Bind(1, module);
    mark.Execute();
    needed = true;
  }
  rebuilt_modules_.clear();
  return needed;
}

// Removes the stored version of the file at `s`'s path, if any, with every row it wrote. A module it shared
// with other files is cleared for a rebuild (RebuildModuleIfShared); one it wrote alone goes too when
// `drop_lone_module`. A file being read again (its hash marked) has had its module cleared already. Returns
// what the removal changed for the module's derived facts, nullopt when there was no stored version.
std::optional<FileFacts> FileReplacement::RemoveStoredVersion(const ingest::FileSpec& s, bool drop_lone_module) {
  SqlStatement& old =
      statements_->Get("SELECT file_id, module_id, content_hash, "
                       "       EXISTS(SELECT 1 FROM utilization_counters c WHERE c.file_id = f.file_id) "
                       "FROM dump_files f WHERE run_id = ? AND path = ?");
  BindRow(old, s.run_id, s.path);
  if (!old.Step()) {
    old.Reset();
    return std::nullopt;
  }
  const int64_t old_file_id = old.Int(0);
  const int64_t old_module = old.IsNull(1) ? 0 : old.Int(1);  // 0: none
  const bool rereading = old.Text(2).rfind(kRereadHashPrefix, 0) == 0;
  FileFacts changed;
  changed.rows_changed = true;                              // the old file's rows go
  changed.counters_changed = old.Int(3) != 0;  // and its counters: recompute the spill summary
  old.Reset();
  const bool owned = old_module != 0 && !rereading;
  const bool shared = owned && RebuildModuleIfShared(old_module, old_file_id);
  DeleteFileRows(old_file_id);
  if (owned && !shared && drop_lone_module) DropModule(old_module);
  return changed;
}

// Runs a statement whose one `?` is the module.
void FileReplacement::ExecForModule(const char* text, int64_t module) {
  SqlStatement& st = statements_->Get(text);
  st.Bind(1, module);
  st.Execute();
}

// Clears a module for a rebuild from its files: its rows, and what was computed from them or printed in
// them (summary, memory spaces, spill summary, fingerprint), which the files read again write anew.
void FileReplacement::ClearModuleRows(int64_t module) {
  NoteTextsOfRemovedInstructions(kTextsOfModule, module);
  for (const std::string& text : ModuleRowDeletes()) ExecForModule(text.c_str(), module);
  ExecForModule("INSERT INTO module_summary(module_id) VALUES (?)", module);
  ExecForModule("UPDATE modules SET fingerprint = NULL, fingerprint_source = NULL WHERE module_id = ?", module);
}

// Removes a module that no stored file writes to any more (its only file was replaced by one that could not
// be read): its rows, derived rows and the module itself, as if it had never been ingested.
void FileReplacement::DropModule(int64_t module) {
  NoteTextsOfRemovedInstructions(kTextsOfModule, module);
  for (const std::string& text : ModuleRowDeletes()) ExecForModule(text.c_str(), module);
  ExecForModule("DELETE FROM modules WHERE module_id = ?", module);
}

void FileReplacement::DeleteFileRows(int64_t old_file_id) {
  NoteTextsOfRemovedInstructions(kTextsOfFile, old_file_id);
  for (const std::string& text : FileRowDeletes()) {
    SqlStatement& del = statements_->Get(text.c_str());
    del.Bind(1, old_file_id);
    del.Execute();
  }
}

}  // namespace xladb::store
