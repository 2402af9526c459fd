#include "bench/layer_templates.h"

#include <cstdint>
#include <cstdio>
#include <utility>

#include "bench/deterministic_rng.h"

namespace xladb::bench {

// An op's kind, name stem, opcode and shape; the rest as OpTemplate's defaults.
OpTemplate MakeOp(OpKind kind, std::string stem, std::string opcode, Shape shape) {
  OpTemplate op;
  op.kind = kind;
  op.stem = std::move(stem);
  op.opcode = std::move(opcode);
  op.shape = std::move(shape);
  return op;
}

// An entry parameter labelled `label`: on GPU, PyTorch/XLA's device data, with the dynamo bridge's source line.
OpTemplate EntryParameter(const ArrayShape& shape, std::string label, Backend backend) {
  OpTemplate p = MakeOp(OpKind::kParameter, "Arg", "parameter", ArrayOf(shape));
  p.op_name = std::move(label);
  if (backend == Backend::kGpu) {
    p.op_type = "xla__device_data";
    p.op_name = "xla__device_data";
    p.source_file = "/usr/local/lib/python3.10/site-packages/torch_xla/_dynamo/dynamo_bridge.py";
    p.source_line = 355;
  }
  return p;
}

namespace {

// A base64 alphabet body of `bytes` characters: the Mosaic bytecode blob of a tpu_custom_call (§7.2: 10 KB
// and more per line in real dumps), deterministic in the seed.
std::string Base64Blob(uint64_t seed, int64_t bytes) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  DeterministicRng rng(seed);
  std::string out;
  out.reserve(static_cast<size_t>(bytes) + 1);
  uint64_t bits = 0;
  int left = 0;
  for (int64_t i = 0; i < bytes; ++i) {
    if (left < 6) {
      bits = rng.Next();
      left = 64;
    }
    out.push_back(kAlphabet[bits & 63]);
    bits >>= 6;
    left -= 6;
  }
  out.push_back('=');
  return out;
}

std::string PallasBackendConfig(uint64_t seed, int64_t body_bytes) {
  return "{\"custom_call_config\": {\"body\": \"" + Base64Blob(seed, body_bytes) +
         "\", \"serialization_format\": 1, \"needs_layout_passes\": true}}";
}

std::string GemmBackendConfig(int64_t lhs_stride, int64_t rhs_stride) {
  return "{\"operation_queue_id\":\"0\",\"wait_on_operation_queues\":[],\"gemm_backend_config\":{\"alpha_real\":1,"
         "\"alpha_imag\":0,\"beta\":0,\"dot_dimension_numbers\":{\"lhs_contracting_dimensions\":[\"1\"],"
         "\"rhs_contracting_dimensions\":[\"1\"],\"lhs_batch_dimensions\":[],\"rhs_batch_dimensions\":[]},"
         "\"precision_config\":{\"operand_precision\":[\"DEFAULT\",\"DEFAULT\"],\"algorithm\":\"ALG_UNSET\"},"
         "\"epilogue\":\"DEFAULT\",\"damax_output\":false,\"lhs_stride\":\"" +
         std::to_string(lhs_stride) + "\",\"rhs_stride\":\"" + std::to_string(rhs_stride) +
         "\",\"grad_x\":false,\"grad_y\":false},\"force_earliest_schedule\":false}";
}

std::string TritonBackendConfig(int64_t tile, int warps) {
  return "{\"operation_queue_id\":\"0\",\"wait_on_operation_queues\":[],\"fusion_backend_config\":{\"kind\":"
         "\"__triton\",\"block_level_fusion_config\":{\"output_tiles\":[{\"sizes\":[\"1\",\"" +
         std::to_string(tile) + "\"]}],\"num_warps\":\"" + std::to_string(warps) +
         "\"}},\"force_earliest_schedule\":false}";
}

std::string TritonGemmBackendConfig(int block_m, int block_n, int block_k) {
  return "{\"operation_queue_id\":\"0\",\"wait_on_operation_queues\":[],\"fusion_backend_config\":{\"kind\":"
         "\"__triton_gemm\",\"triton_gemm_config\":{\"block_m\":\"" + std::to_string(block_m) +
         "\",\"block_n\":\"" + std::to_string(block_n) + "\",\"block_k\":\"" + std::to_string(block_k) +
         "\",\"split_k\":\"1\",\"num_stages\":\"1\",\"num_warps\":\"4\",\"num_ctas\":\"1\"}},"
         "\"force_earliest_schedule\":false}";
}

OperandRef Local(int op) { return {OperandSource::kLocal, op}; }
OperandRef LayerInput() { return {OperandSource::kLayerInput, 0}; }
OperandRef Weight(int q) { return {OperandSource::kLayerParam, q}; }
OperandRef Constant(int c) { return {OperandSource::kConstant, c}; }

// Appends the ops of one layer template, the layer's weights, the constants and the reducer regions.
class LayerTemplateBuilder {
 public:
  LayerTemplateBuilder(Backend backend, uint64_t seed, std::string source_file)
      : backend_(backend), seed_(seed), source_file_(std::move(source_file)) {}

