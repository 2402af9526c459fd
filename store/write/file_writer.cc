#include "store/write/file_writer.h"

#include <type_traits>
#include <utility>

namespace xladb::store {

FileWriter::FileWriter(StatementCache* statements, InternedTextCaches* interned, HeldBulkRows* held_rows,
                       int64_t run_id, int64_t file_id, int64_t module_id, bool module_is_new,
                       bool module_named_by_number, const FileFacts& facts)
    : file_(statements, interned, held_rows, run_id, file_id, module_id, module_is_new, module_named_by_number),
      buffer_assignment_(&file_),
      live_ranges_(&file_, &buffer_assignment_),
      hlo_module_(&file_),
      reports_(&file_) {
  file_.facts = facts;
}

template <typename Record>
void FileWriter::Route(Record&& r) {
  if constexpr (std::is_same_v<Record, ingest::IssueRecord>) {
    file_.issues.Add(std::move(r));
  } else if constexpr (requires { buffer_assignment_.Add(std::move(r)); }) {
    buffer_assignment_.Add(std::move(r));
  } else if constexpr (requires { live_ranges_.Add(std::move(r)); }) {
    live_ranges_.Add(std::move(r));
  } else if constexpr (requires { hlo_module_.Add(std::move(r)); }) {
    hlo_module_.Add(std::move(r));
  } else {
    static_assert(requires { reports_.Add(std::move(r)); }, "no row mapper takes this record type");
    reports_.Add(std::move(r));
  }
}

#define XLADB_FILE_WRITER_METHOD(Name, plural) \
  void FileWriter::On##Name(ingest::Name##Record&& r) { Route(std::move(r)); }
XLADB_RECORD_TYPES(XLADB_FILE_WRITER_METHOD)
#undef XLADB_FILE_WRITER_METHOD

Status FileWriter::Finish() {
  // A report's rows and counters, held in batches, belong to the file whether it names a module or not.
  file_.Guard([&] { reports_.Flush(); });
  if (file_.module_id == 0) return file_.error;
  file_.Guard([&] {
    // Values and live ranges that waited for the file's end, then every batched row, then the peak list that
    // names the values.
    buffer_assignment_.WritePending();
    live_ranges_.WriteUnmatched();
    buffer_assignment_.Flush();
    live_ranges_.Flush();
    hlo_module_.Flush();
    live_ranges_.WritePeakBuffers();
  });
  return file_.error;
}

}  // namespace xladb::store
