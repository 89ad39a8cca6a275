// Build the journey component: src/index.ts -> build/journey.js (one ES module, no CDN),
// src/journey.css -> build/journey.css, and build/SOURCE_HASH: the sha256 of the sources
// (see sourceHash below; tests/unit/test_journey_bundle.py recomputes it and fails when the
// committed bundle was built from other sources). Run: npm ci && npm run build
import { build } from "esbuild";
import { createHash } from "node:crypto";
import { copyFileSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";

const here = fileURLToPath(new URL(".", import.meta.url));
const out = join(here, "build");

// The files a build reads: everything under src/, the build script and the npm manifests.
function sourceFiles() {
  const files = ["build.mjs", "package.json", "package-lock.json"];
  const walk = (dir) => {
    for (const name of readdirSync(join(here, dir))) {
      const path = join(dir, name);
      if (statSync(join(here, path)).isDirectory()) walk(path);
      else files.push(path.split(sep).join("/"));
    }
  };
  walk("src");
  return files.sort();
}

// sha256 over "path\0content\0" for each file in sorted order (content as raw bytes).
function sourceHash() {
  const hash = createHash("sha256");
  for (const path of sourceFiles()) {
    hash.update(path + "\0");
    hash.update(readFileSync(join(here, path)));
    hash.update("\0");
  }
  return hash.digest("hex");
}

mkdirSync(out, { recursive: true });
await build({
  entryPoints: [join(here, "src", "index.ts")],
  outfile: join(out, "journey.js"),
  bundle: true,
  format: "esm",
  target: "es2020",
  minify: true,
  legalComments: "none",
  // A leading line break matters: Streamlit treats a one-line js string as a file path.
  banner: { js: "// Token Journey: the journey component, built from src/ by build.mjs (do not edit).\n" },
  logLevel: "warning",
});
copyFileSync(join(here, "src", "journey.css"), join(out, "journey.css"));
writeFileSync(join(out, "SOURCE_HASH"), sourceHash() + "\n");
console.log("built", relative(here, out), sourceHash());