  std::vector<OpTemplate> ops;
  std::vector<OpTemplate> weights;
  std::vector<OpTemplate> constants;
  std::vector<OpTemplate> regions;  // 3 per region

  int Add(OpTemplate op) {
    if (op.source_file.empty() && backend_ == Backend::kTpu && !op.op_name.empty()) {
      op.source_file = source_file_;
      op.source_line = 40 + static_cast<int>(ops.size()) * 7 + static_cast<int>(seed_ % 13);
    }
    ops.push_back(std::move(op));
    return static_cast<int>(ops.size()) - 1;
  }

  int Fusion(std::string stem, std::string kind, Shape shape, std::vector<OperandRef> operands,
             std::string root_opcode, std::string op_name, std::string op_type = "") {
    OpTemplate op = Kernel(OpKind::kFusion, std::move(stem), "fusion", std::move(shape), std::move(operands),
                           std::move(op_name), std::move(op_type));
    op.fusion_kind = std::move(kind);
    op.fused_root_opcode = std::move(root_opcode);
    op.is_kernel = op.fusion_kind != "kLoop" || op.shape.is_tuple;
    return Add(std::move(op));
  }

  int CustomCall(std::string stem, std::string target, Shape shape, std::vector<OperandRef> operands,
                 std::string backend_config, std::string op_name, std::string op_type = "") {
    OpTemplate op = Kernel(OpKind::kCustomCall, std::move(stem), "custom-call", std::move(shape),
                           std::move(operands), std::move(op_name), std::move(op_type));
    op.custom_call_target = std::move(target);
    op.backend_config = std::move(backend_config);
    return Add(std::move(op));
  }

  // What a fusion and a custom call share; a kernel unless the caller says otherwise.
  static OpTemplate Kernel(OpKind kind, std::string stem, std::string opcode, Shape shape,
                           std::vector<OperandRef> operands, std::string op_name, std::string op_type) {
    OpTemplate op = MakeOp(kind, std::move(stem), std::move(opcode), std::move(shape));
    op.operands = std::move(operands);
    op.op_name = std::move(op_name);
    op.op_type = std::move(op_type);
    op.is_kernel = true;
    return op;
  }

  int GetTupleElement(int tuple_op, int element) {
    OpTemplate op = MakeOp(OpKind::kGetTupleElement, "get-tuple-element", "get-tuple-element",
                       ArrayOf(ops[tuple_op].shape.elements[element]));
    op.operands = {Local(tuple_op)};
    op.tuple_op = tuple_op;
    op.tuple_index = element;
    op.op_name = ops[tuple_op].op_name;
    op.op_type = ops[tuple_op].op_type;
    return Add(std::move(op));
  }

