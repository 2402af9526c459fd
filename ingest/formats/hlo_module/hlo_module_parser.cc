#include "ingest/formats/hlo_module/hlo_module_parser.h"

#include <xxhash.h>

#include <string>
#include <utility>

#include "ingest/text/printed_number.h"

namespace xladb::ingest {
namespace {

constexpr std::string_view kHeaderKeyword = "HloModule";
constexpr std::string_view kEntryPrefix = "ENTRY ";
constexpr std::string_view kTrailerPrefix = " // ";
constexpr std::string_view kThreadPrefix = ", execution_thread=";
// A multi-line instruction longer than this is given up on (counted as unknown).
constexpr size_t kMaxJoinedInstructionBytes = 64u << 20;

bool StartsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

std::string_view TrimTrailingSpaces(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || IsDigit(c) || c == '_' || c == '.' || c == '-' ||
         c == '$';
}

// `{a, b}` → `a, b`; anything else unchanged.
std::string_view StripBraces(std::string_view value) {
  if (value.size() >= 2 && value.front() == '{' && value.back() == '}') return value.substr(1, value.size() - 2);
  return value;
}

// True for an indented line that starts like an instruction (`  [ROOT ][%]name = shape opcode(`).
bool LooksLikeInstruction(std::string_view line) {
  return !line.empty() && line.front() == ' ' && SplitHloInstructionText(line).has_value();
}

// `[a-z_0-9]+=` at the start of the line: a header attribute printed on its own line (debug_attributes=).
bool StartsWithAttributeKey(std::string_view line) {
  size_t i = 0;
  while (i < line.size() && ((line[i] >= 'a' && line[i] <= 'z') || line[i] == '_' || IsDigit(line[i]))) ++i;
  return i > 0 && i < line.size() && line[i] == '=';
}

// Attributes whose value names computations, or instructions of the same computation.
bool IsComputationReference(std::string_view key) {
  return key == "calls" || key == "to_apply" || key == "condition" || key == "body" || key == "select" ||
         key == "scatter" || key == "true_computation" || key == "false_computation" ||
         key == "branch_computations" || key == "called_computations" || key == "async_wrapped_computation";
}
bool IsInstructionReference(std::string_view key) {
  return key == "control-predecessors" || key == "control-successors";
}
// Attributes left out of the fingerprint: provenance, not program.
bool IsProvenance(std::string_view key) { return key == "metadata" || key == "origin"; }

// Appends `text` without `/*index=N*/` markers.
void AppendWithoutComments(std::string_view text, std::string* out) {
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t open = text.find("/*", pos);
    if (open == std::string_view::npos) break;
    const size_t close = text.find("*/", open + 2);
    if (close == std::string_view::npos) break;
    out->append(text.substr(pos, open - pos));
    pos = close + 2;
  }
  out->append(text.substr(pos));
}

}  // namespace

// Streaming XXH3-64 over separated fields.
class HloModuleParser::Fingerprint {
 public:
  Fingerprint() : state_(XXH3_createState()) {
    if (state_ != nullptr) XXH3_64bits_reset(state_);
  }
  ~Fingerprint() { XXH3_freeState(state_); }
  Fingerprint(const Fingerprint&) = delete;
  Fingerprint& operator=(const Fingerprint&) = delete;

  void Field(std::string_view text) {
    if (state_ == nullptr) return;
    static constexpr char kSeparator = '\x1f';
    XXH3_64bits_update(state_, text.data(), text.size());
    XXH3_64bits_update(state_, &kSeparator, 1);
  }
  uint64_t Digest() const { return state_ == nullptr ? 0 : XXH3_64bits_digest(state_); }

 private:
  XXH3_state_t* state_;
};

