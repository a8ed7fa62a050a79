"""Independent float64 PyTorch reference of the MiniMax-M2 and MiniMax-M3 (text) forward pass,
written from spec/model.md (sections 2 and 5), not from the C++ engine. It reads a checkpoint
directory in any of the five weight layouts (layouts.py) and returns logits for a token list.

Deliberate choices, all from the spec:
- every computation in float64 except the RoPE angle, which HF and vLLM form in float32
  (inv_freq = 1 / theta^(arange(0, r, 2) / r) in f32, angle = f32(pos * inv_freq));
- M2: plain RMSNorm weights, QK norm over the whole flattened q (and k) projection;
  M3: Gemma (1 + w) norms everywhere, QK norm per head with one shared [head_dim] weight;
- partial NeoX RoPE on dims [0, rotary_dim), rotate-half pairs (j, j + r/2);
- MSA on M3 sparse layers: one index-query head per KV group, one shared index key, block score =
  max over the block's visible keys, all blocks when nblk <= top-k, else forced local (and init)
  blocks plus the best others, ties to the lower block id;
- router: sigmoid of fp32-stored logits, bias for the choice only (ties to the lower expert id),
  unbiased scores renormalised, times routed_scaling_factor; M3 adds the shared expert unscaled;
- SiLU experts for M2; SwiGLU-OAI for M3: min(g, 7) * sigmoid(1.702 min(g, 7)) * (clamp(u, +-7) + 1).
"""

import json
import os

import numpy as np
import torch

from layouts import as_torch, decode_linear, plain_to_f64
from safetensors_io import read_checkpoint

F64 = torch.float64


class Config:
    def __init__(self, directory):
        with open(os.path.join(directory, "config.json")) as f:
            top = json.load(f)
        arch = top["architectures"][0]
        if arch == "MiniMaxM2ForCausalLM":
            self.arch, text = "m2", top
            self.prefix, self.lm_head = "model.", "lm_head.weight"
        elif arch == "MiniMaxM3SparseForConditionalGeneration":
            self.arch, text = "m3", top["text_config"]
            self.prefix, self.lm_head = "language_model.model.", "language_model.lm_head.weight"
        else:
            raise ValueError(f"{directory}: architecture {arch} is not M2 or M3")
        self.hidden = text["hidden_size"]
        self.layers = text["num_hidden_layers"]
        self.heads = text["num_attention_heads"]
        self.kv_heads = text["num_key_value_heads"]
        self.head_dim = text["head_dim"]
        self.rotary_dim = text["rotary_dim"]
        self.theta = float(text["rope_theta"])
        self.eps = float(text["rms_norm_eps"])
        self.experts = text["num_local_experts"]
        self.top_k = text["num_experts_per_tok"]
        self.routed_scale = float(text.get("routed_scaling_factor", 1.0))
        self.gemma = self.arch == "m3"
        if self.arch == "m3":
            self.moe_layer = text["moe_layer_freq"]
            self.shared = text.get("n_shared_experts", 0) > 0
            sparse = text["sparse_attention_config"]
            self.sparse_layer = sparse["sparse_attention_freq"] if sparse["use_sparse_attention"] \
                else [0] * self.layers
            self.index_heads = sparse["sparse_num_index_heads"]
            self.index_dim = sparse["sparse_index_dim"]
            self.block = sparse["sparse_block_size"]
            self.topk_blocks = sparse["sparse_topk_blocks"]
            self.init_blocks = sparse.get("sparse_init_block", 0)
            self.local_blocks = sparse.get("sparse_local_block", 1)
            self.alpha = float(text.get("swiglu_alpha", 1.702))
            self.limit = float(text.get("swiglu_limit", 7.0))
            self.beta = float(text.get("swiglu_beta", 1.0))
        else:
            self.moe_layer = [1] * self.layers
            self.shared = False
            self.sparse_layer = [0] * self.layers
        q = top.get("quantization_config") or {}
        self.block_size = tuple(q.get("weight_block_size", (128, 128)))


class Weights:
    """Float64 torch tensors of every weight the forward pass reads, decoded from the stored
    layout by looking at the tensors themselves (not at the quantization config's ignore list)."""

    def __init__(self, directory, config):
        self.tensors = read_checkpoint(directory)
        self.config = config

    def linear(self, name):
        return as_torch(decode_linear(self.tensors, name, self.config.block_size))

    def vector(self, name):
        return as_torch(plain_to_f64(self.tensors[name]))