  // A TPU prefetch of weight q into VMEM: copy-start (VMEM copy, HBM alias, SMEM sync flag), then copy-done.
  int Prefetch(int q) {
    ArrayShape hbm = weights[q].shape.array();
    ArrayShape vmem = hbm;
    vmem.memory_space = 1;
    OpTemplate start =
        MakeOp(OpKind::kCopyStart, "copy-start", "copy-start", TupleOf({vmem, hbm, MakeArray(ElementType::kU32, {}, 2)}));
    start.operands = {Weight(q)};
    int s = Add(std::move(start));
    OpTemplate done = MakeOp(OpKind::kCopyDone, "copy-done", "copy-done", ArrayOf(vmem));
    done.operands = {Local(s)};
    done.tuple_op = s;
    return Add(std::move(done));
  }

  int NewWeight(ArrayShape shape, std::string label) {
    weights.push_back(EntryParameter(shape, std::move(label), backend_));
    return static_cast<int>(weights.size()) - 1;
  }

  int NewConstant(ArrayShape shape, std::string literal) {
    OpTemplate c = MakeOp(OpKind::kConstant, "constant", "constant", ArrayOf(shape));
    c.constant_literal = std::move(literal);
    constants.push_back(std::move(c));
    return static_cast<int>(constants.size()) - 1;
  }

  // A reducer region (f32 add or max): two parameters and the combiner, all thread-local values.
  int NewRegion(bool max, std::string op_name) {
    ArrayShape scalar = MakeArray(ElementType::kF32, {});
    for (int i = 0; i < 2; ++i) {
      OpTemplate p = MakeOp(OpKind::kParameter, i == 0 ? "Arg_0" : "Arg_1", "parameter", ArrayOf(scalar));
      p.constant_literal = std::to_string(i);
      p.op_name = op_name;
      regions.push_back(std::move(p));
    }
    OpTemplate combiner = MakeOp(OpKind::kElementwise, max ? "maximum" : "add", max ? "maximum" : "add", ArrayOf(scalar));
    combiner.operands = {{OperandSource::kRegionParam, 0}, {OperandSource::kRegionParam, 1}};
    combiner.op_name = op_name;
    regions.push_back(std::move(combiner));
    return static_cast<int>(regions.size()) / 3 - 1;
  }

