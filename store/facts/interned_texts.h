// Interned texts: strings that rows refer to by a small integer id, stored once for all runs. The writer
// (store/write/run_writer.h, InternedTextCaches below) uses one InternedTexts per table:
//   * shapes(shape_id, text UNIQUE) and source_files(source_file_id, path UNIQUE): few, short texts, found
//     through their UNIQUE index (on PostgreSQL looked up and, when new, inserted by one statement);
//   * names(name_id, hash, text), op_names and computation names: many, and in generated or very large
//     programs mostly distinct, so the lookup index holds a 64-bit hash (TextHash) instead of a second copy of
//     the text. Rows of equal hash are compared by text, so a hash collision only costs a comparison (one
//     at a time, on PostgreSQL, looked up and inserted when new by one statement, as shapes are);
//   * long_texts(text_id, hash UNIQUE, text, the ids of its cut parts: store/facts/long_text.h): whole
//     instruction texts, distinct within a program, interned a batch at a time (Ids). The batch's hashes are
//     looked up first and only the texts not found inserted in bulk (store/backend/bulk_insert.h): where the
//     writer gives new texts their ids (SqlConnection::WritesAlone: SQLite inside its transaction) under the
//     largest id plus one, plus two…; on PostgreSQL ON CONFLICT DO NOTHING, the insert answering the ids of the
//     rows it stored (RETURNING), and a text another writer stored since the lookup read back. A batch of texts
//     stored before (a second run of one program) is one round trip and takes no ids. On SQLite outside a
//     transaction the whole batch is inserted ON CONFLICT DO NOTHING and read back. Each text found stored is
//     compared with the one asked for (a different row under the same hash is an error, the hash being
//     unique). A text the writer's group looked up or stored before (its before and after optimizations texts,
//     a buffer assignment and its HLO text print many of the same instructions: 630 of the real run folder's
//     1,479 batches held no other) is not looked up again: kept, with its id, until the group ends, while the
//     group holds interned rows against removal (store/facts/interned_removals.h; on SQLite its write
//     transaction), up to kMaxGroupTextBytes of text.
//
// Contract: runs statements on the caller's read-write connection inside its transaction, and throws
// SqlError on database errors, like the writer's own statements. Ids are cached for the object's
// life (up to kMaxCachedTexts, then the cache starts afresh); when a file or group that added texts is rolled
// back (FileAborted, GroupAborted) the whole cache is forgotten, so a rolled-back id is never handed out.
// Rollbacks are rare, and forgetting is cheaper than remembering what each file added. Not thread-safe.
#ifndef XLADB_STORE_FACTS_INTERNED_TEXTS_H_
#define XLADB_STORE_FACTS_INTERNED_TEXTS_H_