def rms_norm(x, weight, eps, gemma):
    normed = x * torch.rsqrt((x * x).mean(dim=-1, keepdim=True) + eps)
    return normed * ((1.0 + weight) if gemma else weight)


def rope(x, positions, rotary_dim, theta):
    """x: [T, heads, d]. NeoX partial rotary on [0, rotary_dim) with the f32 angle."""
    exponent = torch.arange(0, rotary_dim, 2, dtype=torch.float32) / rotary_dim
    inv_freq = 1.0 / (torch.tensor(theta, dtype=torch.float32) ** exponent)
    angle = positions.to(torch.float32)[:, None] * inv_freq[None, :]  # f32 product
    emb = torch.cat([angle, angle], dim=-1).to(F64)
    cos, sin = emb.cos()[:, None, :], emb.sin()[:, None, :]
    rot, rest = x[..., :rotary_dim], x[..., rotary_dim:]
    half = rotary_dim // 2
    rotated = torch.cat([-rot[..., half:], rot[..., :half]], dim=-1)
    return torch.cat([rot * cos + rotated * sin, rest], dim=-1)


def msa_chosen_blocks(scores, t, config):
    """scores [t + 1]: one index head's scores of query t (at position t) against keys 0..t.
    Returns (chosen, margin): the blocks query t attends, ascending, and by how much the weakest
    chosen block's score beats the best one left out (inf when every block is chosen)."""
    B = config.block
    nblk = t // B + 1
    if nblk <= config.topk_blocks:
        return list(range(nblk)), float("inf")
    forced = {b for b in range(nblk) if b < config.init_blocks or b >= nblk - config.local_blocks}
    best = []
    for b in range(nblk):
        if b in forced:
            continue
        keys = scores[b * B: min((b + 1) * B, t + 1)]
        best.append((-float(keys.max()), b))
    best.sort()  # score descending, then lower block id
    wanted = config.topk_blocks - len(forced)
    chosen = forced | {b for _, b in best[:wanted]}
    margin = best[wanted][0] - best[wanted - 1][0] if len(best) > wanted else float("inf")
    return sorted(chosen), margin


def msa_block_mask(index_q, index_k, config):
    """index_q [T, G, d], index_k [T, d] (positions 0..T-1). Returns allowed[G, T, T]: key j is
    visible to query t of KV group g (causal, and in one of the blocks chosen for (t, g))."""
    T, G, _ = index_q.shape
    B = config.block
    allowed = torch.zeros(G, T, T, dtype=torch.bool)
    scores = torch.einsum("tgd,sd->gts", index_q, index_k)
    for t in range(T):
        for g in range(G):
            chosen, _ = msa_chosen_blocks(scores[g, t, : t + 1], t, config)
            for b in chosen:
                allowed[g, t, b * B: min((b + 1) * B, t + 1)] = True
    return allowed


def attention(q, k, v, config, group_mask=None):
    """q [T, H, d], k/v [T, KV, d]; causal softmax attention, query head h uses KV head
    h // (H / KV). group_mask [KV, T, T] further restricts the visible keys per KV group."""
    T, H, d = q.shape
    group = H // k.shape[1]
    kk = k.repeat_interleave(group, dim=1)
    vv = v.repeat_interleave(group, dim=1)
    scores = torch.einsum("thd,shd->hts", q, kk) / (d ** 0.5)
    visible = torch.tril(torch.ones(T, T, dtype=torch.bool))[None].expand(H, T, T)
    if group_mask is not None:
        visible = visible & group_mask.repeat_interleave(group, dim=0)
    scores = scores.masked_fill(~visible, float("-inf"))
    probs = torch.softmax(scores, dim=-1)
    return torch.einsum("hts,shd->thd", probs, vv)


def activation(gate, up, config):
    if config.arch == "m2":
        return torch.nn.functional.silu(gate) * up
    g = gate.clamp(max=config.limit)
    u = up.clamp(min=-config.limit, max=config.limit)
    return g * torch.sigmoid(config.alpha * g) * (u + config.beta)


