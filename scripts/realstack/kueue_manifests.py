#!/usr/bin/env python3
"""Renders the pinned Kueue release's CRDs and webhook configurations for a Kueue manager that
runs as a local process next to the hub's kube-apiserver.

The release's own config/ (read from the Go module cache, not copied into this repo) points its
webhooks and CRD conversion at an in-cluster Service and relies on Kueue's internal cert
management to inject the CA. Here there is no cluster network: every webhook and conversion
webhook is rewritten to a URL on loopback, https://127.0.0.1:PORT/<path>, trusted through the CA
bundle of the locally generated certificate.

usage: kueue_manifests.py KUEUE_MODULE_DIR WEBHOOK_BASE_URL CA_FILE OUT_FILE
"""
import base64
import glob
import os
import sys

import yaml


def load_all(path):
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d]


def conversion_patched_crds(crd_dir):
    """Names of the CRDs the release's kustomization gives a conversion webhook."""
    kust = load_all(os.path.join(crd_dir, "kustomization.yaml"))[0]
    names = set()
    for p in kust.get("patches") or []:
        path = p.get("path", "") if isinstance(p, dict) else str(p)
        if not os.path.basename(path).startswith("webhook_in_"):
            continue
        for doc in load_all(os.path.join(crd_dir, path)):
            names.add(doc["metadata"]["name"])
    return names


def webhook_patches(hook_dir):
    """The release kustomization's inline patches (namespace selectors of the pod, deployment and
    statefulset webhooks), as {(kind, name): {webhook name: fields}}."""
    kust = load_all(os.path.join(hook_dir, "kustomization.yaml"))[0]
    out = {}
    for p in kust.get("patches") or []:
        if not isinstance(p, dict) or "patch" not in p:
            continue
        doc = yaml.safe_load(p["patch"])
        key = (doc["kind"], doc["metadata"]["name"])
        for wh in doc.get("webhooks") or []:
            out.setdefault(key, {})[wh["name"]] = {k: v for k, v in wh.items() if k != "name"}
    return out


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    mod, base, ca_file, out = sys.argv[1:]
    base = base.rstrip("/")
    with open(ca_file, "rb") as f:
        ca = base64.b64encode(f.read()).decode()
    crd_dir = os.path.join(mod, "config", "components", "crd")
    convert = conversion_patched_crds(crd_dir)
    docs = []
    for path in sorted(glob.glob(os.path.join(crd_dir, "bases", "*.yaml"))):
        for crd in load_all(path):
            if crd["metadata"]["name"] in convert:
                crd["spec"]["conversion"] = {
                    "strategy": "Webhook",
                    "webhook": {
                        "conversionReviewVersions": ["v1"],
                        "clientConfig": {"url": base + "/convert", "caBundle": ca},
                    },
                }
            docs.append(crd)
    hook_dir = os.path.join(mod, "config", "components", "webhook")
    patches = webhook_patches(hook_dir)
    for cfg in load_all(os.path.join(hook_dir, "manifests.yaml")):
        patch = patches.get((cfg["kind"], cfg["metadata"]["name"]), {})
        # The release's kustomize adds the "kueue-" prefix; keep the names a cluster would have.
        cfg["metadata"]["name"] = "kueue-" + cfg["metadata"]["name"]
        for wh in cfg.get("webhooks") or []:
            svc = wh["clientConfig"].pop("service")
            wh["clientConfig"] = {"url": base + svc.get("path", "/"), "caBundle": ca}
            wh.update(patch.get(wh["name"], {}))
        docs.append(cfg)
    if not convert or len(docs) < 3:
        sys.exit("kueue_manifests: found no CRDs or webhooks under " + mod)
    with open(out, "w") as f:
        yaml.safe_dump_all(docs, f, sort_keys=False)


if __name__ == "__main__":
    main()
