// What the client tests share: their command line (`--name value` pairs; a flag without a value is
// true) and the "ok" / "FAIL" lines they print, counted for the exit status.
export const args = Object.fromEntries(
  process.argv.slice(2).reduce((pairs, a, i, all) => {
    if (a.startsWith("--")) pairs.push([a.slice(2), all[i + 1]?.startsWith("--") ? true : all[i + 1] ?? true]);
    return pairs;
  }, []));

let failures = 0;
let prefix = "";

// Every line check() prints starts with this ("anthropic: ").
export function setCheckPrefix(text) { prefix = text; }

export function check(ok, what, detail = "") {
  console.log(`${ok ? "ok  " : "FAIL"} ${prefix}${what}${ok ? "" : "  " + detail}`);
  if (!ok) failures++;
}

// Prints `passed`, or `failed(n)` after n failed checks, and exits 0 or 1 accordingly.
export function finish(passed, failed) {
  console.log(failures === 0 ? passed : failed(failures));
  process.exit(failures === 0 ? 0 : 1);
}
