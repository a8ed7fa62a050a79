"""Trainable float32 PyTorch MiniMax-M3 text model, batched, with the same math as
tools/reference/minimax_reference.py (Gemma norms, per-head QK norm, partial NeoX RoPE with the f32
angle, MSA block selection per KV group, sigmoid top-k routing with correction bias, shared expert,
SwiGLU-OAI), plus the index-projection loss and the HF-layout BF16 export."""

import json
import math
import os
import struct

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def text_config(vocab_size, hidden=128, layers=4, heads=4):
    """The bundled model's shape (hidden 128, 4 layers, 4 heads); the other sizes keep its ratios
    (head dim 32, 2 KV heads = 2 index heads, expert width = hidden, dense FFN = 3 x hidden)."""
    return {
        "architectures": ["MiniMaxM3SparseForCausalLM"],
        "attention_output_gate": False,
        "dense_intermediate_size": 3 * hidden,
        "head_dim": 32,
        "hidden_act": "swigluoai",
        "hidden_size": hidden,
        "intermediate_size": hidden,
        "max_position_embeddings": 4096,
        "moe_layer_freq": [0] + [1] * (layers - 1),
        "n_shared_experts": 1,
        "num_attention_heads": heads,
        "num_experts_per_tok": 2,
        "num_hidden_layers": layers,
        "num_key_value_heads": 2,
        "num_local_experts": 8,
        "num_mtp_modules": 0,
        "num_nextn_predict_layers": 0,
        "partial_rotary_factor": 0.5,
        "qk_norm_type": "per_head",
        "rms_norm_eps": 1e-06,
        "rope_theta": 10000,
        "rotary_dim": 16,
        "routed_scaling_factor": 2.0,
        "scoring_func": "sigmoid",
        "shared_intermediate_size": hidden,
        "sparse_attention_config": {
            "sparse_attention_freq": [0] + [1] * (layers - 1),
            "sparse_block_size": 16,
            "sparse_disable_index_value": [0] + [1] * (layers - 1),
            "sparse_index_dim": 32,
            "sparse_init_block": 0,
            "sparse_local_block": 1,
            "sparse_num_index_heads": 2,
            "sparse_score_type": "max",
            "sparse_topk_blocks": 4,
            "use_sparse_attention": True,
        },
        "swiglu_alpha": 1.702,
        "swiglu_beta": 1.0,
        "swiglu_limit": 7.0,
        "tie_word_embeddings": False,
        "use_gemma_norm": True,
        "use_qk_norm": True,
        "use_routing_bias": True,
        "vocab_size": vocab_size,
    }


