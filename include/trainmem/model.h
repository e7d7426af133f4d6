// The model: what it is made of, as the estimator sees it. load_model() turns what the user names
// (a preset, a config.json, a safetensors folder, a Hugging Face cache entry, or the same files'
// contents) into a LoadedModel: its architecture (ModelSpec), its exact tensor list
// (ParameterInventory) and where both came from. Element types (Dtype) and their sizes are here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trainmem/errors.h"

namespace trainmem {

// Storage and compute element types, and the one table of their sizes.

enum class Dtype {
  f64,
  f32,
  bf16,
  f16,
  f8_e4m3,
  f8_e5m2,
  i64,
  i32,
  i16,
  i8,
  u8,
  boolean,
  nf4,
  fp4
};

std::string_view dtype_name(Dtype dtype);

// Parses our names ("bf16"), torch names ("bfloat16", "float32") and safetensors names ("BF16").
std::optional<Dtype> parse_dtype(std::string_view text);

// Bytes of `count` elements stored densely in `dtype` (rounded up to whole bytes). Block
// quantisation constants are not included: see quantisation.h.
std::int64_t dense_bytes(Dtype dtype, std::int64_t count);

// ModelSpec: an architecture as plain data. Adapters (src/adapters/, one per Hugging Face family)
// are the only code that knows config.json keys; they fill this struct, and inventory() turns it
// into the exact list of parameter tensors. Counts are integers; sizes are in elements.

// How a layer normalises (each saves different tensors for backward, activation_model.cpp):
//  rms_norm       LlamaRMSNorm: weight * x_norm.to(input dtype); weight only
//  rms_norm_fp32  Gemma/OLMo-2 RMSNorm: the weight multiplies the fp32 normalized tensor
//  layer_norm     nn.LayerNorm (native_layer_norm): weight and bias
//  mean_centered  CohereLayerNorm: LayerNorm in Python ops, fp32, weight only
enum class NormKind { rms_norm, rms_norm_fp32, layer_norm, mean_centered };

// Where a layer's norms sit. pre: before attention and before the MLP (Llama); sandwich: before
// and after each (Gemma 2/3, four norms); post: after each sublayer's output only (OLMo-2).
enum class NormPlacement { pre, sandwich, post };

// Norms on q and k. per_head: over head_dim with one shared weight (Qwen3, Gemma 3, Phi
// qk_layernorm); per_head_weights: over head_dim with a weight per head (Cohere use_qk_norm,
// CohereLayerNorm((heads, head_dim))); full_width: over heads x head_dim (OLMo-2 q_norm/k_norm).
enum class QkNorm { none, per_head, per_head_weights, full_width };

// The feed-forward block: gated (gate, up, down; SwiGLU/GeGLU) or plain (fc in, fc out; GPT-2).
enum class MlpKind { gated, plain };

// The MLP activation as transformers' ACT2FN names it (activations.py); each saves a different
// number of intermediate tensors for backward (activation_saved_tensors in activation_model.h).
// clamped_swiglu: gpt-oss's expert gate, (clamp(up) + 1) * g * sigmoid(alpha g) with g =
// clamp(gate) (transformers models/gpt_oss/modeling_gpt_oss.py GptOssExperts._apply_gate).
enum class Activation {
  silu,
  gelu,
  gelu_tanh,
  gelu_new,
  gelu_fast,
  quick_gelu,
  relu,
  clamped_swiglu
};

// Mixture of experts. experts == 0 means a dense model.
struct MoeSpec {
  std::int64_t experts = 0;              // routed experts per MoE layer
  std::int64_t top_k = 0;                // experts each token is routed to
  std::int64_t expert_intermediate = 0;  // width of one expert's MLP (moe_intermediate_size)
  std::int64_t shared_experts = 0;       // always-on experts (DeepSeek n_shared_experts)
  std::int64_t shared_intermediate = 0;  // width of one shared expert's MLP
  std::int64_t first_dense_layers = 0;   // leading layers with a dense MLP (first_k_dense_replace)
  std::int64_t layer_step = 1;           // every layer_step-th layer is MoE (decoder_sparse_step)
  bool router_score_bias = false;        // DeepSeek-V3 e_score_correction_bias, one per expert
  bool shared_expert_gate = false;       // Qwen2-MoE style sigmoid gate on the shared expert
  bool router_bias = false;              // the router linear has a bias (gpt-oss)
  // The router takes the top-k of its logits, then a softmax over those k in the logits' dtype
  // (gpt-oss GptOssTopKRouter), instead of an fp32 softmax over every expert first.
  bool softmax_after_topk = false;
};

// Multi-head latent attention (DeepSeek-V2/V3). q_lora_rank == 0 means q is projected directly.
struct MlaSpec {
  std::int64_t q_lora_rank = 0;
  std::int64_t kv_lora_rank = 0;
  std::int64_t qk_nope_head_dim = 0;
  std::int64_t qk_rope_head_dim = 0;
  std::int64_t v_head_dim = 0;
};

// config.json quantization_config: quant_method as written ("bitsandbytes", "fp8", "gptq",
// "awq", ...) and, for bitsandbytes, what its weights load as.
struct CheckpointQuant {
  std::string method;
  std::string storage;        // bitsandbytes: "nf4", "fp4" (load_in_4bit) or "int8" (load_in_8bit)
  bool double_quant = false;  // bnb_4bit_use_double_quant
};

struct ModelSpec {
  std::string name;        // display name, e.g. "Qwen/Qwen3-8B"
  std::string model_type;  // the config's model_type, e.g. "qwen3"

