#include "ingest/dump_ingester.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <ctime>
#include <exception>
#include <memory>
#include <thread>
#include <utility>

#include "ingest/file_ingest.h"
#include "ingest/file_passes.h"
#include "ingest/read_ahead_queue.h"
#include "ingest/records/file_verdict.h"
#include "ingest/source/dump_source.h"
#include "ingest/source/run_name.h"
#include "ingest/text/printed_number.h"

namespace xladb::ingest {
namespace {

Status RunTimeOutOfRange(const std::string& shown) {
  return Status::InvalidArgument("time '" + shown + "' is outside 1970-01-01 .. 2200-01-01");
}

}  // namespace

StatusOr<int64_t> RunTimeFromLabels(const std::vector<std::pair<std::string, std::string>>& labels) {
  for (const auto& [key, value] : labels) {
    if (key != "time" && key != "run_time" && key != "commit_time" && key != "date" && key != "timestamp") continue;
    auto t = ParseTimeToUs(value);
    if (!t.ok()) return Status::InvalidArgument("label " + key + ": " + t.status().message());
    return t;
  }
  return int64_t{-1};
}

Status CheckRunTimeUs(int64_t time_us, const std::string& shown) {
  if (InRunTimeRange(time_us)) return Status::Ok();
  return RunTimeOutOfRange(shown);
}

StatusOr<int64_t> ParseTimeToUs(const std::string& text) {
  if (auto secs = ParseInt64(text)) {
    // Checked in seconds, before the product can overflow (9223372036854775807 seconds).
    if (*secs < kMinRunTimeUs / 1000000 || *secs > kMaxRunTimeUs / 1000000) return RunTimeOutOfRange(text);
    return *secs * 1000000;
  }
  for (const char* fmt : {"%Y-%m-%dT%H:%M:%SZ", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S", "%Y-%m-%d"}) {
    std::tm tm{};
    const char* end = strptime(text.c_str(), fmt, &tm);
    if (end != nullptr && *end == '\0') {
      const int64_t secs = timegm(&tm);  // years up to 9999 fit; the range check refuses the far ones
      if (Status in_range = CheckRunTimeUs(secs * 1000000, text); !in_range.ok()) return in_range;
      return secs * 1000000;
    }
  }
  return Status::InvalidArgument("cannot read time '" + text +
                                 "': use Unix seconds, YYYY-MM-DD, or YYYY-MM-DDTHH:MM:SSZ");
}

StatusOr<IngestSummary> DumpIngester::Ingest(const std::string& path, const IngestOptions& options,
                                             const std::function<void(const IngestProgress&)>& progress) {
  auto source = DumpSource::Open(path, options.source_limits);
  if (!source.ok()) return source.status();
  return Ingest(*source.value(), path, options, progress);
}

namespace {

// The run `source` is ingested as: its name, recorded source, labels and time, checked (ValidateRunName,
// ValidateRunLabels, the run-time range), so a bad one is returned before the target is touched.
StatusOr<RunSpec> RunSpecFor(DumpSource& source, const std::string& path, const IngestOptions& options) {
  RunSpec spec;
  spec.name = options.run_name.empty() ? source.DefaultRunName() : options.run_name;
  if (Status named = ValidateRunName(spec.name); !named.ok()) return named;
  if (Status labelled = ValidateRunLabels(options.labels); !labelled.ok()) return labelled;
  if (options.time_us >= 0) {
    if (Status in_range = CheckRunTimeUs(options.time_us, std::to_string(options.time_us) + " µs"); !in_range.ok()) {
      return in_range;
    }
  }
  spec.source_path = options.source_description.empty() ? CanonicalSourcePath(path) : options.source_description;
  spec.labels = options.labels;
  spec.time_us = options.time_us;
  spec.append = options.append;
  spec.content_digest = options.content_digest;
  if (spec.time_us < 0) {
    auto from_labels = RunTimeFromLabels(options.labels);
    if (!from_labels.ok()) return from_labels.status();
    spec.time_us = *from_labels;
  }
  return spec;
}

// Whether the walk goes on with one more file: not after a fatal error or a stop (asked now: the run is then
// interrupted). Counts the file when it does, except in the second pass (it was counted in the first).
bool AdmitFile(const IngestOptions& options, RunIngestState& run) {
  if (!run.fatal.ok() || run.summary.interrupted) return false;
  if (options.should_stop && options.should_stop()) {
    run.summary.interrupted = true;
    return false;
  }
  if (!run.reread) ++run.summary.files;
  return true;
}

// The first walk of a run in two stages, on two threads (read_ahead_queue.h): this one walks the source, reads
// each small file twice, sniffs it and parses it into records ahead; a writer's thread takes the files through
// the rest of their steps into the target, in the walk's order, owning `run` until it ends. What the walk
// itself keeps (the newest file time, whether it was asked to stop) is its own, and joins `run` at the end.
// A throw on the writer's thread (a bug; the target returns its errors as values) is thrown again here.
Status WalkReadingAhead(DumpSource& source, const IngestOptions& options, RunIngestState& run,
                        int64_t* newest_mtime) {
  // Enough files to keep both threads busy, few enough bytes not to matter beside the parsers' own memory.
  ReadAheadQueue queue(/*max_files=*/64, /*max_bytes=*/size_t{32} << 20);
  std::atomic<bool> parse_ahead{true};
  run.parse_ahead = &parse_ahead;
  std::exception_ptr thrown;
  // Before the writer's thread starts: nothing may throw between its start and the try below.
  const auto buffer = std::make_unique_for_overwrite<char[]>(kHashReadChunk);
  std::thread writer([&] {
    try {
      ReadAheadQueue::Item item;
      while (queue.Pop(&item)) {
        if (AdmitFile(options, run)) {
          if (item.ahead != nullptr) {
            IngestFile(run, *item.ahead);
          } else {
            IngestFile(run, *item.in_place);
          }
        }
        queue.Finished(item);
        item = {};
        if (!run.fatal.ok() || run.summary.interrupted) queue.Stop();
      }
    } catch (...) {
      thrown = std::current_exception();
      queue.Stop();
    }
  });
  bool walking = true, interrupted = false;
  Status walk;
  std::exception_ptr walk_thrown;
  try {
    walk = source.ForEach([&](DumpEntry& entry) {
      if (InRunTimeRange(entry.mtime_us)) *newest_mtime = std::max(*newest_mtime, entry.mtime_us);
      if (!walking) return;
      if (options.should_stop && options.should_stop()) {
        interrupted = true;
        walking = false;
        return;
      }
      std::unique_ptr<ReadAheadFile> ahead = ReadAhead(entry, buffer.get(), parse_ahead.load());
      walking = ahead != nullptr ? queue.Push(std::move(ahead)) : queue.RunInPlace(&entry);
    });
  } catch (...) {
    // A throw on the walk's thread (the source or a parser reading ahead): the writer's thread stops after
    // its file and is joined below before the throw goes on (a std::thread destroyed while joinable ends the
    // process: a daemon would die, restart and resume the job into the same throw).
    walk_thrown = std::current_exception();
    queue.Stop();
  }
  queue.Close();
  writer.join();
  run.parse_ahead = nullptr;
  if (walk_thrown) std::rethrow_exception(walk_thrown);
  if (thrown) std::rethrow_exception(thrown);
  run.summary.interrupted = run.summary.interrupted || interrupted;
  return walk;
}

}  // namespace

StatusOr<IngestSummary> DumpIngester::Ingest(DumpSource& source, const std::string& path,
                                             const IngestOptions& options,
                                             const std::function<void(const IngestProgress&)>& progress) {
  const auto start = std::chrono::steady_clock::now();
  StatusOr<RunSpec> spec = RunSpecFor(source, path, options);
  if (!spec.ok()) return spec.status();
  auto run_id = target_->BeginRun(*spec);
  if (!run_id.ok()) return run_id.status();

  RunIngestState run;
  run.target = target_;
  run.options = &options;
  run.run_id = *run_id;
  run.run_time_given = spec->time_us >= 0;
  run.wrapper_folder = source.WrapperFolderName();
  run.on_progress = progress;
  run.summary.run_name = spec->name;
  run.summary.run_id = *run_id;
  int64_t newest_mtime = -1;
  const auto visit = [&](DumpEntry& entry) {
    // The walk goes on to its end (its entries come anyway): a run left partial keeps the time it would
    // have had whole, its newest file's.
    // A modification time outside the run-time range (an archive member dated 9999) does not count: it
    // would sort the run newest forever.
    if (!run.reread && InRunTimeRange(entry.mtime_us)) {
      newest_mtime = std::max(newest_mtime, entry.mtime_us);
    }
    if (AdmitFile(options, run)) IngestFile(run, entry);
  };
  // Also after a fatal error: the files stored whole so far are kept (a target that commits files in groups
  // commits its open group here).
  const auto finish = [&] {
    return target_->FinishRun(*run_id, run.run_time_given || run.time_from_metadata ? -1 : newest_mtime);
  };
  Status walk;
  try {
    walk = options.read_ahead && std::thread::hardware_concurrency() > 1
               ? WalkReadingAhead(source, options, run, &newest_mtime)
               : source.ForEach(visit);
    // A replaced file whose module other files also wrote to made the target rebuild that module: read those
    // files again (they are "changed" now; the rest is unchanged and skipped). Counted apart, not twice.
    if (walk.ok() && run.fatal.ok() && !run.summary.interrupted && target_->TakeRereadRequest()) {
      run.reread = true;
      walk = source.ForEach(visit);
    }
  } catch (...) {
    // A throw (a bug, std::bad_alloc) ends the run as a fatal error does before it goes on to the caller: the
    // target drops the file it was in the middle of and keeps those stored whole, so no transaction or lock
    // of a target that outlives the run (the daemon's writer) is left held until its next run.
    (void)finish();
    throw;
  }
  Status fin = finish();
  if (run.fatal.ok() && !fin.ok()) run.fatal = fin;
  IngestSummary& summary = run.summary;
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!run.fatal.ok()) return run.fatal;
  if (!walk.ok()) {
    // The walk stopped early (corrupt archive, unreadable folder): what was visited is stored; say so.
    summary.errors.push_back({path, walk.message()});
    summary.Count(FileVerdict::kError);
  }
  return std::move(summary);
}

}  // namespace xladb::ingest