 private:
  Backend backend_;
  uint64_t seed_;
  std::string source_file_;
};

// The TPU layer: optional VMEM weight prefetch, a reduce into VMEM, a Pallas attention kernel (or a
// convolution fusion), residual adds and one or two MLP blocks built on multi-output fusions.
void BuildTpuLayer(const ProgramSpec& spec, DeterministicRng& rng, LayerTemplateBuilder& b) {
  const int64_t B = spec.batch, S = spec.seq, H = spec.hidden, F = 4 * spec.hidden;
  const ArrayShape act = MakeArray(ElementType::kBf16, {B, S, H});
  const ArrayShape ffn = MakeArray(ElementType::kBf16, {B, S, F});
  const ArrayShape stats = MakeArray(ElementType::kF32, {B, S}, 1);
  const int w_attn = b.NewWeight(MakeArray(ElementType::kBf16, {H, H}), "attention/kernel");
  const int w_scale = b.NewWeight(MakeArray(ElementType::kF32, {H}), "norm/scale");
  const int w_in = b.NewWeight(MakeArray(ElementType::kBf16, {H, F}), "mlp/wi/kernel");
  const int w_out = b.NewWeight(MakeArray(ElementType::kBf16, {F, H}), "mlp/wo/kernel");
  const int eps = b.NewConstant(MakeArray(ElementType::kF32, {}), "1e-06");

  OperandRef attn_weight = Weight(w_attn);
  if (rng.Percent(60)) attn_weight = Local(b.Prefetch(w_attn));
  const int region = b.NewRegion(false, "reduce_sum");
  int norm = b.Fusion("fusion", "kInput", ArrayOf(stats), {LayerInput(), Constant(eps)}, "reduce",
                      "rms_norm/reduce_sum");
  b.ops[norm].region = region;
  int scaled = b.Fusion("fusion", "kLoop", ArrayOf(act), {LayerInput(), Local(norm), Weight(w_scale)},
                        "multiply", "rms_norm/mul");
  int attn_out;
  const bool pallas = rng.Percent(spec.pallas_percent);
  if (pallas) {
    char hex[9];
    std::snprintf(hex, sizeof hex, "%08x", static_cast<unsigned>(rng.Next()));
    // Mosaic bodies of 0.5-2 KB are common; one program in twenty carries an 8-11 KB one like seed 000's.
    int64_t body = rng.Percent(5) ? rng.Between(8000, 11000) : rng.Between(500, 2000);
    if (spec.pallas_body_bytes > 0) body = spec.pallas_body_bytes;
    ArrayShape stat = MakeArray(ElementType::kF32, {std::max<int64_t>(8, S / 4), 128});
    const int mask = b.NewConstant(MakeArray(ElementType::kS8, {2, 8, 128}), "{...}");
    int kernel = b.CustomCall(std::string("splash_mha_fwd_") + hex, "tpu_custom_call",
                              TupleOf({stat, stat, stat, act}),
                              {Constant(mask), Local(scaled), attn_weight, LayerInput()},
                              PallasBackendConfig(rng.Next(), body), "splash_attention/pallas_call");
    attn_out = b.GetTupleElement(kernel, 3);
  } else {
    attn_out = b.Fusion("fusion", "kOutput", ArrayOf(act), {Local(scaled), attn_weight}, "convolution",
                        "attention/dot_general");
  }
  int cur = b.Fusion("fusion", "kLoop", ArrayOf(act), {Local(attn_out), LayerInput()}, "add", "attention/add");
  const int mlp_blocks = static_cast<int>(rng.Between(1, 2));
  for (int m = 0; m < mlp_blocks; ++m) {
    int up = b.Fusion("fusion", "kOutput", TupleOf({ffn, stats}), {Local(cur), Weight(w_in)}, "convolution",
                      "mlp/wi/dot_general");
    int h = b.GetTupleElement(up, 0);
    int s = b.GetTupleElement(up, 1);
    int gelu = b.Fusion("fusion", "kLoop", ArrayOf(ffn), {Local(h), Local(s)}, "multiply", "mlp/gelu");
    for (int64_t e = rng.Between(0, 2); e > 0; --e) {
      gelu = b.Fusion("fusion", "kLoop", ArrayOf(ffn), {Local(gelu)}, "convert", "mlp/convert_element_type");
    }
    int down = b.Fusion("fusion", "kOutput", ArrayOf(act), {Local(gelu), Weight(w_out)}, "convolution",
                        "mlp/wo/dot_general");
    cur = b.Fusion("fusion", "kLoop", ArrayOf(act), {Local(down), Local(cur)}, "add", "mlp/add");
  }
  // One kernel per program whose VMEM spills grow with the run's spill pressure.
  for (auto& op : b.ops) {
    if (op.is_kernel && (op.kind == OpKind::kCustomCall || op.fusion_kind == "kOutput")) {
      op.spills_grow = true;
      break;
    }
  }
}

// The GPU (torch_xla on CUDA) layer: a reduce fusion, cuBLAS gemms read through get-tuple-element, Triton
// softmax and gemm fusions, loop fusions, optionally a multi-output loop fusion.
void BuildGpuLayer(const ProgramSpec& spec, DeterministicRng& rng, LayerTemplateBuilder& b) {
  const int64_t N = spec.batch * spec.seq, H = spec.hidden, F = 4 * spec.hidden;
  const ArrayShape act = MakeArray(ElementType::kBf16, {N, H});
  const ArrayShape ffn = MakeArray(ElementType::kBf16, {N, F});
  const ArrayShape row = MakeArray(ElementType::kF32, {N});
  const ArrayShape workspace = MakeArray(ElementType::kS8, {4194304});
  const int w_attn = b.NewWeight(MakeArray(ElementType::kBf16, {H, H}), "");
  const int w_scale = b.NewWeight(MakeArray(ElementType::kBf16, {H}), "");
  const int w_in = b.NewWeight(MakeArray(ElementType::kBf16, {F, H}), "");
  const int w_out = b.NewWeight(MakeArray(ElementType::kBf16, {H, F}), "");
  const int scale = b.NewConstant(MakeArray(ElementType::kF32, {}), "0.125");

  const int region = b.NewRegion(rng.Percent(50), "aten__sum");
  int norm = b.Fusion("input_reduce_fusion", "kInput", ArrayOf(row), {LayerInput()}, "reduce", "aten__sum",
                      "aten__sum");
  b.ops[norm].region = region;
  int scaled = b.Fusion("loop_multiply_fusion", "kLoop", ArrayOf(act),
                        {Constant(scale), LayerInput(), Local(norm), Weight(w_scale)}, "multiply", "aten__mul",
                        "aten__mul");
  int qkv = b.CustomCall("custom-call", "__cublas$gemm", TupleOf({act, workspace}),
                         {Local(scaled), Weight(w_attn)}, GemmBackendConfig(N * H, H * H), "aten__mm",
                         "aten__mm");
  int qkv_out = b.GetTupleElement(qkv, 0);
  int soft = b.Fusion("triton_softmax", "kCustom", ArrayOf(act), {Constant(scale), Local(qkv_out)}, "exponential",
                      "aten__softmax", "aten__softmax");
  b.ops[soft].backend_config = TritonBackendConfig(H, static_cast<int>(rng.Between(1, 4)) * 2);
  int cur = b.Fusion("loop_add_fusion", "kLoop", ArrayOf(act), {Local(soft), LayerInput()}, "add", "aten__add",
                     "aten__add");
  const int mlp_blocks = static_cast<int>(rng.Between(1, 2));
  for (int m = 0; m < mlp_blocks; ++m) {
    int up = b.CustomCall("custom-call", "__cublas$gemm", TupleOf({ffn, workspace}), {Local(cur), Weight(w_in)},
                          GemmBackendConfig(H, F * H), "aten__mm", "aten__mm");
    int up_out = b.GetTupleElement(up, 0);
    int activated;
    if (rng.Percent(50)) {
      int mo = b.Fusion("loop_reduce_fusion", "kLoop", TupleOf({ffn, row}), {Local(up_out)}, "multiply",
                        "aten__gelu", "aten__gelu");
      activated = b.GetTupleElement(mo, 0);
      b.GetTupleElement(mo, 1);
    } else {
      activated = b.Fusion("loop_convert_fusion", "kLoop", ArrayOf(ffn), {Local(up_out)}, "convert", "xla__cast",
                           "xla__cast");
    }
    int down = b.Fusion("gemm_fusion_dot", "kCustom", ArrayOf(act), {Local(activated), Weight(w_out)}, "dot",
                        "aten__mm", "aten__mm");
    b.ops[down].backend_config = TritonGemmBackendConfig(16 << rng.Uniform(3), 64, 128);
    cur = b.Fusion("loop_add_fusion", "kLoop", ArrayOf(act), {Local(down), Local(cur)}, "add", "aten__add",
                   "aten__add");
  }
  for (auto& op : b.ops) {
    if (op.source_file.empty() && !op.op_name.empty()) {
      op.source_file = "/usr/local/lib/python3.10/site-packages/torch/_ops.py";
      op.source_line = 756;
    }
  }
}

}  // namespace

LayerTemplates BuildLayerTemplates(const ProgramSpec& spec, const std::string& source_file) {
  DeterministicRng rng(HashMix(spec.structure_seed, spec.backend == Backend::kTpu ? 1 : 2));
  LayerTemplateBuilder b(spec.backend, spec.structure_seed, source_file);
  if (spec.backend == Backend::kTpu) {
    BuildTpuLayer(spec, rng, b);
  } else {
    BuildGpuLayer(spec, rng, b);
  }
  return {std::move(b.ops), std::move(b.weights), std::move(b.constants), std::move(b.regions)};
}

}  // namespace xladb::bench
