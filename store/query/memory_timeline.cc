#include "store/query/memory_timeline.h"

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <utility>

#include "store/backend/row_binding.h"
#include "store/query/result_columns.h"
#include "store/query/statement_text.h"
#include "store/facts/shape_text.h"

namespace xladb::store {
namespace {

// A module's module_summary s (-1: unknown; no live ranges when it has no summary).
struct SummaryRow {
  int64_t schedule_length = -1;
  int64_t peak_time = -1;
  int64_t peak_bytes = -1;
  int64_t live_range_count = 0;
};
const ResultColumns<SummaryRow> kSummaryColumns = {
    {"s.schedule_length", &SummaryRow::schedule_length},
    {"s.peak_time", &SummaryRow::peak_time},
    {"s.peak_bytes", &SummaryRow::peak_bytes},
    {"s.live_range_count", &SummaryRow::live_range_count},
};

// Something of the module (a shape, a value) and the text of its shape.
struct ShapeOf {
  int64_t id = 0;
  std::string shape;
};
const ResultColumns<ShapeOf> kShapeColumns = {{"shape_id", &ShapeOf::id}, {"text", &ShapeOf::shape}};
const ResultColumns<ShapeOf> kValueInstructionShapeColumns = {{"v.value_id", &ShapeOf::id},
                                                              {"sh.text", &ShapeOf::shape}};

struct ScheduleStep {
  int64_t time = 0;
  std::string instruction;
};
const ResultColumns<ScheduleStep> kScheduleColumns = {{"time", &ScheduleStep::time},
                                                      {"instruction", &ScheduleStep::instruction}};

}  // namespace

StatusOr<MemoryTimeline> LoadMemoryTimeline(Database& db, int64_t module_id) {
  return CatchSqlErrors("memory timeline of module " + std::to_string(module_id),
                        [&]() -> StatusOr<MemoryTimeline> {
    MemoryTimeline t;
    t.module_id = module_id;
    auto summary = db.connection().Prepare(
                              "SELECT " + kSummaryColumns.SelectList() +
                              " FROM modules m LEFT JOIN module_summary s ON s.module_id = m.module_id "
                              "WHERE m.module_id = ?");
    summary->Bind(1, module_id);
    if (!summary->Step()) return Status::NotFound("module " + std::to_string(module_id) + " not found");
    const SummaryRow s = kSummaryColumns.Read(*summary);
    t.schedule_length = s.schedule_length;
    t.xla_peak_time = s.peak_time;
    t.xla_peak_bytes = s.peak_bytes;
    const int64_t live_ranges = s.live_range_count;

    // Logical sizes per shape: a module has far fewer shapes than values.
    std::unordered_map<int64_t, std::optional<int64_t>> logical_size;
    auto shapes = db.connection().Prepare(
                             "SELECT " + kShapeColumns.SelectList() + " FROM shapes WHERE shape_id IN "
                             "(SELECT DISTINCT shape_id FROM buffer_values WHERE module_id = ?)");
    shapes->Bind(1, module_id);
    while (shapes->Step()) {
      const ShapeOf shape = kShapeColumns.Read(*shapes);
      logical_size.emplace(shape.id, LogicalByteSize(shape.shape));
    }

    // Before 2025-04 XLA sized a tuple element by its whole defining instruction's shape (§4.1): the size
    // each such value would have had then, from the instruction's shape.
    std::unordered_map<int64_t, int64_t> instruction_size;
    auto elements = db.connection().Prepare(
                               "SELECT " + kValueInstructionShapeColumns.SelectList() + " FROM buffer_values v "
                               "JOIN instructions i ON i.module_id = v.module_id AND i.name = v.instruction "
                               "JOIN shapes sh ON sh.shape_id = i.shape_id "
                               "WHERE v.module_id = ? AND v.shape_index <> '{}'");
    elements->Bind(1, module_id);
    while (elements->Step()) {
      const ShapeOf element = kValueInstructionShapeColumns.Read(*elements);
      if (auto size = LogicalByteSize(element.shape)) instruction_size.emplace(element.id, *size);
    }

    std::vector<SliceUse> uses;
    uses.reserve(static_cast<size_t>(std::max<int64_t>(live_ranges, 0)));
    // Each value on its slice, sized by its own shape, and its defining instruction's size (XLA before 2025-04).
    std::vector<SliceValue> logical;
    std::vector<int64_t> instruction_bytes;
    logical.reserve(uses.capacity());
    instruction_bytes.reserve(uses.capacity());
    auto q = db.connection().Prepare(kLiveSlicesSql);
    q->Bind(1, module_id);
    int32_t last_time = ReadLiveSlices(*q, &uses, [&](const SqlStatement& row, const SliceUse& u) {
      std::optional<int64_t> size;
      if (!row.IsNull(7)) {
        auto found = logical_size.find(row.Int(7));
        if (found != logical_size.end()) size = found->second;
      }
      if (!size) ++t.values_without_logical_size;
      const auto whole = instruction_size.find(row.Int(6));
      logical.push_back({u.offset, u.size, u.allocation, u.color, u.start, u.end, size.value_or(0)});
      instruction_bytes.push_back(whole != instruction_size.end() ? whole->second : size.value_or(0));
    });
    if (uses.empty()) return t;
    t.has_live_ranges = true;
    if (t.schedule_length > last_time) last_time = static_cast<int32_t>(t.schedule_length);

    LiveBytes padded(last_time);
    ForEachLiveSlice(uses, [&](int32_t start, int32_t end, int64_t size, int32_t) { padded.Add(start, end, size); });
    std::vector<SliceUse>().swap(uses);
    // XLA's counting (every value, shared slices again), under both sizings: which one reproduces the printed
    // peak decides how the logical curve sizes values.
    LiveBytes every_value(last_time), by_instruction(last_time);
    bool sizes_differ = false;
    for (size_t i = 0; i < logical.size(); ++i) {
      const SliceValue& v = logical[i];
      every_value.Add(v.start, v.end, v.bytes);
      by_instruction.Add(v.start, v.end, instruction_bytes[i]);
      sizes_differ |= v.bytes != instruction_bytes[i];
    }
    const auto at_xla_peak = [&](const LiveBytes& curve) -> int64_t {
      if (t.xla_peak_time < 0 || t.xla_peak_time > last_time) return -1;
      return curve.ByTime()[static_cast<size_t>(t.xla_peak_time)];
    };
    t.counted_at_xla_peak_time = at_xla_peak(every_value);
    // The older sizing, when only it reproduces the printed peak.
    if (sizes_differ && !t.matches_xla_peak()) {
      const int64_t older = at_xla_peak(by_instruction);
      if (older >= 0 && older == t.xla_peak_bytes) {
        t.counted_at_xla_peak_time = older;
        t.sized_by_instruction = true;
      }
    }
    if (t.sized_by_instruction) {
      for (size_t i = 0; i < logical.size(); ++i) logical[i].bytes = instruction_bytes[i];
    }
    std::vector<int64_t>().swap(instruction_bytes);
    t.padded_bytes = padded.ByTime();
    t.padded_peak = padded.Peak();
    LiveBytes logical_live(last_time);
    AddLargestPerSlice(logical, &logical_live);
    std::vector<SliceValue>().swap(logical);
    t.logical_bytes = logical_live.ByTime();
    t.logical_peak = logical_live.Peak();

    t.instructions.resize(t.logical_bytes.size());
    auto schedule = db.connection().Prepare("SELECT " + kScheduleColumns.SelectList() +
                                            " FROM schedule WHERE module_id = ? AND time <= ?");
    BindRow(*schedule, module_id, static_cast<int64_t>(last_time));
    while (schedule->Step()) {
      ScheduleStep step = kScheduleColumns.Read(*schedule);
      if (step.time >= 0) t.instructions[static_cast<size_t>(step.time)] = std::move(step.instruction);
    }
    return t;
  });
}

}  // namespace xladb::store