#include "store/backend/in_list_read.h"
#include "store/backend/sql_connection.h"
#include "store/backend/statement_cache.h"
#include "store/facts/long_text.h"

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace xladb::store {

// XXH3-64 of `text` as a signed 64-bit integer (how names.hash and long_texts.hash store it).
int64_t TextHash(std::string_view text);

class InternedTexts {
 public:
  // kText: found by the text (a UNIQUE column); kHash: by TextHash, several rows may share one (both through
  // Id); kUniqueHash: by a UNIQUE hash, for texts that are mostly new, a batch at a time (through Ids).
  enum class Key { kText, kHash, kUniqueHash };
  static constexpr size_t kMaxCachedTexts = 4096;  // a real run has a few hundred op_names; a 1 GiB program ~600k

  InternedTexts(const char* table, const char* id_column, const char* text_column, Key key);

  // The id of `text`, inserting it when it is new. A text another writer inserts at the same moment is found
  // after its insert commits (key kText; names, without a unique key, may then hold it twice: the smaller id
  // is found later). Key kText or kHash. On PostgreSQL: one statement (and round trip) a text not cached, new
  // or stored before; on SQLite a lookup, and an insert when it finds nothing.
  int64_t Id(SqlConnection& sql, const std::string& text);

  // Key kHash: sets ids[i] to the id of texts[i] (up to its first NUL), a batch at a time: the texts not cached
  // are looked up by hash in one query (of several rows of one text, the smallest id), those not stored are
  // inserted in bulk, their ids given by the writer (WritesAlone), returned by the insert (PostgreSQL) or read
  // back by hash (SQLite outside a transaction). At most
  // sql.bulk_batch_rows() texts a call. Two writers that store one new text at once each keep their own row's
  // id for it (on PostgreSQL, where the ids come from the insert; a later lookup answers the smaller): a name
  // may then have two ids in one run, which readers, joining names by id for its text only, do not see.
  void Ids(SqlConnection& sql, std::span<const std::string> texts, std::span<int64_t> ids);

  // Key kUniqueHash, the table long_texts: sets ids[i] to the id of texts[i] (its text up to its first NUL,
  // its cut parts' ids: store/facts/long_text.h), inserting the new ones, and returns how many were new. At
  // most sql.bulk_batch_rows() texts a call; the batch is taken by value, so a caller done with it moves it
  // (its texts are then not copied). Throws SqlError when a text cannot be stored (its hash is taken by
  // another text).
  int64_t Ids(SqlConnection& sql, std::vector<LongText> texts, std::span<int64_t> ids);

  // Where the enclosing file (savepoint) and group (transaction) end: a commit keeps the cache, a rollback
  // of anything that added a text forgets it.
  void FileDone();
  void FileAborted();
  void GroupCommitted();
  void GroupAborted();
  // Forgets every id kept: another connection may have removed its row (store/facts/interned_removals.h).
  void ForgetIds() {
    ids_.clear();
    ForgetGroupTexts();
  }

  static constexpr size_t kMaxGroupTextBytes = size_t{2} << 20;  // a real run folder: 0.95 MB in all

 private:
  int64_t Find(SqlConnection& sql, const std::string& text, int64_t hash);  // 0 when absent
  // The largest id the table holds (0 when empty): new texts' ids follow it where the writer gives them.
  int64_t LargestId(SqlConnection& sql);

  const Key key_;
  const std::string table_, id_column_, text_column_;
  // On PostgreSQL (keys kText and kHash): the lookup, and the insert when the lookup finds nothing, in one
  // statement; 0 when another writer stored the text meanwhile (the caller looks it up again).
  int64_t FindOrInsert(SqlConnection& sql, const std::string& text, int64_t hash);

  std::string find_sql_, insert_sql_, find_or_insert_sql_;  // find_or_insert_sql_: keys kText and kHash
  std::unique_ptr<SqlStatement> find_, insert_, find_or_insert_, largest_id_;
  // Ids(): the lookup of a batch's hashes: hash, id, text, and for long_texts the ids of the cut parts.
  InListRead find_hashes_;
  std::unordered_map<std::string, int64_t> ids_;
  bool added_in_file_ = false, added_in_group_ = false;
  // Ids(LongText): the whole texts the open group looked up or stored, by hash, with their ids; forgotten
  // when the group ends and when a file rolls back (ForgetGroupTexts).
  std::unordered_map<int64_t, std::pair<int64_t, LongText>> group_texts_;
  size_t group_text_bytes_ = 0;
  void ForgetGroupTexts();
};

// The writer's interned texts (shapes, source file paths, instruction and computation names, whole
// instruction texts), stepped together at every file and group end (FileDone … GroupAborted below).
// `connection` is where they are written: the writer's own on SQLite; on PostgreSQL a second connection of the
// writer's, outside its transaction, so each text is committed at once and two writers sharing a store wait
// on each other for a text both need only while one statement runs, never for a group (a removal of interned
// rows waits for the groups, store/facts/interned_removals.h); whole texts are inserted in hash order, so two
// batches that share new texts cannot deadlock. A text whose file is rolled back then stays, unreferenced.
struct InternedTextCaches {
  InternedTexts shapes{"shapes", "shape_id", "text", InternedTexts::Key::kText};
  InternedTexts source_files{"source_files", "source_file_id", "path", InternedTexts::Key::kText};
  InternedTexts names{"names", "name_id", "text", InternedTexts::Key::kHash};
  InternedTexts long_texts{"long_texts", "text_id", "text", InternedTexts::Key::kUniqueHash};
  SqlConnection* connection = nullptr;

  // A merge gave an instruction another whole text, or a replaced file's rows went: `text_id` may now be
  // referred to by nothing. A file or group rolled back forgets what it noted; the texts noted by committed
  // groups are deleted by SweepReplacedTexts, unless an instruction still refers to them (another module or
  // run may share a text).
  void TextReplaced(int64_t text_id) { replaced_in_file_.push_back(text_id); }

  // At the end of a run, after its last commit: deletes the replaced texts no instruction refers to. Once
  // per run, not per group, so that what a file writes does not depend on where groups end (a text swept
  // mid-run would be new again to the next file that prints it). On `connection` outside the writer's
  // transaction (on PostgreSQL a delete inside it would hold the text's row while the texts' own connection
  // may insert the same hash: a wait on itself); on PostgreSQL it waits for other writers' open groups
  // (store/facts/interned_removals.h). Throws SqlError.
  void SweepReplacedTexts();

  void FileDone();
  void FileAborted();
  void GroupCommitted();
  void GroupAborted();

  // At the start of each of the writer's transactions (before any lookup in it): holds the interned rows
  // against removal until it ends, where the backend needs a lock for that, and forgets every id kept when
  // another connection removed interned rows since the last transaction (store/facts/interned_removals.h).
  // `statements` are the writer's, on its own connection (not `connection`). Throws SqlError.
  void BeginTransaction(SqlConnection& sql, StatementCache& statements);

 private:
  void ForEach(void (InternedTexts::*step)()) {
    for (InternedTexts* cache : {&shapes, &source_files, &names, &long_texts}) (cache->*step)();
  }

  std::vector<int64_t> replaced_in_file_, replaced_in_group_, replaced_in_run_;
  int64_t removals_seen_ = -1;  // the removals counted when the last transaction began; -1: none began yet
};

// Fills names.hash for every row (the schema migration to version 6 inserts names in SQL, which has no
// XXH3).
void HashAllNames(SqlConnection& sql);

}  // namespace xladb::store

#endif  // XLADB_STORE_FACTS_INTERNED_TEXTS_H_
