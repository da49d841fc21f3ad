# Writes wrk Lua scripts that POST the queries of an R2MED-layout task to
# r2med serve-search, cycling through them: bodies.lua (default request:
# k 10 with snippets and matched terms) and bodies0.lua ("snippet": 0).
# Usage: python3 make-wrk-bodies.py QUERY_JSONL [OUTDIR]
import json, sys, os
src = sys.argv[1] if len(sys.argv) > 1 else "syn20k/query.jsonl"
out = sys.argv[2] if len(sys.argv) > 2 else "."
qs = [json.loads(line) for line in open(src)]
for name, extra in (("bodies.lua", {}), ("bodies0.lua", {"snippet": 0})):
    with open(os.path.join(out, name), "w") as f:
        f.write("bodies = {\n")
        for q in qs:
            f.write("  %s,\n" % json.dumps(json.dumps(dict({"query": q["text"], "id": q["id"], "k": 10}, **extra))))
        f.write("}\ncounter = 0\nrequest = function()\n  counter = counter + 1\n"
                "  return wrk.format(\"POST\", \"/v1/search\", {[\"Content-Type\"] = \"application/json\"}, bodies[(counter % #bodies) + 1])\nend\n")