namespace {

// "(f32[2]{0}, s32[])->f32[2]{0}" from a long-form computation signature "(a: f32[2]{0}, b: s32[]) ->
// f32[2]{0} {" (the text after the computation's name), spaced like the header's entry_computation_layout;
// "" when it is not one.
std::string EntrySignatureWithoutNames(std::string_view signature) {
  int depth = 0;
  size_t close = std::string_view::npos;
  for (size_t i = 0; i < signature.size() && close == std::string_view::npos; ++i) {
    const char c = signature[i];
    if (c == '(' || c == '[' || c == '{') ++depth;
    if ((c == ')' || c == ']' || c == '}') && --depth == 0) close = i;
  }
  constexpr std::string_view kArrow = " -> ";
  if (close == std::string_view::npos || signature.substr(close + 1, kArrow.size()) != kArrow) return {};
  std::string_view output = TrimTrailingSpaces(signature.substr(close + 1 + kArrow.size()));
  if (!output.empty() && output.back() == '{') output = TrimTrailingSpaces(output.substr(0, output.size() - 1));
  std::string out = "(";
  TopLevelItems parameters(signature.substr(1, close - 1), ',');
  std::string_view parameter;
  for (bool first = true; parameters.Next(&parameter); first = false) {
    const size_t colon = parameter.find(": ");
    if (!first) out += ", ";
    out += colon == std::string_view::npos ? parameter : parameter.substr(colon + 2);
  }
  return out + ")->" + std::string(output);
}

}  // namespace

HloModuleParser::HloModuleParser(RecordSink* sink)
    : LineParser(sink), fingerprint_(std::make_unique<Fingerprint>()) {}

HloModuleParser::~HloModuleParser() = default;

void HloModuleParser::ParseLine(std::string_view line, int64_t line_no) {
  switch (state_) {
    case State::kRejected:
      return;
    case State::kStart: {
      if (StartsWith(line, kHeaderKeyword) &&
          (line.size() == kHeaderKeyword.size() || line[kHeaderKeyword.size()] == ' ' ||
           line[kHeaderKeyword.size()] == ',')) {
        ParseHeaderLine(line);
        BracketTracker brackets;
        brackets.Feed(line);
        state_ = brackets.balanced() ? State::kPreamble : State::kHeaderBlock;
        header_block_line_ = line_no;
        return;
      }
      state_ = State::kRejected;
      Report(IssueRecord::Severity::kError, line_no,
             "not HLO module text: the first line does not start with `HloModule`: " +
                 std::string(line.substr(0, 80)));
      return;
    }
    case State::kHeaderBlock: {
      if (!line.empty() && line.front() == '}') {
        module_.header_text += '\n';
        module_.header_text += line;
        BracketTracker rest;
        rest.Feed(line.substr(1));
        if (rest.balanced()) {
          ParseHeaderAttributes(line.substr(1), line_no);  // `}, replica_count=2` continues the header
          state_ = State::kPreamble;
        }
        return;
      }
      if (!line.empty() && line.front() != ' ' && TryOpenComputation(line, line_no)) return;
      module_.header_text += '\n';
      module_.header_text += line;
      return;
    }
    case State::kPreamble:
      if (ParsePreambleLine(line, line_no)) return;
      [[fallthrough]];
    case State::kBetween:
      if (line.empty() || TryOpenComputation(line, line_no)) return;
      CountUnknownLine(line, line_no, "module (between computations)");
      return;
    case State::kInComputation:
      ParseComputationLine(line, line_no);
      return;
  }
}

void HloModuleParser::ParseHeaderLine(std::string_view line) {
  module_.header_text = std::string(line);
  std::string_view rest = line.substr(kHeaderKeyword.size());
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  const size_t comma = rest.find(',');
  module_.name = std::string(TrimTrailingSpaces(rest.substr(0, comma)));
  if (comma != std::string_view::npos) ParseHeaderAttributes(rest.substr(comma + 1), 1);
}

void HloModuleParser::ParseHeaderAttributes(std::string_view attributes, int64_t line_no) {
  TopLevelItems items(attributes, ',');
  std::string_view item;
  while (items.Next(&item)) {
    std::string_view key;
    std::string_view value;
    if (!SplitKeyValue(item, &key, &value)) continue;
    if (key == "is_scheduled") {
      module_.is_scheduled = value == "true";
    } else if (key == "entry_computation_layout") {
      module_.entry_computation_layout = std::string(StripBraces(value));
    } else if (key == "replica_count" || key == "num_partitions") {
      std::optional<int64_t> n = ParseInt64(value);
      if (!n || *n < 0) {
        Report(IssueRecord::Severity::kInvariant, line_no,
               "header " + std::string(key) + "=" + std::string(value.substr(0, 40)) +
                   " is not a non-negative int64; ignored");
        continue;
      }
      (key == "replica_count" ? module_.replica_count : module_.num_partitions) = *n;
    }
  }
}

