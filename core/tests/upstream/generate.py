"""Runs builtins_cases.json through upstream's built-ins (toolnexus 0.21.0, Python) and
writes builtins_expected.json (the tools' OpenAI declarations and each case's result), which
core/tests/builtins.rs compares the engine against.

    python3 core/tests/upstream/generate.py /path/to/toolnexus-0.21.0/src/toolnexus

Only the standard library is needed: builtin.py is loaded without the package's __init__.
"""
import asyncio
import importlib.util
import json
import os
import shutil
import sys
import tempfile
import types

HERE = os.path.dirname(os.path.abspath(__file__))


def load_upstream(src):
    pkg = types.ModuleType("toolnexus")
    pkg.__path__ = [src]
    sys.modules["toolnexus"] = pkg
    mods = {}
    for name in ("types", "content", "builtin"):
        spec = importlib.util.spec_from_file_location("toolnexus." + name, os.path.join(src, name + ".py"))
        m = importlib.util.module_from_spec(spec)
        sys.modules["toolnexus." + name] = m
        spec.loader.exec_module(m)
        mods[name] = m
    return mods["types"], mods["builtin"]


def subst(v, d):
    if isinstance(v, str):
        return v.replace("$DIR", d)
    if isinstance(v, list):
        return [subst(x, d) for x in v]
    if isinstance(v, dict):
        return {k: subst(x, d) for k, x in v.items()}
    return v


def unsubst(v, d):
    if isinstance(v, str):
        return v.replace(d, "$DIR")
    if isinstance(v, list):
        return [unsubst(x, d) for x in v]
    if isinstance(v, dict):
        return {k: unsubst(x, d) for k, x in v.items()}
    return v


def build_fixture(cases, d):
    for rel, content in cases["files"].items():
        path = os.path.join(d, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(content)
    for rel, target in cases["symlinks"].items():
        os.symlink(subst(target, d), os.path.join(d, rel))


def plain(result, T):
    meta = result.metadata
    if meta is not None and isinstance(meta.get("pending"), T.Request):
        req = {k: v for k, v in vars(meta["pending"]).items() if v is not None}
        req["id"] = "<id>"
        meta = {**meta, "pending": req}
    out = {"output": result.output, "is_error": result.is_error, "metadata": meta}
    if result.parts:
        out["parts"] = result.parts
    return out


async def main(src):
    T, B = load_upstream(src)
    with open(os.path.join(HERE, "builtins_cases.json"), encoding="utf-8") as f:
        cases = json.load(f)
    d = tempfile.mkdtemp(prefix="tn-builtins-")
    try:
        build_fixture(cases, d)
        expected = []
        for case in cases["cases"]:
            spec = subst(case.get("spec"), d)
            tool = next(t for t in B.create_builtin_tools(spec) if t.name == case["tool"])
            ctx = None
            if "answer" in case:
                a = case["answer"]
                ctx = T.ToolContext(answer=T.Answer(id=a["id"], ok=a["ok"], data=a.get("data")))
            result = await tool.execute(subst(case["args"], d), ctx)
            expected.append(unsubst(plain(result, T), d))
    finally:
        shutil.rmtree(d)
    declarations = [
        {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.input_schema}}
        for t in B.create_builtin_tools()
    ]
    with open(os.path.join(HERE, "builtins_expected.json"), "w", encoding="utf-8") as f:
        json.dump({"declarations": declarations, "results": expected}, f, indent=1, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else "/work/scratch/toolnexus-0.21.0/src/toolnexus"))
