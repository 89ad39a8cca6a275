// Build the app's components, each one ES module with no CDN: the Overview's journey picture
// (src/index.ts -> build/journey.js, src/journey.css -> build/journey.css), the 3-D point
// space (src/space3d.ts -> build/space3d.js, src/space3d.css -> build/space3d.css), the
// sampling knobs of the Logits and Generation pages (src/sampling_lab.ts -> build/sampling_lab.js),
// the lesson knobs of the Positional-encoding and Self-attention pages (src/positional_view.ts,
// src/attention_view.ts, both with src/lessons.css and the shared modules in src/lessons/), the
// calculators (src/calculators_view.ts with src/calculators/; its math alone also as
// build/calculators_math.js for the Node test) and the
// rest of ENTRIES below (one shared package; each bundles knob_state.ts, the browser knobs' shared
// state); then
// build/SOURCE_HASH: the sha256 of the sources (see sourceHash below;
// tests/unit/test_component_bundles.py recomputes it and fails when a committed bundle was
// built from other sources). Run: npm ci && npm run build
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
const ENTRIES = [
  { name: "journey", entry: "index.ts", css: "journey.css", what: "the journey component" },
  { name: "space3d", entry: "space3d.ts", css: "space3d.css", what: "the 3-D point space" },
  { name: "sampling_lab", entry: "sampling_lab.ts", css: "sampling_lab.css", what: "the sampling knobs" },
  { name: "bpe_steps", entry: "bpe_steps.ts", css: "bpe_steps.css", what: "the BPE merge steps" },
  { name: "mha_heads", entry: "mha_heads.ts", css: "mha_heads.css", what: "the head picker and enlarged head" },
  { name: "positional", entry: "positional_view.ts", css: "lessons.css", what: "the positional-encoding knobs" },
  { name: "attention", entry: "attention_view.ts", css: "lessons.css", what: "the self-attention knobs" },
  { name: "calculators", entry: "calculators_view.ts", css: "calculators.css", what: "the parameter and KV-cache calculators" },
];
for (const { name, entry, css, what } of ENTRIES) {
  await build({
    entryPoints: [join(here, "src", entry)],
    outfile: join(out, `${name}.js`),
    bundle: true,
    format: "esm",
    target: "es2020",
    minify: true,
    legalComments: "none",
    // A leading line break matters: Streamlit treats a one-line js string as a file path.
    banner: { js: `// Token Journey: ${what}, built from src/ by build.mjs (do not edit).\n` },
    logLevel: "warning",
  });
  copyFileSync(join(here, "src", css), join(out, css));
}
// The BPE replay alone, for tests/unit/test_bpe_replay.py: node runs it against core.text.tokenizer.
await build({
  entryPoints: [join(here, "src", "bpe_replay.ts")],
  outfile: join(out, "bpe_replay.js"),
  bundle: true,
  format: "esm",
  target: "es2020",
  legalComments: "none",
  banner: { js: "// Token Journey: the BPE replay (src/bpe_replay.ts) for the unit tests, built by build.mjs (do not edit).\n" },
  logLevel: "warning",
});
// The calculators' math alone, for tests/unit/test_calculators_math.py: node runs it against core.lessons.
await build({
  entryPoints: [join(here, "src", "calculators_math.ts")],
  outfile: join(out, "calculators_math.js"),
  bundle: true,
  format: "esm",
  target: "es2020",
  legalComments: "none",
  banner: { js: "// Token Journey: the calculators' math (src/calculators_math.ts) for the unit tests, built by build.mjs (do not edit).\n" },
  logLevel: "warning",
});
writeFileSync(join(out, "SOURCE_HASH"), sourceHash() + "\n");
console.log("built", relative(here, out), sourceHash());