def mlp(x, gate, up, down, config):
    return activation(x @ gate.T, x @ up.T, config) @ down.T


class Reference:
    def __init__(self, directory):
        self.config = Config(directory)
        self.w = Weights(directory, self.config)

    def layer_name(self, layer, rest):
        return f"{self.config.prefix}layers.{layer}.{rest}"

    def projections(self, layer, x, positions):
        """q [T, H, d], k and v [T, KV, d] of rows x at `positions`, after QK norm and RoPE."""
        c, w, n = self.config, self.w, lambda rest: self.layer_name(layer, rest)
        T = x.shape[0]
        q = x @ w.linear(n("self_attn.q_proj.weight")).T
        k = x @ w.linear(n("self_attn.k_proj.weight")).T
        v = x @ w.linear(n("self_attn.v_proj.weight")).T
        qn, kn = w.vector(n("self_attn.q_norm.weight")), w.vector(n("self_attn.k_norm.weight"))
        if c.arch == "m2":  # one norm over the whole flattened projection, then split heads
            q = rms_norm(q, qn, c.eps, False).view(T, c.heads, c.head_dim)
            k = rms_norm(k, kn, c.eps, False).view(T, c.kv_heads, c.head_dim)
        else:  # per head, shared [head_dim] weight
            q = rms_norm(q.view(T, c.heads, c.head_dim), qn, c.eps, True)
            k = rms_norm(k.view(T, c.kv_heads, c.head_dim), kn, c.eps, True)
        v = v.view(T, c.kv_heads, c.head_dim)
        return rope(q, positions, c.rotary_dim, c.theta), rope(k, positions, c.rotary_dim,
                                                                c.theta), v

    def index_projections(self, layer, x, positions):
        """MSA index queries [T, G, index_dim] and the shared index key [T, index_dim]."""
        c, w, n = self.config, self.w, lambda rest: self.layer_name(layer, rest)
        T = x.shape[0]
        iq = (x @ w.linear(n("self_attn.index_q_proj.weight")).T).view(T, c.index_heads,
                                                                       c.index_dim)
        ik = (x @ w.linear(n("self_attn.index_k_proj.weight")).T).view(T, 1, c.index_dim)
        iq = rms_norm(iq, w.vector(n("self_attn.index_q_norm.weight")), c.eps, True)
        ik = rms_norm(ik, w.vector(n("self_attn.index_k_norm.weight")), c.eps, True)
        iq = rope(iq, positions, c.rotary_dim, c.theta)
        ik = rope(ik, positions, c.rotary_dim, c.theta)
        return iq, ik[:, 0, :]

    def attention_sublayer(self, layer, x, positions, dense):
        c, w, n = self.config, self.w, lambda rest: self.layer_name(layer, rest)
        T = x.shape[0]
        q, k, v = self.projections(layer, x, positions)
        mask = None
        if c.sparse_layer[layer] and not dense:
            iq, ik = self.index_projections(layer, x, positions)
            mask = msa_block_mask(iq, ik, c)
        o = attention(q, k, v, c, mask).reshape(T, c.heads * c.head_dim)
        return o @ w.linear(n("self_attn.o_proj.weight")).T

    def ffn_sublayer(self, layer, x):
        c, w, n = self.config, self.w, lambda rest: self.layer_name(layer, rest)
        if not c.moe_layer[layer]:
            return mlp(x, w.linear(n("mlp.gate_proj.weight")), w.linear(n("mlp.up_proj.weight")),
                       w.linear(n("mlp.down_proj.weight")), c)
        m = "block_sparse_moe."
        scores = torch.sigmoid(x @ w.linear(n(m + "gate.weight")).T)  # [T, E]
        choice = scores + w.vector(n(m + "e_score_correction_bias"))[None, :]
        out = torch.zeros_like(x)
        expert_out = {}
        for t in range(x.shape[0]):
            ranked = sorted(range(c.experts), key=lambda e: (-float(choice[t, e]), e))[: c.top_k]
            weights = scores[t, ranked] / scores[t, ranked].sum() * c.routed_scale
            for e, weight in zip(ranked, weights):
                if e not in expert_out:
                    p = n(f"{m}experts.{e}.")
                    expert_out[e] = mlp(x, w.linear(p + "w1.weight"), w.linear(p + "w3.weight"),
                                        w.linear(p + "w2.weight"), c)
                out[t] += weight * expert_out[e][t]
        if c.shared:
            p = n(m + "shared_experts.")
            out = out + mlp(x, w.linear(p + "gate_proj.weight"), w.linear(p + "up_proj.weight"),
                            w.linear(p + "down_proj.weight"), c)
        return out

    def logits(self, tokens, dense_attention=False):
        """Logits [T, vocab] (float64) of tokens at positions 0..T-1."""
        c, w = self.config, self.w
        positions = torch.arange(len(tokens))
        h = w.vector(c.prefix + "embed_tokens.weight")[torch.tensor(tokens)]
        for layer in range(c.layers):
            norm = lambda name: w.vector(self.layer_name(layer, name))
            x = rms_norm(h, norm("input_layernorm.weight"), c.eps, c.gemma)
            h = h + self.attention_sublayer(layer, x, positions, dense_attention)
            x = rms_norm(h, norm("post_attention_layernorm.weight"), c.eps, c.gemma)
            h = h + self.ffn_sublayer(layer, x)
        h = rms_norm(h, w.vector(c.prefix + "norm.weight"), c.eps, c.gemma)
        return h @ w.linear(c.lm_head).T


    def logits_at(self, tokens, queries, dense_attention=False):
        """Logits [len(queries), vocab] (float64) of the positions `queries` of `tokens` (at
        positions 0..T-1), each query computed alone in O(T) instead of the O(T^2) of logits().
        One-layer models only: there every key, value and index key is a function of its own
        token, so nothing but the queried rows needs a full forward. Also returns, per query,
        the MSA choice of each index head as (blocks, margin) (msa_chosen_blocks; [] when the
        layer attends densely)."""
        c, w = self.config, self.w
        assert c.layers == 1, "logits_at: one-layer models only"
        n = lambda rest: self.layer_name(0, rest)
        positions = torch.arange(len(tokens))
        h = w.vector(c.prefix + "embed_tokens.weight")[torch.tensor(tokens)]
        x = rms_norm(h, w.vector(n("input_layernorm.weight")), c.eps, c.gemma)
        _, k, v = self.projections(0, x, positions)
        rows = torch.tensor(queries)
        q, _, _ = self.projections(0, x[rows], positions[rows])
        sparse = c.sparse_layer[0] and not dense_attention
        if sparse:
            iq, _ = self.index_projections(0, x[rows], positions[rows])
            _, ik = self.index_projections(0, x, positions)
        group = c.heads // c.kv_heads
        out = torch.zeros(len(queries), c.heads, c.head_dim, dtype=F64)
        choices = []
        for i, t in enumerate(queries):
            visible = [torch.ones(t + 1, dtype=torch.bool)] * c.kv_heads
            choice = []
            if sparse:
                for g in range(c.index_heads):  # index head g chooses for KV group g
                    blocks, margin = msa_chosen_blocks(ik[: t + 1] @ iq[i, g], t, c)
                    choice.append((blocks, margin))
                    visible[g] = torch.zeros(t + 1, dtype=torch.bool)
                    for b in blocks:
                        visible[g][b * c.block: min((b + 1) * c.block, t + 1)] = True
            choices.append(choice)
            for head in range(c.heads):
                g = head // group
                keys, values = k[: t + 1, g][visible[g]], v[: t + 1, g][visible[g]]
                probs = torch.softmax(keys @ q[i, head] / (c.head_dim ** 0.5), dim=0)
                out[i, head] = probs @ values
        o = out.reshape(len(queries), c.heads * c.head_dim) @ w.linear(
            n("self_attn.o_proj.weight")).T
        hq = h[rows] + o
        xq = rms_norm(hq, w.vector(n("post_attention_layernorm.weight")), c.eps, c.gemma)
        hq = hq + self.ffn_sublayer(0, xq)
        hq = rms_norm(hq, w.vector(c.prefix + "norm.weight"), c.eps, c.gemma)
        return hq @ w.linear(c.lm_head).T, choices


def logits(directory, tokens, dense_attention=False):
    return Reference(directory).logits(tokens, dense_attention).numpy()
