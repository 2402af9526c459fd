// Group commit (run_writer_impl.h): the files of a group share one transaction, each in a savepoint of its
// own; the rows held for the group (lone file rows, small files' rows on PostgreSQL) and the derived facts of
// the modules it wrote are written at its COMMIT, after which the runs' summaries are recounted.
#include <algorithm>
#include <chrono>
#include <string>

#include "base/unix_time.h"
#include "store/backend/row_binding.h"
#include "store/facts/run_summary.h"
#include "store/write/run_writer_impl.h"

namespace xladb::store {

double NextGroupSeconds(const GroupCommit& group, double recount_seconds) {
  if (group.max_seconds <= 0) return group.max_seconds;
  const double stretched = std::min(recount_seconds * kGroupSecondsPerRecountSecond, group.max_stretched_seconds);
  return std::max(group.max_seconds, stretched);
}

void RunWriter::Impl::NoteModuleWritten(const FileWriter& f) {
  if (f.module_id() == 0) return;
  auto [it, added] = pending_index.try_emplace(f.module_id(), pending_modules.size());
  if (added) {
    pending_modules.push_back({f.run_id(), f.module_id(), f.module_is_new(), f.facts()});
    return;
  }
  ModuleFiles& m = pending_modules[it->second];
  m.module_is_new |= f.module_is_new();
  MergeLaterFile(m.facts, f.facts());
}

void RunWriter::Impl::UpdatePendingModules() {
  derived_facts.UpdateAfterFiles(pending_modules);
  ForgetPendingModules();
}

void RunWriter::Impl::ForgetPendingModules() {
  pending_modules.clear();
  pending_index.clear();
}

Status RunWriter::Impl::WriteHeldRows() {
  return held_rows.empty() ? Status::Ok() : WriteOrFailGroup([&] { held_rows.Write(sql); });
}

Status RunWriter::Impl::HoldLoneFileRow(const FileSpec& s, const FileOutcome& outcome, int64_t issue_count) {
  try {
    OpenGroup();
    group_runs.insert(s.run_id);
    lone_file_rows_held = true;
    AddLoneFileRow(lone_file_rows, sql, s, ingest::FileVerdictName(outcome.verdict), outcome, issue_count);
    NoteWritten(s);
    return Status::Ok();
  } catch (const std::exception& e) {
    return FailGroup("writing", e);
  }
}

Status RunWriter::Impl::WriteLoneFileRows() {
  if (!lone_file_rows_held) return Status::Ok();
  return WriteOrFailGroup([&] {
    (void)lone_file_rows.Flush(sql);
    lone_file_rows_held = false;
  });
}

void RunWriter::Impl::OpenGroup() {
  if (in_group) return;
  sql.BeginWrite();
  try {
    // Before the group looks up any interned text: ids kept from earlier groups whose rows another
    // connection removed meanwhile are forgotten, and none is removed until the group ends.
    interned.BeginTransaction(sql, statements);
  } catch (...) {
    RollBackGroup();  // the transaction too (a lock refused on PostgreSQL aborts it), not left open
    throw;
  }
  in_group = true;
  group_started = std::chrono::steady_clock::now();
  group_bytes = group_files = 0;
}

Status RunWriter::Impl::CloseGroup() {
  if (!in_group) return Status::Ok();
  in_group = false;
  try {
    if (lone_file_rows_held) (void)lone_file_rows.Flush(sql);  // the run summaries count them
    lone_file_rows_held = false;
    held_rows.Write(sql);  // the derived facts read them
    UpdatePendingModules();  // before the runs' summaries, whose module count reads module_summary
    // Timed for the next group's length (on PostgreSQL with the answers still owed to statements sent
    // before it, which the recount's own answer waits for: an overestimate, bounded by the stretch's limit).
    const auto recount_started = std::chrono::steady_clock::now();
    for (int64_t run_id : group_runs) UpdateRunSummary(statements, run_id);
    group_seconds = NextGroupSeconds(
        group, std::chrono::duration<double>(std::chrono::steady_clock::now() - recount_started).count());
    group_runs.clear();
    // Once a group, not once a file (a statement per file was 1 in 25 of a small file's): readers see the
    // group's files and this time together, at the COMMIT.
    for (int64_t run_id : group_runs_with_rows) {
      SqlStatement& run = Cached("UPDATE runs SET updated_at_us = ? WHERE run_id = ?");
      BindRow(run, UnixMicrosNow(), run_id);
      run.Execute();
    }
    group_runs_with_rows.clear();
    sql.Exec("COMMIT");
    interned.GroupCommitted();
    created_modules.GroupCommitted();
    return Status::Ok();
  } catch (const std::exception& e) {
    return FailGroup("committing", e);
  }
}

Status RunWriter::Impl::FailGroup(std::string_view doing, const std::exception& e) {
  RollBackGroup();
  group_failure = std::string(doing) + " the last " + std::to_string(group_files) +
                  " files failed, so they are not stored (a rerun ingests them): " + e.what();
  return Status::IoError(group_failure);
}

void RunWriter::Impl::RollBackGroup() {
  try {
    sql.Exec("ROLLBACK");
  } catch (...) {
  }
  in_group = false;
  group_runs.clear();
  group_runs_with_rows.clear();
  lone_file_rows = BulkBatch(&kLoneFileRowInsert);
  lone_file_rows_held = false;
  held_rows.Clear();
  created_modules.GroupRolledBack();
  ForgetPendingModules();
  interned.GroupAborted();
}

Status RunWriter::Impl::CloseGroupIfDue(int64_t file_bytes) {
  group_bytes += file_bytes;
  ++group_files;
  const double open_for =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - group_started).count();
  return open_for >= group_seconds || group_bytes >= group.max_bytes ? CloseGroup() : Status::Ok();
}

}  // namespace xladb::store
