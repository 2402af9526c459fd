// IngestServiceImpl: the xladb.v1.IngestService handlers. They validate requests, then hand work to the
// IngestQueue (the single writer) and report its jobs.
//
// Contract
//   * Rights (service/access_policy.h): IngestPath, Upload, LabelRun, DeleteRun and PruneDetail change the
//     store and need AccessPolicy::Right::kWrite (the admin token, when one is configured); GetIngestJob and
//     WatchIngestJob only read. A token without the right is PERMISSION_DENIED before anything is read.
//   * IngestPath reads only under the AccessPolicy's allowed roots: checked when asked, and the path is opened
//     beneath its root again when the job runs (a symlink swapped in meanwhile is refused).
//   * Upload is all or nothing. It stages the streamed files under `spool_dir` (one fresh folder per upload,
//     created 0700, named kUploadStagePrefix…), never outside it: paths (FileChunk.path, or raw_path for names
//     that are not UTF-8) must be relative, without `.`/`..` or empty parts, parts of at most 255 bytes. The
//     stream must end with an UploadTrailer that matches what arrived; a missing or wrong trailer, a bad
//     path or a limit ends the call with INVALID_ARGUMENT or RESOURCE_EXHAUSTED and removes what was staged.
//     Once submitted the staged folder is the queue's (removed when the job ends); RemoveAbandonedUploads()
//     clears folders a killed daemon left.
//   * No handler lets an exception escape (INTERNAL instead); every string sent is valid UTF-8.
//   * Thread-safe.
#ifndef XLADB_SERVICE_INGEST_SERVICE_H_
#define XLADB_SERVICE_INGEST_SERVICE_H_

#include <cstdint>
#include <string>
#include <string_view>

#include <grpcpp/grpcpp.h>

#include "service/access_policy.h"
#include "service/ingest_queue.h"
#include "store/admin/run_lifecycle.h"
#include "xladb/v1/xladb.grpc.pb.h"

namespace xladb::service {

struct UploadLimits {
  int64_t max_bytes = int64_t{16} << 30;  // per upload
  int64_t max_files = 100000;             // per upload
};

// Staged upload folders are named with this prefix inside the spool folder.
inline constexpr std::string_view kUploadStagePrefix = "upload-";

// Fills an IngestJob message from a JobStatus (strings made valid UTF-8).
void ToProto(const JobStatus& status, v1::IngestJob* out);

// Removes the staged upload folders in `spool_dir` that no unfinished job of `queue` will ingest (a daemon
// killed during an upload leaves them). Returns how many it removed. Call once at start, after the queue has
// loaded its unfinished jobs and before the server accepts uploads.
int RemoveAbandonedUploads(const std::string& spool_dir, const IngestQueue& queue);

class IngestServiceImpl final : public xladb::v1::IngestService::Service {
 public:
  IngestServiceImpl(IngestQueue* queue, const AccessPolicy* access, std::string spool_dir, UploadLimits limits)
      : queue_(queue), access_(access), spool_dir_(std::move(spool_dir)), limits_(limits) {}

  grpc::Status IngestPath(grpc::ServerContext*, const v1::IngestPathRequest*, v1::IngestJob*) override;
  grpc::Status Upload(grpc::ServerContext*, grpc::ServerReader<v1::UploadChunk>*, v1::IngestJob*) override;
  grpc::Status GetIngestJob(grpc::ServerContext*, const v1::GetIngestJobRequest*, v1::IngestJob*) override;
  grpc::Status WatchIngestJob(grpc::ServerContext*, const v1::GetIngestJobRequest*,
                              grpc::ServerWriter<v1::IngestJob>*) override;
  // Run changes (store/admin/run_lifecycle.h), done by the queue's writer between jobs (IngestQueue::RunOnWriter).
  grpc::Status LabelRun(grpc::ServerContext*, const v1::LabelRunRequest*, v1::Run*) override;
  grpc::Status DeleteRun(grpc::ServerContext*, const v1::DeleteRunRequest*, v1::DeleteRunResponse*) override;
  grpc::Status PruneDetail(grpc::ServerContext*, const v1::PruneDetailRequest*, v1::PruneDetailResponse*) override;

 private:
  // Waits (while the client is there) until the job finishes; fills `out` with its last state.
  grpc::Status WaitAndReport(grpc::ServerContext* ctx, const std::string& job_id, v1::IngestJob* out);
  // Upload's body: receives, checks and stages the stream, then submits the job.
  grpc::Status ReceiveUpload(grpc::ServerContext* ctx, grpc::ServerReader<v1::UploadChunk>* reader,
                             v1::IngestJob* resp);

  IngestQueue* queue_;
  const AccessPolicy* access_;
  std::string spool_dir_;
  UploadLimits limits_;
};

// Runs store::PruneDetail on the queue's writer (between ingest jobs), counting from now.
StatusOr<store::PrunedDetail> PruneOnWriter(IngestQueue* queue, int64_t keep_detail_days,
                                            const store::LabelList& keep_labels);

}  // namespace xladb::service

#endif  // XLADB_SERVICE_INGEST_SERVICE_H_
