#!/usr/bin/env python3
"""Turns CustomResourceDefinitions (the CRD YAML files the operators ship in their Go modules) into the
strict JSON schemas kubeconform reads, one file per kind and version, named like the CRDs catalog:
<group>/<kind>_<version>.json (kind in lower case).

Same rules as kubeconform's openapi2jsonschema.py in strict mode: every object with declared properties
rejects unknown ones, unless the CRD lets it keep unknown fields (x-kubernetes-preserve-unknown-fields);
int-or-string accepts either.

usage: crd-schemas.py OUT_DIR CRD_YAML...
"""
import json
import os
import sys

import yaml


def strict(node):
    if isinstance(node, list):
        return [strict(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: strict(v) for k, v in node.items() if k != "description"}
    if out.pop("x-kubernetes-int-or-string", False):
        out.pop("type", None)
        out["oneOf"] = [{"type": "string"}, {"type": "integer"}]
    preserve = out.get("x-kubernetes-preserve-unknown-fields", False)
    if "properties" in out and "additionalProperties" not in out and not preserve:
        out["additionalProperties"] = False
    return out


def main(out_dir, paths):
    written = 0
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for crd in yaml.safe_load_all(f):
                if not crd or crd.get("kind") != "CustomResourceDefinition":
                    continue
                group, kind = crd["spec"]["group"], crd["spec"]["names"]["kind"].lower()
                for version in crd["spec"]["versions"]:
                    schema = version.get("schema", {}).get("openAPIV3Schema")
                    if not schema:
                        continue
                    schema = strict(schema)
                    props = schema.setdefault("properties", {})
                    props["apiVersion"] = {"type": "string", "enum": [f"{group}/{version['name']}"]}
                    props["kind"] = {"type": "string", "enum": [crd["spec"]["names"]["kind"]]}
                    props["metadata"] = {"type": "object"}
                    os.makedirs(os.path.join(out_dir, group), exist_ok=True)
                    with open(os.path.join(out_dir, group, f"{kind}_{version['name']}.json"), "w", encoding="utf-8") as out:
                        json.dump(schema, out)
                    written += 1
    if written == 0:
        sys.exit("crd-schemas: no CustomResourceDefinition found")
    print(f"{written} schemas")


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2:])