bool HloModuleParser::ParsePreambleLine(std::string_view line, int64_t line_no) {
  if (line.empty()) {
    table_ = StackFrameTable::kNone;
    return true;
  }
  if (line == "FileNames") {
    table_ = StackFrameTable::kFileNames;
    return true;
  }
  if (line == "FunctionNames") {
    table_ = StackFrameTable::kFunctionNames;
    return true;
  }
  if (line == "FileLocations") {
    table_ = StackFrameTable::kFileLocations;
    return true;
  }
  if (line == "StackFrames") {
    table_ = StackFrameTable::kStackFrames;
    return true;
  }
  if (table_ != StackFrameTable::kNone && IsDigit(line.front())) {
    // `N "escaped"` (FileNames, FunctionNames) or `N {key=value …}` (FileLocations, StackFrames).
    size_t i = 0;
    while (i < line.size() && IsDigit(line[i])) ++i;
    const bool quoted = table_ == StackFrameTable::kFileNames || table_ == StackFrameTable::kFunctionNames;
    const char open = quoted ? '"' : '{';
    const char close = quoted ? '"' : '}';
    std::string_view body = i + 1 < line.size() && line[i] == ' ' ? line.substr(i + 1) : std::string_view();
    if (body.size() < 2 || body.front() != open || body.back() != close) {
      CountUnknownLine(line, line_no, "stack-frame table");
    }
    return true;
  }
  if (line.front() == ',' || StartsWithAttributeKey(line)) {
    // A header attribute continued on its own line (`, key=…` or `debug_attributes={`).
    module_.header_text += '\n';
    module_.header_text += line;
    ParseHeaderAttributes(line.front() == ',' ? line.substr(1) : line, line_no);
    BracketTracker brackets;
    brackets.Feed(line);
    if (!brackets.balanced()) {
      state_ = State::kHeaderBlock;
      header_block_line_ = line_no;
    }
    return true;
  }
  return false;
}

bool HloModuleParser::TryOpenComputation(std::string_view line, int64_t line_no) {
  line = TrimTrailingSpaces(line);
  if (line.empty() || line.back() != '{' || line.front() == ' ' || line.front() == '}') return false;
  std::string_view rest = line;
  const bool is_entry = StartsWith(rest, kEntryPrefix);
  if (is_entry) rest.remove_prefix(kEntryPrefix.size());
  if (!rest.empty() && rest.front() == '%') rest.remove_prefix(1);
  size_t end = 0;
  while (end < rest.size() && IsNameChar(rest[end])) ++end;
  // The name is followed by ` {` (ShortParsable) or ` (<signature>) -> <shape> {` (long form).
  if (end == 0 || end + 1 >= rest.size() || rest[end] != ' ' || (rest[end + 1] != '{' && rest[end + 1] != '(')) {
    return false;
  }
  const std::string_view name = rest.substr(0, end);
  if (is_entry && rest[end + 1] == '(') module_.entry_signature = EntrySignatureWithoutNames(rest.substr(end + 1));

  if (state_ == State::kHeaderBlock) {
    Report(IssueRecord::Severity::kInvariant, line_no,
           "header attribute block opened at line " + std::to_string(header_block_line_) +
               " is not closed before computation " + std::string(name));
  }
  if (state_ == State::kInComputation) {
    FlushPendingAsUnknown();
    Report(IssueRecord::Severity::kInvariant, line_no,
           "computation " + computation_.name + " (line " + std::to_string(computation_line_) +
               ") has no closing brace before computation " + std::string(name));
    FinishComputation();
  }
  const int64_t ordinal = module_.computation_count;
  if (!computations_.emplace(std::string(name), ordinal).second) {
    Report(IssueRecord::Severity::kInvariant, line_no, "computation name " + std::string(name) + " repeated");
  }
  computation_ = ComputationRecord();
  computation_.name = std::string(name);
  computation_.is_entry = is_entry;
  computation_ordinal_ = ordinal;
  computation_line_ = line_no;
  root_count_ = 0;
  fingerprint_->Field(is_entry ? "ENTRY" : "COMPUTATION");
  state_ = State::kInComputation;
  return true;
}