  std::int64_t vocab = 0;          // vocab_size
  std::int64_t hidden = 0;         // hidden_size (d_model)
  std::int64_t layers = 0;         // num_hidden_layers
  std::int64_t heads = 0;          // num_attention_heads
  std::int64_t kv_heads = 0;       // num_key_value_heads (== heads for multi-head attention)
  std::int64_t head_dim = 0;       // explicit head_dim, else hidden / heads
  std::int64_t intermediate = 0;   // dense MLP width (intermediate_size)
  std::int64_t max_positions = 0;  // max_position_embeddings (n_positions for GPT-2)

  bool tied_embeddings = false;    // lm_head shares the embedding matrix
  bool learned_positions = false;  // a position-embedding table (GPT-2)
  bool qkv_bias = false;           // q/k/v projections carry biases (Qwen2)
  bool o_bias = false;             // output projection bias (GPT-2)
  bool mlp_bias = false;           // MLP biases (GPT-2)
  QkNorm qk_norm = QkNorm::none;   // norms on q and k (Qwen3, Gemma 3: per head; OLMo-2: full)
  bool fused_qkv = false;          // one qkv_proj and one gate_up_proj module (Phi-3)
  bool fused_mlp = true;           // with fused_qkv: one gate_up_proj too (Phi-3; not GPT-NeoX)
  bool lm_head_bias = false;       // lm_head carries a bias (Phi)
  NormKind norm = NormKind::rms_norm;
  NormPlacement norm_placement = NormPlacement::pre;
  // Attention and MLP both read the layer input and add to one residual (GPT-NeoX
  // use_parallel_residual, Falcon parallel_attn, Phi, Cohere); parallel_norms says whether the
  // two branches share one norm (Phi, Cohere, Falcon-7B) or have one each (GPT-NeoX, Falcon-40B).
  bool parallel_block = false;
  std::int64_t parallel_norms = 1;
  MlpKind mlp = MlpKind::gated;
  Activation activation = Activation::silu;
  std::int64_t rotary_dim = 0;      // rotated width per head (partial rotary); 0 = the whole head
  std::int64_t sliding_window = 0;  // sliding-window attention width (0: none)
  // Which layers use the window (layer_types "sliding_attention"); empty: every layer does.
  std::vector<bool> sliding_layers;

