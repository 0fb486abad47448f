// JS jsonrepair over JSON Lines records {raw}: one line out per record,
// {"status": "valid" | "repaired" | "refused", "input": ...}. It has no schema mode; the caller
// validates repaired inputs against the schema.
import { readFileSync } from "node:fs";
import { jsonrepair } from "jsonrepair";

const out = [];
for (const line of readFileSync(process.argv[2], "utf8").split("\n")) {
  if (!line) continue;
  const { raw } = JSON.parse(line);
  try {
    out.push(JSON.stringify({ status: "valid", input: JSON.parse(raw) }));
  } catch {
    try {
      out.push(JSON.stringify({ status: "repaired", input: JSON.parse(jsonrepair(raw)) }));
    } catch {
      out.push(JSON.stringify({ status: "refused" }));
    }
  }
  if (out.length >= 4096) {
    process.stdout.write(out.join("\n") + "\n");
    out.length = 0;
  }
}
if (out.length) process.stdout.write(out.join("\n") + "\n");
