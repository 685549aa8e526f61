#!/usr/bin/env python3
"""Turns Kubernetes' OpenAPI v2 document (api/openapi-spec/swagger.json of the k8s.io/kubernetes Go
module) into the standalone, strict JSON schemas kubeconform reads, one file per kind, named like
kubeconform's default registry: <kind>-<group>-<version>.json (core: <kind>-<version>.json).

Same rules as instrumenta/openapi2jsonschema --expanded --strict, which produced the schemas
kubeconform downloads by default: every $ref is inlined, IntOrString accepts a string or an integer,
Quantity a string or a number, and every object with declared properties rejects unknown ones.

usage: k8s-schemas.py SWAGGER_JSON OUT_DIR
"""
import json
import os
import sys

INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
DROP = {"description", "x-kubernetes-group-version-kind"}


def main(swagger_path, out_dir):
    with open(swagger_path, encoding="utf-8") as f:
        definitions = json.load(f)["definitions"]
    cache = {}

    def expand(node, stack):
        if isinstance(node, list):
            return [expand(n, stack) for n in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str):
            name = ref.removeprefix("#/definitions/")
            return resolve(name, stack)
        out = {}
        for key, value in node.items():
            if key in DROP or (key == "format" and value == "int-or-string"):
                continue
            if key == "properties":
                out[key] = {p: expand(v, stack) for p, v in value.items()}
            else:
                out[key] = expand(value, stack)
        if out.get("type") == "object" and "properties" in out and "additionalProperties" not in out:
            out["additionalProperties"] = False
        return out

    def resolve(name, stack):
        if name == INT_OR_STRING:
            return {"oneOf": [{"type": "string"}, {"type": "integer"}]}
        if name == QUANTITY:
            return {"oneOf": [{"type": "string"}, {"type": "number"}]}
        if name in stack:  # recursive types (JSONSchemaProps): accept anything below the cycle
            return {}
        if name not in cache:
            cache[name] = expand(definitions[name], stack | {name})
        return cache[name]

    os.makedirs(out_dir, exist_ok=True)
    written = 0
    for name, definition in sorted(definitions.items()):
        for gvk in definition.get("x-kubernetes-group-version-kind", []):
            schema = dict(resolve(name, frozenset()))
            api_version = f"{gvk['group']}/{gvk['version']}" if gvk["group"] else gvk["version"]
            props = dict(schema.get("properties", {}))
            if "apiVersion" in props and "kind" in props:
                props["apiVersion"] = {"type": "string", "enum": [api_version]}
                props["kind"] = {"type": "string", "enum": [gvk["kind"]]}
                schema["properties"] = props
            schema["$schema"] = "http://json-schema.org/draft-07/schema#"
            group = gvk["group"].split(".")[0]
            suffix = f"-{group}-{gvk['version']}" if group else f"-{gvk['version']}"
            path = os.path.join(out_dir, gvk["kind"].lower() + suffix + ".json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(schema, f, separators=(",", ":"), sort_keys=True)
            written += 1
    print(f"wrote {written} schemas to {out_dir}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
