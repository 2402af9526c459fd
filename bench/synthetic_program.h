// SyntheticProgram: a deterministic, procedurally generated "compiled XLA module" — instructions, schedule,
// HloValues, buffer allocations and live ranges — from which bench/dump_writer.h prints the dump files XLA
// would have written for it. This header holds what the program IS; how XLA prints it lives in dump_writer.
//
// Shape of the program (what a transformer-like jit function looks like after optimization):
//
//   parameters    global ones (input activations, embedding, final weights) then per-layer weight sets
//   constants     a few, used by every layer (masks, scalars)
//   L layers      the same template of ops in every layer (fusions, cuBLAS gemms or Pallas kernels, reduce
//                 fusions whose reducer regions give thread-local values, multi-output fusions read through
//                 get-tuple-element, TPU copy-start/copy-done prefetches into VMEM with SMEM sync flags);
//                 layer l reads layer l-1's output and weight set l % weight_sets (weights shared between
//                 repeats, like an unrolled microbatch loop)
//   epilogue      one fusion per output (loss, updated weights), then the ROOT tuple
//
// Because every layer repeats the template, every fact about an instruction or value (name, schedule time,
// value id, allocation offset, live range, users) is arithmetic on (layer, template index): nothing scales
// with the layer count except the parameter/allocation tables (bounded by the weight sets) and, when asked
// for, the peak sweep (8 bytes per schedule step). So a 1 GiB dump is produced in bounded memory.
//
// Semantics imitated (buffer assignment, xla/service/buffer_assignment.cc; live ranges,
// xla/hlo/utils/hlo_live_range.cc): entry parameters live [0, T]; live-out values end at T; a value ends at
// its last use (a tuple element's users are those of its get-tuple-element); thread-local values (reducer
// region instructions) have no live range; temp allocations hold one colour each and reuse memory: inside a
// layer by first-fit over live intervals, across layers as a ring of three layer frames.
// Two eras (ProgramSpec::backend): kTpu imitates libtpu dumps of 2025-05..07 (tiled layouts, S(1) VMEM and
// S(2) SMEM colours, tpu_custom_call kernels with base64 Mosaic bodies, V3 peak list), kGpu imitates CUDA dumps
// of 2025-02..03 (cuBLAS gemm custom-calls, Triton fusions, operand shapes in instruction text, V1 peak list).
//
// Contract: construction is pure (same spec, same program, on every platform: the RNG is splitmix64, no
// std distributions). All methods are const and thread-compatible. Errors: none; specs are clamped.
#ifndef XLADB_BENCH_SYNTHETIC_PROGRAM_H_
#define XLADB_BENCH_SYNTHETIC_PROGRAM_H_

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace xladb::bench {

enum class Backend { kTpu, kGpu };

enum class ElementType : uint8_t { kPred, kS8, kS32, kU32, kBf16, kF32 };

int64_t ElementBytes(ElementType type);
std::string_view ElementTypeName(ElementType type);  // "bf16", "f32", …

// One array: element type, dimensions, and memory space (the S(n) of its layout; 0 = HBM / default).
struct ArrayShape {
  ElementType type = ElementType::kF32;
  int rank = 0;
  std::array<int64_t, 4> dims{};
  int memory_space = 0;

  int64_t ElementCount() const;
  int64_t LogicalBytes() const;  // unpadded: ShapeUtil::ByteSizeOf
};

ArrayShape MakeArray(ElementType type, std::initializer_list<int64_t> dims, int memory_space = 0);

// An instruction's shape: one array, or a flat tuple of arrays.
struct Shape {
  bool is_tuple = false;
  std::vector<ArrayShape> elements;  // exactly one when !is_tuple

  const ArrayShape& array() const { return elements.front(); }
  // ByteSizeOf with 8-byte pointers: an array's bytes; for a tuple only its index table (8 per element).
  int64_t LogicalBytes() const;
};

Shape ArrayOf(ArrayShape a);
Shape TupleOf(std::vector<ArrayShape> elements);

// TPU tiling of an array (the `T(…)` part of its layout) and the padded size it implies.
struct TpuTiling {
  int64_t second_minor = 1;  // rows padded to a multiple of this (rank >= 2)
  int64_t minor = 1;         // the minor dimension padded to a multiple of this
  std::string_view text;     // "T(8,128)", "T(8,128)(2,1)", "T(128)", "" (untiled: SMEM)
};
TpuTiling TilingFor(const ArrayShape& a);

// n rounded up to a multiple of m (tiles, alignments).
int64_t RoundUp(int64_t n, int64_t m);

// Bytes the allocator reserves (the buffer-assignment `size=`): padded to the TPU tiling, else logical.
int64_t PhysicalBytes(const ArrayShape& a, Backend backend);
int64_t TupleTableBytes(int64_t elements, Backend backend);

enum class OpKind : uint8_t {
  kParameter, kConstant, kFusion, kCustomCall, kCopyStart, kCopyDone, kGetTupleElement, kTuple,
  kElementwise,  // a plain op (the combiner of a reducer region)
};

// Where an operand comes from. Template ops use the first four; epilogue ops the last three.
enum class OperandSource : uint8_t {
  kLocal,        // an earlier op of the same layer (template index)
  kLayerInput,   // the previous layer's output (global parameter 0 for layer 0)
  kLayerParam,   // weight q of the layer's weight set
  kConstant,     // module constant c
  kGlobalParam,  // global parameter g
  kFinalOutput,  // the last layer's output
  kEpilogueOp,   // epilogue op k (operands of the ROOT tuple)
  kRegionParam,  // parameter 0 or 1 of the reducer region (operands of its combiner)
};

struct OperandRef {
  OperandSource source = OperandSource::kLocal;
  int32_t index = 0;
};

// One op of the program as written once: the layer template, the epilogue, parameters and constants.
struct OpTemplate {
  OpKind kind = OpKind::kFusion;
  std::string stem;                // instruction name before ".<uid>"
  std::string opcode;              // "fusion", "custom-call", "copy-start", "get-tuple-element", …
  Shape shape;
  std::vector<OperandRef> operands;
  std::string fusion_kind;         // kLoop, kInput, kOutput, kCustom (fusions only)
  std::string fused_root_opcode;   // the elementwise op inside the fused computation
  std::string custom_call_target;  // custom-calls only
  int region = -1;                 // reduce fusions: the reducer region (thread-local values)
  int tuple_op = -1;               // get-tuple-element / copy-done: template index of the tuple producer
  int tuple_index = 0;             // get-tuple-element: the element read
  std::string constant_literal;    // constants: "0", "{...}"
  std::string op_type;             // metadata op_type (torch_xla), may be empty
  std::string op_name;             // metadata op_name leaf (below the layer scope), may be empty
  std::string source_file;         // metadata source_file, may be empty
  int source_line = 0;
  std::string backend_config;      // raw JSON printed after backend_config=, may be empty
  bool is_kernel = false;          // gets a block in the TPU bundle profile
  bool spills_grow = false;        // its VMEM spills scale with ProgramSpec::spill_pressure
};

struct ProgramSpec {
  std::string module_name = "jit_train_step";
  Backend backend = Backend::kTpu;
  uint64_t structure_seed = 1;  // the ops, names and metadata: same seed, same program text modulo sizes
  int64_t layers = 4;
  int64_t batch = 8;            // activation scale: drifts from run to run
  int64_t seq = 2048;
  int64_t hidden = 1024;
  double spill_pressure = 1.0;  // multiplies the VMEM spills of kernels marked spills_grow
  int pallas_percent = 50;      // TPU: chance that the layer's attention is a Pallas kernel (else a fusion)
  int64_t pallas_body_bytes = 0;  // TPU: size of the kernel's base64 body; 0: drawn from the seed
};

// Which instruction: a parameter, a constant, op j of layer l, an epilogue op, the ROOT, or an instruction of
// a reducer region (index 3r: Arg_0, 3r+1: Arg_1, 3r+2: the combiner).
enum class Segment : uint8_t { kRegion, kParameter, kConstant, kLayer, kEpilogue, kRoot };

struct InstructionRef {
  Segment segment = Segment::kLayer;
  int32_t index = 0;
  int64_t layer = 0;  // kLayer only
};

// Shape indices of values: a non-tuple instruction's value prints no braces, a tuple's table prints {}.
constexpr int kNoIndex = -2;
constexpr int kTupleTable = -1;

struct Value {
  int64_t id = 0;
  InstructionRef defining;
  int index = kNoIndex;                // kNoIndex, kTupleTable or the element
  const ArrayShape* array = nullptr;   // the value's array; null for a tuple table
  const Shape* defining_shape = nullptr;
  int color = 0;
  int64_t size = 0;                    // physical bytes
  int64_t allocation = 0;
  int64_t offset = 0;
  int64_t live_start = -1;             // -1: no BufferLiveRange (thread-local)
  int64_t live_end = -1;

  // Bytes HloLiveRange counts at the peak: V3 (2025-05+) the value's own subshape, V1 (until 2025-04) the
  // whole defining instruction shape (a tuple element counts as the tuple's index table).
  int64_t LogicalBytesV3() const;
  int64_t LogicalBytesV1() const;
};

struct Position {
  InstructionRef instruction;
  int index = kNoIndex;  // printed only when the instruction is tuple-shaped
};

struct Use {
  InstructionRef instruction;
  int operand = 0;
  int index = kNoIndex;  // printed only when the operand is tuple-shaped
};

enum class AllocationKind : uint8_t { kThreadLocal, kParameter, kConstant, kOutput, kRootTuple, kTemp };

struct Allocation {
  int64_t index = 0;
  AllocationKind kind = AllocationKind::kTemp;
  int64_t size = 0;
  int color = 0;
  int32_t member = 0;  // which region value / parameter / constant / output it holds (single-value kinds)
};

struct PeakMoment {
  int64_t time = 0;
  int64_t bytes = 0;
};

class SyntheticProgram {
 public:
  explicit SyntheticProgram(const ProgramSpec& spec);

  const ProgramSpec& spec() const { return spec_; }
  Backend backend() const { return spec_.backend; }

  int64_t schedule_length() const { return schedule_length_; }  // T
  int64_t layer_count() const { return spec_.layers; }
  int64_t parameter_count() const;
  int64_t value_count() const;
  const std::vector<Allocation>& allocations() const { return allocations_; }
  int64_t TotalAllocationBytes() const;

  // Instructions.
  const OpTemplate& Op(const InstructionRef& ref) const;
  std::string Name(const InstructionRef& ref) const;
  int64_t Slot(const InstructionRef& ref) const;  // schedule time; -1 for region instructions
  InstructionRef AtSlot(int64_t slot) const;
  // The instruction an operand of `user` refers to.
  InstructionRef Resolve(const InstructionRef& user, const OperandRef& operand) const;
  // The full metadata op_name of an instruction ("" when it has none).
  std::string OpName(const InstructionRef& ref) const;
  // Name of the fused computation a fusion calls, of the region a reduce fusion applies, of the entry.
  std::string FusedComputationName(const InstructionRef& fusion) const;
  std::string RegionName(int region) const;
  std::string EntryName() const;
  int region_count() const { return region_count_; }
  const std::vector<OpTemplate>& layer_template() const { return layer_ops_; }
  const std::vector<OpTemplate>& epilogue() const { return epilogue_ops_; }

  // Values, in id order / of one allocation in id order.
  void ForEachValue(const std::function<void(const Value&)>& fn) const;
  void ForEachValueInAllocation(const Allocation& allocation, const std::function<void(const Value&)>& fn) const;
  // Positions (defining one first) and uses (in schedule order) of a value.
  void AppendPositions(const Value& value, std::vector<Position>* out) const;
  void AppendUses(const Value& value, std::vector<Use>* out) const;

  // The peak of logical live bytes over schedule times 0..T (the first maximum), with V1 or V3 sizes.
  PeakMoment ComputePeak(bool v1_sizes) const;

 private:
  static constexpr int kGlobalParams = 3;  // input activations, embedding, final norm scale

  struct TemplateValue {   // a value one template op defines
    int op = 0;
    int index = kNoIndex;
    int64_t id_offset = 0;     // id minus the layer's first id
    int color = 0;
    int64_t size = 0;
    int64_t frame_offset = 0;  // offset within the layer's frame of its colour's temp allocation
    int end_rel = 0;           // last template slot using it (>= op); see ends_next_layer
    bool ends_next_layer = false;
  };
  struct Consumer {            // template op `op` reads template op `of` as operand `operand`
    int op = 0;
    int operand = 0;
  };

  void BuildTemplates();
  void BuildLayerValues();
  void PackTempFrames();
  void BuildAllocations();
  const ArrayShape& ParameterArray(int64_t param) const;
  Value MakeLayerValue(int64_t layer, const TemplateValue& tv) const;
  Value MakeSingleValue(Segment segment, int32_t index) const;
  int64_t LayerSlotBase(int64_t layer) const;
  int64_t LayerInputEnd(int64_t layer) const;  // last slot reading layer `layer`'s input
  void AppendLayerOutputUses(int64_t layer, std::vector<Use>* out) const;
  void AppendArrayUses(int64_t layer, int op, std::vector<Use>* out) const;

  ProgramSpec spec_;
  std::vector<OpTemplate> global_params_;   // G global parameters
  std::vector<OpTemplate> layer_params_;    // Q weights per weight set
  std::vector<OpTemplate> constants_;
  std::vector<OpTemplate> layer_ops_;
  std::vector<OpTemplate> epilogue_ops_;
  OpTemplate root_;
  std::vector<OpTemplate> region_ops_;      // 3 per region
  std::vector<std::vector<Consumer>> consumers_;  // per template op: who reads it inside the layer
  std::vector<Consumer> layer_input_readers_;
  std::vector<std::vector<Consumer>> layer_param_readers_;
  std::vector<std::vector<Consumer>> constant_readers_;
  std::vector<TemplateValue> layer_values_;
  int64_t layer_id_stride_ = 0;
  int region_count_ = 0;
  int64_t weight_sets_ = 1;
  int64_t schedule_length_ = 0;
  int64_t first_param_id_ = 0, first_constant_id_ = 0, first_layer_id_ = 0, first_epilogue_id_ = 0;
  std::array<int64_t, 3> frame_bytes_{};     // per colour: one layer frame of the temp allocation
  std::array<int64_t, 3> temp_allocation_{};  // per colour: allocation index, -1 if none
  int64_t ring_frames_ = 1;
  std::vector<Allocation> allocations_;
  int64_t first_param_allocation_ = 0, first_constant_allocation_ = 0, first_output_allocation_ = 0;
  int64_t root_allocation_ = 0;
};

}  // namespace xladb::bench

#endif  // XLADB_BENCH_SYNTHETIC_PROGRAM_H_
