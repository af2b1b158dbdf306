// Validate glTF files with the Khronos glTF validator; prints one JSON report per file.
// Usage: node validate.mjs FILE...
import fs from "node:fs";
import path from "node:path";
import validator from "gltf-validator";

for (const file of process.argv.slice(2)) {
  const bytes = new Uint8Array(fs.readFileSync(file));
  const report = await validator.validateBytes(bytes, {
    uri: path.basename(file),
    externalResourceFunction: (uri) =>
      Promise.resolve(new Uint8Array(fs.readFileSync(path.join(path.dirname(file), decodeURIComponent(uri))))),
  });
  console.log(JSON.stringify(report));
}
