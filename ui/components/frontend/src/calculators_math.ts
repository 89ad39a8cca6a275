// The calculators' math alone, for tests/unit/test_calculators_math.py: Node runs this bundle
// against core/lessons/param_count.py and kv_memory.py (the page's strings included).
export { countParameters, problem } from "./calculators/param_count";
export { kvCacheMemory, formatBytes, defaultContexts } from "./calculators/kv_memory";
export { kvShown, paramsShown } from "./calculators/display";
export { ratio } from "./calculators/exact";