void HloModuleParser::ParseComputationLine(std::string_view line, int64_t line_no) {
  if (!pending_.empty()) {
    const bool ends_join = line.empty() || line.front() != ' ' || LooksLikeInstruction(line);
    if (ends_join) {
      FlushPendingAsUnknown();
    } else {
      pending_ += '\n';
      pending_ += line;
      pending_brackets_.Feed(line);
      if (pending_brackets_.balanced()) {
        EmitInstruction(pending_, pending_line_);
        pending_.clear();
      } else if (pending_.size() > kMaxJoinedInstructionBytes) {
        FlushPendingAsUnknown();
      }
      return;
    }
  }
  if (line.empty()) return;
  if (line.front() == '}') {
    CloseComputation(line.substr(1), line_no);
    return;
  }
  if (line.front() == ' ') {
    BracketTracker brackets;
    brackets.Feed(line);
    if (brackets.balanced()) {
      EmitInstruction(line, line_no);
    } else if (LooksLikeInstruction(line)) {
      pending_ = std::string(line);
      pending_line_ = line_no;
      pending_brackets_ = brackets;
    } else {
      CountUnknownLine(line, line_no, "computation " + computation_.name);
    }
    return;
  }
  if (TryOpenComputation(line, line_no)) return;
  CountUnknownLine(line, line_no, "computation " + computation_.name);
}

void HloModuleParser::FlushPendingAsUnknown() {
  if (pending_.empty()) return;
  CountUnknownLine(pending_, pending_line_, "computation " + computation_.name + " (unbalanced brackets or quotes)");
  pending_.clear();
}

void HloModuleParser::EmitInstruction(std::string_view text, int64_t line_no) {
  std::optional<HloInstructionPieces> pieces = SplitHloInstructionText(text);
  if (!pieces || !pieces->operands_closed) {
    CountUnknownLine(text, line_no, "computation " + computation_.name);
    return;
  }
  const int64_t position = computation_.instruction_count;
  auto [it, inserted] =
      instructions_.emplace(std::string(pieces->name), std::make_pair(computation_ordinal_, position));
  if (!inserted) {
    Report(IssueRecord::Severity::kInvariant, line_no,
           "instruction name " + std::string(pieces->name) + " repeated in computation " + computation_.name +
               "; first seen in computation ordinal " + std::to_string(it->second.first));
    return;
  }
  InstructionRecord record = MakeInstructionRecord(*pieces);
  record.computation = computation_.name;
  record.sequence_index = position;
  FeedFingerprint(*pieces);
  if (computation_.is_entry) entry_sharding_.Add(*pieces);
  ++computation_.instruction_count;
  ++module_.instruction_count;
  if (record.is_root) ++root_count_;
  sink()->OnInstruction(std::move(record));
}

void HloModuleParser::FeedFingerprint(const HloInstructionPieces& pieces) {
  Fingerprint& fp = *fingerprint_;
  fp.Field(pieces.is_root ? "ROOT" : "-");
  scratch_.clear();
  AppendWithoutComments(pieces.shape, &scratch_);
  fp.Field(scratch_);
  fp.Field(pieces.opcode);

  // A reference to an instruction of this computation → its position; anything else (literals) verbatim.
  auto operand_reference = [this](std::string_view token, std::string* out) {
    const bool sigil = !token.empty() && token.front() == '%';
    if (sigil) token.remove_prefix(1);
    const size_t hash = token.find('#');  // compact GTE: producer#0#1
    const std::string_view name = token.substr(0, hash);
    const std::string_view suffix = hash == std::string_view::npos ? std::string_view() : token.substr(hash);
    auto it = instructions_.find(std::string(name));
    if (it != instructions_.end() && it->second.first == computation_ordinal_) {
      *out = "@" + std::to_string(it->second.second);
      out->append(suffix);
    } else if (sigil) {
      *out = "?";  // a name we cannot resolve: still no name in the hash
      out->append(suffix);
    } else {
      out->assign(token);
    }
  };

  TopLevelItems operands(pieces.operands, ',');
  std::string_view operand;
  while (operands.Next(&operand)) {
    scratch_.clear();
    AppendWithoutComments(operand, &scratch_);
    // Old eras print `<shape> %name`: keep the last space-separated token.
    std::string_view token;
    std::string_view part;
    TopLevelItems parts(scratch_, ' ');
    while (parts.Next(&part)) token = part;
    std::string normalised;
    operand_reference(token, &normalised);
    fp.Field(normalised);
  }
  fp.Field(")");

  TopLevelItems attributes(pieces.attributes, ',');
  std::string_view attribute;
  while (attributes.Next(&attribute)) {
    std::string_view key;
    std::string_view value;
    if (!SplitKeyValue(attribute, &key, &value)) {
      fp.Field(attribute);
      continue;
    }
    if (IsProvenance(key)) continue;
    const bool computations = IsComputationReference(key);
    if (!computations && !IsInstructionReference(key)) {
      fp.Field(attribute);
      continue;
    }
    fp.Field(key);
    TopLevelItems references(StripBraces(value), ',');
    std::string_view reference;
    while (references.Next(&reference)) {
      if (!reference.empty() && reference.front() == '%') reference.remove_prefix(1);
      std::string normalised = "?";
      if (computations) {
        auto it = computations_.find(std::string(reference));
        if (it != computations_.end()) normalised = "c" + std::to_string(it->second);
      } else {
        operand_reference(reference, &normalised);
      }
      fp.Field(normalised);
    }
  }
  fp.Field("\n");
}

