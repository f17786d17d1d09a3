"""Export to the model package of docs/FORMATS.md: weights.safetensors (F16) + model.json."""
import hashlib
import json
import os
import struct

import numpy as np
import torch

from .net import TesselNet


def safetensors_bytes(tensors):
    """tensors: list of (name, float tensor) -> safetensors file bytes with F16 data."""
    header, blobs, off = {"__metadata__": {"format": "tessel-model"}}, [], 0
    for name, t in tensors:
        b = t.detach().cpu().to(torch.float16).numpy().astype("<f2").tobytes()
        header[name] = {"dtype": "F16", "shape": list(t.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    return struct.pack("<Q", len(h)) + h + b"".join(blobs)


def write_atomic(path, data):
    tmp = path + ".partial"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def export_package(net: TesselNet, out_dir, name, description, baseline, provenance, trained=True):
    os.makedirs(out_dir, exist_ok=True)
    sd = net.state_dict()
    tensors = [(k, v) for k, v in sd.items()]
    data = safetensors_bytes(tensors)
    mj = {
        "format": "tessel-model",
        "format_version": 1,
        "name": name,
        "trained": trained,
        "description": description,
        "config": net.cfg.to_json(),
        "baseline": {"blend": baseline[0], "sigma": baseline[1], "clamp": baseline[2]},
        "files": [{"path": "weights.safetensors", "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}],
        "tensors": [{"name": k, "shape": list(v.shape), "dtype": "F16", "file": "weights.safetensors"} for k, v in tensors],
        "provenance": provenance,
    }
    write_atomic(os.path.join(out_dir, "weights.safetensors"), data)
    write_atomic(os.path.join(out_dir, "model.json"), json.dumps(mj, indent=2).encode())


def load_net(pkg_dir):
    """A TesselNet built from a package's config, with its weights; returns (net, model.json)."""
    from .net import Config
    mj = json.load(open(os.path.join(pkg_dir, "model.json")))
    net = TesselNet(Config.from_json(mj["config"]))
    load_package(net, pkg_dir)
    return net, mj


def load_package(net: TesselNet, pkg_dir):
    """Loads a package's weights into `net` (the config must match)."""
    data = open(os.path.join(pkg_dir, "weights.safetensors"), "rb").read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    base = 8 + n
    sd = {}
    for k, v in header.items():
        if k == "__metadata__":
            continue
        a, b = v["data_offsets"]
        arr = np.frombuffer(data[base + a:base + b], dtype="<f2").astype(np.float32).reshape(v["shape"])
        sd[k] = torch.from_numpy(arr.copy())
    net.load_state_dict(sd)
    return json.load(open(os.path.join(pkg_dir, "model.json")))


def round_weights_f16(net):
    """The package stores f16: make the live weights exactly what the package will hold."""
    with torch.no_grad():
        for p in net.parameters():
            p.copy_(p.half().float())