  MoeSpec moe;
  bool mla = false;
  MlaSpec mla_spec;
  std::int64_t mtp_layers = 0;  // DeepSeek-V3 next-token-prediction layers, reported separately

  double attention_dropout = 0.0;      // attention_dropout / attn_pdrop
  double hidden_dropout = 0.0;         // hidden_dropout / resid_pdrop: on each sublayer's output
  std::int64_t residual_dropouts = 2;  // dropout sites on the residual per layer (Falcon: 1)
  double embedding_dropout = 0.0;      // embd_pdrop / embedding_dropout / emb_dropout
  double logit_softcap = 0.0;          // final_logit_softcapping (Gemma 2): an extra logits copy
  double attn_softcap = 0.0;           // attn_logit_softcapping (Gemma 2, eager): tanh saves
  bool sdpa_supported = true;          // false: transformers runs eager (Gemma 2)
  bool eager_softmax_fp32 = true;      // eager softmax in fp32 (HF default); Falcon: hidden dtype
  // SDPA receives K/V with fewer heads and no enable_gqa (Falcon multi_query), so no fused kernel
  // accepts it and PyTorch runs the math kernel (sdp_utils check_batch_size_and_num_heads_dense).
  bool sdpa_math_only = false;
  // K/V are materialised at every query head before attention (Falcon new_decoder_architecture:
  // broadcast_to then flatten copies), so attention keeps all-head K and V.
  bool kv_all_heads = false;
  // v reaches attention as a view of the fused q/k/v projection output while q and k are new
  // tensors after rotary, so the saved v keeps the whole output (Phi-3, GPT-NeoX).
  bool fused_qkv_view = false;
  // q reaches attention as a tensor contiguous in (batch, heads, seq, head_dim) order, not as a
  // transposed view of the projection: rotary rebuilds it with torch.cat of the rotated and the
  // passed-through part (Phi, Phi-3, GPT-NeoX apply_rotary_pos_emb, even at a full rotary width).
  // A fused kernel lays its output out like q (flash_api.cpp mha_fwd: empty_like(q); the CPU
  // flash kernel alike), so the transpose back before o_proj copies it: the o_proj input is a
  // tensor of its own.
  bool q_heads_major = false;
  // The model hands SDPA its materialised causal mask even without padding (Falcon), so each
  // layer's SDPA converts it to a float bias and keeps it (convert_boolean_attn_mask).
  bool sdpa_mask_always = false;
  // A learned sink logit per head is appended to every row of scores before the softmax and
  // dropped after it (gpt-oss eager_attention_forward): one more column per row.
  bool attention_sinks = false;

  // Non-empty for a model_type trainmem has no adapter for: weights are exact (config keys or
  // safetensors headers); activations follow this known layer shape, an estimate.
  std::string estimated_from;
  // A family without an adapter whose config.json names its attention class (InternLM2's remote
  // code reads `attn_implementation` from its config, "eager" in its published configs): the
  // value, for a note when the plan prices another kernel. Empty: not given.
  std::string config_attention;

  Dtype storage_dtype = Dtype::bf16;  // torch_dtype of the checkpoint
  // The checkpoint's own quantisation (config.json quantization_config), which from_pretrained
  // applies whatever the training code asks (transformers modeling_utils.py: a config's
  // quantization_config is used when none is passed). Empty: none.
  std::optional<CheckpointQuant> checkpoint_quant;

  std::int64_t published_params = 0;  // the count the model card states (0: unknown)
  std::string published_label;        // as written there, e.g. "8.2B"