void HloModuleParser::CloseComputation(std::string_view trailer, int64_t line_no) {
  FlushPendingAsUnknown();
  if (StartsWith(trailer, kTrailerPrefix)) {
    const std::string_view named = TrimTrailingSpaces(trailer.substr(kTrailerPrefix.size()));
    if (named != computation_.name) {
      Report(IssueRecord::Severity::kInvariant, line_no,
             "closing comment names " + std::string(named) + " but the open computation is " + computation_.name);
    }
  } else if (StartsWith(trailer, kThreadPrefix)) {
    computation_.execution_thread = UnquoteValue(TrimTrailingSpaces(trailer.substr(kThreadPrefix.size())));
  } else if (!TrimTrailingSpaces(trailer).empty()) {
    CountUnknownLine(trailer, line_no, "computation end of " + computation_.name);
  }
  FinishComputation();
}

void HloModuleParser::FinishComputation() {
  if (computation_.instruction_count > 0 && root_count_ != 1) {
    Report(IssueRecord::Severity::kInvariant, computation_line_,
           "computation " + computation_.name + " has " + std::to_string(root_count_) + " ROOT instructions in " +
               std::to_string(computation_.instruction_count) + ", expected exactly 1");
  }
  if (computation_.is_entry) ++entry_count_;
  fingerprint_->Field("END");
  fingerprint_->Field(std::to_string(computation_.instruction_count));
  ++module_.computation_count;
  sink()->OnComputation(std::move(computation_));
  computation_ = ComputationRecord();
  computation_ordinal_ = -1;
  state_ = State::kBetween;
}

Status HloModuleParser::Finish() {
  switch (state_) {
    case State::kStart:
      Report(IssueRecord::Severity::kError, 0, "empty input: no `HloModule` header line");
      return Status::DataLoss("not HLO module text: the input is empty");
    case State::kRejected:
      return Status::DataLoss("not HLO module text: the first line does not start with `HloModule`");
    case State::kHeaderBlock:
      Report(IssueRecord::Severity::kWarning, header_block_line_,
             "the file ends inside the header attribute block opened at line " + std::to_string(header_block_line_));
      break;
    case State::kInComputation:
      FlushPendingAsUnknown();
      Report(IssueRecord::Severity::kWarning, computation_line_,
             "the file ends inside computation " + computation_.name + " (opened at line " +
                 std::to_string(computation_line_) + "): truncated?");
      FinishComputation();
      break;
    case State::kPreamble:
    case State::kBetween:
      break;
  }
  if (module_.computation_count > 0 && entry_count_ != 1) {
    Report(IssueRecord::Severity::kInvariant, 0,
           "module " + module_.name + " has " + std::to_string(entry_count_) + " ENTRY computations, expected 1");
  }
  module_.program_fingerprint = fingerprint_->Digest();
  module_.entry_sharding = entry_sharding_.Text();
  sink()->OnHloModule(std::move(module_));
  return Status::Ok();
}

}  // namespace xladb::ingest