def gemma_norm(x, weight, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * (1.0 + weight)


def rope_tables(T, rotary_dim, theta, device=None):
    # Built on the CPU in float32 (the engine's angle), then moved: the same values on any device.
    exponent = torch.arange(0, rotary_dim, 2, dtype=torch.float32) / rotary_dim
    inv_freq = 1.0 / (torch.tensor(float(theta), dtype=torch.float32) ** exponent)
    angle = torch.arange(T, dtype=torch.float32)[:, None] * inv_freq[None, :]
    emb = torch.cat([angle, angle], dim=-1)
    return emb.cos().to(device), emb.sin().to(device)  # [T, r]


def rope(x, cos, sin):
    """x [B, T, heads, d]; NeoX rotate-half on the first r dims."""
    r = cos.shape[-1]
    rot, rest = x[..., :r], x[..., r:]
    half = r // 2
    rotated = torch.cat([-rot[..., half:], rot[..., :half]], dim=-1)
    c, s = cos[None, :, None, :], sin[None, :, None, :]
    return torch.cat([rot * c + rotated * s, rest], dim=-1)


def swiglu_oai(gate, up, alpha=1.702, limit=7.0, beta=1.0):
    g = gate.clamp(max=limit)
    u = up.clamp(min=-limit, max=limit)
    return g * torch.sigmoid(alpha * g) * (u + beta)


def linear(out_features, in_features):
    layer = nn.Linear(in_features, out_features, bias=False)
    nn.init.normal_(layer.weight, std=in_features ** -0.5)
    return layer


class Mlp(nn.Module):
    def __init__(self, hidden, inter):
        super().__init__()
        self.gate, self.up, self.down = linear(inter, hidden), linear(inter, hidden), \
            linear(hidden, inter)
        nn.init.normal_(self.down.weight, std=0.5 * inter ** -0.5)

    def forward(self, x):
        return self.down(swiglu_oai(self.gate(x), self.up(x)))


class Moe(nn.Module):
    def __init__(self, c):
        super().__init__()
        h, e = c["hidden_size"], c["num_local_experts"]
        self.top_k, self.scale = c["num_experts_per_tok"], c["routed_scaling_factor"]
        self.router = nn.Parameter(torch.randn(e, h) * h ** -0.5)
        self.register_buffer("bias", torch.zeros(e))
        self.experts = nn.ModuleList(Mlp(h, c["intermediate_size"]) for _ in range(e))
        self.shared = Mlp(h, c["shared_intermediate_size"])
        self.last_load = None

    def forward(self, x):
        shape = x.shape
        x2 = x.reshape(-1, shape[-1])
        scores = torch.sigmoid(x2 @ self.router.T)
        chosen = torch.topk(scores.detach() + self.bias, self.top_k, dim=-1).indices  # [N, k]
        picked = scores.gather(1, chosen)
        weights = picked / picked.sum(-1, keepdim=True) * self.scale
        out = torch.zeros_like(x2)
        load = torch.zeros(len(self.experts), device=x.device)
        for e, expert in enumerate(self.experts):
            rows, slot = torch.nonzero(chosen == e, as_tuple=True)
            load[e] = rows.numel()
            if rows.numel() == 0:
                continue
            out.index_add_(0, rows, expert(x2[rows]) * weights[rows, slot][:, None])
        self.last_load = load
        return (out + self.shared(x2)).reshape(shape)

    @torch.no_grad()
    def update_bias(self, rate, valid_rows=None):
        # Aux-loss-free balancing (DeepSeek-V3): raise the bias of under-used experts.
        load = self.last_load
        self.bias += rate * torch.sign(load.mean() - load)


class Attention(nn.Module):
    def __init__(self, c, sparse):
        super().__init__()
        h = c["hidden_size"]
        self.H, self.KV, self.d = c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"]
        self.eps = c["rms_norm_eps"]
        self.q, self.k = linear(self.H * self.d, h), linear(self.KV * self.d, h)
        self.v, self.o = linear(self.KV * self.d, h), linear(h, self.H * self.d)
        nn.init.normal_(self.o.weight, std=0.5 * (self.H * self.d) ** -0.5)
        self.q_norm, self.k_norm = nn.Parameter(torch.zeros(self.d)), nn.Parameter(torch.zeros(self.d))
        self.sparse = sparse
        if sparse:
            s = c["sparse_attention_config"]
            self.G, self.di = s["sparse_num_index_heads"], s["sparse_index_dim"]
            self.block, self.topk = s["sparse_block_size"], s["sparse_topk_blocks"]
            assert s["sparse_init_block"] == 0 and s["sparse_local_block"] == 1
            assert self.G == self.KV
            self.iq, self.ik = linear(self.G * self.di, h), linear(self.di, h)
            self.iq_norm = nn.Parameter(torch.zeros(self.di))
            self.ik_norm = nn.Parameter(torch.zeros(self.di))

    def index_q_k(self, x, cos, sin):
        B, T, _ = x.shape
        x = x.detach()  # the index learns only from its own loss
        iq = gemma_norm(self.iq(x).view(B, T, self.G, self.di), self.iq_norm, self.eps)
        ik = gemma_norm(self.ik(x).view(B, T, 1, self.di), self.ik_norm, self.eps)
        return rope(iq, cos, sin), rope(ik, cos, sin)[:, :, 0]

    def block_scores(self, iq, ik, visible):
        """Index block scores [B, G, S, nb]: max over each block's visible keys (-inf if none).
        iq [B, S, G, di] (queries at positions P..P+S-1), ik [B, L, di] (keys 0..L-1)."""
        s = iq.transpose(1, 2) @ ik.transpose(1, 2)[:, None]  # [B, G, S, L]
        s = s.masked_fill(~visible, float("-inf"))
        L = ik.shape[1]
        nb = (L + self.block - 1) // self.block
        pad = nb * self.block - L
        if pad:
            s = F.pad(s, (0, pad), value=float("-inf"))
        B, G, S = s.shape[:3]
        return s.view(B, G, S, nb, self.block).amax(-1)

    def select(self, scores, own):
        """Allowed blocks [B, G, S, nb] as the engine chooses them: all when the query sees at most
        topk blocks, else its local block plus the topk-1 best others. own: [S] local blocks."""
        nb = scores.shape[-1]
        S = own.shape[0]
        forced = torch.zeros(S, nb, dtype=torch.bool, device=scores.device)
        forced[torch.arange(S, device=scores.device), own] = True
        ranked = scores.masked_fill(forced, float("inf"))
        top = torch.topk(ranked, min(self.topk, nb), dim=-1).indices
        return torch.zeros_like(scores, dtype=torch.bool).scatter_(-1, top, True)

    def forward(self, x, cos, sin, use_sparse, past=None):
        """x [B, S, h] at positions P..P+S-1 where P = len(past) (0 without a past); past = the
        (k, v, index k) of positions 0..P-1, batch 1, treated as constants. Returns (output,
        index loss or None, this call's (k, v, index k))."""
        B, S, _ = x.shape
        P = 0 if past is None else past[0].shape[1]
        L = P + S
        cq, sq = cos[P:L], sin[P:L]
        q = gemma_norm(self.q(x).view(B, S, self.H, self.d), self.q_norm, self.eps)
        k = gemma_norm(self.k(x).view(B, S, self.KV, self.d), self.k_norm, self.eps)
        v = self.v(x).view(B, S, self.KV, self.d)
        q, k = rope(q, cq, sq), rope(k, cq, sq)
        iq = ik = None
        if self.sparse:
            iq, ik = self.index_q_k(x, cq, sq)
        mine = (k, v, ik)
        if past is not None:
            k = torch.cat([past[0].expand(B, -1, -1, -1), k], dim=1)
            v = torch.cat([past[1].expand(B, -1, -1, -1), v], dim=1)
            if self.sparse:
                ik = torch.cat([past[2].expand(B, -1, -1), ik], dim=1)
        group = self.H // self.KV
        # [B, KV, group*S, d]: query head h belongs to KV group h // group.
        qg = q.view(B, S, self.KV, group, self.d).permute(0, 2, 3, 1, 4).reshape(
            B, self.KV, group * S, self.d)
        kt = k.permute(0, 2, 3, 1)  # [B, KV, d, L]
        vg = v.transpose(1, 2)  # [B, KV, L, d]
        logits = (qg @ kt).view(B, self.KV, group, S, L) / math.sqrt(self.d)
        at = torch.arange(L, device=x.device)
        visible = at[None, :] <= at[P:, None]  # [S, L]
        logits = logits.masked_fill(~visible, float("-inf"))
        index_loss = None
        if self.sparse:
            scores = self.block_scores(iq, ik, visible)  # [B, G, S, nb]
            nb = scores.shape[-1]
            own = at[P:] // self.block
            chooses = own + 1 > self.topk  # only these queries choose anything
            if chooses.any():
                with torch.no_grad():
                    probs = torch.softmax(logits[:, :, :, chooses], dim=-1)
                    pad = nb * self.block - L
                    if pad:
                        probs = F.pad(probs, (0, pad))
                    n = probs.shape[3]
                    mass = probs.view(B, self.KV, group, n, nb, self.block).sum(-1).mean(2)
                logq = torch.log_softmax(scores[:, :, chooses] / math.sqrt(self.di), dim=-1)
                kl = (mass * (torch.log(mass.clamp_min(1e-9)) - logq.clamp_min(-1e4))).sum(-1)
                index_loss = kl.mean()
            if use_sparse:
                allowed = self.select(scores.detach(), own)
                allowed = allowed.repeat_interleave(self.block, dim=-1)[..., :L]
                logits = logits.masked_fill(~allowed[:, :, None], float("-inf"))
        attn = torch.softmax(logits, dim=-1).view(B, self.KV, group * S, L)
        out = (attn @ vg).view(B, self.KV, group, S, self.d).permute(0, 3, 1, 2, 4)
        return self.o(out.reshape(B, S, self.H * self.d)), index_loss, mine


class Layer(nn.Module):
    def __init__(self, c, i):
        super().__init__()
        h = c["hidden_size"]
        self.eps = c["rms_norm_eps"]
        self.in_norm, self.post_norm = nn.Parameter(torch.zeros(h)), nn.Parameter(torch.zeros(h))
        self.attn = Attention(c, bool(c["sparse_attention_config"]["sparse_attention_freq"][i]))
        self.moe = bool(c["moe_layer_freq"][i])
        self.ffn = Moe(c) if self.moe else Mlp(h, c["dense_intermediate_size"])

    def forward(self, h, cos, sin, use_sparse, past=None):
        a, index_loss, kv = self.attn(gemma_norm(h, self.in_norm, self.eps), cos, sin, use_sparse,
                                      past)
        h = h + a
        return h + self.ffn(gemma_norm(h, self.post_norm, self.eps)), index_loss, kv


class TinyM3(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.embed = nn.Parameter(torch.randn(c["vocab_size"], c["hidden_size"]))
        self.layers = nn.ModuleList(Layer(c, i) for i in range(c["num_hidden_layers"]))
        self.norm = nn.Parameter(torch.zeros(c["hidden_size"]))
        self.lm_head = linear(c["vocab_size"], c["hidden_size"])

    def forward(self, tokens, use_sparse, prefix=None, only=None, prefix_grad=False):
        """tokens [B, S]; prefix: 1-D tokens shared by every row, placed before them and run once
        as a batch of one (the fixed system / tools header of every conversation); with
        prefix_grad the rows' gradients flow back through its keys and values."""
        P = 0 if prefix is None else prefix.shape[0]
        cos, sin = rope_tables(P + tokens.shape[1], self.c["rotary_dim"], self.c["rope_theta"],
                               tokens.device)
        pasts = [None] * len(self.layers)
        if prefix is not None:
            with torch.set_grad_enabled(prefix_grad and torch.is_grad_enabled()):
                h = self.embed[prefix[None]]
                for i, layer in enumerate(self.layers):
                    h, _, pasts[i] = layer(h, cos, sin, use_sparse)
        h = self.embed[tokens]
        index_losses = []
        for layer, past in zip(self.layers, pasts):
            h, il, _ = layer(h, cos, sin, use_sparse, past)
            if il is not None:
                index_losses.append(il)
        if only is not None:  # training: logits only where the loss needs them
            h = h[only]
        logits = self.lm_head(gemma_norm(h, self.norm, self.c["rms_norm_eps"]))
        return logits, (sum(index_losses) / len(index_losses) if index_losses else None)

    def hf_tensors(self):
        """name -> (safetensors dtype, float32 numpy array) in the HF M3 layout."""
        p = "language_model.model."
        out = {"language_model.lm_head.weight": self.lm_head.weight,
               p + "embed_tokens.weight": self.embed, p + "norm.weight": self.norm}
        for i, layer in enumerate(self.layers):
            n = f"{p}layers.{i}."
            out[n + "input_layernorm.weight"] = layer.in_norm
            out[n + "post_attention_layernorm.weight"] = layer.post_norm
            a = layer.attn
            for name, mod in (("q_proj", a.q), ("k_proj", a.k), ("v_proj", a.v), ("o_proj", a.o)):
                out[n + f"self_attn.{name}.weight"] = mod.weight
            out[n + "self_attn.q_norm.weight"], out[n + "self_attn.k_norm.weight"] = a.q_norm, a.k_norm
            if a.sparse:
                out[n + "self_attn.index_q_proj.weight"] = a.iq.weight
                out[n + "self_attn.index_k_proj.weight"] = a.ik.weight
                out[n + "self_attn.index_q_norm.weight"] = a.iq_norm
                out[n + "self_attn.index_k_norm.weight"] = a.ik_norm
            if layer.moe:
                m = n + "block_sparse_moe."
                out[m + "gate.weight"] = ("F32", layer.ffn.router)
                out[m + "e_score_correction_bias"] = ("F32", layer.ffn.bias)
                for e, ex in enumerate(layer.ffn.experts):
                    out[m + f"experts.{e}.w1.weight"] = ex.gate.weight
                    out[m + f"experts.{e}.w3.weight"] = ex.up.weight
                    out[m + f"experts.{e}.w2.weight"] = ex.down.weight
                sh = layer.ffn.shared
                out[m + "shared_experts.gate_proj.weight"] = sh.gate.weight
                out[m + "shared_experts.up_proj.weight"] = sh.up.weight
                out[m + "shared_experts.down_proj.weight"] = sh.down.weight
            else:
                out[n + "mlp.gate_proj.weight"] = layer.ffn.gate.weight
                out[n + "mlp.up_proj.weight"] = layer.ffn.up.weight
                out[n + "mlp.down_proj.weight"] = layer.ffn.down.weight
        result = {}
        for name, value in out.items():
            dtype, t = value if isinstance(value, tuple) else ("BF16", value)
            result[name] = (dtype, t.detach().float().cpu().numpy())
        return result


def to_bf16_bits(a):
    """Round-to-nearest-even float32 -> bfloat16 bit patterns (uint16)."""
    bits = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)
    rounded = bits + 0x7FFF + ((bits >> 16) & 1)
    return (rounded >> 16).astype(np.uint16)


def write_safetensors(path, tensors):
    """tensors: name -> (dtype 'BF16'|'F32', float32 array); names sorted, 8-byte aligned header."""
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        dtype, a = tensors[name]
        raw = to_bf16_bits(a).tobytes() if dtype == "BF16" else \
            np.ascontiguousarray(a, dtype="<f4").tobytes()
        header[name] = {"dtype": dtype, "shape": list(a.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    header["__metadata__"] = {"format": "pt"}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path + ".tmp", "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for raw in blobs:
            f.write(raw)
    os.replace(path + ".tmp", path)