  // "key = value" for each config.json key that was absent and took the family's default (the
  // value of transformers' config class); reported as a note for configs the user supplies.
  std::vector<std::string> defaulted_keys;
  // Parts of a multimodal checkpoint outside the language model ("vision_config"): named in the
  // config but not priced (their weights, and the optimizer state when they train, are extra).
  std::vector<std::string> unpriced_parts;
};

// ParameterInventory: the exact list of parameter tensor groups of a model. A group is one tensor
// shape repeated `multiplicity` times (e.g. q_proj in every layer, or one expert's up projection in
// every expert of every MoE layer). Generated from a ModelSpec, or read from safetensors headers.

enum class Role {
  embedding,
  position_embedding,
  q,
  k,
  v,
  o,
  qkv,  // attention projections (qkv: fused, Phi-3)
  q_a,
  q_b,
  kv_a,
  kv_b,  // MLA low-rank projections
  q_norm,
  k_norm,
  latent_norm,      // per-head q/k norms; MLA's q_a/kv_a layernorms
  attention_sinks,  // one learned logit per head joining each softmax (gpt-oss self_attn.sinks)
  gate,
  up,
  gate_up,
  down,  // MLP projections (gate_up: fused, Phi-3); plain MLP uses up/down
  router,
  router_bias,         // MoE gate and DeepSeek's score-correction bias
  shared_expert_gate,  // Qwen2-MoE's sigmoid gate on the shared expert
  layer_norm,
  final_norm,  // norms inside a layer, and the one after the last layer
  lm_head,
};

// Which MLP a tensor belongs to: the dense MLP, a routed expert, or a shared expert.
enum class ExpertKind { none, routed, shared };

// A LoRA/DoRA tensor appended by apply_method, and which one: an adapter is a property of the
// tensor, not of its name.
enum class AdapterPart { none, lora_a, lora_b, magnitude };

struct TensorGroup {
  std::string name;  // e.g. "model.layers.*.self_attn.q_proj.weight"
  Role role = Role::embedding;
  ExpertKind expert = ExpertKind::none;
  bool is_bias = false;             // a bias vector rather than a weight
  std::vector<std::int64_t> shape;  // one tensor's shape; linear weights are [out, in]
  std::int64_t multiplicity = 1;    // how many tensors of this shape (layers x experts)
  std::int64_t layer_first = -1;    // first layer index covered, -1 when not in a layer
  std::int64_t layer_last = -1;     // last layer index covered (inclusive)
  bool mtp = false;                 // part of DeepSeek's next-token-prediction module
  Dtype dtype = Dtype::bf16;        // storage dtype
  bool trainable = true;            // receives gradients under the plan (set by apply_method)
  bool quantised = false;           // stored block-quantised (QLoRA base), set by apply_method
  AdapterPart adapter = AdapterPart::none;  // set by apply_method on the tensors it appends
  // A trainable copy of a frozen module (PEFT modules_to_save), set by apply_method: it is not
  // the tensor a tied lm_head shares.
  bool module_copy = false;
};

struct ParameterInventory {
  std::vector<TensorGroup> groups;
};

// Elements in all tensors of the group.
std::int64_t group_params(const TensorGroup& group);
// True for the weight of a linear layer (a LoRA candidate): 2-D and a projection role.
bool is_linear_weight(const TensorGroup& group);

// The exact tensor list that Hugging Face transformers instantiates for `spec`.
// MTP layers (DeepSeek-V3) are included with mtp = true.
ParameterInventory inventory(const ModelSpec& spec);

// Counts. `params_total` excludes MTP tensors (transformers does not load them).
std::int64_t params_total(const ParameterInventory& inv);
std::int64_t params_trainable(const ParameterInventory& inv);
std::int64_t params_mtp(const ParameterInventory& inv);
// Parameters touched per token: routed experts scaled by top_k / experts.
std::int64_t params_active(const ParameterInventory& inv, const ModelSpec& spec);
// Parameters outside the token and position embeddings (how model cards state "non-embedding").
std::int64_t params_non_embedding(const ParameterInventory& inv);

// A model as the estimator sees it: its architecture, its exact tensor list, and where both came
// from. Loading one from files is io's job (load.h); everything after works on this value.

// config_text: a config given as text (a transformers PretrainedConfig from Python); module: the
// named parameters of a live model (trainmem.from_model in Python).
enum class SourceKind { preset, config_file, safetensors, hf_cache, config_text, module };
std::string_view source_kind_name(SourceKind kind);  // "preset", "config.json", ...

struct LoadedModel {
  ModelSpec spec;
  ParameterInventory inventory;
  SourceKind source = SourceKind::preset;
  std::string source_detail;       // preset id or path
  std::vector<std::string> notes;  // what loading noticed (skipped or unknown tensors)
};

// A model built from a spec (presets and config files): inventory(spec) computed here.
LoadedModel model_from_spec(ModelSpec spec, SourceKind source, std::string detail);

// Loading a model from what the user names: a preset, a config.json, a safetensors folder, or a
// Hugging Face id present in the local cache. The only part of the engine that reads files.
struct LoadOptions {
  // Search the Hugging Face cache (HF_HUB_CACHE, HF_HOME/hub, ~/.cache/huggingface/hub) for
  // "org/name" before falling back to a preset.
  bool use_hf_cache = true;
};

// Resolves `ref` in this order: an existing path (config.json, or a folder holding config.json
// and/or *.safetensors), an "org/name" in the HF cache, a preset by short name or HF id.
Result<LoadedModel> load_model(std::string_view ref, const LoadOptions& options = {});

// A ModelSpec from the text of a config.json; `file` names it in errors.
Result<ModelSpec> spec_from_config_text(std::string_view json_text, const std::string& file);

// A model from the text of a config.json given directly (not read from a file); `name` names it.
Result<LoadedModel> model_from_config_text(std::string_view config_json, const std::string& name);

// A tensor as a framework names it: a parameter of a live torch module, or a safetensors entry.
struct NamedTensor {
  std::string name;                 // "model.layers.0.self_attn.q_proj.weight"
  std::string dtype;                // safetensors spelling: "BF16", "F32", "U8", ...
  std::vector<std::int64_t> shape;  // as stored
};
// A model from a config.json's text and its exact tensor list (as from safetensors headers), so
// the inventory is what the module really holds.
Result<LoadedModel> model_from_tensors(std::string_view config_json,
                                       const std::vector<NamedTensor>& tensors,
                                       const std::string& name);

// Presets embedded in the binary.
struct PresetInfo {
  std::string id;         // short name, e.g. "qwen3-8b"
  std::string hf_id;      // e.g. "Qwen/Qwen3-8B"
  std::string published;  // e.g. "8.2B"
  std::int64_t published_params = 0;
};
std::vector<PresetInfo> list_presets();
// A preset with its exact counts, as `trainmem models` lists it.
struct ModelListing {
  PresetInfo preset;
  std::string model_type;
  std::int64_t params_total = 0;
  std::int64_t params_active = 0;  // per token, for MoE models
  std::int64_t params_mtp = 0;     // multi-token-prediction modules, reported apart
};
std::vector<ModelListing> list_models();
Result<LoadedModel> load_preset(std::string_view name);

// A model given as file contents instead of paths: what the web page reads from a dropped folder
// with File.slice (config.json, the shard index, and each safetensors file's 8-byte length and
// JSON header, never the tensor data). The same parsing and mapping as load_model() on a folder.

// The start of one safetensors file: `prefix` holds the 8-byte little-endian header length and
// the header JSON after it (more bytes are ignored); `size_bytes` is the whole file's size.
struct HeaderPrefix {
  std::string name;  // file name inside the folder, e.g. "model-00001-of-00004.safetensors"
  std::int64_t size_bytes = 0;
  std::string prefix;
};

struct ModelFiles {
  std::string folder;                     // the folder's name, for the model name and errors
  std::string config_text;                // config.json
  std::optional<std::string> index_text;  // model.safetensors.index.json, when present
  std::vector<HeaderPrefix> safetensors;  // every *.safetensors file in the folder
};

// Picks the files as load_model() does for a folder (the index's shards, else model*.safetensors,
// else every *.safetensors), parses their headers and maps the tensors. With no safetensors
// files, the model comes from config.json alone.
Result<LoadedModel> load_model_files(const ModelFiles& files);

}  // namespace trainmem
