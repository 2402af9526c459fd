// The answers of xladb.v1.QueryService, as functions from a request to a response over a Database: the one
// translation between the store's typed queries and the API. The gRPC handlers (query_service.h) call them
// on the daemon's read-only connections, and `xladb … --db FILE` calls them in-process, so an offline answer
// is the server's answer.
//
// Contract
//   * Each validates its request (kInvalidArgument: missing fields, negative or too large counts), runs the
//     store query on `db` (read-only statements; one thread at a time per connection) and fills `response`,
//     which must be empty. Errors come back as Status (kNotFound: unknown run or module); no exceptions.
//   * Strings are filled as stored; the gRPC layer makes them valid UTF-8 (Answer, query_service.h).
#ifndef XLADB_SERVICE_QUERY_ANSWERS_H_
#define XLADB_SERVICE_QUERY_ANSWERS_H_

#include <string>
#include <vector>

#include "base/status.h"
#include "store/backend/database.h"
#include "xladb/v1/xladb.pb.h"

namespace xladb::service {

[[nodiscard]] Status AnswerListRuns(store::Database& db, const v1::ListRunsRequest& request, v1::ListRunsResponse* response);
[[nodiscard]] Status AnswerGetRun(store::Database& db, const v1::GetRunRequest& request, v1::Run* response);
[[nodiscard]] Status AnswerListModules(store::Database& db, const v1::ListModulesRequest& request,
                                       v1::ListModulesResponse* response);
[[nodiscard]] Status AnswerPeakMemoryTrend(store::Database& db, const v1::PeakMemoryTrendRequest& request,
                                           v1::PeakMemoryTrendResponse* response);
[[nodiscard]] Status AnswerSpillRates(store::Database& db, const v1::SpillRatesRequest& request,
                                      v1::SpillRatesResponse* response);
[[nodiscard]] Status AnswerTopBuffers(store::Database& db, const v1::TopBuffersRequest& request,
                                      v1::TopBuffersResponse* response);
[[nodiscard]] Status AnswerDiffRuns(store::Database& db, const v1::DiffRunsRequest& request, v1::DiffRunsResponse* response);
[[nodiscard]] Status AnswerCheckRun(store::Database& db, const v1::CheckRunRequest& request, v1::CheckRunResponse* response);
[[nodiscard]] Status AnswerListRetraces(store::Database& db, const v1::ListRetracesRequest& request,
                                        v1::ListRetracesResponse* response);
// The change points of a run history (service/change_answers.cc, store/compare/change_points.h).
[[nodiscard]] Status AnswerListChanges(store::Database& db, const v1::ListChangesRequest& request,
                                       v1::ListChangesResponse* response);

// Jobs and OOM reports (service/job_oom_answers.cc). ListJobs reads the ingest_jobs table, so an offline
// answer lists what the daemon recorded; kInvalidArgument for an unknown state or a bad limit.
[[nodiscard]] Status AnswerListJobs(store::Database& db, const v1::ListJobsRequest& request,
                                    v1::ListJobsResponse* response);
[[nodiscard]] Status AnswerOomReports(store::Database& db, const v1::OomReportsRequest& request,
                                      v1::OomReportsResponse* response);
// Sets has_oom_report on the modules of `response` (all of run `run_name`) that an OOM report is filed under.
[[nodiscard]] Status MarkModulesWithOomReports(store::Database& db, const std::string& run_name,
                                               v1::ListModulesResponse* response);

// The HTML page a ReportRequest names (service/pages/report_pages.h), self-contained for a file: its links
// stay inside the page. `html` must be empty. `notes` (optional): for a module page, how the module was resolved
// and whether its peaks differ (service/module_notes.h), the sentences the page shows too.
[[nodiscard]] Status AnswerReport(store::Database& db, const v1::ReportRequest& request, std::string* html,
                                  std::vector<std::string>* notes = nullptr);

}  // namespace xladb::service

#endif  // XLADB_SERVICE_QUERY_ANSWERS_H_
