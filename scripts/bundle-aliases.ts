/**
 * Module aliases every esbuild bundle of Terfyn's code needs (dist/ and the benchmark's floor):
 * jsonc-parser's main is a UMD build whose require("./impl/…") calls esbuild cannot follow (the
 * bundle would require files that are not there); its ES module build bundles whole.
 */
export const BUNDLE_ALIASES: Record<string, string> = {
  "jsonc-parser": "jsonc-parser/lib/esm/main.js",
};
